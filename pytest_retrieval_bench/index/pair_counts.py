"""(document, term) occurrence counts of many documents, counted by numpy a batch at a time.

Documents arrive in ascending order as arrays of term ids (see `TermIds`), possibly as several
slices of texts already turned into ids, so a chunk that repeats lines of its file costs array
work, not a second tokenization. Each batch of about `batch_tokens` ids is counted with one
`np.unique` over (document, term) keys (see `Batch.count`) and kept as compactly as `PostingsBuilder` keeps
its batches (about four bytes a pair); `postings_of_batches` then scatters the batches, in
document order, into each term's list, a batch at a time, so no step holds more than a batch of
temporaries beside the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from pytest_retrieval_bench.index.distinct import run_starts
from pytest_retrieval_bench.index.postings import Postings, narrowest, utf8_ends
from pytest_retrieval_bench.index.term_ids import TermIds

BATCH_TOKENS = 1 << 16
"""Ids counted per `np.unique`: bounds every per-batch temporary (about half a MiB a key array)."""

ExpandPairs = Callable[[np.ndarray, np.ndarray, "np.ndarray | None"], tuple[np.ndarray, np.ndarray, "np.ndarray | None"]]


@dataclass
class Batch:
    """Distinct (document, term) pairs of consecutive documents, document-major, terms ascending within one."""

    docs: np.ndarray  # the documents, ascending
    pairs_per_doc: np.ndarray  # how many pairs each has
    vocabulary: np.ndarray  # the distinct terms, ascending ids
    terms: np.ndarray  # each pair's term, as a position in `vocabulary` (two bytes while they fit)
    counts: np.ndarray  # each pair's occurrences (narrowest type)

    @classmethod
    def count(cls, docs: np.ndarray, terms: np.ndarray, weights: np.ndarray | None = None) -> "Batch":
        """The distinct pairs of `docs[i], terms[i]` (documents ascending) and how often each occurs,
        or the sum of its `weights`.

        A pair is keyed `(document - first) * (highest term + 1) + term`, in 32 bits when the batch's
        span allows (half the sorting work of 64), and the batch's vocabulary is read off a mark
        per term id rather than sorted again."""
        if not len(docs):
            empty = np.zeros(0, dtype=np.int32)
            return cls(docs=empty, pairs_per_doc=empty, vocabulary=empty, terms=empty.astype(np.uint16), counts=empty.astype(np.uint16))
        first, top = int(docs[0]), int(terms.max()) + 1
        key_type = np.int32 if (int(docs[-1]) - first + 1) * top < 1 << 31 else np.int64
        keys = (docs - first).astype(key_type)
        keys *= top
        keys += terms
        if weights is None:
            keys, counts = np.unique(keys, return_counts=True)
        else:
            keys, inverse = np.unique(keys, return_inverse=True)
            counts = np.bincount(inverse, weights=weights, minlength=len(keys)).astype(np.int64)
        pair_docs, pair_terms = np.divmod(keys, top)
        firsts = np.flatnonzero(run_starts(pair_docs))
        present = np.zeros(top, dtype=bool)
        present[pair_terms] = True
        vocabulary = np.flatnonzero(present).astype(np.int32)
        position = np.cumsum(present, dtype=np.int32)
        position -= 1
        return cls(docs=(pair_docs[firsts] + first).astype(np.int32), pairs_per_doc=np.diff(np.append(firsts, len(keys))).astype(np.int32),
                   vocabulary=vocabulary, terms=position[pair_terms].astype(narrowest(max(len(vocabulary) - 1, 0))),
                   counts=counts.astype(narrowest(int(counts.max(initial=0)))))

    def pair_docs(self) -> np.ndarray:
        return np.repeat(self.docs, self.pairs_per_doc)

    def pair_terms(self) -> np.ndarray:
        return self.vocabulary[self.terms]


class PairCounts:
    """Counts for documents 0 .. size-1, added in ascending order, each once."""

    def __init__(self, size: int, batch_tokens: int = BATCH_TOKENS, expand: ExpandPairs | None = None) -> None:
        self.size = size
        self.batch_tokens = batch_tokens
        self.expand = expand  # ids are counted as the ids this maps them to (word runs as bench tokens)
        self._docs: list[int] = []  # one entry per pending slice
        self._slices: list[np.ndarray] = []
        self._pending = 0
        self._last = -1
        self._batches: list[Batch] = []

    def add(self, doc: int, *slices: np.ndarray) -> None:
        """Document `doc`'s ids: the concatenation of `slices` (int32 arrays)."""
        if doc <= self._last:
            raise ValueError(f"document {doc} added after document {self._last}: documents come in ascending order, each once")
        self._last = doc
        kept = [ids for ids in slices if len(ids)]
        self._take([doc] * len(kept), kept)

    def extend(self, docs: list[int], slices: list[np.ndarray]) -> None:
        """`add` of many documents at once: `slices[i]` belongs to document `docs[i]` (ascending,
        a document's slices together); the batch is counted after them all, so it may pass
        `batch_tokens` by their ids. One call for a file's chunk rows, where a call per row cost
        more than its ids' share of the counting."""
        if not docs:
            return
        if docs[0] <= self._last or any(a > b for a, b in zip(docs, docs[1:])):
            raise ValueError(f"documents {docs[0]}..{docs[-1]} added after document {self._last} or out of order: "
                             "documents come in ascending order, each once")
        self._last = docs[-1]
        self._take(docs, slices)

    def _take(self, docs: list[int], slices: list[np.ndarray]) -> None:
        """Hold checked documents' slices until a batch's worth of ids is pending, then count them."""
        self._docs += docs
        self._slices += slices
        self._pending += sum(map(len, slices))
        if self._pending >= self.batch_tokens:
            self._count()

    def _count(self) -> None:
        if not self._slices:
            return
        sizes = np.fromiter(map(len, self._slices), dtype=np.int64, count=len(self._slices))
        docs = np.repeat(np.asarray(self._docs, dtype=np.int32), sizes)
        terms = np.concatenate(self._slices)
        self._docs, self._slices, self._pending = [], [], 0
        if self.expand is not None:
            docs, terms, _ = self.expand(docs, terms, None)
        if len(docs):  # ids that all map to nothing (word runs of underscores alone) leave no batch
            self._batches.append(Batch.count(docs, terms))

    def totals(self) -> np.ndarray:
        """Each document's number of ids (as counted, after `expand`)."""
        self._count()
        found = np.zeros(self.size, dtype=np.int64)
        for batch in self._batches:  # a document's pairs are all in one batch
            found[batch.docs] += np.add.reduceat(batch.counts.astype(np.int64), _firsts(batch))
        return found

    def batches(self) -> list[Batch]:
        """The counted batches, handed over (the counter is emptied)."""
        self._count()
        batches, self._batches = self._batches, []
        return batches


