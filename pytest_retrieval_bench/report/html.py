"""The report as one self-contained HTML page, to open offline (`render_html`).

A pure function of the canonical JSON report: every figure on the page is the report's own,
formatted, except the rank histogram and the per-repository heat table (counts of the report's
`details`) and, for reports written before `p_holm` existed, the Holm-adjusted p-values (derived
here from the report's p-values and labelled so). No network, no external file, no clock:
the same report gives the same bytes. Every string from samples, arms or files is escaped.
"""

from __future__ import annotations

from typing import Any, Sequence

from pytest_retrieval_bench.report import svg
from pytest_retrieval_bench.report.html_assets import SCRIPT, STYLE
from pytest_retrieval_bench.report.html_gate import rules_block
from pytest_retrieval_bench.report.html_parts import (count_text, esc, group_order, html_table, interval_text, metric_order, num, p_text,
                                                       report_arms, report_limit, select_box, signed, td_arm, td_num)
from pytest_retrieval_bench.report.html_problems import snapshot_problems_banner
from pytest_retrieval_bench.report.html_trajectory import trajectory_tables_html
from pytest_retrieval_bench.report.html_samples import ranks_section, samples_section, value_html
from pytest_retrieval_bench.scoring.verdicts import BETTER, NOT_DISTINGUISHABLE, TOO_FEW, WORSE, holm, verdict_of

PAIRED_ORDER = ("recall@5", "recall@10", "recall@20", "mrr@k", "mrr")
VERDICT_MARKS = {BETTER: ("better", "▲"), WORSE: ("worse", "▼"), NOT_DISTINGUISHABLE: ("nd", "●"), TOO_FEW: ("few", "○")}


# -- formatting: one place, so a number reads the same in every table ------------------------------


# -- what the report holds -------------------------------------------------------------------------


# -- page sections ---------------------------------------------------------------------------------


def _header(report: dict[str, Any], arms: Sequence[str]) -> str:
    registration = report.get("registration", {})
    facts = [f"plugin {esc(registration.get('plugin_version', '–'))}", f"limit {esc(report_limit(report))}",
             f"{len(report.get('details', []))} samples", f"{len(arms)} arms"]
    if "merged_from" in registration:
        facts.append(f"merged from {len(registration['merged_from'])} reports")
    trajectory = [("trajectory", "Trajectory")] if report.get("trajectory") else []  # agent runs only: other pages keep their bytes
    links = [("summary", "Per arm"), *trajectory, ("paired", "Paired"), ("baseline", "Baseline"), ("latency", "Latency"),
             ("ranks", "Ranks"), ("samples", "Samples"), ("registration", "Registration")]
    nav = " ".join(f'<a href="#{anchor}">{text}</a>' for anchor, text in links if anchor != "baseline" or report.get("baseline"))
    return f'<header><h1>Retrieval bench report</h1><p class="meta">{" · ".join(facts)}</p><nav>{nav}</nav></header>'


def _banners(report: dict[str, Any]) -> str:
    """What makes the numbers below incomplete or failing comes first, where nobody misses it."""
    parts = []
    not_run = (report.get("partial") or {}).get("not_run")
    if report.get("partial"):
        items = "".join(f"<li><code>{esc(item)}</code></li>" for item in not_run or [])
        parts.append(f'<div class="banner bad" id="partial-banner"><strong>PARTIAL report: {len(not_run or [])} items did not run</strong>'
                     f" (deselected, stopped early, interrupted or lost); every figure below covers only the items that ran."
                     f"<details><summary>items without a record</summary><ul>{items}</ul></details></div>")
    if report.get("missing"):
        ids = ", ".join(f"<code>{esc(sample)}</code>" for sample in report["missing"])
        parts.append(f'<div class="banner bad" id="missing-banner"><strong>{len(report["missing"])} samples have an item that never reported'
                     f"</strong>: {ids}</div>")
    baseline = report.get("baseline")
    if baseline:
        css, word = ("bad", "FAILED") if baseline.get("failed") else ("good", "passed")
        parts.append(f'<div class="banner {css}" id="gate-banner">Gate against the baseline: <strong>{word}</strong> '
                     f'({len(baseline.get("rules", []))} rule results, <a href="#baseline">details</a>)</div>')
    return "".join(parts)


