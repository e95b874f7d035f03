"""The tables a run (or a merge) prints when it ends: each summary group with its paired
comparisons, the agents' trajectory overview, and the baseline comparison with its changed samples.

The same lines go to the pytest terminal and to `retrieval-bench summarize`; the table primitives
(`fixed_width`, `arm_table`, ...) are `tables`'. The trajectory overview is short on purpose: one
row per agent and per ranking arm at the agents' budget; `retrieval-bench leaderboard` prints the
bench's V1.4 tables in full.
"""

from __future__ import annotations

from typing import Any, Sequence

from pytest_retrieval_bench.report.gate_text import form_words, needed_note, new_arms_note
from pytest_retrieval_bench.report.tables import (PAIRED_NOTE, Table, arm_table, fixed_width, groups_to_show, interval, number,
                                                  paired_table, printable, signed)
from pytest_retrieval_bench.report.trajectory_values import TRAJECTORY_WORDS, final_any_gold_figures, metric_mean, report_trajectory_values

OVERVIEW_HEADERS = ["arm", "source", "n", "final-any-gold", "95% Wilson", "final_file_recall", "final_file_precision", "final_file_f1"]


def trajectory_overview(report: dict[str, Any]) -> Table:
    """Per agent and per ranking arm's same-budget figures (at the agents' smallest `final_k`), over
    the samples with gold: final-any-gold with its Wilson interval and the final files' mean recall,
    precision and F1. A ranker's sample with an error or no file counts as no context, as the
    paired figures count it (the section's same-budget contrast leaves such samples out, as the
    bench does). An agent with no sample with gold shows n 0; no rows without agents."""
    rows = []
    for arm, (source, values) in report_trajectory_values(report.get("details", [])).items():
        hits, bounds = final_any_gold_figures(values)
        rows.append([arm, source, str(len(values)), number(hits / len(values) if values else None), interval(bounds),
                     *(number(metric_mean(values, name)) for name in OVERVIEW_HEADERS[5:])])
    return OVERVIEW_HEADERS, rows


CHANGES_SHOWN = 20
"""Regressed and improved samples printed per arm; the rest are counted, and the line says where they are."""


def report_lines(report: dict[str, Any], limit: int, groups: Sequence[str], baseline_path: Any, written_to: Any = None) -> list[str]:
    """The tables of a report (a run's or a merge's): summary groups, paired comparisons, baseline.
    `written_to`, the report's path when one is written, is where the samples not printed can be read."""
    summary, paired = report.get("summary", {}), report.get("paired", {})
    lines: list[str] = []
    for group in groups_to_show(summary, groups):
        lines += ["", f"retrieval-bench summary (group {group})", *fixed_width(arm_table(summary[group], limit))]
        if paired.get(group):
            headers, rows = paired_table(paired[group])
            lines += [f"paired differences (group {group}; {PAIRED_NOTE.format(count=len(rows))})", *fixed_width((headers, rows))]
    overview = trajectory_overview(report)
    if overview[1]:
        lines += ["", f"trajectory (group all; {TRAJECTORY_WORDS}; retrieval-bench leaderboard prints the bench's V1.4 tables)",
                  *fixed_width(overview)]
    unmatched = [entry for entry in groups if not groups_to_show(summary, [entry])]
    if unmatched and summary:  # a typo (`tasks`, `task:nosuch`) would otherwise print nothing at all
        kinds = sorted({group.split(":", 1)[0] for group in summary if ":" in group})
        lines += ["", f"retrieval-bench: --bench-table {', '.join(map(repr, unmatched))}: no such group in this report "
                      f"(its groups: all, and by kind {', '.join(kinds)}; e.g. {next((g for g in sorted(summary) if ':' in g), 'all')})"]
    baseline = report.get("baseline")
    if baseline:
        lines.append(f"against baseline {baseline_path}: {'FAILED' if baseline['failed'] else 'passed'}")
        for rule in baseline["rules"]:
            low_high = rule["bootstrap95"]
            bounds = f"[{low_high[0]:+.3f}, {low_high[1]:+.3f}]" if low_high else "[no data]"
            note = "" if rule["significant"] else ", not significant"
            lines.append(f"  gate {rule['rule']} arm {rule['arm']} [{form_words(rule)}]: mean {signed(rule['mean_difference'])} {bounds} "
                         f"(n={rule['n']}{note}) -> {rule['verdict'].upper()}")
            if needed_note(rule):
                lines.append(f"    {needed_note(rule)}")
        if new_arms_note(baseline):
            lines.append(f"  {new_arms_note(baseline)}")
        for side, key in (("only in this run", "only_in_run"), ("only in the baseline", "only_in_baseline")):
            if baseline.get(key):
                lines.append(f"  samples {side}: {', '.join(baseline[key])}")
        for arm, changes in baseline["arms"].items():
            lines.append(f"  {arm}: {changes['improved']} improved, {changes['regressed']} regressed, {changes['unchanged']} unchanged")
            for word, key in (("REGRESSED", "regressions"), ("improved ", "improvements")):
                for change in changes[key][:CHANGES_SHOWN]:
                    lines.append(f"    {word} {change['id']} ({change['repo']}): {change['why']}")
                if len(changes[key]) > CHANGES_SHOWN:
                    lines.append(f"    ... and {len(changes[key]) - CHANGES_SHOWN} more {word.strip().lower()}: {_where_all(written_to, arm, key)}")
    return [printable(line) for line in lines]


def _where_all(written_to: Any, arm: str, key: str) -> str:
    if written_to is None:
        return "write the report (--bench-report PATH) to read them all"
    return f'see {written_to} (baseline.arms["{arm}"].{key})'
