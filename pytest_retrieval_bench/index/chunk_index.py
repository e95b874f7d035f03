"""The chunk-level index the bench's own reference rankers read: one document per chunk row.

`ChunkIndex` keeps each row's bench-token counts (the text `chunk_text` makes of it) as
postings, its labels (path, symbol, chunk id) as ids into distinct values, and the bench's
tie-break order; a tree's is read off its whole-file `LexicalIndex` (`ChunkIndex.of_files`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath
from typing import Any, Iterable, Sequence

import numpy as np

from pytest_retrieval_bench.index.distinct import run_starts
from pytest_retrieval_bench.index.lazy_rows import LazyRows
from pytest_retrieval_bench.index.postings import SCATTER_PAIRS, LexicalIndex, Postings, PostingsBuilder, TermPostings
from pytest_retrieval_bench.index.substrings import Substrings
from pytest_retrieval_bench.index.tokens import bench_tokens, stream_tokens


def chunk_parts(row: dict[str, Any], with_text: bool = True) -> list[str]:
    """The parts `chunk_text` joins: path, symbol, kind (and text), empty ones dropped."""
    fields = (row.get("path"), row.get("symbol"), row.get("kind"), row.get("text")) if with_text else (row.get("path"), row.get("symbol"), row.get("kind"))
    return [str(part) for part in fields if part]


def chunk_text(row: dict[str, Any]) -> str:
    """The bench's `chunk_text`: path, symbol, kind and text joined by spaces, empty parts dropped."""
    return " ".join(chunk_parts(row))


def _tiebreak(paths: list[str], chunk_ids: list[str]) -> np.ndarray:
    """Each chunk's rank by (path, chunk id): the bench's order among equal scores."""
    order = sorted(range(len(paths)), key=lambda i: (paths[i], chunk_ids[i]))
    tiebreak = np.empty(len(paths), dtype=np.int64)
    tiebreak[np.asarray(order, dtype=np.int64)] = np.arange(len(paths), dtype=np.int64)
    return tiebreak


@dataclass
class RowLabels:
    """What a chunk index keeps of its rows besides their tokens: path, chunk id and symbol of each."""

    paths: list[str]
    chunk_ids: list[str]
    symbols: list[str]

    @classmethod
    def of(cls, rows: Iterable[dict[str, Any]]) -> "RowLabels":
        labels = cls(paths=[], chunk_ids=[], symbols=[])
        labels.extend(rows)
        return labels

    def extend(self, rows: Iterable[dict[str, Any]]) -> None:
        """Take the labels of further rows, in order."""
        for row in rows:
            self.paths.append(str(row.get("path", "")))
            self.chunk_ids.append(str(row.get("chunk_id", "")))
            self.symbols.append(str(row.get("symbol") or ""))

    def extend_path(self, path: str, rows: list[dict[str, Any]], symbols: list[str]) -> None:
        """`extend` of rows whose path is `path` and whose symbols are already taken (each
        `str(symbol or "")`), a list at a time rather than a row at a time."""
        self.paths += [path] * len(rows)
        self.chunk_ids += [str(row.get("chunk_id", "")) for row in rows]
        self.symbols += symbols


