"""A content-addressed store of text vectors, so an embedding arm encodes each text once.

A vector is keyed by the model's identity (a digest the arm makes of the model's name, weights
digest, dimension, prefixes and normalisation) and the blake2b-128 digest of the exact text
encoded. Vectors of one encode call are kept together as a pack, `<model>/<name>.vec`, beside its
list of text digests, `<model>/<name>.ids`; both are sealed records (magic, sha256, body) named after
their content and written atomically, so xdist workers and concurrent runs writing at once write
the same bytes to the same name or different names, never a torn file. A set-up reads every `.ids`
list of its model not read before in the process (16 bytes a text), then only the packs that hold a
text it needs; each pack is verified before any vector of it is used, and a corrupt or truncated
one is removed with a warning (its texts are encoded again).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import orjson

from pytest_retrieval_bench.index.cache_writes import CacheWrites
from pytest_retrieval_bench.index.sealed import seal, unseal

PACK_MAGIC = b"retrieval-bench vectors 1\n"
IDS_MAGIC = b"retrieval-bench vector ids 1\n"
DIGEST_BYTES = 16


def text_digest(text: str) -> bytes:
    """The bench's own text digest (blake2b, 16 bytes) of the exact text encoded."""
    return hashlib.blake2b(text.encode("utf-8", errors="surrogatepass"), digest_size=DIGEST_BYTES).digest()


def _pack_body(digests: Sequence[bytes], vectors: np.ndarray) -> bytes:
    header = orjson.dumps({"count": len(digests), "dim": int(vectors.shape[1])}) + b"\n"
    return header + b"".join(digests) + np.ascontiguousarray(vectors, dtype="<f4").tobytes()


def _read_pack(body: bytes) -> tuple[list[bytes], np.ndarray]:
    """(digests, vectors) of a verified pack body; ValueError when its sizes do not add up."""
    header, _, rest = body.partition(b"\n")
    meta = orjson.loads(header)
    count, dim = int(meta["count"]), int(meta["dim"])
    if count < 0 or dim <= 0 or len(rest) != count * (DIGEST_BYTES + 4 * dim):
        raise ValueError("sizes do not match the header")
    digests = [rest[i * DIGEST_BYTES:(i + 1) * DIGEST_BYTES] for i in range(count)]
    vectors = np.frombuffer(rest, dtype="<f4", offset=count * DIGEST_BYTES).reshape(count, dim)
    return digests, vectors


