"""A record's metrics at full precision, recomputed from what the record itself holds.

`details` are written at six decimals, and a merge has only those. Statistics that pair per-query
values (the paired t-test, the bootstrap, cce's compare block) must not be built from the rounded
values: two equal deltas of 1/3 round to 0.333333 and 0.333334, and a zero standard deviation
becomes a t of millions. Every metric that is a function of the record's ranking and the sample's
gold (the common file metrics), of the counts it records (`metric_counts`), of a gold count
(BCY and gold coverage: covered / distinct gold files) or a rank (MRR-like metrics: 1 / rank; the
bench's whole-ranking `mrr` from the record's `rank_of_first_gold_uncut`) is recomputed here exactly, identically in a run and in a merge of its reports. The rest (token and line metrics,
which need the snapshot's text) keep their written value.
"""

from __future__ import annotations

from typing import Any, Mapping

from pytest_retrieval_bench.scoring.budgets import BCY_NAMES
from pytest_retrieval_bench.scoring.metrics import GIVEN_KEPT_MRR, GOLD_COVERAGE, WHOLE_MRR, given_kept_rank, positive_metrics, zero_metrics

#: metrics that are 0 or 1 / (a rank), from which the rank is read back: these names and those beginning
#: with a prefix (`mrr` is read back only where a record has no rank of its own)
RECIPROCALS = ("rel_mrr", WHOLE_MRR, GIVEN_KEPT_MRR)
RECIPROCAL_PREFIXES = ("kt_mrr@",)
#: metrics that are a number of covered gold files over the distinct gold files
GOLD_FRACTIONS = (*BCY_NAMES, GOLD_COVERAGE)
#: (F1 metric, its precision, its recall), each recorded with counts
F1_PARTS = (("rel_f1", "rel_precision@k", "rel_recall"),)


def is_reciprocal(name: str) -> bool:
    return name in RECIPROCALS or name.startswith(RECIPROCAL_PREFIXES)


def file_metrics(record: Mapping[str, Any], labels: Mapping[str, Any], limit: int) -> dict[str, float] | None:
    """The common file metrics of a positive record, from its ranking and the sample's gold and
    hard negatives (an errored record scores zero); None without gold to score against."""
    gold = labels.get("gold") or []
    if labels.get("stratum") != "positive" or not gold:
        return None
    if record.get("error"):
        return zero_metrics(limit)
    return positive_metrics(list(record.get("ranking") or [])[:limit], gold, labels.get("hard_negatives") or [], limit)


def reciprocal(value: float) -> float | None:
    """The exact 1 / rank a six-decimal value was written from (0.0 stays 0.0); None when it is none."""
    if value == 0:
        return 0.0
    if not 0 < value <= 1:
        return None
    rank = round(1 / value)
    return 1 / rank if rank >= 1 and round(1 / rank, 6) == round(value, 6) else None


def ratio(counts: Any) -> float | None:
    """numerator / denominator of a recorded `[numerator, denominator]` (0 over an empty denominator)."""
    if not (isinstance(counts, (list, tuple)) and len(counts) == 2 and all(isinstance(c, (int, float)) for c in counts)):
        return None
    numerator, denominator = counts
    return numerator / denominator if denominator else 0.0


def exact_metrics(record: Mapping[str, Any], labels: Mapping[str, Any], limit: int) -> dict[str, float]:
    """Every recomputable metric of the record at full precision (the written value where none is)."""
    metrics: dict[str, float] = dict(record.get("metrics") or {})
    counts = record.get("metric_counts") or {}
    for name, pair in counts.items():
        value = ratio(pair)
        if name in metrics and value is not None:
            metrics[name] = value
    for name in metrics:
        if is_reciprocal(name) and (value := reciprocal(metrics[name])) is not None:
            metrics[name] = value
    for f1, precision, recall in F1_PARTS:
        if f1 in metrics and precision in counts and recall in counts:
            p, r = metrics[precision], metrics[recall]
            metrics[f1] = 2 * p * r / (p + r) if p + r else 0.0
    rank = record.get("rank_of_first_gold_uncut")
    if WHOLE_MRR in metrics and isinstance(rank, int) and rank >= 1:
        metrics[WHOLE_MRR] = 1 / rank
    if GIVEN_KEPT_MRR in metrics and "rank_of_first_gold_uncut" in record:
        kept = given_kept_rank(rank if isinstance(rank, int) and rank >= 1 else None, record.get("given_ranks") or {}, labels.get("gold") or [])
        if kept:
            metrics[GIVEN_KEPT_MRR] = 1 / kept
    gold_count = len({path for path in labels.get("gold") or [] if path})  # as BCY counts them
    for name in GOLD_FRACTIONS:
        if name in metrics and gold_count:
            metrics[name] = round(metrics[name] * gold_count) / gold_count
    files = file_metrics(record, labels, limit)
    if files is not None:
        metrics.update({name: value for name, value in files.items() if name in metrics})
    return metrics
