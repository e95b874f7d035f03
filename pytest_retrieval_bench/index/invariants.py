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


def _ascending_within(name: str, values: np.ndarray, offsets: np.ndarray) -> None:
    """Strictly ascending inside each row of CSR `offsets` (a row may start lower than the last ended)."""
    if len(values) > 1:
        inside = np.ones(len(values) + 1, dtype=bool)
        inside[offsets] = False
        if bool((inside[1:-1] & (values[1:] <= values[:-1])).any()):
            raise ValueError(f"{name} are not strictly ascending within a row")


def check_grep_arrays(arrays: dict[str, np.ndarray], size: int) -> None:
    """A grep index's arrays over `size` files (see `arms/agents/grep_index.py`): each run's
    (file, occurrences) rows, the runs joined longest first with single spaces between them and
    nothing but run characters inside them, and the runs holding each trigram, ascending."""
    rows, files, counts = (_integers(name, arrays[name]) for name in ("rows", "files", "counts"))
    _offsets("rows", rows, len(files))
    _length("counts", counts, len(files))
    _within("files", files, size)
    if len(counts) and int(counts.min()) < 1:
        raise ValueError("counts holds a count below 1")
    runs = len(rows) - 1
    by_length, longest_first = _integers("by_length", arrays["by_length"]), _integers("longest_first", arrays["longest_first"])
    _length("by_length", by_length, runs)
    _within("by_length", by_length, runs)
    if runs and int(np.bincount(by_length.astype(np.int64, copy=False), minlength=runs).max()) != 1:
        raise ValueError("by_length is not a permutation of the runs")
    _length("longest_first", longest_first, runs)
    if runs and (int(longest_first.min()) < 1 or bool((longest_first[1:] > longest_first[:-1]).any())):
        raise ValueError("longest_first holds an empty run or is not longest first")
    joined = arrays["joined"]
    if not isinstance(joined, np.ndarray) or joined.dtype != np.uint8 or joined.ndim != 1:
        raise ValueError("joined is not a byte array")
    _length("joined", joined, int(longest_first.sum()) + max(runs - 1, 0))
    separator = np.zeros(len(joined), dtype=bool)
    if runs > 1:
        separator[np.cumsum(longest_first[:-1] + 1) - 1] = True
    run_byte = ((joined >= 97) & (joined <= 122)) | ((joined >= 48) & (joined <= 57)) | (joined == 95)
    if bool((separator & (joined != 32)).any()) or bool((~separator & ~run_byte).any()):
        raise ValueError("joined is not the runs, each of run characters, one space apart")
    codes, trigram_rows, places = (_integers(name, arrays[name]) for name in ("trigram_codes", "trigram_rows", "trigram_places"))
    _within("trigram_codes", codes, 1 << 24)
    if len(codes) > 1 and bool((codes[1:] <= codes[:-1]).any()):
        raise ValueError("trigram_codes are not strictly ascending")
    _length("trigram_rows", trigram_rows, len(codes) + 1)
    _offsets("trigram_rows", trigram_rows, len(places))
    _within("trigram_places", places, runs)
    _ascending_within("trigram_places", places, trigram_rows)
