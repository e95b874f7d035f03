"""A snapshot's text files as the raw bytes of their file rows, each row parsed on first use.

A warm run needs few of a release's texts: those of the files its arms rank and grep. Parsing
every file row to hold all of them was the largest part of a warm snapshot's set-up. The rows'
bytes are copied out of the chunk file when the snapshot is read (so a later write to the file
cannot change them), and a text is parsed when it is first asked for, then kept.

Which rows are text files, and their paths, come from a read receipt: what a full read of the
same bytes found. A text row is checked against the receipt when it is parsed, and one that
disagrees is a corpus error naming the file and line, never a text silently taken for another.
The receipt's other claims (which rows hold no text, the row count, the digests) are trusted as
the index cache's entries are: a full read wrote them, and a damaged receipt is never used.
"""

from __future__ import annotations

from typing import Iterator, Mapping

import orjson

from pytest_retrieval_bench.corpus.snapshot import is_text
from pytest_retrieval_bench.errors import SnapshotError


class FileRowTexts(Mapping[str, str]):
    """path -> text, read from `data`, where `spans[path]` is the row's (line number, first byte,
    end byte); `source` names the chunk file in errors."""

    def __init__(self, source: str, data: bytes, spans: dict[str, tuple[int, int, int]]):
        self.source = source
        self._data = memoryview(data)
        self._spans = spans
        self._parsed: dict[str, str] = {}

    def __getitem__(self, path: str) -> str:
        text = self._parsed.get(path)
        if text is None:
            number, start, end = self._spans[path]
            text = self._parsed[path] = self._parse(path, number, start, end)
        return text

    def get(self, path: str, default: str | None = None) -> str | None:  # type: ignore[override]
        text = self._parsed.get(path)
        if text is None:
            if path not in self._spans:
                return default
            text = self[path]
        return text

    def __contains__(self, path: object) -> bool:
        return path in self._spans

    def __iter__(self) -> Iterator[str]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)

    @property
    def parsed(self) -> int:
        """How many texts have been parsed so far (each once)."""
        return len(self._parsed)

    def _parse(self, path: str, number: int, start: int, end: int) -> str:
        try:
            row = orjson.loads(self._data[start:end])
        except orjson.JSONDecodeError:
            row = None
        text = row.get("text") if type(row) is dict and row.get("kind") == "file" and row.get("path") == path else None
        if type(text) is not str or not is_text(text):
            raise SnapshotError(f"corpus error: {self.source}:{number}: the row is not the text file row {path!r} that this file's "
                                "read receipt records; remove the index cache directory so the file is read in full")
        return text
