"""The report's tables as rows of text cells, shared by the terminal and the Markdown summary.

Both show the same numbers in the same words; only the rendering differs (fixed-width columns
sized to their content, or pipe tables with escaped cells).
"""

from __future__ import annotations

from typing import Any, Sequence

from pytest_retrieval_bench.scoring.verdicts import MIN_PAIRED

Table = tuple[list[str], list[list[str]]]
ARM_HEADERS = ["arm", "n", "pos", "{hit}", "95% Wilson", "recall@10", "mrr@k", "selective", "errors", "abstain"]
PAIRED_HEADERS = ["comparison", "metric", "n", "mean", "bootstrap 95%", "verdict", "p", "p (Holm)", "MDE"]
LEFT_ALIGNED = {"arm", "comparison", "metric", "verdict", "95% Wilson", "bootstrap 95%"}


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


def hit_key(limit: int) -> str | None:
    return f"hit@{10 if limit >= 10 else 5}" if limit >= 5 else None


def arm_table(group: dict[str, Any], limit: int) -> Table:
    """One row per arm of one summary group."""
    hit = hit_key(limit)
    headers = [header.replace("{hit}", hit or "hit") for header in ARM_HEADERS]
    rows = []
    for arm, row in group.items():
        metrics = row["metrics"]
        rows.append([arm, str(row["n"]), str(row["positives"]), number(metrics.get(hit)) if hit else "-",
                     interval(row["wilson95"].get(hit)) if hit else "-", number(metrics.get("recall@10")), number(metrics.get("mrr@k")),
                     number(row["selective_success"]), str(row["errors"]), str(row["abstentions"])])
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
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows)]
    lines = []
    for cells in [headers, *rows]:
        parts = [cell.ljust(width) if header in LEFT_ALIGNED else cell.rjust(width) for cell, width, header in zip(cells, widths, headers)]
        lines.append("  ".join(parts).rstrip())
    return lines
