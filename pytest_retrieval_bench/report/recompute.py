"""A report's per-sample results, recomputed from what each record holds and compared (for every
report read back: a merge input, a baseline, a saved run, a page's).

A record holds its ranking (R: given files gone, cut to the limit) and its entry the sample's
gold and hard negatives, so every common file metric, the rank of the first gold file and the
selective success are recomputed and must equal the written values at the report's six
decimals. Metrics with recorded counts must be their ratio (and F1 the F1 of those ratios), MRR-
like metrics 0 or 1 / a rank, BCY a fraction of the distinct gold files. Token and line metrics
need the snapshot's text, which a report does not hold: they are range-checked only (`values`).
A record edited into a hit, or a metric edited by hand, is refused naming the file, the sample
and the JSON path: a merged report is exactly as trustworthy as a run.
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report.trajectory_section import trajectory_record_problem
from pytest_retrieval_bench.report.values import key
from pytest_retrieval_bench.scoring.budgets import BCY_NAMES
from pytest_retrieval_bench.scoring.exact import F1_PARTS, RECIPROCALS, file_metrics, ratio, reciprocal
from pytest_retrieval_bench.scoring.metrics import rank_of_first_gold, selective_success


def _same(stored: Any, expected: float) -> bool:
    return abs(float(stored) - round(expected, 6)) <= 1e-9


def _expected_metrics(record: dict[str, Any], entry: dict[str, Any], limit: int) -> tuple[dict[str, float], str | None]:
    """(metric -> recomputed value, the first metric that cannot be any value: None when none)."""
    metrics = record["metrics"]
    expected: dict[str, float] = dict(file_metrics(record, entry, limit) or {})
    counts = record.get("metric_counts") or {}
    for name, pair in counts.items():
        if name in metrics:
            expected[name] = ratio(pair) or 0.0
    for f1, precision, recall in F1_PARTS:
        if f1 in metrics and precision in counts and recall in counts:
            p, r = ratio(counts[precision]) or 0.0, ratio(counts[recall]) or 0.0
            expected[f1] = 2 * p * r / (p + r) if p + r else 0.0
    gold = len({path for path in entry.get("gold") or [] if path})
    for name in BCY_NAMES:
        if name in metrics:
            expected[name] = round(metrics[name] * gold) / gold if gold else 0.0
    for name, value in metrics.items():
        if name.startswith(RECIPROCALS) and reciprocal(value) is None:
            return expected, name
    return expected, None


def record_mismatch(record: dict[str, Any], entry: dict[str, Any], where: str, limit: int) -> str | None:
    """What of one record its own ranking and the sample's labels contradict (None: nothing)."""
    metrics = record["metrics"]
    if record.get("error") and record["ranking"]:
        return f"{where}.ranking: an errored record has no ranking (it scores zero), got {len(record['ranking'])} paths"
    expected, impossible = _expected_metrics(record, entry, limit)
    if impossible:
        return f"{where}.metrics{key(impossible)}: {metrics[impossible]!r} is neither 0 nor 1 / a rank"
    for name, value in expected.items():
        if name not in metrics:
            return f"{where}.metrics{key(name)}: missing (a positive record carries every file metric up to its limit)"
        if not _same(metrics[name], value):
            return f"{where}.metrics{key(name)}: {metrics[name]!r} is written, but the record's ranking and the sample's labels give {round(value, 6)!r}"
    gold = entry.get("gold") or []
    no_gold = entry.get("stratum", "positive") != "positive"
    if not no_gold and "rank_of_first_gold" in record and record["rank_of_first_gold"] != rank_of_first_gold(record["ranking"], gold):
        return (f"{where}.rank_of_first_gold: {record['rank_of_first_gold']!r} is written, but the record's ranking puts the first gold "
                f"file at {rank_of_first_gold(record['ranking'], gold)!r}")
    success = selective_success(no_gold, record["abstained"], record.get("error") is not None, record["ranking"], gold)
    if record["selective_success"] != success:
        return f"{where}.selective_success: {record['selective_success']!r} is written, but the record and the sample's labels give {success!r}"
    return None


def recomputation_problem(report: dict[str, Any]) -> str | None:
    """The first record of a (well-formed, in-range) report whose written results it contradicts."""
    limit = report["registration"].get("limit") or 20
    for number, entry in enumerate(report["details"]):
        for arm, record in (entry.get("arms") or {}).items():
            where = f"$.details[{number}].arms{key(arm)}"
            problem = record_mismatch(record, entry, where, limit) or trajectory_record_problem(record, entry, where)
            if problem:
                return f"sample {entry['id']!r}, arm {arm!r}: {problem}"
    return None
