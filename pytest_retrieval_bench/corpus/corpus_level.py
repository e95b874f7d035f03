"""A corpus directory given one folder too high (`corpus/` for `corpus/synthetic_v1/`): found at
start-up, so it is one error naming the subfolder that holds the snapshots, not one per item."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from pytest_retrieval_bench.corpus.chunks import find_chunk_file
from pytest_retrieval_bench.errors import SnapshotError

MANIFEST = "corpus_manifest.jsonl"


def _holds_any(directory: Path, keys: list[tuple[str, str]]) -> bool:
    for repo, commit in keys:
        try:
            if find_chunk_file(directory, repo, commit) is not None:
                return True
        except SnapshotError:  # a manifest naming a path outside: the snapshot's set-up names it
            return True
    return False


def subfolders_holding(corpus_dir: Path, keys: Iterable[tuple[str, str]]) -> list[Path]:
    """The subfolders of `corpus_dir` that hold a snapshot of `keys` (repo, commit) when the
    directory itself has no manifest and holds none: empty otherwise."""
    wanted = sorted(set(keys))
    if not wanted or not corpus_dir.is_dir() or (corpus_dir / MANIFEST).is_file() or _holds_any(corpus_dir, wanted):
        return []
    try:
        subfolders = sorted(entry for entry in corpus_dir.iterdir() if entry.is_dir() and not entry.name.startswith("."))
    except OSError:
        return []
    return [folder for folder in subfolders if _holds_any(folder, wanted)]
