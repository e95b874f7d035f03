"""Receipts of full chunk-file reads, and remembered corpus-file digests: they only save time.

A read by receipt must give the snapshot a full read gives (texts, other paths, row count and
both digests), and must fall back to a full read whenever the file's digest is not the receipt's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import zstandard

from pytest_retrieval_bench.corpus import file_digests as file_digests_module
from pytest_retrieval_bench.corpus.chunk_file_rows import ChunkFileRows
from pytest_retrieval_bench.corpus.chunks import read_chunk_file
from pytest_retrieval_bench.corpus.copies import PrivateCopies
from pytest_retrieval_bench.corpus.file_digests import FileDigests
from pytest_retrieval_bench.corpus.file_row_texts import FileRowTexts
from pytest_retrieval_bench.corpus.read_receipts import Receipt, ReadReceipts, decode, encode, identity
from pytest_retrieval_bench.corpus.resolve import SnapshotResolver
from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.corpus.store import SnapshotStore
from pytest_retrieval_bench.errors import SnapshotError
from pytest_retrieval_bench.index import release_build
from pytest_retrieval_bench.index.cache import IndexCache
from pytest_retrieval_bench.index.cache import encode as cache_encode
from pytest_retrieval_bench.index.repomap import build_repomap
from pytest_retrieval_bench.index.chunk_index import ChunkIndex
from pytest_retrieval_bench.files.sha256 import file_sha256

REPO, COMMIT = "acme/widgets", "c" * 40


def release_rows() -> list[dict[str, Any]]:
    def file_row(path: str, text: str) -> dict[str, Any]:
        return {"path": path, "kind": "file", "text": text, "symbol": "", "chunk_id": f"{path}::file", "start_line": 1}

    def symbol_row(path: str, symbol: str, text: str, line: int) -> dict[str, Any]:
        return {"path": path, "kind": "function", "text": text, "symbol": symbol, "chunk_id": f"{path}::{symbol}", "start_line": line}

    return [
        file_row("src/app.py", "def parse_config(path):\n    return load(path)\n\ndef main():\n    parse_config('x')\n"),
        symbol_row("src/app.py", "parse_config", "def parse_config(path):\n    return load(path)", 1),
        symbol_row("src/app.py", "main", "def main():\n    parse_config('x')", 4),
        file_row("README.md", "Widgets: parse configs fast.\n"),
        file_row("assets/logo.bin", "PNG\x00\x01binary"),  # a file row whose text holds NUL: a path without text
        file_row("src/util/io.py", "import os\n\ndef load(path):\n    return open(path).read()\n"),
        symbol_row("src/util/io.py", "load", "def load(path):\n    return open(path).read()", 3),
    ]


def write_chunk_file(directory: Path, rows: list[dict[str, Any]], compress: bool = False, blank_lines: bool = True) -> Path:
    lines = [json.dumps(row) + "\n" for row in rows]
    if blank_lines:
        lines.insert(2, "\n")
    data = "".join(lines).encode()
    path = directory / "acme__widgets" / f"{COMMIT}.chunks.jsonl{'.zst' if compress else ''}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(zstandard.ZstdCompressor().compress(data) if compress else data)
    return path


def same_tree(found: Snapshot, expected: Snapshot) -> None:
    assert found.texts == expected.texts
    assert found.other_paths == expected.other_paths
    assert found.row_count == expected.row_count == len(expected.chunk_rows or ())
    assert found.files_digest() == expected.files_digest()
    assert found.content_digest() == expected.content_digest()


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zstd"])
def test_a_read_by_receipt_gives_the_snapshot_of_a_full_read(tmp_path: Path, compress: bool) -> None:
    path = write_chunk_file(tmp_path / "corpus", release_rows(), compress=compress)
    receipts = ReadReceipts(tmp_path / "reads", FileDigests(tmp_path / "digests"))
    full = read_chunk_file(path, REPO, COMMIT)
    first = read_chunk_file(path, REPO, COMMIT, receipts)
    assert first.chunk_rows == full.chunk_rows, "the first read is a full read, and leaves a receipt"
    stored = receipts.load(identity(path) or "")
    assert stored is not None and stored.rows == 7 and [row[0] for row in stored.file_rows] == [1, 5, 6, 7]  # line 3 is blank

    again = read_chunk_file(path, REPO, COMMIT, receipts)
    assert again.chunk_rows is None and again.has_rows, "the file rows only: a release whose rows are not held"
    same_tree(again, full)
    assert full.other_paths == ("assets/logo.bin",)


def test_changed_bytes_under_the_same_identity_are_read_in_full(tmp_path: Path, not_racy: None) -> None:
    """Same path, inode, size and modification time, other bytes: the receipt is found, but the
    write moved the change time, so the file is hashed again and its digest is not the receipt's."""
    rows = release_rows()
    path = write_chunk_file(tmp_path / "corpus", rows)
    receipts = ReadReceipts(tmp_path / "reads", FileDigests(tmp_path / "digests"))
    read_chunk_file(path, REPO, COMMIT, receipts)
    before = path.stat()
    data = path.read_bytes()
    changed = data.replace(b"parse configs fast", b"parse configs slow")
    assert len(changed) == len(data) and changed != data
    with path.open("r+b") as handle:  # in place: the inode stays
        handle.write(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert identity(path) is not None and receipts.load(identity(path) or "") is not None, "the receipt is still found"

    snapshot = read_chunk_file(path, REPO, COMMIT, receipts)
    assert snapshot.chunk_rows is not None, "read in full"
    assert snapshot.texts["README.md"] == "Widgets: parse configs slow.\n"
    assert receipts.load(identity(path) or "").sha256 == file_sha256(path), "and the receipt is made anew"
    same_tree(snapshot, read_chunk_file(path, REPO, COMMIT))


def test_a_receipt_of_other_bytes_is_not_used(tmp_path: Path) -> None:
    path = write_chunk_file(tmp_path / "corpus", release_rows())
    receipts = ReadReceipts(tmp_path / "reads", FileDigests(tmp_path / "digests"))
    read_chunk_file(path, REPO, COMMIT, receipts)
    key = identity(path) or ""
    stored = receipts.load(key)
    assert stored is not None and stored.sha256 == file_sha256(path)
    receipts.store(key, Receipt(sha256="0" * 64, rows=stored.rows, file_rows=stored.file_rows, paths=stored.paths,
                                files_digest=stored.files_digest, content_digest=stored.content_digest))
    assert read_chunk_file(path, REPO, COMMIT, receipts).chunk_rows is not None, "read in full"
    assert receipts.load(key) == stored


def test_a_damaged_or_lying_receipt_is_not_used(tmp_path: Path) -> None:
    path = write_chunk_file(tmp_path / "corpus", release_rows())
    receipts = ReadReceipts(tmp_path / "reads", FileDigests(tmp_path / "digests"))
    full = read_chunk_file(path, REPO, COMMIT, receipts)
    key = identity(path) or ""
    stored = receipts.load(key)
    assert stored is not None
    entry = next((tmp_path / "reads").rglob("*.receipt"))

    entry.write_bytes(entry.read_bytes()[:-5] + b"xxxxx")  # damaged: its checksum fails
    assert receipts.load(key) is None
    assert read_chunk_file(path, REPO, COMMIT, receipts).chunk_rows is not None
    assert receipts.load(key) == stored, "the full read writes the receipt again"

    # well formed, but naming a symbol row's line as a file row: no row is parsed when the
    # snapshot is read, so the lie is found when the text is first used, and named
    symbol_line = [2, stored.file_rows[0][2], stored.file_rows[1][1], 1]
    receipts.store(key, Receipt(sha256=stored.sha256, rows=stored.rows, file_rows=[symbol_line], paths=["src/app.py"],
                                files_digest=stored.files_digest, content_digest=stored.content_digest))
    snapshot = read_chunk_file(path, REPO, COMMIT, receipts)
    assert snapshot.chunk_rows is None and list(snapshot.texts) == ["src/app.py"]
    with pytest.raises(SnapshotError, match=rf"{path}:2: the row is not the text file row 'src/app.py'"):
        snapshot.read_text("src/app.py")

    # a path a full read refuses (outside the snapshot, or a file that is also a directory): read in full
    for lying_paths in (["../outside.py", "README.md", "assets/logo.bin", "src/util/io.py"],
                        ["src/app.py", "README.md", "src", "src/util/io.py"]):
        receipts.store(key, Receipt(sha256=stored.sha256, rows=stored.rows, file_rows=stored.file_rows, paths=lying_paths,
                                    files_digest=stored.files_digest, content_digest=stored.content_digest))
        snapshot = read_chunk_file(path, REPO, COMMIT, receipts)
        assert snapshot.chunk_rows is not None, lying_paths
        same_tree(snapshot, full)


def test_a_text_is_parsed_when_first_used_then_kept(tmp_path: Path) -> None:
    path = write_chunk_file(tmp_path / "corpus", release_rows())
    receipts = ReadReceipts(tmp_path / "reads", FileDigests(tmp_path / "digests"))
    read_chunk_file(path, REPO, COMMIT, receipts)
    snapshot = read_chunk_file(path, REPO, COMMIT, receipts)
    texts = snapshot.texts
    assert isinstance(texts, FileRowTexts) and texts.parsed == 0
    assert snapshot.paths() == ["README.md", "assets/logo.bin", "src/app.py", "src/util/io.py"] and texts.parsed == 0
    assert snapshot.read_text("README.md") == "Widgets: parse configs fast.\n" and texts.parsed == 1
    assert snapshot.read_text("README.md") is texts["README.md"] and texts.parsed == 1
    assert snapshot.read_text("assets/logo.bin") is None and snapshot.read_text("nowhere.py") is None
    with pytest.raises(KeyError):
        texts["assets/logo.bin"]


def test_a_read_by_receipt_keeps_its_own_copy_of_the_rows(tmp_path: Path) -> None:
    """The rows' bytes are copied when the snapshot is read: a later write to the file does not
    reach a text parsed after it."""
    path = write_chunk_file(tmp_path / "corpus", release_rows())
    receipts = ReadReceipts(tmp_path / "reads", FileDigests(tmp_path / "digests"))
    read_chunk_file(path, REPO, COMMIT, receipts)
    snapshot = read_chunk_file(path, REPO, COMMIT, receipts)
    path.write_bytes(path.read_bytes().replace(b"parse configs fast", b"parse configs slow"))
    assert snapshot.read_text("README.md") == "Widgets: parse configs fast.\n"


@pytest.mark.parametrize("file_rows, paths", [
    ([[2, 0, 10, 1], [1, 10, 20, 1]], ["a", "b"]),  # lines not increasing
    ([[1, 0, 10, 1], [2, 5, 20, 1]], ["a", "b"]),  # byte ranges overlap
    ([[1, 0, 0, 1]], ["a"]),  # empty range
    ([[1, 0, 10.5, 1]], ["a"]),  # not integers
    ([[1, -1, 10, 1]], ["a"]),
    ([[1, 0, 10]], ["a"]),  # no text flag
    ([[1, 0, 10, 1, 2, 20, 30, 1]], ["a", "b"]),  # two rows run together
    ([[1, 0, 10, 2]], ["a"]),  # a text flag neither 0 nor 1
    ([[1, 0, 10, 1]], []),  # a row without its path
    ([[1, 0, 10, 1], [2, 10, 20, 1]], ["a", "a"]),  # one path twice
    ([[1, 0, 10, 1]], [7]),
])
def test_receipts_with_impossible_file_rows_are_refused(file_rows: list[list[Any]], paths: list[Any]) -> None:
    receipt = Receipt(sha256="0" * 64, rows=3, file_rows=file_rows, paths=paths, files_digest="a", content_digest="b")
    with pytest.raises(ValueError):
        decode("k", encode("k", receipt))


def test_a_receipt_is_for_its_key_only() -> None:
    receipt = Receipt(sha256="0" * 64, rows=1, file_rows=[[1, 0, 10, 1]], paths=["a"], files_digest="a", content_digest="b")
    assert decode("k", encode("k", receipt)) == Receipt(sha256="0" * 64, rows=1, file_rows=[[1, 0, 10, 1]], paths=["a"],
                                                        files_digest="a", content_digest="b")
    with pytest.raises(ValueError, match="key"):
        decode("other", encode("k", receipt))


def test_the_store_reads_the_rows_again_when_the_cache_lacks_an_index(tmp_path: Path) -> None:
    """Receipt found, index entry gone: the chunk index is built from the rows, read again in full."""
    corpus = tmp_path / "corpus"
    write_chunk_file(corpus, release_rows())

    def store(cache: Path, receipts: ReadReceipts | None) -> SnapshotStore:
        return SnapshotStore(SnapshotResolver(corpus_dirs=[corpus], receipts=receipts), PrivateCopies(tmp_path / "copies", owned_root=None), IndexCache(cache))

    reference = store(tmp_path / "cache-a", None).open(REPO, COMMIT, ["chunks", "lexical"]).chunk_index()
    receipts = ReadReceipts(tmp_path / "reads", FileDigests(tmp_path / "digests"))
    store(tmp_path / "cache-b", receipts).open(REPO, COMMIT, ["chunks", "lexical"])  # leaves a receipt and the entries
    second = store(tmp_path / "cache-c", receipts)  # an empty index cache
    snapshot = second.open(REPO, COMMIT, ["chunks", "lexical"])
    built = [event for event in second.drain_events() if event["source"] == "built"]
    assert sorted(event["kind"] for event in built) == ["chunks", "lexical"]
    assert_same_chunk_index(snapshot.chunk_index(), reference)

    cached = store(tmp_path / "cache-b", receipts)
    from_cache = cached.open(REPO, COMMIT, ["chunks", "lexical"])
    assert {event["source"] for event in cached.drain_events()} == {"cache"}
    assert from_cache.chunk_rows is None
    assert_same_chunk_index(from_cache.chunk_index(), reference)


def test_a_release_s_rows_are_read_again_from_the_file_and_held_only_for_an_arm_that_reads_them(tmp_path: Path) -> None:
    """A full read keeps no row: a build goes through them again from the chunk file, with the
    same indexes and content digest as rows held in a list; an arm that reads the rows themselves
    ("rows", an embedding arm) gets them held, equal to the file's."""
    corpus = tmp_path / "corpus"
    path = write_chunk_file(corpus, sorted(release_rows(), key=lambda row: row["path"]))  # in path order: one pass
    snapshot = read_chunk_file(path, REPO, COMMIT)
    assert isinstance(snapshot.chunk_rows, ChunkFileRows) and len(snapshot.chunk_rows) == len(release_rows())
    held = list(snapshot.chunk_rows)
    assert held == sorted(release_rows(), key=lambda row: row["path"])
    assert snapshot.content_digest() == Snapshot(repo=REPO, commit=COMMIT, origin="held", texts=snapshot.texts,
                                                 other_paths=snapshot.other_paths, chunk_rows=held).content_digest()

    def opened(kinds: list[str], cache: str) -> Any:
        store = SnapshotStore(SnapshotResolver(corpus_dirs=[corpus]), PrivateCopies(tmp_path / cache / "copies", owned_root=None),
                              IndexCache(tmp_path / cache))
        return store.open(REPO, COMMIT, kinds)

    kept = opened(["rows", "chunks", "lexical"], "a")
    assert isinstance(kept.chunk_rows, list) and kept.chunk_rows == held
    streamed = opened(["chunks", "lexical"], "b")
    assert isinstance(streamed.chunk_rows, ChunkFileRows)
    assert streamed.content_digest() == kept.content_digest()
    assert_same_chunk_index(streamed.chunk_index(), kept.chunk_index())
    assert_same_chunk_index(streamed.chunk_index(), ChunkIndex.build(held))


def test_a_cold_set_up_goes_through_a_release_s_rows_once_after_its_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The map is built from the nodes the read took as it went, and the chunk index from one
    pass over the rows read again; the map equals the one built from the rows themselves."""
    corpus = tmp_path / "corpus"
    path = write_chunk_file(corpus, sorted(release_rows(), key=lambda row: row["path"]))
    passes: list[int] = []
    real_iter = ChunkFileRows.__iter__

    def counted(self: ChunkFileRows) -> Any:
        passes.append(1)
        return real_iter(self)

    monkeypatch.setattr(ChunkFileRows, "__iter__", counted)
    receipts = ReadReceipts(tmp_path / "reads", FileDigests(tmp_path / "digests"))  # as a run with a cache has: the read takes the digest
    store = SnapshotStore(SnapshotResolver(corpus_dirs=[corpus], receipts=receipts), PrivateCopies(tmp_path / "copies", owned_root=None),
                          IndexCache(tmp_path / "cache"))
    snapshot = store.open(REPO, COMMIT, ["repomap", "chunks"])
    assert len(passes) == 1 and snapshot.map_nodes is None
    expected = build_repomap(list(read_chunk_file(path, REPO, COMMIT).chunk_rows or []))
    assert cache_encode("k", snapshot.repomap_index()) == cache_encode("k", expected)
    assert read_chunk_file(path, REPO, COMMIT).map_nodes is not None
    other = SnapshotStore(SnapshotResolver(corpus_dirs=[corpus]), PrivateCopies(tmp_path / "copies-b", owned_root=None), None)
    assert other.open(REPO, COMMIT, ["chunks"]).map_nodes is None, "no arm reads the map: the nodes go"
    passes.clear()  # a receipt's read meeting an empty cache: one full read again gives the nodes, one pass the chunk index
    again = SnapshotStore(SnapshotResolver(corpus_dirs=[corpus], receipts=receipts), PrivateCopies(tmp_path / "copies-c", owned_root=None),
                          IndexCache(tmp_path / "cache-c")).open(REPO, COMMIT, ["repomap", "chunks"])
    assert len(passes) == 1 and cache_encode("k", again.repomap_index()) == cache_encode("k", expected)


@pytest.mark.parametrize("change", ["rewritten", "row added"])
def test_a_chunk_file_changed_after_its_read_is_not_indexed(tmp_path: Path, change: str) -> None:
    """The rows are read again when an index is built: a chunk file changed since the snapshot was
    read would give indexes that are not those of the rows read (nor of the cache key), so that
    pass is refused, naming the file."""
    corpus = tmp_path / "corpus"
    rows = sorted(release_rows(), key=lambda row: row["path"])
    path = write_chunk_file(corpus, rows)
    store = SnapshotStore(SnapshotResolver(corpus_dirs=[corpus]), PrivateCopies(tmp_path / "copies", owned_root=None), None)
    snapshot = store.get(REPO, COMMIT)
    if change == "rewritten":
        changed = [dict(row, text=row["text"] + " more") if row["kind"] != "file" else row for row in rows]
        write_chunk_file(corpus, changed)
    else:
        with path.open("a") as handle:
            handle.write(json.dumps(dict(rows[-1], chunk_id="extra")) + "\n")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))  # a change within the clock's step shows too
    with pytest.raises(SnapshotError, match=r"changed after it was read"):
        store.open(REPO, COMMIT, ["chunks"])
    assert snapshot.chunk_rows is not None


def assert_same_chunk_index(found: ChunkIndex, expected: ChunkIndex) -> None:
    assert found.paths == expected.paths and found.symbols == expected.symbols and found.chunk_ids == expected.chunk_ids
    for name in ("tiebreak", "token_counts", "distinct_counts"):
        assert getattr(found, name).tolist() == getattr(expected, name).tolist(), name
    values, reference = found.label_values, expected.label_values
    assert values.paths == reference.paths and values.symbols == reference.symbols and values.basenames == reference.basenames
    assert values.path_ids.tolist() == reference.path_ids.tolist() and values.symbol_ids.tolist() == reference.symbol_ids.tolist()


# -- remembered corpus-file digests ------------------------------------------------------------------------------------


@pytest.fixture
def not_racy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_digests_module, "RACY_SECONDS", 0.0)


def test_a_digest_is_remembered_while_the_file_is_untouched(tmp_path: Path, not_racy: None) -> None:
    path = tmp_path / "a.chunks.jsonl"
    path.write_bytes(b'{"path": "a"}\n')
    digests = FileDigests(tmp_path / "digests")
    assert digests.sha256(path) == file_sha256(path)
    entries = list((tmp_path / "digests").rglob("*.digest"))
    assert len(entries) == 1
    # a remembered digest is returned as kept (by the next run): prove it by planting another whole entry under the same status
    resolved = str(path.resolve())
    status, _ = file_digests_module.decode(resolved, entries[0].read_bytes())
    entries[0].write_bytes(file_digests_module.encode(resolved, status, "f" * 64))
    assert digests.sha256(path) == file_sha256(path), "this run remembers what it hashed"
    assert FileDigests(tmp_path / "digests").sha256(path) == "f" * 64


def test_a_written_file_is_hashed_again_even_with_its_old_times(tmp_path: Path, not_racy: None) -> None:
    path = tmp_path / "a.chunks.jsonl"
    path.write_bytes(b'{"path": "a"}\n')
    digests = FileDigests(tmp_path / "digests")
    digests.sha256(path)
    before = path.stat()
    with path.open("r+b") as handle:  # same size, same inode; modification time put back
        handle.write(b'{"path": "b"}\n')
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert digests.sha256(path) == file_sha256(path), "the change time moved, so the digest is computed again"


def test_a_racy_file_is_never_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_digests_module, "RACY_SECONDS", 3600.0)
    path = tmp_path / "a.chunks.jsonl"
    path.write_bytes(b'{"path": "a"}\n')
    digests = FileDigests(tmp_path / "digests")
    assert digests.sha256(path) == file_sha256(path)
    assert not list((tmp_path / "digests").rglob("*.digest"))


def test_without_an_index_cache_the_rows_are_never_hashed(tmp_path: Path) -> None:
    """The content digest only keys the cache; with `--bench-no-cache` hashing 400,000 rows is waste."""
    corpus = tmp_path / "corpus"
    write_chunk_file(corpus, release_rows())
    store = SnapshotStore(SnapshotResolver(corpus_dirs=[corpus]), PrivateCopies(tmp_path / "copies", owned_root=None), None)
    snapshot = store.open(REPO, COMMIT, ["chunks", "lexical", "repomap"])
    assert snapshot._digest is None and snapshot._row_hashes is None, "no row hashed in the set-up"
    cached = SnapshotStore(SnapshotResolver(corpus_dirs=[corpus]), PrivateCopies(tmp_path / "copies", owned_root=None),
                           IndexCache(tmp_path / "cache")).open(REPO, COMMIT, ["chunks"])
    assert_same_chunk_index(snapshot.chunk_index(), cached.chunk_index())
    assert snapshot.content_digest() == cached.content_digest(), "asked for later, the digest is of the rows, read again"


# -- the cycle collector while a snapshot is read and built -------------------------------------------------------------


@pytest.mark.parametrize("enabled_before", [True, False])
def test_the_cycle_collector_is_paused_for_a_read_and_build_then_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                        enabled_before: bool) -> None:
    import gc


    corpus = tmp_path / "corpus"
    write_chunk_file(corpus, release_rows())
    seen: list[bool] = []
    real_read = release_build.OneReadBuild.read

    def watched_read(self: Any) -> None:
        seen.append(gc.isenabled())
        real_read(self)

    monkeypatch.setattr(release_build.OneReadBuild, "read", watched_read)
    store = SnapshotStore(SnapshotResolver(corpus_dirs=[corpus]), PrivateCopies(tmp_path / "copies", owned_root=None), None)
    was = gc.isenabled()
    (gc.enable if enabled_before else gc.disable)()
    try:
        with pytest.raises(SnapshotError):
            store.open("acme/absent", COMMIT, ["chunks"])  # a failed read restores it too
        after_failure = gc.isenabled()
        store.open(REPO, COMMIT, ["chunks", "lexical"])
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [False]
    assert after_failure is enabled_before and after is enabled_before


def test_a_released_snapshot_is_freed_without_the_cycle_collector(tmp_path: Path) -> None:
    """Items take the snapshot's token counts; nothing they leave may tie the snapshot to itself,
    or its texts and indexes stay in memory beside the next snapshot's while collection is paused."""
    import gc
    import weakref

    corpus = tmp_path / "corpus"
    write_chunk_file(corpus, release_rows())
    store = SnapshotStore(SnapshotResolver(corpus_dirs=[corpus]), PrivateCopies(tmp_path / "copies", owned_root=None), None)
    was = gc.isenabled()
    gc.disable()
    try:
        snapshot = store.open(REPO, COMMIT, ["chunks", "lexical"])
        assert snapshot.token_counts().file("src/app.py") is not None
        index = weakref.ref(snapshot.chunk_index())
        released = weakref.ref(snapshot)
        del snapshot
        store.release(f"{REPO}@{COMMIT}")
        assert released() is None and index() is None
    finally:
        if was:
            gc.enable()
