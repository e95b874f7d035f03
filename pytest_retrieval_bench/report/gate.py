"""Gating a ranking change against a baseline report (SPEC 6).

A rule reads the paired bootstrap 95% interval of (run - baseline), never the point estimate,
in one of two named forms: non-inferiority (`METRIC>=T`, or `noninferior:METRIC>=T`) fails
unless the interval's lower bound is at least T, i.e. unless the change is shown not to be worse
than T; no confident regression (`noregression:METRIC>=T`) fails only when the whole interval
lies below T, i.e. when the change is shown to be worse than T.
METRIC is a ranking metric of the records (`recall@10`, `mrr`, ...) or a trajectory metric
(`final_file_f1`, `final_any_gold`, ...: `trajectory_values`), which pairs an agent's detail rows,
and a ranking arm's same-budget figures, in the run with the baseline's, over samples with gold.
Pure functions over report dictionaries; the plugin only decides when to call them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Sequence

from pytest_retrieval_bench.scoring import stats
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.build import groups_of, samples_digests
from pytest_retrieval_bench.report.trajectory_values import (TRAJECTORY_METRICS, Values, is_trajectory_metric, metric_names, paired_values,
                                                             report_trajectory_values)

NONINFERIOR, NOREGRESSION = "noninferior", "noregression"
FORMS = {NONINFERIOR: "non-inferiority", NOREGRESSION: "no confident regression"}
Z95 = 1.96
_RULE = re.compile(r"^(?:(?P<form>[a-z]+):)?(?P<metric>[a-z_0-9]+@(?:\d+k?|k|trajectory)|[a-z_0-9]+)\s*>=\s*(?P<threshold>[-+]?\d+(?:\.\d+)?)(?P<options>(?::.+)?)$")
_OPTION = re.compile(r":([a-z]+)=")


def run_pair_seed(group: str, arm: str, metric: str) -> str:
    """The bootstrap name of one arm's metric in two runs (this run against a baseline, AFTER against
    BEFORE, a saved run against the one before it): one name for the same comparison, so the gate,
    `retrieval-bench diff` and `history` draw the same resamples and show the same interval."""
    return f"gate|{group}|{arm}|{metric}"


@dataclass(frozen=True)
class GateRule:
    """`[FORM:]METRIC>=THRESHOLD[:arm=NAME][:group=GROUP]`; without arm, every arm both reports hold.

    The form is a word before the metric, so a rule says how it is read before its threshold;
    a rule without one is non-inferiority, as rules always were.
    """

    text: str
    metric: str
    threshold: float
    arm: str | None = None
    group: str = "all"
    form: str = NONINFERIOR


def parse_rule(text: str) -> GateRule:
    match = _RULE.match(text.strip())
    if not match:
        raise BenchError(f"--bench-gate {text!r}: expected [noninferior:|noregression:]METRIC>=THRESHOLD[:arm=NAME][:group=GROUP], "
                         "e.g. recall@10>=-0.02, mrr>=-0.02, noregression:recall@10>=-0.02 or noninferior:final_file_f1>=-0.02")
    if "@" not in match["metric"] and match["metric"] != "mrr" and not is_trajectory_metric(match["metric"]):
        raise BenchError(f"--bench-gate {text!r}: unknown metric {match['metric']!r}: a ranking metric is NAME@K (recall@10, mrr@k) or mrr; "
                         f"a trajectory metric is one of {', '.join(TRAJECTORY_METRICS)}")
    form = match["form"] or NONINFERIOR
    if form not in FORMS:
        raise BenchError(f"--bench-gate {text!r}: unknown form {form!r} (allowed: {', '.join(FORMS)})")
    options: dict[str, str] = {}
    parts = _OPTION.split(match["options"])  # group values may hold ':' (task:code2test)
    if parts[0]:
        raise BenchError(f"--bench-gate {text!r}: expected :arm=NAME or :group=GROUP after the threshold")
    for key, value in zip(parts[1::2], parts[2::2]):
        if key not in ("arm", "group") or key in options or not value:
            raise BenchError(f"--bench-gate {text!r}: unknown, repeated or empty option {key!r} (allowed: arm, group)")
        options[key] = value
    return GateRule(text=text.strip(), metric=match["metric"], threshold=float(match["threshold"]), arm=options.get("arm"),
                    group=options.get("group", "all"), form=form)


def check_compatible(run_registration: dict[str, Any], baseline: dict[str, Any], arms: Sequence[str], rules: Sequence[GateRule]) -> None:
    """A baseline over other samples, another limit, or without an arm a rule gates is a usage error.

    An arm the baseline has no record of is new: it runs unpaired. Only a rule that names it, or an
    unqualified rule when no arm is held by both reports, has nothing to read and is refused.
    """
    run_digests = sorted(entry["sha256"] for entry in run_registration.get("samples", []))
    if samples_digests(baseline) != run_digests:
        raise BenchError(other_samples_message(baseline.get("registration", {}), run_registration))
    if baseline.get("registration", {}).get("limit") != run_registration.get("limit"):
        raise BenchError(f"baseline limit {baseline.get('registration', {}).get('limit')} differs from this run's {run_registration.get('limit')}")
    baseline_arms = arm_names_of(baseline)
    unknown = sorted(rule.arm for rule in rules if rule.arm and rule.arm not in arms)
    if unknown:
        raise BenchError(f"--bench-gate names arm(s) {', '.join(unknown)} that this run does not select")
    new = sorted({rule.arm for rule in rules if rule.arm and rule.arm not in baseline_arms})
    if new:
        raise BenchError(f"--bench-gate names arm(s) {', '.join(new)} that the baseline has no results for (a new arm runs "
                         f"unpaired; gate it once the baseline holds it)")
    unqualified = [rule.text for rule in rules if not rule.arm]
    if unqualified and not set(arms) & baseline_arms:
        raise BenchError(f"--bench-gate {', '.join(unqualified)} applies to the arms both reports hold, and none is: this run has "
                         f"{', '.join(arms)}, the baseline {', '.join(sorted(baseline_arms)) or 'none'}")
    details = baseline.get("details", [])
    metrics = {name for entry in details for record in entry.get("arms", {}).values() for name in record.get("metrics", {})}
    trajectory = report_trajectory_values(details) if any(rule.metric not in metrics for rule in rules) else {}
    trajectory_metrics = metric_names(trajectory)
    groups = {group for entry in details if "task_type" in entry for group in groups_of(entry, with_folds=True)}
    for rule in rules:  # a typo must not turn a gate into a silent pass
        if rule.metric not in metrics and rule.metric not in trajectory_metrics:
            raise BenchError(f"--bench-gate {rule.text!r}: no baseline record has the metric {rule.metric!r} ({known_metrics(metrics, trajectory_metrics)})")
        if rule.group not in groups:
            raise BenchError(f"--bench-gate {rule.text!r}: the baseline has no sample in group {rule.group!r}")
        if rule.metric in trajectory_metrics and rule.metric not in metrics:
            holding = sorted(arm for arm, (_, values) in trajectory.items() if any(rule.metric in row for row in values.values()))
            wanted = [rule.arm] if rule.arm else list(arms)
            if not set(wanted) & set(holding):
                raise BenchError(f"--bench-gate {rule.text!r}: {rule.metric!r} is a trajectory metric, which the baseline holds for "
                                 f"{', '.join(holding)} (agents, and ranking arms' same-budget figures), not for {', '.join(wanted)}")


def known_metrics(metrics: set[str], trajectory_metrics: set[str]) -> str:
    """The metric names a rule may give, ranking ones then trajectory ones (agents' and same-budget)."""
    known = f"known: {', '.join(sorted(metrics))}"
    return known + (f"; trajectory: {', '.join(sorted(trajectory_metrics))}" if trajectory_metrics else "")


def other_samples_message(baseline_registration: dict[str, Any], run_registration: dict[str, Any]) -> str:
    """A baseline over other samples: both samples files, and what to do about it."""
    def shown(registration: dict[str, Any]) -> tuple[list[str], str]:
        entries = registration.get("samples", [])
        paths = [str(entry.get("path")) for entry in entries]
        return paths, ", ".join(f"{path} (sha256 {str(entry.get('sha256'))[:12]})" for path, entry in zip(paths, entries)) or "no samples file"

    (theirs, baseline_files), (ours, run_files) = shown(baseline_registration), shown(run_registration)
    if theirs == ours:
        advice = ("the samples file changed since the baseline was written: write the baseline again over this file (a run with "
                  "--bench-report, or --bench-update-baseline on a new path), or restore the file it was written over")
    else:
        advice = ("run over the baseline's samples file, or pair with a baseline written over this run's "
                  "(a run with --bench-report, or --bench-update-baseline on a new path)")
    return f"baseline is over other samples: it was written over {baseline_files}, this run reads {run_files}; {advice}"


def arm_names_of(report: dict[str, Any]) -> set[str]:
    """Every arm with a record in the report's details."""
    return {arm for entry in report.get("details", []) for arm in entry.get("arms", {})}


def positives_needed(n: int, mean: float, interval: Sequence[float], threshold: float) -> int | None:
    """How many positive samples the observed spread would need for the lower bound to reach T.

    The standard error is read off the interval, SE = (high - low) / (2 * 1.96), so the spread of
    one difference is SE * sqrt(n); the lower bound mean - 1.96 * SE * sqrt(n / m) reaches T at
    m = n * (1.96 * SE / (mean - T)) ** 2. Never fewer than n + 1 (the interval at n fell short;
    the percentile interval need not be symmetric). None when mean <= T: no sample count will do.
    """
    if mean <= threshold:
        return None
    standard_error = (interval[1] - interval[0]) / (2 * Z95)
    return max(math.ceil(n * (Z95 * standard_error / (mean - threshold)) ** 2), n + 1)


def passes(form: str, interval: Sequence[float] | None, threshold: float) -> bool:
    """Non-inferiority: the lower bound reaches T; no confident regression: the upper bound does."""
    if interval is None:  # no paired sample proves nothing
        return False
    return (interval[0] if form == NONINFERIOR else interval[1]) >= threshold


def _in_group(entry: dict[str, Any], group: str) -> bool:
    return group in groups_of(entry, with_folds=True)


def sample_change(baseline: dict[str, Any], run: dict[str, Any]) -> tuple[str, str]:
    """("improved" | "regressed" | "unchanged", why) for one sample and arm."""
    if "rank_of_first_gold" not in baseline or baseline.get("metrics") == {}:
        before, after = baseline.get("selective_success"), run.get("selective_success")
        if before == after:
            return "unchanged", ""
        return ("improved", "now abstains") if after else ("regressed", "now answers a no-gold sample")
    before, after = baseline.get("rank_of_first_gold"), run.get("rank_of_first_gold")
    if before == after:
        return "unchanged", ""
    if after is None:
        return "regressed", f"hit at rank {before} is now a miss"
    if before is None:
        return "improved", f"miss is now a hit at rank {after}"
    return ("regressed", f"first gold fell from rank {before} to {after}") if after > before else ("improved", f"first gold rose from rank {before} to {after}")


def _severity(change: dict[str, Any]) -> tuple[Any, ...]:
    before, after = change["baseline_rank"], change["rank"]
    if change["change"] == "regressed":
        return (0 if after is None else 1, -((after or 10**6) - (before or 0)), change["id"])
    return (0 if before is None else 1, -((before or 10**6) - (after or 0)), change["id"])


class _TrajectoryPairs:
    """Both reports' per-sample trajectory values (`trajectory_values`), computed once per comparison."""

    def __init__(self, run: dict[str, Any], baseline: dict[str, Any]):
        self.run = report_trajectory_values(run.get("details", []))
        self.baseline = report_trajectory_values(baseline.get("details", []))

    def _values(self, report: dict[str, tuple[str, Values]], arm: str) -> Values:
        return report[arm][1] if arm in report else {}

    def arms(self, metric: str, shared: Sequence[str]) -> list[str]:
        """The arms both reports hold whose baseline has the metric: a run arm without it pairs nothing, and fails."""
        return [arm for arm in shared if any(metric in row for row in self._values(self.baseline, arm).values())]

    def differences(self, arm: str, metric: str, ids: Sequence[str]) -> tuple[list[str], list[float]]:
        return paired_values(self._values(self.run, arm), self._values(self.baseline, arm), metric, ids)


def compare(run: dict[str, Any], baseline: dict[str, Any], rules: Sequence[GateRule]) -> dict[str, Any]:
    """The report's `baseline` section: per rule the verdict, per arm improved/regressed samples."""
    base = {entry["id"]: entry for entry in baseline.get("details", [])}
    current = {entry["id"]: entry for entry in run.get("details", [])}
    run_arms = sorted(arm_names_of(run))
    arms = sorted(set(run_arms) & arm_names_of(baseline))  # a new arm has nothing to be paired with
    section: dict[str, Any] = {"rules": [], "arms": {}, "only_in_run": sorted(set(current) - set(base)), "only_in_baseline": sorted(set(base) - set(current)),
                               "new_arms": [arm for arm in run_arms if arm not in arms]}
    for arm in arms:
        changes = []
        counts = {"improved": 0, "regressed": 0, "unchanged": 0}
        for sample_id in sorted(set(current) & set(base)):
            now, before = current[sample_id]["arms"].get(arm), base[sample_id]["arms"].get(arm)
            if now is None or before is None:
                continue
            change, why = sample_change(before, now)
            counts[change] += 1
            if change != "unchanged":
                changes.append({"id": sample_id, "repo": current[sample_id].get("repo"), "change": change, "why": why,
                                "baseline_rank": before.get("rank_of_first_gold"), "rank": now.get("rank_of_first_gold")})
        section["arms"][arm] = {
            **counts,
            "regressions": sorted((c for c in changes if c["change"] == "regressed"), key=_severity),
            "improvements": sorted((c for c in changes if c["change"] == "improved"), key=_severity),
        }
    trajectory = _TrajectoryPairs(run, baseline) if any(is_trajectory_metric(rule.metric) for rule in rules) else None
    for rule in rules:
        pairs = trajectory if trajectory is not None and is_trajectory_metric(rule.metric) else None
        for arm in [rule.arm] if rule.arm else (pairs.arms(rule.metric, arms) if pairs is not None else arms):
            in_group = [i for i in sorted(set(current) & set(base)) if _in_group(current[i], rule.group)]
            if pairs is not None:
                _, diffs = pairs.differences(arm, rule.metric, in_group)
            else:
                ids = [i for i in in_group if current[i].get("stratum") == "positive" and arm in current[i]["arms"] and arm in base[i]["arms"]]
                diffs = [current[i]["arms"][arm]["metrics"].get(rule.metric, 0.0) - base[i]["arms"][arm]["metrics"].get(rule.metric, 0.0) for i in ids]
            interval = stats.bootstrap_interval(diffs, run_pair_seed(rule.group, arm, rule.metric))
            passed = passes(rule.form, interval, rule.threshold)
            entry = {
                "rule": rule.text, "form": rule.form, "arm": arm, "group": rule.group, "metric": rule.metric, "threshold": rule.threshold,
                "n": len(diffs), "mean_difference": stats.mean(diffs), "bootstrap95": list(interval) if interval else None,
                "significant": bool(interval and (interval[0] > 0 or interval[1] < 0)),
                "verdict": "pass" if passed else "fail",
            }
            if not passed and rule.form == NONINFERIOR and interval is not None:
                entry["positives_needed"] = positives_needed(len(diffs), entry["mean_difference"], interval, rule.threshold)
            section["rules"].append(entry)
    section["failed"] = any(rule["verdict"] == "fail" for rule in section["rules"])
    return section
