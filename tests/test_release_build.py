"""One read of each text for both index kinds (`release_build`) against the row-at-a-time builds.

`LexicalIndex.build` and `ChunkIndex.build` tokenize every file and every chunk row on its own;
`build_indexes` reads each text once, slices symbol rows out of their file when their text is a
line range of it, and derives bench tokens from word runs. Every test compares the two, array
for array and type for type, so neither the slicing nor the derivation can change a ranking.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import _pytest
from pytest_retrieval_bench.corpus.chunks import read_chunk_file
from pytest_retrieval_bench.corpus.tree import read_directory
from pytest_retrieval_bench.index.chunk_index import ChunkIndex
from pytest_retrieval_bench.index.postings import LexicalIndex, Postings
from pytest_retrieval_bench.index import release_build
from pytest_retrieval_bench.index.release_build import OneReadBuild, build_indexes, grouped_in_path_order
from pytest_retrieval_bench.index.tokens import bench_tokens, word_runs
from pytest_retrieval_bench.index.word_tokens import bench_tokens_of_words

ROOT = Path(__file__).resolve().parent.parent
RELEASE_CORPUS = ROOT / "testdata" / "release" / "corpus" / "synthetic_v1"


def assert_same_postings(found: Postings, expected: Postings, name: str) -> None:
    assert found.blob == expected.blob, name
    for part in ("term_offsets", "offsets", "docs", "counts"):
        found_array, expected_array = getattr(found, part), getattr(expected, part)
        assert found_array.dtype == expected_array.dtype, (name, part)
        assert np.array_equal(found_array, expected_array), (name, part)


def assert_same_lexical(found: LexicalIndex | None, expected: LexicalIndex) -> None:
    assert found is not None
    assert found.paths == expected.paths
    assert found.doc_lengths.tolist() == expected.doc_lengths.tolist()
    for name in ("content", "path_tokens", "words"):
        assert_same_postings(getattr(found, name), getattr(expected, name), name)


def assert_same_chunks(found: ChunkIndex | None, expected: ChunkIndex) -> None:
    assert found is not None
    assert (found.paths, found.chunk_ids, found.symbols) == (expected.paths, expected.chunk_ids, expected.symbols)
    for name in ("tiebreak", "token_counts", "distinct_counts"):
        assert getattr(found, name).tolist() == getattr(expected, name).tolist(), name
    assert_same_postings(found.postings, expected.postings, "chunks")  # type: ignore[arg-type]


def assert_matches_reference(texts: dict[str, str], rows: list[dict[str, Any]], batch_tokens: int = 1 << 20) -> None:
    """In the rows' order, and grouped by file in path order as the bench writes them (the one-read path)."""
    grouped = sorted(rows, key=lambda row: str(row.get("path")))
    assert grouped_in_path_order(grouped)
    for ordered in (rows, grouped):
        assert_matches_reference_in_order(texts, ordered, batch_tokens)


def assert_matches_reference_in_order(texts: dict[str, str], rows: list[dict[str, Any]], batch_tokens: int) -> None:
    lexical, chunks = build_indexes(texts, rows, True, batch_tokens=batch_tokens)
    assert_same_lexical(lexical, LexicalIndex.build(sorted(texts.items())))
    assert_same_chunks(chunks, ChunkIndex.build(rows))
    only_chunks = build_indexes(texts, rows, False, batch_tokens=batch_tokens)
    assert only_chunks[0] is None
    assert_same_chunks(only_chunks[1], ChunkIndex.build(rows))
    only_lexical = build_indexes(texts, None, True, batch_tokens=batch_tokens)
    assert only_lexical[1] is None
    assert_same_lexical(only_lexical[0], LexicalIndex.build(sorted(texts.items())))
    assert_one_pass_changes_no_index(texts, rows, batch_tokens)


class OnePass:
    """Rows that can be gone through once only, and say whether they are in path order, as rows
    read again from their chunk file do: the build must not need them twice, nor at random."""

    def __init__(self, rows: list[dict[str, Any]]):
        self._rows = rows
        self.in_path_order = grouped_in_path_order(rows)
        self.passes = 0

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self.passes += 1
        assert self.passes == 1, "the rows are gone through once"
        return (dict(row) for row in self._rows)  # fresh dicts each time, as a new read of the file gives


def assert_one_pass_changes_no_index(texts: dict[str, str], rows: list[dict[str, Any]], batch_tokens: int) -> None:
    """Rows gone through once, as they come, give the same indexes as the rows held in a list."""
    given = OnePass(rows)
    build = OneReadBuild(texts, given, True, batch_tokens)
    build.read()
    lexical, chunks = build.finish()
    assert_same_lexical(lexical, LexicalIndex.build(sorted(texts.items())))
    assert_same_chunks(chunks, ChunkIndex.build(rows))
    assert given.passes == 1


