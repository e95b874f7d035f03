"""A snapshot's `GrepIndex` kept in the run's index cache, so only the first run over a snapshot builds it.

Agent items get one or two samples per snapshot on real rows: too few greps to earn an index by
scans alone (`tool_files.INDEX_AFTER_SCANS`), yet every grep of an indexed snapshot costs a few
percent of a scan. With a cache, the first run builds the index at the snapshot's first grep and
stores it; every later run loads it before the first call. An entry is trusted as every cache
entry is (`index.cache`: magic, key, lengths, the zstd checksum) and only when its arrays keep the
invariants the lookups rely on (`index.invariants.check_grep_arrays`) and its paths are the
snapshot's text files in the snapshot's order; anything else is rebuilt and stored again, so the
cache never changes a grep's hits.

The key is the snapshot's files digest (its paths and texts: all the index is made of, chunk rows
aside), this entry's own format version (a change to the index's layout misses old entries) and
the interpreter's Unicode version (the runs are cut from `str.lower`'s text).
"""

from __future__ import annotations

import hashlib
import time
import unicodedata
from typing import Any, Callable

from pytest_retrieval_bench.arms.agents.grep_index import GrepIndex, PathOrder
from pytest_retrieval_bench.index.cache import DAMAGED, UNPACKABLE, IndexCache, pack_entry, unpack_entry
from pytest_retrieval_bench.index.invariants import check_grep_arrays

KIND = "grep"
FORMAT = "rb-grep-1"
"""The grep entry's layout version: raise it with any change to `GrepIndex.arrays()` or the run rule."""


def grep_key(files_digest: str) -> str:
    """The entry's key: its format, and the Unicode version whose `str.lower` made the runs (an
    interpreter with another could lower a non-ASCII letter otherwise), beside the files digest."""
    return hashlib.sha256(f"{FORMAT}\0{unicodedata.unidata_version}\0{KIND}\0{files_digest}".encode()).hexdigest()


def grep_entry(key: str, index: GrepIndex) -> list[bytes]:
    """The entry's bytes in pieces: the index's arrays, its paths in their order."""
    return pack_entry(key, index.arrays(), {"paths": index.paths.paths})


def sound_grep_index(arrays: dict[str, Any], paths: list[str]) -> GrepIndex:
    """The index an entry's arrays make over `paths` (the snapshot's, in its order, as the entry
    lists them); ValueError naming the array when one breaks an invariant (`check_grep_arrays`)."""
    check_grep_arrays(arrays, len(paths))
    return GrepIndex.from_arrays(PathOrder(paths), arrays)


class GrepIndexCache:
    """Grep entries in a run's `IndexCache`; `events` (the store's set-up events, when given) hears
    each load and build as the other indexes' do (`kind` "grep", `source` "cache" or "built")."""

    def __init__(self, cache: IndexCache, events: list[dict[str, Any]] | None = None):
        self.cache = cache
        self.events = events
        self.loaded = 0
        self.built = 0

    def load(self, files_digest: str, paths: list[str], snapshot: str = "") -> GrepIndex | None:
        """The snapshot's index when the cache holds a sound entry for it, else None."""
        started = time.perf_counter()
        key = grep_key(files_digest)
        data = self.cache.read_entry(key)
        if data is None:
            return None
        try:
            arrays, lists, _ = unpack_entry(key, data)
        except DAMAGED:  # damaged on disk or in transit: found by the checksum, rebuilt quietly as any entry
            return None
        if not isinstance(lists, dict) or lists.get("paths") != paths:  # the same files listed in another order: rebuilt quietly
            return None
        try:
            index = sound_grep_index(arrays, paths)
        except (ValueError, KeyError, TypeError) as error:  # a writer's fault, not damage: said once
            self.cache.warn_rebuilt(key, str(error))
            return None
        self.loaded += 1
        self._event(snapshot, "cache", len(paths), time.perf_counter() - started)
        return index

    def store(self, files_digest: str, index: GrepIndex, seconds: float, snapshot: str = "") -> None:
        """Keep a freshly built index (built in `seconds`) for later runs."""
        self.built += 1
        key = grep_key(files_digest)
        try:
            parts = grep_entry(key, index)
        except UNPACKABLE:
            parts = None  # the cache only saves time: an entry that cannot be made is built again next run
        if parts is not None:
            self.cache.write_entry(key, parts)
        self._event(snapshot, "built", index.size, seconds)

    def _event(self, snapshot: str, source: str, files: int, seconds: float) -> None:
        if self.events is not None:
            self.events.append({"snapshot": snapshot, "kind": KIND, "source": source, "files": files, "seconds": round(seconds, 3)})

    def built_hook(self, files_digest: str, snapshot: str) -> Callable[[GrepIndex, float], None]:
        """What a `ToolFiles` calls once it has built the index: store it under this snapshot's key."""
        return lambda index, seconds: self.store(files_digest, index, seconds, snapshot)