def _firsts(batch: Batch) -> np.ndarray:
    """Where each document's pairs start."""
    return np.concatenate(([0], np.cumsum(batch.pairs_per_doc)[:-1])).astype(np.int64)


def postings_of_batches(batches: list[Batch], size: int, term_ids: TermIds) -> tuple[Postings, np.ndarray]:
    """The postings of the batches' pairs over `size` documents, with only the terms that occur;
    and each document's number of distinct terms. Values and array types are those
    `PostingsBuilder` gives for the same documents."""
    ordered_terms, rank = term_ids.byte_order()
    frequency = np.zeros(len(ordered_terms), dtype=np.int64)
    distinct = np.zeros(size, dtype=np.int64)
    largest = 0
    for batch in batches:
        frequency[rank[batch.vocabulary]] += np.bincount(batch.terms, minlength=len(batch.vocabulary))
        distinct[batch.docs] += batch.pairs_per_doc
        largest = max(largest, int(batch.counts.max(initial=0)))
    used = np.flatnonzero(frequency)
    free = np.cumsum(frequency) - frequency  # each term's next free slot
    pairs = int(frequency.sum())
    offsets = np.zeros(len(used) + 1, dtype=narrowest(pairs))
    offsets[1:] = np.cumsum(frequency[used])
    del frequency
    docs = np.empty(pairs, dtype=narrowest(max(size - 1, 0)))
    counts = np.empty(pairs, dtype=narrowest(largest))
    for batch in batches:  # in document order, so each term's documents stay ascending
        # the batch's terms put in byte order among themselves (few, distinct), then its pairs
        # grouped by that small position: a stable sort of two-byte keys is a radix sort
        term_ranks = rank[batch.vocabulary]
        by_rank = np.argsort(term_ranks)
        position = np.empty(len(by_rank), dtype=batch.terms.dtype)
        position[by_rank] = np.arange(len(by_rank), dtype=batch.terms.dtype)
        keys = position[batch.terms]
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        per_term = np.bincount(keys, minlength=len(by_rank))
        ranks = term_ranks[by_rank]
        slots = free[ranks][keys] + (np.arange(len(keys)) - (np.cumsum(per_term) - per_term)[keys])
        docs[slots] = batch.pair_docs()[order]
        counts[slots] = batch.counts[order]
        free[ranks] += per_term  # each term's pairs took the slots after its next free one
    terms = [ordered_terms[position] for position in used.tolist()]
    blob = "".join(terms).encode("utf-8", errors="surrogatepass")
    term_offsets = np.zeros(len(terms) + 1, dtype=narrowest(len(blob)))
    term_offsets[1:] = utf8_ends(terms, blob)
    return Postings(blob=blob, term_offsets=term_offsets, offsets=offsets, docs=docs, counts=counts), distinct
