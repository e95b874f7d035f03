"""Per-snapshot lexical indexes: a vocabulary and numpy postings, built once, queried by arrays.

`LexicalIndex` serves grep, grep-ident and both BM25 arms over whole text files (`ChunkIndex`,
in `chunk_index`, the bench's own chunk-level reference rankers). Both are plain arrays so they
can be cached on disk (see `index_cache`) and so that a query touches only its terms' postings.
"""

from __future__ import annotations

import heapq
import io
from array import array
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, repeat
from typing import Callable, Iterable, Protocol

import numpy as np

from pytest_retrieval_bench.index.tokens import bench_tokens, stream_tokens, word_runs

_EMPTY_I32 = np.zeros(0, dtype=np.int32)
_EMPTY_I32.flags.writeable = False  # shared by every miss
BATCH_TERMS = 1 << 14
"""A batch dictionary is closed after the document that brings it to this many distinct terms:
bounds the transient vocabulary (one document's distinct terms can still exceed it)."""
SCATTER_PAIRS = 1 << 15
"""(document, term) pairs handled per numpy step when postings are laid out or counted: bounds temporaries."""


def _as_numpy(values: array) -> np.ndarray:
    """A numpy view of an `array` of any type code (an empty one gives the shared read-only empty array)."""
    return np.frombuffer(values, dtype=np.dtype(values.typecode)) if len(values) else _EMPTY_I32


_WIDER = {"H": "i", "i": "q"}


def _extend(values: array, new: list[int]) -> array:
    """`values` extended by `new`: 2 bytes an entry until one does not fit, then wider."""
    size = len(values)
    try:
        values.extend(new)
    except OverflowError:
        del values[size:]  # extend may have appended part of `new` before it failed
        return _extend(array(_WIDER[values.typecode], values), new)
    return values


def narrowest(limit: int) -> type:
    """The smallest of uint16, int32 and int64 that holds values from 0 up to `limit`."""
    if limit < 1 << 16:
        return np.uint16
    return np.int32 if limit < 1 << 31 else np.int64


def utf8_length(term: str) -> int:
    return len(term) if term.isascii() else len(term.encode("utf-8", errors="surrogatepass"))


def utf8_ends(terms: list[str], blob: bytes) -> np.ndarray:
    """Where each term ends in `blob`, their UTF-8 encodings joined: by character counts when the
    blob is as long as the characters (all ASCII: any other character takes two bytes or more),
    else by each term's encoded length; a call per term only in that case."""
    lengths = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
    if int(lengths.sum()) != len(blob):
        lengths = np.fromiter(map(utf8_length, terms), dtype=np.int64, count=len(terms))
    return np.cumsum(lengths)


