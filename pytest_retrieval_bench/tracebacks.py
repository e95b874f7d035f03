"""An arm's exception shown as pytest shows a test's: the traceback starts at the arm's own code.

pytest cuts a test's traceback at the test function; a bench item's "function" is the plugin's,
so the same cut is made at the first frame outside this package (the arm's `retrieve`, a fixture
arm's function, or whatever they call). `--full-trace` keeps every frame, as pytest does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from _pytest._code.code import ExceptionInfo, Traceback, TracebackEntry

_PACKAGE = str(Path(__file__).resolve().parent) + os.sep


def is_plugin_frame(entry: TracebackEntry) -> bool:
    return str(entry.path).startswith(_PACKAGE)


def arm_traceback(excinfo: ExceptionInfo[BaseException], tbstyle: Any) -> Traceback:
    """The frames after pytest's and the plugin's (pytest calls the plugin, the plugin the arm), `__tracebackhide__` frames hidden;
    with pytest's `auto` style the middle frames are shown short, as for a test."""
    entries = list(excinfo.traceback)
    first = next((position for position, entry in enumerate(entries) if is_plugin_frame(entry)), len(entries))
    start = next((position for position in range(first, len(entries)) if not is_plugin_frame(entries[position])), None)
    if start is None:  # no arm frame: pytest's own filtering
        return excinfo.traceback.filter(excinfo)
    cut = Traceback(entries[start:]).filter(excinfo)
    if not cut:
        return excinfo.traceback
    if tbstyle == "auto" and len(cut) > 2:
        cut = Traceback([cut[0], *(entry.with_repr_style("short") for entry in cut[1:-1]), cut[-1]])
    return cut
