"""The HTML page's per-sample views: the rank histogram, the per-repository heat table, and the
filterable list of samples with each arm's ranking (counts of the report's own `details`)."""

from __future__ import annotations

import json
from typing import Any, Sequence

from pytest_retrieval_bench.report import svg
from pytest_retrieval_bench.words import counted
from pytest_retrieval_bench.report.html_parts import count_text, esc, html_table, num, outcome_of, report_limit, select_box, td_arm, td_num
from pytest_retrieval_bench.report.html_trajectory import trajectory_html

OUTCOMES = ("hit", "miss", "abstained", "answered", "error", "not run")


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


def ranks_section(report: dict[str, Any], arms: Sequence[str], draw: bool) -> str:
    limit = report_limit(report)
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
    rows = [[td_arm(arm), *(td_num(count) for _, count in bins[arm]),
             td_num(sum(count for _, count in bins[arm]))] for arm in arms]
    table = html_table(["arm", *labels, "positives"], rows, "ranks")
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
        row = [td_arm(repo)]
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
    return f'<p class="note">Cell: hits / misses (first gold file in the top {limit}), positives only.</p>' + html_table(["repository", *arms], rows, "heat")


def samples_section(report: dict[str, Any], arms: Sequence[str]) -> str:
    details = report.get("details", [])
    repos = sorted({str(entry.get("repo")) for entry in details})
    tasks = sorted({str(entry.get("task_type")) for entry in details})
    controls = "".join([
        select_box("f-repo", "Repository", [("", "any"), *((str(i), repo) for i, repo in enumerate(repos))]),
        select_box("f-task", "Task", [("", "any"), *((str(i), task) for i, task in enumerate(tasks))]),
        select_box("f-arm", "Arm", [("", "any arm"), *((str(i), arm) for i, arm in enumerate(arms))]),
        select_box("f-outcome", "Outcome", [("", "any"), *((outcome, outcome) for outcome in OUTCOMES), ("disagree", "arms disagree")]),
    ])
    samples = "".join(_sample(entry, arms, repos.index(str(entry.get("repo"))), tasks.index(str(entry.get("task_type")))) for entry in details)
    return (f'<section id="samples"><h2>Samples</h2><p class="note">Each arm\'s ranking (top {report_limit(report)}, given files removed); '
            f'<span class="gold">★ gold</span>, <span class="hn">✗ hard negative</span>. Click a sample to open it.</p>'
            f'<div class="controls">{controls} <span id="sample-count">{len(details)} samples</span></div>{samples}</section>')


def _sample(entry: dict[str, Any], arms: Sequence[str], repo_index: int, task_index: int) -> str:
    records = entry.get("arms", {})
    outcomes = [outcome_of(entry, records.get(arm)) for arm in arms]
    if entry.get("skipped"):
        outcomes = ["not run"] * len(arms)
    data = " ".join(f'data-o{i}="{esc(outcome)}"' for i, outcome in enumerate(outcomes))
    disagree = "1" if len(set(outcomes) - {"not run"}) > 1 else "0"
    badges = "".join(f'<span class="badge {esc(outcome.replace(" ", "-"))}">{esc(arm)}: {esc(_badge_text(outcome, records.get(arm)))}</span>'
                     for arm, outcome in zip(arms, outcomes) if not entry.get("skipped"))
    if entry.get("skipped"):
        badges = f'<span class="badge not-run">skipped: {esc(entry["skipped"])}</span>'
    head = (f'<summary><code>{esc(entry.get("id"))}</code> <span class="labels">{esc(entry.get("repo"))} · {esc(entry.get("task_type"))} · '
            f'{esc(entry.get("stratum"))}</span> {badges}</summary>')
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
    return ", ".join(f"<code>{esc(name)}</code>" for name in files) if files else "–"


def _sample_facts(entry: dict[str, Any]) -> str:
    """The sample's labels, with the query text (older reports do not carry it)."""
    records = list(entry.get("arms", {}).values())
    facts = [("gold", _file_list(entry.get("gold") or [])), ("given", _file_list(entry.get("given") or [])),
             ("hard negatives", _file_list(entry.get("hard_negatives") or [])),
             ("base commit", f"<code>{esc(entry.get('base_commit', '–'))}</code>"), ("partition", esc(entry.get("partition", "–")))]
    if "query_text" in entry or "query" in entry:
        facts.insert(0, ("query", f'<pre class="query">{esc(entry.get("query_text", entry.get("query")))}</pre>'))
    elif records:
        chars = next((r.get("query_chars") for r in records if r.get("query_chars") is not None), None)
        truncated = any(r.get("query_truncated") for r in records)
        note = f"text not stored in the report; {count_text(chars)} characters{', truncated for an arm' if truncated else ''}"
        facts.insert(0, ("query", f'<span class="muted">{note}</span>'))
    if entry.get("skipped"):
        facts.append(("skipped", esc(entry["skipped"])))
    return '<dl class="facts">' + "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facts) + "</dl>"


def _ranking(arm: str, record: dict[str, Any], entry: dict[str, Any]) -> str:
    """One arm's ranking with gold files and hard negatives marked by text, not colour alone."""
    gold, negatives = set(entry.get("gold") or []), set(entry.get("hard_negatives") or [])
    metrics = record.get("metrics") or {}
    items = []
    for path in record.get("ranking") or []:
        css, mark = ("gold", "★ ") if path in gold else ("hn", "✗ ") if path in negatives else ("", "")
        items.append(f'<li class="{css}">{mark}{esc(path)}</li>' if css else f"<li>{esc(path)}</li>")
    line = (f'first gold: {count_text(record.get("rank_of_first_gold")) if record.get("rank_of_first_gold") is not None else "none"} · '
            f'recall@10 {num(metrics.get("recall@10"))} · mrr@k {num(metrics.get("mrr@k"))}')
    if "mrr" in metrics:  # the bench's MRR over the whole ranking, with the rank it reads when R is cut above it
        uncut = record.get("rank_of_first_gold_uncut")
        line += f' · mrr {num(metrics["mrr"])}' + (f" (first gold at {count_text(uncut)})" if uncut and uncut != record.get("rank_of_first_gold") else "")
    if record.get("abstained"):
        line += " · abstained"
    error = f'<pre class="err">{esc(record["error"])}</pre>' if record.get("error") else ""
    listing = f"<ol>{''.join(items)}</ol>" if items else '<p class="muted">empty ranking</p>'
    return f'<div class="rk"><h5>{esc(arm)}</h5><p class="muted">{line}</p>{error}{listing}{trajectory_html(record, entry)}</div>'


def value_html(value: Any) -> str:
    """Scalars as text; structures as sorted JSON, folded when long."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return "–" if value is None else esc(value)
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, indent=1)
    if len(text) <= 120:
        return f"<code>{esc(json.dumps(value, sort_keys=True, ensure_ascii=False))}</code>"
    return f'<details><summary>{counted(len(value), "entry")}</summary><pre>{esc(text)}</pre></details>'
