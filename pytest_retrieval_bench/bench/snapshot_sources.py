"""Where a run's snapshots come from: the sources its options and samples files name, checked at start-up."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pytest

from pytest_retrieval_bench.corpus.file_digests import FileDigests
from pytest_retrieval_bench.corpus.read_receipts import ReadReceipts
from pytest_retrieval_bench.corpus.release import ReleaseCorpus
from pytest_retrieval_bench.corpus.resolve import SnapshotResolver
from pytest_retrieval_bench.files.jsonl import is_release_archive
from pytest_retrieval_bench.index.cache_writes import CacheWrites
from pytest_retrieval_bench.options import Settings
from pytest_retrieval_bench.samples import LoadedSamples


def require_snapshot_source(settings: Settings, loaded: Iterable[LoadedSamples]) -> None:
    """A samples file without a corpus of its own needs --bench-corpus, --bench-snapshot or --bench-repos."""
    if settings.corpus or settings.snapshots or settings.repos:
        return
    for samples in loaded:
        if samples.samples and not is_release_archive(samples.path) and not samples.snapshots:
            raise pytest.UsageError(f"{samples.path}: no snapshot source for its samples; give --bench-corpus DIR, "
                                    f"--bench-snapshot OWNER/NAME@COMMIT=PATH or --bench-repos DIR")


def snapshot_resolver(settings: Settings, loaded: list[LoadedSamples], cache_dir: Path, file_digests: FileDigests | None,
                      releases_dir: Path, writes: CacheWrites) -> SnapshotResolver:
    """The resolver over --bench-snapshot, the corpora, --bench-repos, the samples files' own corpus
    directories (--bench-snapshot still wins) and release archives' corpora (unpacked when first asked)."""
    resolver = SnapshotResolver(explicit=dict(settings.snapshots), corpus_dirs=list(settings.corpus), repos_dir=settings.repos,
                                receipts=ReadReceipts(cache_dir / "reads", file_digests) if file_digests else None)
    for samples in loaded:  # a relevance fixture names its own corpus directory
        for key, directory in samples.snapshots.items():
            resolver.explicit.setdefault(key, directory)
    for samples in loaded:
        if is_release_archive(samples.path):
            resolver.lazy_corpus_dirs.append(ReleaseCorpus(samples.path, samples.digest, cache_dir, releases_dir, writes))
    return resolver
