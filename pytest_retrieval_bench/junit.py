"""What a JUnit XML file (`--junitxml`) carries of the bench: per item its metrics and outcome word,
per suite the count of each outcome, so a CI's test view shows misses without failing them."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

import pytest

from pytest_retrieval_bench.scoring.outcome import outcome_word


def item_properties(record: dict[str, Any]) -> list[tuple[str, Any]]:
    metrics = record.get("metrics") or {}
    keys = [key for key in ("hit@10", "recall@10", "mrr@k") if key in metrics]
    properties: list[tuple[str, Any]] = [(f"bench.{key}", metrics[key]) for key in keys]
    properties += [("bench.abstained", record["abstained"]), ("bench.selective_success", record["selective_success"]),
                   ("bench.outcome", outcome_word(record))]
    return properties


def add_suite_properties(config: pytest.Config, records: Iterable[dict[str, Any]]) -> None:
    """`bench.hit`, `bench.missed`, ... on the test suite, when a JUnit file is being written."""
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    counts = Counter(outcome_word(record) for record in records if not record.get("skipped"))
    for word in ("HIT", "MISS", "ABSTAIN", "ANSWER", "FAILED"):
        xml.add_global_property(f"bench.{'missed' if word == 'MISS' else word.lower()}", counts.get(word, 0))
