"""The registration: what a run measures, written before any arm runs and bound into the report.

A run whose registration differs from an existing sidecar is a different run; it is refused
unless the user asks to replace the sidecar, so results can't silently mix.
"""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path
from typing import Any, Sequence

import orjson

from pytest_retrieval_bench.arms.base import Arm
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.build import canonical_json, write_atomically
from pytest_retrieval_bench.samples.load import file_sha256


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
        source = hashlib.sha256(inspect.getsource(type(arm)).encode()).hexdigest()[:16]
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


def corpus_fingerprint(directory: Path, rootdir: Path, content_digests: bool) -> dict[str, Any]:
    """A corpus directory's identity: the sha256 of each chunk file (and of the manifest).

    Hashing reads every chunk file once per run (about a second per GB); a worker process,
    which never writes the registration, records only the listing.
    """
    manifest = directory / "corpus_manifest.jsonl"
    files = sorted(p for p in directory.rglob("*") if p.is_file() and ".chunks.jsonl" in p.name)
    fingerprint: dict[str, Any] = {"path": _shown(directory, rootdir), "chunk_files": len(files)}
    if content_digests:
        fingerprint["manifest_sha256"] = file_sha256(manifest) if manifest.is_file() else None
        fingerprint["chunk_files_sha256"] = {p.relative_to(directory).as_posix(): file_sha256(p) for p in files}
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
                       tokenizer_version: str, rootdir: Path, content_digests: bool = True) -> dict[str, Any]:
    return {
        "plugin_version": version,
        "tokenizer_version": tokenizer_version,
        "samples": [{"path": _shown(item.path, rootdir), "sha256": item.digest} for item in loaded],
        "corpus": [corpus_fingerprint(directory, rootdir, content_digests) for directory in settings.corpus if directory.is_dir()],
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


def check_and_write_registration(report: Path, registration: dict[str, Any], replace: bool) -> Path:
    path = sidecar_path(report)
    data = canonical_json(registration)
    if path.exists() and not replace:
        try:
            existing = orjson.loads(path.read_bytes())
            if not isinstance(existing, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as error:
            raise BenchError(f"{path}: existing registration is unreadable ({error}); pass --bench-replace-registration to replace it") from error
        if canonical_json(existing) != data:
            changed = sorted(key for key in set(existing) | set(registration) if existing.get(key) != orjson.loads(data).get(key))
            raise BenchError(
                f"{path}: an existing registration differs from this run's (fields: {', '.join(changed)}); "
                "this is a different run: choose another --bench-report or pass --bench-replace-registration"
            )
    try:
        write_atomically(path, data)
    except OSError as error:
        raise BenchError(f"{path}: cannot write the registration: {error.strerror or error}") from error
    return path
