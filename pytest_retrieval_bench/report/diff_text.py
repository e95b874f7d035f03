"""A report diff (`report.diff.diff_reports`) as terminal lines or as GitHub Markdown for a PR comment."""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report.markdown import escape, pipe_table
from pytest_retrieval_bench.report.tables import Table, fixed_width, interval, signed
from pytest_retrieval_bench.report.trajectory_values import TRAJECTORY_WORDS

HEADERS = ["arm", "metric", "n", "mean", "bootstrap 95%", "verdict", "wins/losses/ties"]


TRAJECTORY_HEADING = f"trajectory ({TRAJECTORY_WORDS}): the paired difference over the samples with gold both scored"


def paired_rows(result: dict[str, Any]) -> Table:
    rows = []
    for arm in result["arms"]:
        for metric, row in result["paired"].get(arm, {}).items():
            rows.append([arm, metric, str(row["n"]), signed(row["mean_difference"]), interval(row["bootstrap95"], sign=True),
                         row.get("verdict") or "-", f"{row['wins']}/{row['losses']}/{row['ties']}"])
    return HEADERS, rows


def trajectory_rows(result: dict[str, Any]) -> Table:
    """The trajectory metrics' paired table, a ranking arm's source (`ranked_top_3`) beside its name."""
    trajectory = result["trajectory"]
    named = {"paired": {f"{arm} ({source})" if source != "agent" else arm: trajectory["paired"][arm] for arm, source in trajectory["sources"].items()}}
    return paired_rows({"arms": list(named["paired"]), **named})


def _change_lines(result: dict[str, Any], quote: Any, title: str = "") -> list[str]:
    lines = []
    for arm in result["arms"]:
        changes = result["changes"].get(arm)
        if changes is None:
            continue
        lines.append(f"{quote(arm)}{title}: {changes['improved']} improved, {changes['regressed']} regressed, {changes['unchanged']} unchanged")
        for change in changes["regressions"] + changes["improvements"]:  # each list worst (largest) first
            lines.append(f"  {change['change']:<9} {quote(change['id'])} ({quote(change.get('repo') or '?')}): {quote(change['why'])}")
    return lines


def _sides(result: dict[str, Any], quote: Any) -> list[str]:
    lines = []
    for words, key in (("arms only in the earlier report", "only_in_before"), ("arms only in the later report", "only_in_after"),
                       ("samples new in the later report", "samples_added"), ("samples removed from the later report", "samples_removed")):
        if result[key]:
            lines.append(f"{words}: {', '.join(quote(item) for item in result[key])}")
    return lines


def diff_lines(result: dict[str, Any], before: str, after: str) -> list[str]:
    """The terminal form: the paired table (later minus earlier), then per-sample changes worst first."""
    lines = [f"retrieval-bench diff: {after} - {before} (group {result['group']}; the bootstrap 95% interval of the paired difference decides)"]
    table = paired_rows(result)
    lines += fixed_width(table) if table[1] else ["no arm both reports hold has a paired sample in this group"]
    if "trajectory" in result:
        lines += [TRAJECTORY_HEADING, *fixed_width(trajectory_rows(result))]
    return lines + _sides(result, str) + _change_lines(result, str) + _trajectory_change_lines(result, str)


def _trajectory_change_lines(result: dict[str, Any], quote: Any) -> list[str]:
    if "trajectory" not in result:
        return []
    trajectory = result["trajectory"]
    return _change_lines({"arms": list(trajectory["changes"]), "changes": trajectory["changes"]}, quote, " (final context)")


def diff_markdown(result: dict[str, Any], before: str, after: str) -> str:
    """The same, as GitHub Markdown: a pipe table, then the changes in a collapsed list."""
    lines = [f"### Retrieval bench: {escape(after)} vs {escape(before)} (group {escape(result['group'])})", ""]
    table = paired_rows(result)
    lines += pipe_table(table) if table[1] else ["No arm both reports hold has a paired sample in this group."]
    if "trajectory" in result:
        lines += ["", escape(TRAJECTORY_HEADING[0].upper() + TRAJECTORY_HEADING[1:]) + ".", "", *pipe_table(trajectory_rows(result))]
    lines += [""] + [f"- {line}" for line in _sides(result, escape)]
    fenced = lambda text: str(text).replace("`", "'")  # noqa: E731 - inside a code block: only a fence could break it
    changes = _change_lines(result, fenced) + _trajectory_change_lines(result, fenced)
    if changes:
        lines += ["", "<details><summary>per-sample changes, worst first</summary>", "", "```", *changes, "```", "", "</details>"]
    return "\n".join(lines).rstrip() + "\n"
