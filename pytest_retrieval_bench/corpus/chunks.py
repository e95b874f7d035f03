"""Release chunk files (`OWNER__NAME/COMMIT.chunks.jsonl[.zst]`): `kind: file` rows are the tree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from pytest_retrieval_bench.corpus.snapshot import MAX_TEXT_BYTES, Snapshot, check_relative_path
from pytest_retrieval_bench.errors import InputError, SnapshotError
from pytest_retrieval_bench.samples.reader import iter_sample_lines


def repo_slug(repo: str) -> str:
    return repo.replace("/", "__")


def read_chunk_file(path: Path, repo: str, commit: str) -> Snapshot:
    """Read a chunk file; file rows become the snapshot, every row feeds the bench's own rankers.

    A row with an absolute path, a `..` component or a repeated file path is a corpus error
    naming the file and line: it is never written anywhere.
    """
    texts: dict[str, str] = {}
    others: list[str] = []
    rows: list[dict[str, Any]] = []
    first_line: dict[str, int] = {}
    try:
        for line in iter_sample_lines(path):
            if not line.text.strip():
                continue
            try:
                row = orjson.loads(line.text)
            except orjson.JSONDecodeError as error:
                raise InputError(line.source, f"malformed JSON: {error}", line=line.number) from error
            if not isinstance(row, dict):
                raise InputError(line.source, "expected a JSON object", line=line.number)
            chunk_path = row.get("path")
            if not isinstance(chunk_path, str):
                raise InputError(line.source, "missing or not a string", line=line.number, field="path")
            problem = check_relative_path(chunk_path)
            if problem:
                raise InputError(line.source, problem, line=line.number, field="path")
            rows.append(row)
            if row.get("kind") != "file":
                continue
            if chunk_path in first_line:
                raise InputError(
                    line.source, f"duplicate file path {chunk_path!r} (first at line {first_line[chunk_path]})", line=line.number, field="path"
                )
            first_line[chunk_path] = line.number
            text = row.get("text")
            if not isinstance(text, str):
                raise InputError(line.source, "missing or not a string", line=line.number, field="text")
            if "\x00" in text or len(text.encode("utf-8", errors="surrogatepass")) >= MAX_TEXT_BYTES:
                others.append(chunk_path)
            else:
                texts[chunk_path] = text
    except InputError as error:
        raise SnapshotError(f"corpus error: {error}") from error
    return Snapshot(repo=repo, commit=commit, origin=str(path), texts=texts, other_paths=tuple(sorted(others)), chunk_rows=rows)


def find_chunk_file(corpus_dir: Path, repo: str, commit: str) -> Path | None:
    """The chunk file of (repo, commit) in a release corpus directory, by layout or manifest."""
    for suffix in (".chunks.jsonl", ".chunks.jsonl.zst"):
        candidate = corpus_dir / repo_slug(repo) / f"{commit}{suffix}"
        if candidate.is_file():
            return candidate
    manifest = corpus_dir / "corpus_manifest.jsonl"
    if not manifest.is_file():
        return None
    for line in iter_sample_lines(manifest):
        try:
            row = orjson.loads(line.text)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(row, dict) or row.get("repo") != repo or row.get("base_commit") != commit:
            continue
        if row.get("status", "ok") != "ok" or not isinstance(row.get("chunks_path"), str):
            continue
        given = Path(row["chunks_path"])
        for candidate in (given, corpus_dir / given, corpus_dir.parent.parent / given, corpus_dir / given.name):
            if candidate.is_file():
                return candidate
    return None
