"""The report's summary laid out like the Agent Retrieval Bench leaderboard, so a run can be
compared with the published ARB tables line by line.

Same groups in the same order (`overall`, then the bench's tasks, then any other task
alphabetically), the bench's columns (R@5, R@10, R@20, P@20, F1@20, MRR, Gold@8k, and BCY@8k),
same row order (MRR descending, then R@20 descending, then name) and the bench's four decimals.
MRR is the bench's, over the arm's whole ranking (`mrr`), and `MRR+given` the value the bench
publishes, with given files kept (`mrr_given_kept`); `MRR@k`, cut at the run's limit, is a
column only when asked for (`mrr_at_k`), or in place of MRR for a report written before `mrr` was
recorded (a note says so). A value is followed by its 95% interval, written `0.4728 [0.410,
0.530]`, only where the report has one for that metric (today: none of these columns; `wilson95`
covers `hit@k` only).
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report.markdown import escape, pipe_table
from pytest_retrieval_bench.report.tables import fixed_width, interval, printable

#: the bench's task order (`model_report.TASK_ORDER`); other tasks follow alphabetically
TASK_ORDER = ("overall", "code2test", "comment2context", "trace2code", "testlog2code")
#: (header, summary metric key) in the bench's order; `MRR@{k}` is given its k by `_columns`
MRR, MRR_AT_K = ("MRR", "mrr"), ("MRR@{k}", "mrr@k")
#: the bench's MRR as it publishes it, given files kept (a column only where the report records it)
MRR_GIVEN_KEPT = ("MRR+given", "mrr_given_kept")
METRICS = (("R@5", "recall@5"), ("R@10", "recall@10"), ("R@20", "recall@20"), ("P@20", "precision@20"), ("F1@20", "f1@20"), MRR,
           ("Gold@8k", "gold_coverage@8k"), ("BCY@8k", "bcy@8000"))

Leaderboard = tuple[str, list[str], list[list[str]]]


def _limit(report: dict[str, Any]) -> int:
    return int(report.get("registration", {}).get("limit") or 20)


def summarizes(report: dict[str, Any], metric: str) -> bool:
    """Whether any summary row has `metric` (a report of an earlier version may lack `mrr` or `mrr_given_kept`)."""
    return any(metric in (entry.get("metrics") or {}) for arms in (report.get("summary") or {}).values() for entry in arms.values())


def has_whole_mrr(report: dict[str, Any]) -> bool:
    """Whether the report records the bench's MRR (a report of an earlier version has mrr@k only)."""
    return summarizes(report, MRR[1])


def _columns(report: dict[str, Any], mrr_at_k: bool) -> list[tuple[str, str]]:
    """The bench's columns; MRR+given after MRR where recorded; MRR@k after them when asked for, and
    in MRR's place in an earlier version's report."""
    whole = has_whole_mrr(report)
    kept = [MRR_GIVEN_KEPT] if summarizes(report, MRR_GIVEN_KEPT[1]) else []
    columns: list[tuple[str, str]] = []
    for column in METRICS:
        if column != MRR:
            columns.append(column)
            continue
        columns += ([MRR, *kept] if whole else []) + ([MRR_AT_K] if mrr_at_k or not whole else [])
    return [(header.format(k=_limit(report)), key) for header, key in columns]


def task_sort_key(task: str) -> tuple[int, str]:
    """The bench's order: known tasks by position, then the rest by name."""
    return (TASK_ORDER.index(task), task) if task in TASK_ORDER else (len(TASK_ORDER), task)


def row_sort_key(arm: str, entry: dict[str, Any], mrr_key: str = "mrr") -> tuple[Any, ...]:
    """MRR descending, then R@20 descending, then arm name; a missing value ranks below any value
    (the bench reads it as 0.0, which would tie it with a real zero). `mrr_key` is `mrr@k` for a
    report without the bench's MRR."""
    metrics = entry.get("metrics") or {}

    def descending(key: str) -> tuple[bool, float]:
        value = metrics.get(key)
        return (value is None, -float(value) if value is not None else 0.0)

    return (*descending(mrr_key), *descending("recall@20"), arm)


