"""The bench's closed-tool budget curve (`report_closed_tool_budget_curve`): each finished
trajectory cut after its first B tool calls, the files read by then scored as the final context.

A post-hoc prefix, as the bench defines it, not a rerun under a smaller budget: an agent that knew
it had 4 calls might have spent them otherwise. Pure functions over detail rows.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pytest_retrieval_bench.scoring.trajectory import (dedupe_paths, first_gold_step, summarize_closed_tool, summarize_trajectory_details,
                                                       trajectory_detail)

CURVE_BUDGETS = (2, 4, 6, 8)
TOOLS = frozenset({"list_dir", "grep", "read_file", "submit"})


def _int(value: Any) -> int | None:
    try:
        return None if value is None or value == "" else int(value)
    except (TypeError, ValueError):
        return None


def prefix_counts(detail: Mapping[str, Any], budget: int) -> dict[str, int]:
    """Tool, grep and read calls and read tokens of the trace's first `budget` tool calls (a
    submit ends it; the bench's `closed_tool_prefix_counts`)."""
    trace = detail.get("closed_tool", {}).get("trace", []) if isinstance(detail.get("closed_tool"), dict) else []
    counts = {"tool_calls": 0, "grep_calls": 0, "read_calls": 0, "read_tokens": 0}
    for event in trace:
        tool = str(event.get("tool") or "") if isinstance(event, dict) else ""
        if tool not in TOOLS:
            continue
        if counts["tool_calls"] >= budget:
            break
        counts["tool_calls"] += 1
        if tool == "grep":
            counts["grep_calls"] += 1
        elif tool == "read_file":
            counts["read_calls"] += 1
            counts["read_tokens"] += _int(event.get("tokens")) or 0
        elif tool == "submit":
            break
    return counts


def budget_prefix_detail(detail: Mapping[str, Any], budget: int) -> dict[str, Any]:
    """One detail row cut at `budget` tool calls (the bench's `closed_tool_budget_prefix_detail`)."""
    gold_files = [str(path) for path in detail.get("gold_files", []) if path]
    steps = []
    for step in detail.get("steps", []) or []:
        number = _int(step.get("step")) if isinstance(step, dict) else None
        if number is not None and number <= budget:
            steps.append({**step, "is_final_context": True, "is_utilized_context": True})
    sample = {"id": detail.get("sample_id") or detail.get("id"), "task_type": detail.get("task_type"), "repo": detail.get("repo"),
              "base_commit": detail.get("base_commit"), "gold_spans": detail.get("gold_spans") or [], "gold_blocks": detail.get("gold_blocks") or []}
    prefix = trajectory_detail(sample, gold_files, steps,
                               supporting_files=[str(path) for path in detail.get("supporting_context_files", []) if path])
    original = detail.get("closed_tool", {}) if isinstance(detail.get("closed_tool"), dict) else {}
    prefix["closed_tool"] = {"policy": original.get("policy"), "model": original.get("model"), "budget_prefix": budget,
                             "max_tool_calls": original.get("max_tool_calls"), **prefix_counts(detail, budget),
                             "final_files": dedupe_paths(str(step.get("path") or "") for step in steps),
                             "first_gold_step": first_gold_step(steps, gold_files), "prefix_definition": "files read within the first B tool calls"}
    return prefix


def budget_curve(details: Iterable[Mapping[str, Any]], budgets: Iterable[int] = CURVE_BUDGETS) -> list[dict[str, Any]]:
    """Per budget (sorted, positive): `budget`, `evaluated`, `metrics` and `closed_tool_metrics` of the prefixes."""
    rows = list(details)
    values = sorted({int(value) for value in budgets if int(value) > 0})
    if not values:
        raise ValueError("at least one positive budget is required")
    curve = []
    for budget in values:
        prefixes = [budget_prefix_detail(row, budget) for row in rows]
        curve.append({"budget": budget, "evaluated": len(prefixes), "metrics": summarize_trajectory_details(prefixes),
                      "closed_tool_metrics": summarize_closed_tool(prefixes)})
    return curve
