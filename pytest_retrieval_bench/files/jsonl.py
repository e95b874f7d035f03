"""Stream JSONL lines from plain, zstd-compressed, or release `.tar.zst` files (samples and chunk files alike)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import IO, Any, Iterator, NamedTuple

import orjson
import zstandard

from pytest_retrieval_bench.errors import InputError


class Line(NamedTuple):
    """One line of a JSONL file (a tuple: a corpus has hundreds of thousands, made at C speed)."""

    source: str
    number: int
    text: bytes


def is_release_archive(path: Path) -> bool:
    return path.name.endswith(".tar.zst")


class _ZstdStream(io.RawIOBase):
    """A streaming zstd reader across frames that raises on a truncated final frame.

    `zstandard`'s own stream reader ends quietly on a cut-off stream; a half-read corpus or
    samples file must be an error instead.
    """

    def __init__(self, raw: IO[bytes]):
        self._raw = raw
        self._context = zstandard.ZstdDecompressor()
        self._decoder = self._context.decompressobj()
        self._fed = False
        self._buffer = b""
        self._done = False

    def readable(self) -> bool:
        return True

    def _fill(self) -> None:
        while not self._buffer and not self._done:
            block = self._raw.read(1 << 20)
            if not block:
                self._done = True
                if self._fed and not self._decoder.eof:
                    raise zstandard.ZstdError("truncated zstd stream (the last frame is incomplete)")
                return
            while block:
                self._fed = True
                self._buffer += self._decoder.decompress(block)
                if self._decoder.eof:
                    block = self._decoder.unused_data
                    self._decoder = self._context.decompressobj()
                    self._fed = False
                else:
                    block = b""

    def readinto(self, target: Any) -> int:
        self._fill()
        size = min(len(target), len(self._buffer))
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        return size


def open_zstd(handle: IO[bytes]) -> IO[bytes]:
    """A streaming zstd reader (never the whole file in memory)."""
    return io.BufferedReader(_ZstdStream(handle), 1 << 20)  # type: ignore[return-value]


def _numbered_lines(stream: IO[bytes], source: str) -> Iterator[tuple[int, bytes]]:
    reader = stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(stream, 1 << 20)  # type: ignore[arg-type]
    number = 0
    try:
        for number, raw in enumerate(reader, start=1):
            yield number, raw
    except zstandard.ZstdError as error:
        raise InputError(source, f"corrupt zstd stream after {number} complete lines: {error}") from error


def _lines(stream: IO[bytes], source: str) -> Iterator[Line]:
    for number, raw in _numbered_lines(stream, source):
        yield Line(source, number, raw)


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


def iter_numbered_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of every line of a plain or `.zst` JSONL file: no `Line` per line, which
    costs more than reading the line on a corpus's hundreds of thousands of rows."""
    try:
        with path.open("rb") as raw:
            if path.name.endswith(".zst"):
                with open_zstd(raw) as stream:
                    yield from _numbered_lines(stream, str(path))
            else:
                yield from _numbered_lines(raw, str(path))
    except OSError as error:
        raise InputError(str(path), f"cannot read: {error.strerror or error}") from error


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


def malformed_line(error: Exception, text: bytes) -> str:
    """What is wrong with one JSONL line that did not parse, placed on that line.

    orjson places an error by line and column of the text it was given: for one line with its
    newline, an unfinished object is at "line 2 column 1", which reads as the file's line 2. Bytes
    that are not UTF-8 it words as "str is not valid UTF-8: surrogates not allowed", at column 1."""
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"not valid UTF-8: byte 0x{text[bad.start]:02x} at byte {bad.start + 1} of the line"
    message = getattr(error, "msg", str(error))
    position = getattr(error, "pos", None)
    content = text.rstrip(b"\r\n")
    if position is None:
        return f"malformed JSON: {message}"
    if position >= len(content.decode("utf-8")):
        return f"malformed JSON: {message} (the line ends before its JSON value does)"
    return f"malformed JSON at character {position + 1} of the line: {message}"


def json_lines(data: bytes, source: str) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line of JSON lines held in memory, parsed one at a
    time as they are asked for; InputError naming the file and line at the first that is not JSON."""
    for number, text in enumerate(data.split(b"\n"), start=1):
        if text.strip():
            try:
                yield number, orjson.loads(text)
            except orjson.JSONDecodeError as error:
                raise InputError(source, f"not JSON: {error}", line=number) from None
