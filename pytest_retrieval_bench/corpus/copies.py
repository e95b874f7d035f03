"""Private temporary copies of snapshots for arms that need a real directory.

Every copy lives under one base directory owned by the controlling process (or the only one),
so removing that directory at session end, on SIGINT and on SIGTERM leaves nothing behind,
whichever worker built the copy. The base directory, a copy being made and the git run in it are
registered with `leftovers`, whose SIGTERM handler ends the git before it removes the directories.
An arm owns its copy while it runs, so each copy is guarded (`corpus.own_programs`): the plugin's
own git commands in it first put back the repository configuration the plugin wrote, and nothing
an arm set there (`core.fsmonitor`, hooks, a filter driver, `core.worktree`) runs or redirects
outside the arm's call.
"""

from __future__ import annotations

import atexit
import subprocess
import tempfile
from pathlib import Path

from pytest_retrieval_bench import leftovers
from pytest_retrieval_bench.corpus.copy_files import check_copy
from pytest_retrieval_bench.corpus.own_programs import forget_repository, git_command, guard_repository, set_run_directory
from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.errors import SnapshotError
from pytest_retrieval_bench.files.remove_tree import allow_writes, remove_tree

_COMMIT_ENV = {
    "GIT_AUTHOR_NAME": "retrieval-bench",
    "GIT_AUTHOR_EMAIL": "retrieval-bench@localhost",
    "GIT_COMMITTER_NAME": "retrieval-bench",
    "GIT_COMMITTER_EMAIL": "retrieval-bench@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}


def make_base_directory() -> Path:
    """The run's own directory, registered so a signal removes it (`leftovers.forget` once removed)."""
    with leftovers.held_signals():
        base = Path(tempfile.mkdtemp(prefix="pytest-retrieval-bench-"))
        leftovers.track(base)
    return base


class PrivateCopies:
    """Builds at most one copy per snapshot and removes them all on every way out."""

    def __init__(self, base: Path, owned_root: Path | None):
        """`owned_root` (the session's temporary directory, in the process that made it) is
        removed with the copies, so a signal that ends the process leaves nothing behind."""
        self.base = base
        self.owned_root = owned_root
        self._copies: dict[str, Path] = {}
        self._failures: dict[str, str] = {}
        self._handed_out: set[str] = set()
        self._pending: set[Path] = set()
        self._signals = True
        set_run_directory(base.parent)  # the plugin's own programs start in a directory of the run's own
        atexit.register(self.cleanup)
        leftovers.install()
        leftovers.add_cleanup(self.cleanup)

    def get(self, snapshot: Snapshot, fresh: bool = False) -> Path:
        """The snapshot's copy, complete and checked; a copy that could not be made is a
        SnapshotError for this call and every later one (never a half-made copy reused).

        With `fresh`, a copy handed out before is first reset to its commit, so one item's
        leftovers (a dirty file, a state directory a command wrote) never reach the next.
        """
        key = snapshot.key
        if key in self._failures:
            raise SnapshotError(self._failures[key])
        if key not in self._copies:
            try:
                self._copies[key] = self._make(snapshot)
            except (OSError, SnapshotError, subprocess.CalledProcessError) as error:
                self._failures[key] = f"the private copy of {key} could not be made: {_reason(error)}"
                raise SnapshotError(self._failures[key]) from None
        elif fresh and key in self._handed_out:
            try:
                _reset(self._copies[key])
            except (OSError, SnapshotError, subprocess.CalledProcessError) as error:
                raise SnapshotError(f"the private copy of {key} could not be reset to its commit: {_reason(error)}") from None
        self._handed_out.add(key)
        return self._copies[key]

    def _make(self, snapshot: Snapshot) -> Path:
        try:
            self.base.mkdir(exist_ok=True)  # never its parents: a session directory removed by a signal stays removed
        except FileNotFoundError:
            raise SnapshotError(f"the session's temporary directory {self.base.parent} is gone") from None
        with leftovers.held_signals():
            target = Path(tempfile.mkdtemp(prefix="copy-", dir=self.base))
            self._pending.add(target)  # removed by a signal that arrives mid-write
        try:
            snapshot.write_to(target)
            check_copy(target, snapshot.copy_paths())
            _commit_once(target)
            guard_repository(target)
        except BaseException:
            remove_tree(target, ignore_errors=True)
            raise
        finally:
            self._pending.discard(target)
        return target

    def release(self, key: str) -> None:
        self._handed_out.discard(key)
        path = self._copies.pop(key, None)
        if path is not None:
            forget_repository(path)
            remove_tree(path, ignore_errors=True)

    def cleanup(self) -> None:
        for key in list(self._copies):
            self.release(key)
        for target in list(self._pending):
            remove_tree(target, ignore_errors=True)
        if self.owned_root is not None:
            remove_tree(self.owned_root, ignore_errors=True)
            leftovers.forget(self.owned_root)

    def restore_signals(self) -> None:
        """No more clean-up on a signal (the handler goes when its last user releases it)."""
        if self._signals:
            self._signals = False
            leftovers.remove_cleanup(self.cleanup)
            leftovers.release()


def _reason(error: BaseException) -> str:
    if isinstance(error, subprocess.CalledProcessError):
        stderr = (error.stderr or b"").decode("utf-8", "replace").strip().splitlines()
        return f"git {error.cmd[0]} failed: {stderr[0] if stderr else error.returncode}"
    if isinstance(error, OSError):
        return f"{error.filename or ''}: {error.strerror or error}".lstrip(": ")
    return str(error)


def _commit_once(target: Path) -> None:
    """One commit so `git` works inside the copy; a fixed identity and date keep it reproducible.

    Every file is added, those the snapshot's own `.gitignore` names too (`add -f`), so the commit
    is the whole snapshot and a reset to it (`clean -x`) can never remove a snapshot file.
    """
    _git_steps(target, ["init", "-q"], ["add", "-A", "-f"], ["commit", "-q", "--allow-empty", "-m", "snapshot", "--no-gpg-sign"])


def _reset(target: Path) -> None:
    """Back to the commit: tracked files restored, everything untracked (ignored too) removed;
    `.git/` is left alone but for its configuration, so an arm's cache kept there (corvint's
    `.git/corvint/`) survives. A copy an arm made read-only gets its write permission back first."""
    try:
        _git_steps(target, ["reset", "-q", "--hard", "HEAD"], ["clean", "-q", "-ffdx"])
    except subprocess.CalledProcessError:
        if not allow_writes(target):
            raise
        _git_steps(target, ["reset", "-q", "--hard", "HEAD"], ["clean", "-q", "-ffdx"])


def _git_steps(target: Path, *steps: list[str]) -> None:
    """Run git commands in the copy in order, with the fixed identity; the first failure raises."""
    for args in steps:
        result = git_command(target, *args, extra_env=_COMMIT_ENV)  # registered with leftovers: a signal ends it before the copy goes
        if result.returncode != 0:
            raise subprocess.CalledProcessError(result.returncode, args, result.stdout, result.stderr)
