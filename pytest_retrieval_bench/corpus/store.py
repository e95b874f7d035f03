"""The process-wide snapshot store: one snapshot (and its indexes) in memory at a time.

Items are ordered by snapshot, so holding one at a time costs nothing locally and keeps memory
bounded by the largest snapshot; a snapshot that cannot be loaded is remembered as an error so
each of its items fails fast with the same message.
"""

from __future__ import annotations

import gc
import time
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

from pytest_retrieval_bench.corpus.chunk_file_rows import ChunkFileRows
from pytest_retrieval_bench.corpus.copies import PrivateCopies
from pytest_retrieval_bench.corpus.progress import Counted, SetupCounts
from pytest_retrieval_bench.corpus.resolve import SnapshotResolver
from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.errors import SnapshotError
from pytest_retrieval_bench.index.chunk_index import ChunkIndex, file_chunks
from pytest_retrieval_bench.index.postings import LexicalIndex
from pytest_retrieval_bench.index.repomap import RepoMapIndex, build_repomap
from pytest_retrieval_bench.index.repomap_content import MapContent
from pytest_retrieval_bench.index.repomap_nodes import NodeReader
from pytest_retrieval_bench.index.cache import IndexCache
from pytest_retrieval_bench.index.release_build import OneReadBuild, build_indexes


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Python's cycle collector off while a snapshot is read and indexed, then as it was.

    A read and a build make millions of short-lived objects (row dicts, token lists), and hold
    many (held rows, vocabularies); each collection those allocations set off walks what is held,
    and finds nothing, since nothing the read or the build makes is a cycle. Reference counting
    still frees every object as before. It was 8% of a cold build on a real release corpus.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class SnapshotStore:
    def __init__(self, resolver: SnapshotResolver, copies: PrivateCopies, cache: IndexCache | None):
        self.resolver = resolver
        self.copies = copies
        self.cache = cache
        #: index work done since the last `drain_events()`: {snapshot, kind, source, seconds}
        self.events: list[dict[str, Any]] = []
        #: the snapshots read since the last `drain_loads()`, once per read (a revisit reads again)
        self.loads: list[str] = []
        self._current: Snapshot | None = None
        self._failures: dict[str, str] = {}
        self._prepared: set[tuple[str, str]] = set()
        #: the counts of the set-up under way in `open`, told of each file read and index made
        self._progress: SetupCounts | None = None
        #: whether a map built now keeps the texts it read whole for the build of the same set-up, and what it kept
        self._keep_content = False
        self._map_content: MapContent | None = None

    def prepare(self, arm: Any, snapshot: Snapshot) -> None:
        """Run an arm's optional per-snapshot `prepare` step once, before its first request."""
        prepare = getattr(arm, "prepare", None)
        if callable(prepare) and (arm.name, snapshot.key) not in self._prepared:
            prepare(snapshot)
            self._prepared.add((arm.name, snapshot.key))

    def get(self, repo: str, commit: str) -> Snapshot:
        key = f"{repo}@{commit}"
        if key in self._failures:
            raise SnapshotError(self._failures[key])
        if self._current is not None and self._current.key == key:
            return self._current
        if self._current is not None:
            self.release(self._current.key)
        try:
            snapshot = self.load_apart(repo, commit)
        except SnapshotError as error:
            self._failures[key] = str(error)
            raise
        self._current = snapshot
        self.loads.append(key)
        return snapshot

    def load_apart(self, repo: str, commit: str) -> Snapshot:
        """A snapshot read afresh, with this store's private copies and index cache, but not held
        as the current one (an ordinary test's `bench_snapshots(key)`)."""
        progress = self._progress
        snapshot = self.resolver.load(repo, commit, progress=progress.read if progress is not None else None)
        if progress is not None:  # every file is known now: the builds' share can be estimated
            files = len(snapshot.texts) + len(snapshot.other_paths)
            progress.read(files, files)
        snapshot.digest_wanted = self.cache is not None  # the cache key: hashing every row is for nothing without a cache
        snapshot.directory_provider = self.copies.get
        snapshot.index_loader = self._indexes
        return snapshot

    def release(self, key: str) -> None:
        """Drop a snapshot: its private copy is removed, so a later visit prepares a new one."""
        self.copies.release(key)
        self._prepared = {entry for entry in self._prepared if entry[1] != key}
        if self._current is not None and self._current.key == key:
            self._current = None

    def open(self, repo: str, commit: str, index_kinds: Iterable[str], progress: SetupCounts | None = None) -> Snapshot:
        """Load a snapshot and build (or load) the indexes its selected arms use; `progress`
        counts the files read and the indexes made as they go."""
        self._progress = progress
        try:
            with cyclic_gc_paused():
                return self._open(repo, commit, index_kinds)
        finally:
            self._progress = None

    def _open(self, repo: str, commit: str, index_kinds: Iterable[str]) -> Snapshot:
        snapshot = self.get(repo, commit)
        kinds = set(index_kinds)
        if "rows" in kinds:  # an arm reads the rows themselves (an embedding arm): nothing to build
            snapshot.keep_rows = True
            if snapshot.has_rows and not isinstance(snapshot.chunk_rows, list):  # held, for the arm's passes over them
                snapshot.chunk_rows = list(self._rows(snapshot))
            if self._progress is not None:
                self._progress.index_done()
        if "repomap" in kinds:  # first: its temporaries are gone before the other build's start
            self._keep_content = snapshot.has_rows and bool(kinds & {"chunks", "lexical"})
            try:
                snapshot.repomap_index()
            finally:
                self._keep_content = False
        else:  # no arm of this snapshot reads the map: the nodes its read took for it can go
            snapshot.map_nodes = None
        try:
            if snapshot.has_rows and kinds & {"chunks", "lexical"}:
                self._build_from_rows(snapshot, kinds & {"chunks", "lexical"})
        finally:
            self._map_content = None
        # the indexes that read the rows exist now: free them
        snapshot.drop_rows()
        if "chunks" in kinds:
            snapshot.chunk_index()
        if "lexical" in kinds:
            snapshot.lexical_index()
        return snapshot

    def _build_from_rows(self, snapshot: Snapshot, kinds: set[str]) -> None:
        """The chunk and whole-file indexes of a release, those the cache lacks built together, so
        each text is read once for both (the build's time is on the event of the first kind built)."""
        started = time.perf_counter()
        missing = sorted(kind for kind in kinds if not snapshot.has_index(kind))
        for kind in list(missing):
            cached = self._from_cache(snapshot, kind, started)
            if cached is not None:
                snapshot.keep_index(kind, cached)
                missing.remove(kind)
                started = time.perf_counter()
        if not missing:
            return
        given, self._map_content = self._map_content, None  # what a map built just now read whole: not read again
        build = OneReadBuild(snapshot.texts, self._rows(snapshot) if "chunks" in missing else None, "lexical" in missing,
                             progress=self._building(), given=given)
        del given
        build.read()
        snapshot.drop_rows()  # read: the counts are all the build needs of them now
        lexical, chunks = build.finish()
        for kind, index in (("chunks", chunks), ("lexical", lexical)):
            if index is not None:
                snapshot.keep_index(kind, self._built(snapshot, kind, index, started))
                started = time.perf_counter()

    def drain_events(self) -> list[dict[str, Any]]:
        events = list(self.events)
        self.events.clear()  # in place: embedding arms hold this list to add their own events to
        return events

    def drain_loads(self) -> list[str]:
        loads, self.loads = self.loads, []
        return loads

    def _indexes(self, snapshot: Snapshot, kind: str) -> LexicalIndex | ChunkIndex | RepoMapIndex:
        """One kind of index ("lexical", "chunks" or "repomap"), from the cache when it holds a sound entry.

        A tree has no chunk rows: its chunk index is read off its whole-file index instead, and
        its map is built from one file row per text file.
        """
        if kind == "chunks" and not snapshot.has_rows:
            index = ChunkIndex.of_files(snapshot.lexical_index())
            if self._progress is not None:
                self._progress.index_done()
            return index
        started = time.perf_counter()
        nodes = None
        if kind == "repomap":  # the nodes the read took for the map: used now, or never
            nodes, snapshot.map_nodes = snapshot.map_nodes, None
        cached = self._from_cache(snapshot, kind, started)
        if cached is not None:
            return cached
        if kind == "lexical":  # a tree's (or a release's not built with its rows): a document at a time, lean on memory
            index: LexicalIndex | ChunkIndex | RepoMapIndex = LexicalIndex.build(snapshot.text_files(), self._building())
        elif kind == "repomap":
            content = MapContent() if self._keep_content else None
            index = build_repomap(self._map_source(snapshot, nodes), self._building(), content)
            self._map_content = content
        else:
            index = build_indexes(snapshot.texts, self._rows(snapshot), False)[1]  # type: ignore[assignment]
        return self._built(snapshot, kind, index, started)

    def _building(self) -> Counted | None:
        return self._progress.building if self._progress is not None else None

    def _from_cache(self, snapshot: Snapshot, kind: str, started: float) -> LexicalIndex | ChunkIndex | RepoMapIndex | None:
        """A sound cache entry of this kind, with its set-up event; None when there is none (or no cache)."""
        cached = self.cache.load(snapshot.content_digest(), kind) if self.cache is not None else None
        if cached is not None:
            self._event(snapshot, kind, "cache", started)
        return cached

    def _built(self, snapshot: Snapshot, kind: str, index: Any, started: float) -> Any:
        """A freshly built index, stored in the cache, with its set-up event."""
        if self.cache is not None:
            self.cache.store(snapshot.content_digest(), kind, index)
        self._event(snapshot, kind, "built", started)
        return index

    def _rows(self, snapshot: Snapshot) -> Iterable[dict[str, Any]]:
        """The chunk rows (held, or read again from the chunk file as they are gone through), read
        again from the source when set-up freed them or read only the file rows (a receipt's read,
        when the cache turns out to lack an index)."""
        if snapshot.chunk_rows is not None:
            return snapshot.chunk_rows
        return self._read_again(snapshot).chunk_rows or []

    def _read_again(self, snapshot: Snapshot) -> Snapshot:
        """The snapshot read again in full; its rows, read again from the file at each pass, hold
        nothing, so they are kept on the snapshot and a further pass needs no further full read."""
        loaded = self.resolver.load(snapshot.repo, snapshot.commit, whole=True)
        if isinstance(loaded.chunk_rows, ChunkFileRows):
            snapshot.chunk_rows, snapshot.rows_dropped = loaded.chunk_rows, False
        return loaded

    def _map_source(self, snapshot: Snapshot, nodes: NodeReader | None) -> NodeReader | Iterable[dict[str, Any]]:
        """What the map is built from: the nodes the read took, else a tree's file chunks, else the
        rows; after a receipt's read (no rows, no nodes) the full read again takes the nodes too."""
        if nodes is not None:
            return nodes
        if not snapshot.has_rows:
            return file_chunks(snapshot.text_files())
        if snapshot.chunk_rows is None:
            loaded = self._read_again(snapshot)
            if loaded.map_nodes is not None:
                return loaded.map_nodes
        return self._rows(snapshot)

    def _event(self, snapshot: Snapshot, kind: str, source: str, started: float) -> None:
        self.events.append({"snapshot": snapshot.key, "kind": kind, "source": source, "files": len(snapshot.texts),
                            "seconds": round(time.perf_counter() - started, 3)})
        if self._progress is not None:
            self._progress.index_done()

    def close(self) -> None:
        self._current = None
        self.copies.cleanup()
        self.copies.restore_signals()
