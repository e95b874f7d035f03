"""CPU seconds per phase of a build, taken where the build itself calls each phase's functions.

A build function looks its helpers up in its module's namespace when it calls them, so wrapping
those names for the length of one build times the build as it runs, with no copy of its steps
here to drift from it. Used by `repomap.py` (`--phases`) for both maps, ours and the bench's.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from functools import wraps
from types import ModuleType
from typing import Any, Callable, Iterator

Phases = dict[str, tuple[str, ...]]
"""phase name -> the names, in the module, of the functions whose calls make up the phase."""


@contextmanager
def phase_clocks(module: ModuleType, phases: Phases, spent: Counter[str]) -> Iterator[None]:
    """While open, every call of a phase's functions adds its CPU time to `spent[phase]`.

    A call made inside another timed call is not counted twice: only the outermost timed call
    of a stack is clocked, so the phases never overlap and their sum is at most the build's."""
    originals = {name: getattr(module, name) for names in phases.values() for name in names}
    if len(originals) != sum(map(len, phases.values())):
        raise ValueError("a function is named by two phases")
    depth = [0]

    def clocked(phase: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            if depth[0]:
                return function(*args, **kwargs)
            depth[0] += 1
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[phase] += time.process_time() - started
                depth[0] -= 1

        return call

    try:
        for phase, names in phases.items():
            for name in names:
                setattr(module, name, clocked(phase, originals[name]))
        yield
    finally:
        for name, function in originals.items():
            setattr(module, name, function)
