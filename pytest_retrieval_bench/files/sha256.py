"""A file's SHA-256, read a block at a time: the digest a registration, a read receipt and a published checksum compare."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pytest_retrieval_bench.errors import InputError


def file_sha256(path: Path) -> str:
    """The file's SHA-256; a file that cannot be read at all is an InputError naming it."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        raise InputError(str(path), f"cannot read: {error.strerror or error}") from error
    return digest.hexdigest()
