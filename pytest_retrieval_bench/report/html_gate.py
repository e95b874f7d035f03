"""The HTML page's gate rules: each rule's form and deciding bound, what a failing one would need, new arms.

Kept out of `report.html` (the page's layout) so the rules read the same words as the terminal
and the Markdown (`report.gate_text`).
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report import html as page
from pytest_retrieval_bench.report.gate_text import form_words, needed_note, new_arms_note

RULE_HEADERS = ["rule", "form", "arm", "group", "metric", "threshold", "n", "mean difference", "bootstrap 95%", "significant", "verdict"]
FORMS_NOTE = ('A rule reads the bootstrap 95% interval of (run - baseline). Non-inferiority (<code>METRIC&gt;=T</code>, '
              '<code>noninferior:METRIC&gt;=T</code>) fails unless its lower bound is at least T; no confident regression '
              '(<code>noregression:METRIC&gt;=T</code>) fails only when its upper bound is below T.')


def _rule_row(rule: dict[str, Any]) -> list[str]:
    """One gate rule result as the report states it (verdict pass / fail)."""
    verdict_css = "good" if rule.get("verdict") == "pass" else "bad"
    return [f"<code>{page._e(rule.get('rule'))}</code>", page._e(form_words(rule)), page._td_arm(rule.get("arm")), page._e(rule.get("group")),
            page._e(rule.get("metric")), page._td_num(page._signed(rule.get("threshold"))), page._td_num(page._count(rule.get("n"))),
            page._td_num(page._signed(rule.get("mean_difference"))), page._interval(rule.get("bootstrap95"), sign=True),
            "yes" if rule.get("significant") else "no", f'<td class="v {verdict_css}">{page._e(rule.get("verdict"))}</td>']


def rules_block(baseline: dict[str, Any]) -> str:
    """The rules table, a note per failing non-inferiority rule, and the arms that ran unpaired."""
    rules = baseline.get("rules", [])
    parts = [f'<p class="note">{FORMS_NOTE}</p>',
             page._table(RULE_HEADERS, [_rule_row(rule) for rule in rules], "rules") if rules else "<p>No gate rules were given.</p>"]
    notes = [f"<li><code>{page._e(rule.get('rule'))}</code> ({page._e(rule.get('arm'))}): {page._e(needed_note(rule))}</li>"
             for rule in rules if needed_note(rule)]
    if notes:
        parts.append(f'<ul class="needed">{"".join(notes)}</ul>')
    if new_arms_note(baseline):
        parts.append(f'<p id="new-arms">{page._e(new_arms_note(baseline))}</p>')
    return "".join(parts)