@dataclass
class ChunkIndex:
    """Chunk-level postings in the chunk file's order, for the bench's reference rankers.

    `paths`, `chunk_ids` and `symbols` have one entry per row (lists, or `LazyRows` when the
    index comes from the cache)."""

    paths: Sequence[str]
    chunk_ids: Sequence[str]
    symbols: Sequence[str]
    tiebreak: np.ndarray
    token_counts: np.ndarray
    distinct_counts: np.ndarray
    postings: TermPostings

    @classmethod
    def build(cls, rows: list[dict[str, Any]]) -> "ChunkIndex":
        """The reference build, one row at a time (`release_build` gives the same from shared tokens)."""
        builder = PostingsBuilder()
        for row in rows:
            builder.add(stream_tokens(bench_tokens, chunk_text(row)))
        token_counts = np.array(builder.lengths, dtype=np.int64)
        distinct_counts = np.array(builder.distinct, dtype=np.int64)
        return cls.from_counts(RowLabels.of(rows), token_counts, distinct_counts, builder.finish())

    @classmethod
    def from_counts(cls, labels: "RowLabels", token_counts: np.ndarray, distinct_counts: np.ndarray, postings: TermPostings) -> "ChunkIndex":
        """The index of the rows `labels` names, given their chunk texts' token totals, distinct terms and postings."""
        return cls(
            paths=labels.paths,
            chunk_ids=labels.chunk_ids,
            symbols=labels.symbols,
            tiebreak=_tiebreak(labels.paths, labels.chunk_ids),
            token_counts=token_counts,
            distinct_counts=distinct_counts,
            postings=postings,
        )

    @classmethod
    def of_files(cls, lexical: LexicalIndex) -> "ChunkIndex":
        """The chunk index of `file_chunks` of the same files, read off their whole-file index.

        A file chunk's text is `path file text`, whose bench tokens are the path's, then `file`,
        then the text's; so its postings are sums of the content and path postings, and a tree
        needs no second index (nor the time and memory to build one). Equal in values to
        `ChunkIndex.build(file_chunks(...))`, term for term (tested); postings may come back in a
        wider integer type.
        """
        size = len(lexical.paths)
        content, path_tokens = lexical.content, lexical.path_tokens
        path_lengths = np.bincount(path_tokens.docs, weights=path_tokens.counts, minlength=size).astype(np.int64)
        distinct = np.zeros(size, dtype=np.int64)
        for start in range(0, len(content.docs), SCATTER_PAIRS):  # bincount widens its input: in windows
            distinct += np.bincount(content.docs[start : start + SCATTER_PAIRS], minlength=size)
        for position, term in enumerate(path_tokens.terms):  # path terms the text lacks add one each
            start, end = path_tokens.offsets[position], path_tokens.offsets[position + 1]
            path_docs = path_tokens.docs[start:end]
            distinct[path_docs[~np.isin(path_docs, content.get(term)[0])]] += 1
        has_kind = np.zeros(size, dtype=bool)
        has_kind[content.get(FILE_KIND)[0]] = True
        has_kind[path_tokens.get(FILE_KIND)[0]] = True
        distinct += ~has_kind
        return cls(
            paths=lexical.paths,
            chunk_ids=lexical.paths,
            symbols=[""] * size,
            tiebreak=_tiebreak(lexical.paths, lexical.paths),
            token_counts=lexical.doc_lengths + path_lengths + 1,
            distinct_counts=distinct,
            postings=FileChunkPostings(content, path_tokens, size),
        )

    @property
    def label_values(self) -> "LabelValues":
        """The rows' paths and symbols as distinct values and each row's value id (built on first
        use, or kept with the index in the cache)."""
        cached = self.__dict__.get("_label_values")
        if cached is None:
            cached = self.__dict__["_label_values"] = LabelValues.of(self.paths, self.symbols)
        return cached

    @classmethod
    def from_label_values(cls, values: "LabelValues", chunk_ids: Sequence[str], tiebreak: np.ndarray, token_counts: np.ndarray,
                          distinct_counts: np.ndarray, postings: TermPostings) -> "ChunkIndex":
        """The index as the cache keeps it: the rows' paths and symbols as ids into distinct values
        (their per-row lists are made only if something reads them: the rankers do not)."""
        size = len(values.path_ids)
        index = cls(paths=LazyRows(size, values.row_paths), chunk_ids=chunk_ids, symbols=LazyRows(size, values.row_symbols),
                    tiebreak=tiebreak, token_counts=token_counts, distinct_counts=distinct_counts, postings=postings)
        index.__dict__["_label_values"] = values
        return index


