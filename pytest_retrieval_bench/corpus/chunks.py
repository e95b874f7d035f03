"""Release chunk files (`OWNER__NAME/COMMIT.chunks.jsonl[.zst]`): `kind: file` rows are the tree."""

from __future__ import annotations

import mmap
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import orjson
import zstandard

from pytest_retrieval_bench.corpus.chunk_file_rows import ChunkFileRows
from pytest_retrieval_bench.corpus.copy_files import find_path_clash
from pytest_retrieval_bench.corpus.file_row_texts import FileRowTexts
from pytest_retrieval_bench.corpus.progress import Counted
from pytest_retrieval_bench.corpus.read_receipts import Receipt, ReadReceipts, identity
from pytest_retrieval_bench.corpus.snapshot import Snapshot, check_relative_path, is_text, row_hash
from pytest_retrieval_bench.errors import InputError, SnapshotError
from pytest_retrieval_bench.files.jsonl import iter_numbered_lines, iter_sample_lines, malformed_line, open_zstd
from pytest_retrieval_bench.index.repomap_nodes import NodeReader


def repo_slug(repo: str) -> str:
    return repo.replace("/", "__")


class _TreeRows:
    """The file rows of one chunk file, checked as they are read: both ways of reading share it."""

    def __init__(self, source: str):
        self.source = source
        self.texts: dict[str, str] = {}
        self.others: list[str] = []
        self.first_line: dict[str, int] = {}
        self.checked: dict[str, str] = {}  # each path checked, as the one string its rows share

    def parse(self, text: bytes, number: int) -> dict[str, Any]:
        """Line `number` as a row, its path checked and shared with the earlier rows of its file."""
        try:
            row = orjson.loads(text)
        except orjson.JSONDecodeError as error:
            raise InputError(self.source, malformed_line(error, text), line=number) from error
        if type(row) is not dict:
            raise InputError(self.source, "expected a JSON object", line=number)
        chunk_path = row.get("path")
        if type(chunk_path) is not str:
            raise InputError(self.source, "missing or not a string", line=number, field="path")
        shared = self.checked.get(chunk_path)
        if shared is None:  # rows of one file share its path: check it once
            problem = check_relative_path(chunk_path)
            if problem:
                raise InputError(self.source, problem, line=number, field="path")
            shared = self.checked[chunk_path] = chunk_path
        row["path"] = shared  # the nodes and the file texts keep it: one string per path (the rows themselves are not kept)
        return row

    def add_file(self, row: dict[str, Any], number: int) -> bool:
        """Take a file row; whether it holds a text file (else it is only a path)."""
        chunk_path = row["path"]
        if chunk_path in self.first_line:
            raise InputError(self.source, f"duplicate file path {chunk_path!r} (first at line {self.first_line[chunk_path]})",
                             line=number, field="path")
        self.first_line[chunk_path] = number
        text = row.get("text")
        if not isinstance(text, str):
            raise InputError(self.source, "missing or not a string", line=number, field="text")
        if is_text(text):
            self.texts[chunk_path] = text
            return True
        self.others.append(chunk_path)
        return False


def check_clash(source: str, first_line: dict[str, int]) -> None:
    """No file row's path is also a directory of another's (`first_line`: path -> its line)."""
    clash = find_path_clash(first_line)
    if clash is not None:
        file_path, below = clash
        raise InputError(source, f"file row {file_path!r} (line {first_line[file_path]}) is also a directory of file row {below!r}",
                         line=first_line[below], field="path")


