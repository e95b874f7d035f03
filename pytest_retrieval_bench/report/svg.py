"""Small inline SVG plots for the HTML report: intervals, forest plots, histograms, latency ranges.

Plain strings, no plotting library: the page must open offline and render the same bytes for the
same report, so every coordinate is formatted with a fixed precision and nothing reads the clock.
Every label is escaped here; callers pass raw text. Styling lives in the page's CSS (classes only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Callable, Sequence

ROW_HEIGHT = 22
PANEL_TOP = 26
AXIS_HEIGHT = 24
CHAR_WIDTH = 6.6


@dataclass(frozen=True)
class Interval:
    """One point with its interval; `value` None draws a dash (no positives, no test)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    css: str = ""
    tooltip: str = ""


@dataclass(frozen=True)
class Panel:
    """One column of a small-multiples plot: a title and one Interval per row label."""

    title: str
    rows: Sequence[Interval]


def coordinate(value: float) -> str:
    """Coordinates with one decimal, so the bytes never depend on float noise."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _tick_text(value: float) -> str:
    text = f"{round(value, 6):g}"
    return "0" if text == "-0" else text


def nice_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """Round tick values (1, 2, 5 x 10^n steps) covering [low, high]."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 9))
        value += step
    return ticks


def padded_domain(values: Sequence[float], *, include: float | None = 0.0, minimum_span: float = 0.1) -> tuple[float, float]:
    """A domain covering every value (and `include`), widened a little so points are not on the frame."""
    points = [v for v in values if v is not None] + ([include] if include is not None else [])
    if not points:
        return (0.0, 1.0)
    low, high = min(points), max(points)
    span = max(high - low, minimum_span)
    middle = (low + high) / 2
    low, high = min(low, middle - span / 2), max(high, middle + span / 2)
    pad = span * 0.06
    return (low - pad, high + pad)


def _label_width(labels: Sequence[str]) -> float:
    return min(260.0, 12 + CHAR_WIDTH * max((len(label) for label in labels), default=4))


def _svg_open(width: float, height: float, caption: str) -> str:
    return (f'<svg class="plot" width="{coordinate(width)}" height="{coordinate(height)}" '
            f'viewBox="0 0 {coordinate(width)} {coordinate(height)}" role="img" aria-label="{escape(caption)}"><title>{escape(caption)}</title>')


def _x_axis(x0: float, width: float, y: float, domain: tuple[float, float], top: float) -> list[str]:
    """Tick marks, labels and faint grid lines for one panel."""
    low, high = domain
    parts = [f'<line class="ax" x1="{coordinate(x0)}" y1="{coordinate(y)}" x2="{coordinate(x0 + width)}" y2="{coordinate(y)}"/>']
    for tick in nice_ticks(low, high):
        x = x0 + (tick - low) / (high - low) * width
        parts.append(f'<line class="grid" x1="{coordinate(x)}" y1="{coordinate(top)}" x2="{coordinate(x)}" y2="{coordinate(y)}"/>')
        parts.append(f'<text class="tick" x="{coordinate(x)}" y="{coordinate(y + 14)}" text-anchor="middle">{_tick_text(tick)}</text>')
    return parts


def _interval_marks(item: Interval, x_of: Callable[[float], float], y: float, x_mid: float) -> str:
    """Error bar with caps and the point; a dash when there is no value."""
    if item.value is None:
        return f'<text class="none" x="{coordinate(x_mid)}" y="{coordinate(y + 4)}" text-anchor="middle">–</text>'
    parts = [f'<g class="mark {escape(item.css)}">']
    if item.tooltip:
        parts.append(f"<title>{escape(item.tooltip)}</title>")
    if item.low is not None and item.high is not None:
        x1, x2 = x_of(item.low), x_of(item.high)
        parts.append(f'<line class="bar" x1="{coordinate(x1)}" y1="{coordinate(y)}" x2="{coordinate(x2)}" y2="{coordinate(y)}"/>')
        for x in (x1, x2):
            parts.append(f'<line class="cap" x1="{coordinate(x)}" y1="{coordinate(y - 4)}" x2="{coordinate(x)}" y2="{coordinate(y + 4)}"/>')
    parts.append(f'<circle class="pt" cx="{coordinate(x_of(item.value))}" cy="{coordinate(y)}" r="3.6"/></g>')
    return "".join(parts)


