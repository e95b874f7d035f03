"""What changed between two written reports, read-only: `retrieval-bench diff BEFORE AFTER`.

For every arm both reports hold (fixture-arm variants and command arms included, no `--arm`
needed), the paired difference AFTER - BEFORE of each paired metric over the positive samples both
scored in the group, with the bootstrap interval, verdict and wins/losses/ties computed as the
report's own `paired` section computes them, its generator seeded as the gate's for the same arm,
group and metric (`run_pair_seed`: a diff of a gated run shows the gate's interval), and
the per-sample changes worst first as the gate lists them. Samples and arms on one side only are
named. With agents, the same for the trajectory metrics (`diff_trajectory.py`). Pure functions over report dictionaries: nothing is written.
"""

from __future__ import annotations

from typing import Any, Sequence

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.build import PAIRED_METRICS, groups_of, paired_comparison
from pytest_retrieval_bench.report.gate import compare, run_pair_seed
from pytest_retrieval_bench.report.diff_trajectory import trajectory_diff
from pytest_retrieval_bench.report.merge import is_named
from pytest_retrieval_bench.scoring.exact import exact_metrics


def _arms(report: dict[str, Any]) -> list[str]:
    return sorted({arm for entry in report.get("details", []) for arm in entry.get("arms", {})})


def select_arms(wanted: Sequence[str], held: Sequence[str]) -> list[str]:
    """`--arm` names: an arm, or a fixture arm's name for all its variants (`fx` -> `fx[1]`, `fx[2]`)."""
    if not wanted:
        return list(held)
    chosen: list[str] = []
    for name in wanted:
        matches = [arm for arm in held if is_named(arm, [name])]
        if not matches:
            raise BenchError(f"--arm {name!r}: neither report holds it (both hold: {', '.join(held) or 'none'})")
        chosen += [arm for arm in matches if arm not in chosen]
    return chosen


def positive_rows(report: dict[str, Any], arm: str, group: str) -> dict[str, dict[str, Any]]:
    """The arm's records of the samples in the group (positive or not, marked), the positives with their
    exact values recomputed from the records, as `paired_comparison` reads them."""
    rows = {}
    limit = report.get("registration", {}).get("limit") or 20
    for entry in report.get("details", []):
        record = entry.get("arms", {}).get(arm)
        if record is None or "task_type" not in entry or group not in groups_of(entry, with_folds=True):
            continue
        positive = entry.get("stratum") == "positive"
        rows[entry["id"]] = {"_positive": positive, "metrics": record.get("metrics") or {}, "_labels": {"repo": entry.get("repo")}}
        if positive:  # only positives are paired (`paired_differences`)
            rows[entry["id"]]["_exact"] = exact_metrics(record, {key: value for key, value in entry.items() if key != "arms"}, limit)
    return rows


def diff_reports(before: dict[str, Any], after: dict[str, Any], arms: Sequence[str] = (), group: str = "all") -> dict[str, Any]:
    """The paired table and per-sample changes of AFTER against BEFORE (BenchError for bad choices)."""
    limits = (before.get("registration", {}).get("limit"), after.get("registration", {}).get("limit"))
    if limits[0] != limits[1]:
        raise BenchError(f"the reports score rankings of different lengths (limit {limits[0]} and {limits[1]}): their metrics do not pair")
    before_arms, after_arms = _arms(before), _arms(after)
    shared = [arm for arm in after_arms if arm in before_arms]
    chosen = select_arms(arms, shared)
    limit = limits[1] or 20
    metrics = [metric for metric in PAIRED_METRICS if not metric.startswith("recall@") or int(metric.split("@")[1]) <= limit]
    paired: dict[str, dict[str, Any]] = {}
    for arm in chosen:
        old, new = positive_rows(before, arm, group), positive_rows(after, arm, group)
        results = {}
        for metric in metrics:
            result = paired_comparison(run_pair_seed(group, arm, metric), new, old, metric)
            if result is not None:
                results[metric] = result
        paired[arm] = results
    changes = compare(after, before, [])
    if group != "all":
        in_group = {entry["id"] for entry in after.get("details", []) if "task_type" in entry and group in groups_of(entry, with_folds=True)}
        if not in_group:
            raise BenchError(f"--group {group!r}: no sample of the later report is in it")
        for arm, section in changes["arms"].items():
            for key in ("regressions", "improvements"):
                section[key] = [change for change in section[key] if change["id"] in in_group]
            both = len(set(positive_rows(before, arm, group)) & set(positive_rows(after, arm, group)))
            section.update(improved=len(section["improvements"]), regressed=len(section["regressions"]),
                           unchanged=both - len(section["improvements"]) - len(section["regressions"]))
    in_group = {entry["id"] for entry in after.get("details", []) if "task_type" in entry and group in groups_of(entry, with_folds=True)}
    result = {
        "group": group,
        "arms": chosen,
        "paired": paired,
        "changes": {arm: changes["arms"][arm] for arm in chosen if arm in changes["arms"]},
        "only_in_before": sorted(arm for arm in before_arms if arm not in after_arms),
        "only_in_after": sorted(arm for arm in after_arms if arm not in before_arms),
        "samples_added": changes["only_in_run"],
        "samples_removed": changes["only_in_baseline"],
    }
    trajectory = trajectory_diff(before, after, chosen, group, in_group)
    if trajectory is not None:  # only with agents: other diffs are unchanged
        result["trajectory"] = trajectory
    return result