def read_chunk_file(path: Path, repo: str, commit: str, receipts: ReadReceipts | None = None, progress: Counted | None = None) -> Snapshot:
    """Read a chunk file; file rows become the snapshot, every row feeds the bench's own rankers.

    A row with an absolute path, a `..` component or a repeated file path is a corpus error
    naming the file and line: it is never written anywhere. With `receipts`, a file read in full
    before (the same bytes: its sha256 is the receipt's) is read for its file rows only, and a
    full read leaves a receipt.
    """
    before = identity(path)  # the file the rows are of: a later pass over them refuses any other
    key = before if receipts is not None else None
    try:
        if receipts is not None and key is not None:
            receipt = receipts.load(key)
            if receipt is not None and receipts.digests.sha256(path) == receipt.sha256:
                snapshot = _read_tree_rows(path, repo, commit, receipt)
                if snapshot is not None:
                    return snapshot
        tree = _TreeRows(str(path))
        count = 0
        row_hashes: list[bytes] | None = [] if receipts is not None else None  # the cache's key, taken as the rows go by
        in_path_order = True
        last_path = ""
        nodes = NodeReader()  # what the map needs of the rows, so that it needs no pass of its own
        file_rows: list[tuple[int, int, int, int]] = []
        orphans: list[tuple[int, str, Any]] = []
        offset = 0
        parse, first_line = tree.parse, tree.first_line
        for number, text in iter_numbered_lines(path):
            start, offset = offset, offset + len(text)
            if text.isspace():  # a blank line (never empty: it holds its newline); no copy of a long line
                continue
            row = parse(text, number)
            count += 1
            if row_hashes is not None:
                row_hashes.append(row_hash(row))
            row_path = row["path"]
            in_path_order = in_path_order and last_path <= row_path
            last_path = row_path
            nodes.add(row)
            if row.get("kind") != "file":
                if row_path not in first_line:
                    orphans.append((number, row_path, row.get("kind")))  # before its file row, or an orphan: checked once every file row is known
                continue
            file_rows.append((number, start, offset, int(tree.add_file(row, number))))
            if progress is not None:
                progress(len(file_rows), None)
        check_clash(tree.source, tree.first_line)
        for number, row_path, kind in orphans:
            if row_path not in tree.first_line:
                raise InputError(str(path), f"a {kind!r} row of {row_path!r}, which has no file row", line=number, field="path")
    except InputError as error:
        raise SnapshotError(f"corpus error: {error}") from error
    # the rows are not kept: each build that needs them reads them again, a row at a time
    rows = ChunkFileRows(path, count, in_path_order, tree.checked, before)
    snapshot = Snapshot(repo=repo, commit=commit, origin=str(path), texts=tree.texts, other_paths=tuple(sorted(tree.others)),
                        chunk_rows=rows, row_count=count, _row_hashes=row_hashes, map_nodes=nodes)
    if receipts is not None and key is not None:
        sha256 = receipts.digests.sha256(path)
        if identity(path) == key:  # unchanged since the read began: the digest is of the bytes read
            receipts.store(key, Receipt(sha256=sha256, rows=count, file_rows=tuple(file_rows), paths=tuple(tree.first_line),
                                        files_digest=snapshot.files_digest(), content_digest=snapshot.content_digest()))
    return snapshot


def _read_tree_rows(path: Path, repo: str, commit: str, receipt: Receipt) -> Snapshot | None:
    """The snapshot from the file rows its receipt names: their bytes are kept and no row is
    parsed until its text is used (`FileRowTexts`). None when the receipt does not fit the file
    (then the caller reads it in full, and reports what is wrong).

    The paths are checked as a full read checks them, since a private copy writes them.
    """
    source = str(path)
    spans: dict[str, tuple[int, int, int]] = {}
    others: list[str] = []
    first_line: dict[str, int] = {}
    for (number, start, end, text), file_path in zip(receipt.file_rows, receipt.paths):
        problem = check_relative_path(file_path)
        if problem:
            return None
        first_line[file_path] = number
        if text:
            spans[file_path] = (number, start, end)
        else:
            others.append(file_path)
    try:
        check_clash(source, first_line)
        with _whole_file(path) as data:
            if receipt.file_rows and receipt.file_rows[-1][2] > len(data):
                return None
            kept, spans = _kept_bytes(data, spans)
    except (InputError, OSError, ValueError, zstandard.ZstdError):
        return None
    return Snapshot(repo=repo, commit=commit, origin=source, texts=FileRowTexts(source, kept, spans), other_paths=tuple(sorted(others)),
                    row_count=receipt.rows, rows_dropped=True, _digest=receipt.content_digest, _files_digest=receipt.files_digest)


def _kept_bytes(data: Any, spans: dict[str, tuple[int, int, int]]) -> tuple[bytes, dict[str, tuple[int, int, int]]]:
    """The spans' bytes copied out of `data` (a mapped file, or a decompressed one) into one
    buffer, and each span's place in it."""
    view = memoryview(data)
    try:
        kept = b"".join([view[start:end] for _, start, end in spans.values()])
    finally:
        view.release()  # a mapped file cannot close while a view of it is alive
    moved: dict[str, tuple[int, int, int]] = {}
    offset = 0
    for file_path, (number, start, end) in spans.items():
        moved[file_path] = (number, offset, offset + end - start)
        offset += end - start
    return kept, moved


@contextmanager
def _whole_file(path: Path) -> Iterator[Any]:
    """A chunk file's bytes, decompressed: mapped when plain, read into memory when zstd."""
    with path.open("rb") as raw:
        if path.name.endswith(".zst"):
            with open_zstd(raw) as stream:
                yield stream.read()
        else:
            with mmap.mmap(raw.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                yield mapped


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
    rows = snapshot.row_count
    if rows == 0:
        raise SnapshotError(f"corpus error: {source.path}: the chunk file has no rows")
    files = len(snapshot.texts) + len(snapshot.other_paths)
    for what, promised, found in (("chunk_count", source.chunk_count, rows), ("file_count", source.file_count, files)):
        if promised is not None and promised != found:
            raise SnapshotError(f"corpus error: snapshot {snapshot.key} is incomplete: {source.path} has {found} "
                                f"{'rows' if what == 'chunk_count' else 'file rows'}, the manifest ({source.where()}) promises {what} {promised}")