@dataclass
class LabelValues:
    """A release has a file's path on each of its rows and symbols that repeat: a query's substring
    tests are made once per distinct value, and reach the rows through their value ids."""

    path_ids: np.ndarray
    paths: list[str]  # distinct paths, in order of first row
    basenames: list[str]  # per distinct path: the lowered last component
    symbol_ids: np.ndarray
    symbols: list[str]  # distinct symbols, in order of first row

    @classmethod
    def of(cls, paths: list[str], symbols: list[str]) -> "LabelValues":
        path_ids: dict[str, int] = {}
        symbol_ids: dict[str, int] = {}
        path_of_row = np.fromiter((path_ids.setdefault(path, len(path_ids)) for path in paths), dtype=np.int32, count=len(paths))
        symbol_of_row = np.fromiter((symbol_ids.setdefault(symbol, len(symbol_ids)) for symbol in symbols), dtype=np.int32, count=len(symbols))
        return cls(path_ids=path_of_row, paths=list(path_ids), basenames=[PurePosixPath(path).name.lower() for path in path_ids],
                   symbol_ids=symbol_of_row, symbols=list(symbol_ids))

    @cached_property
    def lowered_paths(self) -> Substrings:
        """The distinct paths, lowered, for substring tests."""
        return Substrings([path.lower() for path in self.paths])

    @cached_property
    def lowered_basenames(self) -> Substrings:
        return Substrings(self.basenames)

    @cached_property
    def lowered_symbols(self) -> Substrings:
        return Substrings([symbol.lower() for symbol in self.symbols])

    @cached_property
    def path_groups(self) -> "PathGroups":
        return PathGroups.of(self.path_ids)

    def row_paths(self) -> list[str]:
        """Each row's path, from the ids (the one string of each distinct path, shared)."""
        return list(map(self.paths.__getitem__, self.path_ids.tolist()))

    def row_symbols(self) -> list[str]:
        return list(map(self.symbols.__getitem__, self.symbol_ids.tolist()))


@dataclass(frozen=True)
class PathGroups:
    """The rows grouped by path id: `order` lists row positions path by path (each path's rows in
    row order), `starts` where each path's run begins in it, `path_ids` the path of each run."""

    order: np.ndarray
    starts: np.ndarray
    path_ids: np.ndarray

    @classmethod
    def of(cls, row_path_ids: np.ndarray) -> "PathGroups":
        order = np.argsort(row_path_ids, kind="stable")
        grouped = row_path_ids[order]
        starts = np.flatnonzero(run_starts(grouped))
        return cls(order=order, starts=starts, path_ids=grouped[starts])


FILE_KIND = "file"


def file_chunks(text_files: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """What sources without chunk rows stand for: one `kind: file` chunk per text file, chunk_id =
    path (`ChunkIndex.of_files` indexes them without building these rows)."""
    return [{"path": path, "kind": FILE_KIND, "symbol": "", "chunk_id": path, "text": text} for path, text in text_files]


@dataclass
class FileChunkPostings:
    """Postings of the file chunks, from the whole-file content and path postings (see `ChunkIndex.of_files`)."""

    content: Postings
    path_tokens: Postings
    size: int

    def get(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        content_docs, content_counts = self.content.get(term)
        path_docs, path_counts = self.path_tokens.get(term)
        if term == FILE_KIND:  # every file chunk holds its kind once
            counts = np.ones(self.size, dtype=np.int64)
            counts[content_docs] += content_counts
            counts[path_docs] += path_counts
            return np.arange(self.size, dtype=np.int64), counts
        if not len(path_docs):
            return content_docs, content_counts
        # both lists are ascending: add the path counts in place, insert the documents content lacks
        at = np.searchsorted(content_docs, path_docs)
        found = at < len(content_docs)
        found[found] = content_docs[at[found]] == path_docs[found]
        counts = content_counts.astype(np.int64)
        counts[at[found]] += path_counts[found]
        new = ~found
        return np.insert(content_docs, at[new], path_docs[new]), np.insert(counts, at[new], path_counts[new])
