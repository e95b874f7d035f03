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


def symbols_note(results: list[Mapping[str, Any]]) -> str | None:
    """One line on symbol figures left out (None when every scored task has them)."""
    absent = [result for result in results if "symbols_absent" in result]
    if not absent:
        return None
    grammars = sorted({str(result["missing_grammar"]) for result in absent if result.get("missing_grammar")})
    if grammars:
        return (f"symbol figures absent for {len(absent)} of {len(results)} tasks: tree-sitter-languages has no grammar for "
                f"{', '.join(grammars)}")
    return f"symbol figures absent for {len(absent)} of {len(results)} tasks: {absent[0]['symbols_absent']}"


def contextbench_section(pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> dict[str, Any] | None:
    """The arm's two ContextBench aggregates (None when no record is on a ContextBench row)."""
    results = contextbench_results(pairs)
    if not results:
        return None
    section: dict[str, Any] = {"evaluator_micro": evaluator_micro(results), "leaderboard_macro": leaderboard_macro(results)}
    note = symbols_note(results)
    if note:
        section["symbols_note"] = note
    return section
