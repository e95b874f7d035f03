"""The HTML page's gate rules: each rule's form and deciding bound, what a failing one would need, new arms.

Kept out of `report.html` (the page's layout) so the rules read the same words as the terminal
and the Markdown (`report.gate_text`).
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report.html_parts import count_text, esc, html_table, interval_text, signed, td_arm, td_num
from pytest_retrieval_bench.report.gate_text import form_words, needed_note, new_arms_note

RULE_HEADERS = ["rule", "form", "arm", "group", "metric", "threshold", "n", "mean difference", "bootstrap 95%", "significant", "verdict"]
FORMS_NOTE = ('A rule reads the bootstrap 95% interval of (run - baseline). Non-inferiority (<code>METRIC&gt;=T</code>, '
              '<code>noninferior:METRIC&gt;=T</code>) fails unless its lower bound is at least T; no confident regression '
              '(<code>noregression:METRIC&gt;=T</code>) fails only when its upper bound is below T.')


def _rule_row(rule: dict[str, Any]) -> list[str]:
    """One gate rule result as the report states it (verdict pass / fail)."""
    verdict_css = "good" if rule.get("verdict") == "pass" else "bad"
    return [f'<code class="rule">{esc(rule.get("rule"))}</code>', esc(form_words(rule)), td_arm(rule.get("arm")), esc(rule.get("group")),
            esc(rule.get("metric")), td_num(signed(rule.get("threshold"))), td_num(count_text(rule.get("n"))),
            td_num(signed(rule.get("mean_difference"))), interval_text(rule.get("bootstrap95"), sign=True),
            "yes" if rule.get("significant") else "no", f'<td class="v {verdict_css}">{esc(rule.get("verdict"))}</td>']


def rules_block(baseline: dict[str, Any]) -> str:
    """The rules table, a note per failing non-inferiority rule, and the arms that ran unpaired."""
    rules = baseline.get("rules", [])
    parts = [f'<p class="note">{FORMS_NOTE}</p>',
             html_table(RULE_HEADERS, [_rule_row(rule) for rule in rules], "rules") if rules else "<p>No gate rules were given.</p>"]
    notes = [f"<li><code class=\"rule\">{esc(rule.get('rule'))}</code> ({esc(rule.get('arm'))}): {esc(needed_note(rule))}</li>"
             for rule in rules if needed_note(rule)]
    if notes:
        parts.append(f'<ul class="needed">{"".join(notes)}</ul>')
    if new_arms_note(baseline):
        parts.append(f'<p id="new-arms">{esc(new_arms_note(baseline))}</p>')
    return "".join(parts)
