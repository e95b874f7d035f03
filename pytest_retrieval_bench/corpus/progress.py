"""A snapshot's set-up as it goes: files read, indexes made, for whoever shows progress.

The readers and the index builds take plain callbacks, `(done, total)` with `total` None while
unknown, and never learn who listens; `SetupCounts` gathers them for one snapshot and hands
itself to a `notify` callable on every change. No display, no clock and no pytest here: the
terminal side decides whether, when and how to show the counts.
"""

from __future__ import annotations

from typing import Callable

#: `(files done, total or None)` from a reader or an index build
Counted = Callable[[int, "int | None"], None]


class SetupCounts:
    """The counts of one snapshot's set-up: its read, then each index it needs (loaded or built)."""

    def __init__(self, key: str, indexes_total: int, notify: Callable[["SetupCounts"], None]):
        self.key = key
        self.files_read = 0
        self.files_total: int | None = None
        self.indexes_done = 0
        self.indexes_total = indexes_total
        #: how far the index build under way is, over its own total (0 of 0 between builds)
        self.build_done = 0
        self.build_total = 0
        self._notify = notify

    def read(self, done: int, total: int | None = None) -> None:
        self.files_read = done
        if total is not None:
            self.files_total = total
        self._notify(self)

    def building(self, done: int, total: int | None) -> None:
        self.build_done, self.build_total = done, total or 0
        self._notify(self)

    def index_done(self) -> None:
        self.indexes_done = min(self.indexes_done + 1, self.indexes_total)  # a tree's chunk index may bring its whole-file one
        self.build_done = self.build_total = 0
        self._notify(self)

    def fraction(self) -> float | None:
        """The share of the set-up done, counting the read and each index as one pass over the
        files; None until the number of files is known."""
        total = self.files_total
        if not total:
            return None
        build = self.build_done / self.build_total if self.build_total else 0.0
        done = min(self.files_read, total) / total + min(self.indexes_done + build, self.indexes_total)
        return min(done / (1 + self.indexes_total), 1.0)
