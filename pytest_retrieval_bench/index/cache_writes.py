"""Writing cache files, and going on without the cache once its directory cannot be written.

A cache only saves time, so a write that fails is no reason to stop a run. But a full disk or a
read-only directory makes every later write fail too, and a warning per entry (or a traceback
per item) would bury the run's own output: the first such failure disables the writes of the
run's cache, with one warning naming the directory and the cause, and the run goes on uncached
(entries already there are still read, and checked as always).
"""

from __future__ import annotations

import errno
import os
import tempfile
import warnings
from pathlib import Path

from pytest_retrieval_bench import leftovers

#: the errors that say the directory cannot take any more writes, not that one entry failed
LASTING = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})


class CacheWarning(UserWarning):
    """The cache could not be used as it is (not written, or an entry rebuilt); results are unaffected."""


class CacheWrites:
    """The writes of one run's cache under `root`: atomic, and stopped after a lasting failure."""

    def __init__(self, root: Path | None = None):
        self.root = root
        self.stopped: str | None = None  # why writes stopped, once they have
        self._warned: set[str] = set()

    def warn_once(self, topic: str, message: str) -> None:
        """One warning per topic per process, however many entries share the cause."""
        if topic not in self._warned:
            self._warned.add(topic)
            warnings.warn(CacheWarning(message), stacklevel=3)

    def failed(self, error: OSError, where: Path, also: str = "") -> None:
        """Note a failed write; a lasting one stops every later write, with one warning (ending
        with `also`, what else the caller does about it)."""
        if error.errno in LASTING and self.stopped is None:
            directory = self.root if self.root is not None else where
            self.stopped = f"{directory}: {error.strerror or error}"
            self.warn_once("stopped", f"the cache directory {directory} cannot be written ({error.strerror or error}): "
                                      "the run goes on uncached (index entries, read receipts and file digests are not kept)"
                                      + (f"; {also}" if also else ""))

    def write(self, path: Path, data: bytes | bytearray | memoryview | list[bytes]) -> None:
        """Write a cache file (its bytes, or its pieces in order) atomically (temporary file, then
        rename), so a reader sees the old entry, the new one or none; a failure or a signal leaves
        no temporary file, and a failure is only noted."""
        if self.stopped is not None:
            return
        temporary: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with leftovers.held_signals():  # made and registered as one step: a signal removes it until it is renamed
                handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
                leftovers.track(temporary)
            with os.fdopen(handle, "wb") as out:
                out.writelines([data] if isinstance(data, (bytes, bytearray, memoryview)) else data)
                leftovers.pause_point("cache-entry", path, temporary)
            os.replace(temporary, path)
            leftovers.forget(temporary)
            temporary = None
        except OSError as error:
            self.failed(error, path.parent)
        finally:
            if temporary is not None:
                Path(temporary).unlink(missing_ok=True)
                leftovers.forget(temporary)
