"""Readable tables: widths that fit, one verdict rule with a sample-size floor, Holm-adjusted p-values,
escaped Markdown with per-task details, `--bench-table` groups and `-v` words that name their k."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from statsmodels.stats.multitest import multipletests

from pytest_retrieval_bench.report.markdown import escape, render
from pytest_retrieval_bench.report.run_tables import report_lines
from pytest_retrieval_bench.report.tables import arm_table, fixed_width, groups_to_show, p_value, paired_table
from pytest_retrieval_bench.scoring.verdicts import MIN_PAIRED, holm, verdict_of

from report_helpers import scored_report

RELEASE = Path(__file__).resolve().parent.parent / "testdata" / "release"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
LONG_ARM = "a-very-long-arm-name|with:pipe"  # 27 characters, and a pipe


def _row(n: int = 30) -> dict:
    return {"n": n, "positives": n - 2, "errors": 0, "abstentions": 1, "metrics": {"hit@10": 0.5, "recall@10": 0.25, "mrr@k": 0.125},
            "selective_success": 0.5, "wilson95": {"hit@10": [0.3, 0.7]}}


def _paired(n: int, low: float, high: float, p: float | None) -> dict:
    return {"n": n, "mean_difference": (low + high) / 2, "bootstrap95": [low, high], "wins": 1, "losses": 1, "ties": 0,
            "t_test": {"t": 1.0, "df": n - 1, "p": p, "ci95": None, "p_holm": p}, "minimum_detectable_effect": 0.1,
            "verdict": verdict_of([low, high], n)}


def test_verdicts_follow_the_interval_and_refuse_small_samples() -> None:
    assert verdict_of([0.01, 0.2], MIN_PAIRED) == "better"
    assert verdict_of([-0.2, -0.01], MIN_PAIRED) == "worse"
    assert verdict_of([-0.1, 0.1], MIN_PAIRED) == "not distinguishable"
    assert verdict_of([0.0, 0.1], MIN_PAIRED) == "not distinguishable"  # a bound on zero excludes nothing
    assert verdict_of([0.5, 0.9], MIN_PAIRED - 1) == "too few"  # a run stopped after 3 samples says nothing
    assert verdict_of(None, 50) == "too few"


@pytest.mark.parametrize("pvalues", [[0.01, 0.04, 0.03, 0.005], [0.5, 0.5, 0.001], [0.2], [0.049, 0.051, 0.9, 0.0001, 0.02]])
def test_holm_equals_statsmodels(pvalues: list[float]) -> None:
    expected = multipletests(pvalues, method="holm")[1]
    assert holm(pvalues) == pytest.approx(list(expected), abs=1e-12)


def test_holm_leaves_untestable_comparisons_out_of_the_family() -> None:
    adjusted = holm([0.01, None, 0.04])
    assert adjusted[1] is None
    assert adjusted[0] == pytest.approx(multipletests([0.01, 0.04], method="holm")[1][0])


def test_p_values_below_a_thousandth_are_not_printed_as_zero() -> None:
    assert [p_value(0.0004), p_value(0.001), p_value(0.0734), p_value(None)] == ["<0.001", "0.001", "0.073", "-"]


def test_fixed_width_columns_fit_a_long_arm_name() -> None:
    lines = fixed_width(arm_table({"grep": _row(), LONG_ARM: _row()}, 20))
    ends = [[match.end() for match in re.finditer(r"\S+", line)][1] for line in lines]
    assert len(set(ends)) == 1, lines  # the right-aligned `n` column ends at the same place in every row
    assert len({len(line) for line in lines[1:]}) == 1


def test_markdown_escapes_cells_and_has_verdicts_and_task_details() -> None:
    report = {
        "summary": {"all": {"grep": _row(), LONG_ARM: _row()}, "task:code2test": {"grep": _row(12)}},
        "paired": {"all": {f"{LONG_ARM} vs grep": {"recall@10": _paired(30, 0.01, 0.2, 0.0002), "mrr@k": _paired(4, 0.2, 0.4, 0.3)}}},
        "partial": None,
    }
    text = render(report, 20)
    assert "a-very-long-arm-name\\|with:pipe" in text and "| a-very-long-arm-name|with" not in text
    header = next(line for line in text.splitlines() if line.startswith("| comparison"))
    assert "verdict" in header and "p (Holm)" in header
    rows = [line for line in text.splitlines() if line.startswith(f"| {escape(LONG_ARM)} vs grep")]
    assert "| better |" in rows[0] and "| &lt;0.001 |" in rows[0]  # GitHub renders it as <0.001
    assert "| too few |" in rows[1]
    assert "<details><summary>task:code2test</summary>" in text and text.count("<details>") == 1
    tables = re.findall(r"(?:^\|.*\n)+", text, flags=re.MULTILINE)
    assert len(tables) == 3
    for table in tables:  # no cell breaks its row: every row of a table has as many unescaped pipes
        assert len({len(re.findall(r"(?<!\\)\|", line)) for line in table.splitlines()}) == 1, table


def _gated(regressions: int) -> dict:
    """A report whose baseline comparison failed one of two rules, with `regressions` regressed samples of `mine`."""
    report = scored_report()
    rule = {"rule": "recall@10>=-0.02", "form": "noninferior", "arm": "mine", "group": "all", "metric": "recall@10", "threshold": -0.02,
            "n": 30, "mean_difference": -0.1, "bootstrap95": [-0.2, -0.05], "significant": True, "verdict": "fail"}
    changes = [{"id": f"s{i:02d}", "repo": "o/r0", "change": "regressed", "why": "hit became a miss"} for i in range(regressions)]
    report["baseline"] = {"failed": True, "only_in_run": [], "only_in_baseline": [], "new_arms": [],
                          "rules": [{**rule, "rule": "mrr@k>=-0.5", "metric": "mrr@k", "verdict": "pass"}, rule],
                          "arms": {"mine": {"improved": 0, "regressed": regressions, "unchanged": 0, "regressions": changes, "improvements": []}}}
    return report


def test_the_markdown_starts_with_the_gates_verdict_and_its_failing_rules() -> None:
    lines = render(_gated(3), 20).splitlines()
    first_table = next(index for index, line in enumerate(lines) if line.startswith("| arm"))
    verdict = next(index for index, line in enumerate(lines) if "FAILED" in line)
    failing = next(index for index, line in enumerate(lines) if line.startswith("| recall@10&gt;=-0.02 |"))
    assert verdict < failing < first_table, lines[:first_table + 1]
    assert not any(line.startswith("| mrr@k&gt;=-0.5 |") for line in lines[:first_table])  # a passing rule waits below the tables
    assert "1 of 2" in lines[verdict]
    passed = _gated(0)
    passed["baseline"]["rules"] = passed["baseline"]["rules"][:1]
    passed["baseline"]["failed"] = False
    top = render(passed, 20).splitlines()
    assert any("passed" in line for line in top[:next(i for i, line in enumerate(top) if line.startswith("| arm"))])


def test_the_terminal_says_how_many_changed_samples_it_did_not_print_and_where_they_are() -> None:
    lines = report_lines(_gated(26), 20, ["all"], "main.json", Path("out/pr.json"))
    assert sum("REGRESSED" in line for line in lines) == 20
    assert '    ... and 6 more regressed: see out/pr.json (baseline.arms["mine"].regressions)' in lines
    unwritten = report_lines(_gated(26), 20, ["all"], "main.json")
    assert any("and 6 more regressed: write the report (--bench-report PATH)" in line for line in unwritten)
    assert not any("more" in line for line in report_lines(_gated(20), 20, ["all"], "main.json"))


def test_groups_by_kind_or_name() -> None:
    summary = {"all": {}, "task:a": {}, "task:b": {}, "repo:x/y": {}, "stratum:positive": {}}
    assert groups_to_show(summary, ["all", "task"]) == ["all", "task:a", "task:b"]
    assert groups_to_show(summary, ["repo:x/y", "nonsense"]) == ["repo:x/y"]


def test_a_table_group_that_names_nothing_is_said_not_silently_dropped() -> None:
    report = scored_report()
    lines = report_lines(report, 20, ["tasks", "task:nosuch", "all"], None)
    said = [line for line in lines if line.startswith("retrieval-bench: --bench-table")]
    assert said == ["retrieval-bench: --bench-table 'tasks', 'task:nosuch': no such group in this report "
                    "(its groups: all, and by kind repo, stratum, task; e.g. repo:o/r0)"]
    assert "retrieval-bench summary (group all)" in lines  # the groups that exist are still shown, the line under them
    assert lines.index(said[0]) > max(number for number, line in enumerate(lines) if line.startswith(("retrieval-bench summary", "paired")))
    assert not [line for line in report_lines(report, 20, ["all", "task"], None) if line.startswith("retrieval-bench: --bench-table")]


def test_paired_rows_state_the_reports_verdict() -> None:
    _, rows = paired_table({"b vs a": {"recall@5": _paired(20, -0.3, -0.1, 0.01)}})
    assert rows == [["b vs a", "recall@5", "20", "-0.200", "[-0.300, -0.100]", "worse", "0.010", "0.010", "0.100"]]


# -- through pytest --------------------------------------------------------------------------------


@pytest.fixture
def bench(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(RELEASE, pytester.path / "release")
    return pytester


def test_report_holds_verdicts_and_holm_p_and_the_terminal_shows_them(bench: pytest.Pytester) -> None:
    result = bench.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep,grep-ident,bm25:all",
                                        "--bench-baseline-arms=grep", "--bench-report=out.json", "--bench-table=all,task", "-v")
    report = json.loads((bench.path / "out.json").read_text())
    for group, comparisons in report["paired"].items():
        tests = [result_["t_test"] for metrics in comparisons.values() for result_ in metrics.values()]
        assert [t["p_holm"] for t in tests] == pytest.approx(holm([t["p"] for t in tests]), abs=1e-4)  # from rounded p
        for metrics in comparisons.values():
            for result_ in metrics.values():
                assert result_["verdict"] == verdict_of(result_["bootstrap95"], result_["n"])
    out = result.stdout.str()
    assert "retrieval-bench summary (group all)" in out and "retrieval-bench summary (group task:code2test)" in out
    assert "summary (group stratum:" not in out
    assert "no verdict below 10 paired samples" in out and "p (Holm)" in out
    assert re.search(r"\] (HIT|MISS)@20 ", out) and not re.search(r"\] (HIT|MISS) ", out)
