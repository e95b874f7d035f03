"""How a paired difference is read: one rule for the report, the terminal, Markdown and HTML.

The bootstrap 95% interval of (candidate - baseline) decides: its lower bound above zero is
"better", its upper bound below zero "worse", anything else "not distinguishable". Below
`MIN_PAIRED` paired samples no verdict is given at all ("too few"): a handful of samples (a run
stopped by `-x`, a small group) can put an interval on one side of zero by chance.

Several comparisons are shown at once, so each raw t-test p-value gets a Holm-adjusted one
beside it (family: every comparison and metric of one group).
"""

from __future__ import annotations

from typing import Sequence

MIN_PAIRED = 10
BETTER, WORSE, NOT_DISTINGUISHABLE, TOO_FEW = "better", "worse", "not distinguishable", "too few"


def verdict_of(bootstrap95: Sequence[float] | None, n: int) -> str:
    """The verdict the report states for one paired comparison of one metric."""
    if n < MIN_PAIRED or not bootstrap95:
        return TOO_FEW
    low, high = bootstrap95
    if low > 0:
        return BETTER
    if high < 0:
        return WORSE
    return NOT_DISTINGUISHABLE


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment; None (no test possible) stays None and is not counted."""
    present = sorted((value, index) for index, value in enumerate(pvalues) if value is not None)
    adjusted: list[float | None] = [None] * len(pvalues)
    running = 0.0
    count = len(present)
    for rank, (value, index) in enumerate(present):
        running = max(running, min(1.0, (count - rank) * value))
        adjusted[index] = running
    return adjusted
