"""Progress of a snapshot whose set-up is long: files read, indexes made, elapsed, time left.

Nothing for the first `bench_progress_after` seconds of a set-up (2 by default), so a quick one
prints nothing. On a terminal: one line of text after what pytest has on its current line,
rewritten in place (at most 5 times a second) and erased when the set-up ends, the cursor back
where pytest left it, so the dots and the percentage that follow land where they would have.
Elsewhere (a CI log): a plain line at most every 5 s and one when the set-up ends, then pytest's
current line again, so its dots go on after it. Nothing with `-q`, and nothing on xdist
workers: they have no terminal (their output reaches the controller only on test reports).
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, ContextManager, Iterator

import pytest

from pytest_retrieval_bench.corpus.progress import SetupCounts

AFTER_INI = "bench_progress_after"
TTY_EVERY = 0.2
PLAIN_EVERY = 5.0
#: the display of this process, when it shows progress (set at configure)
DISPLAY_KEY = pytest.StashKey["SetupDisplay"]()


def add_ini(parser: pytest.Parser) -> None:
    parser.addini(AFTER_INI, "Seconds a snapshot's set-up runs before its progress is shown (default 2; 0: from the start).", default="2")


def progress_after(config: pytest.Config) -> float:
    raw = str(config.getini(AFTER_INI)).strip()
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not value >= 0 or math.isinf(value):
        raise pytest.UsageError(f"{AFTER_INI} = {raw!r}: expected a number of seconds, 0 or more")
    return value


def install(config: pytest.Config) -> None:
    """At configure, in a process that sets snapshots up and prints (not a worker, not `-q`)."""
    after = progress_after(config)
    if config.get_verbosity() >= 0 and config.pluginmanager.get_plugin("terminalreporter") is not None:
        config.stash[DISPLAY_KEY] = SetupDisplay(config, after)


def showing_setup(config: pytest.Config, key: str) -> ContextManager[Callable[[SetupCounts], None] | None]:
    """Around one snapshot's set-up: yields the callback for its counts, or None when nothing shows."""
    display = config.stash.get(DISPLAY_KEY, None)
    return display.showing(key) if display is not None else nullcontext(None)


def describe(counts: SetupCounts, elapsed: float) -> str:
    """`1200/5000 files read, 0/2 indexes, 3.1 s, about 8 s left` (what is known so far)."""
    total = counts.files_total
    parts = [f"{counts.files_read}/{total} files read" if total is not None else f"{counts.files_read} files read"]
    if counts.indexes_total:
        parts.append(f"{counts.indexes_done}/{counts.indexes_total} indexes")
    parts.append(f"{elapsed:.1f} s")
    fraction = counts.fraction()
    if fraction is not None and 0 < fraction < 1:
        parts.append(f"about {elapsed * (1 - fraction) / fraction:.0f} s left")
    return ", ".join(parts)


def _now() -> float:
    return time.monotonic()


def short_key(key: str) -> str:
    repo, _, commit = key.rpartition("@")
    return f"{repo}@{commit[:7]}"


class SetupDisplay:
    """Writes through pytest's terminal writer, with capturing suspended (set-up runs captured)."""

    def __init__(self, config: pytest.Config, after: float, clock: Callable[[], float] | None = None):
        self.config = config
        self.after = after
        self.clock = clock if clock is not None else _now

    @contextmanager
    def showing(self, key: str) -> Iterator[Callable[[SetupCounts], None]]:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        line = _SetupLine(self, key, bool(getattr(reporter, "isatty", False)))
        try:
            yield line.update
        except BaseException:
            line.end("stopped")
            raise
        line.end("done")

    def terminal(self) -> ContextManager[Any]:
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        return capture.global_and_fixture_disabled() if capture is not None else nullcontext()


class _SetupLine:
    """One set-up's output: silent until `after`, then in place (terminal) or plain lines."""

    def __init__(self, display: SetupDisplay, key: str, tty: bool):
        self.display = display
        self.key = short_key(key)
        self.tw = display.config.get_terminal_writer()
        self.raw = getattr(self.tw, "_file", None)  # on a terminal, written past the writer so its line width stays pytest's
        self.tty = tty and self.raw is not None
        self.started = display.clock()
        self.due = self.started + display.after
        self.counts: SetupCounts | None = None
        self.shown = 0  # terminal: characters of ours after pytest's cursor
        self.printed = False  # plain: whether a line was written
        self.resume = ""  # plain: pytest's current line, written again when the set-up ends

    def update(self, counts: SetupCounts) -> None:
        now = self.display.clock()
        if now < self.due:
            return
        self.due = now + (TTY_EVERY if self.tty else PLAIN_EVERY)
        self.counts = counts
        text = describe(counts, now - self.started)
        with self.display.terminal():
            if self.tty:
                self._in_place(f"[{text}]")
            else:
                self._plain(f"retrieval-bench: setting up {self.key}: {text}")

    def _in_place(self, text: str) -> None:
        room = self.tw.fullwidth - self.tw.width_of_current_line - 1
        if room < 20:
            return
        text = text[:room].ljust(self.shown)
        self.raw.write("\b" * self.shown + text)
        self.raw.flush()
        self.shown = len(text)

    def _plain(self, text: str) -> None:
        if not self.printed:
            self.resume = getattr(self.tw, "_current_line", "")
            if self.tw.width_of_current_line:
                self.tw.line()
            self.printed = True
        self.tw.line(text)
        self.tw.flush()

    def end(self, how: str) -> None:
        if self.tty and self.shown:
            with self.display.terminal():
                self.raw.write("\b" * self.shown + " " * self.shown + "\b" * self.shown)
                self.raw.flush()
        elif self.printed and self.counts is not None:
            elapsed = self.display.clock() - self.started
            with self.display.terminal():
                self.tw.line(f"retrieval-bench: set-up of {self.key} {how} after {elapsed:.1f} s: {describe_final(self.counts)}")
                self.tw.write(self.resume, flush=True)


def describe_final(counts: SetupCounts) -> str:
    text = f"{counts.files_read} files read"
    return text + (f", {counts.indexes_done}/{counts.indexes_total} indexes" if counts.indexes_total else "")
