"""The sha256 of corpus files, remembered across runs while a file is untouched.

The registration names every chunk file of a corpus by its sha256, so each run would hash the
whole corpus (about a second per GB) even to run one sample. Like git's index, a digest is kept
with the file's status (device, inode, size, modification and change times in nanoseconds) and
used again only while that status is the same; a write to the file changes its change time,
which no user call can set back. As in git, a file changed in the last seconds is "racy" (the
clock's tick may not have moved between two writes) and is hashed anew each run (within one run,
its digest is reused while its status is unchanged). Digests live beside the index cache and go
with it (`--bench-no-cache` hashes every file). Read receipts check a chunk file against the same
digest, so the bytes a run reads are the bytes its registration names.

An entry is believed only when it is whole: it carries the sha256 of its own body (as read
receipts do), and names the path and a well-formed digest; an entry edited or damaged on disk
is ignored, the file hashed again and the entry rewritten.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import orjson

from pytest_retrieval_bench.files.sha256 import file_sha256
from pytest_retrieval_bench.index.cache_writes import CacheWrites
from pytest_retrieval_bench.index.sealed import seal, unseal

#: a file whose modification or change time is this close to now is hashed every time
RACY_SECONDS = 3.0

MAGIC = b"RBDIGEST1\n"
HEX = frozenset("0123456789abcdef")


def encode(resolved: str, status: list[int], digest: str) -> bytes:
    body = orjson.dumps({"path": resolved, "status": status, "sha256": digest})
    return seal(MAGIC, body)


def decode(resolved: str, data: bytes) -> tuple[list[int], str]:
    """(status, sha256) of a whole entry for `resolved`; ValueError for anything else."""
    fields = orjson.loads(unseal(MAGIC, data))
    digest, status = fields["sha256"], fields["status"]
    if fields["path"] != resolved or type(digest) is not str or len(digest) != 64 or not HEX.issuperset(digest) \
            or type(status) is not list or len(status) != 5 or not all(type(value) is int for value in status):
        raise ValueError("not an entry for this file")
    return status, digest


def _status(path: Path) -> list[int]:
    status = os.stat(path)
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns]


class FileDigests:
    """Digests under `directory/<k[:2]>/<k>.digest`, `k` the sha256 of the resolved path."""

    def __init__(self, directory: Path, writes: CacheWrites | None = None):
        self.directory = directory
        self.writes = writes if writes is not None else CacheWrites(directory)
        self._seen: dict[str, tuple[list[int], str]] = {}  # this process's: the registration's, then the reader's

    def _entry(self, resolved: str) -> Path:
        key = hashlib.sha256(os.fsencode(resolved)).hexdigest()
        return self.directory / key[:2] / f"{key}.digest"

    def sha256(self, path: Path) -> str:
        """The file's sha256: remembered when its status is unchanged, else computed (and kept
        unless the file is racy or changed while it was hashed)."""
        try:
            before = _status(path)
            resolved = os.fsdecode(path.resolve())
        except OSError:
            return file_sha256(path)  # names the file and why it cannot be read
        entry = self._entry(resolved)
        seen = self._seen.get(entry.name)
        if seen is not None and seen[0] == before:
            return seen[1]
        try:
            status, kept = decode(resolved, entry.read_bytes())
            if status == before and not self._racy(before):
                self._seen[entry.name] = (before, kept)
                return kept
        except (OSError, ValueError, KeyError, TypeError):
            pass
        digest = file_sha256(path)
        try:
            after = _status(path)
        except OSError:
            return digest
        if after == before:
            self._seen[entry.name] = (after, digest)
            if not self._racy(after):
                self.writes.write(entry, encode(resolved, after, digest))
        return digest

    @staticmethod
    def _racy(status: list[int]) -> bool:
        newest = max(status[3], status[4]) / 1e9
        return time.time() - newest < RACY_SECONDS
