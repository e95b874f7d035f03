"""Nothing a run makes is left behind, whatever ends it: in-flight temporary paths and children.

A run's own files live in its session directory, which is registered here from the moment it is
made. A temporary file written for an atomic replace (a report, a cache entry) must sit beside its
target, since a rename does not cross file systems, and a release is unpacked into a staging
directory beside its final place: each is registered here from its creation to its rename. A
child that writes into a registered directory (git in a private copy, a command arm's program)
is registered too.

On SIGTERM the handler installed by `install` ends and waits for every registered child first,
so nothing writes into a directory while it is removed, then removes every registered path and
runs the registered clean-ups, and finally ends the process by the signal (or hands it to the
handler that was there before). SIGINT raises KeyboardInterrupt (the handler that was there
before, called by `install`'s), and every registration is undone by a `finally` on the way out;
what an exit skips is removed at exit. Creating a temporary and registering it, or starting a
child and registering it, happen with SIGTERM and SIGINT held back (`held_signals`), so no signal
falls between the two. They are held back in Python, not by the signal mask: the kernel gives a
process-directed signal to any thread that does not block it (numpy's BLAS threads), Python runs
the handler in the main thread at its next bytecode wherever that is, and a child would inherit a
blocked mask.

Test hook: `RETRIEVAL_BENCH_TEST_PAUSE=PATTERN` with `RETRIEVAL_BENCH_TEST_PAUSE_MARKER=FILE` makes
the first `pause_point(stage, target)` whose `stage:name-of-target` matches the shell pattern
write the in-flight temporary's path to FILE and sleep, so a test can send a signal at exactly
that moment. The stages are `atomic-write` (report/build.py), `cache-entry` (index/cache.py) and
`unpack` (corpus/release.py). Nothing else reads these variables.
"""

from __future__ import annotations

import atexit
import fnmatch
import os
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, Callable, Iterator, Mapping, Sequence

from pytest_retrieval_bench.files.remove_tree import remove_tree

SIGNALS = (signal.SIGTERM,)  # removes everything, then ends the process
_HELD = (signal.SIGTERM, signal.SIGINT)  # handled by `install`'s handler, and held back by `held_signals`
PAUSE_VARIABLE, PAUSE_MARKER_VARIABLE = "RETRIEVAL_BENCH_TEST_PAUSE", "RETRIEVAL_BENCH_TEST_PAUSE_MARKER"
_PAUSE_SECONDS = 120.0

_paths: dict[str, None] = {}  # insertion-ordered: removed newest first
_children: dict[int, subprocess.Popen[Any]] = {}
_enders: list[Callable[[], object]] = []  # end processes the registry cannot name (a command arm's descendants)
_cleanups: list[Callable[[], object]] = []
_previous: dict[int, Any] = {}
_installs = 0
_holding = 0  # depth of `held_signals` blocks in the main thread
_deferred: list[int] = []  # signals that came during one, handled at its end


# -- registering --------------------------------------------------------------------------------
@contextmanager
def held_signals() -> Iterator[None]:
    """SIGTERM and SIGINT wait until the block ends (a creation and its registration are one step).

    `install`'s handler puts aside a signal that comes during the block, whichever thread the kernel
    gave it to, and the block's end raises it again in the main thread (see the module docstring).
    Only the main thread holds: Python runs handlers nowhere else."""
    global _holding
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _holding += 1
    try:
        yield
    finally:
        _holding -= 1
        if not _holding:
            _raise_deferred()


def _raise_deferred() -> None:
    """Deliver the signals put aside, SIGTERM first, to whatever handles them now."""
    while _deferred:
        signum = signal.SIGTERM if signal.SIGTERM in _deferred else _deferred[0]
        _deferred.remove(signum)
        signal.raise_signal(signum)  # to this thread, and Python runs the handler before returning


def track(path: Path | str) -> None:
    """Remove `path` (a file or a directory) on a signal or at exit, until `forget`."""
    _paths[os.fspath(path)] = None


def forget(path: Path | str) -> None:
    _paths.pop(os.fspath(path), None)


def add_ender(ender: Callable[[], object]) -> None:
    if ender not in _enders:
        _enders.append(ender)


def add_cleanup(cleanup: Callable[[], object]) -> None:
    if cleanup not in _cleanups:
        _cleanups.append(cleanup)


