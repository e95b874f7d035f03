"""ContextBench's two aggregates of per-task results, each named for what it is.

- `evaluator_micro`: `contextbench.evaluate.aggregate_results`, what its command prints. `final_*`
  and `editloc` pool the sizes over tasks first (sum of intersections over sum of gold or
  predicted sizes, 1.0 over an empty denominator); `traj_auc_*` and `traj_redundancy_*` are means
  over tasks. Tasks with an error (`no_context_extracted`) count in `num_total` only.
- `leaderboard_macro`: the leaderboard's per-task means (ContextBench's `metrics.rst`, "Macro
  Average"): each task's coverage, precision and F1 per granularity, averaged with every task
  weighing the same, beside the same AUC and redundancy means and EditLoc's per-task means.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pytest_retrieval_bench.scoring.contextbench_trajectory import GRANULARITIES, coverage_precision, f1


def _valid(results: Iterable[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], int]:
    results = list(results)
    return [result for result in results if "error" not in result], len(results)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def evaluator_micro(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The official evaluator's aggregate, key for key."""
    valid, count = _valid(results)
    aggregate: dict[str, Any] = {"num_valid": len(valid), "num_total": count}
    if not valid:
        return aggregate
    for name in GRANULARITIES:
        if any(name in result["final"] for result in valid):
            sizes = [result["final"].get(name, {}) for result in valid]
            coverage, precision = coverage_precision(sum(size.get("pred_size", 0) for size in sizes), sum(size.get("gold_size", 0) for size in sizes),
                                                     sum(size.get("intersection", 0) for size in sizes))
            aggregate[f"final_{name}"] = {"coverage": coverage, "precision": precision}
    for name in GRANULARITIES:
        if any(name in result["trajectory"]["auc_coverage"] for result in valid):
            aggregate[f"traj_auc_{name}"] = _mean([result["trajectory"]["auc_coverage"].get(name, 0.0) for result in valid])
            aggregate[f"traj_redundancy_{name}"] = _mean([result["trajectory"]["redundancy"].get(name, 0.0) for result in valid])
    edits = [result["editloc"] for result in valid if "editloc" in result]
    if edits:
        recall, precision = coverage_precision(sum(edit["pred_size"] for edit in edits), sum(edit["gold_size"] for edit in edits),
                                               sum(edit["intersection"] for edit in edits))
        aggregate["editloc"] = {"recall": recall, "precision": precision}
    return aggregate


def leaderboard_macro(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-task means: `{granularity: {coverage, precision, f1, auc_coverage, redundancy}}`, and
    `editloc` over the tasks that have one."""
    valid, count = _valid(results)
    aggregate: dict[str, Any] = {"num_valid": len(valid), "num_total": count}
    if not valid:
        return aggregate
    for name in GRANULARITIES:
        finals = [result["final"][name] for result in valid if name in result["final"]]
        if len(finals) != len(valid):
            continue  # symbols absent for some task: no mean over a different set of tasks
        aggregate[name] = {
            "coverage": _mean([final["coverage"] for final in finals]),
            "precision": _mean([final["precision"] for final in finals]),
            "f1": _mean([f1(final["coverage"], final["precision"]) for final in finals]),
            "auc_coverage": _mean([result["trajectory"]["auc_coverage"][name] for result in valid]),
            "redundancy": _mean([result["trajectory"]["redundancy"][name] for result in valid]),
        }
    edits = [result["editloc"] for result in valid if "editloc" in result]
    if edits:
        aggregate["editloc"] = {"tasks": len(edits), "precision": _mean([edit["precision"] for edit in edits]),
                                "recall": _mean([edit["recall"] for edit in edits])}
    return aggregate
