"""One call of an external program for a command arm: started in its own session and marked, its
stdout and stderr read on threads up to their limits, ended when it exits, at its timeout or past
its stdout limit, and with it every process that still carries the call's marker.

The call ends when the program exits, even while a child it left behind keeps stdout open: the
process group and every marked process are killed then, and what the pipes still hold is read for
at most `_DRAIN_GRACE` seconds, so nothing outlives the call or holds its answer back.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Mapping, Sequence

from pytest_retrieval_bench import leftovers
from pytest_retrieval_bench.arms.capture import MAX_STDERR_BYTES, MAX_STDOUT_BYTES
from pytest_retrieval_bench.arms.processes import MARKER, kill_group, kill_marked, new_call_marker

STDERR_LINES = 5
_DRAIN_GRACE = 2.0  # seconds to finish reading the pipes of a program that has exited


@dataclass
class Invocation:
    """What one run of a program produced (bytes as read, bounded)."""

    argv: list[str]
    returncode: int | None = None
    stdout: bytes | None = None
    stdout_total: int = 0
    stderr: bytes | None = None
    stderr_total: int = 0
    timed_out: bool = False
    stdout_overflow: bool = False  # reading stopped past the limit and the call was ended
    stdout_limit: int = MAX_STDOUT_BYTES
    start_error: str | None = None
    timeout: float = 0.0

    def stderr_lines(self) -> list[str]:
        text = (self.stderr or b"").decode("utf-8", errors="replace")
        return [line.rstrip() for line in text.splitlines() if line.strip()][:STDERR_LINES]


class PipeReader(threading.Thread):
    """Drains one pipe, keeping at most `limit` bytes (so the child never blocks).

    With `stop_at_limit`, reading ends at the first byte past the limit and `on_overflow` is
    called (it ends the call): an endless stdout is an error at once, not a timeout later. Otherwise
    the rest is counted and dropped. Once `stop` is called, nothing more is kept."""

    def __init__(self, stream: IO[bytes], limit: int, stop_at_limit: bool = False, on_overflow: Any = None):
        super().__init__(daemon=True)
        self.stream, self.limit, self.stop_at_limit, self.on_overflow = stream, limit, stop_at_limit, on_overflow
        self.data = bytearray()
        self.total = 0
        self.overflowed = False
        self._lock = threading.Lock()
        self._stopped = False

    def run(self) -> None:
        with self.stream:
            while chunk := self.stream.read1(65536):  # type: ignore[attr-defined]
                with self._lock:
                    if self._stopped:
                        return
                    self.total += len(chunk)
                    room = self.limit - len(self.data)
                    if room > 0:
                        self.data += chunk[:room]
                    over = self.stop_at_limit and len(chunk) > room
                if over:
                    self.overflowed = True
                    if self.on_overflow is not None:
                        self.on_overflow()
                    return

    def stop(self) -> tuple[bytes, int]:
        """What was read so far; later reads are dropped (a holder of the pipe nobody could end)."""
        with self._lock:
            self._stopped = True
            return bytes(self.data), self.total


def run_program(argv: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float,
                stdout_limit: int = MAX_STDOUT_BYTES, stderr_limit: int = MAX_STDERR_BYTES) -> Invocation:
    """Run `argv` (no shell) in `cwd`; a start failure, a timeout or a stdout past its limit is
    recorded, not raised.

    The call ends when the program exits, when its timeout passes or when its stdout passes the
    limit; then nothing it started is left running: the program's process group and every process
    carrying the call's marker (see `processes`) are killed, and what the pipes still hold is read
    for at most `_DRAIN_GRACE` seconds. A descendant that kept stdout open therefore cannot hold an
    answer back, nor turn it into a timeout.
    """
    invocation = Invocation(argv=list(argv), timeout=timeout, stdout_limit=stdout_limit)
    marker = new_call_marker()
    try:
        process = leftovers.start_child(argv, cwd=cwd, env={**env, MARKER: marker}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, start_new_session=os.name == "posix")
    except FileNotFoundError:
        invocation.start_error = f"executable {argv[0]!r} not found"
        return invocation
    except OSError as error:
        invocation.start_error = f"cannot run {argv[0]!r}: {error.strerror or error}"
        return invocation
    assert process.stdout is not None and process.stderr is not None
    stdout = PipeReader(process.stdout, stdout_limit, stop_at_limit=True, on_overflow=lambda: end_call(process, marker))
    readers = [stdout, PipeReader(process.stderr, stderr_limit)]
    for reader in readers:
        reader.start()
    try:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            invocation.timed_out = not stdout.overflowed
        end_call(process, marker)  # the call is over: what it started ends with it
        process.wait()
        for reader in readers:  # what the pipes hold, briefly: a holder nobody could end cannot stall the call
            reader.join(_DRAIN_GRACE)
    finally:  # also on Ctrl-C: what the call started ends with it
        end_call(process, marker)
        leftovers.child_done(process)
    invocation.returncode = process.returncode
    invocation.stdout_overflow = stdout.overflowed
    invocation.stdout, invocation.stdout_total = stdout.stop()
    invocation.stderr, invocation.stderr_total = readers[1].stop()
    return invocation


def end_call(process: subprocess.Popen[bytes], marker: str) -> None:
    if os.name == "posix":
        kill_group(process.pid)
    elif process.poll() is None:
        process.kill()
    kill_marked(marker)


_PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")  # {{name}}: a literal {name}


def substitute(template: str, values: Mapping[str, str]) -> str:
    """One pass, so a query holding `{k}` is passed on verbatim; `{{name}}` gives a literal `{name}`."""
    return _PLACEHOLDER.sub(lambda match: f"{{{match[1]}}}" if match[1] else values.get(match[2], match[0]), template)


def template_placeholders(template: str) -> set[str]:
    return {match[2] for match in _PLACEHOLDER.finditer(template) if match[2]}


def problem_of(invocation: Invocation) -> str | None:
    """Why a run is a failure (no start, stdout over its limit, timeout, non-zero exit), or None."""
    if invocation.start_error:
        return invocation.start_error
    if invocation.stdout_overflow or invocation.stdout_total > len(invocation.stdout or b""):
        return f"stdout exceeded {_size(invocation.stdout_limit)} (the limit): reading stopped and the program was ended"
    if invocation.timed_out:
        return f"timed out after {invocation.timeout:g} s"
    if invocation.returncode:
        code = invocation.returncode
        return f"killed by signal {-code}" if code < 0 else f"exited with status {code}"
    return None


def _size(count: int) -> str:
    """8 MiB, 64 KiB, or a byte count."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size and count % size == 0:
            return f"{count // size} {unit}"
    return f"{count:,} bytes"
