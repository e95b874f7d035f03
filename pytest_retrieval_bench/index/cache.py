"""On-disk cache of snapshot indexes: zstd-compressed arrays keyed by content digest and tokenizer.

The cache can only save time, never change a result: an entry is trusted only when its magic,
key and lengths check out, its zstd frame decompresses with its content checksum (which every
entry is written with) intact, and the index it gives keeps every structural invariant its
queries rely on (`invariants.py`: ids in range, lengths that agree, offsets that never fall);
anything else is rebuilt and rewritten (a broken invariant, which no damage in transit makes,
with a warning).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import zstandard

from pytest_retrieval_bench.index.cache_writes import CacheWrites
from pytest_retrieval_bench.index.invariants import check_index
from pytest_retrieval_bench.index.lazy_rows import LazyRows
from pytest_retrieval_bench.index.tokens import TOKENIZER_VERSION
from pytest_retrieval_bench.index.chunk_index import ChunkIndex, LabelValues
from pytest_retrieval_bench.index.postings import LexicalIndex, Postings
from pytest_retrieval_bench.index.repomap import REPOMAP_VERSION, RepoMapIndex

Index = LexicalIndex | ChunkIndex | RepoMapIndex
STATS_KEYS = ("file_count", "symbol_count", "edge_count", "source_count", "test_count", "symbol_reference_scan_skipped")

FORMAT = "rb-index-8"
MAGIC = b"RBIDX8\n"


def cache_key(content_digest: str, kind: str) -> str:
    rules = f"\0{REPOMAP_VERSION}" if kind == "repomap" else ""  # the map's own rules version it too
    return hashlib.sha256(f"{FORMAT}\0{TOKENIZER_VERSION}{rules}\0{kind}\0{content_digest}".encode()).hexdigest()


def _postings_parts(prefix: str, postings: Postings, arrays: dict[str, np.ndarray], lists: dict[str, list[str]]) -> None:
    arrays[f"{prefix}.blob"] = np.frombuffer(postings.blob, dtype=np.uint8)
    arrays[f"{prefix}.term_offsets"] = postings.term_offsets
    arrays[f"{prefix}.offsets"] = postings.offsets
    arrays[f"{prefix}.docs"] = postings.docs
    arrays[f"{prefix}.counts"] = postings.counts


def _postings(prefix: str, arrays: dict[str, np.ndarray], lists: dict[str, list[str]]) -> Postings:
    return Postings(arrays[f"{prefix}.blob"].tobytes(), arrays[f"{prefix}.term_offsets"], arrays[f"{prefix}.offsets"],
                    arrays[f"{prefix}.docs"], arrays[f"{prefix}.counts"])


def _parts(index: Index) -> tuple[dict[str, np.ndarray], dict[str, list[str]], list[str] | None]:
    """The arrays, the lists of strings, and a chunk index's chunk ids (kept apart: a warm run never reads them)."""
    arrays: dict[str, np.ndarray] = {}
    lists: dict[str, list[str]] = {}
    chunk_ids: list[str] | None = None
    if isinstance(index, RepoMapIndex):
        arrays.update({"kinds": index.kinds, "token_sizes": index.token_sizes, "edge_offsets": index.edge_offsets,
                       "edge_targets": index.edge_targets, "edge_weights": index.edge_weights,
                       "stats": np.array([index.stats[key] for key in STATS_KEYS], dtype=np.int64)})
        lists["paths"] = index.paths
        postings = {"postings": index.postings}
    elif isinstance(index, LexicalIndex):
        arrays["doc_lengths"] = index.doc_lengths
        lists["paths"] = index.paths
        postings = {"content": index.content, "path_tokens": index.path_tokens, "words": index.words}
    else:  # rows' paths and symbols as ids into their distinct values: a warm run reads no per-row strings but the ids
        values = index.label_values
        arrays.update({"tiebreak": index.tiebreak, "token_counts": index.token_counts, "distinct_counts": index.distinct_counts,
                       "path_ids": values.path_ids, "symbol_ids": values.symbol_ids})
        lists.update({"paths": values.paths, "basenames": values.basenames, "symbols": values.symbols})
        chunk_ids = list(index.chunk_ids)
        postings = {"postings": index.postings}
    for prefix, value in postings.items():
        _postings_parts(prefix, value, arrays, lists)
    return arrays, lists, chunk_ids


