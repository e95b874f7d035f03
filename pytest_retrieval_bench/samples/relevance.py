"""`cce.relevance/v1` fixture sets: an optional header line, then one labeled query per line.

A fixture set has no repository or commit, only a corpus directory, so its samples get a
synthetic snapshot key (`local/<fixture stem>` at 40 zeros) and the loader reports the corpus
directory under that key for the plugin to use as a directory snapshot.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_retrieval_bench.errors import InputError
from pytest_retrieval_bench.samples.model import Sample

FORMAT = "relevance"
TASK_TYPE = "relevance"
SCHEMA = "cce.relevance/v1"
DEFAULT_K = 10
NULL_COMMIT = "0" * 40
SKIP_NO_FILE_ANCHOR = "no_file_anchor"

_RANGE_TAIL = re.compile(r"[0-9-]+")
_DIGITS = re.compile(r"[0-9]+")
#: cce parses a range's ends as Rust `usize` (64-bit): a larger number is a rejected anchor
USIZE_MAX = 2**64 - 1
#: the characters Rust's `char::is_whitespace` accepts (Unicode White_Space)
RUST_WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
_BAD_ID = re.compile(r"[\s:\[\]]")
_SUFFIXES = (".zst", ".jsonl", ".ndjson", ".json")


@dataclass(frozen=True)
class Anchor:
    """One expected result: a file, a chunk kind, a line range, or a combination."""

    text: str
    path: str | None = None
    kind: str | None = None
    start_line: int | None = None
    end_line: int | None = None

    @property
    def ranged(self) -> bool:
        return self.start_line is not None

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "path": self.path, "kind": self.kind, "start_line": self.start_line, "end_line": self.end_line}


def rust_trim(text: str) -> str:
    """Rust's `str::trim` (Unicode White_Space): unlike Python's `strip()`, it keeps U+001C..U+001F."""
    return text.strip(RUST_WHITESPACE)


def parse_anchor(text: str) -> Anchor:
    """`path`, `path#kind`, `#kind`, `path@a-b`, `path#kind@a-b`; ValueError for anything else.

    As cce's `Anchor::parse`: text after the last `@` is a range only when, trimmed, it is all
    ASCII digits and `-` (then it must be a valid `a-b`, 1 <= a <= b, each fitting cce's 64-bit
    `usize`); any other `@` is literal path text, so `user@host.py` is a path. Trimming is Rust's.
    """
    body, start, end = text, None, None
    head, at, tail = text.rpartition("@")
    tail = rust_trim(tail)
    if at and tail and _RANGE_TAIL.fullmatch(tail):
        first, dash, last = tail.partition("-")
        if (not dash or not _DIGITS.fullmatch(first) or not _DIGITS.fullmatch(last) or int(first) > USIZE_MAX or int(last) > USIZE_MAX
                or int(first) < 1 or int(last) < int(first)):
            raise ValueError(f"anchor {text!r} has an invalid line range after '@': expected a-b with 1 <= a <= b <= {USIZE_MAX}")
        body, start, end = head, int(first), int(last)
    path_part, hash_mark, kind_part = body.partition("#")
    path = rust_trim(path_part) or None
    kind = rust_trim(kind_part) if hash_mark else None
    if hash_mark and not kind:
        raise ValueError(f"anchor {text!r} has an empty kind after '#'")
    if path is None and kind is None:
        raise ValueError("empty anchor: expected path, path#kind, #kind, path@a-b or path#kind@a-b")
    if start is not None and path is None:
        raise ValueError(f"anchor {text!r} has a line range but no file path (a range needs path@a-b or path#kind@a-b)")
    return Anchor(text=text, path=path, kind=kind, start_line=start, end_line=end)


def fixture_repo(path: Path) -> str:
    """The synthetic repository name of a fixture file: `local/<stem>`."""
    name = path.name
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip(".-") or "fixture"
    return f"local/{stem}"


def is_header(row: dict[str, Any]) -> bool:
    return "schema" in row and "query" not in row


class RelevanceReader:
    """Parses one fixture file's rows in order; the header is only valid as the first row."""

    def __init__(self, path: Path):
        self.path = path
        self.repo = fixture_repo(path)
        self.corpus: Path | None = None
        self._seen_row = False

    @property
    def snapshot_key(self) -> str:
        return f"{self.repo}@{NULL_COMMIT}"

    def parse(self, row: dict[str, Any], source: str, line: int) -> Sample | None:
        first, self._seen_row = not self._seen_row, True
        if is_header(row):
            if not first:
                raise InputError(source, "the header must be the first non-blank line", line=line, field="schema")
            self._header(row, source, line)
            return None
        return self._case(row, source, line)

    def _header(self, row: dict[str, Any], source: str, line: int) -> None:
        if row["schema"] != SCHEMA:
            raise InputError(source, f"unsupported schema {row['schema']!r} (expected {SCHEMA!r})", line=line, field="schema")
        corpus = row.get("corpus")
        if corpus is None:
            return
        if not isinstance(corpus, str) or not corpus.strip():
            raise InputError(source, "expected a non-empty string (a directory relative to the fixture file)", line=line, field="corpus")
        directory = Path(os.path.normpath(self.path.parent.absolute() / corpus))
        if not directory.is_dir():
            raise InputError(source, f"corpus directory {corpus!r} does not exist next to the fixture file", line=line, field="corpus")
        self.corpus = directory

    def _case(self, row: dict[str, Any], source: str, line: int) -> Sample:
        query = row.get("query")
        if not isinstance(query, str) or not query.strip():
            raise InputError(source, "missing or empty (a string is required)", line=line, field="query")
        expected = row.get("expected")
        if not isinstance(expected, list) or not expected:
            raise InputError(source, "must be a non-empty array of anchors", line=line, field="expected")
        anchors: list[Anchor] = []
        for index, text in enumerate(expected):
            if not isinstance(text, str):
                raise InputError(source, f"anchors must be strings, got {type(text).__name__}", line=line, field=f"expected[{index}]")
            try:
                anchors.append(parse_anchor(text))
            except ValueError as error:
                raise InputError(source, str(error), line=line, field=f"expected[{index}]") from error
        sample_id = row.get("id", f"q{line}")
        if not isinstance(sample_id, str) or not sample_id.strip():
            raise InputError(source, "expected a non-empty string", line=line, field="id")
        if _BAD_ID.search(sample_id):
            raise InputError(source, f"{sample_id!r} has whitespace, ':' or brackets (it names a test item)", line=line, field="id")
        k = row.get("k", DEFAULT_K)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(source, f"must be a positive integer, got {k!r}", line=line, field="k")
        gold = tuple(dict.fromkeys(anchor.path for anchor in anchors if anchor.path))
        extra: dict[str, Any] = {"format": FORMAT, "anchors": [anchor.as_dict() for anchor in anchors], "k": k}
        if not gold:
            extra["skip_reason"] = SKIP_NO_FILE_ANCHOR
        return Sample.positive(
            id=sample_id,
            task_type=TASK_TYPE,
            repo=self.repo,
            base_commit=NULL_COMMIT,
            query={"query": query},
            query_text=query,
            gold_files=gold,
            source=source,
            line=line,
            extra=extra,
        )
