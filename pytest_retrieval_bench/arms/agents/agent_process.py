"""One command agent's program for one item: JSON lines in, JSON lines out, under a time limit.

The program is started as a command arm's is (its own session, the call's marker in its
environment, registered with `leftovers` so a SIGTERM or Ctrl-C ends it), but talked to: the
run writes lines to its stdin and reads its stdout line by line. Nothing it does can stall the
run: a watchdog ends it at the item's time limit (a blocked write or read then returns), a line
past `MAX_LINE_BYTES` ends it at once, and at most `_QUEUED_LINES` lines wait to be read (a
program that floods stdout blocks on its own pipe until it is ended).
"""

from __future__ import annotations

import os
import queue
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Mapping, Sequence

import orjson

from pytest_retrieval_bench import leftovers
from pytest_retrieval_bench.arms.capture import MAX_STDERR_BYTES
from pytest_retrieval_bench.arms.processes import MARKER, new_call_marker
from pytest_retrieval_bench.arms.program_call import PipeReader, end_call

MAX_LINE_BYTES = 1 << 20  # one action: far above any honest action line
_QUEUED_LINES = 64
_EXIT_GRACE = 2.0  # seconds a program has to exit once its episode is over
LINE, EOF, OVERFLOW = "line", "eof", "overflow"


@dataclass
class Received:
    """What one read of the program's stdout gave: a line, the end of its output, or a line too long."""

    kind: str
    text: str = ""


class _LineReader(threading.Thread):
    """Splits stdout into lines for the run; a line past the limit ends the program."""

    def __init__(self, stream: IO[bytes], on_overflow: Any):
        super().__init__(daemon=True)
        self.stream, self.on_overflow = stream, on_overflow
        self.lines: queue.Queue[Received] = queue.Queue(_QUEUED_LINES)
        self.stopped = threading.Event()
        self.overflowed = False

    def _put(self, item: Received) -> bool:
        while not self.stopped.is_set():
            try:
                self.lines.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run(self) -> None:
        pending = bytearray()
        with self.stream:
            while chunk := self.stream.read1(65536):  # type: ignore[attr-defined]
                pending += chunk
                *complete, rest = pending.split(b"\n")
                pending = bytearray(rest)
                for line in complete:
                    if len(line) > MAX_LINE_BYTES:
                        return self._overflow()
                    if not self._put(Received(LINE, line.decode("utf-8", errors="replace"))):
                        return None
                if len(pending) > MAX_LINE_BYTES:
                    return self._overflow()
        if pending:
            self._put(Received(LINE, pending.decode("utf-8", errors="replace")))
        self._put(Received(EOF))

    def _overflow(self) -> None:
        self.overflowed = True
        self.on_overflow()
        self._put(Received(OVERFLOW))


class AgentProcess:
    """The program of one agent item: `send` a JSON value as a line, `receive` a line, `close`."""

    def __init__(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], time_limit: float):
        self.argv, self.cwd, self.env, self.time_limit = list(argv), cwd, env, time_limit
        self.marker = new_call_marker()
        self.timed_out = False
        self.process: subprocess.Popen[bytes] | None = None
        self._watchdog: threading.Timer | None = None
        self._stdout: _LineReader | None = None
        self._stderr: PipeReader | None = None

    def start(self) -> str | None:
        """Start the program; why it could not start, or None."""
        try:
            self.process = leftovers.start_child(self.argv, cwd=self.cwd, env={**self.env, MARKER: self.marker}, stdin=subprocess.PIPE,
                                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=os.name == "posix")
        except FileNotFoundError:
            return f"executable {self.argv[0]!r} not found"
        except OSError as error:
            return f"cannot run {self.argv[0]!r}: {error.strerror or error}"
        assert self.process.stdout is not None and self.process.stderr is not None
        self._stdout = _LineReader(self.process.stdout, self._end)
        self._stderr = PipeReader(self.process.stderr, MAX_STDERR_BYTES)
        self._stdout.start()
        self._stderr.start()
        self._watchdog = threading.Timer(self.time_limit, self._expire)
        self._watchdog.daemon = True
        self._watchdog.start()
        return None

    def _expire(self) -> None:
        self.timed_out = True
        self._end()

    def _end(self) -> None:
        if self.process is not None:
            end_call(self.process, self.marker)

    def send(self, value: Any) -> bool:
        """Write one JSON line; False when the program no longer reads (it exited or was ended)."""
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(orjson.dumps(value) + b"\n")
            self.process.stdin.flush()
            return True
        except (BrokenPipeError, ValueError, OSError):
            return False

    def receive(self) -> Received:
        """The next line of stdout, or the end of it (the program exited, or was ended)."""
        assert self._stdout is not None
        while True:
            try:
                return self._stdout.lines.get(timeout=0.5)
            except queue.Empty:
                if self.process is not None and self.process.poll() is not None and not self._stdout.is_alive() and self._stdout.lines.empty():
                    return Received(EOF)

    def close(self) -> tuple[int | None, bytes]:
        """End the episode: stdin closed, a short grace to exit, then the program and everything it
        started ended. Its exit status (None: it had to be ended) and the first of its stderr."""
        process = self.process
        if process is None:
            return None, b""
        try:
            try:
                if process.stdin is not None:
                    process.stdin.close()
            except OSError:
                pass
            try:
                process.wait(timeout=_EXIT_GRACE)
                status: int | None = process.returncode
            except subprocess.TimeoutExpired:
                status = None
        finally:  # also on Ctrl-C: what the item started ends with it
            if self._watchdog is not None:
                self._watchdog.cancel()
            self._end()
            process.wait()
            leftovers.child_done(process)
            assert self._stdout is not None and self._stderr is not None
            self._stdout.stopped.set()
            self._stdout.join(_EXIT_GRACE)
            self._stderr.join(_EXIT_GRACE)
        stderr, _ = self._stderr.stop()
        return (None if self.timed_out else status), stderr
