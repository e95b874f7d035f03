"""`retrieval-bench history --html PAGE`: the saved runs as one self-contained page.

A trend plot per metric (the history's metric, recall@10, mrr@k): one line per arm and series,
runs along the x axis labelled by counter and commit, a band for the metric's interval where the
report has one (hit@k's Wilson interval). When a saved run has agents, two more: final-any-gold
(with its Wilson band) and a trajectory metric (final_file_f1, or the one asked for), for each
agent and each ranking arm's same-budget figures, as the terminal's trajectory table has them.
A table below links to each run's own report page, written beside the history page
(`STEM_runs/NNNN.html`: `history_runs/` for `history.html`), and flags the samples whose outcome
changed against the previous run of the same arm and series. The same rules as the report page:
no external load (a content security policy forbids any), every text escaped, no clock.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any, Callable

from pytest_retrieval_bench.history.store import Loaded, series_labels
from pytest_retrieval_bench.history.table import default_metric
from pytest_retrieval_bench.history.trajectory_table import DEFAULT_METRIC, trajectory_points_of
from pytest_retrieval_bench.report.build import write_atomically
from pytest_retrieval_bench.report.gate import compare
from pytest_retrieval_bench.report.html import CSP, render_html
from pytest_retrieval_bench.report.svg import coordinate
from pytest_retrieval_bench.report.trajectory_values import FINAL_ANY_GOLD, TRAJECTORY_WORDS, is_trajectory_metric
from pytest_retrieval_bench.words import counted

WIDTH, HEIGHT, LEFT, TOP, BOTTOM = 720.0, 240.0, 48.0, 16.0, 40.0
COLOURS = ("#1f5fa8", "#b2412c", "#2c8a4b", "#7a4fa3", "#b8860b", "#4a7f8c", "#a3476f", "#555555")
STYLE = """body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left}
.ax{stroke:#444}.grid{stroke:#e4e4e4}.tick{font-size:11px;fill:#555}.flag{color:#b2412c;font-weight:600}.legend span{margin-right:14px}
.band{opacity:.15}svg{display:block;margin:8px 0 18px;max-width:100%;height:auto}.tw{overflow-x:auto}.tw td,.tw th{white-space:nowrap;vertical-align:top}
@media (max-width:600px){body{margin:12px}}"""
# on a phone the plots shrink to the screen and the runs table scrolls in its own box: the page itself never scrolls sideways


Points = Callable[[dict[str, Any], str], dict[str, tuple[float, Any]]]
"""(report, metric) -> line name -> (value, its interval or None)"""


def ranking_points(report: dict[str, Any], metric: str) -> dict[str, tuple[float, Any]]:
    """Each arm's summary value of a ranking metric, with its Wilson interval where it has one."""
    points = {}
    for arm, row in sorted(report.get("summary", {}).get("all", {}).items()):
        value = (row.get("metrics") or {}).get(metric)
        if isinstance(value, (int, float)):
            points[arm] = (float(value), row.get("wilson95", {}).get(metric))
    return points


def trend_plot(loaded: Loaded, series: dict[int, str], metric: str, points_of: Points = ranking_points, title: str = "") -> str:
    """One SVG: a polyline per (arm, series) through the runs that hold it, a band for its interval."""
    x_step = (WIDTH - LEFT - 40) / max(len(loaded) - 1, 1)
    x_of = {run.counter: LEFT + index * x_step for index, (run, _) in enumerate(loaded)}
    y_of = lambda value: TOP + (1.0 - value) * (HEIGHT - TOP - BOTTOM)  # noqa: E731 - metrics are rates in [0, 1]
    lines: dict[str, list[tuple[float, float, Any]]] = {}
    for run, report in loaded:
        for name, (value, bounds) in points_of(report, metric).items():
            lines.setdefault(f"{name} ({series[run.counter]})", []).append((x_of[run.counter], value, bounds))
    parts = [f'<svg width="{coordinate(WIDTH)}" height="{coordinate(HEIGHT)}" viewBox="0 0 {coordinate(WIDTH)} {coordinate(HEIGHT)}" role="img" aria-label="{escape(metric)} over runs">'
             f"<title>{escape(metric)} over runs</title>"]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line class="grid" x1="{coordinate(LEFT)}" y1="{coordinate(y_of(tick))}" x2="{coordinate(WIDTH - 8)}" y2="{coordinate(y_of(tick))}"/>'
                     f'<text class="tick" x="{coordinate(LEFT - 6)}" y="{coordinate(y_of(tick) + 4)}" text-anchor="end">{tick:g}</text>')
    for run, _ in loaded:
        parts.append(f'<text class="tick" x="{coordinate(x_of[run.counter])}" y="{coordinate(HEIGHT - BOTTOM + 16)}" text-anchor="middle">'
                     f"{run.counter:04d}</text><text class=\"tick\" x=\"{coordinate(x_of[run.counter])}\" y=\"{coordinate(HEIGHT - BOTTOM + 30)}\" "
                     f'text-anchor="middle">{escape(run.commit)}</text>')
    legend = []
    for number, (name, points) in enumerate(sorted(lines.items())):
        colour = COLOURS[number % len(COLOURS)]
        bands = [(x, bounds) for x, _, bounds in points if bounds]
        if len(bands) == len(points) and len(points) > 1:
            upper = " ".join(f"{coordinate(x)},{coordinate(y_of(bounds[1]))}" for x, bounds in bands)
            lower = " ".join(f"{coordinate(x)},{coordinate(y_of(bounds[0]))}" for x, bounds in reversed(bands))
            parts.append(f'<polygon class="band" fill="{colour}" points="{upper} {lower}"/>')
        path = " ".join(f"{coordinate(x)},{coordinate(y_of(value))}" for x, value, _ in points)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{path}"><title>{escape(name)}</title></polyline>')
        parts += [f'<circle cx="{coordinate(x)}" cy="{coordinate(y_of(value))}" r="3" fill="{colour}"><title>{escape(name)}: {value:.3f}</title></circle>'
                  for x, value, _ in points]
        legend.append(f'<span style="color:{colour}">&#9632; {escape(name)}</span>')
    parts.append(f'<line class="ax" x1="{coordinate(LEFT)}" y1="{coordinate(y_of(0.0))}" x2="{coordinate(WIDTH - 8)}" y2="{coordinate(y_of(0.0))}"/></svg>')
    return f'<h2>{escape(title or metric)}</h2><div class="legend">{"".join(legend)}</div>{"".join(parts)}'