def cell(entry: dict[str, Any], key: str) -> str:
    """Four decimals, as the bench prints them; the 95% interval after it when the report has one;
    `-` when the report has no such metric (e.g. recall@20 under a limit below 20)."""
    value = (entry.get("metrics") or {}).get(key)
    if value is None:
        return "-"
    bounds = (entry.get("wilson95") or {}).get(key)
    return f"{float(value):.4f} {interval(bounds)}" if bounds else f"{float(value):.4f}"


def _groups(summary: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(title, arms) per group with any positive item: `all` as `overall`, then `task:` groups."""
    groups = [("overall", summary["all"])] if "all" in summary else []
    tasks = [(group.split(":", 1)[1], arms) for group, arms in summary.items() if group.startswith("task:")]
    groups += sorted(tasks, key=lambda item: task_sort_key(item[0]))
    return [(title, arms) for title, arms in groups if any(entry.get("positives") for entry in arms.values())]


def leaderboard_tables(report: dict[str, Any], mrr_at_k: bool = False) -> list[Leaderboard]:
    """One (title, headers, rows) per group, rows = arms in the bench's order, cells as text."""
    columns = _columns(report, mrr_at_k)
    mrr_key = "mrr" if has_whole_mrr(report) else "mrr@k"
    headers = ["arm", "samples", *(header for header, _ in columns)]
    tables = []
    for title, arms in _groups(report.get("summary") or {}):
        ordered = sorted(arms.items(), key=lambda item: row_sort_key(*item, mrr_key=mrr_key))
        rows = [[arm, str(entry.get("positives", 0)), *(cell(entry, key) for _, key in columns)] for arm, entry in ordered]
        tables.append((title, headers, rows))
    return tables


def notes(report: dict[str, Any], mrr_at_k: bool = False) -> list[str]:
    """What the columns are, and what differs from the bench's own table, said next to the numbers."""
    limit = _limit(report)
    cut = (f"MRR@{limit} is MRR cut at the run's limit k={limit} (0 when no gold file is in the top {limit}); the bench's MRR is over the "
           f"whole ranking, so the two differ when the first gold file ranks below {limit}")
    if not has_whole_mrr(report):
        mrr = [f"{cut}; this report was written before the bench's MRR was recorded, so MRR@{limit} stands in its place"]
    else:
        mrr = ["MRR is the bench's: 1 / rank of the first gold file in the arm's whole ranking (given files removed), 0 when it has none",
               *(["MRR+given is the MRR the bench publishes: the same rank with given files kept where the arm ranked them, as the "
                  "bench's rankings keep them; it differs from MRR only on samples with given files (every comment2context row)"]
                 if summarizes(report, MRR_GIVEN_KEPT[1]) else []),
               *([cut] if mrr_at_k else [])]
    return [*mrr,
            "P@20 = gold files in the top 20 / min(20, ranked files); F1@20 of P@20 and R@20; Gold@8k = the bench's gold_coverage@8k "
            "(gold files among the ranked files whose texts fit 8,000 characters, the first always); BCY@8k = the bench's "
            "Budgeted Context Yield at 8,000 tokens",
            "samples = the arm's positive items in the group; values are means over them, 4 decimals; [low, high] = a 95% interval "
            "where the report has one for that metric; - = metric not in the report; groups without positive items are left out"]


def leaderboard_text(report: dict[str, Any], mrr_at_k: bool = False) -> str:
    """Fixed-width tables for the terminal."""
    lines = ["retrieval-bench leaderboard (Agent Retrieval Bench layout)", *(f"  {note}" for note in notes(report, mrr_at_k))]
    for title, headers, rows in leaderboard_tables(report, mrr_at_k):
        lines += ["", title, *fixed_width((headers, rows))]
    return "\n".join(printable(line) for line in lines) + "\n"


def leaderboard_markdown(report: dict[str, Any], mrr_at_k: bool = False) -> str:
    """Pipe tables under `## overall`, `## code2test`, ... headings, as the bench's document."""
    lines = ["# Leaderboard", "", *(f"- {escape(note)}" for note in notes(report, mrr_at_k))]
    for title, headers, rows in leaderboard_tables(report, mrr_at_k):
        table = pipe_table((headers, rows))
        table[1] = "|" + "|".join("---" if header == "arm" else "---:" for header in headers) + "|"  # numbers right-aligned
        lines += ["", f"## {escape(title)}", "", *table]
    return "\n".join(lines) + "\n"
