"""A snapshot's whole-file and chunk indexes from one tokenization of each text.

A release holds most of its text twice: each file as its `file` row, and cut at symbol starts
into `symbol` rows whose text is a line range of that file. The bench tokenizer never joins
tokens across a newline (nor across the spaces `chunk_text` puts between a row's path, symbol,
kind and text), so a symbol row that is a line range of its file row has exactly the tokens of
that range: they are sliced out of the file's word-run ids instead of read again. Whether a row
is such a range is checked on the text itself, never assumed; every other row (a symbol past the
end of a truncated file row, a binary file's row, a row of unusual shape) is tokenized whole, as
the bench does. Texts are read once, by the word-run regex; bench tokens come from the word runs
(see `word_tokens`). The result equals `LexicalIndex.build` and `ChunkIndex.build` value for value.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

from pytest_retrieval_bench.index.pair_counts import BATCH_TOKENS, PairCounts, postings_of_batches
from pytest_retrieval_bench.index.postings import ChunkIndex, LexicalIndex, chunk_parts
from pytest_retrieval_bench.index.term_ids import TermIds
from pytest_retrieval_bench.index.tokens import PIECE_CHARS, line_pieces, word_runs
from pytest_retrieval_bench.index.word_tokens import WordTokens

OTHER_ROWS_AT_ONCE = 256
"""Rows read whole are looked up together, a few at a time (one id lookup per group, bounded strings)."""


def _line_range(row: dict[str, Any], lines: list[str]) -> tuple[int, int] | None:
    """(first line, end line) of `lines`, 0-based end-exclusive, when the row's text is that range
    as the bench's corpus builder cuts it (lines joined by newlines, then stripped); else None."""
    start, end, text = row.get("start_line"), row.get("end_line"), row.get("text")
    if type(start) is not int or type(end) is not int or not isinstance(text, str) or not 1 <= start <= end <= len(lines):
        return None
    return (start - 1, end) if "\n".join(lines[start - 1 : end]).strip() == text else None


class _Build:
    """The state of one build: the vocabularies, the counts, and which chunk rows are done."""

    def __init__(self, paths: list[str], rows: list[dict[str, Any]] | None, lexical: bool, batch_tokens: int):
        self.words = TermIds()
        self.bench = TermIds()
        self.files = PairCounts(len(paths), batch_tokens) if lexical else None
        self.rows = rows
        self.chunks = PairCounts(len(rows), batch_tokens) if rows is not None else None
        self.done = bytearray(len(rows)) if rows is not None else bytearray()
        self._parts: dict[str, np.ndarray] = {}
        self.file_row: dict[str, int] = {}
        self.symbol_rows: dict[str, list[int]] = {}
        for number, row in enumerate(rows or ()):
            if row.get("kind") == "file":
                self.file_row.setdefault(row.get("path"), number)  # type: ignore[arg-type]
            else:
                self.symbol_rows.setdefault(row.get("path"), []).append(number)  # type: ignore[arg-type]

    def word_ids(self, text: str) -> np.ndarray:
        """The word-run ids of `text`, read a piece at a time so a long text's runs are never all held as strings."""
        pieces = [self.words.of(word_runs(piece)) for piece in line_pieces(text)]
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def split_word_ids(self, texts: list[str]) -> list[np.ndarray]:
        """`word_ids` of each of `texts` (pieces of one file, or short rows), with one id lookup for all."""
        if sum(map(len, texts)) > PIECE_CHARS:
            return [self.word_ids(text) for text in texts]
        runs = [word_runs(text) for text in texts]
        ids = self.words.of(list(chain.from_iterable(runs)))
        return np.split(ids, np.cumsum([len(found) for found in runs[:-1]])) if len(texts) > 1 else [ids]

    def head(self, row: dict[str, Any]) -> list[np.ndarray]:
        """The word-run ids of the row's path, symbol and kind parts (each distinct part read once)."""
        found = []
        for part in chunk_parts(row, with_text=False):
            ids = self._parts.get(part)
            if ids is None:
                ids = self._parts[part] = self.word_ids(part)
            found.append(ids)
        return found

    def add_file(self, doc: int, path: str, text: str) -> None:
        """Read one file once; count it for the whole-file indexes and for its chunk rows."""
        rows = self.rows
        ranges: list[tuple[int, int, int]] = []
        lines: list[str] = []
        if rows is not None and path in self.symbol_rows:
            lines = text.split("\n")
            for number in self.symbol_rows[path]:
                found = _line_range(rows[number], lines)
                if found is not None:
                    ranges.append((number, *found))
        if ranges:
            cuts = sorted({0, len(lines), *(line for _, first, end in ranges for line in (first, end))})
            starts = np.zeros(len(lines) + 1, dtype=np.int64)
            np.cumsum(np.fromiter(map(len, lines), dtype=np.int64, count=len(lines)) + 1, out=starts[1:])
            bounds = starts[cuts].tolist()
            pieces = self.split_word_ids([text[a:b] for a, b in zip(bounds, bounds[1:])])
            run_at = dict(zip(cuts, np.cumsum([0, *map(len, pieces)]).tolist()))
            ids = np.concatenate(pieces)
        else:
            ids = self.word_ids(text)
        if self.files is not None:
            self.files.add(doc, ids)
        if self.chunks is None or rows is None:
            return
        number = self.file_row.get(path)
        if number is not None and rows[number].get("text") == text:
            self.chunks.add(number, *self.head(rows[number]), ids)
            self.done[number] = 1
        for number, first, end in ranges:
            self.chunks.add(number, *self.head(rows[number]), ids[run_at[first] : run_at[end]])
            self.done[number] = 1

    def add_other_rows(self) -> None:
        """The chunk rows no file's ids could serve, read whole."""
        if self.chunks is None or self.rows is None:
            return
        left = [position for position, done in enumerate(self.done) if not done]
        for start in range(0, len(left), OTHER_ROWS_AT_ONCE):
            numbers = left[start : start + OTHER_ROWS_AT_ONCE]
            texts = [str(text) if (text := self.rows[number].get("text")) else "" for number in numbers]
            for number, ids in zip(numbers, self.split_word_ids(texts)):
                self.chunks.add(number, *self.head(self.rows[number]), ids)


