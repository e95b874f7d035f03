"""A release `.tar.zst` as a corpus: its `corpus/` members unpacked once into the plugin's cache.

zstd archives cannot be seeked, so instead of one decompression pass per snapshot the first
process to need the corpus streams the archive once and keeps the chunk files, keyed by the
archive's digest. Member names are checked before anything is written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from pytest_retrieval_bench import leftovers
from pytest_retrieval_bench.corpus.snapshot import check_relative_path
from pytest_retrieval_bench.corpus.remove_tree import remove_tree
from pytest_retrieval_bench.errors import InputError, SnapshotError
from pytest_retrieval_bench.samples.reader import iter_release_members


def unpack_release_corpus(archive: Path, digest: str, cache_dir: Path) -> list[Path]:
    """The release's corpus directories (`corpus/<release>`), unpacked under `cache_dir` once."""
    final = cache_dir / "releases" / digest[:32]
    if not (final / ".complete").is_file():
        final.parent.mkdir(parents=True, exist_ok=True)
        with leftovers.held_signals():  # a signal removes the staging directory until it is renamed
            staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=final.parent))
            leftovers.track(staging)
        try:
            for name, member in iter_release_members(archive, "corpus/"):
                problem = check_relative_path(name)
                if problem:
                    raise SnapshotError(f"corpus error: {archive}!{name}: {problem}")
                destination = staging / name
                destination.parent.mkdir(parents=True, exist_ok=True)
                with destination.open("wb") as out:
                    shutil.copyfileobj(member, out, 1 << 20)
                leftovers.pause_point("unpack", final, staging)
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
    corpus_root = final / "corpus"
    return sorted(path for path in corpus_root.iterdir() if path.is_dir()) if corpus_root.is_dir() else []
