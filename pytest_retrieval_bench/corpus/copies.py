"""Private temporary copies of snapshots for arms that need a real directory.

Every copy lives under one base directory owned by the controlling process (or the only one),
so removing that directory at session end, on SIGINT and on SIGTERM leaves nothing behind,
whichever worker built the copy.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from types import FrameType
from typing import Callable

from pytest_retrieval_bench.corpus.snapshot import Snapshot

_COMMIT_ENV = {
    "GIT_AUTHOR_NAME": "retrieval-bench",
    "GIT_AUTHOR_EMAIL": "retrieval-bench@localhost",
    "GIT_COMMITTER_NAME": "retrieval-bench",
    "GIT_COMMITTER_EMAIL": "retrieval-bench@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}


def make_base_directory() -> Path:
    return Path(tempfile.mkdtemp(prefix="pytest-retrieval-bench-"))


class PrivateCopies:
    """Builds at most one copy per snapshot and removes them all on every way out."""

    def __init__(self, base: Path, owned_root: Path | None):
        """`owned_root` (the session's temporary directory, in the process that made it) is
        removed with the copies, so a signal that ends the process leaves nothing behind."""
        self.base = base
        self.owned_root = owned_root
        self._copies: dict[str, Path] = {}
        self._previous: dict[int, Callable[..., object] | int | None] = {}
        atexit.register(self.cleanup)
        for signum in (signal.SIGTERM,):
            try:
                self._previous[signum] = signal.signal(signum, self._on_signal)
            except ValueError:  # not the main thread
                pass

    def get(self, snapshot: Snapshot) -> Path:
        if snapshot.key not in self._copies:
            self.base.mkdir(parents=True, exist_ok=True)
            target = Path(tempfile.mkdtemp(prefix="copy-", dir=self.base))
            self._copies[snapshot.key] = target
            snapshot.write_to(target)
            _commit_once(target)
        return self._copies[snapshot.key]

    def release(self, key: str) -> None:
        path = self._copies.pop(key, None)
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)

    def cleanup(self) -> None:
        for key in list(self._copies):
            self.release(key)
        if self.owned_root is not None:
            shutil.rmtree(self.owned_root, ignore_errors=True)

    def restore_signals(self) -> None:
        for signum, handler in self._previous.items():
            try:
                signal.signal(signum, handler)  # type: ignore[arg-type]
            except (ValueError, TypeError):
                pass
        self._previous.clear()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.cleanup()
        previous = self._previous.get(signum)
        self.restore_signals()
        if callable(previous):
            previous(signum, frame)
            return
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def _commit_once(target: Path) -> None:
    """One commit so `git` works inside the copy; a fixed identity and date keep it reproducible."""
    env = {**os.environ, **_COMMIT_ENV}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--allow-empty", "-m", "snapshot", "--no-gpg-sign"]):
        subprocess.run(["git", "-C", str(target), *args], env=env, check=True, capture_output=True)
