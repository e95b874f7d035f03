"""ContextBench's context representations, as its evaluator builds them: predicted paths resolved
against the checkout, lines mapped to bytes, inclusive intervals merged when they touch, and the
gold at file, byte-span and line granularity.

Everything takes a `Checkout` (is a path a file of the repository, and its bytes), so a snapshot
held in memory and a directory on disk score alike. Rules are `contextbench/evaluate.py`,
`core/fileio.py`, `core/intervals.py` and `parsers/gold.py` unless a docstring says otherwise.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Protocol, Sequence

Interval = tuple[int, int]  # inclusive at both ends
IntervalsByFile = dict[str, list[Interval]]


class Checkout(Protocol):
    """What scoring reads of the task's repository at its base commit."""

    def is_file(self, path: str) -> bool: ...

    def read_bytes(self, path: str) -> bytes | None: ...


class TextCheckout:
    """A checkout held as text (a snapshot's files): a file's bytes are its text in UTF-8, so byte
    offsets are exact for UTF-8 files; a path with no text (a binary or over-size file) is a file
    without bytes."""

    def __init__(self, texts: Mapping[str, str], paths: Iterable[str] = ()):
        self.texts = texts
        self.paths = frozenset(paths)

    def is_file(self, path: str) -> bool:
        return path in self.texts or path in self.paths

    def read_bytes(self, path: str) -> bytes | None:
        text = self.texts.get(path)
        return None if text is None else text.encode("utf-8", errors="surrogatepass")


@dataclass(frozen=True)
class Span:
    """A predicted line range on a file, as recorded (`start`, `end` may be reversed or non-positive)."""

    path: str
    start: int
    end: int


@dataclass
class ContextStep:
    """One step of a trajectory (or the final context): files, line spans, symbol names per file."""

    files: list[str] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    symbols: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class GoldSpan:
    """One gold context item, its path already normalised by ContextBench's gold rule."""

    path: str
    start: int
    end: int


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, overlapping or touching intervals merged (`(1, 3)` and `(4, 6)` become `(1, 6)`)."""
    merged: list[Interval] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def length(intervals: Iterable[Interval]) -> int:
    return sum(end - start + 1 for start, end in merge(intervals))


def intersect(a: Iterable[Interval], b: Iterable[Interval]) -> list[Interval]:
    """The intersection of two interval lists (each merged first), by the official two-pointer walk."""
    left, right = merge(a), merge(b)
    result: list[Interval] = []
    i = j = 0
    while i < len(left) and j < len(right):
        start, end = max(left[i][0], right[j][0]), min(left[i][1], right[j][1])
        if start <= end:
            result.append((start, end))
        if left[i][1] < right[j][1]:
            i += 1
        elif right[j][1] < left[i][1]:
            j += 1
        else:
            i += 1
            j += 1
    return result


def total(by_file: Mapping[str, Sequence[Interval]]) -> int:
    return sum(length(intervals) for intervals in by_file.values())


def intersection_total(a: Mapping[str, Sequence[Interval]], b: Mapping[str, Sequence[Interval]]) -> int:
    return sum(length(intersect(a.get(path, []), b.get(path, []))) for path in set(a) | set(b))


def line_to_byte(content: bytes | None, start_line: int, end_line: int) -> Interval | None:
    """`core/fileio.py`'s mapping: the inclusive byte range of lines `start_line..end_line`.

    An unreadable file is None; an empty file is `(0, 0)`; the start is at least line 1 and the end
    at least the start; a start past the last line start is None; the end is clamped to the file's
    last byte (the line after a final newline maps to the one offset just past the end, as there).
    """
    if content is None:
        return None
    if not content:
        return (0, 0)
    offsets = [0]
    position = content.find(b"\n")
    while position != -1:
        offsets.append(position + 1)
        position = content.find(b"\n", position + 1)
    start_line = max(1, start_line)
    end_line = max(start_line, end_line)
    if start_line - 1 >= len(offsets):
        return None
    start_byte = offsets[start_line - 1]
    end_byte = offsets[end_line] - 1 if end_line < len(offsets) else len(content) - 1
    return (start_byte, max(start_byte, end_byte))


def resolve_path(checkout: Checkout, raw: str) -> str:
    """A predicted path as the repository-relative file it names, or "" (`_resolve_repo_relpath`).

    Quotes and whitespace are stripped, backslashes become slashes, leading `./` and `/` go, then
    leading directories are dropped one at a time until a file of the checkout is named (so
    `/testbed/src/x.py` and `/workspace/repo/src/x.py` both find `src/x.py`). A candidate with `.`
    or `..` components is normalised first and names the file it reaches inside the checkout
    (`src/../src/x.py` is `src/x.py`); the official resolves it on disk but keeps the unnormalised
    string, a file name no gold path can equal (a deliberate difference, see docs/formats.md).
    """
    path = str(raw).strip().strip("'\"").replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    path = path.lstrip("/")
    parts = [part for part in path.split("/") if part]
    for index in range(len(parts)):
        joined = "/".join(parts[index:])
        if any(part in (".", "..") for part in parts[index:]):
            joined = posixpath.normpath(joined)
            if joined == ".." or joined.startswith("../") or joined == ".":
                continue
        if checkout.is_file(joined):
            return joined
    return ""


def filter_step(step: ContextStep, checkout: Checkout) -> ContextStep:
    """The step's files, spans and symbols on files of the checkout only (`_filter_step_to_repo`):
    files resolved, distinct and sorted; spans kept in order with their resolved file; symbol names
    of paths resolving to the same file joined, empty lists dropped."""
    files = sorted({resolved for path in step.files if (resolved := resolve_path(checkout, path))})
    spans = [Span(resolved, span.start, span.end) for span in step.spans if span.path and (resolved := resolve_path(checkout, span.path))]
    symbols: dict[str, list[str]] = {}
    for path, names in step.symbols.items():
        if not names:
            continue
        resolved = resolve_path(checkout, path)
        if resolved:
            symbols[resolved] = symbols.get(resolved, []) + list(names) if resolved in symbols else list(names)
    return ContextStep(files, spans, symbols)


def step_bytes(step: ContextStep, checkout: Checkout) -> IntervalsByFile:
    """A step's spans as merged byte intervals per file (spans whose lines map to no bytes dropped)."""
    result: IntervalsByFile = {}
    for span in step.spans:
        interval = line_to_byte(checkout.read_bytes(span.path), span.start, span.end)
        if interval is not None:
            result.setdefault(span.path, []).append(interval)
    return {path: merge(intervals) for path, intervals in result.items()}


