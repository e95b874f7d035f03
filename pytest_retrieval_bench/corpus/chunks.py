"""Release chunk files (`OWNER__NAME/COMMIT.chunks.jsonl[.zst]`): `kind: file` rows are the tree."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from pytest_retrieval_bench.corpus.copy_files import find_path_clash
from pytest_retrieval_bench.corpus.snapshot import MAX_TEXT_BYTES, Snapshot, check_relative_path
from pytest_retrieval_bench.errors import InputError, SnapshotError
from pytest_retrieval_bench.samples.reader import iter_sample_lines


def repo_slug(repo: str) -> str:
    return repo.replace("/", "__")


SHARED_VALUES = ("repo", "base_commit", "kind")
"""Row fields whose few distinct values repeat on every row."""


def read_chunk_file(path: Path, repo: str, commit: str) -> Snapshot:
    """Read a chunk file; file rows become the snapshot, every row feeds the bench's own rankers.

    A row with an absolute path, a `..` component or a repeated file path is a corpus error
    naming the file and line: it is never written anywhere.
    """
    texts: dict[str, str] = {}
    others: list[str] = []
    rows: list[dict[str, Any]] = []
    first_line: dict[str, int] = {}
    orphans: list[tuple[int, dict[str, Any]]] = []
    checked: dict[str, str] = {}  # each path checked, as the one string its rows share
    values: dict[str, str] = {}
    try:
        for line in iter_sample_lines(path):
            if line.text.isspace():  # a blank line (never empty: it holds its newline); no copy of a long line
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
            shared = checked.get(chunk_path)
            if shared is None:  # rows of one file share its path: check it once
                problem = check_relative_path(chunk_path)
                if problem:
                    raise InputError(line.source, problem, line=line.number, field="path")
                shared = checked[chunk_path] = chunk_path
            row["path"] = shared
            for key in SHARED_VALUES:  # one string per distinct value, not one per row (tens of MB on a large release)
                value = row.get(key)
                if type(value) is str:
                    row[key] = values.setdefault(value, value)
            rows.append(row)
            if row.get("kind") != "file":
                if chunk_path not in first_line:
                    orphans.append((line.number, row))  # before its file row, or an orphan: checked once every file row is known
                continue
            if chunk_path in first_line:
                raise InputError(
                    line.source, f"duplicate file path {chunk_path!r} (first at line {first_line[chunk_path]})", line=line.number, field="path"
                )
            first_line[chunk_path] = line.number
            text = row.get("text")
            if not isinstance(text, str):
                raise InputError(line.source, "missing or not a string", line=line.number, field="text")
            if "\x00" in text or (len(text) * 4 >= MAX_TEXT_BYTES and len(text.encode("utf-8", errors="surrogatepass")) >= MAX_TEXT_BYTES):
                others.append(chunk_path)
            else:
                texts[chunk_path] = text
        clash = find_path_clash(first_line)
        if clash is not None:
            file_path, below = clash
            raise InputError(str(path), f"file row {file_path!r} (line {first_line[file_path]}) is also a directory of file row {below!r}",
                             line=first_line[below], field="path")
        for number, row in orphans:
            if row["path"] not in first_line:
                raise InputError(str(path), f"a {row.get('kind')!r} row of {row['path']!r}, which has no file row", line=number, field="path")
    except InputError as error:
        raise SnapshotError(f"corpus error: {error}") from error
    return Snapshot(repo=repo, commit=commit, origin=str(path), texts=texts, other_paths=tuple(sorted(others)), chunk_rows=rows)


@dataclass(frozen=True)
class ChunkSource:
    """Where a snapshot's chunk file is, and what the corpus manifest promises about it."""

    path: Path
    manifest: Path | None = None
    line: int | None = None
    chunk_count: int | None = None
    file_count: int | None = None

    def where(self) -> str:
        return f"{self.manifest}:{self.line}" if self.manifest is not None else str(self.path)


def _inside(path: Path, directory: Path) -> bool:
    return path.resolve().is_relative_to(directory.resolve())


def _count(row: dict[str, Any], name: str) -> int | None:
    value = row.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def locate_chunk_file(corpus_dir: Path, repo: str, commit: str) -> tuple[ChunkSource | None, list[str]]:
    """The chunk file of (repo, commit) in a release corpus directory, by layout or manifest, and
    notes on manifest lines that could not help (malformed, or naming a missing file).

    A manifest row whose chunks path resolves outside the corpus directory is a SnapshotError:
    the registration digests only the directory's files, so such a file is not bound by it.
    """
    layout = next((candidate for suffix in (".chunks.jsonl", ".chunks.jsonl.zst")
                   if (candidate := corpus_dir / repo_slug(repo) / f"{commit}{suffix}").is_file()), None)
    manifest = corpus_dir / "corpus_manifest.jsonl"
    notes: list[str] = []
    if manifest.is_file():
        malformed: list[int] = []
        for line in iter_sample_lines(manifest):
            try:
                row = orjson.loads(line.text)
            except orjson.JSONDecodeError:
                malformed.append(line.number)
                continue
            if not isinstance(row, dict):
                malformed.append(line.number)
                continue
            if row.get("repo") != repo or row.get("base_commit") != commit:
                continue
            if row.get("status", "ok") != "ok":
                notes.append(f"{manifest}:{line.number} gives status {row.get('status')!r}")
                continue
            if not isinstance(row.get("chunks_path"), str):
                notes.append(f"{manifest}:{line.number} has no chunks_path")
                continue
            given = Path(row["chunks_path"])
            found = layout or next((candidate for candidate in (given, corpus_dir / given, corpus_dir.parent.parent / given, corpus_dir / given.name)
                                    if candidate.is_file()), None)
            if found is None:
                notes.append(f"{manifest}:{line.number} names chunks_path {row['chunks_path']!r}, which does not exist")
                continue
            if not _inside(found, corpus_dir):
                raise SnapshotError(f"corpus error: {manifest}:{line.number}: chunks_path {row['chunks_path']!r} is {found.resolve()}, "
                                    f"outside the corpus directory {corpus_dir}")
            return ChunkSource(found, manifest, line.number, _count(row, "chunk_count"), _count(row, "file_count")), notes
        if malformed and layout is None:
            notes.append(f"{manifest}: line(s) {', '.join(map(str, malformed[:10]))} are not JSON objects")
    return (ChunkSource(layout) if layout is not None else None), notes


def find_chunk_file(corpus_dir: Path, repo: str, commit: str) -> Path | None:
    """The chunk file of (repo, commit) in a release corpus directory, by layout or manifest."""
    source, _ = locate_chunk_file(corpus_dir, repo, commit)
    return source.path if source is not None else None


def check_promises(source: ChunkSource, snapshot: Snapshot) -> None:
    """A chunk file cut short (or emptied) is an incomplete snapshot, named with what was promised."""
    rows = len(snapshot.chunk_rows or ())
    if rows == 0:
        raise SnapshotError(f"corpus error: {source.path}: the chunk file has no rows")
    files = len(snapshot.texts) + len(snapshot.other_paths)
    for what, promised, found in (("chunk_count", source.chunk_count, rows), ("file_count", source.file_count, files)):
        if promised is not None and promised != found:
            raise SnapshotError(f"corpus error: snapshot {snapshot.key} is incomplete: {source.path} has {found} "
                                f"{'rows' if what == 'chunk_count' else 'file rows'}, the manifest ({source.where()}) promises {what} {promised}")
