"""The word runs the RepoMap reads of each file, kept for the lexical build of the same snapshot.

The map reads each file's first `CONTENT_CHARS` characters into word-run ids; a file no longer
than that is read whole, and those ids are exactly the word runs the lexical build would read
off the same text again. Built first, the map keeps them (`MapContent`), and the build takes them
(renumbered in its own vocabulary) instead of reading the text a second time. Only ids and the
map's terms are kept (12 MB of ids on the largest real snapshot, a spring-boot one); the map's
other temporaries are gone before the build starts, so the two builds' peaks do not stack.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from pytest_retrieval_bench.index.tokens import word_run_bytes

CONTENT_CHARS = 20_000

IS_WORD_BYTE = np.array([bool(word_run_bytes(chr(byte))) for byte in range(128)] + [False] * 128)
"""Per byte: whether it is part of a word run (the tokenizer's own answer; a byte of a multi-byte character never is)."""


@dataclass
class MapContent:
    """path -> (text, the word-run ids of the whole text, in the map's vocabulary) for each node
    the map read whole, and the map's word-run terms by id."""

    terms: list[str] = field(default_factory=list)
    read: dict[str, tuple[str, np.ndarray]] = field(default_factory=dict)

    def take(self, path: str, text: str) -> np.ndarray | None:
        """The ids the map read of `text` as `path`'s content (None when it read another text, or
        not all of it); each is handed over once, so the ids held shrink as a build goes."""
        found = self.read.pop(path, None)
        return found[1] if found is not None and found[0] == text else None


def line_starts(lengths: Iterable[int], count: int) -> np.ndarray:
    """Where each of `count` newline-separated lines of `lengths` starts, and one past the end
    (`count + 1` offsets, in the unit of the lengths)."""
    starts = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.fromiter(lengths, dtype=np.int64, count=count) + 1, out=starts[1:])
    return starts


def runs_before(text: str, lines: list[str], cuts: list[int]) -> list[int]:
    """How many word runs of `text` lie before the start of each line in `cuts` (0-based numbers
    in `lines`, its newline-separated lines; `len(lines)` for the end). A word run never spans a
    newline, so none is cut at a line start."""
    data = text.encode("utf-8", errors="surrogatepass")
    ascii_only = len(data) == len(text)  # else line starts are counted in bytes, not characters
    starts = line_starts(map(len, lines) if ascii_only else (len(line.encode("utf-8", errors="surrogatepass")) for line in lines), len(lines))
    inside = IS_WORD_BYTE[np.frombuffer(data, dtype=np.uint8)]
    run_starts = np.flatnonzero(inside[1:] & ~inside[:-1]) + 1  # where each run begins, past the first byte
    if len(inside) and inside[0]:
        run_starts = np.concatenate(([0], run_starts))
    return np.searchsorted(run_starts, starts[cuts], side="left").tolist()  # runs begun before each line start
