"""Sets of line numbers held as merged inclusive ranges, never as one entry per line.

Gold spans and cce anchors may name ranges as wide as cce's integer type allows
(`f.py@1-18446744073709551615` is a valid anchor there); a set of line numbers for such a range
would exhaust memory. Sizes, intersections and token masses are computed from the ranges.
"""

from __future__ import annotations

import itertools
from typing import Iterable, Sequence

Range = tuple[int, int]


def merged(ranges: Iterable[Range]) -> list[Range]:
    """Sorted, disjoint, non-adjacent inclusive ranges covering the same lines (empty ranges dropped)."""
    out: list[Range] = []
    for start, end in sorted(r for r in ranges if r[0] <= r[1]):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def size(ranges: Sequence[Range]) -> int:
    return sum(end - start + 1 for start, end in ranges)


def intersect(left: Sequence[Range], right: Sequence[Range]) -> list[Range]:
    """The lines in both (each side merged)."""
    out: list[Range] = []
    i = j = 0
    while i < len(left) and j < len(right):
        start, end = max(left[i][0], right[j][0]), min(left[i][1], right[j][1])
        if start <= end:
            out.append((start, end))
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return out


def by_path(spans: Iterable[tuple[str, int, int]]) -> dict[str, list[Range]]:
    """Merged ranges per path."""
    grouped: dict[str, list[Range]] = {}
    for path, start, end in spans:
        grouped.setdefault(path, []).append((start, end))
    return {path: merged(ranges) for path, ranges in grouped.items()}


class LineWeights:
    """Per-line weights of one file as prefix sums; a line past the table weighs `beyond` (1)."""

    def __init__(self, weights: Sequence[int], beyond: int = 1):
        self.prefix = [0, *itertools.accumulate(weights)]
        self.beyond = beyond

    def mass(self, ranges: Sequence[Range]) -> int:
        count = len(self.prefix) - 1
        total = 0
        for start, end in ranges:
            inside_end = min(end, count)
            if start <= inside_end:
                total += self.prefix[inside_end] - self.prefix[start - 1]
            total += (end - max(start - 1, inside_end)) * self.beyond if end > count else 0
        return total


def rust_lines(text: str) -> list[str]:
    """Rust's `str::lines()`: split at `\\n`, one `\\r` before it dropped, no empty last line."""
    pieces = text.split("\n")
    last = pieces.pop()
    lines = [piece[:-1] if piece.endswith("\r") else piece for piece in pieces]
    if last:
        lines.append(last)
    return lines
