"""The report's `trajectory` section as the bench's V1.4 trajectory results lay it out
(`docs/v1_4_trajectory_results.md` of the Agent Retrieval Bench), for the leaderboard and the page.

The bench's three tables, its columns and decimals: the trajectory track (per task, then agent: final
file recall, precision and F1, line F1, redundancy, mean reads and final files), and the same-budget
final-context contrast (each ranking arm's top `final_k` files scored as a trajectory, beside each
agent: mean final files, final file F1 overall and per task, line F1 overall), and the budget curve
(its `report_closed_tool_budget_curve` overall table, per agent); then the section's paired
differences between agents and against the rankers' same-budget figures. `-` where the
section has no such figure (line F1 needs gold spans).
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report.contextbench_tables import contextbench_notes, contextbench_tables
from pytest_retrieval_bench.report.leaderboard import task_sort_key
from pytest_retrieval_bench.report.markdown import escape, pipe_table
from pytest_retrieval_bench.report.tables import fixed_width, interval, p_value, printable

Titled = tuple[str, list[str], list[list[str]]]
TRACK_HEADERS = ["Task", "Run", "Samples", "File R", "File P", "File F1", "Line F1", "Redundancy", "Avg reads", "Avg final"]
TRACK_METRICS = ("final_file_recall", "final_file_precision", "final_file_f1", "line_f1@trajectory", "trajectory_redundancy")


def _decimals(value: Any, places: int) -> str:
    return "-" if value is None else f"{float(value):.{places}f}"


def agents_and_rankers(section: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(agent arms, ranking arms with a same-budget contrast), each sorted by name."""
    agents = sorted(arm for arm, block in section.items() if "metrics" in block)
    rankers = sorted(arm for arm, block in section.items() if "same_budget" in block)
    return agents, rankers


def track_table(section: dict[str, Any]) -> Titled:
    agents, _ = agents_and_rankers(section)
    tasks = sorted({task for arm in agents for task in section[arm]["metrics"]}, key=task_sort_key)
    rows = []
    for task in tasks:
        for arm in agents:
            block = section[arm]
            metrics = block["metrics"].get(task)
            if not metrics:
                continue
            tool = (block.get("closed_tool_metrics") or {}).get(task) or {}
            rows.append([task, arm, str(metrics.get("samples", 0)), *(_decimals(metrics.get(name), 4) for name in TRACK_METRICS),
                         _decimals(tool.get("mean_read_calls"), 3), _decimals((block.get("average_final_files") or {}).get(task), 3)])
    return "Trajectory track", TRACK_HEADERS, rows


def contrast_table(section: dict[str, Any]) -> Titled:
    agents, rankers = agents_and_rankers(section)
    figures: list[tuple[str, float | None, dict[str, Any]]] = []
    for arm in rankers:
        for budget in sorted(section[arm]["same_budget"].values(), key=lambda block: block["top_k"]):
            figures.append((f"{arm}@{budget['top_k']} final context", budget["context"]["average_final_files"], budget["metrics"]))
    for arm in agents:
        figures.append((arm, (section[arm].get("average_final_files") or {}).get("overall"), section[arm]["metrics"]))
    tasks = sorted({task for _, _, metrics in figures for task in metrics if task != "overall"}, key=task_sort_key)
    headers = ["Method", "Avg final files", "Overall F1", *(f"{task} F1" for task in tasks), "Overall line F1"]
    rows = [[method, _decimals(final, 2), _decimals((metrics.get("overall") or {}).get("final_file_f1"), 4),
             *(_decimals((metrics.get(task) or {}).get("final_file_f1"), 4) for task in tasks),
             _decimals((metrics.get("overall") or {}).get("line_f1@trajectory"), 4)] for method, final, metrics in figures]
    return "Same-budget final-context contrast", headers, rows


CURVE_HEADERS = ["Run", "Tool budget", "n", "Prefix File F1", "Prefix Recall", "Prefix Precision", "Any-gold read", "Tool calls",
                 "Grep calls", "Read calls", "Read tokens"]


