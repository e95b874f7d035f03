"""Records -> the canonical report (SPEC 5): details, summary, paired, latency, skipped.

A pure function of the sorted records and the samples, so one process or many, or a rebuild
from written reports (merging), all give the same bytes (wall_ms and latency aside).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

import orjson

from pytest_retrieval_bench import leftovers
from pytest_retrieval_bench.samples.model import Sample
from pytest_retrieval_bench.scoring import stats
from pytest_retrieval_bench.scoring.cce_compare import compare_block
from pytest_retrieval_bench.scoring.exact import exact_metrics
from pytest_retrieval_bench.scoring.metrics import WHOLE_MRR, cutoffs
from pytest_retrieval_bench.report.paired_figures import add_holm, paired_figures
from pytest_retrieval_bench.report.trajectory_section import trajectory_section

PAIRED_METRICS = ("recall@5", "recall@10", "recall@20", "mrr@k", "mrr", "bcy@8000")
"""bcy@8000 is paired where both arms carry it (a merge's fused arm has no text to pack), and so is
the bench's whole-ranking `mrr` (a report written before it was recorded has none)."""


def canonical_json(document: Any) -> bytes:
    """orjson, sorted keys, floats rounded to 6 decimals, one trailing newline."""
    return orjson.dumps(rounded(document), option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS) + b"\n"


def rounded(value: Any) -> Any:
    """`value` with every float rounded as a report writes it (six decimals, no negative zero)."""
    if isinstance(value, float):
        six = round(value, 6)
        return 0.0 if six == 0 else six
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(item) for item in value]
    return value


def _make_directory(directory: Path) -> None:
    """`directory` and its missing parents; where a file stands in the way, an error naming that file
    (`mkdir` says only "File exists", which reads as if the output itself were there)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((step for step in (directory, *directory.parents) if step.exists() and not step.is_dir()), None)
        if blocker is None:
            raise
        raise NotADirectoryError(errno.ENOTDIR, f"{blocker} is a file, not a directory") from None


def write_atomically(path: Path, data: bytes) -> None:
    """Write a temporary file beside `path`, flush it to disk, then rename it over `path`: a crash or
    a full disk leaves the old file or the new one, never half of one (nor the temporary)."""
    _make_directory(path.parent)
    with leftovers.held_signals():  # a signal removes the temporary until it is renamed
        handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        leftovers.track(name)
    try:
        os.chmod(name, _file_mode(path))  # mkstemp makes 0600; a report is as readable as any file
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            leftovers.pause_point("atomic-write", path, name)
            os.fsync(out.fileno())
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    finally:
        leftovers.forget(name)


def _file_mode(path: Path) -> int:
    """The mode of the file being replaced, or what the umask gives a new file."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


LABEL_KEYS = ("repo", "base_commit", "task_type", "stratum", "partition", "gold", "given", "hard_negatives", "query_text")
"""The sample's labels a details entry holds beside its arms' records (`Sample.labels`)."""


def has_folds(registration: dict[str, Any], labels: dict[str, dict[str, Any]]) -> bool:
    """Whether a report rebuilt from these labels has fold groups, as its run had: a run given a fold
    map has them (its digest is registered) even when no sample's repository is in the map."""
    return bool(registration.get("fold_map_sha256")) or any(label.get("partition", "unassigned") != "unassigned" for label in labels.values())


