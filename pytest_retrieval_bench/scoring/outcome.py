"""The one word that says how a scored item ended, shared by the terminal, JUnit and the report."""

from __future__ import annotations

from typing import Any


def outcome_word(record: dict[str, Any]) -> str:
    """FAILED for an arm error; HIT / MISS for positive samples, ABSTAIN for an abstention, ANSWER on a no-gold sample."""
    if record.get("error"):
        return "FAILED"
    if record.get("abstained"):
        return "ABSTAIN"
    if record.get("rank_of_first_gold") is not None:
        return "HIT"
    if record.get("metrics"):
        return "MISS"
    return "ANSWER"
