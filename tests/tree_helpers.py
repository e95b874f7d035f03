"""Small trees written for tests that read a directory snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.corpus.tree import read_directory


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    """`files` written under `root` (made as needed)."""
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return root


def snapshot_with_copies(tree: Path, repo: str, commit: str, copies: Any) -> Snapshot:
    """The directory snapshot of `tree`, whose private copies `copies` (a `PrivateCopies`) makes."""
    snapshot = read_directory(tree, repo, commit)
    snapshot.directory_provider = copies.get
    return snapshot
