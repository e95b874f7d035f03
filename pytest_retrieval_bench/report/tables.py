"""The report's tables as rows of text cells, shared by the terminal and the Markdown summary.

Both show the same numbers in the same words; only the rendering differs (fixed-width columns
sized to their content, or pipe tables with escaped cells).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from pytest_retrieval_bench.scoring.metrics import cutoffs
from pytest_retrieval_bench.scoring.verdicts import MIN_PAIRED

Table = tuple[list[str], list[list[str]]]
PAIRED_HEADERS = ["comparison", "metric", "n", "mean", "bootstrap 95%", "verdict", "p", "p (Holm)", "MDE"]
#: the columns that name an arm (the page links each to the arm's section)
ARM_HEADERS = frozenset({"Run", "Method", "Agent", "Against"})
#: the columns of text, left-aligned on the terminal and unformatted on the page; numbers go right
LEFT_ALIGNED = ARM_HEADERS | {"arm", "comparison", "metric", "verdict", "95% Wilson", "bootstrap 95%", "Task", "Metric", "Granularity",
                              "Bootstrap 95%", "Verdict", "W/L/T", "source"}


#: control characters (C0 with tab and newline, DEL, C1) and the bidirectional overrides: printed raw,
#: an arm or sample name holding one could move the cursor, recolour or rewrite the terminal
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with every control character written as its escape (`\\x1b`, `\\u202e`): for
    terminal output only (JSON keeps the names as they are)."""
    return _UNPRINTABLE.sub(lambda match: repr(match[0])[1:-1] if ord(match[0]) < 0x100 else f"\\u{ord(match[0]):04x}", text)


def number(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"


def signed(value: Any) -> str:
    return "-" if value is None else f"{value:+.3f}"


def interval(bounds: Any, sign: bool = False) -> str:
    if not bounds:
        return "-"
    low, high = bounds
    return f"[{low:+.3f}, {high:+.3f}]" if sign else f"[{low:.3f}, {high:.3f}]"


def p_value(value: Any) -> str:
    """Three decimals; below 0.001 written `<0.001`, never a misleading `0.000`."""
    if value is None:
        return "-"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def headline_cutoffs(limit: int) -> tuple[int | None, int | None]:
    """The cut-offs the arm table shows at this limit: hit at the largest one the report has (hit@20
    at the default limit, as the items' `HIT@20` say), recall at 10 where the limit reaches it (the
    bench's headline), else at the largest; (None, None) below 5, where the report has neither."""
    ks = cutoffs(limit)
    if not ks:
        return None, None
    return ks[-1], (10 if 10 in ks else ks[-1])


def arm_table(group: dict[str, Any], limit: int) -> Table:
    """One row per arm of one summary group; no column the report has no number for."""
    hit, recall = headline_cutoffs(limit)
    headers = ["arm", "n", "pos"]
    if hit is not None:
        headers += [f"hit@{hit}", "95% Wilson", f"recall@{recall}"]
    whole = any("mrr" in row["metrics"] for row in group.values())  # the bench's MRR, uncut (an earlier report has none)
    headers += [*(["mrr"] if whole else []), "mrr@k", "selective", "errors", "abstain"]
    rows = []
    for arm, row in group.items():
        metrics = row["metrics"]
        cells = [arm, str(row["n"]), str(row["positives"])]
        if hit is not None:
            cells += [number(metrics.get(f"hit@{hit}")), interval(row["wilson95"].get(f"hit@{hit}")), number(metrics.get(f"recall@{recall}"))]
        cells += [*([number(metrics.get("mrr"))] if whole else []), number(metrics.get("mrr@k")), number(row["selective_success"]),
                  str(row["errors"]), str(row["abstentions"])]
        rows.append(cells)
    return headers, rows


def paired_table(group: dict[str, Any]) -> Table:
    """One row per comparison and metric of one paired group, with the verdict the report states."""
    rows = []
    for comparison, metrics in group.items():
        for metric, result in metrics.items():
            rows.append([comparison, metric, str(result["n"]), signed(result["mean_difference"]), interval(result["bootstrap95"], sign=True),
                         result.get("verdict", "-"), p_value(result["t_test"]["p"]), p_value(result["t_test"].get("p_holm")),
                         number(result["minimum_detectable_effect"])])
    return PAIRED_HEADERS, rows


PAIRED_NOTE = (f"the bootstrap 95% interval of the difference decides (lower bound > 0: better, upper bound < 0: worse); "
               f"no verdict below {MIN_PAIRED} paired samples; p (Holm) adjusts each t-test p for the {{count}} comparisons shown")


def groups_to_show(summary: dict[str, Any], wanted: Sequence[str]) -> list[str]:
    """Groups named exactly (`all`, `task:code2test`) or by kind (`task`, `stratum`, `repo`, `fold`)."""
    shown: list[str] = []
    for entry in wanted:
        matches = [entry] if entry in summary else [group for group in summary if group.split(":", 1)[0] == entry and ":" in group]
        for group in matches:
            if group not in shown:
                shown.append(group)
    return shown


def fixed_width(table: Table) -> list[str]:
    """Columns as wide as their widest cell: a long arm name never shifts its row."""
    headers, rows = table
    rows = [[printable(cell) for cell in cells] for cells in rows]
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows)]
    lines = []
    for cells in [headers, *rows]:
        parts = [cell.ljust(width) if header in LEFT_ALIGNED else cell.rjust(width) for cell, width, header in zip(cells, widths, headers)]
        lines.append("  ".join(parts).rstrip())
    return lines
