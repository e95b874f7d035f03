"""Small trees written for tests that read a directory snapshot."""

from __future__ import annotations

from pathlib import Path


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    """`files` written under `root` (made as needed)."""
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return root
