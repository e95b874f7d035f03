"""Paired statistics between agents, and between an agent and a ranker's same-budget figures.

Per agent arm, its section's `paired` holds, for each other agent sorted before it and for each
ranking arm's same-budget contrast at the agent's `final_k` (`"bm25:all top_3"`), the figures of
(this agent minus the other) on each of `PAIRED_TRAJECTORY_METRICS` both sides have: over the
samples with gold both scored, in sample-id order, as the ranking `paired` section computes them
(`paired_figures`: seeded bootstrap, t-test, verdict, Holm-adjusted p over the agent's tests).
Each interval's generator is seeded from its name, `trajectory|AGENT|OTHER|METRIC`.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pytest_retrieval_bench.report.paired_figures import add_holm, paired_figures
from pytest_retrieval_bench.report.same_budget import final_k, same_budget_paired_rows
from pytest_retrieval_bench.report.trajectory_values import PAIRED_TRAJECTORY_METRICS, Values, agent_values, paired_values, ranker_values

Pair = tuple[Mapping[str, Any], Mapping[str, Any]]


def same_budget_name(arm: str, top_k: int) -> str:
    return f"{arm} top_{top_k}"


def compared(agent: str, other: str, mine: Values, theirs: Values, repos: Mapping[str, str]) -> dict[str, Any]:
    comparison = {}
    for metric in PAIRED_TRAJECTORY_METRICS:
        ids, diffs = paired_values(mine, theirs, metric)
        if ids:
            comparison[metric] = paired_figures(f"trajectory|{agent}|{other}|{metric}", diffs, [repos.get(i, "?") for i in ids])
    return comparison


def trajectory_pairs(details: Iterable[Mapping[str, Any]], agents: Mapping[str, list[Pair]]) -> dict[str, dict[str, Any]]:
    """agent -> other -> metric -> figures (agents without a paired sample have none)."""
    details = list(details)
    repos = {entry["id"]: str(entry.get("repo") or "?") for entry in details}
    own = {arm: agent_values(pairs) for arm, pairs in agents.items()}
    rankers = same_budget_paired_rows(details, agents)
    found: dict[str, dict[str, Any]] = {}
    for agent in sorted(agents):
        entries = {}
        for other in sorted(arm for arm in agents if arm < agent):
            entries[other] = compared(agent, other, own[agent], own[other], repos)
        top_k = final_k(agents[agent][0][1])
        for ranker, by_k in sorted(rankers.items()):
            name = same_budget_name(ranker, top_k)
            entries[name] = compared(agent, name, own[agent], ranker_values(by_k[top_k]), repos)
        entries = {other: comparison for other, comparison in entries.items() if comparison}
        if entries:
            add_holm(entries)
            found[agent] = entries
    return found
