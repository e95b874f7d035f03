"""The trajectory table of `retrieval-bench history`: per saved run with agents, per arm (an agent,
or a ranking arm's same-budget figures), final-any-gold with its Wilson interval, a trajectory
metric's mean, and its paired change against the previous saved run of the same arm and series,
over the samples with gold both scored (the generator seeded as the gate's: `run_pair_seed`).
Runs without agents have no rows; a history without any has no such table.
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.history.store import Loaded, series_labels
from pytest_retrieval_bench.report.gate import run_pair_seed
from pytest_retrieval_bench.report.tables import interval, number, signed
from pytest_retrieval_bench.report.trajectory_values import (FINAL_ANY_GOLD, Values, final_any_gold_count, metric_mean, paired_values,
                                                             report_trajectory_values)
from pytest_retrieval_bench.scoring import stats
from pytest_retrieval_bench.scoring.verdicts import verdict_of

DEFAULT_METRIC = "final_file_f1"
HEADERS = ["run", "series", "arm", "source", "n", "final-any-gold", "wilson 95%", "{metric}", "change in {metric}", "bootstrap 95%", "verdict"]


def _hits_and_bounds(values: Values) -> tuple[int, tuple[float, float]]:
    """Final-any-gold's count and its Wilson interval."""
    hits = final_any_gold_count(values)
    return hits, stats.wilson_interval(hits, len(values))


def trajectory_points(report: dict[str, Any], metric: str) -> dict[str, tuple[float, Any]]:
    """Per arm (named with its source): the metric's mean, and final-any-gold's Wilson interval
    when that is the metric; nothing for a report without agents."""
    points = {}
    for arm, (source, values) in report_trajectory_values(report.get("details", [])).items():
        mean = metric_mean(values, metric)
        if values and mean is not None:
            points[f"{arm} [{source}]"] = (mean, list(_hits_and_bounds(values)[1]) if metric == FINAL_ANY_GOLD else None)
    return points


def trajectory_history_rows(loaded: Loaded, metric: str = DEFAULT_METRIC) -> tuple[list[str], list[list[str]]]:
    """(headers, rows): a row per saved run with trajectory values and per arm; no rows without agents."""
    series = series_labels(loaded)
    previous: dict[tuple[str, str], Values] = {}
    rows: list[list[str]] = []
    for run, report in loaded:
        label = series[run.counter]
        for arm, (source, values) in report_trajectory_values(report.get("details", [])).items():
            hits, bounds = _hits_and_bounds(values)
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