def _index(kind: str, arrays: dict[str, np.ndarray], lists: dict[str, list[str]], chunk_ids_json: memoryview) -> Index:
    if kind == "repomap":
        return RepoMapIndex(paths=lists["paths"], kinds=arrays["kinds"], token_sizes=arrays["token_sizes"],
                            postings=_postings("postings", arrays, lists), edge_offsets=arrays["edge_offsets"],
                            edge_targets=arrays["edge_targets"], edge_weights=arrays["edge_weights"],
                            stats=dict(zip(STATS_KEYS, arrays["stats"].tolist())))
    if kind == "lexical":
        return LexicalIndex(paths=lists["paths"], doc_lengths=arrays["doc_lengths"], content=_postings("content", arrays, lists),
                            path_tokens=_postings("path_tokens", arrays, lists), words=_postings("words", arrays, lists))
    values = LabelValues(path_ids=arrays["path_ids"], paths=lists["paths"], basenames=lists["basenames"],
                         symbol_ids=arrays["symbol_ids"], symbols=lists["symbols"])
    if len(values.basenames) != len(values.paths) or not _ids_within(values.path_ids, len(values.paths)) \
            or not _ids_within(values.symbol_ids, len(values.symbols)):
        raise ValueError("label ids out of range")
    ids = LazyRows(len(values.path_ids), lambda: orjson.loads(chunk_ids_json))
    return ChunkIndex.from_label_values(values, ids, arrays["tiebreak"], arrays["token_counts"], arrays["distinct_counts"],
                                        _postings("postings", arrays, lists))


def _ids_within(ids: np.ndarray, size: int) -> bool:
    return not len(ids) or (int(ids.min()) >= 0 and int(ids.max()) < size)


def encode(key: str, index: Index) -> bytes:
    """The entry's bytes (`entry_parts` joined)."""
    return b"".join(entry_parts(key, index))


def entry_parts(key: str, index: Index) -> list[bytes]:
    """The entry's bytes in pieces (`pack_entry` of the index's arrays, lists and chunk ids)."""
    arrays, lists, chunk_ids = _parts(index)
    return pack_entry(key, arrays, lists, orjson.dumps(chunk_ids) if chunk_ids is not None else b"")


def pack_entry(key: str, arrays: dict[str, np.ndarray], lists: dict[str, Any], tail: bytes = b"") -> list[bytes]:
    """An entry's bytes in pieces, to be written one after another: the body (header, arrays,
    lists, `tail`) is fed to the compressor a part at a time, the arrays through views, so the
    only copy made is the compressed one, and it is never joined (a large chunk index's arrays are
    tens of MB; joining them first held four copies at once)."""
    views: list[memoryview] = []
    layout: dict[str, Any] = {}
    offset = 0
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        layout[name] = [array.dtype.str, len(array), offset, array.nbytes]
        views.append(memoryview(array).cast("B"))
        offset += array.nbytes
    listed = orjson.dumps(lists)
    header = orjson.dumps({"key": key, "layout": layout, "arrays_bytes": offset, "lists_bytes": len(listed),
                           "payload_bytes": offset + len(listed) + len(tail)})
    parts = [len(header).to_bytes(8, "big"), header, *views, listed, tail]
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True, write_content_size=True).compressobj(size=sum(map(len, parts)))
    return [MAGIC, *(compressor.compress(part) for part in parts), compressor.flush()]


