"""The report as GitHub-flavoured Markdown, for `$GITHUB_STEP_SUMMARY` or a pull-request comment.

The tables are the terminal's (`report.tables`), with every cell escaped for a pipe table; the
per-task tables sit in `<details>` blocks so the summary stays short. A gated report starts with
the gate's verdict and its failing rules: a reviewer reads the answer before the tables, and the
rest of the comparison (every rule, the samples that changed) comes after them.
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report.gate_text import form_words, needed_note, new_arms_note
from pytest_retrieval_bench.report.run_tables import trajectory_overview
from pytest_retrieval_bench.report.tables import PAIRED_NOTE, Table, arm_table, interval, number, paired_table
from pytest_retrieval_bench.report.trajectory_values import TRAJECTORY_WORDS

REGRESSIONS_SHOWN = 25
_RIGHT = {"n", "pos", "recall@10", "mrr@k", "selective", "errors", "abstain", "mean", "p", "p (Holm)", "MDE", "final-any-gold",
          "final_file_recall", "final_file_precision", "final_file_f1"}


def escape(text: str) -> str:
    """A cell's text that cannot break the table or turn into markup: pipes, backticks, HTML."""
    for char, replacement in (("\\", "\\\\"), ("|", "\\|"), ("`", "\\`"), ("<", "&lt;"), (">", "&gt;"), ("*", "\\*"), ("_", "\\_"), ("\n", " ")):
        text = text.replace(char, replacement)
    return text


def pipe_table(table: Table) -> list[str]:
    headers, rows = table
    aligns = ["---:" if header in _RIGHT or header.startswith("hit@") else "---" for header in headers]
    lines = ["| " + " | ".join(escape(header) for header in headers) + " |", "|" + "|".join(aligns) + "|"]
    lines += ["| " + " | ".join(escape(cell) for cell in row) + " |" for row in rows]
    return lines


def _group_block(report: dict[str, Any], group: str, limit: int) -> list[str]:
    lines = pipe_table(arm_table(report["summary"][group], limit))
    paired = report.get("paired", {}).get(group)
    if paired:
        table = paired_table(paired)
        lines += ["", f"Paired differences ({escape(PAIRED_NOTE.format(count=len(table[1])))}):", "", *pipe_table(table)]
    return lines


def render(report: dict[str, Any], limit: int) -> str:
    lines = ["## Retrieval bench", ""]
    partial = report.get("partial")
    if partial:
        lines += [f"**PARTIAL report**: {len(partial['not_run'])} selected sample x arm item(s) did not run.", ""]
    lines += _verdict_lines(report.get("baseline"))
    summary = report.get("summary", {})
    if "all" in summary:
        lines += _group_block(report, "all", limit)
    overview = trajectory_overview(report)
    if overview[1]:  # only with agents
        lines += ["", f"Trajectory ({escape(TRAJECTORY_WORDS)}):", "", *pipe_table(overview)]
    for group in sorted(g for g in summary if g.startswith("task:")):
        lines += ["", f"<details><summary>{escape(group)}</summary>", "", *_group_block(report, group, limit), "", "</details>"]
    lines += _baseline_lines(report.get("baseline"))
    if report.get("missing"):
        lines += ["", f"Samples with no record: {', '.join(escape(sample) for sample in report['missing'])}"]
    return "\n".join(lines) + "\n"


def _rules_lines(rules: list[dict[str, Any]]) -> list[str]:
    rows = [[rule["rule"], rule["arm"], form_words(rule), str(rule["n"]), number(rule["mean_difference"]), interval(rule["bootstrap95"], sign=True),
             rule["verdict"] + ("" if rule["significant"] else " (not significant)")] for rule in rules]
    lines = pipe_table((["rule", "arm", "form", "n", "mean", "bootstrap 95%", "verdict"], rows))
    notes = [f"- {escape(rule['rule'])} ({escape(rule['arm'])}): {escape(needed_note(rule))}" for rule in rules if needed_note(rule)]
    return lines + (["", *notes] if notes else [])


def _verdict_lines(baseline: dict[str, Any] | None) -> list[str]:
    """First in the comment: the gate's verdict, and the rules that failed it."""
    if not baseline:
        return []
    failing = [rule for rule in baseline["rules"] if rule["verdict"] == "fail"]
    passed = len(baseline["rules"]) - len(failing)
    if not baseline["rules"]:
        return ["**Gate**: no rule; the comparison with the baseline is below the tables.", ""]
    if not failing:
        return [f"**Gate passed**: all {len(baseline['rules'])} rule(s) hold against the baseline.", ""]
    return [f"**Gate FAILED**: {len(failing)} of {len(baseline['rules'])} rule(s) failed ({passed} passed; all rules and the changed samples follow the tables).", "",
            *_rules_lines(failing), ""]


def _baseline_lines(baseline: dict[str, Any] | None) -> list[str]:
    if not baseline:
        return []
    lines = ["", f"### Against the baseline: {'**FAILED**' if baseline['failed'] else 'passed'}", ""]
    if baseline["rules"]:
        lines += _rules_lines(baseline["rules"])
    if new_arms_note(baseline):
        lines += ["", escape(new_arms_note(baseline))]
    for side, key in (("only in this run", "only_in_run"), ("only in the baseline", "only_in_baseline")):
        if baseline.get(key):
            lines += ["", f"Samples {side}: {', '.join(escape(sample) for sample in baseline[key])}"]
    for arm, changes in baseline["arms"].items():
        lines += ["", f"{escape(arm)}: {changes['improved']} improved, {changes['regressed']} regressed, {changes['unchanged']} unchanged"]
        for title, key in (("Regressed", "regressions"), ("Improved", "improvements")):
            if changes[key]:
                lines += ["", f"{title}:", ""]
                for change in changes[key][:REGRESSIONS_SHOWN]:
                    lines.append(f"- {escape(change['id'])} ({escape(change['repo'])}): {escape(change['why'])}")
                if len(changes[key]) > REGRESSIONS_SHOWN:
                    lines.append(f"- … and {len(changes[key]) - REGRESSIONS_SHOWN} more (see the JSON report)")
    return lines
