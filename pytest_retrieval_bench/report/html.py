"""The report as one self-contained HTML page, to open offline (`render_html`).

A pure function of the canonical JSON report: every figure on the page is the report's own,
formatted, except the rank histogram and the per-repository heat table (counts of the report's
`details`) and, for reports written before `p_holm` existed, the Holm-adjusted p-values (derived
here from the report's p-values and labelled so). No network, no external file, no clock:
the same report gives the same bytes. Every string from samples, arms or files is escaped.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any, Iterable, Sequence

from pytest_retrieval_bench.report import svg, tables
from pytest_retrieval_bench.report.html_problems import snapshot_problems_banner
from pytest_retrieval_bench.scoring.verdicts import BETTER, NOT_DISTINGUISHABLE, TOO_FEW, WORSE, holm, verdict_of

GROUP_KINDS = ("all", "task:", "stratum:", "fold:", "repo:")
PAIRED_ORDER = ("recall@5", "recall@10", "recall@20", "mrr@k")
OUTCOMES = ("hit", "miss", "abstained", "answered", "error", "not run")
VERDICT_MARKS = {BETTER: ("better", "▲"), WORSE: ("worse", "▼"), NOT_DISTINGUISHABLE: ("nd", "●"), TOO_FEW: ("few", "○")}


# -- formatting: one place, so a number reads the same in every table ------------------------------


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def _signed(value: Any) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _count(value: Any) -> str:
    return "–" if value is None else str(value)


def _interval(bounds: Any, sign: bool = False) -> str:
    return "–" if not bounds else tables.interval(bounds, sign)


def _p(value: Any) -> str:
    """As the terminal and Markdown write it (`<0.001`, never `0.000`), escaped."""
    return "–" if value is None else escape(tables.p_value(value))


def _metric_order(name: str) -> tuple[str, int]:
    """`recall@5` before `recall@10`; `mrr@k` after the numbered cutoffs."""
    base, _, k = name.partition("@")
    return (base, int(k) if k.isdigit() else 10**6)


def _group_order(name: str) -> tuple[int, str]:
    for rank, kind in enumerate(GROUP_KINDS):
        if name == kind or (kind.endswith(":") and name.startswith(kind)):
            return (rank, name)
    return (len(GROUP_KINDS), name)


def _td_num(text: str) -> str:
    return f'<td class="num">{text}</td>'


def _td_arm(name: str) -> str:
    return f'<td class="arm">{_e(name)}</td>'


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], css: str = "") -> str:
    """Cells are HTML already (escaped by the caller); headers are plain text."""
    head = "".join(f"<th>{_e(header)}</th>" for header in headers)
    body = "".join("<tr>" + "".join(cell if cell.startswith("<td") else f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<div class="tw"><table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _select(element_id: str, label: str, options: Sequence[tuple[str, str]]) -> str:
    """A <select> over (value, text) pairs; values are indices or fixed words, never report text."""
    items = "".join(f'<option value="{_e(value)}">{_e(text)}</option>' for value, text in options)
    return f'<label class="js-only" hidden>{_e(label)} <select id="{element_id}">{items}</select></label>'


# -- what the report holds -------------------------------------------------------------------------


def _arms(report: dict[str, Any]) -> list[str]:
    """Every arm the report mentions anywhere, sorted like the report's own sections."""
    names = set(report.get("registration", {}).get("arms") or [])
    names.update(report.get("latency", {}))
    for group in report.get("summary", {}).values():
        names.update(group)
    for entry in report.get("details", []):
        names.update(entry.get("arms", {}))
    return sorted(names)


def _limit(report: dict[str, Any]) -> int:
    limit = report.get("registration", {}).get("limit")
    if isinstance(limit, int):
        return limit
    ranks = [len(r.get("ranking") or []) for e in report.get("details", []) for r in e.get("arms", {}).values()]
    return max(ranks, default=20) or 20


def _outcome(entry: dict[str, Any], record: dict[str, Any] | None) -> str:
    """One word per sample and arm, the vocabulary the sample filter uses."""
    if record is None:
        return "not run"
    if record.get("error"):
        return "error"
    if entry.get("stratum") == "positive":
        return "hit" if record.get("rank_of_first_gold") is not None else "miss"
    return "abstained" if record.get("abstained") else "answered"


