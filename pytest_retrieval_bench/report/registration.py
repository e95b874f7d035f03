"""The registration: what a run measures, written before any arm runs and bound into the report.

A run whose registration differs from an existing sidecar is a different run: a run that replaces
the whole report replaces the sidecar too and says what changed; one that would leave results of
two registrations side by side (a part of the bench beside a complete report) is refused unless the
user asks to replace the sidecar, so results can't silently mix.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import orjson

from pytest_retrieval_bench.arms.base import Arm
from pytest_retrieval_bench.arms.class_source import class_source
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.files.sha256 import file_sha256
from pytest_retrieval_bench.report.build import canonical_json, write_atomically


def arm_identity(arm: Arm, tokenizer_version: str) -> str:
    """Built-ins: frozen rule + tokenizer version. Others: an explicit `identity`, else module:class."""
    explicit = getattr(arm, "identity", None)
    if explicit:
        return str(explicit() if callable(explicit) else explicit)
    module = type(arm).__module__
    if module.startswith("pytest_retrieval_bench.arms."):
        return f"builtin:{arm.name}:{tokenizer_version}"
    source = ""
    try:
        source = hashlib.sha256(class_source(type(arm)).encode()).hexdigest()[:16]
    except (OSError, TypeError):
        pass
    return f"python:{module}.{type(arm).__qualname__}" + (f":{source}" if source else "")


def _shown(path: Path, rootdir: Path) -> str:
    """A path as the registration shows it: relative to the rootdir when inside it, so the same
    inputs in another checkout register the same."""
    try:
        return path.resolve().relative_to(rootdir.resolve()).as_posix()
    except ValueError:
        return str(path)


def corpus_fingerprint(directory: Path, rootdir: Path, content_digests: bool,
                       digest_of: Callable[[Path], str] = file_sha256) -> dict[str, Any]:
    """A corpus directory's identity: the sha256 of each chunk file (and of the manifest).

    Hashing reads every chunk file (about a second per GB) unless `digest_of` remembers the
    digests of untouched files; a worker process, which never writes the registration, records
    only the listing.
    """
    manifest = directory / "corpus_manifest.jsonl"
    files = sorted(p for p in directory.rglob("*") if p.is_file() and ".chunks.jsonl" in p.name)
    fingerprint: dict[str, Any] = {"path": _shown(directory, rootdir), "chunk_files": len(files)}
    if content_digests:
        fingerprint["manifest_sha256"] = digest_of(manifest) if manifest.is_file() else None
        fingerprint["chunk_files_sha256"] = {p.relative_to(directory).as_posix(): digest_of(p) for p in files}
    return fingerprint


def corvint_registration(arm_names: Sequence[str], arms: dict[str, Arm]) -> dict[str, str]:
    """Seed 000's run-level corvint fields: the binary's digest and version, NOT_RUN when no corvint
    verb was selected (then no corvint process is started at all)."""
    from pytest_retrieval_bench.arms.corvint import CorvintArm

    names = list(arm_names) + [part for name in arm_names for part in getattr(arms[name], "component_names", ())]
    selected = [arms[name] for name in names if isinstance(arms.get(name), CorvintArm)]
    if not selected:
        return {"digest": "NOT_RUN", "version": "NOT_RUN"}
    arm = selected[0]
    identity = arm.identity()
    return {"digest": identity.split(":", 1)[1] if identity != "NOT_RUN" else "NOT_RUN", "version": arm.version()}


def build_registration(settings: Any, loaded: Sequence[Any], arm_names: Sequence[str], arms: dict[str, Arm], version: str,
                       tokenizer_version: str, rootdir: Path, content_digests: bool = True,
                       digest_of: Callable[[Path], str] = file_sha256) -> dict[str, Any]:
    return {
        "plugin_version": version,
        "tokenizer_version": tokenizer_version,
        "samples": [{"path": _shown(item.path, rootdir), "sha256": item.digest} for item in loaded],
        "corpus": [corpus_fingerprint(directory, rootdir, content_digests, digest_of) for directory in settings.corpus if directory.is_dir()],
        "snapshots": {key: _shown(path, rootdir) for key, path in sorted(settings.snapshots.items())},
        "repos": _shown(settings.repos, rootdir) if settings.repos else None,
        "arms": list(arm_names),
        "arm_identities": {name: arm_identity(arms[name], tokenizer_version) for name in arm_names},
        "corvint": corvint_registration(arm_names, arms),
        "fold_map_sha256": settings.fold_map_sha256,
        "limit": settings.limit,
        "task_type": settings.task_type,
        "max_samples": settings.max_samples,
    }


SIDECAR_SUFFIX = ".registration.json"


def sidecar_path(report: Path) -> Path:
    return report.with_name(report.name + SIDECAR_SUFFIX)


def registration_changes(existing: dict[str, Any], registration: dict[str, Any]) -> str:
    """What differs between two registrations, on one line: per field, a mapping's changed entries
    (`arm_identities: mine a -> b`), a list or value as before -> after, a long one just as changed."""
    parts = []
    for key in sorted(set(existing) | set(registration)):
        before, after = existing.get(key), registration.get(key)
        if before == after:
            continue
        if isinstance(before, dict) and isinstance(after, dict):
            entries = [f"{name} {_brief(before.get(name))} -> {_brief(after.get(name))}"
                       for name in sorted(set(before) | set(after), key=str) if before.get(name) != after.get(name)]
            parts.append(f"{key}: {'; '.join(entries)}")
        else:
            parts.append(f"{key} {_brief(before)} -> {_brief(after)}")
    return ", ".join(parts)


def _brief(value: Any) -> str:
    if value is None:
        return "(none)"
    shown = ",".join(map(str, value)) if isinstance(value, list) and all(isinstance(item, str) for item in value) else str(value)
    return shown if len(shown) <= 80 else "(changed)"


def read_sidecar(path: Path) -> dict[str, Any] | None:
    """The existing sidecar's registration, None without one (BenchError when it cannot be read)."""
    if not path.exists():
        return None
    try:
        existing = orjson.loads(path.read_bytes())
        if not isinstance(existing, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as error:
        raise BenchError(f"{path}: existing registration is unreadable ({error}); pass --bench-replace-registration to replace it") from error
    return existing


def check_and_write_registration(report: Path, registration: dict[str, Any], replace: bool, partial_selection: str | None = None) -> str | None:
    """Write the sidecar of `report`; an existing one that differs is replaced when the run replaces
    the whole report (or with `replace`), and refused when the run selects part of it
    (`partial_selection` names how): that part's report is written beside the complete one, which
    would be left with another run's registration. Returns what a replacement changed, if any."""
    path = sidecar_path(report)
    data = canonical_json(registration)
    existing = None if replace else read_sidecar(path)
    changes = registration_changes(existing, orjson.loads(data)) if existing is not None and canonical_json(existing) != data else None
    if changes and partial_selection:
        raise BenchError(
            f"{path}: an existing registration differs from this run's ({changes}), and this run selects part of the bench "
            f"({partial_selection}): its results would sit beside a report of another registration; run the whole selection to "
            "replace both, choose another --bench-report, or pass --bench-replace-registration"
        )
    try:
        write_atomically(path, data)
    except OSError as error:
        raise BenchError(f"{path}: cannot write the registration: {error.strerror or error}") from error
    return changes


# -- matched snapshot latency: an exclusive registration, checked again before publication ---------
LATENCY_MODE = "matched-snapshot-latency"
_ENVIRONMENT_PREFIXES = ("CORVINT",)


def bench_digest() -> str:
    """sha256 of this plugin's own Python sources (the "bench binary" seed 000 binds)."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return f"sha256:{digest.hexdigest()}"


def ranking_environment(arms: Sequence[Any]) -> dict[str, Any]:
    """What in the environment can change a ranking or the snapshot storage: the process's CORVINT*
    variables and each measured command arm's declared `env`."""
    inherited = {name: value for name, value in sorted(os.environ.items()) if name.startswith(_ENVIRONMENT_PREFIXES)}
    declared = {arm.name: dict(sorted(arm.spec.env.items())) for arm in arms if getattr(arm, "spec", None) is not None and arm.spec.env}
    return {"inherited": inherited, "declared": declared}


def latency_registration(matched: Sequence[Any], selected_ids: Sequence[str]) -> dict[str, Any]:
    """The `snapshot_latency` section: mode, measured arms and their snapshot stores, the selected
    sample ids, the bench's digest and the ranking/storage environment."""
    return {
        "mode": LATENCY_MODE,
        "arms": {arm.name: {"index": list(arm.snapshot_latency.index), "store": arm.snapshot_latency.store,
                            "trace": arm.snapshot_latency.trace} for arm in matched},
        "selected_ids": sorted(selected_ids),
        "bench": bench_digest(),
        "environment": ranking_environment(matched),
    }


def create_registration(path: Path, registration: dict[str, Any]) -> bytes:
    """Create the registration exclusively (never over an existing file) and sync it to disk, so it
    survives whatever happens to the run; returns the bytes written."""
    data = canonical_json(registration)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except FileExistsError:
        raise BenchError(f"{path}: a registration already exists there; each run needs a new registration path") from None
    except OSError as error:
        raise BenchError(f"{path}: cannot create the registration: {error.strerror or error}") from error
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except OSError:
        pass  # a directory that cannot be synced (some file systems): the file itself is
    return data


def registration_drift(path: Path, written: bytes, registration: dict[str, Any], arms: dict[str, Any],
                       matched: Sequence[Any]) -> list[str]:
    """Why the run no longer matches its registration (empty: it does): the file was changed, an
    executable's digest moved, or the bench or the ranking environment changed during the run."""
    problems: list[str] = []
    try:
        if path.read_bytes() != written:
            problems.append(f"the registration {path} was changed during the run")
    except OSError as error:
        problems.append(f"the registration {path} cannot be read back: {error.strerror or error}")
    for name, registered in sorted(registration.get("arm_identities", {}).items()):
        recompute = getattr(getattr(arms.get(name), "identity", None), "recompute", None)
        if callable(recompute) and recompute() != registered:
            problems.append(f"arm {name!r}: its executable changed during the run ({registered} -> {recompute()})")
    section = registration.get("snapshot_latency")
    if section is not None:
        if bench_digest() != section["bench"]:
            problems.append("the bench's own sources changed during the run")
        if ranking_environment(matched) != section["environment"]:
            problems.append("the ranking/storage environment (CORVINT* variables, declared env) changed during the run")
    return problems
