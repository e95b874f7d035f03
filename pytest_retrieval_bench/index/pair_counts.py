"""(document, term) occurrence counts of many documents, counted by numpy a batch at a time.

Documents arrive as arrays of term ids (see `TermIds`), possibly as several slices of texts
already turned into ids, so a chunk that repeats lines of its file costs array work, not a second
tokenization. Each batch of about `batch_tokens` ids is counted with one `np.unique` over
`document << 32 | term` keys. Documents may arrive in any order, but each exactly once.
"""

from __future__ import annotations

from itertools import accumulate

import numpy as np

from pytest_retrieval_bench.index.postings import Postings, narrowest, utf8_length
from pytest_retrieval_bench.index.term_ids import TermIds

BATCH_TOKENS = 1 << 20
"""Ids counted per `np.unique`: bounds the int64 keys a batch holds (8 MiB) and its sort."""


class PairCounts:
    """Counts for documents 0 .. size-1."""

    def __init__(self, size: int, batch_tokens: int = BATCH_TOKENS) -> None:
        self.size = size
        self.batch_tokens = batch_tokens
        self._docs: list[int] = []  # one entry per pending slice
        self._slices: list[np.ndarray] = []
        self._pending = 0
        self._pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (docs, terms, counts) per batch

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
        keys, counts = np.unique(keys, return_counts=True)
        self._pairs.append(((keys >> 32).astype(np.int32), (keys & 0xFFFFFFFF).astype(np.int32), counts.astype(np.int32)))

    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(documents, terms, counts) of every distinct pair, handed over (the counter is emptied)."""
        self._count()
        batches, self._pairs = self._pairs, []
        if not batches:
            empty = np.zeros(0, dtype=np.int32)
            return empty, empty, empty
        return tuple(np.concatenate([batch[part] for batch in batches]) for part in range(3))  # type: ignore[return-value]


def postings_of_pairs(docs: np.ndarray, terms: np.ndarray, counts: np.ndarray, size: int, term_ids: TermIds) -> tuple[Postings, np.ndarray]:
    """The postings of (document, term, count) triples over `size` documents, triples of the same
    pair added up, with only the terms that occur; and each document's number of distinct terms.

    Values and array types are those `PostingsBuilder` gives for the same documents.
    """
    ordered_terms, rank = term_ids.byte_order()
    keys = rank[terms] * max(size, 1) + docs  # term-major, documents ascending
    order = np.argsort(keys)
    keys = keys[order]
    counts = counts[order].astype(np.int64)
    del order
    if len(keys):
        starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        keys, counts = keys[starts], np.add.reduceat(counts, starts)
    ranks, pair_docs = np.divmod(keys, max(size, 1))
    del keys
    firsts = np.flatnonzero(np.concatenate(([True], ranks[1:] != ranks[:-1]))) if len(ranks) else np.zeros(0, dtype=np.int64)
    used = [ordered_terms[position] for position in ranks[firsts].tolist()]
    blob = "".join(used).encode("utf-8", errors="surrogatepass")
    term_offsets = np.zeros(len(used) + 1, dtype=narrowest(len(blob)))
    term_offsets[1:] = list(accumulate(map(utf8_length, used)))
    offsets = np.empty(len(used) + 1, dtype=narrowest(len(pair_docs)))
    offsets[:-1] = firsts
    offsets[-1] = len(pair_docs)
    postings = Postings(blob=blob, term_offsets=term_offsets, offsets=offsets, docs=pair_docs.astype(narrowest(max(size - 1, 0))),
                        counts=counts.astype(narrowest(int(counts.max(initial=0)))))
    return postings, np.bincount(pair_docs, minlength=size).astype(np.int64)
