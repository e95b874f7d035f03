"""Ending every process one command-arm call started, including those that left its session.

A program is started in a session of its own, so killing its process group ends it and the
children that stayed in the group. A descendant that calls `setsid` (a daemon, or a helper that
detaches) leaves that group and is no longer a child of the program once the program exits, so
it cannot be found through the group or the parent links. Every call therefore gets an
environment variable of its own (`RETRIEVAL_BENCH_CALL`), which descendants inherit; when the call
ends, every process that still carries it is killed (the technique build servers use for the same
problem). On Linux that reads `/proc/PID/environ` of the user's processes; a descendant that
clears its environment and leaves the session cannot be found, and elsewhere only the group is.
"""

from __future__ import annotations

import atexit
import itertools
import os
import secrets
import signal
from pathlib import Path

from pytest_retrieval_bench import leftovers

MARKER = "RETRIEVAL_BENCH_CALL"
_PROC = Path("/proc")
_SESSION = f"{os.getpid()}-{secrets.token_hex(6)}"  # this process's calls: `<session>:<n>`
_numbers = itertools.count(1)


def new_call_marker() -> str:
    """A value of MARKER unique to one call of this process."""
    return f"{_SESSION}:{next(_numbers)}"


def marked_processes(value: str, prefix: bool = False) -> list[int]:
    """Pids (not this process) whose environment holds MARKER=`value` (or a value starting with it)."""
    if not _PROC.is_dir():
        return []
    wanted = f"{MARKER}={value}".encode()
    found: list[int] = []
    own = os.getpid()
    for entry in os.scandir(_PROC):
        if not entry.name.isdigit() or int(entry.name) == own:
            continue
        try:
            with open(f"{entry.path}/environ", "rb") as handle:
                environment = handle.read()
        except OSError:  # gone, or another user's
            continue
        variables = environment.split(b"\0")
        if any(variable.startswith(wanted) for variable in variables) if prefix else wanted in variables:
            found.append(int(entry.name))
    return found


def kill_group(pid: int) -> None:
    """Kill the process group a program leads (its own session): never anything else."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_marked(value: str, prefix: bool = False) -> int:
    """Kill every process carrying one call's marker (or, with `prefix`, any of a session's); how many."""
    killed = 0
    for _ in range(3):  # a process may fork while the first pass kills its parent
        pids = marked_processes(value, prefix)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
    return killed


def kill_session_leftovers() -> int:
    """At exit: whatever any call of this process left running (a call interrupted by Ctrl-C)."""
    return kill_marked(f"{_SESSION}:", prefix=True)


atexit.register(kill_session_leftovers)
leftovers.add_ender(kill_session_leftovers)  # on SIGTERM, before the copies the calls ran in are removed
