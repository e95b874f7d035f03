"""The one word that says how a scored item ended, shared by the terminal, JUnit and the report."""

from __future__ import annotations

from typing import Any


def outcome_word(record: dict[str, Any]) -> str:
    """FAILED for an arm error; HIT / MISS for positive samples, ABSTAIN for an abstention, ANSWER on a no-gold sample.

    An agent's item is a HIT when a gold file is among its final files (given files included, as
    the bench's trajectory scores count them; its ranking figures leave given files out)."""
    if record.get("error"):
        return "FAILED"
    if record.get("abstained"):
        return "ABSTAIN"
    trajectory = record.get("trajectory")
    if isinstance(trajectory, dict) and "final_gold" in trajectory:  # an agent: a gold file in its final context, as the bench counts
        return "HIT" if trajectory["final_gold"] else "MISS"
    if record.get("rank_of_first_gold") is not None:
        return "HIT"
    if record.get("metrics"):
        return "MISS"
    return "ANSWER"
