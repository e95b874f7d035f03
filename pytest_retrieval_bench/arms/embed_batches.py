"""Encode calls that fit a memory budget: the bench's batches wherever they fit, split where not.

An encoder that pads a batch to its longest text (wordllama does, and most transformer encoders
up to their sequence limit) needs transient memory of about `texts x longest text x bytes per
padded character`: one 400,000-character text in a batch of 32 asks wordllama for about 12 GB.
The bench's own batches are kept whenever their estimate fits the budget, so on the bench's
release corpora (chunk texts of at most 8,000 characters) nothing changes and the vectors stay the
bench's to the bit. A batch whose estimate does not fit is cut, in order, into the fewest runs of
consecutive texts that each fit; a text over the budget on its own is encoded alone, and the
embedder is told the budget so it can encode such a text within it (see `WordLlamaEmbedder`).
Pure: no model, no pytest; the arm runs the plan and reports what was split.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

#: transient bytes per padded character of the longest text, per text of a batch, when an embedder
#: declares none: wordllama's, measured (about 2.1 kB per padded token; 0.69 tokens per character
#: on a lock file, the densest text met; ordinary code is 0.25 to 0.35)
DEFAULT_BYTES_PER_CHAR = 1_500

#: the default budget for one encode call's transient memory (`--bench-embed-memory`, in MiB)
DEFAULT_MEMORY_BUDGET = 512 << 20


@dataclass(frozen=True)
class Call:
    """One encode call: texts `start:stop` of the list planned, in batches of `batch_size`."""

    start: int
    stop: int
    batch_size: int


@dataclass
class Splits:
    """What the plan had to change: the bench batches cut, the texts they held, the longest text."""

    batches: int = 0
    texts: int = 0
    alone_over_budget: int = 0
    longest_chars: int = 0

    def add(self, other: "Splits") -> None:
        self.batches += other.batches
        self.texts += other.texts
        self.alone_over_budget += other.alone_over_budget
        self.longest_chars = max(self.longest_chars, other.longest_chars)


@dataclass
class Plan:
    calls: list[Call] = field(default_factory=list)
    splits: Splits = field(default_factory=Splits)


def batch_cost(count: int, longest: int, bytes_per_char: float) -> float:
    """The estimated transient memory of one padded batch."""
    return count * longest * bytes_per_char


def plan_calls(lengths: Sequence[int], batch_size: int, budget: int, bytes_per_char: float) -> Plan:
    """Encode calls for texts of these character `lengths`, in order, batched as the bench batches
    them (`batch_size` at a time from the first); consecutive batches that fit share one call."""
    plan = Plan()
    size = max(1, batch_size)
    run_start: int | None = None  # the first text of the current call of whole bench batches
    for start in range(0, len(lengths), size):
        stop = min(start + size, len(lengths))
        batch = lengths[start:stop]
        if batch_cost(len(batch), max(batch), bytes_per_char) <= budget:
            run_start = start if run_start is None else run_start
            continue
        if run_start is not None:
            plan.calls.append(Call(run_start, start, size))
            run_start = None
        _split(plan, lengths, start, stop, budget, bytes_per_char)
    if run_start is not None:
        plan.calls.append(Call(run_start, len(lengths), size))
    return plan


def _split(plan: Plan, lengths: Sequence[int], start: int, stop: int, budget: int, bytes_per_char: float) -> None:
    """Cut one over-budget batch into runs of consecutive texts that each fit (a text that does not
    fit alone is a run of its own)."""
    plan.splits.batches += 1
    plan.splits.texts += stop - start
    plan.splits.longest_chars = max(plan.splits.longest_chars, max(lengths[start:stop]))
    first, longest = start, 0
    for index in range(start, stop):
        longest = max(longest, lengths[index])  # the run's longest if this text joins it
        if index > first and batch_cost(index - first + 1, longest, bytes_per_char) > budget:
            _close(plan, lengths, first, index, budget, bytes_per_char)
            first, longest = index, lengths[index]
    _close(plan, lengths, first, stop, budget, bytes_per_char)


def _close(plan: Plan, lengths: Sequence[int], start: int, stop: int, budget: int, bytes_per_char: float) -> None:
    plan.calls.append(Call(start, stop, stop - start))
    if stop - start == 1 and batch_cost(1, lengths[start], bytes_per_char) > budget:
        plan.splits.alone_over_budget += 1
