"""A snapshot that cannot be set up fails each of its items, with its reason shown once.

pytest keeps a session-scoped fixture's exception and raises it again for every later item of the
same parameter, so one missing snapshot used to print its (long) reason once per sample. The first
item of the snapshot in a process shows the reason; the others name the snapshot and that item
(`terminal.show_snapshot_failure_once` puts the message on the report).
"""

from __future__ import annotations

import pytest


class SnapshotUnavailable(pytest.fail.Exception):  # type: ignore[misc,name-defined]
    """`bench_snapshot`'s failure: a one-line message (no traceback) that remembers where it was shown."""

    def __init__(self, key: str, message: str):
        super().__init__(message, pytrace=False)
        self.key = key
        self.first_item: str | None = None

    def message_for(self, nodeid: str) -> str:
        """The whole reason for the snapshot's first item, a pointer to it for every later one."""
        if self.first_item is None:
            self.first_item = nodeid
        if nodeid == self.first_item:
            return str(self.msg)
        return f"snapshot {self.key} could not be set up; the reason is given once, at {self.first_item}"
