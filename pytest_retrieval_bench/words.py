"""Counts in words: `1 snapshot`, `2 snapshots`. One place, so no output says "1 snapshots"."""

from __future__ import annotations

_IRREGULAR = {"entry": "entries", "index": "indexes"}


def plural(noun: str, count: int) -> str:
    """The noun as `count` of it reads: unchanged for one, else made plural."""
    return noun if count == 1 else _IRREGULAR.get(noun, noun + "s")


def counted(count: int, noun: str) -> str:
    """`1 snapshot`, `3 snapshots`."""
    return f"{count} {plural(noun, count)}"