def step_lines(step: ContextStep) -> IntervalsByFile:
    """A step's spans as merged line intervals per file: a span with a non-positive end is dropped
    (as the official drops it). A reversed span (`end < start`) is the one line `start`, as the
    official maps it to bytes; the official's line count would take it as `end - start + 1`
    lines, a negative number (a deliberate difference, see docs/formats.md)."""
    result: IntervalsByFile = {}
    for span in step.spans:
        if span.start > 0 and span.end > 0:
            result.setdefault(span.path, []).append((span.start, max(span.start, span.end)))
    return {path: merge(intervals) for path, intervals in result.items()}


@dataclass
class Gold:
    """A task's gold: `init` (the context the fix reads) and `add` (context added to it).

    Files, byte spans and symbols come from `init + add`; lines from `init` only, as the official
    evaluator takes them (`Gold.files`, `byte_spans`, `line_spans_init`).
    """

    init: list[GoldSpan]
    add: list[GoldSpan] = field(default_factory=list)

    def files(self) -> set[str]:
        return {span.path for span in self.init + self.add if span.path}

    def byte_spans(self, checkout: Checkout) -> IntervalsByFile:
        result: IntervalsByFile = {}
        for span in self.init + self.add:
            interval = line_to_byte(checkout.read_bytes(span.path), span.start, span.end) if span.path else None
            if interval is not None:
                result.setdefault(span.path, []).append(interval)
        return {path: merge(intervals) for path, intervals in result.items()}

    def lines(self) -> IntervalsByFile:
        result: IntervalsByFile = {}
        for span in self.init:
            if span.path:
                result.setdefault(span.path, []).append((span.start, span.end))
        return {path: merge(intervals) for path, intervals in result.items()}
