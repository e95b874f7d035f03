"""(document, term) occurrence counts of many documents, counted by numpy a batch at a time.

Documents arrive as arrays of term ids (see `TermIds`), possibly as several slices of texts
already turned into ids, so a chunk that repeats lines of its file costs array work, not a second
tokenization. Each batch of about `batch_tokens` ids is counted with one `np.unique` over
`document << 32 | term` keys, and stays a batch: `postings_of_batches` lays them out term-major
a range of terms at a time, so no step holds more than about a batch of temporaries. Documents
may arrive in any order, but each exactly once (so a document's pairs are all in one batch).
"""

from __future__ import annotations

from itertools import accumulate

import numpy as np

from pytest_retrieval_bench.index.postings import Postings, narrowest, utf8_length
from pytest_retrieval_bench.index.term_ids import TermIds

BATCH_TOKENS = 1 << 20
"""Ids counted per `np.unique`, and pairs laid out per step: bounds every temporary (about 8 MiB a key array)."""

Batch = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(documents, terms, counts) of distinct pairs, int32 each."""


class PairCounts:
    """Counts for documents 0 .. size-1."""

    def __init__(self, size: int, batch_tokens: int = BATCH_TOKENS) -> None:
        self.size = size
        self.batch_tokens = batch_tokens
        self._docs: list[int] = []  # one entry per pending slice
        self._slices: list[np.ndarray] = []
        self._pending = 0
        self._batches: list[Batch] = []

    def add(self, doc: int, *slices: np.ndarray) -> None:
        """Document `doc`'s ids: the concatenation of `slices` (int32 arrays)."""
        for ids in slices:
            if len(ids):
                self._docs.append(doc)
                self._slices.append(ids)
                self._pending += len(ids)
        if self._pending >= self.batch_tokens:
            self._count()

    def _count(self) -> None:
        if not self._slices:
            return
        sizes = np.fromiter(map(len, self._slices), dtype=np.int64, count=len(self._slices))
        keys = np.repeat(np.asarray(self._docs, dtype=np.int64) << 32, sizes)
        keys |= np.concatenate(self._slices)
        self._docs, self._slices, self._pending = [], [], 0
        self._batches.append(split_keys(*np.unique(keys, return_counts=True)))

    def batches(self) -> list[Batch]:
        """The counted batches, handed over (the counter is emptied)."""
        self._count()
        batches, self._batches = self._batches, []
        return batches


def split_keys(keys: np.ndarray, counts: np.ndarray) -> Batch:
    """`document << 32 | term` keys and their counts as a batch of three int32 arrays."""
    return (keys >> 32).astype(np.int32), (keys & 0xFFFFFFFF).astype(np.int32), counts.astype(np.int32)


def postings_of_batches(batches: list[Batch], size: int, term_ids: TermIds, step: int = BATCH_TOKENS) -> tuple[Postings, np.ndarray]:
    """The postings of distinct (document, term, count) pairs over `size` documents, with only the
    terms that occur; and each document's number of distinct terms.

    Pairs are laid out a range of terms at a time (ranges of about `step` pairs), sorted by
    (term, document) within the range. Values and array types are those `PostingsBuilder` gives.
    """
    ordered_terms, rank = term_ids.byte_order()
    ranks = [rank[terms].astype(np.int32) for _, terms, _ in batches]
    frequency = np.zeros(len(ordered_terms), dtype=np.int64)
    distinct = np.zeros(size, dtype=np.int64)
    largest = 0
    for (docs, _, counts), batch_ranks in zip(batches, ranks):
        frequency += np.bincount(batch_ranks, minlength=len(ordered_terms))
        distinct += np.bincount(docs, minlength=size)
        largest = max(largest, int(counts.max(initial=0)))
    ends = np.cumsum(frequency)
    used = np.flatnonzero(frequency)
    del frequency
    pairs = int(ends[-1]) if len(ends) else 0
    out_docs = np.empty(pairs, dtype=narrowest(max(size - 1, 0)))
    out_counts = np.empty(pairs, dtype=narrowest(largest))
    low = 0
    while low < len(ends):  # terms low..high-1 hold about `step` pairs (at least one term)
        high = max(int(np.searchsorted(ends, (ends[low - 1] if low else 0) + step, side="right")), low + 1)
        start, stop = (int(ends[low - 1]) if low else 0), int(ends[high - 1])
        parts = [(batch_ranks, docs, counts) for (docs, _, counts), batch_ranks in zip(batches, ranks)]
        masks = [(part_ranks >= low) & (part_ranks < high) for part_ranks, _, _ in parts]
        keys = np.concatenate([(part_ranks[mask] - low).astype(np.int64) * max(size, 1) + docs[mask]
                               for (part_ranks, docs, _), mask in zip(parts, masks)]) if parts else np.zeros(0, dtype=np.int64)
        order = np.argsort(keys)
        out_docs[start:stop] = (keys[order] % max(size, 1))
        out_counts[start:stop] = np.concatenate([counts[mask] for (_, _, counts), mask in zip(parts, masks)])[order] if parts else []
        low = high
    terms = [ordered_terms[position] for position in used.tolist()]
    blob = "".join(terms).encode("utf-8", errors="surrogatepass")
    term_offsets = np.zeros(len(terms) + 1, dtype=narrowest(len(blob)))
    term_offsets[1:] = list(accumulate(map(utf8_length, terms)))
    offsets = np.zeros(len(terms) + 1, dtype=narrowest(pairs))
    offsets[1:] = ends[used]
    return Postings(blob=blob, term_offsets=term_offsets, offsets=offsets, docs=out_docs, counts=out_counts), distinct
