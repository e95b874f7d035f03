"""The process-wide snapshot store: one snapshot (and its indexes) in memory at a time.

Items are ordered by snapshot, so holding one at a time costs nothing locally and keeps memory
bounded by the largest snapshot; a snapshot that cannot be loaded is remembered as an error so
each of its items fails fast with the same message.
"""

from __future__ import annotations

from typing import Any, Callable

from pytest_retrieval_bench.corpus.copies import PrivateCopies
from pytest_retrieval_bench.corpus.resolve import SnapshotResolver
from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.errors import SnapshotError
from pytest_retrieval_bench.index.postings import ChunkIndex, LexicalIndex
from pytest_retrieval_bench.index.cache import IndexCache


class SnapshotStore:
    def __init__(self, resolver: SnapshotResolver, copies: PrivateCopies, cache: IndexCache | None, progress: Callable[[str], None] = lambda _: None):
        self.resolver = resolver
        self.copies = copies
        self.cache = cache
        self.progress = progress
        self._current: Snapshot | None = None
        self._failures: dict[str, str] = {}
        self._prepared: set[tuple[str, str]] = set()

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
            released = self._current.key
            self.copies.release(released)
            # its private copy is gone: a later visit must prepare the new copy again
            self._prepared = {entry for entry in self._prepared if entry[1] != released}
            self._current = None
        try:
            snapshot = self.resolver.load(repo, commit)
        except SnapshotError as error:
            self._failures[key] = str(error)
            raise
        snapshot.directory_provider = self.copies.get
        snapshot.index_loader = self._indexes
        self._current = snapshot
        return snapshot

    def _indexes(self, snapshot: Snapshot, kind: str) -> LexicalIndex | ChunkIndex:
        """One kind of index ("lexical" or "chunks"), from the cache when it holds a sound entry.

        A tree has no chunk rows: its chunk index is read off its whole-file index instead.
        """
        if kind == "chunks" and snapshot.chunk_rows is None:
            return ChunkIndex.of_files(snapshot.lexical_index())
        digest = snapshot.content_digest()
        if self.cache is not None:
            cached = self.cache.load(digest, kind)
            if cached is not None:
                self.progress(f"retrieval-bench: {snapshot.key}: {kind} index loaded from cache")
                return cached
        self.progress(f"retrieval-bench: {snapshot.key}: building the {kind} index of {len(snapshot.texts)} text files")
        if kind == "lexical":
            index: LexicalIndex | ChunkIndex = LexicalIndex.build(snapshot.text_files())
        else:
            index = ChunkIndex.build(snapshot.chunk_rows or [])
        if self.cache is not None:
            self.cache.store(digest, kind, index)
        return index

    def close(self) -> None:
        self._current = None
        self.copies.cleanup()
