"""The run's side of saved runs: `--bench-compare` turned into the baseline it names, before any
arm runs, and `--bench-save` / `--bench-autosave` after the report is published."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.history.store import find_compared, save_run
from pytest_retrieval_bench.options import Settings


def with_compared_baseline(settings: Settings, registration: dict[str, Any]) -> tuple[Settings, list[str]]:
    """Settings whose baseline is the saved run `--bench-compare` names, and what the terminal says of it."""
    if not settings.compare or settings.storage is None:
        return settings, []
    digests = [entry["sha256"] for entry in registration.get("samples", [])]
    try:
        run, skipped = find_compared(settings.storage, settings.compare, digests, settings.limit)
    except BenchError as error:
        raise pytest.UsageError(str(error)) from error
    notes = [f"compared with saved run {run.label} ({run.path})"] + [f"skipped saved run {why}" for why in skipped]
    return replace(settings, baseline=run.path), notes


def save_published(settings: Settings, report: dict[str, Any], report_bytes: bytes | None, rootdir: Path) -> str | None:
    """Save the published report when asked; the terminal's line about it (None when nothing was asked)."""
    if report_bytes is None or settings.storage is None or not (settings.save or settings.autosave):
        return None
    if report.get("partial") and not settings.save:
        return "not saved: a partial run is saved only when named with --bench-save NAME"
    commit = report.get("commit_info")
    branch = re.sub(r"[^A-Za-z0-9.-]", "-", (commit or {}).get("branch") or "")[:64]
    name = settings.save or (branch if branch[:1].isalnum() else "run")
    try:
        path = save_run(settings.storage, report_bytes, name, commit)
    except (BenchError, OSError) as error:
        return f"not saved in {settings.storage}: {getattr(error, 'strerror', None) or error}"
    return f"saved as {path}"
