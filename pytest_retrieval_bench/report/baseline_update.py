"""What `--bench-update-baseline` writes: the baseline with the arms a run ran replaced by the run's.

A team's baseline holds every arm it gates on; a run of some of them (one arm changed, one arm
new) must not drop the others, or the next run with them has nothing to pair with. So an update
follows the merge rule (a later report's arm of a name replaces an earlier one's) by whole arms:
every arm the run ran replaces the baseline's arm of that name, the baseline's other arms are
kept, and every summary section is rebuilt from the merged details. Keeping arms is only sound
over the same bench (samples, limit, corpus, plugin and tokenizer versions, filters); otherwise the
update is refused, naming the difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.build import build_report, details_labels, has_folds
from pytest_retrieval_bench.report.merge import bench_difference


@dataclass(frozen=True)
class BaselineChanges:
    """The arms an update replaced, added (new to the baseline) and kept (the baseline's, not run)."""

    replaced: tuple[str, ...]
    added: tuple[str, ...]
    kept: tuple[str, ...]

    def describe(self) -> str:
        """`replaced grep, bm25:all; added mine; kept fx[1], fx[2]` (empty parts left out)."""
        parts = [(word, arms) for word, arms in (("replaced", self.replaced), ("added", self.added), ("kept", self.kept)) if arms]
        return "; ".join(f"{word} {', '.join(arms)}" for word, arms in parts)


def arms_of(report: dict[str, Any]) -> list[str]:
    """A report's arms: its registration's, in their order, then any other its details hold."""
    registered = list(report.get("registration", {}).get("arms") or [])
    held = sorted({arm for entry in report.get("details", []) for arm in entry.get("arms", {})} - set(registered))
    return registered + held


def changes_of(baseline: dict[str, Any] | None, run_arms: Sequence[str]) -> BaselineChanges:
    before = arms_of(baseline) if baseline is not None else []
    return BaselineChanges(replaced=tuple(arm for arm in run_arms if arm in before), added=tuple(arm for arm in run_arms if arm not in before),
                           kept=tuple(arm for arm in before if arm not in run_arms))


def check_update(baseline: dict[str, Any], registration: dict[str, Any], run_arms: Sequence[str]) -> None:
    """Before any arm runs: an update that keeps some of the baseline's arms needs the same bench, and
    no kept fusion may fuse a component this run changes (its records would describe the old one)."""
    kept = changes_of(baseline, run_arms).kept
    difference = bench_difference(baseline, {"registration": registration}) if kept else None
    if difference is not None:
        name, before, now = difference
        raise BenchError(f"updating the baseline would keep its arm(s) {', '.join(kept)}, but it is not over this "
                         f"run's bench: registration field {name!r} differs ({before!r} vs this run's {now!r}); run those arms too "
                         "to replace the baseline whole, or write a new baseline path")
    before, now = baseline["registration"].get("arm_identities") or {}, registration.get("arm_identities") or {}
    changed = [arm for arm in run_arms if before.get(arm) and now.get(arm) and before[arm] != now[arm]]
    for fusion in kept:  # a fusion's identity names each component's: `fusion:...:grep*1<builtin:grep:...>`
        identity = before.get(fusion, "")
        stale = [arm for arm in changed if identity.startswith("fusion:") and f"{arm}*" in identity and f"<{before[arm]}>" in identity]
        if stale:
            raise BenchError(f"updating the baseline would keep its fused arm {fusion!r}, computed from the earlier version of "
                             f"{', '.join(stale)}, which this run changes; run {fusion!r} too (--bench-fuse)")


def updated_baseline(baseline: dict[str, Any], baseline_path: str, run: dict[str, Any], run_path: str,
                     baselines: Sequence[str]) -> tuple[dict[str, Any], BaselineChanges]:
    """The baseline to write after `run` (a complete report), and what changed.

    Without kept arms the run's report itself. Otherwise the run's registration naming every arm
    (kept arms with their recorded identities), and `merged_from` holding the run's and those of
    the baseline's inputs that made a kept arm; the run's `baseline` comparison and the run's
    latency for its own arms (which carry cache-state labels a written record no longer has) are
    kept as the run wrote them.
    """
    run_arms = arms_of(run)
    changes = changes_of(baseline, run_arms)
    if not changes.kept:
        return run, changes
    check_update(baseline, run["registration"], run_arms)
    labels: dict[str, dict[str, Any]] = {}
    records: dict[tuple[str, str], dict[str, Any]] = {}
    snapshots = {**baseline.get("snapshots", {}), **run.get("snapshots", {})}
    for report, arms in ((baseline, set(changes.kept)), (run, set(run_arms))):
        labels.update(details_labels(report))
        for entry in report["details"]:
            if entry.get("skipped"):
                records[(entry["id"], "")] = {"sample_id": entry["id"], "arm": "", "skipped": entry["skipped"]}
            for arm, record in entry.get("arms", {}).items():
                if arm in arms:
                    key = f"{entry.get('repo')}@{entry.get('base_commit')}"
                    records[(entry["id"], arm)] = {**record, "sample_id": entry["id"], "arm": arm, "snapshot_sha256": snapshots.get(key)}
    merged = build_report(
        registration=_registration((baseline, baseline_path), (run, run_path), changes),
        samples=[],
        records=records.values(),
        baselines=baselines,
        limit=int(run["registration"].get("limit") or 20),
        with_folds=has_folds(run["registration"], labels),
        problems=run.get("problems", []),
        missing=run.get("missing", []),
        labels_override=labels,
    )
    merged["latency"] = {**merged["latency"], **{arm: value for arm, value in run.get("latency", {}).items() if arm in run_arms}}
    if "baseline" in run:
        merged["baseline"] = run["baseline"]
    return merged, changes


def _registration(earlier: tuple[dict[str, Any], str], later: tuple[dict[str, Any], str], changes: BaselineChanges) -> dict[str, Any]:
    (baseline, baseline_path), (run, run_path) = earlier, later
    registration = {key: value for key, value in run["registration"].items() if key != "merged_from"}
    kept_identities = baseline["registration"].get("arm_identities") or {}
    registration["arms"] = [*arms_of(run), *changes.kept]
    registration["arm_identities"] = {**{arm: kept_identities[arm] for arm in changes.kept if arm in kept_identities},
                                      **(run["registration"].get("arm_identities") or {})}
    inputs = [entry for entry in _inputs(baseline, baseline_path)
              if set(entry.get("registration", {}).get("arms") or changes.kept) & set(changes.kept)]
    registration["merged_from"] = inputs + _inputs(run, run_path)
    return registration


def _inputs(report: dict[str, Any], path: str) -> list[dict[str, Any]]:
    own = report["registration"]
    return own.get("merged_from") or [{"path": path, "registration": {key: value for key, value in own.items() if key != "merged_from"}}]
