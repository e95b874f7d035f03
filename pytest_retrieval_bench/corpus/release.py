"""A release `.tar.zst` as a corpus: its `corpus/` members unpacked once into the plugin's cache.

zstd archives cannot be seeked, so instead of one decompression pass per snapshot the first
process to need the corpus streams the archive once and keeps the chunk files, keyed by the
archive's digest. Member names are checked before anything is written.

The registration names the archive, not the unpacked files, so an unpacked file is never simply
believed: the unpack records every file's size, sha256 and status (`.manifest`, checksummed),
and each process checks the unpacked tree once before its first use: sizes (and that no file is
missing or added) always, the sha256 of a file whose status is not the recorded one. A tree that
differs is unpacked again, with one warning. When the cache directory cannot be written (a full
disk, no permission) the corpus is unpacked into the run's own temporary directory instead, with
one warning; when that fails too, every snapshot of the release fails with one error naming the
directories and the causes, found once (the unpack is not tried again per item).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

from pytest_retrieval_bench import leftovers
from pytest_retrieval_bench.corpus.snapshot import check_relative_path
from pytest_retrieval_bench.errors import InputError, SnapshotError
from pytest_retrieval_bench.files.jsonl import iter_release_members
from pytest_retrieval_bench.files.remove_tree import remove_tree
from pytest_retrieval_bench.index.cache_writes import CacheWrites
from pytest_retrieval_bench.index.sealed import seal, unseal

MANIFEST = ".manifest"
MAGIC = b"RBUNPACK1\n"
BLOCK = 1 << 20


def _status(path: Path) -> list[int]:
    status = os.stat(path)
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _unpack(archive: Path, final: Path) -> None:
    """Stream the archive's `corpus/` members into a staging directory beside `final`, record
    them, and rename it into place (a concurrent process's complete tree is kept)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    with leftovers.held_signals():  # made and registered as one step: a signal removes it until it is renamed
        staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=final.parent))
        leftovers.track(staging)
    try:
        files: list[list[Any]] = []
        for name, member in iter_release_members(archive, "corpus/"):
            problem = check_relative_path(name)
            if problem:
                raise SnapshotError(f"corpus error: {archive}!{name}: {problem}")
            destination = staging / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            digest = hashlib.sha256()
            with destination.open("wb") as out:
                while block := member.read(BLOCK):
                    digest.update(block)
                    out.write(block)
            status = _status(destination)
            files.append([name, status[2], digest.hexdigest(), status])
            leftovers.pause_point("unpack", final, staging)
        body = orjson.dumps({"files": files})
        (staging / MANIFEST).write_bytes(seal(MAGIC, body))
        (staging / ".complete").write_text("ok\n")
        try:
            os.rename(staging, final)
        except OSError:
            if not (final / ".complete").is_file():
                raise
    except InputError as error:
        raise SnapshotError(f"corpus error: {error}") from error
    finally:
        remove_tree(staging, ignore_errors=True)
        leftovers.forget(staging)


def _recorded(final: Path) -> list[list[Any]]:
    return list(orjson.loads(unseal(MAGIC, (final / MANIFEST).read_bytes()))["files"])


def difference(final: Path) -> str | None:
    """How the unpacked tree differs from what its unpack recorded, or None when it does not."""
    try:
        files = _recorded(final)
    except (OSError, ValueError, KeyError, TypeError):
        return f"its record of the unpacked files, {final / MANIFEST}, is missing or damaged"
    present = {os.path.relpath(os.path.join(top, name), final) for top, _, names in os.walk(final) for name in names}
    present -= {MANIFEST, ".complete"}
    for name, size, digest, status in files:
        path = final / name
        present.discard(name)
        try:
            now = _status(path)
        except OSError:
            return f"{path} is missing"
        if now[2] != size:
            return f"{path} has {now[2]} bytes, the archive's member {size}"
        if now != status and _sha256(path) != digest:
            return f"{path} was changed since it was unpacked"
    if present:
        return f"{final / sorted(present)[0]} is not in the archive"
    return None


def _corpus_dirs(final: Path) -> list[Path]:
    corpus_root = final / "corpus"
    return sorted(path for path in corpus_root.iterdir() if path.is_dir()) if corpus_root.is_dir() else []


def _archive_problem(error: OSError, archive: Path) -> bool:
    """Whether `error` is the archive's (opening it), not the directory's (a write there)."""
    return error.filename is not None and os.fsdecode(error.filename) == str(archive)


class ReleaseCorpus:
    """The release's corpus directories (`corpus/<release>`), found once per process: a provider
    of `SnapshotResolver.lazy_corpus_dirs`. `fallback` is the run's own directory (removed with
    the run), used when the cache's cannot be written."""

    def __init__(self, archive: Path, digest: str, cache_dir: Path, fallback: Path | None = None, writes: CacheWrites | None = None):
        self.archive = archive
        self.final = cache_dir / "releases" / digest[:32]
        self.fallback = fallback / digest[:32] if fallback is not None else None
        self.writes = writes if writes is not None else CacheWrites(cache_dir)
        self._dirs: list[Path] | None = None
        self._error: str | None = None

    def __call__(self) -> list[Path]:
        if self._dirs is None:
            if self._error is not None:
                raise SnapshotError(self._error)
            try:
                self._dirs = self._prepare()
            except SnapshotError as error:
                self._error = str(error)
                raise
        return self._dirs

    def _prepare(self) -> list[Path]:
        final = self.final
        try:
            if final.exists():
                problem = difference(final) if (final / ".complete").is_file() else "it was never completed"
                if problem is None:
                    return _corpus_dirs(final)
                self.writes.warn_once(f"release {final}", f"the unpacked release {final} differs from {self.archive} ({problem}): unpacked again")
                with leftovers.held_signals():
                    stale = Path(tempfile.mkdtemp(prefix=".stale-", dir=final.parent))
                    leftovers.track(stale)
                try:
                    os.rename(final, stale / "tree")
                except FileNotFoundError:
                    pass  # another process moved it first
                finally:
                    remove_tree(stale, ignore_errors=True)
                    leftovers.forget(stale)
            _unpack(self.archive, final)
            return _corpus_dirs(final)
        except OSError as error:
            if _archive_problem(error, self.archive):
                raise SnapshotError(f"cannot unpack {self.archive}: {error.strerror or error}") from None
            return self._unpack_aside(error)

    def _unpack_aside(self, error: OSError) -> list[Path]:
        cause = f"the cache directory {self.final.parent}: {error.strerror or error}"
        if self.fallback is None:
            raise SnapshotError(f"cannot unpack {self.archive}: {cause}") from None
        try:
            _unpack(self.archive, self.fallback)
        except OSError as second:
            self.writes.failed(error, self.final.parent)
            raise SnapshotError(f"cannot unpack {self.archive}: {cause}; the run's directory {self.fallback.parent}: "
                                f"{second.strerror or second}") from None
        aside = f"{self.archive} is unpacked into the run's own directory {self.fallback.parent} instead"
        if self.writes.stopped is None:
            self.writes.failed(error, self.final.parent, also=aside)
        if self.writes.stopped is None:  # not a lasting cause: still worth saying, once
            self.writes.warn_once(f"release aside {self.archive}", f"cannot unpack {self.archive} into {cause}; {aside}")
        return _corpus_dirs(self.fallback)