# -- page sections ---------------------------------------------------------------------------------


def _header(report: dict[str, Any], arms: Sequence[str]) -> str:
    registration = report.get("registration", {})
    facts = [f"plugin {_e(registration.get('plugin_version', '–'))}", f"limit {_e(_limit(report))}",
             f"{len(report.get('details', []))} samples", f"{len(arms)} arms"]
    if "merged_from" in registration:
        facts.append(f"merged from {len(registration['merged_from'])} reports")
    links = [("summary", "Per arm"), ("paired", "Paired"), ("baseline", "Baseline"), ("latency", "Latency"),
             ("ranks", "Ranks"), ("samples", "Samples"), ("registration", "Registration")]
    nav = " ".join(f'<a href="#{anchor}">{text}</a>' for anchor, text in links if anchor != "baseline" or report.get("baseline"))
    return f'<header><h1>Retrieval bench report</h1><p class="meta">{" · ".join(facts)}</p><nav>{nav}</nav></header>'


def _banners(report: dict[str, Any]) -> str:
    """What makes the numbers below incomplete or failing comes first, where nobody misses it."""
    parts = []
    not_run = (report.get("partial") or {}).get("not_run")
    if report.get("partial"):
        items = "".join(f"<li><code>{_e(item)}</code></li>" for item in not_run or [])
        parts.append(f'<div class="banner bad" id="partial-banner"><strong>PARTIAL report: {len(not_run or [])} items did not run</strong>'
                     f" (deselected, stopped early, interrupted or lost); every figure below covers only the items that ran."
                     f"<details><summary>items without a record</summary><ul>{items}</ul></details></div>")
    if report.get("missing"):
        ids = ", ".join(f"<code>{_e(sample)}</code>" for sample in report["missing"])
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
    groups = sorted(summary, key=_group_order)
    note = ('<p class="note">Metric means are over positive samples; hit@k carries its 95% Wilson interval over positives, '
            "selective success its Wilson interval over all samples (a no-gold sample succeeds by abstaining). "
            "Recall is not a rate, so it has no interval. Intervals are printed under their value.</p>")
    if not groups:
        return f'<section id="summary"><h2>Per arm</h2>{note}<p>The report has no summary.</p></section>'
    select = _select("summary-group", "Group", [(str(i), group) for i, group in enumerate(groups)])
    panels = "".join(f'<div class="panel summary-panel" data-idx="{i}"><h3>{_e(group)}</h3>{_summary_group(summary[group], group, draw)}</div>'
                     for i, group in enumerate(groups))
    return f'<section id="summary"><h2>Per arm</h2>{note}{select}{panels}</section>'


def _hit_keys(group: dict[str, Any]) -> list[str]:
    return sorted({key for row in group.values() for key in row.get("wilson95", {})}, key=_metric_order)


def _summary_group(group: dict[str, Any], name: str, draw: bool) -> str:
    """One group: the Wilson plot, then the same numbers as a table."""
    arms = sorted(group)
    hits = _hit_keys(group)
    recalls = sorted({key for row in group.values() for key in row.get("metrics", {}) if key.startswith("recall@")}, key=_metric_order)
    plot = _summary_plot(group, arms, hits, name) if draw else ""
    headers = ["arm", "n", "positives", "errors", "abstentions", *hits, *recalls, "mrr@k", "selective success"]
    rows = []
    for arm in arms:
        row = group[arm]
        metrics = row.get("metrics", {})
        cells = [_td_arm(arm), *(_td_num(_count(row.get(key))) for key in ("n", "positives", "errors", "abstentions"))]
        cells += [_with_interval(metrics.get(h), row.get("wilson95", {}).get(h)) for h in hits]
        cells += [_td_num(_num(metrics.get(r))) for r in recalls]
        cells.append(_td_num(_num(metrics.get("mrr@k"))))
        cells.append(_with_interval(row.get("selective_success"), row.get("selective_success_wilson95")))
        rows.append(cells)
    return plot + _table(headers, rows, "summary")


def _with_interval(value: Any, bounds: Any) -> str:
    """A rate with its Wilson interval printed under it, in one cell."""
    return _td_num(f'{_num(value)}<span class="ci">{_interval(bounds)}</span>')