def symbol_row(path: str, text: str, first: int, last: int, symbol: Any = "name") -> dict[str, Any]:
    """A symbol row as the bench's corpus builder cuts it: lines first..last (1-based), joined, stripped."""
    lines = text.split("\n")
    return {"path": path, "kind": "symbol", "symbol": symbol, "chunk_id": f"{path}:{first}-{last}",
            "start_line": first, "end_line": last, "text": "\n".join(lines[first - 1 : last]).strip()}


def file_row(path: str, text: str) -> dict[str, Any]:
    return {"path": path, "kind": "file", "symbol": "", "chunk_id": path, "start_line": 1, "end_line": text.count("\n") + 1, "text": text}


# --------------------------------------------------------------------------- bench tokens from word runs

TEXT = st.text(alphabet=st.sampled_from(list("aAzZbQq_09 \n\r\t.-/éÉßſK😀")), max_size=120)


def split_runs(runs: list[str]) -> list[list[str]]:
    """`bench_tokens_of_words` back into one token list per run."""
    lengths, tokens = bench_tokens_of_words(runs)
    assert len(lengths) == len(runs) and int(lengths.sum()) == len(tokens)
    ends = np.cumsum(lengths).tolist()
    return [[token.decode("ascii") for token in tokens[end - length : end]] for end, length in zip(ends, lengths.tolist())]


@settings(max_examples=400, deadline=None)
@given(text=TEXT)
def test_bench_tokens_are_the_word_runs_bench_tokens_in_order(text: str) -> None:
    runs = word_runs(text)
    assert [token for tokens in split_runs(runs) for token in tokens] == bench_tokens(text)
    assert split_runs(runs) == [bench_tokens(run) for run in runs]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="aAbZz09_", min_size=1, max_size=12), max_size=30))
def test_many_word_runs_split_at_once_as_each_alone(runs: list[str]) -> None:
    assert split_runs(runs) == [bench_tokens(run) for run in runs]


@pytest.mark.parametrize("word", ["abc", "ABC", "123", "a1", "A1", "aB", "Ab", "ABc", "aBC", "a_B", "__", "_a", "getHTTPResponse", "x9Y", "String", "HTTPServer", "A", "Ab1C", "a1B", "1aB", "9"])
def test_one_word_run_gives_the_bench_tokens(word: str) -> None:
    assert split_runs([word]) == [bench_tokens(word)]
    assert split_runs(["zZ", word, "_"]) == [["z", "z"], bench_tokens(word), []]  # neighbours never join it


# --------------------------------------------------------------------------- edge releases

EDGE_TEXT = "package main\n\nfunc fooBar() {\n\treturn x_y\n}\n\n// ...\nfunc Other(a int) int {\n  return a\n}\n"
EDGE_TEXTS = {
    "a/main.go": EDGE_TEXT,
    "b/empty.txt": "",
    "c/File/x.md": "nothing here\nfile FILE\n",
    "d/one.py": "def only():\n    pass",
    "e/crlf.txt": "lineOne\r\nlineTwo\r\n",
    "__/__.__": "__ ___\n",  # word runs with no bench token: a batch of its rows alone counts nothing
}


def edge_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path, text in EDGE_TEXTS.items():
        rows.append(file_row(path, text))
    rows += [
        symbol_row("a/main.go", EDGE_TEXT, 3, 7, "fooBar"),
        symbol_row("a/main.go", EDGE_TEXT, 8, 11, "Other"),
        symbol_row("a/main.go", EDGE_TEXT, 1, 11, "whole"),  # the whole file, overlapping the others
        symbol_row("d/one.py", "def only():\n    pass", 1, 2, "only"),
        # not line ranges: tokenized whole
        {**symbol_row("a/main.go", EDGE_TEXT, 3, 7), "text": "func fooBar() {\n\treturn xY\n}"},  # one word changed
        {**symbol_row("a/main.go", EDGE_TEXT, 3, 7), "start_line": 4},  # range does not match the text
        {**symbol_row("a/main.go", EDGE_TEXT, 3, 7), "end_line": 99},  # past the end
        {**symbol_row("a/main.go", EDGE_TEXT, 3, 7), "start_line": True},  # a bool is not a line number
        {**symbol_row("a/main.go", EDGE_TEXT, 3, 7), "start_line": "3"},
        {"path": "a/main.go", "kind": "symbol", "symbol": None, "chunk_id": "no-lines", "text": "fooBar other"},
        {"path": "a/main.go", "kind": "symbol", "symbol": 7, "chunk_id": "int-symbol", "text": 12345},  # non-string parts
        {"path": "a/main.go", "kind": "symbol", "symbol": ["x", "yZ"], "chunk_id": "list-symbol", "text": ""},
        {"path": "z/binary.bin", "kind": "file", "symbol": "", "chunk_id": "binary", "text": "bin\x00ary fooBar"},  # not a text file
        {"path": "z/orphan.go", "kind": "symbol", "symbol": "orphanFn", "chunk_id": "orphan", "start_line": 1, "end_line": 1, "text": "orphan"},
        {"path": "", "kind": "", "chunk_id": "", "text": "only text"},  # a row of no file
        {"path": "__/__.__", "kind": "__", "symbol": "_", "chunk_id": "underscores", "text": "___"},
        {**file_row("c/File/x.md", "another text"), "chunk_id": "second file row"},  # a second row of a path
    ]
    rows.insert(2, symbol_row("a/main.go", EDGE_TEXT, 3, 3, "firstLine"))  # a symbol before its file's turn
    return rows


