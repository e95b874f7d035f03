"""An agent record's bench detail row, rebuilt from the record, and a report's agent records by arm:
what the trajectory section, its pairs, the export and the gate all read.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping

from pytest_retrieval_bench.scoring.trajectory import closed_tool_detail


def detail_row(entry: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    """The bench's closed-tool detail row of one agent record, recomputed from the record (an
    errored record's is that of no context at all, as it was scored)."""
    trajectory = record["trajectory"]
    detail = trajectory["detail"]
    sample = {"id": entry["id"], "task_type": entry.get("task_type"), "repo": entry.get("repo"), "base_commit": entry.get("base_commit"),
              "gold_spans": detail["gold_spans"], "gold_blocks": detail["gold_blocks"]}
    fields = {name: value for name, value in detail["closed_tool"].items() if name != "first_gold_step"}
    steps = [] if record.get("error") else trajectory["steps"]
    return closed_tool_detail(sample, list(detail["gold_files"]), steps, fields, supporting_files=list(detail["supporting_context_files"]))


def agent_records(details: Iterable[Mapping[str, Any]]) -> dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]]:
    """(entry, record) of every agent record, by arm, in sample-id order."""
    found: dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = defaultdict(list)
    for entry in sorted(details, key=lambda entry: entry["id"]):
        for arm, record in sorted((entry.get("arms") or {}).items()):
            if isinstance(record.get("trajectory"), dict):
                found[arm].append((entry, record))
    return found
