"""The report as GitHub-flavoured Markdown, for `$GITHUB_STEP_SUMMARY` or a pull-request comment."""

from __future__ import annotations

from typing import Any

REGRESSIONS_SHOWN = 25


def _number(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def _interval(bounds: Any) -> str:
    return "–" if not bounds else f"[{bounds[0]:+.3f}, {bounds[1]:+.3f}]"


def _hit_key(limit: int) -> str | None:
    return f"hit@{10 if limit >= 10 else 5}" if limit >= 5 else None


def render(report: dict[str, Any], limit: int) -> str:
    lines = ["## Retrieval bench", ""]
    overall = report.get("summary", {}).get("all", {})
    hit = _hit_key(limit)
    lines += [f"| arm | n | positives | {hit or 'hit'} | 95% Wilson | recall@10 | mrr@k | selective | errors | abstentions |",
              "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    for arm, row in overall.items():
        metrics = row["metrics"]
        wilson = row["wilson95"].get(hit) if hit else None
        wilson_text = f"[{wilson[0]:.3f}, {wilson[1]:.3f}]" if wilson else "–"
        lines.append(f"| `{arm}` | {row['n']} | {row['positives']} | {_number(metrics.get(hit)) if hit else '–'} | {wilson_text} | "
                     f"{_number(metrics.get('recall@10'))} | {_number(metrics.get('mrr@k'))} | {_number(row['selective_success'])} | {row['errors']} | {row['abstentions']} |")
    paired = report.get("paired", {}).get("all", {})
    if paired:
        lines += ["", "### Paired differences (group all)", "", "| comparison | metric | mean | bootstrap 95% | wins/losses/ties | p (t-test) |", "|---|---|---:|---|---|---:|"]
        for comparison, metrics in paired.items():
            for metric, result in metrics.items():
                lines.append(f"| {comparison} | {metric} | {result['mean_difference']:+.3f} | {_interval(result['bootstrap95'])} | "
                             f"{result['wins']}/{result['losses']}/{result['ties']} | {_number(result['t_test']['p'])} |")
    baseline = report.get("baseline")
    if baseline:
        lines += ["", f"### Against the baseline: {'**FAILED**' if baseline['failed'] else 'passed'}", ""]
        if baseline["rules"]:
            lines += ["| rule | arm | n | mean difference | bootstrap 95% | verdict |", "|---|---|---:|---:|---|---|"]
            for rule in baseline["rules"]:
                note = "" if rule["significant"] else " (not significant)"
                lines.append(f"| `{rule['rule']}` | `{rule['arm']}` | {rule['n']} | {_number(rule['mean_difference'])} | {_interval(rule['bootstrap95'])} | {rule['verdict']}{note} |")
        for side, key in (("only in this run", "only_in_run"), ("only in the baseline", "only_in_baseline")):
            if baseline.get(key):
                lines += ["", f"Samples {side}: {', '.join(f'`{sample}`' for sample in baseline[key])}"]
        for arm, changes in baseline["arms"].items():
            lines += ["", f"`{arm}`: {changes['improved']} improved, {changes['regressed']} regressed, {changes['unchanged']} unchanged"]
            for title, key in (("Regressed", "regressions"), ("Improved", "improvements")):
                if changes[key]:
                    lines += ["", f"{title}:", ""]
                    for change in changes[key][:REGRESSIONS_SHOWN]:
                        lines.append(f"- `{change['id']}` ({change['repo']}): {change['why']}")
                    if len(changes[key]) > REGRESSIONS_SHOWN:
                        lines.append(f"- … and {len(changes[key]) - REGRESSIONS_SHOWN} more (see the JSON report)")
    if report.get("missing"):
        lines += ["", f"Samples with no record: {', '.join(report['missing'])}"]
    return "\n".join(lines) + "\n"
