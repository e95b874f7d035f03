"""Receipts of full chunk-file reads, so a warm run parses only the file rows.

A release's chunk file is mostly symbol rows, and once the index cache holds its indexes a run
needs only the file rows (the tree) and the digests that key the cache. Reading every row again
to learn those costs most of a warm run. A receipt records what a full, validated read of the
file gave: its row count, which lines are file rows, each one's path and whether it holds a
text file, the snapshot's digests, and the sha256 of every byte read. So a warm read parses no
row at all: it keeps the file rows' bytes and parses a text when it is first used
(`FileRowTexts`).

A receipt is found by the file's identity (resolved path, device, inode, size, modification
time) and is used only when the file's sha256 (as stored, compressed or not) is the receipt's. That
digest is the one the registration names (`FileDigests`: remembered while the file's status,
change time included, is unchanged, as git's index does); otherwise the file is read in full
again. The same bytes give the same rows, so every check the full read made (orphans,
duplicates, promises) holds for them; the paths are checked again all the same, as they name
where a private copy writes. Receipts live beside the index cache and go with it
(`--bench-no-cache` uses none).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import orjson

from pytest_retrieval_bench import __version__
from pytest_retrieval_bench.index.sealed import seal, unseal
from pytest_retrieval_bench.corpus.file_digests import FileDigests
from pytest_retrieval_bench.index.cache_writes import CacheWrites

FORMAT = "rb-read-2"
MAGIC = b"RBREAD2\n"


@dataclass(frozen=True)
class Receipt:
    """What a full read of one chunk file's bytes gave."""

    sha256: str
    rows: int
    #: [line number, first byte, end byte, 1 if a text file else 0] of each file row, in file order
    file_rows: Sequence[Sequence[int]]
    #: the path of each file row, in the same order
    paths: Sequence[str]
    files_digest: str
    content_digest: str


def identity(path: Path) -> str | None:
    """The key of the file as it is now, or None when it cannot be stat'ed (the read will say why)."""
    try:
        status = path.stat()
        resolved = path.resolve()
    except OSError:
        return None
    text = f"{FORMAT}\0{__version__}\0{resolved}\0{status.st_dev}\0{status.st_ino}\0{status.st_size}\0{status.st_mtime_ns}"
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()


def encode(key: str, receipt: Receipt) -> bytes:
    body = orjson.dumps({"key": key, "sha256": receipt.sha256, "rows": receipt.rows, "file_rows": [list(row) for row in receipt.file_rows],
                         "paths": list(receipt.paths), "files_digest": receipt.files_digest, "content_digest": receipt.content_digest})
    return seal(MAGIC, body)


def decode(key: str, data: bytes) -> Receipt:
    """Raises ValueError on anything unexpected, so a damaged receipt is never used."""
    fields = orjson.loads(unseal(MAGIC, data))
    if fields.get("key") != key:
        raise ValueError("key mismatch")
    file_rows, paths = fields["file_rows"], fields["paths"]
    if file_rows:  # checked at C speed: tens of thousands of rows
        table = np.array(file_rows)
        if table.ndim != 2 or table.shape[1] != 4 or table.dtype.kind != "i" or table.min() < 0 or (table[:, 3] > 1).any() \
                or (np.diff(table[:, 0]) <= 0).any() or (table[:, 2] <= table[:, 1]).any() or (table[1:, 1] < table[:-1, 2]).any():
            raise ValueError("file rows are not increasing, disjoint line ranges")
    if type(paths) is not list or len(paths) != len(file_rows) or not all(type(path) is str for path in paths) \
            or len(set(paths)) != len(paths):
        raise ValueError("paths are not one distinct string per file row")
    return Receipt(sha256=str(fields["sha256"]), rows=int(fields["rows"]), file_rows=file_rows, paths=paths,
                   files_digest=str(fields["files_digest"]), content_digest=str(fields["content_digest"]))


class ReadReceipts:
    """Receipts under `directory/<key[:2]>/<key>.receipt`, written like index cache entries;
    `digests` gives the sha256 a receipt is checked against (and its writes are the receipts' too)."""

    def __init__(self, directory: Path, digests: FileDigests):
        self.directory = directory
        self.digests = digests
        self.writes: CacheWrites = digests.writes

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.receipt"

    def load(self, key: str) -> Receipt | None:
        try:
            return decode(key, self._path(key).read_bytes())
        except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
            return None

    def store(self, key: str, receipt: Receipt) -> None:
        self.writes.write(self._path(key), encode(key, receipt))
