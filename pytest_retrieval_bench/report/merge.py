"""Merge written reports (CI shards, or runs of different arms) and rebuild every summary section.

Details are merged by sample id. Inputs must describe the same bench: the same samples, corpus
and tokenizer digests, plugin version, limit and filters; a report naming the first one and the
field that differs is refused. Seed 000's rule holds: a later report's arm of a name replaces an
earlier one's, but one arm is never made of records from two versions (identities): a later run
of a changed arm must cover every sample the earlier one did. Shards (`--bench-shard`) must come
from one partition and be complete and distinct, unless partial results are allowed, which are
then marked partial. An arm must be known (declared) or recorded by every report holding it under
one identity, which says what made its records as well as a declaration would. The merged
registration is the inputs' common one with every input's registration kept under `merged_from`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import orjson

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.build import build_report, details_labels, has_folds, samples_digests
from pytest_retrieval_bench.report.derived_check import derived_problem
from pytest_retrieval_bench.report.recompute import recomputation_problem
from pytest_retrieval_bench.report.registration import SIDECAR_SUFFIX
from pytest_retrieval_bench.report.schema import NOT_A_REPORT, report_problem
from pytest_retrieval_bench.report.sections import section_problem

#: registration fields every input must share (paths may differ between machines; digests may not)
SAME_FIELDS = ("plugin_version", "tokenizer_version", "limit", "fold_map_sha256", "task_type", "max_samples")


def read_report(path: Path, sections: tuple[str, ...] = ()) -> dict[str, Any]:
    """A report read back and checked: its shape and value ranges, and each record's results
    recomputed from its ranking and the sample's labels; `sections` (summary, paired, latency,
    baseline) are checked for a reader that shows them, the summary and the paired statistics
    rebuilt from the details. Whatever reads a report (a baseline, a merge input, a saved run, a
    page) reads it here, so a number edited by hand is refused, never shown or paired with."""
    try:
        report = orjson.loads(path.read_bytes())
    except OSError as error:
        raise BenchError(f"{path}: cannot read: {error.strerror or error}") from error
    except orjson.JSONDecodeError as error:
        raise BenchError(f"{path}: not a JSON report: {error}") from error
    return checked_report(report, path, sections)


def checked_report(report: Any, path: Path, sections: tuple[str, ...] = ()) -> dict[str, Any]:
    """`read_report`'s checks of a report already parsed from `path` (for a reader that looked at its
    JSON first): the report, or a BenchError naming `path`."""
    problem = report_problem(report)
    if problem:
        raise BenchError(f"{path}: {problem}" if problem == NOT_A_REPORT else f"{path}: not a valid report: {problem}")
    problem = section_problem(report, sections)
    if problem:
        raise BenchError(f"{path}: not a valid report: {problem}")
    mismatch = recomputation_problem(report)
    if mismatch:
        raise BenchError(f"{path}: results that its own records contradict, {mismatch}; a report edited by hand is not used")
    mismatch = derived_problem(report, sections)
    if mismatch:
        raise BenchError(f"{path}: figures that its own details contradict, {mismatch}; a report edited by hand is not used")
    return report


def _corpus_digests(registration: dict[str, Any]) -> list[Any]:
    return sorted(orjson.dumps([entry.get("manifest_sha256"), entry.get("chunk_files_sha256")], option=orjson.OPT_SORT_KEYS).decode()
                  for entry in registration.get("corpus", []))


def bench_difference(first: dict[str, Any], other: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """The first registration field in which two reports' benches differ, with both values (None: the same bench)."""
    a, b = first["registration"], other["registration"]
    checks = [("samples sha256", samples_digests(first), samples_digests(other)), ("corpus digests", _corpus_digests(a), _corpus_digests(b)),
              ("snapshots", sorted(a.get("snapshots") or {}), sorted(b.get("snapshots") or {}))]
    checks += [(name, a.get(name), b.get(name)) for name in SAME_FIELDS]
    return next(((name, mine, theirs) for name, mine, theirs in checks if mine != theirs), None)


def _check_same_bench(first: tuple[Path, dict[str, Any]], other: tuple[Path, dict[str, Any]]) -> None:
    (first_path, first_report), (path, report) = first, other
    difference = bench_difference(first_report, report)
    if difference is not None:
        name, mine, theirs = difference
        raise BenchError(f"{path} and {first_path} are not over the same bench: registration field {name!r} differs "
                         f"({theirs!r} vs {mine!r}); reports of different benches cannot be merged")


