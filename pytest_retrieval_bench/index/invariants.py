"""The structural invariants an index's queries rely on, checked when an index is loaded.

An entry's checksum proves its bytes are the bytes written, not that the writer was right (an
older or foreign writer, a hand-made entry): postings naming a document past the last one, or
offsets running backwards, would load and then fail queries with an IndexError that looks like
an arm's bug, or silently score the wrong documents (a vocabulary out of order, which the
lookup's bisection needs sorted; a path twice). Every check is vectorised: numpy passes over
the arrays, a few rounds for the vocabulary's order, one set of the names (a few milliseconds
on a 20,000-file snapshot, against a rebuild's seconds: `benchmarks/cache_checks.py`). A
violation is a ValueError naming it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_retrieval_bench.index.chunk_index import ChunkIndex
from pytest_retrieval_bench.index.postings import LexicalIndex, Postings
from pytest_retrieval_bench.index.repomap import KIND_CODES, RepoMapIndex


def _integers(name: str, values: Any) -> np.ndarray:
    if not isinstance(values, np.ndarray) or values.ndim != 1 or values.dtype.kind not in "iu":
        raise ValueError(f"{name} is not a one-dimensional integer array")
    return values


def _within(name: str, values: np.ndarray, size: int) -> None:
    if len(values) and (int(values.min()) < 0 or int(values.max()) >= size):
        raise ValueError(f"{name} holds {int(values.min())}..{int(values.max())}, outside 0..{size - 1}")


def _names(name: str, values: Any) -> None:
    """Distinct strings: paths a ranking names (one per document) or distinct values."""
    if (values and set(map(type, values)) != {str}) or len(set(values)) != len(values):
        raise ValueError(f"{name} are not distinct strings")


def _length(name: str, values: Any, size: int) -> None:
    if len(values) != size:
        raise ValueError(f"{name} has {len(values)} entries, not {size}")


def _offsets(name: str, offsets: np.ndarray, end: int) -> None:
    """CSR offsets: from 0 to `end`, never decreasing."""
    _integers(name, offsets)
    if not len(offsets) or int(offsets[0]) != 0 or int(offsets[-1]) != end:
        raise ValueError(f"{name} does not run from 0 to {end}")
    if len(offsets) > 1 and bool((offsets[1:] < offsets[:-1]).any()):
        raise ValueError(f"{name} decreases")


#: entry n keeps the first n bytes of a big-endian 8-byte word
_KEEP = np.array([((1 << (8 * n)) - 1) << (8 * (8 - n)) for n in range(9)], dtype=np.uint64)


def _words(at: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The 8 bytes of each term from `starts` (zero past its end) as integers that compare as the
    bytes do; `at[i]` is the big-endian word at byte i of the zero-padded blob."""
    return at[starts].astype(np.uint64) & _KEEP[np.clip(ends - starts, 0, 8)]


def _strictly_sorted(name: str, blob: bytes, bounds: np.ndarray) -> None:
    """Every term above the one before in byte order, as the lookup's bisection needs: compared 8
    bytes at a time, each round only the pairs the round before left equal."""
    if len(bounds) < 3:
        return
    padded = np.zeros(len(blob) + 8, dtype=np.uint8)
    padded[: len(blob)] = np.frombuffer(blob, dtype=np.uint8)
    at = np.ndarray(shape=(len(blob) + 1,), dtype=">u8", buffer=padded, strides=(1,))  # unaligned, overlapping words
    starts, ends = bounds[:-1].astype(np.int64), bounds[1:].astype(np.int64)
    words = _words(at, starts, ends)
    first, second = words[:-1], words[1:]
    left = np.arange(len(starts) - 1)
    offset = 0
    while True:
        right = left + 1
        ended = (starts[left] + offset + 8 >= ends[left]) & (starts[right] + offset + 8 >= ends[right])
        tied = first == second
        if bool((first > second).any()) or bool((tied & ended & (ends[left] - starts[left] >= ends[right] - starts[right])).any()):
            raise ValueError(f"{name} terms are not in strictly increasing byte order")
        left = left[tied & ~ended]
        if not len(left):
            return
        offset += 8
        first, second = _words(at, starts[left] + offset, ends[left]), _words(at, starts[left + 1] + offset, ends[left + 1])


def check_postings(name: str, postings: Postings, documents: int) -> None:
    """Terms' bounds in the blob and their order, each term's document range, ids within
    `documents`, ascending within a term."""
    _offsets(f"{name}.term_offsets", postings.term_offsets, len(postings.blob))
    _strictly_sorted(name, postings.blob, postings.term_offsets)
    _offsets(f"{name}.offsets", postings.offsets, len(_integers(f"{name}.docs", postings.docs)))
    _length(f"{name}.offsets", postings.offsets, len(postings.term_offsets))
    _length(f"{name}.counts", _integers(f"{name}.counts", postings.counts), len(postings.docs))
    docs = postings.docs
    _within(f"{name}.docs", docs, documents)
    if len(docs) > 1:  # a list may restart (its document id not above the one before) only at a term's first pair
        inside = np.ones(len(docs) + 1, dtype=bool)  # pair i is not its term's first (offsets may end at len(docs))
        inside[postings.offsets] = False
        falls = docs[1:] <= docs[:-1]
        if bool(np.logical_and(falls, inside[1:-1], out=falls).any()):
            raise ValueError(f"{name}.docs are not ascending within a term")


def check_index(index: LexicalIndex | ChunkIndex | RepoMapIndex) -> None:
    """Raise ValueError naming the first invariant `index` breaks."""
    if isinstance(index, RepoMapIndex):
        size = len(index.paths)
        _names("paths", index.paths)
        _length("kinds", _integers("kinds", index.kinds), size)
        _within("kinds", index.kinds, max(KIND_CODES.values()) + 1)
        _length("token_sizes", _integers("token_sizes", index.token_sizes), size)
        _length("edge_offsets", index.edge_offsets, size + 1)
        _offsets("edge_offsets", index.edge_offsets, len(_integers("edge_targets", index.edge_targets)))
        _within("edge_targets", index.edge_targets, size)
        _length("edge_weights", index.edge_weights, len(index.edge_targets))
        check_postings("postings", index.postings, size)
    elif isinstance(index, LexicalIndex):
        size = len(index.paths)
        _names("paths", index.paths)
        _length("doc_lengths", _integers("doc_lengths", index.doc_lengths), size)
        for name in ("content", "path_tokens", "words"):
            check_postings(name, getattr(index, name), size)
    else:
        values = index.label_values
        size = len(_integers("path_ids", values.path_ids))
        _length("symbol_ids", _integers("symbol_ids", values.symbol_ids), size)
        _length("basenames", values.basenames, len(values.paths))
        _names("paths", values.paths)
        for name in ("symbols", "basenames"):  # repeats are harmless here: rows find their values by id
            if getattr(values, name) and set(map(type, getattr(values, name))) != {str}:
                raise ValueError(f"{name} are not strings")
        _within("path_ids", values.path_ids, len(values.paths))
        _within("symbol_ids", values.symbol_ids, len(values.symbols))
        for name in ("tiebreak", "token_counts", "distinct_counts"):
            _length(name, _integers(name, getattr(index, name)), size)
        _within("tiebreak", index.tiebreak, size)
        if size and int(np.bincount(index.tiebreak.astype(np.int64, copy=False), minlength=size).max()) != 1:
            raise ValueError("tiebreak is not a permutation of the rows")
        if not isinstance(index.postings, Postings):
            raise ValueError("chunk postings are not a postings table")
        check_postings("postings", index.postings, size)
