"""A snapshot's word runs and the files holding them: the bench's `grep` without reading every file.

The bench's `grep_files` counts a lowercased pattern in each file's lowercased `path\\ntext`
(`str.count`: non-overlapping substrings, not a regex, not per line). A run here is a maximal
run of `[a-z0-9_]` in that lowercased text. A pattern made of those characters only can occur
only inside a run, and the runs' matches never overlap each other, so a file's count is the sum,
over its distinct runs, of the run's count of the pattern times how often the file holds the run:
the index answers such a pattern with the bench's counts, exactly, from the distinct runs of the
snapshot alone (a few percent of its text). Any other pattern holds such pieces (`.`, spaces,
`(`, non-ASCII letters cut it), each inside a run of every file that has the pattern: only files
holding a run with each piece are counted, with `str.count` on their lowercased text as the bench
counts. A pattern with no such piece is counted in every file. No file that matches is ever left out.

The runs holding a pattern are found through the trigrams they hold (`RunTrigrams`), so a lookup
reads a few runs, not the snapshot's tens of thousands; `PathOrder` is what ranking the hits needs.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from itertools import count
from typing import Sequence

import numpy as np

_RUN_BYTE = bytes(byte + 32 if 65 <= byte <= 90 else byte if 97 <= byte <= 122 or 48 <= byte <= 57 or byte == 95 else 32 for byte in range(256))
"""`[a-z0-9_]` kept (`A-Z` lowered: what `str.lower` does to ASCII text), every other byte a space.
Each byte of a multi-byte UTF-8 character is 0x80 or more, so it is never part of a run."""
_PIECE = re.compile(r"[a-z0-9_]+")
_SEPARATOR = b" "


def haystack_runs(path: str, text: str) -> Counter[bytes]:
    """The runs of the bench's lowercased `path\\ntext`, with how often each occurs. ASCII text is
    lowered by the byte table (the same letters `str.lower` changes); other text by `str.lower`
    first, which may turn a non-ASCII letter into an ASCII one (the Kelvin sign into `k`)."""
    haystack = f"{path}\n{text}"
    data = haystack.encode("ascii") if haystack.isascii() else haystack.lower().encode("utf-8", errors="surrogatepass")
    return Counter(data.translate(_RUN_BYTE).split())


class PathOrder:
    """A snapshot's paths in one fixed order, each one's length, lowercased text and rank among
    them as strings: what ranking a pattern's hits needs (path matches first, then more matches,
    a shorter path, the path)."""

    def __init__(self, paths: list[str]):
        self.paths = paths
        self.lengths = np.fromiter(map(len, paths), dtype=np.int64, count=len(paths))
        self.rank = np.empty(len(paths), dtype=np.int64)
        self.rank[np.asarray(sorted(range(len(paths)), key=paths.__getitem__), dtype=np.int64)] = np.arange(len(paths), dtype=np.int64)
        self.lowered = [path.lower() for path in paths]


def _distinct_sorted(values: np.ndarray) -> np.ndarray:
    """`np.unique(values)` by a plain sort in place (numpy's `unique` can take far longer on large int64 arrays)."""
    values.sort()
    return values[np.concatenate(([True], values[1:] != values[:-1]))] if values.size else values


class RunTrigrams:
    """Which runs hold each trigram: a pattern of three or more characters is looked for only in
    the runs holding all of its rarest trigrams, not along every run of the snapshot."""

    def __init__(self, joined: bytes, lengths: np.ndarray):
        data = np.frombuffer(joined, dtype=np.uint8)
        if data.size < 3:
            self._codes = np.zeros(0, dtype=np.int64)
            self._rows = np.zeros(1, dtype=np.int64)
            self._places = np.zeros(0, dtype=np.int32)
            return
        run_of_byte = np.repeat(np.arange(lengths.size, dtype=np.int32), lengths + 1)[: data.size - 2]
        inside = data != 32  # no trigram spans a separator
        inside = inside[:-2] & inside[1:-1] & inside[2:]
        codes = data[:-2].astype(np.int32) << 16
        codes |= data[1:-1].astype(np.int32) << 8
        codes |= data[2:]
        keys = codes[inside].astype(np.int64) << 32
        del codes
        keys |= run_of_byte[inside]
        del run_of_byte, inside
        keys = _distinct_sorted(keys)
        trigrams = (keys >> 32).astype(np.int32)
        first = np.flatnonzero(np.concatenate(([True], trigrams[1:] != trigrams[:-1])))
        self._codes = trigrams[first].astype(np.int64)
        self._rows = np.append(first, keys.size).astype(np.int64)
        self._places = (keys & 0xFFFFFFFF).astype(np.int32)

    @property
    def nbytes(self) -> int:
        return self._codes.nbytes + self._rows.nbytes + self._places.nbytes

    def arrays(self) -> dict[str, np.ndarray]:
        return {"trigram_codes": self._codes, "trigram_rows": self._rows, "trigram_places": self._places}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "RunTrigrams":
        """The trigrams `arrays()` gave (a cache entry's, its invariants checked)."""
        trigrams = cls.__new__(cls)
        trigrams._codes, trigrams._rows, trigrams._places = arrays["trigram_codes"], arrays["trigram_rows"], arrays["trigram_places"]
        return trigrams

    def runs_with_all(self, needle: bytes) -> np.ndarray:
        """The runs (by place) holding every trigram of `needle` (three or more bytes), ascending."""
        codes = sorted({(needle[at] << 16) | (needle[at + 1] << 8) | needle[at + 2] for at in range(len(needle) - 2)})
        wanted = np.asarray(codes, dtype=np.int64)
        rows = np.searchsorted(self._codes, wanted)
        if self._codes.size == 0 or rows.max() >= self._codes.size or not np.array_equal(self._codes[rows], wanted):
            return np.zeros(0, dtype=np.int64)  # a trigram no run holds
        sizes = self._rows[rows + 1] - self._rows[rows]
        places: np.ndarray | None = None
        for row in rows[np.argsort(sizes, kind="stable")][:4].tolist():  # the four rarest narrow it enough; the rest is checked
            found = self._places[self._rows[row]: self._rows[row + 1]]
            places = found if places is None else np.intersect1d(places, found, assume_unique=True)
            if places.size == 0:
                break
        return np.zeros(0, dtype=np.int64) if places is None else places.astype(np.int64)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions `starts[i] .. starts[i] + lengths[i] - 1` of every range, concatenated."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    offsets = np.repeat(starts - (ends - lengths), lengths)
    return offsets + np.arange(total, dtype=np.int64)


class GrepIndex:
    """For each distinct run of a snapshot, the files holding it and how often (rows by run).

    Held: the runs joined by spaces (bytes), where each starts, and two int32 columns of
    (file, occurrences) grouped by run; nothing per file but its path's length and order.
    """

    def __init__(self, order: PathOrder, texts: Sequence[str]):
        self.paths = order
        paths = order.paths
        self.size = len(paths)
        numbering: defaultdict[bytes, int] = defaultdict(count().__next__)
        number = numbering.__getitem__
        run_ids, run_counts, lengths = [], [], np.zeros(len(paths), dtype=np.int64)
        for position, (path, text) in enumerate(zip(paths, texts)):
            runs = haystack_runs(path, text)
            lengths[position] = len(runs)
            run_ids.append(np.fromiter(map(number, runs), dtype=np.int32, count=len(runs)))
            run_counts.append(np.fromiter(runs.values(), dtype=np.int32, count=len(runs)))
        ids = np.concatenate(run_ids) if run_ids else np.zeros(0, dtype=np.int32)
        del run_ids
        order = np.argsort(ids, kind="stable")
        self._files = np.repeat(np.arange(len(paths), dtype=np.int32), lengths)[order]
        self._counts = (np.concatenate(run_counts) if run_counts else np.zeros(0, dtype=np.int32))[order]
        del run_counts, order
        self._rows = np.zeros(len(numbering) + 1, dtype=np.int64)
        np.cumsum(np.bincount(ids, minlength=len(numbering)), out=self._rows[1:])
        runs = list(numbering)
        lengths = np.fromiter(map(len, runs), dtype=np.int64, count=len(runs))
        self._by_length = np.argsort(-lengths, kind="stable")  # the longest first: a pattern is searched only among runs as long
        self._joined = _SEPARATOR.join([runs[run] for run in self._by_length.tolist()])
        self._starts = np.zeros(len(runs), dtype=np.int64)
        if runs:
            np.cumsum(lengths[self._by_length][:-1] + 1, out=self._starts[1:])
        self._longest_first = lengths[self._by_length]
        self._trigrams = RunTrigrams(self._joined, self._longest_first)

    def arrays(self) -> dict[str, np.ndarray]:
        """What the index is made of besides its paths (`from_arrays` makes it again): kept in the index cache."""
        return {"files": self._files, "counts": self._counts, "rows": self._rows, "by_length": self._by_length,
                "longest_first": self._longest_first, "joined": np.frombuffer(self._joined, dtype=np.uint8), **self._trigrams.arrays()}

    @classmethod
    def from_arrays(cls, order: PathOrder, arrays: dict[str, np.ndarray]) -> "GrepIndex":
        """The index `arrays()` gave, over the same paths in the same order (a cache entry's, its
        invariants checked: `index.invariants.check_grep_arrays`); where each run starts is derived."""
        index = cls.__new__(cls)
        index.paths, index.size = order, len(order.paths)
        index._files, index._counts, index._rows = arrays["files"], arrays["counts"], arrays["rows"]
        index._by_length, index._longest_first = arrays["by_length"].astype(np.int64), arrays["longest_first"].astype(np.int64)
        index._joined = arrays["joined"].tobytes()
        index._starts = np.zeros(len(index._longest_first), dtype=np.int64)
        if len(index._starts):
            np.cumsum(index._longest_first[:-1] + 1, out=index._starts[1:])
        index._trigrams = RunTrigrams.from_arrays(arrays)
        return index

    @property
    def nbytes(self) -> int:
        arrays = (self._files, self._counts, self._rows, self._starts, self._by_length, self._longest_first)
        return len(self._joined) + sum(array.nbytes for array in arrays) + self._trigrams.nbytes

    def _runs_holding(self, piece: str, starts_run: bool = False, ends_run: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The runs that hold `piece` (a non-empty string of run characters), beginning or ending
        with it when asked, and its count in each."""
        needle = piece.encode("ascii")
        step = len(needle)
        if step >= 3:
            return self._runs_checked(needle, self._trigrams.runs_with_all(needle), starts_run, ends_run)
        long_enough = int(np.searchsorted(-self._longest_first, -step, side="right"))  # runs at least as long as the piece
        end = len(self._joined) if long_enough >= len(self._starts) else int(self._starts[long_enough])
        joined, found = self._joined, []
        at = joined.find(needle, 0, end)
        while at >= 0:  # non-overlapping, left to right, as `str.count`; no match spans a separator
            found.append(at)
            at = joined.find(needle, at + step, end)
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        positions = np.asarray(found, dtype=np.int64)
        places = np.searchsorted(self._starts, positions, side="right") - 1
        if starts_run or ends_run:
            keep = np.ones(positions.size, dtype=bool)
            if starts_run:
                keep &= positions == self._starts[places]
            if ends_run:
                keep &= positions + step == self._starts[places] + self._longest_first[places]
            places = places[keep]
        places, per_run = np.unique(places, return_counts=True)
        return self._by_length[places], per_run

    def _runs_checked(self, needle: bytes, places: np.ndarray, starts_run: bool, ends_run: bool) -> tuple[np.ndarray, np.ndarray]:
        """Of the runs at `places` (which hold the needle's trigrams), those that hold the needle
        (beginning or ending with it when asked), and its non-overlapping count in each."""
        joined, kept, counts = self._joined, [], []
        for place, start, length in zip(places.tolist(), self._starts[places].tolist(), self._longest_first[places].tolist()):
            end = start + length
            if starts_run and not joined.startswith(needle, start, end):
                continue
            if ends_run and not joined.endswith(needle, start, end):
                continue
            found = joined.count(needle, start, end)
            if found:
                kept.append(place)
                counts.append(found)
        return self._by_length[np.asarray(kept, dtype=np.int64)], np.asarray(counts, dtype=np.int64)

    def _postings(self, runs: np.ndarray) -> np.ndarray:
        starts = self._rows[runs]
        return _ranges(starts, self._rows[runs + 1] - starts)

    def run_counts(self, piece: str) -> np.ndarray:
        """Each file's count of `piece` (run characters only) in its lowercased `path\\ntext`."""
        runs, per_run = self._runs_holding(piece)
        rows = self._postings(runs)
        if rows.size == 0:
            return np.zeros(self.size, dtype=np.int64)
        weights = self._counts[rows].astype(np.int64) * np.repeat(per_run, self._rows[runs + 1] - self._rows[runs])
        return np.bincount(self._files[rows], weights=weights, minlength=self.size).astype(np.int64)

    def holding(self, piece: str, starts_run: bool = False, ends_run: bool = False) -> np.ndarray:
        """Whether each file has a run holding `piece` (beginning or ending with it when asked): a boolean array."""
        runs, _ = self._runs_holding(piece, starts_run, ends_run)
        held = np.zeros(self.size, dtype=bool)
        held[self._files[self._postings(runs)]] = True
        return held

    def candidates(self, needle: str) -> np.ndarray | None:
        """For a pattern that is not a single piece: the files that may hold it (indices), or None
        when it has no piece to look up (every file must be counted). A piece the pattern shows
        after another character begins its run wherever the pattern occurs (the character ends
        the run before it), and one shown before another character ends its run."""
        pieces = sorted({(match.group(), match.start() > 0, match.end() < len(needle)) for match in _PIECE.finditer(needle)},
                        key=lambda piece: (-len(piece[0]), piece))
        if not pieces:
            return None
        held = self.holding(*pieces[0])
        for piece in pieces[1:]:
            if not held.any():
                break
            held &= self.holding(*piece)
        return np.flatnonzero(held)


def is_piece(needle: str) -> bool:
    """A pattern the index counts by itself: run characters only."""
    return _PIECE.fullmatch(needle) is not None
