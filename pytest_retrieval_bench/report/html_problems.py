"""The report's `snapshot_problems` on the HTML page: a banner above the figures, since a snapshot
with no text file or a gold file its snapshot lacks makes some samples unscorable."""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report.html_parts import esc

KIND_TEXT = {"empty_snapshot": "no text file in the snapshot", "gold_not_in_snapshot": "gold file not in the snapshot",
             "undecodable_path": "file name not valid UTF-8, left out"}


def snapshot_problems_banner(report: dict[str, Any]) -> str:
    """A banner listing every snapshot problem (kind, snapshot, sample, path); empty when there is none."""
    problems = report.get("snapshot_problems") or []
    if not problems:
        return ""
    rows = "".join(f"<tr><td>{esc(KIND_TEXT.get(problem.get('kind'), problem.get('kind')))} (<code>{esc(problem.get('kind'))}</code>)</td>"
                   f"<td><code>{esc(problem.get('snapshot', ''))}</code></td><td><code>{esc(problem.get('sample', ''))}</code></td>"
                   f"<td><code>{esc(problem.get('path', ''))}</code></td></tr>" for problem in problems)
    snapshots = len({problem.get("snapshot") for problem in problems})
    return (f'<div class="banner bad" id="snapshot-problems-banner"><strong>{len(problems)} snapshot problem(s) in {snapshots} snapshot(s)</strong>: '
            "scored as usual, but no arm can rank these gold files."
            "<details open><summary>snapshot problems</summary><table><thead><tr><th>problem</th><th>snapshot</th><th>sample</th>"
            f"<th>path</th></tr></thead><tbody>{rows}</tbody></table></details></div>")
