"""A snapshot's whole-file and chunk indexes from one tokenization of each text.

A release holds most of its text twice: each file as its `file` row, and cut at symbol starts
into `symbol` rows whose text is a line range of that file. The bench tokenizer never joins
tokens across a newline (nor across the spaces `chunk_text` puts between a row's path, symbol,
kind and text), so a symbol row that is a line range of its file row has exactly the tokens of
that range: they are sliced out of the file's word-run ids instead of read again. Whether a row
is such a range is checked on the text itself, never assumed; every other row (a symbol past the
end of a truncated file row, a binary file's row, a row of unusual shape) is tokenized whole, as
the bench does. Texts are read once, split into word runs (`word_run_bytes`); bench tokens come from the word runs
(see `word_tokens`). The result equals `LexicalIndex.build` and `ChunkIndex.build` value for value.

Files are taken in path order (the whole-file index's document order), each with its rows, so
chunk rows are counted in row order when the chunk file groups its rows by file in path order,
as the bench's corpus builder writes them (git lists a tree in that order): the rows are then
gone through once, a path's rows at a time, so they need not be held (a release's are read again
from its chunk file as they come, see `corpus/chunk_file_rows.py`). A chunk file that does not
group them is indexed a row at a time (`ChunkIndex.build`): same result, slower.

When the same set-up has just built the RepoMap, the texts it read whole are not read again: the
build takes the map's word-run ids of each (`repomap_content.MapContent`), renumbered in its own
vocabulary, and counts the word runs before each line its chunk rows start at instead of cutting
the text into pieces. Term ids are first-seen numbers that no index keeps (postings are laid out
in byte order), so the indexes are the same either way.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any, Callable, Iterable, Iterator, Protocol

import numpy as np

from pytest_retrieval_bench.index.chunk_index import ChunkIndex, RowLabels
from pytest_retrieval_bench.index.pair_counts import BATCH_TOKENS, PairCounts, postings_of_batches
from pytest_retrieval_bench.index.postings import LexicalIndex
from pytest_retrieval_bench.index.repomap_content import MapContent, runs_before
from pytest_retrieval_bench.index.term_ids import NO_IDS, TermIds
from pytest_retrieval_bench.index.tokens import PIECE_CHARS, line_pieces, word_run_bytes
from pytest_retrieval_bench.index.word_tokens import WordTokens


def _line_range(row: dict[str, Any], lines: list[str]) -> tuple[int, int] | None:
    """(first line, end line) of `lines`, 0-based end-exclusive, when the row's text is that range
    as the bench's corpus builder cuts it (lines joined by newlines, then stripped); else None."""
    start, end, text = row.get("start_line"), row.get("end_line"), row.get("text")
    if type(start) is not int or type(end) is not int or not isinstance(text, str) or not 1 <= start <= end <= len(lines):
        return None
    return (start - 1, end) if "\n".join(lines[start - 1 : end]).strip() == text else None


def _line_starts(lengths: Iterable[int], count: int) -> np.ndarray:
    """Where each of `count` newline-separated lines of `lengths` starts, and one past the end
    (`count + 1` offsets, in the unit of the lengths)."""
    starts = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.fromiter(lengths, dtype=np.int64, count=count) + 1, out=starts[1:])
    return starts


def grouped_in_path_order(rows: Iterable[dict[str, Any]]) -> bool:
    """Whether the rows' paths are strings in ascending order (so each file's rows are together);
    rows read again from their file (`in_path_order`) say so themselves."""
    said = getattr(rows, "in_path_order", None)
    if said is not None:
        return bool(said)
    paths = [row.get("path") for row in rows]
    return all(isinstance(path, str) for path in paths) and all(a <= b for a, b in zip(paths, paths[1:]))  # type: ignore[operator]