def _summary_plot(group: dict[str, Any], arms: Sequence[str], hits: Sequence[str], name: str) -> str:
    panels = []
    for key in [*hits, "selective_success"]:
        items = []
        for arm in arms:
            row = group[arm]
            value = row.get("selective_success") if key == "selective_success" else row.get("metrics", {}).get(key)
            bounds = row.get("selective_success_wilson95") if key == "selective_success" else row.get("wilson95", {}).get(key)
            low, high = bounds if bounds else (None, None)
            items.append(svg.Interval(value, low, high, tooltip=f"{arm} {key}: {_num(value)} {_interval(bounds)}"))
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
    groups = sorted(paired, key=_group_order)
    if not groups:
        return (f'<section id="paired"><h2>Paired comparisons</h2>{note}<p id="no-paired">The report holds no paired comparisons '
                "(only arms that are not baseline arms are paired; see <code>--bench-baseline-arms</code>).</p></section>")
    select = _select("paired-group", "Group", [(str(i), group) for i, group in enumerate(groups)])
    panels = "".join(f'<div class="panel paired-panel" data-idx="{i}"><h3>{_e(group)}</h3>{_paired_group(paired[group], group, draw)}</div>'
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
        rows.append([_td_arm(comparison), _e(metric), _td_num(_count(result.get("n"))),
                     _td_num(_signed(result.get("mean_difference"))), _interval(result.get("bootstrap95"), sign=True),
                     f'<td class="v {css}">{mark} {_e(_verdict(result))}</td>',
                     f'{_count(result.get("wins"))}/{_count(result.get("losses"))}/{_count(result.get("ties"))}',
                     _td_num(_num(result.get("minimum_detectable_effect"))), _td_num(_p(test.get("p"))),
                     _td_num(_p(p_holm))])
    return plot + _table(headers, rows, "paired") + holm_note


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
            tooltip = f"{comparison} {metric}: {_signed(mean)} {_interval(result.get('bootstrap95'), True)}, {verdict}"
            items.append(svg.Interval(mean, interval[0], interval[1], css=VERDICT_MARKS.get(verdict, ("nd",))[0], tooltip=tooltip))
        panels.append(svg.Panel(metric, items))
    return svg.interval_panels(comparisons, panels, domain=svg.padded_domain(bounds), zero=0.0, panel_width=190.0,
                               caption=f"{name}: mean differences with bootstrap 95% intervals")


# -- against a baseline ----------------------------------------------------------------------------


RULE_HEADERS = ["rule", "arm", "group", "metric", "threshold", "n", "mean difference", "bootstrap 95%", "significant", "verdict"]


def _rule_row(rule: dict[str, Any]) -> list[str]:
    """One gate rule result as the report states it (verdict pass / fail)."""
    verdict_css = "good" if rule.get("verdict") == "pass" else "bad"
    return [f"<code>{_e(rule.get('rule'))}</code>", _td_arm(rule.get("arm")), _e(rule.get("group")), _e(rule.get("metric")),
            _td_num(_signed(rule.get("threshold"))), _td_num(_count(rule.get("n"))), _td_num(_signed(rule.get("mean_difference"))),
            _interval(rule.get("bootstrap95"), sign=True), "yes" if rule.get("significant") else "no",
            f'<td class="v {verdict_css}">{_e(rule.get("verdict"))}</td>']


def _baseline_section(report: dict[str, Any]) -> str:
    baseline = report["baseline"]
    css, word = ("bad", "FAILED") if baseline.get("failed") else ("good", "passed")
    rules = [_rule_row(rule) for rule in baseline.get("rules", [])]
    parts = [f'<p class="status {css}">Gate: <strong>{word}</strong></p>',
             '<p class="note">A rule fails when the lower bound of the bootstrap 95% interval of (run - baseline) is below its threshold.</p>',
             _table(RULE_HEADERS, rules, "rules") if rules else "<p>No gate rules were given.</p>"]
    for title, key in (("Samples only in this run", "only_in_run"), ("Samples only in the baseline", "only_in_baseline")):
        if baseline.get(key):
            parts.append(f"<p>{title}: " + ", ".join(f"<code>{_e(sample)}</code>" for sample in baseline[key]) + "</p>")
    arms = baseline.get("arms", {})
    parts.append(_table(["arm", "improved", "regressed", "unchanged"],
                        [[_td_arm(arm), *(_td_num(_count(arms[arm].get(k))) for k in ("improved", "regressed", "unchanged"))]
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
            rows = [[f"<code>{_e(c.get('id'))}</code>", _e(c.get("repo")), _e(c.get("why")), _td_num(_count(c.get("baseline_rank"))),
                     _td_num(_count(c.get("rank")))] for c in listed]
            blocks.append(f"<h4>{title} ({len(listed)})</h4>" + _table(["sample", "repo", "change", "baseline rank", "rank"], rows, key))
    body = "".join(blocks) or "<p>No regressed or improved samples.</p>"
    return f'<details class="arm-changes"{" open" if blocks else ""}><summary>{_e(arm)}</summary>{body}</details>'


# -- latency ---------------------------------------------------------------------------------------


def _latency_section(report: dict[str, Any], draw: bool) -> str:
    latency = report.get("latency", {})
    rows, plot_rows = [], []
    for arm in sorted(latency):
        for state in sorted(latency[arm]):
            figures = latency[arm][state]
            label = f"{arm} · {state}"
            if isinstance(figures, dict):
                rows.append([_td_arm(arm), _e(state), *(_td_num(_count(figures.get(k)) if k == "n" else _num(figures.get(k)))
                                                                              for k in ("n", "p50", "p95", "max", "mad"))])
                plot_rows.append(svg.LatencyRow(label, figures.get("p50"), figures.get("p95"), figures.get("max")))
            else:
                rows.append([_td_arm(arm), _e(state), f'<td class="notrun" colspan="5">{_e(figures)}</td>'])
                plot_rows.append(svg.LatencyRow(label, note=str(figures)))
    note = ('<p class="note">wall_ms per arm and cache state over the items that did not error: nearest-rank p50 and p95, max and median '
            "absolute deviation, in milliseconds; NOT_RUN under 30 timed items. Never a mean.</p>")
    if not rows:
        return f'<section id="latency"><h2>Latency</h2>{note}<p>The report has no latency figures.</p></section>'
    plot = svg.latency_ranges(plot_rows, caption="latency per arm and cache state") if draw else ""
    table = _table(["arm", "cache state", "n", "p50 ms", "p95 ms", "max ms", "MAD ms"], rows, "latency")
    return f'<section id="latency"><h2>Latency</h2>{note}{plot}{table}</section>'


# -- ranks and repositories ------------------------------------------------------------------------


def _positive_records(report: dict[str, Any], arm: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(entry, entry["arms"][arm]) for entry in report.get("details", [])
            if entry.get("stratum") == "positive" and not entry.get("skipped") and arm in entry.get("arms", {})]


def _rank_bins(records: Sequence[tuple[dict[str, Any], dict[str, Any]]], limit: int) -> list[tuple[str, int]]:
    counts = {str(rank): 0 for rank in range(1, limit + 1)}
    counts["miss"] = 0
    for _, record in records:
        rank = record.get("rank_of_first_gold")
        key = "miss" if rank is None else str(rank)
        counts[key] = counts.get(key, 0) + 1
    return list(counts.items())


def _ranks_section(report: dict[str, Any], arms: Sequence[str], draw: bool) -> str:
    limit = _limit(report)
    bins = {arm: _rank_bins(_positive_records(report, arm), limit) for arm in arms}
    labels = [label for label, _ in next(iter(bins.values()), [])]
    note = (f'<p class="note">Counted from the report\'s details: positive samples only; <b>miss</b> means no gold file in the top {limit} '
            "(errors included).</p>")
    plots = ""
    if draw and arms:
        y_max = max((count for arm_bins in bins.values() for _, count in arm_bins), default=0)
        shown = {"1", "5", "10", "15", "20", "30", "40", "50", str(limit), "miss"}
        plots = '<div class="multiples">' + "".join(
            svg.histogram(bins[arm], y_max=y_max, title=arm, caption=f"{arm}: rank of the first gold file", highlight=("miss",),
                          bar_width=max(8.0, min(13.0, 300.0 / max(len(labels), 1))), shown_labels=sorted(shown)) for arm in arms) + "</div>"
    rows = [[_td_arm(arm), *(_td_num(count) for _, count in bins[arm]),
             _td_num(sum(count for _, count in bins[arm]))] for arm in arms]
    table = _table(["arm", *labels, "positives"], rows, "ranks")
    return (f'<section id="ranks"><h2>Rank of the first gold file</h2>{note}{plots}{table}'
            f"<h3>Hits and misses per repository</h3>{_heat_table(report, arms, limit)}</section>")


def _heat_table(report: dict[str, Any], arms: Sequence[str], limit: int) -> str:
    """Repositories x arms, each cell hits / misses within the top `limit`, shaded by the hit share."""
    cells: dict[tuple[str, str], list[int]] = {}
    for arm in arms:
        for entry, record in _positive_records(report, arm):
            tally = cells.setdefault((str(entry.get("repo")), arm), [0, 0])
            tally[0 if record.get("rank_of_first_gold") is not None else 1] += 1
    repos = sorted({repo for repo, _ in cells})
    rows = []
    for repo in repos:
        row = [_td_arm(repo)]
        for arm in arms:
            hits, misses = cells.get((repo, arm), [0, 0])
            total = hits + misses
            if not total:
                row.append('<td class="num">–</td>')
                continue
            share = hits / total
            row.append(f'<td class="num heat" style="background:hsl({round(share * 120)},60%,{round(92 - 12 * (1 - abs(2 * share - 1)))}%)" '
                       f'title="{hits} of {total} hit">{hits} / {misses}</td>')
        rows.append(row)
    if not rows:
        return "<p>No positive sample has a record.</p>"
    return f'<p class="note">Cell: hits / misses (first gold file in the top {limit}), positives only.</p>' + _table(["repository", *arms], rows, "heat")


# -- samples ---------------------------------------------------------------------------------------


def _samples_section(report: dict[str, Any], arms: Sequence[str]) -> str:
    details = report.get("details", [])
    repos = sorted({str(entry.get("repo")) for entry in details})
    tasks = sorted({str(entry.get("task_type")) for entry in details})
    controls = "".join([
        _select("f-repo", "Repository", [("", "any"), *((str(i), repo) for i, repo in enumerate(repos))]),
        _select("f-task", "Task", [("", "any"), *((str(i), task) for i, task in enumerate(tasks))]),
        _select("f-arm", "Arm", [("", "any arm"), *((str(i), arm) for i, arm in enumerate(arms))]),
        _select("f-outcome", "Outcome", [("", "any"), *((outcome, outcome) for outcome in OUTCOMES), ("disagree", "arms disagree")]),
    ])
    samples = "".join(_sample(entry, arms, repos.index(str(entry.get("repo"))), tasks.index(str(entry.get("task_type")))) for entry in details)
    return (f'<section id="samples"><h2>Samples</h2><p class="note">Each arm\'s ranking (top {_limit(report)}, given files removed); '
            f'<span class="gold">★ gold</span>, <span class="hn">✗ hard negative</span>. Click a sample to open it.</p>'
            f'<div class="controls">{controls} <span id="sample-count">{len(details)} samples</span></div>{samples}</section>')


def _sample(entry: dict[str, Any], arms: Sequence[str], repo_index: int, task_index: int) -> str:
    records = entry.get("arms", {})
    outcomes = [_outcome(entry, records.get(arm)) for arm in arms]
    if entry.get("skipped"):
        outcomes = ["not run"] * len(arms)
    data = " ".join(f'data-o{i}="{_e(outcome)}"' for i, outcome in enumerate(outcomes))
    disagree = "1" if len(set(outcomes) - {"not run"}) > 1 else "0"
    badges = "".join(f'<span class="badge {_e(outcome.replace(" ", "-"))}">{_e(arm)}: {_e(_badge_text(outcome, records.get(arm)))}</span>'
                     for arm, outcome in zip(arms, outcomes) if not entry.get("skipped"))
    if entry.get("skipped"):
        badges = f'<span class="badge not-run">skipped: {_e(entry["skipped"])}</span>'
    head = (f'<summary><code>{_e(entry.get("id"))}</code> <span class="labels">{_e(entry.get("repo"))} · {_e(entry.get("task_type"))} · '
            f'{_e(entry.get("stratum"))}</span> {badges}</summary>')
    rankings = "".join(_ranking(arm, records[arm], entry) for arm in arms if arm in records)
    return (f'<details class="sample" data-repo="{repo_index}" data-task="{task_index}" data-dis="{disagree}" {data}>{head}'
            f'<div class="sbody">{_sample_facts(entry)}<div class="rankings">{rankings}</div></div></details>')


def _badge_text(outcome: str, record: dict[str, Any] | None) -> str:
    if outcome == "hit" and record is not None:
        return f"rank {record.get('rank_of_first_gold')}"
    if outcome == "miss" and record is not None and record.get("abstained"):
        return "miss (abstained)"
    return outcome


def _file_list(files: Sequence[str]) -> str:
    return ", ".join(f"<code>{_e(name)}</code>" for name in files) if files else "–"


def _sample_facts(entry: dict[str, Any]) -> str:
    """The sample's labels, with the query text (older reports do not carry it)."""
    records = list(entry.get("arms", {}).values())
    facts = [("gold", _file_list(entry.get("gold") or [])), ("given", _file_list(entry.get("given") or [])),
             ("hard negatives", _file_list(entry.get("hard_negatives") or [])),
             ("base commit", f"<code>{_e(entry.get('base_commit', '–'))}</code>"), ("partition", _e(entry.get("partition", "–")))]
    if "query_text" in entry or "query" in entry:
        facts.insert(0, ("query", f'<pre class="query">{_e(entry.get("query_text", entry.get("query")))}</pre>'))
    elif records:
        chars = next((r.get("query_chars") for r in records if r.get("query_chars") is not None), None)
        truncated = any(r.get("query_truncated") for r in records)
        note = f"text not stored in the report; {_count(chars)} characters{', truncated for an arm' if truncated else ''}"
        facts.insert(0, ("query", f'<span class="muted">{note}</span>'))
    if entry.get("skipped"):
        facts.append(("skipped", _e(entry["skipped"])))
    return '<dl class="facts">' + "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facts) + "</dl>"


def _ranking(arm: str, record: dict[str, Any], entry: dict[str, Any]) -> str:
    """One arm's ranking with gold files and hard negatives marked by text, not colour alone."""
    gold, negatives = set(entry.get("gold") or []), set(entry.get("hard_negatives") or [])
    metrics = record.get("metrics") or {}
    items = []
    for path in record.get("ranking") or []:
        css, mark = ("gold", "★ ") if path in gold else ("hn", "✗ ") if path in negatives else ("", "")
        items.append(f'<li class="{css}">{mark}{_e(path)}</li>' if css else f"<li>{_e(path)}</li>")
    line = (f'first gold: {_count(record.get("rank_of_first_gold")) if record.get("rank_of_first_gold") is not None else "none"} · '
            f'recall@10 {_num(metrics.get("recall@10"))} · mrr@k {_num(metrics.get("mrr@k"))}')
    if record.get("abstained"):
        line += " · abstained"
    error = f'<pre class="err">{_e(record["error"])}</pre>' if record.get("error") else ""
    listing = f"<ol>{''.join(items)}</ol>" if items else '<p class="muted">empty ranking</p>'
    return f'<div class="rk"><h5>{_e(arm)}</h5><p class="muted">{line}</p>{error}{listing}</div>'


# -- registration and run facts --------------------------------------------------------------------


def _value(value: Any) -> str:
    """Scalars as text; structures as sorted JSON, folded when long."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return "–" if value is None else _e(value)
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, indent=1)
    if len(text) <= 120:
        return f"<code>{_e(json.dumps(value, sort_keys=True, ensure_ascii=False))}</code>"
    return f'<details><summary>{len(value)} entries</summary><pre>{_e(text)}</pre></details>'


def _registration_section(report: dict[str, Any]) -> str:
    registration = report.get("registration", {})
    identities = registration.get("arm_identities") or {}
    listed = list(registration.get("arms") or [])
    arms = listed + sorted(set(identities) - set(listed))
    arm_rows = [[_td_arm(arm), f"<code>{_e(identities.get(arm, '–'))}</code>"] for arm in arms]
    other = [[_e(key), _value(registration[key])] for key in sorted(registration) if key not in ("arms", "arm_identities")]
    facts = [["skipped", _value(report.get("skipped") or {})], ["problems", _value(report.get("problems") or [])],
             ["missing", _value(report.get("missing") or [])], ["snapshots", _value(report.get("snapshots") or {})]]
    return ('<section id="registration"><h2>Registration</h2>'
            + (_table(["arm (as registered)", "identity"], arm_rows, "arms") if arm_rows else "")
            + _table(["field", "value"], other + facts, "kv") + "</section>")


# -- the page --------------------------------------------------------------------------------------


STYLE = """
:root{--fg:#1d232b;--muted:#5d6773;--line:#d8dde3;--good:#1b7f3b;--bad:#b42318;--nd:#6b7280;--acc:#2857a4}
*{box-sizing:border-box}[hidden]{display:none!important}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);margin:0 auto;max-width:1320px;padding:0 20px 40px}
header{border-bottom:2px solid var(--line);padding:12px 0 6px}h1{margin:0;font-size:22px}.meta{margin:2px 0;color:var(--muted)}
nav a{margin-right:14px;color:var(--acc);text-decoration:none}h2{margin:26px 0 6px;font-size:18px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:14px 0 6px}h4{margin:10px 0 4px;font-size:13px}h5{margin:0 0 2px;font-size:13px}
.note{color:var(--muted);margin:4px 0 8px;font-size:13px}.muted{color:var(--muted)}.derived{font-style:italic}
.banner{padding:10px 14px;margin:12px 0;border-radius:6px;border:1px solid}.banner.bad{background:#fdecea;border-color:var(--bad)}
.banner.good{background:#eaf6ee;border-color:var(--good)}.status.bad strong,.v.bad{color:var(--bad)}.status.good strong,.v.good{color:var(--good)}
.tw{overflow-x:auto}table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#f3f5f7;font-weight:600;white-space:nowrap}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.arm{font-family:ui-monospace,monospace;white-space:nowrap}.ci{display:block;color:var(--muted);font-size:11px}
td.notrun{color:var(--muted);font-weight:600}.v.better{color:var(--good)}.v.worse{color:var(--bad)}.v.nd,.v.few{color:var(--nd)}
table.ranks td,table.ranks th{padding:2px 5px}select{font:inherit;margin-right:12px}label{margin-right:4px}
.controls{margin:8px 0;padding:8px;background:#f6f7f9;border-radius:6px}#sample-count{font-weight:600}
svg.plot{display:block;margin:4px 0 6px;overflow:visible}svg text{font:11px system-ui,sans-serif;fill:var(--fg)}
svg .tick{fill:var(--muted);font-size:10px}svg .ptitle{font-weight:600}svg .ax{stroke:#8a949e}svg .grid{stroke:#eceff2}
svg .stripe{fill:#f7f8fa}svg .zero{stroke:#222;stroke-dasharray:4 3}svg .bar,svg .cap{stroke:var(--acc);stroke-width:1.6}
svg .pt{fill:var(--acc)}svg .better .bar,svg .better .cap{stroke:var(--good)}svg .better .pt{fill:var(--good)}
svg .worse .bar,svg .worse .cap{stroke:var(--bad)}svg .worse .pt{fill:var(--bad)}svg .nd .bar,svg .nd .cap,svg .few .bar,svg .few .cap{stroke:var(--nd)}
svg .nd .pt,svg .few .pt{fill:var(--nd)}svg .hbar{fill:#7f9fd4}svg .hbar.miss{fill:#d98b84}svg .count{font-size:9px;fill:var(--muted)}
svg .lat{stroke:var(--acc);stroke-width:5;stroke-opacity:.45}svg .max{stroke:var(--bad);stroke-width:1.6}svg .notrun{fill:var(--muted);font-weight:600}
.multiples{display:flex;flex-wrap:wrap;gap:8px 18px}
details.sample{border-bottom:1px solid var(--line);padding:4px 0}details.sample>summary{cursor:pointer}
.labels{color:var(--muted);margin-right:6px}.badge{display:inline-block;font-size:11px;padding:0 6px;margin:1px 2px;border-radius:9px;background:#eef0f3;font-family:ui-monospace,monospace}
.badge.hit,.badge.abstained{background:#e3f3e8;color:#14592a}.badge.miss,.badge.answered,.badge.error{background:#fbe4e1;color:#8a1c12}
.sbody{padding:6px 0 6px 18px}dl.facts{display:grid;grid-template-columns:110px 1fr;gap:2px 10px;margin:4px 0}dt{color:var(--muted)}dd{margin:0}
.rankings{display:grid;grid-template-columns:repeat(auto-fill,minmax(290px,1fr));gap:10px 18px}.rk p{margin:0 0 2px}
.rk ol{margin:2px 0;padding-left:26px;font:12px ui-monospace,monospace;overflow-wrap:anywhere}
.gold{color:var(--good);font-weight:700}.hn{color:var(--bad)}pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font-size:12px}
pre.err{color:var(--bad)}code{font-size:12px;word-break:break-all}details.arm-changes>summary{font-family:ui-monospace,monospace;cursor:pointer;margin:6px 0}
"""

SCRIPT = """
(function () {
  "use strict";
  function byId(id) { return document.getElementById(id); }
  function value(id) { var el = byId(id); return el ? el.value : ""; }
  function reveal() {
    var hidden = document.querySelectorAll(".js-only");
    for (var i = 0; i < hidden.length; i++) { hidden[i].hidden = false; }
  }
  function bindSwitch(selectId, panelClass) {
    var select = byId(selectId);
    if (!select) { return; }
    var panels = document.querySelectorAll("." + panelClass);
    function show() {
      for (var i = 0; i < panels.length; i++) { panels[i].hidden = panels[i].getAttribute("data-idx") !== select.value; }
    }
    select.addEventListener("change", show);
    show();
  }
  function matches(sample, f, armCount) {
    if (f.repo !== "" && sample.getAttribute("data-repo") !== f.repo) { return false; }
    if (f.task !== "" && sample.getAttribute("data-task") !== f.task) { return false; }
    if (f.outcome === "") { return true; }
    if (f.outcome === "disagree") { return sample.getAttribute("data-dis") === "1"; }
    for (var i = 0; i < armCount; i++) {
      if ((f.arm === "" || f.arm === String(i)) && sample.getAttribute("data-o" + i) === f.outcome) { return true; }
    }
    return false;
  }
  function filterSamples() {
    var samples = document.querySelectorAll("details.sample");
    var f = {repo: value("f-repo"), task: value("f-task"), arm: value("f-arm"), outcome: value("f-outcome")};
    var armCount = byId("f-arm") ? byId("f-arm").options.length - 1 : 0;
    var shown = 0;
    for (var i = 0; i < samples.length; i++) {
      var ok = matches(samples[i], f, armCount);
      samples[i].hidden = !ok;
      if (ok) { shown++; }
    }
    var counter = byId("sample-count");
    if (counter) { counter.textContent = "Showing " + shown + " of " + samples.length + " samples"; }
  }
  reveal();
  bindSwitch("summary-group", "summary-panel");
  bindSwitch("paired-group", "paired-panel");
  ["f-repo", "f-task", "f-arm", "f-outcome"].forEach(function (id) {
    var el = byId(id);
    if (el) { el.addEventListener("change", filterSamples); }
  });
  filterSamples();
})();
"""

# Nothing on the page may load from anywhere: the policy blocks it even if a report's text tried.
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def render_html(report: dict[str, Any], *, plots: bool | None = None) -> str:
    """The whole page for one canonical report; `plots=False` leaves only tables (None: plots on).

    Deterministic: sorted iteration, fixed number formats, no timestamps.
    """
    draw = plots is not False
    arms = _arms(report)
    sections = [
        _header(report, arms),
        _banners(report),
        snapshot_problems_banner(report),
        _summary_section(report, draw),
        _paired_section(report, draw),
        _baseline_section(report) if report.get("baseline") else "",
        _latency_section(report, draw),
        _ranks_section(report, arms, draw),
        _samples_section(report, arms),
        _registration_section(report),
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Retrieval bench report</title>'
            f"<style>{STYLE}</style></head><body>{''.join(sections)}<script>{SCRIPT}</script></body></html>\n")