def decode(key: str, kind: str, data: bytes) -> Index:
    """Raises ValueError on any inconsistency, so a damaged entry is never used (`unpack_entry`);
    a chunk index's chunk ids stay JSON until something reads them."""
    arrays, lists, tail = unpack_entry(key, data)
    return _index(kind, arrays, lists, tail)


def unpack_entry(key: str, data: bytes) -> tuple[dict[str, np.ndarray], Any, memoryview]:
    """An entry's arrays, lists and tail; ValueError on any inconsistency.

    Damage is found by the zstd frame's content checksum: an entry written without one, or with
    bytes after its frame, is refused. The body is sliced through a memoryview, not copied."""
    if not data.startswith(MAGIC):
        raise ValueError("bad magic")
    frame = memoryview(data)[len(MAGIC) :]
    try:
        if not zstandard.get_frame_parameters(frame).has_checksum:
            raise ValueError("a frame without a content checksum")
        whole = zstandard.ZstdDecompressor().decompress(frame, allow_extra_data=False)
    except zstandard.ZstdError as error:
        raise ValueError(f"corrupt zstd frame: {error}") from error
    body = memoryview(whole)
    if len(body) < 8:
        raise ValueError("short body")
    header_size = int.from_bytes(body[:8], "big")
    header = orjson.loads(body[8 : 8 + header_size])
    payload = body[8 + header_size :]
    if header.get("key") != key or len(payload) != header["payload_bytes"]:
        raise ValueError("key or length mismatch")
    arrays = {}
    for name, (dtype, length, start, size) in header["layout"].items():
        arrays[name] = np.frombuffer(payload, dtype=np.dtype(dtype), count=length, offset=start)
        if arrays[name].nbytes != size:
            raise ValueError(f"array {name} has the wrong size")
    lists_end = header["arrays_bytes"] + header["lists_bytes"]
    return arrays, orjson.loads(payload[header["arrays_bytes"] : lists_end]), payload[lists_end:]


#: what reading an entry may raise when it is damaged: the entry is then rebuilt
DAMAGED = (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError)
#: what packing an entry may raise: nothing is stored, and the index is built again next run
UNPACKABLE = (TypeError, ValueError, zstandard.ZstdError)


class IndexCache:
    """Entries under `directory/<key[:2]>/<key>.idx.zst`, written atomically (temp file + rename)
    through `writes` (shared by the run's caches, so a full disk stops them all at once)."""

    def __init__(self, directory: Path, writes: CacheWrites | None = None):
        self.directory = directory
        self.writes = writes if writes is not None else CacheWrites(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.idx.zst"

    def read_entry(self, key: str) -> bytes | None:
        """An entry's bytes as stored (unchecked: `unpack_entry` checks them), None when absent or unreadable."""
        try:
            return self._path(key).read_bytes()
        except OSError:
            return None

    def write_entry(self, key: str, parts: list[bytes]) -> None:
        self.writes.write(self._path(key), parts)

    def warn_rebuilt(self, key: str, problem: str) -> None:
        """An entry that decoded but breaks its index's invariants: said once, then rebuilt."""
        path = self._path(key)
        self.writes.warn_once(str(path), f"index cache entry {path} breaks its index's invariants ({problem}): rebuilt")

    def load(self, content_digest: str, kind: str) -> Index | None:
        key = cache_key(content_digest, kind)
        data = self.read_entry(key)
        if data is None:
            return None
        try:
            index = decode(key, kind, data)
        except DAMAGED:
            return None
        try:
            check_index(index)
        except ValueError as error:
            self.warn_rebuilt(key, str(error))
            return None
        return index

    def store(self, content_digest: str, kind: str, index: Index) -> None:
        key = cache_key(content_digest, kind)
        try:
            data = entry_parts(key, index)
        except UNPACKABLE:
            return  # the cache only saves time: an entry that cannot be made is rebuilt next run
        self.write_entry(key, data)

