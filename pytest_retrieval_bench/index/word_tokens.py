"""Bench tokens read off word runs: each distinct word run is split into bench tokens once.

A bench token is an alphanumeric run after lower->Upper boundaries are split, so it never
crosses a character outside `[A-Za-z0-9_]`: every bench token of a text lies inside one of its
word runs (`[A-Za-z0-9_]+`), and the text's bench tokens are its word runs' bench tokens in
order. So a text is read by one regex, the word-run one the whole-word index needs anyway, and
its bench tokens come from a table per distinct word run, applied to counts with numpy.
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from pytest_retrieval_bench.index.pair_counts import Batch
from pytest_retrieval_bench.index.term_ids import TermIds
from pytest_retrieval_bench.index.tokens import bench_tokens


def _bench_tokens_of_word(word: str) -> list[str]:
    """`bench_tokens(word)` for one word run; one lowercased token when it has no `_` and no
    lower->Upper boundary (no capital after its first character, or no small letter), as most runs have."""
    rest = word[1:]
    if "_" not in word and (rest == rest.lower() or word.isupper()):
        return [word.lower()]
    return bench_tokens(word)


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
                split = list(map(_bench_tokens_of_word, self.words.terms[start : start + TABLE_WORDS]))
                lengths.append(np.fromiter(map(len, split), dtype=np.int64, count=len(split)))
                flat.append(self.bench.of(list(chain.from_iterable(split))))
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
