"""`retrieval-bench history`: the saved runs, oldest first, with per arm a metric and its interval
and the paired change against the previous saved run that holds the same arm over the same samples
and limit (a run over other samples or another limit starts a new series, and says so)."""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.history.store import Loaded, series_labels
from pytest_retrieval_bench.history.trajectory_table import DEFAULT_METRIC, trajectory_history_rows
from pytest_retrieval_bench.report.build import paired_differences, samples_digests
from pytest_retrieval_bench.report.diff import positive_rows
from pytest_retrieval_bench.report.gate import run_pair_seed
from pytest_retrieval_bench.report.trajectory_values import TRAJECTORY_WORDS, is_trajectory_metric
from pytest_retrieval_bench.report.tables import fixed_width, interval, number, signed
from pytest_retrieval_bench.scoring import stats
from pytest_retrieval_bench.scoring.metrics import cutoffs
from pytest_retrieval_bench.scoring.verdicts import verdict_of
from pytest_retrieval_bench.words import counted

HEADERS = ["run", "date", "commit", "name", "series", "samples", "arm", "{metric}", "interval", "{also}", "change in {metric}", "bootstrap 95%", "verdict"]
ALSO_SHOWN = ("recall@10", "mrr@k")
"""Shown beside the history's metric, unless it is that metric (a column is never printed twice)."""


def _also(metric: str | None) -> list[str]:
    return [name for name in ALSO_SHOWN if name != metric]


def default_metric(limit: int) -> str:
    ks = cutoffs(limit)
    return f"hit@{ks[-1]}" if ks else "mrr@k"


def history_rows(loaded: Loaded, metric: str | None = None) -> tuple[list[str], list[list[str]], list[str]]:
    """(headers, rows, notes): a row per saved run and arm; a note when the runs form several series."""
    series = series_labels(loaded)
    previous: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}  # (series, arm) -> the arm's rows in its last run
    rows: list[list[str]] = []
    chosen = metric
    for run, report in loaded:
        chosen = metric or default_metric(report.get("registration", {}).get("limit") or 20)
        label = series[run.counter]
        samples = "+".join(digest[:12] for digest in samples_digests(report)) or "-"  # the samples files' sha256, shortened
        summary = report.get("summary", {}).get("all", {})
        date = f"{run.date[:4]}-{run.date[4:6]}-{run.date[6:8]} {run.date[9:11]}:{run.date[11:13]}"
        for arm in sorted(summary):
            row = summary[arm]
            metrics = row.get("metrics", {})
            bounds = row.get("wilson95", {}).get(chosen)
            change, bootstrap, verdict = "-", "-", "new" if (label, arm) not in previous else "-"
            current = positive_rows(report, arm, "all")  # once per run and arm: the next run pairs with these
            before = previous.get((label, arm))
            if before is not None:
                _, diffs = paired_differences(current, before, chosen)
                if diffs:  # the bootstrap alone: a history needs no t-test
                    paired = stats.bootstrap_interval(diffs, run_pair_seed("all", arm, chosen))
                    change, bootstrap, verdict = signed(stats.mean(diffs)), interval(paired, sign=True), verdict_of(paired, len(diffs))
            rows.append([f"{run.counter:04d}", date, run.commit, run.name + (" (partial)" if run.partial else ""), label, samples, arm,
                         number(metrics.get(chosen)), interval(bounds), *(number(metrics.get(name)) for name in _also(chosen)),
                         change, bootstrap, verdict])
            previous[(label, arm)] = current
    notes = []
    if len(set(series.values())) > 1:
        notes.append(f"{len(set(series.values()))} series: runs over other samples or another limit are never paired with each other")
    headers = [header for header in HEADERS if header != "{also}"]
    at = HEADERS.index("{also}")
    headers[at:at] = _also(chosen)
    return [header.replace("{metric}", chosen or "metric") for header in headers], rows, notes


def history_lines(loaded: Loaded, unreadable: list[str], storage: str, metric: str | None = None) -> list[str]:
    if not loaded and not unreadable:
        return [f"retrieval-bench history: no saved run in {storage} (save one with --bench-save NAME or --bench-autosave)"]
    trajectory_metric = metric if metric is not None and is_trajectory_metric(metric) else None
    headers, rows, notes = history_rows(loaded, None if trajectory_metric else metric)
    lines = [f"retrieval-bench history: {counted(len(loaded) + len(unreadable), 'saved run')} in {storage}; change in {headers[7]}: "
             "the paired difference against the previous run of the same arm and series, over the positive samples both scored"]
    lines += fixed_width((headers, rows))
    trajectory_headers, trajectory_rows = trajectory_history_rows(loaded, trajectory_metric or DEFAULT_METRIC)
    if trajectory_rows:  # only when a saved run has agents
        lines += [f"trajectory ({TRAJECTORY_WORDS}); change in {trajectory_headers[7]}: "
                  "against the previous run of the same arm and series, over the samples with gold both scored",
                  *fixed_width((trajectory_headers, trajectory_rows))]
    return lines + unreadable + notes
