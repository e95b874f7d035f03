"""A release's rows read again from their chunk file (`ChunkFileRows`): only ever the rows read.

The read of a chunk file keeps no row; each build that needs them goes through the file again.
These tests change the file at the worst moments (as the read ends, midway through a pass) and
move the working directory, and check that a pass gives the rows read or a corpus error naming
the file, never other rows.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from pytest_retrieval_bench.corpus import chunk_file_rows, chunks
from pytest_retrieval_bench.corpus.chunk_file_rows import ChunkFileRows
from pytest_retrieval_bench.corpus.chunks import read_chunk_file
from pytest_retrieval_bench.errors import SnapshotError
from pytest_retrieval_bench.index.release_build import OneReadBuild

REPO, COMMIT = "acme/widgets", "c" * 40


def rows() -> list[dict[str, Any]]:
    return [
        {"path": "a.py", "kind": "file", "symbol": "", "chunk_id": "a", "start_line": 1, "end_line": 2, "text": "def one():\n    two()"},
        {"path": "a.py", "kind": "function", "symbol": "one", "chunk_id": "a1", "start_line": 1, "end_line": 2, "text": "def one():\n    two()"},
        {"path": "b.bin", "kind": "file", "symbol": "", "chunk_id": "b", "start_line": 1, "end_line": 1, "text": "\x00\x01"},
        {"path": "c.md", "kind": "file", "symbol": "", "chunk_id": "c", "start_line": 1, "end_line": 1, "text": "three four"},
    ]


def write(path: Path, found: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in found))
    return path


def later(path: Path) -> None:
    """Move the file's modification time on, so a change within the clock's step shows too."""
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 10**9))


def test_a_file_replaced_as_its_read_ends_is_refused_at_the_next_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file's identity is the one taken before the read, not after it: rows of a file swapped
    in as the read ended are not those counted and hashed, so the pass is refused."""
    path = write(tmp_path / "widgets.chunks.jsonl", rows())
    real_check = chunks.check_clash

    def swap_then_check(*args: Any) -> None:
        write(path, [dict(row, text=row["text"] + " changed") for row in rows()])  # as many rows, other text
        later(path)
        real_check(*args)

    monkeypatch.setattr(chunks, "check_clash", swap_then_check)
    snapshot = read_chunk_file(path, REPO, COMMIT)
    with pytest.raises(SnapshotError, match=r"widgets\.chunks\.jsonl changed after it was read"):
        list(snapshot.chunk_rows or [])


def test_a_row_that_no_longer_parses_midway_is_a_corpus_error_naming_the_file_and_line(tmp_path: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "widgets.chunks.jsonl", rows())
    snapshot = read_chunk_file(path, REPO, COMMIT)
    calls: list[bytes] = []

    def second_fails(line: bytes) -> Any:
        calls.append(line)
        if len(calls) == 2:
            raise orjson.JSONDecodeError("unexpected character", line.decode(), 0)
        return orjson.loads(line)

    monkeypatch.setattr(chunk_file_rows, "orjson", type("Stub", (), {"loads": staticmethod(second_fails), "JSONDecodeError": orjson.JSONDecodeError}))
    with pytest.raises(SnapshotError, match=r"widgets\.chunks\.jsonl:2: not the row read before"):
        list(snapshot.chunk_rows or [])


def test_a_pass_finds_the_file_from_another_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "corpus" / "widgets.chunks.jsonl", rows())
    monkeypatch.chdir(tmp_path)
    snapshot = read_chunk_file(Path("corpus/widgets.chunks.jsonl"), REPO, COMMIT)
    monkeypatch.chdir(tmp_path / "corpus")
    assert list(snapshot.chunk_rows or []) == rows()


def test_rows_of_one_read_are_equal_without_a_pass_and_others_by_their_rows(tmp_path: Path) -> None:
    path = write(tmp_path / "widgets.chunks.jsonl", rows())
    first, second = read_chunk_file(path, REPO, COMMIT).chunk_rows, read_chunk_file(path, REPO, COMMIT).chunk_rows
    assert isinstance(first, ChunkFileRows) and first == second and first == rows()
    path.unlink()
    assert first == second, "the same read of the same file: no pass needed"
    with pytest.raises(SnapshotError, match="changed after it was read"):
        list(first)


def test_a_build_over_rows_read_again_tells_its_progress_over_every_path(tmp_path: Path) -> None:
    """The progress of a release's build counts every path (text files and row paths together),
    as it did when the rows were held."""
    path = write(tmp_path / "widgets.chunks.jsonl", rows() + [dict(rows()[0], path="d.py", chunk_id="d")])
    snapshot = read_chunk_file(path, REPO, COMMIT)
    heard: list[tuple[int, int | None]] = []
    build = OneReadBuild(dict(snapshot.texts), snapshot.chunk_rows, True, progress=lambda done, total: heard.append((done, total)))
    build.read()
    assert heard == [(number, 4) for number in range(1, 5)]
    held: list[tuple[int, int | None]] = []
    build = OneReadBuild(dict(snapshot.texts), list(snapshot.chunk_rows or []), True, progress=lambda done, total: held.append((done, total)))
    build.read()
    assert held == heard