def _shards_held(path: Path, report: dict[str, Any]) -> list[tuple[str, tuple[str, ...], dict[str, Any]]]:
    """(who holds it, its arms, shard) for each shard a report holds: its own, or, for a merged
    report, those of the inputs it was merged from (recorded under `merged_from`)."""
    registration = report["registration"]
    if registration.get("shard"):
        return [(str(path), tuple(registration.get("arms", [])), registration["shard"])]
    held = []
    for source in registration.get("merged_from") or []:
        own = source.get("registration")
        if isinstance(own, dict) and isinstance(own.get("shard"), dict) and {"index", "count", "partition_sha256"} <= set(own["shard"]):
            held.append((f"{path} (merged from {source.get('path')})", tuple(own.get("arms", [])), own["shard"]))
    return held


def _check_shards(reports: Sequence[tuple[Path, dict[str, Any]]], allow_partial: bool) -> list[int]:
    """Shard inputs of one arm set must be one partition's complete, distinct set; returns missing shard numbers.
    A merged report counts as the shards it was merged from."""
    by_arms: dict[tuple[str, ...], list[tuple[str, dict[str, Any]]]] = {}
    for path, report in reports:
        for holder, arms, shard in _shards_held(path, report):
            by_arms.setdefault(arms, []).append((holder, shard))
    missing: list[int] = []
    for arms, shards in by_arms.items():
        first_path, first = shards[0]
        seen: dict[int, str] = {}
        for path, shard in shards:
            if (shard["count"], shard["partition_sha256"]) != (first["count"], first["partition_sha256"]):
                raise BenchError(f"{path} and {first_path} are shards of different partitions (shard {shard['index']}/{shard['count']} "
                                 f"partition {shard['partition_sha256'][:12]} vs {first['index']}/{first['count']} {first['partition_sha256'][:12]})")
            if shard["index"] in seen and not allow_partial:
                raise BenchError(f"{path} and {seen[shard['index']]} both hold shard {shard['index']}/{shard['count']}; "
                                 "pass --allow-partial to keep the later one's records")
            seen[shard["index"]] = path
        count = first["count"]
        absent = sorted(set(range(1, count + 1)) - set(seen))
        if absent and not allow_partial:
            raise BenchError(f"shard(s) {', '.join(f'{i}/{count}' for i in absent)} of arms {', '.join(arms)} are missing "
                             f"(given: {', '.join(path for path, _ in shards)}); pass --allow-partial to merge them anyway, marked partial")
        missing += absent
    return sorted(set(missing))


def _registration_of(reports: Sequence[tuple[Path, dict[str, Any]]], arms: list[str], identities: dict[str, str]) -> dict[str, Any]:
    registration = {key: value for key, value in reports[0][1]["registration"].items() if key not in ("shard", "merged_from")}
    registration["arms"] = arms
    registration["arm_identities"] = {arm: identities[arm] for arm in arms if arm in identities}
    inputs = []
    for path, report in reports:
        own = report["registration"]
        inputs += own.get("merged_from") or [{"path": str(path), "registration": {k: v for k, v in own.items() if k != "merged_from"}}]
    registration["merged_from"] = inputs
    return registration


Derive = Callable[[dict[tuple[str, str], dict[str, Any]], dict[str, dict[str, Any]], dict[str, str]], tuple[list[str], list[str]]]
"""Adds arms computed from the merged records (fusions): mutates records and identities, returns
(the new arm names, `id[arm]` items it could not compute)."""


def reports_among(paths: Sequence[Path]) -> list[Path]:
    """The reports of a list that a shell glob may also have filled with their registration sidecars
    (`shard-*.json` matches `shard-1.json.registration.json`): a sidecar beside its own report is
    dropped; one given without its report is refused, naming the report to give instead."""
    given = {Path(path).resolve() for path in paths}
    reports: list[Path] = []
    for path in paths:
        if Path(path).name.endswith(SIDECAR_SUFFIX):
            report = Path(path).with_name(Path(path).name[: -len(SIDECAR_SUFFIX)])
            if report.resolve() in given:
                continue
            raise BenchError(f"{path} is the registration sidecar of {report}, not a report: give {report}")
        reports.append(path)
    return reports


