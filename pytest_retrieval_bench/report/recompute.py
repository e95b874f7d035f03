"""A report's per-sample results, recomputed from what each record holds and compared (for every
report read back: a merge input, a baseline, a saved run, a page's).

A record holds its ranking (R: given files gone, cut to the limit) and its entry the sample's
gold and hard negatives, so every common file metric, the rank of the first gold file and the
selective success are recomputed and must equal the written values at the report's six
decimals. Metrics with recorded counts must be their ratio (and F1 the F1 of those ratios), MRR-
like metrics 0 or 1 / a rank, BCY and gold coverage a fraction of the distinct gold files. The
bench's `mrr` reads the arm's whole ranking, which the record holds only up to the limit: its
`rank_of_first_gold_uncut` must agree with R (the same rank when R has a gold file; else none, or
a rank past a full R) and `mrr` must be 1 / that rank. A record without these fields was written
by an earlier version and is read as it is. Token and line metrics
need the snapshot's text, which a report does not hold: they are range-checked only (`values`).
A record edited into a hit, or a metric edited by hand, is refused naming the file, the sample
and the JSON path: a merged report is exactly as trustworthy as a run.
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report.trajectory_section import trajectory_record_problem
from pytest_retrieval_bench.report.values import key
from pytest_retrieval_bench.scoring.exact import F1_PARTS, GOLD_FRACTIONS, file_metrics, is_reciprocal, ratio, reciprocal
from pytest_retrieval_bench.scoring.metrics import GIVEN_KEPT_MRR, WHOLE_MRR, given_kept_rank, rank_of_first_gold, selective_success


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
    for name in GOLD_FRACTIONS:
        if name in metrics:
            expected[name] = round(metrics[name] * gold) / gold if gold else 0.0
    for name, value in metrics.items():
        if is_reciprocal(name) and reciprocal(value) is None:
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
    problem = _whole_rank_mismatch(record, gold, where, limit) if not no_gold else None
    if problem:
        return problem
    success = selective_success(no_gold, record["abstained"], record.get("error") is not None, record["ranking"], gold)
    if record["selective_success"] != success:
        return f"{where}.selective_success: {record['selective_success']!r} is written, but the record and the sample's labels give {success!r}"
    return None


def _whole_rank_mismatch(record: dict[str, Any], gold: list[str], where: str, limit: int) -> str | None:
    """What of the whole-ranking rank and `mrr` the record's R contradicts (None: nothing)."""
    if "rank_of_first_gold_uncut" not in record:
        return None
    rank = record["rank_of_first_gold_uncut"]
    ranking = record["ranking"]
    cut = rank_of_first_gold(ranking, gold)
    if cut is not None and rank != cut:
        return f"{where}.rank_of_first_gold_uncut: {rank!r} is written, but the record's ranking puts the first gold file at {cut!r}"
    if cut is None and rank is not None and (len(ranking) < limit or rank <= len(ranking)):
        return (f"{where}.rank_of_first_gold_uncut: {rank!r} is written, but the record's ranking ({len(ranking)} of at most {limit} paths) "
                f"holds no gold file, so the whole ranking's first gold file ranks past {limit} or nowhere")
    if WHOLE_MRR in record["metrics"] and not _same(record["metrics"][WHOLE_MRR], 1.0 / rank if rank else 0.0):
        return (f"{where}.metrics{key(WHOLE_MRR)}: {record['metrics'][WHOLE_MRR]!r} is written, but the record's rank_of_first_gold_uncut "
                f"({rank!r}) gives {round(1.0 / rank, 6) if rank else 0.0!r}")
    kept = given_kept_rank(rank, record.get("given_ranks") or {}, gold)
    if GIVEN_KEPT_MRR in record["metrics"] and not _same(record["metrics"][GIVEN_KEPT_MRR], 1.0 / kept if kept else 0.0):
        return (f"{where}.metrics{key(GIVEN_KEPT_MRR)}: {record['metrics'][GIVEN_KEPT_MRR]!r} is written, but the record's "
                f"rank_of_first_gold_uncut ({rank!r}) and given_ranks give {round(1.0 / kept, 6) if kept else 0.0!r}")
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
