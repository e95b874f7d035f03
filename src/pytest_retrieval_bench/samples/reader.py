"""Stream JSONL lines from plain, zstd-compressed, or release `.tar.zst` sample files."""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator

import zstandard

from pytest_retrieval_bench.errors import InputError


@dataclass(frozen=True)
class Line:
    source: str
    number: int
    text: bytes


def is_release_archive(path: Path) -> bool:
    return path.name.endswith(".tar.zst")


def open_zstd(handle: IO[bytes]) -> IO[bytes]:
    """A streaming zstd reader (never the whole archive in memory)."""
    return zstandard.ZstdDecompressor().stream_reader(handle, read_across_frames=True)


def _lines(stream: IO[bytes], source: str) -> Iterator[Line]:
    reader = stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(stream, 1 << 20)  # type: ignore[arg-type]
    number = 0
    try:
        for number, raw in enumerate(reader, start=1):
            yield Line(source, number, raw)
    except zstandard.ZstdError as error:
        raise InputError(source, f"corrupt zstd stream after line {number}: {error}", line=number + 1) from error


def iter_release_members(path: Path, prefix: str) -> Iterator[tuple[str, IO[bytes]]]:
    """(member name, stream) for each regular member of a release archive under `prefix`, in order."""
    with path.open("rb") as raw, open_zstd(raw) as stream:
        try:
            with tarfile.open(fileobj=stream, mode="r|") as archive:
                for member in archive:
                    if member.isfile() and member.name.startswith(prefix):
                        extracted = archive.extractfile(member)
                        if extracted is not None:
                            yield member.name, extracted
        except (tarfile.TarError, zstandard.ZstdError) as error:
            raise InputError(str(path), f"corrupt release archive: {error}") from error


def iter_sample_lines(path: Path) -> Iterator[Line]:
    """Every line of a samples file; for a release, of each `benchmark/**.jsonl` member in order."""
    source = str(path)
    try:
        if is_release_archive(path):
            for name, member in iter_release_members(path, "benchmark/"):
                if name.endswith(".jsonl"):
                    yield from _lines(member, f"{source}!{name}")  # type: ignore[arg-type]
            return
        with path.open("rb") as raw:
            if path.name.endswith(".zst"):
                with open_zstd(raw) as stream:
                    yield from _lines(stream, source)
            else:
                yield from _lines(raw, source)
    except OSError as error:
        raise InputError(source, f"cannot read: {error.strerror or error}") from error