@pytest.mark.parametrize("batch_tokens", [1, 3, 1 << 20])
def test_edge_rows_match_the_reference(batch_tokens: int) -> None:
    assert_matches_reference(EDGE_TEXTS, edge_rows(), batch_tokens)


def test_no_files_and_no_rows() -> None:
    assert_matches_reference({}, [])
    assert_matches_reference({"a.txt": ""}, [file_row("a.txt", "")])


# --------------------------------------------------------------------------- random releases

LINE = st.text(alphabet=st.sampled_from(list("aAbB_1 x\tYz.é")), max_size=12)


@st.composite
def releases(draw: Any) -> tuple[dict[str, str], list[dict[str, Any]]]:
    texts: dict[str, str] = {}
    rows: list[dict[str, Any]] = []
    for number in range(draw(st.integers(min_value=0, max_value=4))):
        path = f"d{number}/f{draw(st.sampled_from(['Ab', 'x_y', 'q']))}{number}.go"
        text = "\n".join(draw(st.lists(LINE, min_size=1, max_size=8)))
        texts[path] = text
        rows.append(file_row(path, text))
        line_count = text.count("\n") + 1
        for _ in range(draw(st.integers(min_value=0, max_value=4))):
            first = draw(st.integers(min_value=1, max_value=line_count))
            last = draw(st.integers(min_value=first, max_value=line_count))
            row = symbol_row(path, text, first, last, draw(st.sampled_from(["", "fnA", "b_c", None])))
            if draw(st.booleans()):
                row["text"] = draw(LINE)  # usually not that range any more
            rows.append(row)
    return texts, draw(st.permutations(rows))


@settings(max_examples=150, deadline=None)
@given(release=releases(), batch_tokens=st.sampled_from([1, 5, 1 << 20]))
def test_random_releases_match_the_reference(release: tuple[dict[str, str], list[dict[str, Any]]], batch_tokens: int) -> None:
    texts, rows = release
    assert_matches_reference(texts, rows, batch_tokens)


# --------------------------------------------------------------------------- real text

@functools.lru_cache(maxsize=None)
def real_tree() -> dict[str, str]:
    return dict(read_directory(Path(_pytest.__file__).resolve().parent, "pytest-dev/pytest", "0" * 40).text_files())


def test_the_bundled_release_matches_the_reference() -> None:
    chunk_files = sorted(RELEASE_CORPUS.rglob("*.chunks.jsonl*"))
    assert chunk_files
    for chunk_file in chunk_files:
        snapshot = read_chunk_file(chunk_file, "acme/x", "0" * 40)
        assert snapshot.chunk_rows
        assert_matches_reference(snapshot.texts, snapshot.chunk_rows)


def test_a_real_tree_cut_into_symbol_rows_matches_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed `_pytest` package as a release: each file row, and symbol rows tiling it from
    every `def`/`class` line, as the bench's corpus builder cuts them; every symbol row is sliced."""
    texts = real_tree()
    rows: list[dict[str, Any]] = []
    for path, text in texts.items():
        rows.append(file_row(path, text))
        lines = text.split("\n")
        starts = [number for number, line in enumerate(lines, start=1) if line.lstrip().startswith(("def ", "class "))]
        for first, following in zip(starts, starts[1:] + [len(lines) + 1]):
            rows.append(symbol_row(path, text, first, max(first, following - 1), lines[first - 1].split()[1].split("(")[0]))
    assert len(rows) > 2 * len(texts)
    sliced: list[tuple[int, int]] = []
    original = release_build._line_range

    def counted(row: dict[str, Any], lines: list[str]) -> tuple[int, int] | None:
        found = original(row, lines)
        if found is not None:
            sliced.append(found)
        return found

    monkeypatch.setattr(release_build, "_line_range", counted)
    assert_matches_reference(texts, rows)
    assert grouped_in_path_order(rows)
    assert len(sliced) == 6 * (len(rows) - len(texts))  # two orders (the same here) x the three builds that read rows (one a single pass)
