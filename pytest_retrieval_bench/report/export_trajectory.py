"""The trajectory figures of an export row (`retrieval-bench export --format csv|jsonl`).

A report with agent arms adds, per sample x arm: for an agent record with gold, its detail row's
trajectory metrics (`final_file_f1`, ...), `final_any_gold` (1 or 0) and closed-tool counts; for a ranking arm, the same
metrics of its same-budget contrast (its first `final_k` files scored as a trajectory, as in the
report's section), so an agent and a ranker compare column by column. `trajectory_source` says
which (`agent`, or `ranked_top_K`). Computed from the details, as the section is; reports without
agents add nothing.
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report.same_budget import same_budget_rows
from pytest_retrieval_bench.report.agent_rows import agent_records, detail_row
from pytest_retrieval_bench.report.trajectory_values import FINAL_ANY_GOLD, final_any_gold

CLOSED_TOOL_COUNTS = ("tool_calls", "grep_calls", "read_calls", "read_tokens", "first_gold_step")


def trajectory_columns(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(sample id, arm) -> the row's trajectory columns."""
    details = report.get("details", [])
    agents = agent_records(details)
    columns: dict[tuple[str, str], dict[str, Any]] = {}
    for arm, pairs in agents.items():
        for entry, record in pairs:
            if "detail" not in record["trajectory"]:
                continue
            row = detail_row(entry, record)
            block = row["closed_tool"]
            columns[(entry["id"], arm)] = {"trajectory_source": "agent", **row["metrics"],
                                           FINAL_ANY_GOLD: final_any_gold(block.get("final_files") or [], row["gold_files"]),
                                           **{name: block.get(name) for name in CLOSED_TOOL_COUNTS},
                                           "final_files": len(block.get("final_files") or [])}
    for arm, (top_k, rows) in same_budget_rows(details, agents).items():
        for sample_id, row in rows.items():
            columns[(sample_id, arm)] = {"trajectory_source": f"ranked_top_{top_k}", **row["metrics"],
                                         FINAL_ANY_GOLD: final_any_gold([step["path"] for step in row["steps"]], row["gold_files"]),
                                         "final_files": len(row["steps"])}
    return columns