def _summary_section(report: dict[str, Any], draw: bool) -> str:
    summary = report.get("summary", {})
    groups = sorted(summary, key=group_order)
    note = ('<p class="note">Metric means are over positive samples; hit@k carries its 95% Wilson interval over positives, '
            "selective success its Wilson interval over all samples (a no-gold sample succeeds by abstaining). "
            "Recall is not a rate, so it has no interval. Intervals are printed under their value.</p>")
    if not groups:
        return f'<section id="summary"><h2>Per arm</h2>{note}<p>The report has no summary.</p></section>'
    select = select_box("summary-group", "Group", [(str(i), group) for i, group in enumerate(groups)])
    panels = "".join(f'<div class="panel summary-panel" data-idx="{i}"><h3>{esc(group)}</h3>{_summary_group(summary[group], group, draw)}</div>'
                     for i, group in enumerate(groups))
    return f'<section id="summary"><h2>Per arm</h2>{note}{select}{panels}</section>'


def _hit_keys(group: dict[str, Any]) -> list[str]:
    return sorted({key for row in group.values() for key in row.get("wilson95", {})}, key=metric_order)


def _summary_group(group: dict[str, Any], name: str, draw: bool) -> str:
    """One group: the Wilson plot, then the same numbers as a table."""
    arms = sorted(group)
    hits = _hit_keys(group)
    recalls = sorted({key for row in group.values() for key in row.get("metrics", {}) if key.startswith("recall@")}, key=metric_order)
    plot = _summary_plot(group, arms, hits, name) if draw else ""
    whole = any("mrr" in row.get("metrics", {}) for row in group.values())  # the bench's MRR, uncut (an earlier report has none)
    headers = ["arm", "n", "positives", "errors", "abstentions", *hits, *recalls, *(["mrr"] if whole else []), "mrr@k", "selective success"]
    rows = []
    for arm in arms:
        row = group[arm]
        metrics = row.get("metrics", {})
        cells = [td_arm(arm), *(td_num(count_text(row.get(key))) for key in ("n", "positives", "errors", "abstentions"))]
        cells += [_with_interval(metrics.get(h), row.get("wilson95", {}).get(h)) for h in hits]
        cells += [td_num(num(metrics.get(r))) for r in recalls]
        cells += [td_num(num(metrics.get("mrr")))] if whole else []
        cells.append(td_num(num(metrics.get("mrr@k"))))
        cells.append(_with_interval(row.get("selective_success"), row.get("selective_success_wilson95")))
        rows.append(cells)
    return plot + html_table(headers, rows, "summary")


def _with_interval(value: Any, bounds: Any) -> str:
    """A rate with its Wilson interval printed under it, in one cell."""
    return td_num(f'{num(value)}<span class="ci">{interval_text(bounds)}</span>')


def _summary_plot(group: dict[str, Any], arms: Sequence[str], hits: Sequence[str], name: str) -> str:
    panels = []
    for key in [*hits, "selective_success"]:
        items = []
        for arm in arms:
            row = group[arm]
            value = row.get("selective_success") if key == "selective_success" else row.get("metrics", {}).get(key)
            bounds = row.get("selective_success_wilson95") if key == "selective_success" else row.get("wilson95", {}).get(key)
            low, high = bounds if bounds else (None, None)
            items.append(svg.Interval(value, low, high, tooltip=f"{arm} {key}: {num(value)} {interval_text(bounds)}"))
        panels.append(svg.Panel("selective success" if key == "selective_success" else key, items))
    return svg.interval_panels(arms, panels, caption=f"{name}: means with 95% Wilson intervals per arm")


# -- paired comparisons ----------------------------------------------------------------------------


def _paired_results(entries: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(comparison, metric, entries[comparison][metric]) for comparison in sorted(entries)
            for metric in sorted(entries[comparison], key=lambda m: (PAIRED_ORDER.index(m) if m in PAIRED_ORDER else 99, m))]


def _holm_values(results: Sequence[tuple[str, str, dict[str, Any]]]) -> tuple[list[float | None], bool]:
    """The report's `p_holm` when it has them; else Holm over the group's p-values (True: derived here)."""
    tests = [result.get("t_test") or {} for _, _, result in results]
    if tests and all("p_holm" in test for test in tests):
        return [test["p_holm"] for test in tests], False
    return holm([test.get("p") for test in tests]), True


def _verdict(result: dict[str, Any]) -> str:
    """The report's stated verdict; reports written before it carried one get the same rule applied."""
    return result.get("verdict") or verdict_of(result.get("bootstrap95"), result.get("n") or 0)