def merge_reports(paths: Sequence[Path], known_arms: Iterable[str], baselines: Sequence[str], allow_partial: bool = False,
                  derive: Derive | None = None) -> dict[str, Any]:
    """One report from several over the same bench (see the module docstring for what is refused)."""
    paths = reports_among(paths)
    if not paths:
        raise BenchError("--bench-summarize needs at least one report")
    reports = [(path, read_report(path)) for path in paths]
    for other in reports[1:]:
        _check_same_bench(reports[0], other)
    _check_arms(reports, set(known_arms))
    missing_shards = _check_shards(reports, allow_partial)
    limit = reports[0][1]["registration"].get("limit")
    labels: dict[str, dict[str, Any]] = {}
    records: dict[tuple[str, str], dict[str, Any]] = {}
    snapshots: dict[str, str] = {}
    problems: list[str] = []
    snapshot_problems: list[dict[str, Any]] = []
    not_run: set[str] = set()
    missing: set[str] = set()
    arms: list[str] = []
    identities: dict[str, str] = {}
    owners: dict[str, Path] = {}
    for path, report in reports:
        registration = report["registration"]
        snapshots.update(report.get("snapshots", {}))
        problems.extend(p for p in report.get("problems", []) if p not in problems)
        snapshot_problems.extend(report.get("snapshot_problems", []))
        not_run.update((report.get("partial") or {}).get("not_run", []))
        missing.update(report.get("missing", []))
        covered: dict[str, set[str]] = {}
        for entry in report["details"]:
            for arm in entry.get("arms", {}):
                covered.setdefault(arm, set()).add(entry["id"])
        for arm in registration.get("arms", []) or sorted(covered):
            identity = (registration.get("arm_identities") or {}).get(arm, "")
            if arm in identities and identities[arm] != identity:
                earlier = {sample_id for sample_id, name in records if name == arm}
                if not earlier <= covered.get(arm, set()):
                    raise BenchError(f"{path}: arm {arm!r} is {identity!r} here but {identities[arm]!r} in {owners[arm]}, and this report does not "
                                     f"cover every sample the earlier one did; one arm cannot be made of records from two versions")
                records = {key: record for key, record in records.items() if key[1] != arm}  # the later version replaces the earlier
            identities[arm], owners[arm] = identity, path
            if arm not in arms:
                arms.append(arm)
        labels.update(details_labels(report))
        for entry in report["details"]:
            if entry.get("skipped"):
                records[(entry["id"], "")] = {"sample_id": entry["id"], "arm": "", "skipped": entry["skipped"]}
            for arm, record in entry.get("arms", {}).items():
                key = f"{labels[entry['id']].get('repo')}@{labels[entry['id']].get('base_commit')}"
                records[(entry["id"], arm)] = {**record, "sample_id": entry["id"], "arm": arm, "snapshot_sha256": snapshots.get(key)}
    if derive is not None:
        added, not_computed = derive(records, labels, identities)
        arms += [arm for arm in added if arm not in arms]
        not_run.update(not_computed)
    report = build_report(
        registration=_registration_of(reports, arms, identities),
        samples=[],
        records=records.values(),
        baselines=baselines,
        limit=int(limit or 20),
        with_folds=has_folds(reports[0][1]["registration"], labels),
        problems=problems,
        snapshot_problems=snapshot_problems,
        missing=sorted(sample_id for sample_id in missing if not any(key[0] == sample_id for key in records)),
        not_run=sorted(item for item in not_run if not _has_record(item, records)),
        labels_override=labels,
    )
    if missing_shards:
        report["partial"] = {**(report["partial"] or {"not_run": []}), "missing_shards": missing_shards}
    return report


def is_named(arm: str, names: Iterable[str]) -> bool:
    """Whether `names` holds the arm, or the fixture arm it is a variant of (`fx` names `fx[1]`)."""
    names = set(names)
    return arm in names or (arm.endswith("]") and arm.partition("[")[0] in names)


def _check_arms(reports: Sequence[tuple[Path, dict[str, Any]]], known: set[str]) -> None:
    """Every arm the reports hold must be known, or recorded under one identity by every report holding
    it: a recorded identity says what made the records as well as a declaration would. An arm held
    without its identity, or recorded under two, is refused naming the reports; declaring it (making it
    known) accepts it, the later report's records then replacing the earlier's as for any arm."""
    recorded: dict[str, tuple[str, Path]] = {}
    for path, report in reports:
        registration = report["registration"]
        identities = registration.get("arm_identities") or {}
        held = set(registration.get("arms") or []) | {arm for entry in report["details"] for arm in entry.get("arms", {})}
        for arm in sorted(held):
            if is_named(arm, known):
                continue
            identity, declare = identities.get(arm), f"declare it (--arm {arm.partition('[')[0]} for retrieval-bench summarize)"
            if not identity:
                raise BenchError(f"{path}: arm {arm!r} is not one this bench defines (known: {', '.join(sorted(known))}) and the report "
                                 f"does not record its identity; {declare}")
            if arm in recorded and recorded[arm][0] != identity:
                raise BenchError(f"arm {arm!r} is {recorded[arm][0]!r} in {recorded[arm][1]} but {identity!r} in {path}: the reports disagree "
                                 f"on its version; merge reports of one version, or {declare} to let the later report's records replace the earlier's")
            recorded.setdefault(arm, (identity, path))


def _has_record(item: str, records: dict[tuple[str, str], dict[str, Any]]) -> bool:
    """Whether a merged input recorded the `id[arm]` another input listed as not run."""
    sample_id, _, arm = item.partition("[")
    return (sample_id, arm[:-1]) in records
