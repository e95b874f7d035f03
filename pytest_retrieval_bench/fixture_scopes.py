"""Where a fixture arm's fixtures are looked up: the collected directory of the conftest declaring it.

pytest shows a conftest's fixtures only to nodes under that conftest's directory (pytest 8 by node
id, pytest 9.1 on by the directory's node itself). A bench item sits under its samples file, elsewhere
in the tree, so its fixtures are resolved from the declaring directory instead: with
`pytest mine --bench-arms=dense`, `dense` in `mine/conftest.py` sees `mine/conftest.py`'s fixtures
(and those above it) as a test in `mine/` would.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable, Iterable

import pytest

DIRECTORIES_KEY = pytest.StashKey[dict[Path, pytest.Directory]]()


def note_directory(collector: pytest.Collector) -> None:
    """Remember a collected directory: a conftest in it may declare arms whose items need its fixtures."""
    if isinstance(collector, pytest.Directory):
        collector.config.stash.setdefault(DIRECTORIES_KEY, {})[collector.path] = collector


def declaring_file(function: Callable[..., Any]) -> Path | None:
    try:
        return Path(inspect.getfile(function)).resolve()
    except (OSError, TypeError):
        return None


def declaring_directory(config: pytest.Config, functions: Iterable[Callable[..., Any]]) -> pytest.Directory | None:
    """The collected directory whose conftest declares every one of `functions`, below the rootdir;
    None when they are declared elsewhere (a plugin, the rootdir's conftest: visible everywhere) or
    in conftests of different directories."""
    directories = {path.parent for path in map(declaring_file, functions) if path is not None and path.name == "conftest.py"}
    if len(directories) != 1:
        return None
    directory = directories.pop()
    if directory == config.rootpath.resolve() or not directory.is_relative_to(config.rootpath.resolve()):
        return None
    collected = config.stash.get(DIRECTORIES_KEY, {})
    return next((node for path, node in collected.items() if path.resolve() == directory), None)
