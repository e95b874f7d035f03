"""Floats added one after another, left to right, on every Python.

From Python 3.12 the builtin `sum` compensates its rounding, so a mean computed with it moves in its
last digits with the interpreter. The bench and cce add as `sum` did up to 3.11; a figure compared
with theirs (or recorded from them) is added the same way here, whatever Python runs the plugin.
"""

from __future__ import annotations

from typing import Iterable


def plain_sum(values: Iterable[float]) -> float:
    """The sum of `values` added left to right from 0.0 (Python 3.11's `sum` over floats)."""
    total = 0.0
    for value in values:
        total += value
    return total
