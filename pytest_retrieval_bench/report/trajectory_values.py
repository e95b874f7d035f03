"""Per-sample trajectory figures of a report, exact, as paired statistics and gates read them.

An agent record's values are its detail row's metrics recomputed from its steps and labels (never
the rounded written ones, as the ranking pairs use `scoring.exact`), plus `final_any_gold` (1 when a
gold file is in the final context, else 0: the per-sample form of the bench's final-any-gold rate),
and on ContextBench rows its `cb_traj_*` metrics as written (they need the snapshot's text, which a
report does not hold; an item ContextBench leaves out has none, so it is in no pair of them).
A ranking arm's are its same-budget contrast's (`same_budget.py`): its first `final_k` files scored
as a trajectory, a sample it has a record of but no file for scored as no context. Only samples
with gold have values (the bench scores no other). Pure: built from the details alone.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pytest_retrieval_bench.report.same_budget import same_budget_paired_rows
from pytest_retrieval_bench.report.agent_rows import agent_records, detail_row
from pytest_retrieval_bench.scoring import stats
from pytest_retrieval_bench.scoring.contextbench_trajectory import CB_TRAJ_METRICS
from pytest_retrieval_bench.scoring.trajectory import TRAJECTORY_METRIC_KEYS

FINAL_ANY_GOLD = "final_any_gold"
TRAJECTORY_METRICS = (FINAL_ANY_GOLD, *TRAJECTORY_METRIC_KEYS, *CB_TRAJ_METRICS)
"""Every name a gate rule, `diff` or `history` may give for a trajectory metric."""
PAIRED_TRAJECTORY_METRICS = ("final_any_gold", "final_file_recall", "final_file_precision", "final_file_f1", "retrieved_file_recall",
                             "line_f1@trajectory", "cb_traj_file_coverage", "cb_traj_line_coverage", "cb_traj_line_f1")
"""The metrics the report's trajectory pairs, `diff` and `history` show (a gate may name any of `TRAJECTORY_METRICS`)."""

Values = dict[str, dict[str, float]]
"""sample id -> metric -> exact value"""

TRAJECTORY_WORDS = "agents' final context; a ranking arm's first final_k files, the same budget"
"""What a trajectory table's rows are, in the words every table over them uses."""


def is_trajectory_metric(name: str) -> bool:
    return name in TRAJECTORY_METRICS


def final_any_gold(final_files: Iterable[str], gold_files: Iterable[str]) -> float:
    """1.0 when a gold file is in the final context, else 0.0."""
    return 1.0 if set(final_files) & set(gold_files) else 0.0


def _row_values(row: Mapping[str, Any], final_files: Iterable[str]) -> dict[str, float]:
    return {**row["metrics"], FINAL_ANY_GOLD: final_any_gold(final_files, row["gold_files"])}


def agent_values(pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> Values:
    values: Values = {}
    for entry, record in pairs:
        if "detail" in record["trajectory"]:
            row = detail_row(entry, record)
            contextbench = {name: float(value) for name, value in (record.get("metrics") or {}).items() if name.startswith("cb_traj_")}
            values[entry["id"]] = {**_row_values(row, row["closed_tool"].get("final_files") or []), **contextbench}
    return values


def ranker_values(rows: list[dict[str, Any]]) -> Values:
    return {row["sample_id"]: _row_values(row, [step["path"] for step in row["steps"]]) for row in rows}


def report_trajectory_values(details: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, Values]]:
    """arm -> (source, values): an agent's own (`agent`), a ranking arm's same-budget contrast at
    the agents' smallest `final_k` (`ranked_top_K`, as the export names it). Empty without agents."""
    details = list(details)
    agents = agent_records(details)
    found: dict[str, tuple[str, Values]] = {arm: ("agent", agent_values(pairs)) for arm, pairs in agents.items()}
    for arm, by_k in same_budget_paired_rows(details, agents).items():
        top_k = min(by_k)
        found[arm] = (f"ranked_top_{top_k}", ranker_values(by_k[top_k]))
    return dict(sorted(found.items()))


def final_any_gold_figures(values: Values) -> tuple[int, tuple[float, float] | None]:
    """The samples with a gold file in the final context, and the rate's Wilson 95% interval (None without samples)."""
    hits = sum(1 for row in values.values() if row[FINAL_ANY_GOLD])
    return hits, stats.wilson_interval(hits, len(values)) if values else None


def metric_mean(values: Values, metric: str) -> float | None:
    """The mean over the samples with gold, a sample without the metric counting 0 (the bench's rule)."""
    return stats.mean([row.get(metric, 0.0) for row in values.values()])


def metric_names(values: Mapping[str, tuple[str, Values]]) -> set[str]:
    return {name for _, by_sample in values.values() for metrics in by_sample.values() for name in metrics}


def paired_values(candidate: Values, baseline: Values, metric: str, ids: Iterable[str] | None = None) -> tuple[list[str], list[float]]:
    """The samples (sample-id order, within `ids` when given) where both sides have `metric`, and candidate minus baseline on each."""
    shared = sorted(set(candidate) & set(baseline) & (set(ids) if ids is not None else set(candidate)))
    shared = [sample_id for sample_id in shared if metric in candidate[sample_id] and metric in baseline[sample_id]]
    return shared, [candidate[sample_id][metric] - baseline[sample_id][metric] for sample_id in shared]
