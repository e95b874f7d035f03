"""Gating a ranking change against a baseline report (SPEC 6).

A rule fails when the lower bound of the paired bootstrap 95% interval of (run - baseline)
is below its threshold: a claim is read from the interval's bound, never the point estimate.
Pure functions over report dictionaries; the plugin only decides when to call them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from pytest_retrieval_bench.scoring import stats
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.build import groups_of, samples_digests

_RULE = re.compile(r"^(?P<metric>[a-z_0-9]+@(?:\d+|k))\s*>=\s*(?P<threshold>[-+]?\d+(?:\.\d+)?)(?P<options>(?::.+)?)$")
_OPTION = re.compile(r":([a-z]+)=")


@dataclass(frozen=True)
class GateRule:
    """`METRIC>=THRESHOLD[:arm=NAME][:group=GROUP]`; without arm, every arm both reports hold."""

    text: str
    metric: str
    threshold: float
    arm: str | None = None
    group: str = "all"


def parse_rule(text: str) -> GateRule:
    match = _RULE.match(text.strip())
    if not match:
        raise BenchError(f"--bench-gate {text!r}: expected METRIC>=THRESHOLD[:arm=NAME][:group=GROUP], e.g. recall@10>=-0.02")
    options: dict[str, str] = {}
    parts = _OPTION.split(match["options"])  # group values may hold ':' (task:code2test)
    if parts[0]:
        raise BenchError(f"--bench-gate {text!r}: expected :arm=NAME or :group=GROUP after the threshold")
    for key, value in zip(parts[1::2], parts[2::2]):
        if key not in ("arm", "group") or key in options or not value:
            raise BenchError(f"--bench-gate {text!r}: unknown, repeated or empty option {key!r} (allowed: arm, group)")
        options[key] = value
    return GateRule(text=text.strip(), metric=match["metric"], threshold=float(match["threshold"]), arm=options.get("arm"), group=options.get("group", "all"))


def check_compatible(run_registration: dict[str, Any], baseline: dict[str, Any], arms: Sequence[str], rules: Sequence[GateRule]) -> None:
    """A baseline over other samples, another limit, or without a gated arm is a usage error."""
    run_digests = sorted(entry["sha256"] for entry in run_registration.get("samples", []))
    if samples_digests(baseline) != run_digests:
        raise BenchError(f"baseline is over different samples (sha256 {samples_digests(baseline)} vs this run's {run_digests})")
    if baseline.get("registration", {}).get("limit") != run_registration.get("limit"):
        raise BenchError(f"baseline limit {baseline.get('registration', {}).get('limit')} differs from this run's {run_registration.get('limit')}")
    baseline_arms = {arm for entry in baseline.get("details", []) for arm in entry.get("arms", {})}
    wanted = {rule.arm for rule in rules if rule.arm} or set(arms)
    absent = sorted(arm for arm in wanted if arm in arms and arm not in baseline_arms)
    if absent:
        raise BenchError(f"baseline has no results for arm(s) {', '.join(absent)}")
    unknown = sorted(rule.arm for rule in rules if rule.arm and rule.arm not in arms)
    if unknown:
        raise BenchError(f"--bench-gate names arm(s) {', '.join(unknown)} that this run does not select")
    details = baseline.get("details", [])
    metrics = {name for entry in details for record in entry.get("arms", {}).values() for name in record.get("metrics", {})}
    groups = {group for entry in details if "task_type" in entry for group in groups_of(entry, with_folds=True)}
    for rule in rules:  # a typo must not turn a gate into a silent pass
        if rule.metric not in metrics:
            raise BenchError(f"--bench-gate {rule.text!r}: no baseline record has the metric {rule.metric!r} (known: {', '.join(sorted(metrics))})")
        if rule.group not in groups:
            raise BenchError(f"--bench-gate {rule.text!r}: the baseline has no sample in group {rule.group!r}")


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


def compare(run: dict[str, Any], baseline: dict[str, Any], rules: Sequence[GateRule]) -> dict[str, Any]:
    """The report's `baseline` section: per rule the verdict, per arm improved/regressed samples."""
    base = {entry["id"]: entry for entry in baseline.get("details", [])}
    current = {entry["id"]: entry for entry in run.get("details", [])}
    arms = sorted({arm for entry in run.get("details", []) for arm in entry.get("arms", {})})
    section: dict[str, Any] = {"rules": [], "arms": {}, "only_in_run": sorted(set(current) - set(base)), "only_in_baseline": sorted(set(base) - set(current))}
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
    for rule in rules:
        for arm in [rule.arm] if rule.arm else arms:
            ids = [i for i in sorted(set(current) & set(base)) if _in_group(current[i], rule.group)
                   and current[i].get("stratum") == "positive" and arm in current[i]["arms"] and arm in base[i]["arms"]]
            diffs = [current[i]["arms"][arm]["metrics"].get(rule.metric, 0.0) - base[i]["arms"][arm]["metrics"].get(rule.metric, 0.0) for i in ids]
            interval = stats.bootstrap_interval(diffs, f"gate|{rule.group}|{arm}|{rule.metric}")
            passed = interval is not None and interval[0] >= rule.threshold  # no paired sample proves nothing
            section["rules"].append({
                "rule": rule.text, "arm": arm, "group": rule.group, "metric": rule.metric, "threshold": rule.threshold, "n": len(diffs),
                "mean_difference": stats.mean(diffs), "bootstrap95": list(interval) if interval else None,
                "significant": bool(interval and (interval[0] > 0 or interval[1] < 0)),
                "verdict": "pass" if passed else "fail",
            })
    section["failed"] = any(rule["verdict"] == "fail" for rule in section["rules"])
    return section