def interval_panels(labels: Sequence[str], panels: Sequence[Panel], *, domain: tuple[float, float] = (0.0, 1.0),
                    zero: float | None = None, panel_width: float = 170.0, caption: str = "") -> str:
    """Small multiples of points with error bars: rows are labels (arms, comparisons), one plot per panel.

    Each panel is a plot of its own, with the row labels, in a wrapping row: side by side on a
    wide screen, one under another on a phone (one plot holding every panel was wider than the
    screen). All panels share the domain so their bars can be compared by eye; `zero` draws the
    reference line of a forest plot.
    """
    plots = "".join(_interval_panel(labels, panel, domain, zero, panel_width, f"{caption}: {panel.title}" if caption else panel.title)
                    for panel in panels)
    return f'<div class="multiples">{plots}</div>'


def _interval_panel(labels: Sequence[str], panel: Panel, domain: tuple[float, float], zero: float | None, panel_width: float,
                    caption: str) -> str:
    label_width = _label_width(labels)
    width = label_width + panel_width + 10
    axis_y = PANEL_TOP + ROW_HEIGHT * len(labels) + 4
    height = axis_y + AXIS_HEIGHT
    low, high = domain

    def x_of(value: float) -> float:
        return label_width + (min(max(value, low), high) - low) / (high - low) * panel_width

    parts = [_svg_open(width, height, caption)]
    for row, label in enumerate(labels):
        y = PANEL_TOP + ROW_HEIGHT * row + ROW_HEIGHT / 2
        if row % 2:
            parts.append(f'<rect class="stripe" x="0" y="{coordinate(y - ROW_HEIGHT / 2)}" width="{coordinate(width)}" height="{ROW_HEIGHT}"/>')
        parts.append(f'<text class="label" x="{coordinate(label_width - 8)}" y="{coordinate(y + 4)}" text-anchor="end">{escape(_clip(label))}</text>')
    parts.append(f'<text class="ptitle" x="{coordinate(label_width + panel_width / 2)}" y="16" text-anchor="middle">{escape(panel.title)}</text>')
    parts.extend(_x_axis(label_width, panel_width, axis_y, domain, PANEL_TOP))
    if zero is not None and low <= zero <= high:
        parts.append(f'<line class="zero" x1="{coordinate(x_of(zero))}" y1="{coordinate(PANEL_TOP - 4)}" x2="{coordinate(x_of(zero))}" y2="{coordinate(axis_y)}"/>')
    for row, item in enumerate(panel.rows):
        y = PANEL_TOP + ROW_HEIGHT * row + ROW_HEIGHT / 2
        parts.append(_interval_marks(item, x_of, y, label_width + panel_width / 2))
    parts.append("</svg>")
    return "".join(parts)


def _clip(label: str, limit: int = 38) -> str:
    """Long labels are shortened in the plot only; the table beside it shows them whole."""
    return label if len(label) <= limit else label[: limit - 1] + "…"


