"""Which xdist mode a bench run uses when the user names none.

A bare `-n N` means `--dist load` to xdist, which hands a snapshot's items to every worker, so
each worker sets the snapshot up (reads it, loads or builds its indexes) again. A bench run
without an explicit mode uses the snapshot-grouped scheduling of `--dist loadgroup` instead; a
mode given on the command line, in `addopts` or in `PYTEST_ADDOPTS` (`--dist load`, `-d`) is
kept as given.

xdist's own `pytest_cmdline_main` turns the unset mode (`no`) into `load` before any
`pytest_configure`, so "not given" is read here, in a wrapper that runs before it.
"""

from __future__ import annotations

from typing import Any, Generator

import pytest

#: whether the parsed options named an xdist mode, read before xdist filled in its default
GIVEN_KEY = pytest.StashKey[bool]()
#: set when this run chose `loadgroup` itself
CHOSEN_KEY = pytest.StashKey[bool]()


def dist_given(option: Any) -> bool:
    """A mode other than the parser's default `no`, or xdist's `-d` shortcut for `load`."""
    return getattr(option, "dist", "no") != "no" or bool(getattr(option, "distload", False))


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, Any, Any]:
    config.stash[GIVEN_KEY] = dist_given(config.option)
    return (yield)


def choose_snapshot_groups(config: pytest.Config) -> bool:
    """On the xdist controller of a bench run, at configure: `loadgroup` in place of the `load`
    xdist filled in for a bare `-n`. Whether it chose."""
    if config.stash.get(GIVEN_KEY, True) or config.getoption("dist", None) != "load":
        return False
    config.option.dist = "loadgroup"
    config.stash[CHOSEN_KEY] = True
    return True


def header_lines(config: pytest.Config) -> list[str]:
    if not config.stash.get(CHOSEN_KEY, False):
        return []
    return ["retrieval-bench: xdist --dist loadgroup (each snapshot's items on one worker, agent items spread over the workers; give --dist load for xdist's default)"]