def _changed(loaded: Loaded, series: dict[int, str]) -> dict[int, dict[str, int]]:
    """Per run and arm: samples whose outcome changed against the previous run of the arm in its series."""
    previous: dict[tuple[str, str], dict[str, Any]] = {}
    changed: dict[int, dict[str, int]] = {}
    for run, report in loaded:
        arms = sorted(report.get("summary", {}).get("all", {}))
        for arm in arms:
            before = previous.get((series[run.counter], arm))
            if before is not None:
                section = compare(report, before, [])["arms"].get(arm)
                if section is not None:
                    changed.setdefault(run.counter, {})[arm] = section["improved"] + section["regressed"]
            previous[(series[run.counter], arm)] = report
    return changed


def render_history(loaded: Loaded, metric: str | None, run_pages: str) -> tuple[str, dict[str, str]]:
    """The page and each run's own page (file name under `run_pages` -> HTML)."""
    series = series_labels(loaded)
    limit = loaded[-1][1].get("registration", {}).get("limit") if loaded else 20
    trajectory_metric = metric if metric is not None and is_trajectory_metric(metric) else DEFAULT_METRIC
    chosen = metric if metric is not None and not is_trajectory_metric(metric) else default_metric(limit or 20)
    plots = "".join(trend_plot(loaded, series, name) for name in dict.fromkeys([chosen, "recall@10", "mrr@k"]))
    trajectory_points = trajectory_points_of()
    if any(trajectory_points(report, FINAL_ANY_GOLD) for _, report in loaded):  # only when a saved run has agents
        plots += "".join(trend_plot(loaded, series, name, trajectory_points, f"{name} ({TRAJECTORY_WORDS})")
                         for name in dict.fromkeys([FINAL_ANY_GOLD, trajectory_metric]))
    changed = _changed(loaded, series)
    rows = []
    pages = {}
    for run, report in loaded:
        page = f"{run.counter:04d}.html"
        pages[page] = render_html(report)
        flags = ", ".join(f"{escape(arm)}: {count}" for arm, count in sorted(changed.get(run.counter, {}).items()) if count)
        rows.append(f'<tr><td><a href="{escape(run_pages)}/{page}">{run.counter:04d}</a></td><td>{escape(run.date)}</td><td>{escape(run.commit)}</td>'
                    f"<td>{escape(run.name)}{' (partial)' if run.partial else ''}</td><td>{series[run.counter]}</td>"
                    f"<td>{escape(', '.join(sorted(report.get('summary', {}).get('all', {}))))}</td>"
                    f'<td class="{"flag" if flags else ""}">{flags or "–"}</td></tr>')
    note = (f"<p class=\"flag\">{len(set(series.values()))} series: runs over other samples or another limit are drawn as lines of their "
            "own, never joined.</p>") if len(set(series.values())) > 1 else ""
    body = (f"<h1>Retrieval bench history</h1><p>{counted(len(loaded), 'saved run')}; bands: the metric's interval where the report has one "
            f"(hit@k's Wilson interval).</p>{note}{plots}<h2>Runs</h2><div class=\"tw\"><table><thead><tr><th>run</th><th>date</th><th>commit</th><th>name</th>"
            "<th>series</th><th>arms</th><th>samples changed against the previous run (per arm)</th></tr></thead><tbody>"
            f"{''.join(rows)}</tbody></table></div>")
    html = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>Retrieval bench history</title><style>{STYLE}</style></head><body>{body}</body></html>\n")
    return html, pages


def write_history_page(loaded: Loaded, page: Path, metric: str | None = None) -> Path:
    """Write the page and, in `STEM_runs/` (the page's name less its suffix), each run's own page; returns that folder."""
    folder = page.with_name(f"{page.stem}_runs")
    html, pages = render_history(loaded, metric, folder.name)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        write_atomically(folder / name, text.encode("utf-8"))
    write_atomically(page, html.encode("utf-8"))
    return folder
