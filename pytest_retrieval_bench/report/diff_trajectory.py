"""The trajectory part of `retrieval-bench diff`: what changed in what an agent read and submitted.

For every chosen arm both reports hold trajectory values of (`trajectory_values`: an agent's own,
a ranking arm's same-budget figures), AFTER - BEFORE on each of `PAIRED_TRAJECTORY_METRICS` over
the samples with gold both scored in the group, figured as every paired comparison is
(`paired_figures`), the generator seeded as the gate's for the same arm, group and metric (a diff
of a gated run shows the gate's interval); then the per-sample changes of the final context,
worst first. Reports without agents have none of it (None).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from pytest_retrieval_bench.report.gate import run_pair_seed
from pytest_retrieval_bench.report.paired_figures import paired_figures
from pytest_retrieval_bench.report.trajectory_values import (FINAL_ANY_GOLD, PAIRED_TRAJECTORY_METRICS, Values, paired_values,
                                                             report_trajectory_values)

F1 = "final_file_f1"


def sample_change(before: Mapping[str, float], after: Mapping[str, float]) -> tuple[str, str, tuple[float, float]]:
    """("improved" | "regressed" | "unchanged", why, severity) of one sample's final context: a gold
    file gained or lost first, then the final-file F1."""
    hit_change = after[FINAL_ANY_GOLD] - before[FINAL_ANY_GOLD]
    f1_change = after[F1] - before[F1]
    if hit_change == 0 and f1_change == 0:
        return "unchanged", "", (0.0, 0.0)
    why = f"final file F1 {before[F1]:.3f} -> {after[F1]:.3f}"
    if hit_change:
        why = ("no gold file is final any more; " if hit_change < 0 else "a gold file is now final; ") + why
    change = "regressed" if (hit_change, f1_change) < (0, 0) else "improved"
    return change, why, (-abs(hit_change), -abs(f1_change))


def _changes(old: Values, new: Values, ids: Sequence[str], repos: Mapping[str, Any]) -> dict[str, Any]:
    counts = {"improved": 0, "regressed": 0, "unchanged": 0}
    found: dict[str, list[tuple[tuple[float, float, str], dict[str, Any]]]] = {"regressed": [], "improved": []}
    for sample_id in ids:
        change, why, severity = sample_change(old[sample_id], new[sample_id])
        counts[change] += 1
        if change != "unchanged":
            found[change].append(((*severity, sample_id), {"id": sample_id, "repo": repos.get(sample_id), "change": change, "why": why}))
    worst_first = {key: [item for _, item in sorted(items, key=lambda pair: pair[0])] for key, items in found.items()}
    return {**counts, "regressions": worst_first["regressed"], "improvements": worst_first["improved"]}


def trajectory_diff(before: dict[str, Any], after: dict[str, Any], arms: Sequence[str], group: str, group_ids: set[str]) -> dict[str, Any] | None:
    """{"sources", "paired", "changes"} per arm both reports hold trajectory values of, or None."""
    old_values, new_values = report_trajectory_values(before.get("details", [])), report_trajectory_values(after.get("details", []))
    chosen = [arm for arm in arms if arm in old_values and arm in new_values]
    if not chosen:
        return None
    repos = {entry["id"]: entry.get("repo") for entry in after.get("details", [])}
    result: dict[str, Any] = {"sources": {}, "paired": {}, "changes": {}}
    for arm in chosen:
        (_, old), (source, new) = old_values[arm], new_values[arm]
        result["sources"][arm] = source
        paired = {}
        for metric in PAIRED_TRAJECTORY_METRICS:
            ids, diffs = paired_values(new, old, metric, group_ids)
            if ids:
                paired[metric] = paired_figures(run_pair_seed(group, arm, metric), diffs, [str(repos.get(i) or "?") for i in ids])
        result["paired"][arm] = paired
        result["changes"][arm] = _changes(old, new, sorted(set(old) & set(new) & group_ids), repos)
    return result
