"""ContextBench's EditLoc: which lines a model's patch deletes, and how many fall in the gold lines.

The patch is read as `parsers/diff.py` reads it (`parse_diff_lines(..., deletions_only=True)`):
a file starts at `+++ b/PATH`, each hunk's deleted lines are numbered in the old file, and a hunk
ends at the next `@@`, `diff ` or `---` line. Each deleted line counts once per merged range; a hit
is a deleted line inside a gold line range of `init` on the same path.

Only the prediction's own `model_patch` is scored: without one there is no EditLoc (the official
evaluator scores the dataset's reference patch in its place, which measures the reference, not
the agent).
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from pytest_retrieval_bench.scoring.contextbench_context import Interval, IntervalsByFile, merge

_HUNK = re.compile(r"^@@\s+-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?\s+@@")
_NEW_FILE = re.compile(r"^\+\+\+\s+b/(.+)")


def deleted_lines(patch: str) -> IntervalsByFile:
    """Deleted line ranges per file, in old-file numbering, merged."""
    result: dict[str, list[Interval]] = {}
    current: str | None = None
    lines = patch.split("\n")
    for index, line in enumerate(lines):
        if line.startswith("+++"):
            match = _NEW_FILE.match(line)
            if match:
                current = match.group(1)
            continue
        if not (line.startswith("@@") and current):
            continue
        match = _HUNK.match(line)
        if not match:
            continue
        old_line, start = int(match.group(1)), None
        following = index + 1
        while following < len(lines) and not lines[following].startswith(("@@", "diff ", "---")):
            text = lines[following]
            if text.startswith("-"):
                start = old_line if start is None else start
                old_line += 1
            elif text.startswith(" "):
                if start is not None:
                    result.setdefault(current, []).append((start, old_line - 1))
                    start = None
                old_line += 1
            following += 1
        if start is not None:
            result.setdefault(current, []).append((start, old_line - 1))
    return {path: merge(intervals) for path, intervals in result.items() if intervals}


def editloc(patch: str, gold_lines: Mapping[str, Sequence[Interval]]) -> dict[str, int]:
    """`intersection` (deleted lines inside the gold), `pred_size` (deleted lines) and `gold_size`
    (gold lines), as the official counts them."""
    hits = predicted = 0
    for path, intervals in deleted_lines(patch).items():
        ranges = gold_lines.get(path, [])
        for start, end in intervals:
            for line in range(start, end + 1):
                predicted += 1
                hits += any(gold_start <= line <= gold_end for gold_start, gold_end in ranges)
    gold = sum(end - start + 1 for intervals in gold_lines.values() for start, end in intervals)
    return {"intersection": hits, "gold_size": gold, "pred_size": predicted}
