"""cce's `relevance --compare` block: the strings cce prints, on its own worked examples.

Expected values are cce's: the worked example of its relevance documentation (n 7, MRR moved on
one query: +0.023810, t +1.000000, p 0.355918, CI [-0.034450, +0.082069]) and its stats unit
test (deltas [0.2, 0.1, 0.0, 0.3, -0.1, 0.1]: t sqrt(3), pinned as [-0.048413, +0.248413]); the
critical values are cce's `t_two_sided_critical` compiled and run (df 6: 2.446911851144936).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from scipy import stats as scipy_stats

from pytest_retrieval_bench.scoring.cce_compare import compare_block, critical_t, format6, format6_signed, paired_t, two_sided_p

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"


def _queries(mrr: list[float]) -> list[dict[str, float]]:
    return [{"rel_precision@k": 0.4, "rel_recall": 1.0, "rel_mrr": value, "rel_f1": 0.571429} for value in mrr]


@pytest.mark.parametrize("digits", [None, 6])  # full precision, or the report's details as written
def test_the_worked_example_of_cce_s_documentation(digits):
    bm25 = [1 / 3] + [1.0] * 6  # code-read-config at rank 3, the rest at rank 1
    hybrid = [1 / 2] + [1.0] * 6  # the same query at rank 2
    if digits:
        bm25, hybrid = [round(v, digits) for v in bm25], [round(v, digits) for v in hybrid]
    block = compare_block("bm25", "hybrid", _queries(bm25), _queries(hybrid))
    assert block["a"] == "bm25" and block["b"] == "hybrid" and list(block["metrics"]) == ["precision_at_k", "recall", "mrr", "f1"]
    assert block["metrics"]["mrr"] == {"n": 7, "mean_delta": "+0.023810", "t": "+1.000000", "p": "0.355918",
                                       "ci95_low": "-0.034450", "ci95_high": "+0.082069"}
    zero = {"n": 7, "mean_delta": "+0.000000", "t": None, "p": "1.000000", "ci95_low": "+0.000000", "ci95_high": "+0.000000"}
    assert block["metrics"]["precision_at_k"] == block["metrics"]["recall"] == block["metrics"]["f1"] == zero


def test_cce_s_unit_example_and_an_independent_oracle():
    deltas = [0.2, 0.1, 0.0, 0.3, -0.1, 0.1]
    stats = paired_t(deltas)
    assert stats["t"] == pytest.approx(math.sqrt(3), rel=1e-12)
    assert stats["p"] == pytest.approx(0.14381080871159757, rel=1e-12)
    assert (format6_signed(stats["ci95"][0]), format6_signed(stats["ci95"][1])) == ("-0.048413", "+0.248413")
    reference = scipy_stats.ttest_1samp(deltas, 0.0)
    assert stats["p"] == pytest.approx(reference.pvalue, rel=1e-9) and stats["t"] == pytest.approx(reference.statistic, rel=1e-12)


@pytest.mark.parametrize(("df", "expected"), [(6, 2.446911851144936), (5, 2.570581835636279), (1, 12.706204736173607)])
def test_the_critical_value_is_cce_s(df, expected):
    assert critical_t(0.05, df) == pytest.approx(expected, rel=1e-15)
    assert critical_t(0.05, df) == pytest.approx(scipy_stats.t.ppf(0.975, df), rel=1e-9)
    assert two_sided_p(expected, df) == pytest.approx(0.05, rel=1e-9)


def test_equal_deltas_that_are_not_bit_equal_have_no_t():
    """0.1 + 0.2 - 0.3 style noise: cce's constancy guard (16 epsilons of the magnitude) says n/a,
    where a plain t-test divides by a standard deviation of 1e-17 (t about 1.9e16)."""
    deltas = [0.30000000000000004, 0.3, 0.3, 0.30000000000000004]
    stats = paired_t(deltas)
    assert stats["t"] is None and stats["p"] == 0.0 and stats["mean_delta"] == deltas[0] and stats["ci95"] == (deltas[0], deltas[0])
    assert paired_t([0.0, 0.0, -0.0])["p"] == 1.0
    assert paired_t([1e-17, -1e-17])["t"] == 0.0  # not constant at that magnitude: cce computes t
    lone = paired_t([0.25])
    assert lone == {"n": 1, "mean_delta": 0.25, "t": None, "p": None, "ci95": None}
    assert paired_t([])["mean_delta"] == 0.0


@pytest.mark.parametrize(("value", "text"), [(0.0238095, "0.023810"), (-0.0000004, "0.000000"), (0.0000005, "0.000001"),
                                             (-0.0000005, "-0.000001"), (2.5e-6, "0.000003"), (1.0, "1.000000"), (-12.3456785, "-12.345679")])
def test_format6_rounds_half_away_from_zero(value, text):
    assert format6(value) == text
    assert format6_signed(value) == (text if text.startswith("-") else f"+{text}")


def test_a_relevance_run_reports_the_block(pytester: pytest.Pytester) -> None:
    fixture = TESTDATA / "formats" / "relevance" / "cases.jsonl"
    result = pytester.runpytest_subprocess(f"--bench-samples={fixture}", "--bench-arms=grep,bm25:all", "--bench-baseline-arms=grep",
                                           "--bench-report=out.json", "-p", "no:cacheprovider", timeout=300)
    assert result.ret in (0, 1), result.stdout.str()[-2000:]
    report = json.loads((pytester.path / "out.json").read_text())
    block = report["cce_compare"]["bm25:all vs grep"]
    assert block["a"] == "grep" and block["b"] == "bm25:all"
    scored = [entry for entry in report["details"] if "rel_mrr" in entry["arms"].get("grep", {}).get("metrics", {})]
    assert block["metrics"]["mrr"]["n"] == len(scored) > 1
    deltas = [entry["arms"]["bm25:all"]["metrics"]["rel_mrr"] - entry["arms"]["grep"]["metrics"]["rel_mrr"] for entry in sorted(scored, key=lambda e: e["id"])]
    assert block["metrics"]["mrr"]["mean_delta"] == format6_signed(paired_t(deltas)["mean_delta"])