def details_labels(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each details entry's labels, by sample id: what a report rebuilt from its details is given."""
    return {entry["id"]: {key: entry[key] for key in LABEL_KEYS if key in entry} for entry in report["details"]}


def samples_digests(report: dict[str, Any]) -> list[str]:
    """The sorted samples-file sha256s a report (written or merged) was computed over."""
    registration = report.get("registration", {})
    if "samples" not in registration and registration.get("merged_from"):  # merged by an earlier version
        return registration["merged_from"][0].get("samples_sha256", [])
    return sorted(entry["sha256"] for entry in registration.get("samples", []))


def groups_of(labels: dict[str, Any], with_folds: bool) -> list[str]:
    """Every summary group a sample belongs to; the gate reads groups by the same names."""
    task = f"task:{labels['task_type']}"
    groups = ["all", task, f"stratum:{labels['stratum']}", f"repo:{labels['repo']}"]
    if with_folds:
        fold = f"fold:{labels['partition']}"
        groups += [fold, f"{task}/{fold}"]
    return groups


def _interval(bounds: tuple[float, float] | None) -> list[float] | None:
    return list(bounds) if bounds is not None else None


def _metric_mean(positives: Sequence[dict[str, Any]], name: str) -> float | None:
    """Mean over the positives that carry the metric: a format's own metrics (cb_, rel_, kt_,
    codenib_) are means over that format's items only, never diluted by zeros from others.
    Every positive ARB item carries every common metric, so for ARB this is the plain mean."""
    return stats.mean([row["metrics"][name] for row in positives if name in row["metrics"]])


def micro_averages(positives: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """sum(numerators) / sum(denominators) per counted metric (None when every denominator is 0)."""
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for row in positives:
        for name, (numerator, denominator) in (row.get("metric_counts") or {}).items():
            totals[name][0] += numerator
            totals[name][1] += denominator
    return {name: (numerator / denominator if denominator else None) for name, (numerator, denominator) in sorted(totals.items())}


def summarize_arm(rows: Sequence[dict[str, Any]], limit: int) -> dict[str, Any]:
    """Means of every metric over positives, selective success over all, Wilson intervals.

    With format metrics present, also `micro` (pooled ratios) and `metric_n` (how many positives
    a metric was averaged over, for metrics not every positive carries); ARB-only runs get neither.
    """
    positives = [row for row in rows if row["_positive"]]
    names = sorted({name for row in positives for name in row["metrics"]})
    summary: dict[str, Any] = {
        "n": len(rows),
        "positives": len(positives),
        "errors": sum(1 for row in rows if row["error"]),
        "abstentions": sum(1 for row in rows if row["abstained"]),
        "metrics": {name: _metric_mean(positives, name) for name in names},
        "selective_success": stats.mean([1.0 if row["selective_success"] else 0.0 for row in rows]),
        "selective_success_wilson95": _interval(stats.wilson_interval(sum(1 for row in rows if row["selective_success"]), len(rows))),
        "wilson95": {},
    }
    for k in cutoffs(limit):
        hits = sum(1 for row in positives if row["metrics"].get(f"hit@{k}", 0.0) >= 1.0)
        summary["wilson95"][f"hit@{k}"] = _interval(stats.wilson_interval(hits, len(positives)))
    partial = {name: count for name in names if (count := sum(1 for row in positives if name in row["metrics"])) < len(positives)}
    if partial:
        summary["metric_n"] = partial
    if any(row.get("metric_counts") for row in positives):
        summary["micro"] = micro_averages(positives)
    if any("cb_file_coverage" in (row.get("metric_counts") or {}) for row in positives):
        summary["contextbench_official"] = contextbench_official(positives)
    return summary


def contextbench_official(positives: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """ContextBench's own aggregation (`evaluate.py`, `aggregate_results`), to set beside its leaderboard.

    The official evaluator drops an instance with no extracted context (`no_context_extracted`)
    or any other error from its averages and counts it only in `num_total`; its `final_*` values
    are micro averages, `coverage_precision(pred, gold, inter)` with 1.0 over an empty
    denominator. Here an error or an abstention (an empty ranking) is such an instance.
    """
    items = [row for row in positives if "cb_file_coverage" in (row.get("metric_counts") or {})]
    valid = [row for row in items if not row["error"] and not row["abstained"]]
    result: dict[str, Any] = {"num_total": len(items), "num_valid": len(valid)}
    if not valid:
        return result
    for granularity in ("file", "line"):
        intersection = sum(row["metric_counts"][f"cb_{granularity}_coverage"][0] for row in valid)
        gold = sum(row["metric_counts"][f"cb_{granularity}_coverage"][1] for row in valid)
        predicted = sum(row["metric_counts"][f"cb_{granularity}_precision"][1] for row in valid)
        result[f"final_{granularity}"] = {"coverage": intersection / gold if gold > 0 else 1.0,
                                          "precision": intersection / predicted if predicted > 0 else 1.0}
    return result


def repository_macro(rows: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Each repository weighted equally: the mean over repositories of per-repository means."""
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row["_positive"]:
            by_repo[row["_labels"]["repo"]].append(row)
    names = sorted({name for group in by_repo.values() for row in group for name in row["metrics"]})
    return {
        name: stats.mean([mean for repo in sorted(by_repo) if (mean := _metric_mean(by_repo[repo], name)) is not None])
        for name in names
    }


def build_summary(rows_by_arm: dict[str, list[dict[str, Any]]], limit: int, with_folds: bool) -> dict[str, Any]:
    grouped: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for arm, rows in rows_by_arm.items():
        for row in rows:
            for group in groups_of(row["_labels"], with_folds):
                grouped[group][arm].append(row)
    summary: dict[str, Any] = {}
    for group in sorted(grouped):
        summary[group] = {arm: summarize_arm(rows, limit) for arm, rows in sorted(grouped[group].items())}
    for arm, rows in rows_by_arm.items():
        if "all" in summary and arm in summary["all"]:
            summary["all"][arm]["repository_macro"] = repository_macro(rows)
    return summary


def paired_differences(candidate: dict[str, dict[str, Any]], baseline: dict[str, dict[str, Any]], metric: str) -> tuple[list[str], list[float]]:
    """The positives both arms scored, in sample-id order, and candidate minus baseline on each."""
    ids = sorted(set(candidate) & set(baseline))
    ids = [sample_id for sample_id in ids if candidate[sample_id]["_positive"] and metric in candidate[sample_id]["metrics"]
           and (metric in baseline[sample_id]["metrics"] or not (metric.startswith("bcy@") or metric == WHOLE_MRR))]
    exact = lambda row: row["_exact"] if "_exact" in row else row["metrics"]  # noqa: E731 - never the rounded values where exact ones exist
    return ids, [exact(candidate[i])[metric] - exact(baseline[i]).get(metric, 0.0) for i in ids]


def paired_comparison(name: str, candidate: dict[str, dict[str, Any]], baseline: dict[str, dict[str, Any]], metric: str) -> dict[str, Any] | None:
    """Candidate minus baseline over positives both arms scored, in sample-id order."""
    ids, diffs = paired_differences(candidate, baseline, metric)
    if not ids:
        return None
    return paired_figures(name, diffs, [candidate[sample_id]["_labels"]["repo"] for sample_id in ids])


def build_paired(rows_by_arm: dict[str, list[dict[str, Any]]], baselines: Sequence[str], limit: int, with_folds: bool) -> dict[str, Any]:
    metrics = [metric for metric in PAIRED_METRICS if not metric.startswith("recall@") or int(metric.split("@")[1]) <= limit]
    candidates = [arm for arm in sorted(rows_by_arm) if arm not in baselines]
    present_baselines = [arm for arm in baselines if arm in rows_by_arm]
    by_group: dict[str, dict[str, dict[str, dict[str, Any]]]] = defaultdict(lambda: defaultdict(dict))
    for arm, rows in rows_by_arm.items():
        for row in rows:
            for group in groups_of(row["_labels"], with_folds):
                if group == "all" or group.startswith(("task:", "fold:")):
                    by_group[group][arm][row["sample_id"]] = row
    paired: dict[str, Any] = {}
    for group in sorted(by_group):
        entries: dict[str, Any] = {}
        for candidate in candidates:
            for baseline in present_baselines:
                comparison = {}
                for metric in metrics:
                    name = f"{group}|{candidate}|{baseline}|{metric}"
                    result = paired_comparison(name, by_group[group][candidate], by_group[group][baseline], metric)
                    if result is not None:
                        comparison[metric] = result
                if comparison:
                    entries[f"{candidate} vs {baseline}"] = comparison
        if entries:
            add_holm(entries)
            paired[group] = entries
    return paired


def build_cce_compare(rows_by_arm: dict[str, list[dict[str, Any]]], baselines: Sequence[str]) -> dict[str, Any]:
    """cce's `--compare` block for every candidate against every baseline, over the cce.relevance
    items both scored (sample-id order): `baseline` is cce's `a`, the candidate its `b`."""
    present_baselines = [arm for arm in baselines if arm in rows_by_arm]
    scored = {arm: {row["sample_id"]: row["_exact"] for row in rows if row["_positive"] and "rel_mrr" in row["metrics"]}
              for arm, rows in rows_by_arm.items()}
    blocks: dict[str, Any] = {}
    for candidate in sorted(arm for arm in rows_by_arm if arm not in baselines):
        for baseline in present_baselines:
            ids = sorted(set(scored[candidate]) & set(scored[baseline]))
            if ids:
                blocks[f"{candidate} vs {baseline}"] = compare_block(
                    baseline, candidate, [scored[baseline][i] for i in ids], [scored[candidate][i] for i in ids])
    return blocks


OBSERVED_HIT, OBSERVED_MISS = "OBSERVED_HIT", "OBSERVED_MISS"


def build_latency(rows_by_arm: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per arm and cache-state label. A record with `cold_wall_ms` (matched snapshot latency) is an
    observed hit (`wall_ms`) and its matched miss (`cold_wall_ms`), read from the details alone so a
    merge rebuilds the same rows; those rows also give the minimum."""
    latency: dict[str, Any] = {}
    for arm, rows in sorted(rows_by_arm.items()):
        by_state: dict[str, list[float]] = defaultdict(list)
        for row in rows:
            if row["error"]:  # a failed call's time is not a retrieval latency
                continue
            if row.get("cold_wall_ms") is not None:
                by_state[OBSERVED_HIT].append(float(row["wall_ms"]))
                by_state[OBSERVED_MISS].append(float(row["cold_wall_ms"]))
            else:
                by_state[row.get("cache_state") or "UNRECORDED"].append(float(row["wall_ms"]))
        latency[arm] = {state: stats.latency_summary(values, with_min=state in (OBSERVED_HIT, OBSERVED_MISS))
                        for state, values in sorted(by_state.items())}
    return latency


def arm_row(record: dict[str, Any], labels: dict[str, Any], limit: int) -> dict[str, Any]:
    """A (rounded) record as the summary and paired sections read it: with its sample's labels,
    whether the sample is positive, and its exact metrics (for pairing)."""
    return {**record, "_labels": labels, "_positive": labels["stratum"] == "positive", "_exact": exact_metrics(record, labels, limit)}


def build_report(
    registration: dict[str, Any],
    samples: Iterable[Sample],
    records: Iterable[dict[str, Any]],
    baselines: Sequence[str],
    limit: int,
    with_folds: bool,
    problems: Sequence[str] = (),
    missing: Sequence[str] = (),
    snapshot_problems: Sequence[dict[str, Any]] = (),
    not_run: Sequence[str] = (),
    labels_override: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The whole report as plain data. `records` may come in any order; output never depends on it.

    `not_run` lists the selected `id[arm]` items that have no record (deselected, stopped early,
    interrupted, lost): the report is then partial, and says so in `partial`. `snapshot_problems`
    (a snapshot with no text file, a gold file absent from its snapshot) is written only when there
    is one, so other reports keep their bytes.

    Records are rounded as `details` will be written before anything is aggregated, so every
    summary is a function of the details as written: a merge of written reports, which only
    has the rounded values, computes the same bytes as the run itself. Paired statistics pair
    each record's exact values instead (`scoring.exact`), recomputed from what the written record
    holds (its ranking, the gold, its counts), so they too are the same in a run and a merge.
    """
    labels: dict[str, dict[str, Any]] = dict(labels_override or {})
    for sample in samples:
        labels[sample.id] = sample.labels()
    by_sample: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    skipped_reasons: dict[str, str] = {}
    snapshots: dict[str, str] = {}
    for record in map(rounded, records):
        if record.get("snapshot_sha256") and record["sample_id"] in labels:
            sample_labels = labels[record["sample_id"]]
            snapshots[f"{sample_labels['repo']}@{sample_labels['base_commit']}"] = record["snapshot_sha256"]
        if record.get("skipped"):
            skipped_reasons[record["sample_id"]] = record["skipped"]
        else:
            by_sample[record["sample_id"]][record["arm"]] = record
    rows_by_arm: dict[str, list[dict[str, Any]]] = defaultdict(list)
    details = []
    for sample_id in sorted(set(by_sample) | set(skipped_reasons)):
        sample_labels = labels.get(sample_id, {})
        entry: dict[str, Any] = {"id": sample_id, **sample_labels, "arms": {}}
        if sample_id in skipped_reasons:
            entry["skipped"] = skipped_reasons[sample_id]
        for arm in sorted(by_sample.get(sample_id, {})):
            record = by_sample[sample_id][arm]
            # cache_state feeds only the latency section: like wall_ms it may differ between runs
            entry["arms"][arm] = {key: value for key, value in record.items() if key not in ("sample_id", "arm", "snapshot_sha256", "cache_state")}
            if sample_labels:
                rows_by_arm[arm].append(arm_row(record, sample_labels, limit))
        details.append(entry)
    for rows in rows_by_arm.values():
        rows.sort(key=lambda row: row["sample_id"])
    skipped: dict[str, int] = defaultdict(int)
    for reason in skipped_reasons.values():
        skipped[reason] += 1
    if problems:
        skipped["invalid_row"] = len(problems)
    report = {
        "registration": registration,
        "details": details,
        "summary": build_summary(rows_by_arm, limit, with_folds),
        "paired": build_paired(rows_by_arm, baselines, limit, with_folds),
        "latency": build_latency(rows_by_arm),
        "skipped": dict(skipped),
        "problems": list(problems),
        "missing": sorted(missing),
        "partial": {"not_run": sorted(not_run)} if not_run else None,
        "snapshots": dict(sorted(snapshots.items())),
    }
    cce_compare = build_cce_compare(rows_by_arm, baselines)
    if snapshot_problems:
        unique = {tuple(str(problem.get(name, "")) for name in ("snapshot", "kind", "sample", "path")): problem for problem in snapshot_problems}
        report["snapshot_problems"] = [unique[key] for key in sorted(unique)]
    if cce_compare:  # only with cce.relevance samples: other reports keep their bytes
        report["cce_compare"] = cce_compare
    trajectory = trajectory_section(details)
    if trajectory:  # only with agent arms: other reports keep their bytes
        report["trajectory"] = trajectory
    return report
