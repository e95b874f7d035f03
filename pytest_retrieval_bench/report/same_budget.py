"""The bench's same-budget final-context contrast for the ranking arms of a run with agents.

The bench's `evaluate_ranked_context_as_trajectory` takes a ranker's first `top_k` files as a
trajectory whose every step is final and utilized context, and scores it as an agent's, so a
ranker and an agent stand in one table at the same number of final files. Here `top_k` is the
agents' `final_k`, and the rows are the samples an agent was scored on (with gold, no query
leakage), labelled as the agent's detail row labels them: the gold files, spans and blocks. The
bench's baseline rows carry no supporting files, so the contrast has no supporting-file metrics,
as in the bench.

The ranking is the arm's with given files kept, as the bench's rankers keep them and as an agent
sees them (it may read and submit a given file): the record's R (given files removed, as every
ranking metric scores it) with its `given_ranks` put back (`given_kept_top`), so the contrast is
the bench's own on the bench's rankers. A record without `given_ranks` (a sample without given
files, or a report written before they were kept) uses R as it is.
Pure: built from the details alone, like the rest of the `trajectory` section.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pytest_retrieval_bench.scoring.metrics import given_kept_top
from pytest_retrieval_bench.scoring.trajectory import ranked_context_as_trajectory, trajectory_detail

DEFAULT_FINAL_K = 3

Pair = tuple[Mapping[str, Any], Mapping[str, Any]]


def final_k(record: Mapping[str, Any]) -> int:
    budgets = record["trajectory"].get("budgets")
    value = budgets.get("final_k") if isinstance(budgets, dict) else None
    return value if type(value) is int and value > 0 else DEFAULT_FINAL_K


def _labels(agents: Mapping[str, list[Pair]], top_k: int) -> dict[str, dict[str, Any]]:
    """Sample id -> the labels of the first agent detail row (arms sorted) among agents of this `final_k`."""
    labels: dict[str, dict[str, Any]] = {}
    for arm in sorted(agents):
        for entry, record in agents[arm]:
            if final_k(record) == top_k and "detail" in record["trajectory"] and entry["id"] not in labels:
                labels[entry["id"]] = record["trajectory"]["detail"]
    return labels


def _ranking_arms(details: list[Mapping[str, Any]], agents: Mapping[str, Any]) -> list[str]:
    return sorted({arm for entry in details for arm in (entry.get("arms") or {}) if arm not in agents})


def _contrast(details: list[Mapping[str, Any]], arm: str, labels: dict[str, dict[str, Any]], top_k: int) -> dict[str, Any]:
    """The bench's summary of the arm's ranked context, and its detail rows (`details`)."""
    rows, missing = [], 0
    for entry in details:
        if entry["id"] not in labels:
            continue
        record = (entry.get("arms") or {}).get(arm)
        if record is None:
            missing += 1
            continue
        detail = labels[entry["id"]]
        rows.append({"sample_id": entry["id"], "task_type": entry.get("task_type"), "repo": entry.get("repo"), "base_commit": entry.get("base_commit"),
                     "gold_files": detail["gold_files"], "gold_spans": detail["gold_spans"], "gold_blocks": detail["gold_blocks"],
                     "top_files": [] if record.get("error") else given_kept_top(record.get("ranking") or [], record.get("given_ranks") or {}, top_k)})
    found = ranked_context_as_trajectory(rows, top_k=top_k)
    skipped = dict(found["skipped"], **({"no_record": missing} if missing else {}))
    empty = [trajectory_detail({"id": row["sample_id"], "gold_spans": row["gold_spans"], "gold_blocks": row["gold_blocks"]}, list(row["gold_files"]), [])
             for row in rows if row["gold_files"] and not row["top_files"]]
    return {"top_k": top_k, "evaluated": found["evaluated"], "skipped": dict(sorted(skipped.items())), "context": found["context"],
            "metrics": found["metrics"], "details": found["details"], "no_context": empty}


def _contrasts(details: Iterable[Mapping[str, Any]], agents: Mapping[str, list[Pair]]) -> dict[str, dict[int, dict[str, Any]]]:
    """Arm -> top_k -> `_contrast`, for each ranking arm and each `final_k` the agents use."""
    if not agents:
        return {}
    entries = sorted(details, key=lambda entry: entry["id"])
    budgets = sorted({final_k(record) for pairs in agents.values() for _, record in pairs})
    labels = {top_k: _labels(agents, top_k) for top_k in budgets}
    return {arm: {top_k: _contrast(entries, arm, labels[top_k], top_k) for top_k in budgets} for arm in _ranking_arms(entries, agents)}


def same_budget_paired_rows(details: Iterable[Mapping[str, Any]], agents: Mapping[str, list[Pair]]) -> dict[str, dict[int, list[dict[str, Any]]]]:
    """Per ranking arm and `final_k`, the detail rows a paired comparison reads: the contrast's, and
    for a sample the arm has a record of but no file (the bench skips it), the row of no context at
    all (every metric 0), as an agent's errored item is scored."""
    return {arm: {top_k: [*figures["details"], *figures["no_context"]] for top_k, figures in by_k.items()}
            for arm, by_k in _contrasts(details, agents).items()}


def same_budget_rows(details: Iterable[Mapping[str, Any]], agents: Mapping[str, list[Pair]]) -> dict[str, tuple[int, dict[str, dict[str, Any]]]]:
    """Per ranking arm, (top_k, sample id -> detail row) at the smallest `final_k` of the agents:
    the per-sample figures behind the section (for an export row)."""
    found = {}
    for arm, by_k in _contrasts(details, agents).items():
        top_k = min(by_k)
        found[arm] = (top_k, {row["sample_id"]: row for row in by_k[top_k]["details"]})
    return found


def same_budget_sections(details: Iterable[Mapping[str, Any]], agents: Mapping[str, list[Pair]]) -> dict[str, dict[str, Any]]:
    """Per ranking arm, `{"same_budget": {"top_K": figures}}` for each `final_k` the agents use;
    empty without agent records (reports without agents keep their bytes)."""
    return {arm: {"same_budget": {f"top_{top_k}": {name: value for name, value in figures.items() if name not in ("details", "no_context")}
                                  for top_k, figures in by_k.items()}}
            for arm, by_k in _contrasts(details, agents).items()}
