"""Which commit and machine produced a report (`commit_info`, `machine_info`).

Both are facts about the run, not about what it measured: like `wall_ms` they may differ between
two runs over the same inputs, and merges and the registration's identity rules ignore them.
A directory that is not a git repository (or git that is missing or fails) gives `commit_info`
None, never an error. git runs through the plugin's one way of running git (`corpus.own_programs`):
read-only, without hooks, an fsmonitor or the caller's configuration.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from pytest_retrieval_bench.corpus.own_programs import git_command
from pytest_retrieval_bench.errors import SnapshotError

def _git(directory: Path, *args: str) -> str | None:
    try:
        result = git_command(directory, *args)
    except (OSError, subprocess.SubprocessError, SnapshotError):
        return None
    return result.stdout.decode("utf-8", "replace").strip() if result.returncode == 0 else None


def commit_info(directory: Path) -> dict[str, Any] | None:
    """The commit checked out at `directory`: id, branch (None when detached), dirty flag, commit time (ISO 8601)."""
    commit = _git(directory, "rev-parse", "--verify", "HEAD")
    if not commit:
        return None
    branch = _git(directory, "symbolic-ref", "--short", "-q", "HEAD")
    status = _git(directory, "status", "--porcelain", "--untracked-files=no")
    return {"id": commit, "branch": branch or None, "dirty": bool(status), "time": _git(directory, "show", "-s", "--format=%cI", "HEAD")}


def machine_info(device: str | None = None) -> dict[str, Any]:
    """The interpreter and machine: python, platform, cpu count, and the device of the run's embedding
    arms (null without one, or when only xdist workers loaded the model)."""
    return {"python": platform.python_version(), "implementation": sys.implementation.name, "platform": platform.platform(),
            "machine": platform.machine(), "cpu_count": os.cpu_count(), "device": device}
