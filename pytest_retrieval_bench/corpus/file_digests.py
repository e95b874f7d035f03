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
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import orjson

from pytest_retrieval_bench.index.cache import write_entry
from pytest_retrieval_bench.samples.load import file_sha256

#: a file whose modification or change time is this close to now is hashed every time
RACY_SECONDS = 3.0


def _status(path: Path) -> list[int]:
    status = os.stat(path)
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns]


class FileDigests:
    """Digests under `directory/<k[:2]>/<k>.digest`, `k` the sha256 of the resolved path."""

    def __init__(self, directory: Path):
        self.directory = directory
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
            kept = orjson.loads(entry.read_bytes())
            if kept["path"] == resolved and kept["status"] == before and not self._racy(before):
                self._seen[entry.name] = (before, str(kept["sha256"]))
                return str(kept["sha256"])
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
                write_entry(entry, orjson.dumps({"path": resolved, "status": after, "sha256": digest}))
        return digest

    @staticmethod
    def _racy(status: list[int]) -> bool:
        newest = max(status[3], status[4]) / 1e9
        return time.time() - newest < RACY_SECONDS
