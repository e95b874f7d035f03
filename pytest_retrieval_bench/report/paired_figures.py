"""The figures of one paired comparison (candidate minus baseline, one value per sample), in one
place so the report's ranking `paired` section, its trajectory pairs, `diff` and the gate agree.

`name` seeds the bootstrap's generator (one generator per interval, seeded from its name, as
`stats.bootstrap_interval` says), so a comparison's interval never depends on which others ran.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

from pytest_retrieval_bench.scoring import stats
from pytest_retrieval_bench.scoring.verdicts import holm, verdict_of

PER_REPO_MINIMUM = 5


def interval_list(interval: tuple[float, float] | None) -> list[float] | None:
    return list(interval) if interval is not None else None


def paired_figures(name: str, diffs: Sequence[float], repos: Sequence[str] | None = None) -> dict[str, Any]:
    """n, mean, the seeded bootstrap 95% interval, wins/losses/ties, the t-test, the minimum
    detectable effect and the verdict of `diffs` (in a canonical order: sample-id order); with
    `repos` (each diff's repository), the mean per repository of at least `PER_REPO_MINIMUM`."""
    test = stats.paired_t_test(diffs)
    bootstrap = interval_list(stats.bootstrap_interval(diffs, name))
    figures: dict[str, Any] = {
        "n": len(diffs),
        "mean_difference": stats.mean(diffs),
        "bootstrap95": bootstrap,
        "wins": sum(1 for diff in diffs if diff > 0),
        "losses": sum(1 for diff in diffs if diff < 0),
        "ties": sum(1 for diff in diffs if diff == 0),
    }
    if repos is not None:
        by_repo: dict[str, list[float]] = defaultdict(list)
        for repo, diff in zip(repos, diffs):
            by_repo[repo].append(diff)
        figures["per_repository"] = {repo: stats.mean(values) for repo, values in sorted(by_repo.items()) if len(values) >= PER_REPO_MINIMUM}
    figures.update({
        "t_test": {"t": test["t"], "df": test["df"], "p": test["p"], "ci95": [test["ci_low"], test["ci_high"]] if test["ci_low"] is not None else None},
        "minimum_detectable_effect": stats.minimum_detectable_effect(test["sd"], len(diffs)),
        "verdict": verdict_of(bootstrap, len(diffs)),
    })
    return figures


def add_holm(entries: dict[str, dict[str, Any]]) -> None:
    """Each t-test's Holm-adjusted p, over every comparison and metric of `entries`."""
    tests = [result["t_test"] for comparison in entries.values() for result in comparison.values()]
    for test, adjusted in zip(tests, holm([test["p"] for test in tests])):
        test["p_holm"] = adjusted