def _paired_section(report: dict[str, Any], draw: bool) -> str:
    paired = report.get("paired", {})
    note = ('<p class="note">Candidate minus baseline arm over the positive samples both scored. The bootstrap 95% interval decides: '
            "lower bound above 0 is <b>better</b>, upper bound below 0 <b>worse</b>, otherwise <b>not distinguishable</b> "
            "(the report gives no verdict, <b>too few</b>, below 10 paired samples). MDE is the minimum detectable effect at 80% power.</p>")
    groups = sorted(paired, key=group_order)
    if not groups:
        return (f'<section id="paired"><h2>Paired comparisons</h2>{note}<p id="no-paired">The report holds no paired comparisons '
                "(only arms that are not baseline arms are paired; see <code>--bench-baseline-arms</code>).</p></section>")
    select = select_box("paired-group", "Group", [(str(i), group) for i, group in enumerate(groups)])
    panels = "".join(f'<div class="panel paired-panel" data-idx="{i}"><h3>{esc(group)}</h3>{_paired_group(paired[group], group, draw)}</div>'
                     for i, group in enumerate(groups))
    return f'<section id="paired"><h2>Paired comparisons</h2>{note}{select}{panels}</section>'


def _paired_group(entries: dict[str, Any], name: str, draw: bool) -> str:
    results = _paired_results(entries)
    adjusted, derived = _holm_values(results)
    family = f"Holm step-down over the {sum(1 for v in adjusted if v is not None)} t-test p-values of this group (every comparison and metric)"
    holm_note = (f'<p class="note derived">p (Holm, derived): computed on this page from the report\'s p-values, {family}.</p>' if derived
                 else f'<p class="note">p (Holm): the report\'s Holm-adjusted p, {family}.</p>')
    plot = _forest_plot(entries, results, name) if draw else ""
    headers = ["comparison", "metric", "n", "mean difference", "bootstrap 95%", "verdict", "wins/losses/ties", "MDE", "p (t-test)",
               "p (Holm, derived)" if derived else "p (Holm)"]
    rows = []
    for (comparison, metric, result), p_holm in zip(results, adjusted):
        css, mark = VERDICT_MARKS.get(_verdict(result), ("nd", "●"))
        test = result.get("t_test") or {}
        rows.append([td_arm(comparison), esc(metric), td_num(count_text(result.get("n"))),
                     td_num(signed(result.get("mean_difference"))), interval_text(result.get("bootstrap95"), sign=True),
                     f'<td class="v {css}">{mark} {esc(_verdict(result))}</td>',
                     f'{count_text(result.get("wins"))}/{count_text(result.get("losses"))}/{count_text(result.get("ties"))}',
                     td_num(num(result.get("minimum_detectable_effect"))), td_num(p_text(test.get("p"))),
                     td_num(p_text(p_holm))])
    return plot + html_table(headers, rows, "paired") + holm_note


def _forest_plot(entries: dict[str, Any], results: Sequence[tuple[str, str, dict[str, Any]]], name: str) -> str:
    """One panel per metric, one row per comparison, a shared axis with the zero line."""
    comparisons = sorted(entries)
    metrics = sorted({metric for _, metric, _ in results}, key=lambda m: (PAIRED_ORDER.index(m) if m in PAIRED_ORDER else 99, m))
    bounds = [v for _, _, r in results for v in (r.get("bootstrap95") or []) + [r.get("mean_difference")] if v is not None]
    panels = []
    for metric in metrics:
        items = []
        for comparison in comparisons:
            result = entries[comparison].get(metric)
            if result is None:
                items.append(svg.Interval(None))
                continue
            interval = result.get("bootstrap95") or (None, None)
            verdict = _verdict(result)
            mean = result.get("mean_difference")
            tooltip = f"{comparison} {metric}: {signed(mean)} {interval_text(result.get('bootstrap95'), True)}, {verdict}"
            items.append(svg.Interval(mean, interval[0], interval[1], css=VERDICT_MARKS.get(verdict, ("nd",))[0], tooltip=tooltip))
        panels.append(svg.Panel(metric, items))
    return svg.interval_panels(comparisons, panels, domain=svg.padded_domain(bounds), zero=0.0, panel_width=190.0,
                               caption=f"{name}: mean differences with bootstrap 95% intervals")


# -- against a baseline ----------------------------------------------------------------------------


def _baseline_section(report: dict[str, Any]) -> str:
    baseline = report["baseline"]
    css, word = ("bad", "FAILED") if baseline.get("failed") else ("good", "passed")

    parts = [f'<p class="status {css}">Gate: <strong>{word}</strong></p>', rules_block(baseline)]
    for title, key in (("Samples only in this run", "only_in_run"), ("Samples only in the baseline", "only_in_baseline")):
        if baseline.get(key):
            parts.append(f"<p>{title}: " + ", ".join(f"<code>{esc(sample)}</code>" for sample in baseline[key]) + "</p>")
    arms = baseline.get("arms", {})
    parts.append(html_table(["arm", "improved", "regressed", "unchanged"],
                        [[td_arm(arm), *(td_num(count_text(arms[arm].get(k))) for k in ("improved", "regressed", "unchanged"))]
                         for arm in sorted(arms)], "changes"))
    for arm in sorted(arms):
        parts.append(_arm_changes(arm, arms[arm]))
    return f'<section id="baseline"><h2>Against the baseline</h2>{"".join(parts)}</section>'