class Rows(Protocol):
    """Chunk rows that can be counted and gone through in order (a list, or rows read again from their file)."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[dict[str, Any]]: ...


Group = list[tuple[int, dict[str, Any]]]
"""One path's chunk rows, each with its number in the rows' order."""


def _groups(rows: Iterable[dict[str, Any]]) -> Iterator[tuple[str, Group]]:
    """The rows a path at a time, in their order (each path's rows together), numbered."""
    for path, group in groupby(enumerate(rows), key=lambda numbered: numbered[1]["path"]):
        yield path, list(group)


def _path_count(texts: dict[str, str], rows: Rows | None) -> int | None:
    """How many paths a build goes through (text files and row paths together), when it is known
    without a pass over the rows: rows held in a list, or rows that know their paths."""
    if rows is None:
        return len(texts)
    row_paths = getattr(rows, "row_paths", None)
    if row_paths is None and isinstance(rows, list):
        row_paths = {row["path"] for row in rows}
    return len(texts.keys() | row_paths) if row_paths is not None else None


class _Build:
    """The state of one build: the vocabularies and the counts."""

    def __init__(self, texts: dict[str, str], rows: Rows | None, lexical: bool, batch_tokens: int,
                 progress: Callable[[int, int | None], None] | None = None, given: MapContent | None = None):
        self.texts = texts
        self.progress = progress
        self.paths = sorted(texts)
        self.words = TermIds()
        self.bench = TermIds()
        self.to_bench = WordTokens(self.words, self.bench)
        self.files = PairCounts(len(self.paths), batch_tokens) if lexical else None
        self.rows = rows
        self.chunks = PairCounts(len(rows), batch_tokens, self.to_bench.expand_pairs) if rows is not None else None
        self.labels = RowLabels(paths=[], chunk_ids=[], symbols=[])
        self.total = _path_count(texts, rows)  # paths to go through, when known
        #: the texts the map read whole, and its word-run ids renumbered in `words` (map id -> id)
        self.given = given if given is not None and given.read else None
        self.renumbered = self.words.of([term.encode("ascii") for term in given.terms]) if self.given is not None else NO_IDS

    def word_ids(self, text: str) -> np.ndarray:
        """The word-run ids of `text`, read a piece at a time so a long text's runs are never all held as strings."""
        pieces = [self.words.of(word_run_bytes(piece)) for piece in line_pieces(text)]
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def split_word_ids(self, texts: list[str]) -> list[np.ndarray]:
        """`word_ids` of each of `texts` (pieces of one file, or one file's rows), looked up a
        group of about `PIECE_CHARS` characters at a time (a text longer than that on its own)."""
        found: list[np.ndarray] = [NO_IDS] * len(texts)
        group: list[int] = []
        size = 0
        for position, text in enumerate(texts):
            if len(text) > PIECE_CHARS:
                found[position] = self.word_ids(text)
                continue
            group.append(position)
            size += len(text)
            if size >= PIECE_CHARS:
                self._look_up(texts, group, found)
                group, size = [], 0
        self._look_up(texts, group, found)
        return found

    def _look_up(self, texts: list[str], group: list[int], found: list[np.ndarray]) -> None:
        """The word-run ids of the group's texts, with one id lookup for all, into `found`."""
        if not group:
            return
        runs = [word_run_bytes(texts[position]) for position in group]
        ids = self.words.of([run for text_runs in runs for run in text_runs])
        start = 0
        for position, text_runs in zip(group, runs):
            found[position] = ids[start : start + len(text_runs)]
            start += len(text_runs)

    def run(self) -> None:
        """Every path, in path order: its file text read once, then its chunk rows in row order
        (the rows gone through once, a path's at a time, as they come)."""
        doc = 0
        groups = _groups(self.rows) if self.rows is not None else iter(())
        pending = next(groups, None)
        position = number = 0
        while position < len(self.paths) or pending is not None:
            if pending is not None and (position == len(self.paths) or pending[0] <= self.paths[position]):
                path, group = pending
                pending = next(groups, None)
                position += position < len(self.paths) and self.paths[position] == path
            else:
                path, group = self.paths[position], []
                position += 1
            text = self.texts.get(path)
            ids, served = self.add_file(doc, path, text, group) if text is not None else (NO_IDS, {})
            doc += text is not None
            if group:
                self.add_rows(path, group, ids, served)
            number += 1
            if self.progress is not None:
                self.progress(number, self.total)
        self.given, self.renumbered = None, NO_IDS  # what the map read is all taken, or never will be

    def add_file(self, doc: int, path: str, text: str, group: Group) -> tuple[np.ndarray, dict[int, tuple[int, int]]]:
        """Read one file once (or take the ids the map read of it) and count it for the whole-file
        indexes; its ids, and the slices of them that serve its chunk rows (`group`: row number ->
        start, end)."""
        ranges: dict[int, tuple[int, int]] = {}
        lines: list[str] = []
        if self.chunks is not None:
            for number, row in group:
                if row.get("kind") == "file":
                    continue
                if not lines:
                    lines = text.split("\n")
                found = _line_range(row, lines)
                if found is not None:
                    ranges[number] = found
        given = self.given.take(path, text) if self.given is not None else None
        cuts = sorted({0, len(lines), *(line for first, end in ranges.values() for line in (first, end))}) if ranges else []
        if given is not None:
            ids = self.renumbered[given]
            run_at = dict(zip(cuts, runs_before(text, cuts))) if ranges else {}
        elif ranges:
            bounds = _line_starts(map(len, lines), len(lines))[cuts].tolist()
            pieces = self.split_word_ids([text[a:b] for a, b in zip(bounds, bounds[1:])])
            run_at = dict(zip(cuts, np.cumsum([0, *map(len, pieces)]).tolist()))
            ids = np.concatenate(pieces)
        else:
            ids = self.word_ids(text)
        if self.files is not None:
            self.files.add(doc, ids)
        served = {number: (run_at[first], run_at[end]) for number, (first, end) in ranges.items()}
        file_row = next((numbered for numbered in group if numbered[1].get("kind") == "file"), None)
        if file_row is not None and file_row[1].get("text") == text:
            served[file_row[0]] = (0, len(ids))
        return ids, served

    def add_rows(self, path: str, group: Group, ids: np.ndarray, served: dict[int, tuple[int, int]]) -> None:
        """Count one path's chunk rows in row order: slices of the file's ids where they serve, the
        others read whole; heads (path, symbol, kind) and those texts read together. What the
        chunk index keeps of each row (its labels) is taken here, so the rows need not be kept.

        A row's parts are `path` (the group's, every row's), symbol, kind and text, an empty one counting no
        id, as `chunk_parts` drops it; each is taken by one pass over the group's rows, and the
        rows are handed to the counts at once (a call per row cost more than the row's ids)."""
        assert self.chunks is not None
        numbers = [number for number, _ in group]
        rows = [row for _, row in group]
        symbols = [str(symbol) if (symbol := row.get("symbol")) else "" for row in rows]  # also the labels' symbols
        kinds = [str(kind) if (kind := row.get("kind")) else "" for row in rows]
        whole = [number for number in numbers if number not in served]
        texts = [str(text) if (text := row.get("text")) else "" for number, row in group if number not in served]
        distinct_parts = list(dict.fromkeys([path, *symbols, *kinds]))
        found = self.split_word_ids(distinct_parts + texts)  # one id lookup for the file's rows
        parts_ids = dict(zip(distinct_parts, found))
        read = dict(zip(whole, found[len(distinct_parts) :]))
        path_ids = parts_ids[path]
        docs: list[int] = []
        slices: list[np.ndarray] = []
        for number, symbol, kind in zip(numbers, symbols, kinds):
            start_end = served.get(number)
            docs += (number, number, number, number)
            slices += (path_ids, parts_ids[symbol], parts_ids[kind], ids[start_end[0] : start_end[1]] if start_end is not None else read[number])
        self.chunks.extend(docs, slices)
        self.labels.extend_path(path, rows, symbols)


class OneReadBuild:
    """`build_indexes` in two steps, so the caller can free the rows between them: `read` reads
    every text once and keeps only counts (and what the chunk index keeps of each row);
    `finish` lays the postings out."""

    def __init__(self, texts: dict[str, str], rows: Rows | None, lexical: bool, batch_tokens: int = BATCH_TOKENS,
                 progress: Callable[[int, int | None], None] | None = None, given: MapContent | None = None):
        """`rows` are gone through once, in order, when each file's rows are together in path order
        (a list, or rows read again from their file as they come); else they are indexed a row at a
        time. `progress` hears each path read (over the number of paths when it is known). `given`:
        what the same snapshot's map read whole, taken instead of reading those texts again."""
        ungrouped = rows is not None and not grouped_in_path_order(rows)
        self._rows_apart = rows if ungrouped else None
        self._build: _Build | None = _Build(texts, None if ungrouped else rows, lexical, batch_tokens, progress, given)
        self.labels: RowLabels | None = None
        self._chunks_apart: ChunkIndex | None = None
        self.path_counts = PairCounts(len(self._build.paths), batch_tokens)

    def read(self) -> None:
        build = self._build
        assert build is not None
        if self._rows_apart is not None:  # rows not grouped by file in path order: a row at a time
            self._chunks_apart, self._rows_apart = ChunkIndex.build(list(self._rows_apart)), None
        build.run()
        if build.rows is not None:
            self.labels = build.labels
        build.rows = None  # the counts and labels are all that is needed of them now
        if build.files is not None:
            for doc, path in enumerate(build.paths):
                self.path_counts.add(doc, build.word_ids(path))
        # every text is numbered: split every word run into bench tokens, then only the terms are needed
        build.words.forget_ids()
        build.to_bench.complete()
        build.bench.forget_ids()

    def finish(self) -> tuple[LexicalIndex | None, ChunkIndex | None]:
        build, self._build = self._build, None
        assert build is not None
        lexical_index = chunk_index = None
        if build.chunks is not None and self.labels is not None:
            token_counts = build.chunks.totals()
            postings, distinct = postings_of_batches(build.chunks.batches(), len(self.labels.paths), build.bench)
            chunk_index = ChunkIndex.from_counts(self.labels, token_counts, distinct, postings)
        if build.files is not None:
            paths = build.paths
            batches = build.files.batches()
            word_postings, _ = postings_of_batches(batches, len(paths), build.words)
            doc_lengths = build.to_bench.totals(batches, len(paths))
            batches = build.to_bench.expand(batches)
            content, _ = postings_of_batches(batches, len(paths), build.bench)
            del batches
            path_tokens, _ = postings_of_batches(build.to_bench.expand(self.path_counts.batches()), len(paths), build.bench)
            lexical_index = LexicalIndex(paths=paths, doc_lengths=doc_lengths, content=content, path_tokens=path_tokens, words=word_postings)
        return lexical_index, chunk_index if chunk_index is not None else self._chunks_apart


def build_indexes(texts: dict[str, str], rows: Rows | None, lexical: bool,
                  batch_tokens: int = BATCH_TOKENS) -> tuple[LexicalIndex | None, ChunkIndex | None]:
    """The `LexicalIndex` of the text files (when `lexical`) and the `ChunkIndex` of `rows` (when
    given), each text read once for both. `batch_tokens` changes memory, never the result."""
    build = OneReadBuild(texts, rows, lexical, batch_tokens)
    build.read()
    return build.finish()
