"""ContextBench's aggregates of an agent arm, in the report's trajectory section (`contextbench`).

Built from the per-task results the records hold (`trajectory.contextbench.result`), so a run, a
merge and a reader's check build the same figures: `evaluator_micro` is what ContextBench's
evaluator prints (`aggregate_results`: sizes pooled over tasks), `leaderboard_macro` the
leaderboard's per-task means with per-task F1. Tasks the official leaves out (no context extracted,
an agent error) count in `num_total` only. When symbols could not be scored for some task, one
note says why (tree-sitter missing, or the grammar a language lacks), instead of a zero.
"""

from __future__ import annotations

from typing import Any, Mapping

from pytest_retrieval_bench.scoring.contextbench_aggregate import evaluator_micro, leaderboard_macro


def contextbench_results(pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> list[Mapping[str, Any]]:
    return [record["trajectory"]["contextbench"]["result"] for _, record in pairs
            if isinstance(record["trajectory"].get("contextbench"), dict) and isinstance(record["trajectory"]["contextbench"].get("result"), dict)]


def symbols_note(results: list[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Why symbol figures are left out, and for how many tasks (None when every scored task has them)."""
    absent = [result for result in results if "symbols_absent" in result]
    if not absent:
        return None
    grammars = sorted({str(result["missing_grammar"]) for result in absent if result.get("missing_grammar")})
    reason = f"tree-sitter-languages has no grammar for {', '.join(grammars)}" if grammars else str(absent[0]["symbols_absent"])
    return {"reason": reason, "tasks": len(absent), "of": len(results)}


def contextbench_section(pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> dict[str, Any] | None:
    """The arm's two ContextBench aggregates (None when no record is on a ContextBench row)."""
    results = contextbench_results(pairs)
    if not results:
        return None
    section: dict[str, Any] = {"evaluator_micro": evaluator_micro(results), "leaderboard_macro": leaderboard_macro(results)}
    note = symbols_note(results)
    if note:
        section["symbols_absent"] = note
    return section


def symbols_lines(report: Mapping[str, Any]) -> list[str]:
    """One terminal line per distinct reason symbol figures are absent (each said once per run)."""
    by_reason: dict[str, list[str]] = {}
    for arm, block in sorted((report.get("trajectory") or {}).items()):
        note = (block.get("contextbench") or {}).get("symbols_absent") if isinstance(block, dict) else None
        if isinstance(note, dict):
            by_reason.setdefault(str(note.get("reason")), []).append(f"{arm} {note.get('tasks')} of {note.get('of')} tasks")
    return [f"ContextBench symbol figures absent ({', '.join(arms)}): {reason}" for reason, arms in by_reason.items()]
