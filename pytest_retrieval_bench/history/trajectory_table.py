"""The trajectory table of `retrieval-bench history`: per saved run with agents, per arm (an agent,
or a ranking arm's same-budget figures), final-any-gold with its Wilson interval, a trajectory
metric's mean, and its paired change against the previous saved run of the same arm and series,
over the samples with gold both scored (the generator seeded as the gate's: `run_pair_seed`).
Runs without agents have no rows; a history without any has no such table.
"""

from __future__ import annotations

from typing import Any, Callable

from pytest_retrieval_bench.history.store import Loaded, series_labels
from pytest_retrieval_bench.report.gate import run_pair_seed
from pytest_retrieval_bench.report.tables import interval, number, signed
from pytest_retrieval_bench.report.trajectory_values import (FINAL_ANY_GOLD, Values, final_any_gold_figures, metric_mean, paired_values,
                                                             report_trajectory_values)
from pytest_retrieval_bench.scoring import stats
from pytest_retrieval_bench.scoring.verdicts import verdict_of

DEFAULT_METRIC = "final_file_f1"
HEADERS = ["run", "series", "arm", "source", "n", "final-any-gold", "95% Wilson", "{metric}", "change in {metric}", "bootstrap 95%", "verdict"]


def trajectory_points_of() -> Callable[[dict[str, Any], str], dict[str, tuple[float, Any]]]:
    """`points(report, metric)` for the history page: per arm (named with its source) the metric's
    mean, with final-any-gold's Wilson interval when that is the metric. Each report's values are
    rebuilt once for all its plots; an arm none of whose samples has the metric (a ranker's
    same-budget figures have no ContextBench or supporting-file metrics) draws no line."""
    found: dict[int, dict[str, tuple[str, Values]]] = {}

    def points(report: dict[str, Any], metric: str) -> dict[str, tuple[float, Any]]:
        if id(report) not in found:
            found[id(report)] = report_trajectory_values(report.get("details", []))
        shown = {}
        for arm, (source, values) in found[id(report)].items():
            if any(metric in row for row in values.values()):
                _, bounds = final_any_gold_figures(values)
                shown[f"{arm} [{source}]"] = (metric_mean(values, metric), list(bounds) if metric == FINAL_ANY_GOLD and bounds else None)
        return shown

    return points


def trajectory_history_rows(loaded: Loaded, metric: str = DEFAULT_METRIC) -> tuple[list[str], list[list[str]]]:
    """(headers, rows): a row per saved run with trajectory values and per arm; no rows without agents."""
    series = series_labels(loaded)
    previous: dict[tuple[str, str], Values] = {}
    rows: list[list[str]] = []
    for run, report in loaded:
        label = series[run.counter]
        for arm, (source, values) in report_trajectory_values(report.get("details", [])).items():
            hits, bounds = final_any_gold_figures(values)
            change, bootstrap, verdict = "-", "-", "new" if (label, arm) not in previous else "-"
            before = previous.get((label, arm))
            if before is not None:
                _, diffs = paired_values(values, before, metric)
                if diffs:
                    paired = stats.bootstrap_interval(diffs, run_pair_seed("all", arm, metric))
                    change, bootstrap, verdict = signed(stats.mean(diffs)), interval(paired, sign=True), verdict_of(paired, len(diffs))
            rows.append([f"{run.counter:04d}", label, arm, source, str(len(values)), number(hits / len(values) if values else None),
                         interval(bounds), number(metric_mean(values, metric)), change, bootstrap, verdict])
            previous[(label, arm)] = values
    return [header.replace("{metric}", metric) for header in HEADERS], rows