class TermPostings(Protocol):
    def get(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """(document ids ascending, counts) of a term; empty arrays when it occurs nowhere."""
        ...


@dataclass
class Postings:
    """Compressed term -> (document ids, counts) lists; documents ascending within a term.

    The vocabulary is one UTF-8 blob of the terms in byte order plus their offsets, searched by
    bisection: a dictionary of Python strings would cost more memory than the text it indexes,
    and a query looks up only a few dozen terms. Arrays use the narrowest integer type that holds
    their values (most snapshots have under 65,536 files), which halves what an index keeps.
    """

    blob: bytes
    term_offsets: np.ndarray
    offsets: np.ndarray
    docs: np.ndarray
    counts: np.ndarray

    def _position(self, term: str) -> int | None:
        key = term.encode("utf-8", errors="surrogatepass")
        blob, bounds = self.blob, self.term_offsets
        low, high = 0, len(bounds) - 1
        while low < high:
            middle = (low + high) // 2
            if blob[bounds[middle] : bounds[middle + 1]] < key:
                low = middle + 1
            else:
                high = middle
        if low < len(bounds) - 1 and blob[bounds[low] : bounds[low + 1]] == key:
            return low
        return None

    def get(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        position = self._position(term)
        if position is None:
            return _EMPTY_I32, _EMPTY_I32
        start, end = self.offsets[position], self.offsets[position + 1]
        return self.docs[start:end], self.counts[start:end]

    @property
    def terms(self) -> list[str]:
        """Every term, in byte order (for inspection; queries never need the list)."""
        bounds = self.term_offsets.tolist()
        return [self.blob[bounds[i] : bounds[i + 1]].decode("utf-8", errors="surrogatepass") for i in range(len(bounds) - 1)]

    @classmethod
    def build(cls, documents: Iterable[Iterable[str]]) -> "Postings":
        builder = PostingsBuilder()
        for tokens in documents:
            builder.add(tokens)
        return builder.finish()


@dataclass
class _Batch:
    """Consecutive documents whose distinct terms filled one batch dictionary."""

    blob: bytes  # the batch's distinct terms in byte order, UTF-8, concatenated
    ends: array  # where each of those terms ends in `blob`
    term_ids: array  # of each (document, term) pair, documents in order: its term's rank among the batch's sorted terms
    counts: array  # occurrences of each pair

    def take_terms(self) -> tuple[bytes, array]:
        """Hand the sorted terms to the merge and drop them here: only the ids and counts are needed after."""
        terms = self.blob, self.ends
        self.blob, self.ends = b"", array("H")
        return terms


class PostingsBuilder:
    """Takes documents one at a time and returns their `Postings`, with per-document token totals.

    A dictionary of every distinct term costs about 120 bytes a term, more than the postings
    themselves, and would be the peak of a build. Terms are therefore gathered per batch of documents
    in a small dictionary, written out in byte order after the document that brings it to
    `batch_terms` terms, and the batches' sorted terms are merged at the end. The result does not
    depend on `batch_terms`.
    """

    def __init__(self, batch_terms: int = BATCH_TERMS):
        self.batch_terms = batch_terms
        self.lengths = array("q")  # tokens per document
        self.distinct = array("i")  # distinct terms per document
        self._batches: list[_Batch] = []
        self._vocab: dict[str, int] = {}
        # typically 2 bytes a pair each (see `_extend`), where a list would cost a Python int each
        self._term_ids = array("H")
        self._counts = array("H")

    def add(self, tokens: Iterable[str]) -> None:
        counter = Counter(tokens)
        vocab = self._vocab
        intern = vocab.setdefault
        # len(vocab) is read before each insertion, so new terms get consecutive ids
        self._term_ids = _extend(self._term_ids, [intern(token, len(vocab)) for token in counter])
        self._counts = _extend(self._counts, list(counter.values()))
        self.lengths.append(counter.total())
        self.distinct.append(len(counter))
        if len(vocab) >= self.batch_terms:
            self._close_batch()

    def _close_batch(self) -> None:
        vocab = self._vocab
        # Python orders str by code point, which is the byte order of their UTF-8 encodings
        ordered = sorted(vocab)
        size = len(ordered)
        rank = np.empty(size, dtype=np.int64)  # batch term id (first-seen order) -> position in byte order
        rank[np.fromiter(map(vocab.__getitem__, ordered), dtype=np.int64, count=size)] = np.arange(size, dtype=np.int64)
        if size:
            term_ids = _as_numpy(self._term_ids)
            term_ids[:] = rank[term_ids]  # in place: positions are below `size` as ids are
        blob = "".join(ordered).encode("utf-8", errors="surrogatepass")
        ends = array(np.dtype(narrowest(len(blob))).char, utf8_ends(ordered, blob).astype(narrowest(len(blob))).tobytes())
        self._batches.append(_Batch(blob, ends, self._term_ids, self._counts))
        self._vocab, self._term_ids, self._counts = {}, array("H"), array("H")

    def finish(self) -> Postings:
        if self._vocab or not self._batches:
            self._close_batch()
        batches, self._batches = self._batches, []
        blob, term_offsets, global_ids = _merge_sorted_terms([batch.take_terms() for batch in batches])
        size = len(term_offsets) - 1
        frequency = np.zeros(size, dtype=np.int64)
        largest_count = 0
        for batch, ids in zip(batches, global_ids):
            frequency[ids] += np.bincount(_as_numpy(batch.term_ids), minlength=len(ids))
            largest_count = max(largest_count, int(_as_numpy(batch.counts).max(initial=0)))
        pairs = int(frequency.sum())
        offsets = np.zeros(size + 1, dtype=narrowest(pairs))
        offsets[1:] = np.cumsum(frequency)
        del frequency
        docs = np.empty(pairs, dtype=narrowest(max(len(self.distinct) - 1, 0)))
        counts = np.empty(pairs, dtype=narrowest(largest_count))
        pair_ends = np.cumsum(_as_numpy(self.distinct), dtype=np.int64)  # pair p belongs to the first document ending after p
        free = offsets[:-1].copy()  # each term's next free slot
        first_pair = 0
        batches.reverse()
        global_ids.reverse()
        while batches:  # in document order, so each term's documents stay ascending
            batch, ids = batches.pop(), global_ids.pop()
            term_ids, batch_counts = _as_numpy(batch.term_ids), _as_numpy(batch.counts)
            for start in range(0, len(term_ids), SCATTER_PAIRS):  # bounded temporaries
                stop = min(start + SCATTER_PAIRS, len(term_ids))
                terms = ids[term_ids[start:stop]]
                order = np.argsort(terms, kind="stable")
                terms = terms[order]
                slots = free[terms] + (np.arange(len(terms)) - np.searchsorted(terms, terms))
                docs[slots] = np.searchsorted(pair_ends, first_pair + start + order, side="right")
                counts[slots] = batch_counts[start:stop][order]
                last_of_term = np.flatnonzero(np.append(terms[1:] != terms[:-1], True))
                free[terms[last_of_term]] = slots[last_of_term] + 1
            first_pair += len(term_ids)
        return Postings(blob=blob, term_offsets=term_offsets.astype(narrowest(len(blob)), copy=False),
                        offsets=offsets, docs=docs, counts=counts)


def _merge_sorted_terms(vocabularies: list[tuple[bytes, array]]) -> tuple[bytes, np.ndarray, list[np.ndarray]]:
    """The union of sorted vocabularies (blob, term ends) in byte order, as a blob and its term
    offsets, and for each vocabulary the position of each of its terms in that union."""
    if len(vocabularies) == 1:
        only_blob, only_ends = vocabularies[0]
        offsets = np.zeros(len(only_ends) + 1, dtype=np.dtype(only_ends.typecode))
        offsets[1:] = _as_numpy(only_ends)
        return only_blob, offsets, [np.arange(len(only_ends), dtype=np.int32)]
    positions = [array("i") for _ in vocabularies]
    merged = heapq.merge(*[zip(map(vocabulary.__getitem__, map(slice, chain((0,), term_ends), term_ends)), repeat(number))
                           for number, (vocabulary, term_ends) in enumerate(vocabularies)])
    blob = io.BytesIO()  # its value is handed over without a copy, unlike a bytearray's
    ends = array(np.dtype(narrowest(sum(len(vocabulary) for vocabulary, _ in vocabularies))).char, [0])
    previous = None
    for term, number in merged:
        if term != previous:
            ends.append(ends[-1] + blob.write(term))
            previous = term
        positions[number].append(len(ends) - 2)
    return blob.getvalue(), np.frombuffer(ends, dtype=ends.typecode), [_as_numpy(position) for position in positions]


@dataclass
class LexicalIndex:
    """Whole-file indexes over a snapshot's text files (sorted paths = document ids)."""

    paths: list[str]
    doc_lengths: np.ndarray
    content: Postings
    path_tokens: Postings
    words: Postings

    @classmethod
    def build(cls, text_files: Iterable[tuple[str, str]], progress: Callable[[int, int | None], None] | None = None) -> "LexicalIndex":
        """One tokenizer at a time over the files, each file in pieces (see `stream_tokens`);
        `progress` hears each file of the two passes counted."""
        files = list(text_files)
        paths = [path for path, _ in files]
        words = PostingsBuilder()
        for number, (_, text) in enumerate(files, start=1):
            words.add(stream_tokens(word_runs, text))
            if progress is not None:
                progress(number, 2 * len(files))
        word_postings = words.finish()  # first: it is the larger of the two builds
        del words
        content = PostingsBuilder()
        for number, (_, text) in enumerate(files, start=len(files) + 1):
            content.add(stream_tokens(bench_tokens, text))
            if progress is not None:
                progress(number, 2 * len(files))
        return cls(
            paths=paths,
            doc_lengths=np.array(content.lengths, dtype=np.int64),
            content=content.finish(),
            path_tokens=Postings.build(bench_tokens(path) for path in paths),
            words=word_postings,
        )

    @cached_property
    def lowered_paths(self) -> list[str]:
        return [path.lower() for path in self.paths]
