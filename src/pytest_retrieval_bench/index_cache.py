"""On-disk cache of snapshot indexes: zstd-compressed arrays keyed by content digest and tokenizer.

The cache can only save time, never change a result: an entry is trusted only when its magic,
key, lengths and payload sha256 all check out; anything else is rebuilt and rewritten.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import zstandard

from pytest_retrieval_bench.arms.tokens import TOKENIZER_VERSION
from pytest_retrieval_bench.index import ChunkIndex, LexicalIndex, Postings

FORMAT = "rb-index-2"
MAGIC = b"RBIDX2\n"


def cache_key(content_digest: str) -> str:
    return hashlib.sha256(f"{FORMAT}\0{TOKENIZER_VERSION}\0{content_digest}".encode()).hexdigest()


def _postings_parts(prefix: str, postings: Postings, arrays: dict[str, np.ndarray], lists: dict[str, list[str]]) -> None:
    lists[f"{prefix}.terms"] = postings.terms
    arrays[f"{prefix}.offsets"] = postings.offsets
    arrays[f"{prefix}.docs"] = postings.docs
    arrays[f"{prefix}.counts"] = postings.counts


def _postings(prefix: str, arrays: dict[str, np.ndarray], lists: dict[str, list[str]]) -> Postings:
    return Postings(lists[f"{prefix}.terms"], arrays[f"{prefix}.offsets"], arrays[f"{prefix}.docs"], arrays[f"{prefix}.counts"])


def encode(key: str, lexical: LexicalIndex, chunks: ChunkIndex) -> bytes:
    arrays: dict[str, np.ndarray] = {"doc_lengths": lexical.doc_lengths, "chunk.tiebreak": chunks.tiebreak,
                                     "chunk.token_counts": chunks.token_counts, "chunk.distinct_counts": chunks.distinct_counts}
    lists: dict[str, list[str]] = {"paths": lexical.paths, "chunk.paths": chunks.paths, "chunk.ids": chunks.chunk_ids, "chunk.symbols": chunks.symbols}
    for prefix, postings in (("content", lexical.content), ("path_tokens", lexical.path_tokens), ("words", lexical.words), ("chunk.postings", chunks.postings)):
        _postings_parts(prefix, postings, arrays, lists)
    blobs: list[bytes] = []
    layout: dict[str, Any] = {}
    offset = 0
    for name in sorted(arrays):
        data = np.ascontiguousarray(arrays[name]).tobytes()
        layout[name] = [arrays[name].dtype.str, len(arrays[name]), offset, len(data)]
        blobs.append(data)
        offset += len(data)
    payload = b"".join(blobs) + orjson.dumps(lists)
    header = orjson.dumps({"key": key, "layout": layout, "arrays_bytes": offset, "payload_bytes": len(payload),
                           "sha256": hashlib.sha256(payload).hexdigest()})
    body = len(header).to_bytes(8, "big") + header + payload
    return MAGIC + zstandard.ZstdCompressor(level=3, write_checksum=True, write_content_size=True).compress(body)


def decode(key: str, data: bytes) -> tuple[LexicalIndex, ChunkIndex]:
    """Raises ValueError on any inconsistency, so a damaged entry is never used."""
    if not data.startswith(MAGIC):
        raise ValueError("bad magic")
    try:
        body = zstandard.ZstdDecompressor().decompress(data[len(MAGIC):])
    except zstandard.ZstdError as error:
        raise ValueError(f"corrupt zstd frame: {error}") from error
    header_size = int.from_bytes(body[:8], "big")
    header = orjson.loads(body[8 : 8 + header_size])
    payload = body[8 + header_size :]
    if header.get("key") != key or len(payload) != header["payload_bytes"] or hashlib.sha256(payload).hexdigest() != header["sha256"]:
        raise ValueError("key, length or checksum mismatch")
    arrays = {}
    for name, (dtype, length, start, size) in header["layout"].items():
        arrays[name] = np.frombuffer(payload, dtype=np.dtype(dtype), count=length, offset=start)
        if arrays[name].nbytes != size:
            raise ValueError(f"array {name} has the wrong size")
    lists = orjson.loads(payload[header["arrays_bytes"] :])
    lexical = LexicalIndex(paths=lists["paths"], doc_lengths=arrays["doc_lengths"], content=_postings("content", arrays, lists),
                           path_tokens=_postings("path_tokens", arrays, lists), words=_postings("words", arrays, lists))
    chunks = ChunkIndex(paths=lists["chunk.paths"], chunk_ids=lists["chunk.ids"], symbols=lists["chunk.symbols"],
                        tiebreak=arrays["chunk.tiebreak"], token_counts=arrays["chunk.token_counts"],
                        distinct_counts=arrays["chunk.distinct_counts"], postings=_postings("chunk.postings", arrays, lists))
    return lexical, chunks


class IndexCache:
    """Entries under `directory/<key[:2]>/<key>.idx.zst`, written atomically (temp file + rename)."""

    def __init__(self, directory: Path):
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.idx.zst"

    def load(self, content_digest: str) -> tuple[LexicalIndex, ChunkIndex] | None:
        key = cache_key(content_digest)
        path = self._path(key)
        try:
            return decode(key, path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
            return None

    def store(self, content_digest: str, lexical: LexicalIndex, chunks: ChunkIndex) -> None:
        key = cache_key(content_digest)
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
            with os.fdopen(handle, "wb") as out:
                out.write(encode(key, lexical, chunks))
            os.replace(temporary, path)
        except OSError:
            pass