def _arm_changes(arm: str, changes: dict[str, Any]) -> str:
    """Regressed then improved samples of one arm, worst first as the report lists them."""
    blocks = []
    for title, key in (("Regressed", "regressions"), ("Improved", "improvements")):
        listed = changes.get(key) or []
        if listed:
            rows = [[f"<code>{esc(c.get('id'))}</code>", esc(c.get("repo")), esc(c.get("why")), td_num(count_text(c.get("baseline_rank"))),
                     td_num(count_text(c.get("rank")))] for c in listed]
            blocks.append(f"<h4>{title} ({len(listed)})</h4>" + html_table(["sample", "repo", "change", "baseline rank", "rank"], rows, key))
    body = "".join(blocks) or "<p>No regressed or improved samples.</p>"
    return f'<details class="arm-changes"{" open" if blocks else ""}><summary>{esc(arm)}</summary>{body}</details>'


# -- latency ---------------------------------------------------------------------------------------


def _latency_section(report: dict[str, Any], draw: bool) -> str:
    latency = report.get("latency", {})
    rows, plot_rows = [], []
    for arm in sorted(latency):
        for state in sorted(latency[arm]):
            figures = latency[arm][state]
            label = f"{arm} · {state}"
            if isinstance(figures, dict):
                rows.append([td_arm(arm), esc(state), *(td_num(count_text(figures.get(k)) if k == "n" else num(figures.get(k)))
                                                                              for k in ("n", "p50", "p95", "max", "mad"))])
                plot_rows.append(svg.LatencyRow(label, figures.get("p50"), figures.get("p95"), figures.get("max")))
            else:
                rows.append([td_arm(arm), esc(state), f'<td class="notrun" colspan="5">{esc(figures)}</td>'])
                plot_rows.append(svg.LatencyRow(label, note=str(figures)))
    note = ('<p class="note">wall_ms per arm and cache state over the items that did not error: nearest-rank p50 and p95, max and median '
            "absolute deviation, in milliseconds; NOT_RUN under 30 timed items. Never a mean.</p>")
    if not rows:
        return f'<section id="latency"><h2>Latency</h2>{note}<p>The report has no latency figures.</p></section>'
    plot = svg.latency_ranges(plot_rows, caption="latency per arm and cache state") if draw else ""
    table = html_table(["arm", "cache state", "n", "p50 ms", "p95 ms", "max ms", "MAD ms"], rows, "latency")
    return f'<section id="latency"><h2>Latency</h2>{note}{plot}{table}</section>'


# -- ranks and repositories ------------------------------------------------------------------------


# -- samples ---------------------------------------------------------------------------------------


# -- registration and run facts --------------------------------------------------------------------


def _registration_section(report: dict[str, Any]) -> str:
    registration = report.get("registration", {})
    identities = registration.get("arm_identities") or {}
    listed = list(registration.get("arms") or [])
    arms = listed + sorted(set(identities) - set(listed))
    arm_rows = [[td_arm(arm), f"<code>{esc(identities.get(arm, '–'))}</code>"] for arm in arms]
    other = [[esc(key), value_html(registration[key])] for key in sorted(registration) if key not in ("arms", "arm_identities")]
    facts = [["skipped", value_html(report.get("skipped") or {})], ["problems", value_html(report.get("problems") or [])],
             ["missing", value_html(report.get("missing") or [])], ["snapshots", value_html(report.get("snapshots") or {})]]
    return ('<section id="registration"><h2>Registration</h2>'
            + (html_table(["arm (as registered)", "identity"], arm_rows, "arms") if arm_rows else "")
            + html_table(["field", "value"], other + facts, "kv") + "</section>")


# -- the page --------------------------------------------------------------------------------------


# Nothing on the page may load from anywhere: the policy blocks it even if a report's text tried.
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def render_html(report: dict[str, Any], *, plots: bool | None = None) -> str:
    """The whole page for one canonical report; `plots=False` leaves only tables (None: plots on).

    Deterministic: sorted iteration, fixed number formats, no timestamps.
    """
    draw = plots is not False
    arms = report_arms(report)
    sections = [
        _header(report, arms),
        _banners(report),
        snapshot_problems_banner(report),
        _summary_section(report, draw),
        trajectory_tables_html(report),
        _paired_section(report, draw),
        _baseline_section(report) if report.get("baseline") else "",
        _latency_section(report, draw),
        ranks_section(report, arms, draw),
        samples_section(report, arms),
        _registration_section(report),
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Retrieval bench report</title>'
            f"<style>{STYLE}</style></head><body>{''.join(sections)}<script>{SCRIPT}</script></body></html>\n")
