"""Bench tokens read off word runs: each distinct word run is split into bench tokens once.

A bench token is an alphanumeric run after lower->Upper boundaries are split, so it never
crosses a character outside `[A-Za-z0-9_]`: every bench token of a text lies inside one of its
word runs (`[A-Za-z0-9_]+`), and the text's bench tokens are its word runs' bench tokens in
order. So a text is read once, into the word runs the whole-word index needs anyway, and its
bench tokens come from a table per distinct word run, applied to counts with numpy.
"""

from __future__ import annotations

import numpy as np

from pytest_retrieval_bench.index.pair_counts import Batch
from pytest_retrieval_bench.index.term_ids import TermIds


_LOWER = np.zeros(256, dtype=bool)
_LOWER[ord("a") : ord("z") + 1] = True
_UPPER = np.zeros(256, dtype=bool)
_UPPER[ord("A") : ord("Z") + 1] = True
_SPACE, _UNDERSCORE, _NUL = ord(" "), ord("_"), 0


def bench_tokens_of_words(words: list[str]) -> tuple[np.ndarray, list[bytes]]:
    """How many bench tokens each word run has, and all their tokens in order, as ASCII bytes:
    `bench_tokens` of every run at once, with no regex and no Python step per run.

    A word run holds only `[A-Za-z0-9_]`, so its bench tokens are its pieces between underscores
    and lower->Upper gaps, lowercased. The runs are joined by NULs, a space goes into every such
    gap (a gap never spans a NUL) and over every underscore; a run's count is the number of pieces
    that start between its NULs, and the tokens are the pieces."""
    if not words:
        return np.zeros(0, dtype=np.int64), []
    return bench_tokens_of_joined("\0".join(words).encode("ascii"), len(words))


def bench_tokens_of_joined(joined: bytes, size: int) -> tuple[np.ndarray, list[bytes]]:
    """`bench_tokens_of_words` of `size` word runs already joined by NULs, as ASCII bytes."""
    data = np.frombuffer(joined, dtype=np.uint8)
    gaps = np.flatnonzero(_LOWER[data[:-1]] & _UPPER[data[1:]]) + 1
    spaced = np.insert(data, gaps, _SPACE)
    spaced[spaced == _UNDERSCORE] = _SPACE
    ends = spaced == _NUL
    inside = ~ends & (spaced != _SPACE)
    starts = inside.copy()
    starts[1:] &= ~inside[:-1]
    lengths = np.bincount(np.cumsum(ends)[starts], minlength=size).astype(np.int64)  # NULs before a start: its run
    spaced[ends] = _SPACE
    return lengths, spaced.tobytes().lower().split()


TABLE_WORDS = 1 << 14
"""Word runs split per step while the table is built: bounds the token lists held at once."""


class WordTokens:
    """word-run id (in `words`) -> the ids (in `bench`) of its bench tokens."""

    def __init__(self, words: TermIds, bench: TermIds):
        self.words = words
        self.bench = bench
        self._lengths = np.zeros(0, dtype=np.int64)
        self._starts = np.zeros(0, dtype=np.int64)
        self._flat = np.zeros(0, dtype=np.int32)

    def complete(self) -> None:
        """Split every word run numbered so far (after which `bench` may stop numbering new terms)."""
        self._table()

    def _table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(first position in `flat`, number of bench tokens, flat ids) for every word run met so far."""
        done = len(self._lengths)
        if len(self.words) > done:
            lengths, flat = [self._lengths], [self._flat]
            for start in range(done, len(self.words), TABLE_WORDS):
                counts, tokens = bench_tokens_of_words(self.words.terms[start : start + TABLE_WORDS])
                lengths.append(counts)
                flat.append(self.bench.of(tokens))
            self._lengths, self._flat = np.concatenate(lengths), np.concatenate(flat)
            self._starts = np.cumsum(self._lengths) - self._lengths
        return self._starts, self._lengths, self._flat

    def expand_pairs(self, docs: np.ndarray, words: np.ndarray, counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(document, word run) pairs as (document, bench token) pairs, one per bench token of the
        run, in order (and their counts, repeated alike)."""
        starts, lengths, flat = self._table()
        repeats = lengths[words]
        ends = np.cumsum(repeats)
        positions = np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
        positions -= np.repeat(ends - repeats - starts[words], repeats)
        return np.repeat(docs, repeats), flat[positions], (np.repeat(counts, repeats) if counts is not None else None)

    def totals(self, batches: list[Batch], size: int) -> np.ndarray:
        """Each document's number of bench tokens, from its (word run, count) pairs."""
        _, lengths, _ = self._table()
        found = np.zeros(size, dtype=np.int64)
        for batch in batches:
            found += np.bincount(batch.pair_docs(), weights=lengths[batch.pair_terms()] * batch.counts, minlength=size).astype(np.int64)
        return found

    def expand(self, batches: list[Batch]) -> list[Batch]:
        """Batches of (document, word run, count) as batches of (document, bench token, count),
        a document's counts of a bench token that several of its word runs hold added up."""
        expanded: list[Batch] = []
        for batch in batches:
            expanded.append(Batch.count(*self.expand_pairs(batch.pair_docs(), batch.pair_terms(), batch.counts)))
        return expanded
