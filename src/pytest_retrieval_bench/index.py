"""Per-snapshot lexical indexes: a vocabulary and numpy postings, built once, queried by arrays.

`LexicalIndex` serves grep, grep-ident and both BM25 arms over whole text files; `ChunkIndex`
serves the bench's own chunk-level reference rankers. Both are plain arrays so they can be
cached on disk (see `index_cache`) and so that a query touches only its terms' postings.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Iterable, Iterator

import numpy as np

from pytest_retrieval_bench.arms.tokens import bench_tokens, word_runs

_EMPTY_I32 = np.zeros(0, dtype=np.int32)


def _as_int32(values: array) -> np.ndarray:
    return np.frombuffer(values, dtype=np.int32) if len(values) else np.zeros(0, dtype=np.int32)


@dataclass
class Postings:
    """Compressed term -> (document ids, counts) lists; documents ascending within a term.

    The vocabulary is one UTF-8 blob of the terms in byte order plus their offsets, searched by
    bisection: a dictionary of Python strings would cost more memory than the text it indexes,
    and a query looks up only a few dozen terms.
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
        vocab: dict[str, int] = {}
        term_ids = array("i")  # 4 bytes an entry instead of a Python int each: peak memory
        doc_ids = array("i")
        counts = array("i")
        intern = vocab.setdefault
        for doc_id, tokens in enumerate(documents):
            counter = Counter(tokens)
            # len(vocab) is read before each insertion, so new terms get consecutive ids
            term_ids.extend([intern(token, len(vocab)) for token in counter])
            counts.extend(counter.values())
            doc_ids.extend([doc_id] * len(counter))
        # Python orders str by code point, which is the byte order of their UTF-8 encodings, so
        # the terms sort without an encoded copy of each; ids are then renumbered to that order.
        ordered = sorted(vocab)
        size = len(ordered)
        rank = np.empty(size, dtype=np.int32)
        rank[np.fromiter((vocab[term] for term in ordered), dtype=np.int64, count=size)] = np.arange(size, dtype=np.int32)
        del vocab
        term_array = rank[_as_int32(term_ids)]
        del term_ids, rank
        order = np.argsort(term_array, kind="stable")
        offsets = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(np.bincount(term_array, minlength=size), out=offsets[1:])
        del term_array
        term_offsets = np.zeros(size + 1, dtype=np.int64)
        lengths = (len(term) if term.isascii() else len(term.encode("utf-8", errors="surrogatepass")) for term in ordered)
        np.cumsum(np.fromiter(lengths, dtype=np.int64, count=size), out=term_offsets[1:])
        blob = "".join(ordered).encode("utf-8", errors="surrogatepass")
        del ordered
        return cls(
            blob=blob,
            term_offsets=term_offsets,
            offsets=offsets,
            docs=_as_int32(doc_ids)[order],
            counts=_as_int32(counts)[order],
        )


@dataclass
class LexicalIndex:
    """Whole-file indexes over a snapshot's text files (sorted paths = document ids)."""

    paths: list[str]
    doc_lengths: np.ndarray
    content: Postings
    path_tokens: Postings
    words: Postings

    @classmethod
    def build(cls, text_files: Iterable[tuple[str, str]]) -> "LexicalIndex":
        """Tokenizes one file at a time, so only one file's tokens are ever held."""
        files = list(text_files)
        paths = [path for path, _ in files]
        lengths: list[int] = []

        def content_documents() -> Iterator[list[str]]:
            for _, text in files:
                tokens = bench_tokens(text)
                lengths.append(len(tokens))
                yield tokens

        content = Postings.build(content_documents())
        words = Postings.build(word_runs(text) for _, text in files)
        return cls(
            paths=paths,
            doc_lengths=np.asarray(lengths, dtype=np.int64),
            content=content,
            path_tokens=Postings.build(bench_tokens(path) for path in paths),
            words=words,
        )

    @property
    def lowered_paths(self) -> list[str]:
        cached = self.__dict__.get("_lowered")
        if cached is None:
            cached = self.__dict__["_lowered"] = [path.lower() for path in self.paths]
        return cached


def chunk_text(row: dict[str, Any]) -> str:
    """The bench's `chunk_text`: path, symbol, kind and text joined by spaces, empty parts dropped."""
    return " ".join(str(part) for part in (row.get("path"), row.get("symbol"), row.get("kind"), row.get("text")) if part)


@dataclass
class ChunkIndex:
    """Chunk-level postings in the chunk file's order, for the bench's reference rankers."""

    paths: list[str]
    chunk_ids: list[str]
    symbols: list[str]
    tiebreak: np.ndarray
    token_counts: np.ndarray
    distinct_counts: np.ndarray
    postings: Postings

    @classmethod
    def build(cls, rows: list[dict[str, Any]]) -> "ChunkIndex":
        paths = [str(row.get("path", "")) for row in rows]
        chunk_ids = [str(row.get("chunk_id", "")) for row in rows]
        order = sorted(range(len(rows)), key=lambda i: (paths[i], chunk_ids[i]))
        tiebreak = np.empty(len(rows), dtype=np.int64)
        tiebreak[np.asarray(order, dtype=np.int64)] = np.arange(len(rows), dtype=np.int64)
        token_counts: list[int] = []
        distinct_counts: list[int] = []

        def documents() -> Iterator[list[str]]:
            for row in rows:
                tokens = bench_tokens(chunk_text(row))
                token_counts.append(len(tokens))
                distinct_counts.append(len(set(tokens)))
                yield tokens

        postings = Postings.build(documents())
        return cls(
            paths=paths,
            chunk_ids=chunk_ids,
            symbols=[str(row.get("symbol") or "") for row in rows],
            tiebreak=tiebreak,
            token_counts=np.asarray(token_counts, dtype=np.int64),
            distinct_counts=np.asarray(distinct_counts, dtype=np.int64),
            postings=postings,
        )

    @property
    def basenames(self) -> list[str]:
        cached = self.__dict__.get("_basenames")
        if cached is None:
            cached = self.__dict__["_basenames"] = [PurePosixPath(path).name.lower() for path in self.paths]
        return cached


def file_chunks(text_files: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """For sources without chunk rows: one `kind: file` chunk per text file, chunk_id = path."""
    return [{"path": path, "kind": "file", "symbol": "", "chunk_id": path, "text": text} for path, text in text_files]
