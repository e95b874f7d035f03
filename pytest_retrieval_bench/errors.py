"""Exceptions that carry where bad input came from, so every message names file, line, field."""

from __future__ import annotations


class BenchError(Exception):
    """Base class of every error this plugin raises on purpose."""


class InputError(BenchError):
    """A malformed input: a samples row, a corpus row, a fold map, a report.

    The message always starts with ``file:line`` (line omitted when the whole file is at fault)
    and names the field, because a user fixing a 400-row JSONL file needs to know where to look.
    """

    def __init__(self, source: str, message: str, line: int | None = None, field: str | None = None):
        self.source = source
        self.line = line
        self.field = field
        where = f"{source}:{line}" if line is not None else source
        what = f"field {field!r}: {message}" if field else message
        super().__init__(f"{where}: {what}")


class SnapshotError(BenchError):
    """A snapshot could not be found, read or trusted (per-item error, never a usage error)."""


class ArmError(BenchError):
    """An arm failed to answer. Scored zero and reported as a failed item, never an abstention."""