def build_indexes(texts: dict[str, str], rows: list[dict[str, Any]] | None, lexical: bool,
                  batch_tokens: int = BATCH_TOKENS) -> tuple[LexicalIndex | None, ChunkIndex | None]:
    """The `LexicalIndex` of the text files (when `lexical`) and the `ChunkIndex` of `rows` (when
    given), each text read once for both. `batch_tokens` changes memory, never the result."""
    paths = sorted(texts)
    build = _Build(paths, rows, lexical, batch_tokens)
    for doc, path in enumerate(paths):
        build.add_file(doc, path, texts[path])
    build.add_other_rows()
    path_counts = PairCounts(len(paths), batch_tokens)
    if lexical:
        for doc, path in enumerate(paths):
            path_counts.add(doc, build.word_ids(path))
    build.words.forget_ids()  # every word run is numbered: only the terms are needed now
    to_bench = WordTokens(build.words, build.bench)
    lexical_index = chunk_index = None
    if build.files is not None:
        batches = build.files.batches()
        word_postings, _ = postings_of_batches(batches, len(paths), build.words, batch_tokens)
        doc_lengths = to_bench.totals(batches, len(paths))
        batches = to_bench.expand(batches)
        path_batches = to_bench.expand(path_counts.batches())
        build.bench.forget_ids()
        content, _ = postings_of_batches(batches, len(paths), build.bench, batch_tokens)
        del batches
        path_tokens, _ = postings_of_batches(path_batches, len(paths), build.bench, batch_tokens)
        lexical_index = LexicalIndex(paths=paths, doc_lengths=doc_lengths, content=content, path_tokens=path_tokens, words=word_postings)
    if build.chunks is not None and rows is not None:
        batches = build.chunks.batches()
        token_counts = to_bench.totals(batches, len(rows))
        batches = to_bench.expand(batches)
        build.bench.forget_ids()
        postings, distinct = postings_of_batches(batches, len(rows), build.bench, batch_tokens)
        chunk_index = ChunkIndex.from_counts(rows, token_counts, distinct, postings)
    return lexical_index, chunk_index
