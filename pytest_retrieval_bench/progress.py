"""Progress of a snapshot whose set-up is long: files read, indexes made, elapsed, time left; and
of an embedding arm encoding a snapshot's chunks: texts encoded, rate, time left.

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
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Iterator

import pytest

from pytest_retrieval_bench.corpus.progress import SetupCounts
from pytest_retrieval_bench.words import counted, plural

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


def showing_encoding(config: pytest.Config, arm: str, key: str) -> ContextManager[Callable[[int, int], None] | None]:
    """Around one arm's encoding of a snapshot's chunks: yields `(encoded, to encode)`, or None."""
    display = config.stash.get(DISPLAY_KEY, None)
    return display.encoding(arm, key) if display is not None else nullcontext(None)


@dataclass(frozen=True)
class Wording:
    """What one kind of long work is called on its lines, and how its counts read."""

    heading: str  # "setting up gin@1a2b3c4"
    ending: str  # "set-up of gin@1a2b3c4"
    describe: Callable[[Any, float], str]
    final: Callable[[Any], str]


def describe(counts: SetupCounts, elapsed: float) -> str:
    """`1200/5000 files read, 0/2 indexes, 3.1 s, about 8 s left` (what is known so far)."""
    total = counts.files_total
    parts = [f"{counts.files_read}/{total} {plural('file', total)} read" if total is not None else f"{counted(counts.files_read, 'file')} read"]
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

    def showing(self, key: str) -> ContextManager[Callable[[SetupCounts], None]]:
        shown = short_key(key)
        return self._line(Wording(f"setting up {shown}", f"set-up of {shown}", describe, describe_final))

    def encoding(self, arm: str, key: str) -> ContextManager[Callable[[int, int], None]]:
        shown = f"{short_key(key)} for {arm}"
        return _counting(self._line(Wording(f"encoding {shown}", f"encoding of {shown}", describe_encoded, describe_encoded_final)))

    @contextmanager
    def _line(self, wording: Wording) -> Iterator[Callable[[Any], None]]:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        line = _SetupLine(self, wording, bool(getattr(reporter, "isatty", False)))
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

    def __init__(self, display: SetupDisplay, wording: Wording, tty: bool):
        self.display = display
        self.wording = wording
        self.tw = display.config.get_terminal_writer()
        self.raw = getattr(self.tw, "_file", None)  # on a terminal, written past the writer so its line width stays pytest's
        self.tty = tty and self.raw is not None
        self.started = display.clock()
        self.due = self.started + display.after
        self.counts: Any = None
        self.shown = 0  # terminal: characters of ours after pytest's cursor
        self.printed = False  # plain: whether a line was written
        self.resume = ""  # plain: pytest's current line, written again when the set-up ends

    def update(self, counts: Any) -> None:
        now = self.display.clock()
        if now < self.due:
            return
        self.due = now + (TTY_EVERY if self.tty else PLAIN_EVERY)
        self.counts = counts
        text = self.wording.describe(counts, now - self.started)
        with self.display.terminal():
            if self.tty:
                self._in_place(f"[{text}]")
            else:
                self._plain(f"retrieval-bench: {self.wording.heading}: {text}")

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
                self.tw.line(f"retrieval-bench: {self.wording.ending} {how} after {elapsed:.1f} s: {self.wording.final(self.counts)}")
                self.tw.write(self.resume, flush=True)


def describe_final(counts: SetupCounts) -> str:
    text = f"{counted(counts.files_read, 'file')} read"
    return text + (f", {counts.indexes_done}/{counts.indexes_total} indexes" if counts.indexes_total else "")


@dataclass(frozen=True)
class Encoded:
    """An encoding's counts: distinct texts encoded so far, of those to encode."""

    done: int
    total: int


@contextmanager
def _counting(line: ContextManager[Callable[[Any], None]]) -> Iterator[Callable[[int, int], None]]:
    """`(encoded, to encode)` calls as `Encoded` counts for the line."""
    with line as update:
        yield lambda done, total: update(Encoded(done, total))


def describe_encoded(counts: Encoded, elapsed: float) -> str:
    """`4096/10142 chunk texts encoded, 410/s, 10.0 s, about 15 s left` (the rate over the line's elapsed time)."""
    parts = [f"{counts.done}/{counts.total} chunk texts encoded"]
    rate = counts.done / elapsed if elapsed > 0 else None
    if rate:
        parts.append(f"{rate:.0f}/s")
    parts.append(f"{elapsed:.1f} s")
    if rate and counts.done < counts.total:
        parts.append(f"about {(counts.total - counts.done) / rate:.0f} s left")
    return ", ".join(parts)


def describe_encoded_final(counts: Encoded) -> str:
    return f"{counts.done}/{counts.total} chunk texts encoded"