def curve_table(section: dict[str, Any]) -> Titled:
    """The bench's budget curve (overall), per agent: the files read within the first B calls."""
    rows = []
    for arm in agents_and_rankers(section)[0]:
        for point in section[arm].get("budget_curve") or []:
            metrics, cost = point["metrics"].get("overall") or {}, point["closed_tool_metrics"].get("overall") or {}
            rows.append([arm, str(point["budget"]), str(metrics.get("samples", 0)),
                         *(_decimals(metrics.get(name, 0.0), 4) for name in ("final_file_f1", "final_file_recall", "final_file_precision")),
                         _decimals(cost.get("any_gold_rate", 0.0), 4),
                         *(_decimals(cost.get(name, 0.0), 2) for name in ("mean_tool_calls", "mean_grep_calls", "mean_read_calls")),
                         _decimals(cost.get("mean_read_tokens", 0.0), 1)])
    return "Budget curve (overall)", CURVE_HEADERS, rows


PAIRED_HEADERS = ["Agent", "Against", "Metric", "n", "Mean diff", "Bootstrap 95%", "Verdict", "W/L/T", "p (Holm)"]


def paired_table(section: dict[str, Any]) -> Titled:
    """Each agent minus each other agent and each ranker's same-budget figures (the section's `paired`)."""
    rows = []
    for arm in agents_and_rankers(section)[0]:
        for other, metrics in sorted((section[arm].get("paired") or {}).items()):
            for metric, figures in metrics.items():
                rows.append([arm, other, metric, str(figures["n"]), f"{figures['mean_difference']:+.4f}",
                             interval(figures.get("bootstrap95"), sign=True), str(figures["verdict"]),
                             f"{figures.get('wins', 0)}/{figures.get('losses', 0)}/{figures.get('ties', 0)}",
                             p_value((figures.get("t_test") or {}).get("p_holm"))])
    return "Paired differences (agent minus the other, per sample with gold both scored)", PAIRED_HEADERS, rows


def trajectory_tables(report: dict[str, Any]) -> list[Titled]:
    """The tables (ContextBench's two last, when agents ran on its rows), or none for a report without a trajectory section."""
    section = report.get("trajectory") or {}
    if not section:
        return []
    tables = [track_table(section)]
    if agents_and_rankers(section)[1]:
        tables.append(contrast_table(section))
    curve = curve_table(section)
    if curve[2]:
        tables.append(curve)
    paired = paired_table(section)
    if paired[2]:
        tables.append(paired)
    return tables + contextbench_tables(section)


def notes_of(report: dict[str, Any]) -> list[str]:
    """The tables' notes: the bench's, then ContextBench's when its tables are there."""
    return NOTES + contextbench_notes(report.get("trajectory") or {})


NOTES = ["File R/P/F1 are the final context's file recall, precision and F1 (the bench's `final_file_*`), macro means per task; "
         "Line F1 = line_f1@trajectory (- without gold spans); Avg reads = read calls, Avg final = final files, per sample",
         "same-budget contrast: a ranking arm's first final_k files (given files kept where it ranked them, as the bench's rankers "
         "keep them) scored as a trajectory, on the samples the agents were scored on (the bench's evaluate_ranked_context_as_trajectory)",
         "budget curve: each trajectory cut after its first B tool calls, the files read by then scored as final context (a post-hoc "
         "prefix, not a rerun under a smaller budget; the bench's report_closed_tool_budget_curve)"]


def trajectory_text(report: dict[str, Any]) -> str:
    """Fixed-width tables for the terminal, after the leaderboard's ("" without the section)."""
    tables = trajectory_tables(report)
    if not tables:
        return ""
    lines = ["", "trajectory (Agent Retrieval Bench V1.4 layout)", *(f"  {note}" for note in notes_of(report))]
    for title, headers, rows in tables:
        lines += ["", title, *fixed_width((headers, rows))]
    return "\n".join(printable(line) for line in lines) + "\n"


def trajectory_markdown(report: dict[str, Any]) -> str:
    """Pipe tables under `## ...` headings, numbers right-aligned, as the bench's document."""
    tables = trajectory_tables(report)
    if not tables:
        return ""
    lines = ["", "# Trajectory", "", *(f"- {escape(note)}" for note in notes_of(report))]
    for title, headers, rows in tables:
        table = pipe_table((headers, rows))
        table[1] = "|" + "|".join("---" if header in ("Task", "Run", "Method", "Granularity", "Agent", "Against", "Metric",
                                                      "Bootstrap 95%", "Verdict", "W/L/T") else "---:" for header in headers) + "|"
        lines += ["", f"## {escape(title)}", "", *table]
    return "\n".join(lines) + "\n"
