"""The pieces every section of the HTML page is made of: escaping, one number format for every
table, group and metric order, and what a report holds (its arms, limit, each record's outcome)."""

from __future__ import annotations

from html import escape
from typing import Any, Iterable, Sequence

from pytest_retrieval_bench.report import tables

GROUP_KINDS = ("all", "task:", "stratum:", "fold:", "repo:")


def esc(value: Any) -> str:
    return escape(str(value), quote=True)


def num(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def signed(value: Any) -> str:
    return "–" if value is None else f"{value:+.3f}"


def count_text(value: Any) -> str:
    return "–" if value is None else str(value)


def interval_text(bounds: Any, sign: bool = False) -> str:
    return "–" if not bounds else tables.interval(bounds, sign)


def p_text(value: Any) -> str:
    """As the terminal and Markdown write it (`<0.001`, never `0.000`), escaped."""
    return "–" if value is None else escape(tables.p_value(value))


def metric_order(name: str) -> tuple[str, int]:
    """`recall@5` before `recall@10`; `mrr@k` after the numbered cutoffs."""
    base, _, k = name.partition("@")
    return (base, int(k) if k.isdigit() else 10**6)


def group_order(name: str) -> tuple[int, str]:
    for rank, kind in enumerate(GROUP_KINDS):
        if name == kind or (kind.endswith(":") and name.startswith(kind)):
            return (rank, name)
    return (len(GROUP_KINDS), name)


def td_num(text: str) -> str:
    return f'<td class="num">{text}</td>'


def td_arm(name: str) -> str:
    return f'<td class="arm">{esc(name)}</td>'


def html_table(headers: Sequence[str], rows: Iterable[Sequence[str]], css: str = "") -> str:
    """Cells are HTML already (escaped by the caller); headers are plain text."""
    head = "".join(f"<th>{esc(header)}</th>" for header in headers)
    body = "".join("<tr>" + "".join(cell if cell.startswith("<td") else f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<div class="tw"><table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def select_box(element_id: str, label: str, options: Sequence[tuple[str, str]]) -> str:
    """A <select> over (value, text) pairs; values are indices or fixed words, never report text."""
    items = "".join(f'<option value="{esc(value)}">{esc(text)}</option>' for value, text in options)
    return f'<label class="js-only" hidden>{esc(label)} <select id="{element_id}">{items}</select></label>'


def report_arms(report: dict[str, Any]) -> list[str]:
    """Every arm the report mentions anywhere, sorted like the report's own sections."""
    names = set(report.get("registration", {}).get("arms") or [])
    names.update(report.get("latency", {}))
    for group in report.get("summary", {}).values():
        names.update(group)
    for entry in report.get("details", []):
        names.update(entry.get("arms", {}))
    return sorted(names)


def report_limit(report: dict[str, Any]) -> int:
    limit = report.get("registration", {}).get("limit")
    if isinstance(limit, int):
        return limit
    ranks = [len(r.get("ranking") or []) for e in report.get("details", []) for r in e.get("arms", {}).values()]
    return max(ranks, default=20) or 20


def outcome_of(entry: dict[str, Any], record: dict[str, Any] | None) -> str:
    """One word per sample and arm, the vocabulary the sample filter uses."""
    if record is None:
        return "not run"
    if record.get("error"):
        return "error"
    if entry.get("stratum") == "positive":
        return "hit" if record.get("rank_of_first_gold") is not None else "miss"
    return "abstained" if record.get("abstained") else "answered"