def histogram(bins: Sequence[tuple[str, int]], *, y_max: int, caption: str, title: str = "",
              highlight: Sequence[str] = (), bar_width: float = 13.0, shown_labels: Sequence[str] | None = None) -> str:
    """Vertical bars with their counts; `y_max` is shared across arms so heights compare."""
    left, top, plot_height = 8.0, 22.0, 90.0
    gap = bar_width  # highlighted bins (misses) stand apart from the ranks
    width = left * 2 + bar_width * len(bins) + gap * sum(1 for label, _ in bins if label in highlight)
    height = top + plot_height + 30
    base = top + plot_height
    parts = [_svg_open(width, height, caption)]
    if title:
        parts.append(f'<text class="ptitle" x="{coordinate(width / 2)}" y="13" text-anchor="middle">{escape(_clip(title, 44))}</text>')
    parts.append(f'<line class="ax" x1="{coordinate(left)}" y1="{coordinate(base)}" x2="{coordinate(width - left)}" y2="{coordinate(base)}"/>')
    x = left
    for label, count in bins:
        if label in highlight:
            x += gap
        bar = 0.0 if y_max <= 0 else plot_height * count / y_max
        css = "hbar miss" if label in highlight else "hbar"
        parts.append(f'<rect class="{css}" x="{coordinate(x + 1)}" y="{coordinate(base - bar)}" width="{coordinate(bar_width - 2)}" height="{coordinate(bar)}">'
                     f"<title>{escape(label)}: {count}</title></rect>")
        if count:
            parts.append(f'<text class="count" x="{coordinate(x + bar_width / 2)}" y="{coordinate(base - bar - 3)}" text-anchor="middle">{count}</text>')
        if shown_labels is None or label in shown_labels:
            parts.append(f'<text class="tick" x="{coordinate(x + bar_width / 2)}" y="{coordinate(base + 13)}" text-anchor="middle">{escape(label)}</text>')
        x += bar_width
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class LatencyRow:
    """One arm and cache state: nearest-rank p50, p95 and max, or None for NOT_RUN."""

    label: str
    p50: float | None = None
    p95: float | None = None
    maximum: float | None = None
    note: str = ""


def latency_ranges(rows: Sequence[LatencyRow], *, caption: str, plot_width: float = 280.0) -> str:
    """p50 (dot) to p95 (bar end), max (cross) on one millisecond axis; NOT_RUN rows say so."""
    labels = [row.label for row in rows]
    label_width = _label_width(labels)
    width = label_width + plot_width + 20
    axis_y = 10 + ROW_HEIGHT * len(rows) + 4
    height = axis_y + AXIS_HEIGHT + 12
    top_value = max((row.maximum for row in rows if row.maximum is not None), default=1.0) or 1.0
    domain = (0.0, top_value * 1.05)

    def x_of(value: float) -> float:
        return label_width + value / domain[1] * plot_width

    parts = [_svg_open(width, height, caption)]
    for index, row in enumerate(rows):
        y = 10 + ROW_HEIGHT * index + ROW_HEIGHT / 2
        parts.append(f'<text class="label" x="{coordinate(label_width - 8)}" y="{coordinate(y + 4)}" text-anchor="end">{escape(_clip(row.label))}</text>')
        if row.p50 is None or row.p95 is None or row.maximum is None:
            parts.append(f'<text class="notrun" x="{coordinate(label_width + 4)}" y="{coordinate(y + 4)}">{escape(row.note or "NOT_RUN")}</text>')
            continue
        tip = f"{row.label}: p50 {row.p50:.3f} ms, p95 {row.p95:.3f} ms, max {row.maximum:.3f} ms"
        xm = x_of(row.maximum)
        parts.append(f'<g class="mark"><title>{escape(tip)}</title>'
                     f'<line class="lat" x1="{coordinate(x_of(row.p50))}" y1="{coordinate(y)}" x2="{coordinate(x_of(row.p95))}" y2="{coordinate(y)}"/>'
                     f'<circle class="pt" cx="{coordinate(x_of(row.p50))}" cy="{coordinate(y)}" r="3.6"/>'
                     f'<path class="max" d="M{coordinate(xm - 3)} {coordinate(y - 3)}L{coordinate(xm + 3)} {coordinate(y + 3)}M{coordinate(xm - 3)} {coordinate(y + 3)}L{coordinate(xm + 3)} {coordinate(y - 3)}"/></g>')
    parts.extend(_x_axis(label_width, plot_width, axis_y, domain, 6))
    parts.append(f'<text class="tick" x="{coordinate(label_width + plot_width)}" y="{coordinate(axis_y + 30)}" text-anchor="end">ms (dot p50, bar to p95, cross max)</text>')
    parts.append("</svg>")
    return "".join(parts)