def remove_cleanup(cleanup: Callable[[], object]) -> None:
    if cleanup in _cleanups:
        _cleanups.remove(cleanup)


def start_child(argv: Sequence[str], **options: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen`, registered until `child_done`: a signal ends and waits for it first."""
    with held_signals():
        process = subprocess.Popen(list(argv), **options)
        _children[process.pid] = process
    return process


def child_done(process: subprocess.Popen[Any]) -> None:
    _children.pop(process.pid, None)


def run_child(argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path | str | None = None,
              input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """`subprocess.run(argv, capture_output=True, input=input)` with the child registered while it runs."""
    process = start_child(argv, env=env, cwd=cwd, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        try:
            stdout, stderr = process.communicate(input)
        except BaseException:  # Ctrl-C: the child ends before anything is removed
            process.kill()
            process.wait()
            raise
    finally:
        child_done(process)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


# -- removing -----------------------------------------------------------------------------------
def end_children() -> None:
    """Kill every registered child and reap it (plain `waitpid`: the signal may have interrupted a
    `Popen.wait` that holds its lock), then whatever the enders end."""
    for ender in list(_enders):
        try:
            ender()
        except Exception:
            pass
    for pid in list(_children):
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError, PermissionError, InterruptedError):
            pass
        _children.pop(pid, None)


def remove_all() -> None:
    """End the children, remove every registered path, run the clean-ups (at exit, and on a signal)."""
    end_children()
    for path in reversed(list(_paths)):
        remove_tree(path, ignore_errors=True)
        forget(path)
    for cleanup in list(_cleanups):
        try:
            cleanup()
        except Exception:
            pass


def _forget_all() -> None:
    """In a forked child: the parent's registrations are the parent's to remove."""
    _paths.clear()
    _children.clear()
    _cleanups.clear()


atexit.register(remove_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_all)


# -- signals ------------------------------------------------------------------------------------
def install() -> None:
    """Handle SIGTERM, and SIGINT through the Python handler already there (counted: the last
    `release` puts the previous handlers back)."""
    global _installs
    if threading.current_thread() is not threading.main_thread():
        return
    _installs += 1
    if _installs > 1:
        return
    for signum in _HELD:
        if signum not in SIGNALS and not callable(signal.getsignal(signum)):
            continue  # ignored, or left to the system: nothing to raise KeyboardInterrupt
        try:
            _previous[signum] = signal.signal(signum, _on_signal)
        except (ValueError, OSError):
            pass


def release() -> None:
    global _installs
    if _installs == 0:
        return
    _installs -= 1
    if _installs == 0:
        _restore()


def _restore() -> None:
    for signum, handler in _previous.items():
        try:
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        except (ValueError, TypeError, OSError):
            pass
    _previous.clear()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    global _installs
    if _holding:  # something is being made and registered: handled at the end of `held_signals`
        if signum not in _deferred:
            _deferred.append(signum)
        return
    if signum not in SIGNALS:  # SIGINT: KeyboardInterrupt, as before `install`
        _previous.get(signum, signal.default_int_handler)(signum, frame)
        return
    with held_signals():  # a second signal waits until everything is removed
        remove_all()
        _deferred.clear()  # and is dropped: the process ends by this one
    previous = _previous.get(signum)
    _installs = 0
    _restore()
    if callable(previous):
        previous(signum, frame)
        return
    die_by(signum)


def die_by(signum: int) -> None:
    """End this process by `signum`'s default action, so its parent sees the usual status."""
    signal.signal(signum, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
    os.kill(os.getpid(), signum)
    time.sleep(1.0)  # the signal is delivered before kill returns, or at latest now
    os._exit(128 + signum)


# -- the test hook ------------------------------------------------------------------------------
def pause_point(stage: str, target: Path | str, temporary: Path | str) -> None:
    """The test hook of the module docstring: a no-op unless the variables ask for this stage."""
    pattern = os.environ.get(PAUSE_VARIABLE)
    marker = os.environ.get(PAUSE_MARKER_VARIABLE)
    if not pattern or not marker or not fnmatch.fnmatchcase(f"{stage}:{Path(target).name}", pattern):
        return
    part = f"{marker}.part"
    Path(part).write_text(os.fspath(temporary))
    os.replace(part, marker)
    deadline = time.monotonic() + _PAUSE_SECONDS
    while time.monotonic() < deadline:
        time.sleep(0.05)
