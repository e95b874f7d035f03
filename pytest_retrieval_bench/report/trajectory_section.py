"""The report's `trajectory` section: agent arms scored as the bench's trajectory track scores them.

Built from the details alone (so a run, a merge of its shards and a reader's check rebuild it
alike): each agent record's closed-tool detail row is recomputed exactly from what the record holds
(its steps, the gold and label fields of its detail, its closed-tool fields), then aggregated with
the bench's `summarize_trajectory_details` and `summarize_closed_tool` (macro means per task type
and overall), with a Wilson interval on final-any-gold, the mean final files and the bench's budget
curve (`scoring/trajectory_budget.py`); on ContextBench rows also ContextBench's own aggregates
(`contextbench_section.py`). Samples without gold are not in the bench's figures (it
skips them); the section counts them and their abstentions apart. Ranking arms of the run get the
bench's same-budget contrast (`same_budget.py`), and each agent its paired comparisons with other
agents and with those contrasts (`trajectory_paired.py`). Reports without an agent arm have no such section.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterable, Mapping

from pytest_retrieval_bench.report.agent_rows import agent_records, detail_row
from pytest_retrieval_bench.report.contextbench_section import contextbench_section
from pytest_retrieval_bench.report.same_budget import same_budget_sections
from pytest_retrieval_bench.report.trajectory_paired import trajectory_pairs
from pytest_retrieval_bench.scoring import stats
from pytest_retrieval_bench.scoring.trajectory_budget import budget_curve
from pytest_retrieval_bench.scoring.trajectory import summarize_closed_tool, summarize_trajectory_details

_DETAIL_FIELDS = ("gold_files", "supporting_context_files", "gold_spans", "gold_blocks", "closed_tool", "metrics")


def _step(value: Any) -> bool:
    return (isinstance(value, dict) and (value.get("step") is None or type(value["step"]) is int)
            and (value.get("path") is None or isinstance(value["path"], str)))


def _rows(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(row, dict) for row in value)


def is_trajectory(value: Any) -> bool:
    """The shape this module reads of a record's `trajectory` (checked before anything is rebuilt)."""
    if not isinstance(value, dict) or not isinstance(value.get("steps"), list) or not all(map(_step, value["steps"])):
        return False
    if not isinstance(value.get("final_files"), list) or not all(isinstance(path, str) for path in value["final_files"]):
        return False
    detail = value.get("detail")
    if detail is None:
        return "detail" not in value
    return (isinstance(detail, dict) and all(name in detail for name in _DETAIL_FIELDS) and isinstance(detail["closed_tool"], dict)
            and isinstance(detail["metrics"], dict) and _rows(detail["gold_spans"]) and _rows(detail["gold_blocks"])
            and all(isinstance(detail[name], list) and all(isinstance(path, str) for path in detail[name])
                    for name in ("gold_files", "supporting_context_files"))
            and isinstance(detail["closed_tool"].get("final_files", []), list))


def average_final_files(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Mean final files per task type and `overall` (the V1.4 results' "Avg final")."""
    grouped: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        count = len(row["closed_tool"].get("final_files") or [])
        grouped["overall"].append(count)
        grouped[str(row.get("task_type") or "unknown")].append(count)
    return {task: sum(counts) / len(counts) for task, counts in sorted(grouped.items())}


def arm_section(pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> dict[str, Any]:
    rows = [detail_row(entry, record) for entry, record in pairs if "detail" in record["trajectory"]]
    no_gold = [record for _, record in pairs if "detail" not in record["trajectory"]]
    hits = sum(1 for row in rows if set(row["closed_tool"].get("final_files") or []) & set(row["gold_files"]))
    interval = stats.wilson_interval(hits, len(rows))
    section = {
        "budget": pairs[0][1]["trajectory"].get("budgets"),
        "evaluated": len(rows),
        "errors": sum(1 for _, record in pairs if record.get("error")),
        "no_gold": {"samples": len(no_gold), "abstentions": sum(1 for record in no_gold if record.get("abstained"))},
        "metrics": summarize_trajectory_details(rows),
        "closed_tool_metrics": summarize_closed_tool(rows),
        "average_final_files": average_final_files(rows),
        "budget_curve": budget_curve(rows),
        "final_any_gold": {"hits": hits, "n": len(rows), "rate": hits / len(rows) if rows else None,
                           "wilson95": list(interval) if interval is not None else None},
    }
    if rows and all(row["closed_tool"].get("policy") == "replay" for row in rows):
        del section["closed_tool_metrics"]  # a replay records steps, not calls: the bench's eval-trajectories has no such figures
    contextbench = contextbench_section(pairs)  # on ContextBench rows: ContextBench's own two aggregates
    if contextbench is not None:
        section["contextbench"] = contextbench
    protocols = [record["trajectory"]["protocol"] for _, record in pairs if isinstance(record["trajectory"].get("protocol"), dict)]
    if protocols:  # a command agent's line protocol, counted as the bench counts its Codex policy's violations
        section["protocol"] = {"violation_samples": sum(1 for protocol in protocols if protocol.get("violations")),
                               "invalid_actions": sum(int(protocol.get("invalid_actions") or 0) for protocol in protocols),
                               "ended": dict(sorted(Counter(str(protocol.get("ended")) for protocol in protocols).items()))}
    return section


def trajectory_section(details: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Per agent arm: the bench's trajectory and closed-tool aggregates; per ranking arm, the bench's
    same-budget contrast (`same_budget.py`); empty without agent records."""
    details = list(details)
    agents = agent_records(details)
    section: dict[str, Any] = {arm: arm_section(pairs) for arm, pairs in sorted(agents.items())}
    for arm, paired in trajectory_pairs(details, agents).items():
        section[arm]["paired"] = paired
    section.update(same_budget_sections(details, agents))
    return dict(sorted(section.items()))


def trajectory_record_problem(record: Mapping[str, Any], entry: Mapping[str, Any], where: str) -> str | None:
    """What of an agent record's detail its own steps and labels contradict (None: nothing): its
    metrics and first gold step are recomputed and must be the written ones at six decimals."""
    trajectory = record.get("trajectory")
    if not isinstance(trajectory, dict) or "detail" not in trajectory:
        return None
    rebuilt = detail_row(entry, record)
    written = trajectory["detail"]
    for name, value in rebuilt["metrics"].items():
        if name not in written["metrics"] or abs(float(written["metrics"][name]) - round(value, 6)) > 1e-9:
            return (f"{where}.trajectory.detail.metrics[{name!r}]: {written['metrics'].get(name)!r} is written, but the record's steps "
                    f"and labels give {round(value, 6)!r}")
    extra = sorted(set(written["metrics"]) - set(rebuilt["metrics"]))
    if extra:
        return f"{where}.trajectory.detail.metrics[{extra[0]!r}] is written, but the record's steps and labels give no such metric"
    first = rebuilt["closed_tool"]["first_gold_step"]
    if written["closed_tool"].get("first_gold_step") != first:
        return f"{where}.trajectory.detail.closed_tool.first_gold_step: {written['closed_tool'].get('first_gold_step')!r} is written, but the steps give {first!r}"
    return None
