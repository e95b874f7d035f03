"""Merge written reports and rebuild every summary section (`--bench-summarize`).

Details are merged by sample id, a later report's arm replacing an earlier one's, so a
lexical-only run can be paired with an earlier run of another arm over the same samples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Sequence

import orjson

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.build import build_report, samples_digests

LABEL_KEYS = ("repo", "base_commit", "task_type", "stratum", "partition", "gold", "given", "hard_negatives")


def read_report(path: Path) -> dict[str, Any]:
    try:
        report = orjson.loads(path.read_bytes())
    except OSError as error:
        raise BenchError(f"{path}: cannot read: {error.strerror or error}") from error
    except orjson.JSONDecodeError as error:
        raise BenchError(f"{path}: not a JSON report: {error}") from error
    if not isinstance(report, dict) or not isinstance(report.get("details"), list) or not isinstance(report.get("registration"), dict):
        raise BenchError(f"{path}: not a retrieval-bench report (no registration or details)")
    return report


def merge_reports(paths: Sequence[Path], known_arms: Iterable[str], baselines: Sequence[str]) -> dict[str, Any]:
    """Refuses reports over different samples digests or limits, and arms the bench does not define."""
    if not paths:
        raise BenchError("--bench-summarize needs at least one report")
    known = set(known_arms)
    reports = [(path, read_report(path)) for path in paths]
    first_path, first = reports[0]
    digests, limit = samples_digests(first), first["registration"].get("limit")
    labels: dict[str, dict[str, Any]] = {}
    records: dict[tuple[str, str], dict[str, Any]] = {}
    snapshots: dict[str, str] = {}
    merged_from = []
    problems: list[str] = []
    not_run: set[str] = set()
    for path, report in reports:
        if samples_digests(report) != digests:
            raise BenchError(f"{path}: samples digest {samples_digests(report)} differs from {first_path}'s {digests}: reports over different samples cannot be merged")
        if report["registration"].get("limit") != limit:
            raise BenchError(f"{path}: limit {report['registration'].get('limit')} differs from {first_path}'s {limit}")
        merged_from.append({"path": str(path), "samples_sha256": digests, "arms": report["registration"].get("arms", [])})
        snapshots.update(report.get("snapshots", {}))
        problems.extend(p for p in report.get("problems", []) if p not in problems)
        not_run.update((report.get("partial") or {}).get("not_run", []))
        for entry in report["details"]:
            labels[entry["id"]] = {key: entry[key] for key in LABEL_KEYS if key in entry}
            if entry.get("skipped"):
                records[(entry["id"], "")] = {"sample_id": entry["id"], "arm": "", "skipped": entry["skipped"]}
            for arm, record in entry.get("arms", {}).items():
                if arm not in known:
                    raise BenchError(f"{path}: sample {entry['id']} names arm {arm!r}, which this bench does not define (known: {', '.join(sorted(known))})")
                key = f"{labels[entry['id']].get('repo')}@{labels[entry['id']].get('base_commit')}"
                records[(entry["id"], arm)] = {**record, "sample_id": entry["id"], "arm": arm, "snapshot_sha256": snapshots.get(key)}
    return build_report(
        registration={"merged_from": merged_from, "limit": limit},
        samples=[],
        records=records.values(),
        baselines=baselines,
        limit=int(limit or 20),
        with_folds=any(label.get("partition", "unassigned") != "unassigned" for label in labels.values()),
        problems=problems,
        not_run=sorted(item for item in not_run if not _has_record(item, records)),
        labels_override=labels,
    )


def _has_record(item: str, records: dict[tuple[str, str], dict[str, Any]]) -> bool:
    """Whether a merged input recorded the `id[arm]` another input listed as not run."""
    sample_id, _, arm = item.partition("[")
    return (sample_id, arm[:-1]) in records
