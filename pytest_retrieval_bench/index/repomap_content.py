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

import numpy as np

from pytest_retrieval_bench.index.tokens import word_run_bytes

CONTENT_CHARS = 20_000

WORD_BYTE_FLAGS = bytes(1 if word_run_bytes(chr(byte)) else 0 for byte in range(128)) + bytes(128)
"""Per byte, 1 when it is part of a word run (the tokenizer's own answer; a byte of a multi-byte
character never is), else 0: a `bytes.translate` table whose result reads as booleans, uncopied."""
NEWLINE = ord("\n")


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


def runs_before(text: str, cuts: list[int]) -> list[int]:
    """How many word runs of `text` lie before the start of each line in `cuts` (0-based numbers
    of its newline-separated lines; the number of lines for the end). A word run never spans a
    newline, so none is cut at a line start. Both are found on the UTF-8 bytes, so a line of
    non-ASCII text is measured as the bytes it is, with no pass over the lines in Python."""
    data = text.encode("utf-8", errors="surrogatepass")
    codes = np.frombuffer(data, dtype=np.uint8)
    line_ends = np.append(np.flatnonzero(codes == NEWLINE), len(data))  # a line starts one past the end of the line before
    inside = np.frombuffer(data.translate(WORD_BYTE_FLAGS), dtype=np.bool_)
    run_starts = np.flatnonzero(inside[1:] > inside[:-1]) + 1  # where each run begins, past the first byte
    if len(inside) and inside[0]:
        run_starts = np.concatenate(([0], run_starts))
    lines = np.asarray(cuts, dtype=np.int64)
    offsets = np.zeros(len(lines), dtype=np.int64)
    later = lines > 0
    offsets[later] = line_ends[lines[later] - 1] + 1
    return np.searchsorted(run_starts, offsets, side="left").tolist()  # runs begun before each line start
