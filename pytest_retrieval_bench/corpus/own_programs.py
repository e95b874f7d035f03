"""Where and how the plugin runs programs on its own behalf (git, version probes).

Such a program must not be steered by, nor write into, anything an input or an arm controls. The
caller's working directory may be the snapshot being benchmarked, so every one of them runs in a
neutral directory of the run's own (inside the session's temporary directory once a session has
made one, else in a directory this process made and removes at exit).

git also reads configuration that an arm can write into its private copy (`core.fsmonitor`,
hooks, filter drivers, `core.worktree`). Every git command of the plugin runs through
`git_command`, which drops the caller's `GIT_*` variables, reads no system or user configuration
(`HOME` and `XDG_CONFIG_HOME` are the neutral directory), turns fsmonitor, hooks, automatic gc,
submodule recursion and every transport off on the command line (which outranks a repository's
own configuration) and takes no optional lock, so reading an input repository never rewrites its
index. The repository named is trusted whoever owns it (`safe.directory`, which the user's own
configuration could grant before), as only these commands run in it. In a guarded repository (a
private copy) it first puts back the `.git/config` the plugin wrote, so no setting an arm made
there (a filter driver, `core.worktree`, an include) applies.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Mapping

from pytest_retrieval_bench import leftovers
from pytest_retrieval_bench.errors import SnapshotError
from pytest_retrieval_bench.files.remove_tree import allow_writes, remove_tree

GIT_OVERRIDES = (
    "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false",
    "-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "submodule.recurse=false",
    "-c", "protocol.allow=never", "-c", "core.pager=cat", "-c", "credential.helper=",
)
"""`-c` settings every git of the plugin's gets: nothing a repository's configuration names runs."""

_NEUTRAL_NAME = "neutral"
_guarded: dict[str, bytes] = {}  # private copy -> its .git/config as the plugin wrote it
_run_directory: Path | None = None
_fallback: Path | None = None


def set_run_directory(directory: Path) -> None:
    """The session's temporary directory: the neutral directory is made inside it, so it goes
    wherever that directory goes (removed at session end, on SIGINT and SIGTERM)."""
    global _run_directory
    _run_directory = Path(directory)


def neutral_directory() -> Path:
    """An empty directory of the run's own to start the plugin's own programs in; never an input."""
    global _fallback
    if _run_directory is not None and _run_directory.is_dir():
        neutral = _run_directory / _NEUTRAL_NAME
        try:
            neutral.mkdir(exist_ok=True)  # never its parents: a removed session directory stays removed
            return neutral
        except OSError:
            pass
    if _fallback is None or not _fallback.is_dir():
        with leftovers.held_signals():  # made and registered as one step: a signal removes it too
            _fallback = Path(tempfile.mkdtemp(prefix="pytest-retrieval-bench-neutral-"))
            leftovers.track(_fallback)
        atexit.register(remove_tree, _fallback, True)
    return _fallback


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without its `GIT_*` variables (a `GIT_DIR` would redirect every
    command), no system or user configuration, no prompt, no optional locks, C messages."""
    neutral = str(neutral_directory())
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": neutral, "XDG_CONFIG_HOME": neutral,
                "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_LAZY_FETCH": "1", "LC_ALL": "C"})
    env.update(extra or {})
    return env


def git_command(repo: Path, *args: str, input: bytes | None = None, extra_env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """`git -C repo ARGS` with the overrides, the fixed environment and the neutral directory as
    its working directory; the result is returned whatever the exit status (the caller decides).
    A guarded repository whose git directory an arm replaced raises SnapshotError."""
    config = _guarded.get(os.fspath(repo))
    if config is not None:
        restore_git_config(repo, config)
    trusted = ("-c", f"safe.directory={Path(repo).resolve()}")  # named by the user, whoever owns it
    # made absolute here, against the caller's working directory: git runs in the neutral one
    where = os.path.abspath(repo)
    # registered while it runs: a SIGTERM ends it before the directory it works in is removed
    return leftovers.run_child(["git", *GIT_OVERRIDES, *trusted, "-C", where, *args], env=git_environment(extra_env),
                               cwd=neutral_directory(), input=input)


def guard_repository(repo: Path) -> None:
    """Record `repo`'s configuration now (the plugin just wrote it); it is put back before each
    later git command of the plugin's in `repo`."""
    _guarded[os.fspath(repo)] = (Path(repo) / ".git" / "config").read_bytes()


def forget_repository(repo: Path) -> None:
    _guarded.pop(os.fspath(repo), None)


def restore_git_config(repo: Path, config: bytes) -> None:
    """Put back `repo/.git/config` (a link or directory an arm put in its place is removed, never
    followed) and drop a `commondir`, which would make git read another repository's."""
    git_dir = Path(repo) / ".git"
    if git_dir.is_symlink() or not git_dir.is_dir():
        raise SnapshotError(f"{git_dir} is no longer the copy's git directory (an arm replaced it)")
    allow_writes(git_dir, recursive=False)
    for name in ("config", "commondir"):
        remove_tree(git_dir / name)
    fd = os.open(git_dir / "config", os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(config)