class VectorStore:
    """The vectors under `directory/<model key>/`, written through the run's shared `writes`."""

    def __init__(self, directory: Path, writes: CacheWrites | None = None):
        self.directory = directory
        self.writes = writes if writes is not None else CacheWrites(directory)
        self._digest_packs: dict[Path, dict[bytes, Path]] = {}
        self._ids_read: dict[Path, set[str]] = {}

    def _dropped(self, path: Path, why: str) -> None:
        self.writes.warn_once(str(path), f"vector cache entry {path} is unreadable ({why}): its texts are encoded again")
        for stale in (path, path.with_suffix(".ids")):
            try:
                stale.unlink(missing_ok=True)
            except OSError:
                pass

    def _listed(self, folder: Path) -> dict[bytes, Path]:
        """Which pack holds each digest of a model's folder, from its `.ids` lists. A list is read
        once per process (a pack's name is its content's digest, so it never changes); lists
        written since, by this run or another, are read at the next look."""
        known = self._digest_packs.setdefault(folder, {})
        seen = self._ids_read.setdefault(folder, set())
        for ids_path in sorted(folder.glob("*.ids")):
            if ids_path.name in seen:
                continue
            try:
                listed = unseal(IDS_MAGIC, ids_path.read_bytes())
            except (OSError, ValueError):
                continue  # a hint only: the pack, if any, is found through a sound list or encoded again
            seen.add(ids_path.name)
            pack = ids_path.with_suffix(".vec")
            for start in range(0, len(listed), DIGEST_BYTES):
                known.setdefault(listed[start:start + DIGEST_BYTES], pack)
        return known

    def lookup(self, model_key: str, wanted: set[bytes], dim: int) -> dict[bytes, np.ndarray]:
        """The stored vectors of the `wanted` digests (verified, of dimension `dim`); others are missing."""
        found: dict[bytes, np.ndarray] = {}
        folder = self.directory / model_key
        if not wanted or not folder.is_dir():
            return found
        listed = self._listed(folder)
        by_pack: dict[Path, set[bytes]] = {}
        for digest in wanted:
            pack = listed.get(digest)
            if pack is not None:
                by_pack.setdefault(pack, set()).add(digest)
        for pack in sorted(by_pack):
            hits = by_pack[pack] - found.keys()
            if not hits:
                continue
            try:
                digests, vectors = _read_pack(unseal(PACK_MAGIC, pack.read_bytes()))
            except FileNotFoundError:
                self._forget(folder)
                continue
            except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError) as error:
                self._dropped(pack, str(error))
                self._forget(folder)
                continue
            if vectors.shape[1] != dim:
                self._dropped(pack, f"dimension {vectors.shape[1]}, the model's is {dim}")
                self._forget(folder)
                continue
            for row, digest in enumerate(digests):
                if digest in hits:
                    found[digest] = vectors[row]
        return found

    def _forget(self, folder: Path) -> None:
        """A pack gone or dropped: the folder's lists are read again at the next look (another pack
        may hold its texts, or the same one be written anew under the same name)."""
        self._digest_packs.pop(folder, None)
        self._ids_read.pop(folder, None)

    def store(self, model_key: str, digests: Sequence[bytes], vectors: np.ndarray) -> None:
        """Keep one encode call's vectors as a pack (nothing when the writes have stopped)."""
        if not len(digests):
            return
        body = _pack_body(digests, vectors)
        name = hashlib.sha256(body).hexdigest()[:32]
        folder = self.directory / model_key
        self.writes.write(folder / f"{name}.vec", seal(PACK_MAGIC, body))
        self.writes.write(folder / f"{name}.ids", seal(IDS_MAGIC, b"".join(digests)))


#: the bench's shared text cache encodes its misses in windows of 128 batches, 256 to 4,096 texts
WINDOW_BATCHES, WINDOW_MIN, WINDOW_MAX = 128, 256, 4_096


def encode_window(batch_size: int) -> int:
    """How many texts one encode call takes: the bench's `shared_text_cache_encode_window_size`."""
    return min(WINDOW_MAX, max(WINDOW_MIN, max(1, batch_size) * WINDOW_BATCHES))


def vectors_for(texts: Sequence[str], model_key: str, store: VectorStore | None, dim: int | None,
                encode: Callable[[list[str]], np.ndarray], window: int = WINDOW_MAX,
                progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, int]:
    """One contiguous float32 array of the texts' vectors, in order, and how many texts were encoded.

    The distinct texts the store lacks are encoded in their order of first appearance, `window`
    at a time, as the bench's shared text cache encodes its misses (so with an empty store the
    calls are the bench's own: the same texts in the same batches). Each call's vectors are stored
    as they come, so an interrupted set-up keeps what it encoded; `progress` hears
    `(texts encoded, texts to encode)` after each call.
    """
    digests = [text_digest(text) for text in texts]
    found = store.lookup(model_key, set(digests), dim) if store is not None and dim is not None else {}
    first_row: dict[bytes, int] = {}
    for row, digest in enumerate(digests):
        if digest not in found:
            first_row.setdefault(digest, row)
    missing = list(first_row)
    for start in range(0, len(missing), window):
        part = missing[start:start + window]
        encoded = encode([texts[first_row[digest]] for digest in part])
        dim = encoded.shape[1]  # the caller's `encode` holds every call to one dimension
        found.update(zip(part, encoded))
        if store is not None:
            store.store(model_key, part, encoded)
        if progress is not None:
            progress(min(start + window, len(missing)), len(missing))
    out = np.empty((len(texts), dim or 0), dtype=np.float32)
    for row, digest in enumerate(digests):
        out[row] = found[digest]
    return out, len(missing)
