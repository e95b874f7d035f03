"""The page's trajectory parts: the trajectory tables beside the ranking leaderboard, and each
agent record's trajectory inside its sample (calls in order, reads marked gold, supporting or
other, the final files).

Only reports with a `trajectory` section (runs with agent arms) get any of it; the figures are the
section's (rebuilt from the details by the reader that renders a written report), the steps the
record's own. Every string from the report is escaped.
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report.html_parts import esc, html_table, td_arm, td_num
from pytest_retrieval_bench.report.tables import ARM_HEADERS, LEFT_ALIGNED
from pytest_retrieval_bench.report.trajectory_tables import notes_of, trajectory_tables

STYLE = (".traj .cbbar{display:inline-block;height:8px;background:var(--accent,#1f5fbf);vertical-align:middle;margin-right:4px}"
         ".traj ol{margin:2px 0;padding-left:4px;list-style:none;font:12px ui-monospace,monospace;overflow-wrap:anywhere}"
         ".traj .sup{color:var(--accent,#1f5fbf);font-weight:600}.traj .ref{color:var(--bad)}.traj .fin{font-weight:700}")


def trajectory_tables_html(report: dict[str, Any]) -> str:
    """`<section id="trajectory">` with the bench's V1.4 tables; "" without the section."""
    tables = trajectory_tables(report)
    if not tables:
        return ""
    parts = [f'<section id="trajectory"><h2>Trajectory</h2><style>{STYLE}</style>',
             *(f'<p class="note">{esc(note)}</p>' for note in notes_of(report))]
    for title, headers, rows in tables:
        cells = [[td_arm(cell) if header in ARM_HEADERS else esc(cell) if header in LEFT_ALIGNED else td_num(esc(cell))
                  for cell, header in zip(row, headers)] for row in rows]
        parts.append(f"<h3>{esc(title)}</h3>{html_table(headers, cells, 'traj-table')}")
    return "".join(parts) + "</section>"


def _call_text(call: dict[str, Any]) -> str:
    arguments = call.get("arguments") or {}
    if call.get("tool") == "grep":
        return f"grep {esc(repr(arguments.get('pattern', '')))}"
    if call.get("tool") == "submit":
        return "submit " + ", ".join(esc(path) for path in arguments.get("files") or []) if arguments.get("files") else "submit (nothing)"
    if call.get("tool") in ("list_dir", "read_file"):
        return f"{esc(call['tool'])} {esc(call.get('path') if call.get('path') is not None else arguments.get('path', ''))}"
    return esc(call.get("tool"))


def _call_item(call: dict[str, Any], gold: set[str], supporting: set[str], final: set[str]) -> str:
    """One call; a read's path marked ★ gold, ◆ supporting or plain, ✓ when it is final context."""
    text, css, mark = _call_text(call), "", ""
    if call.get("tool") == "read_file" and not call.get("refusal"):
        path = call.get("path")
        css, mark = ("gold", "★ ") if path in gold else ("sup", "◆ ") if path in supporting else ("", "")
        text += f" · {esc(call.get('tokens'))} tokens" + (" (cut)" if call.get("truncated") else "") + (" · ✓ final" if path in final else "")
    if call.get("refusal"):
        css, text = "ref", f"{text} · refused: {esc(call['refusal'])}"
    body = f"{esc(call.get('step') or '–')}. {mark}{text}"
    return f'<li class="{css}">{body}</li>' if css else f"<li>{body}</li>"


def trajectory_html(record: dict[str, Any], entry: dict[str, Any]) -> str:
    """An agent record's trajectory, folded under its ranking ("" for a ranking arm's record)."""
    trajectory = record.get("trajectory")
    if not isinstance(trajectory, dict):
        return ""
    detail = trajectory.get("detail") or {}
    gold = set(detail.get("gold_files") or entry.get("gold") or [])
    supporting = set(detail.get("supporting_context_files") or []) - gold
    final = list(trajectory.get("final_files") or [])
    calls = "".join(_call_item(call, gold, supporting, set(final)) for call in trajectory.get("calls") or [])
    finals = ", ".join(f'<code class="{"gold" if path in gold else "sup" if path in supporting else ""}">'
                       f'{"★ " if path in gold else "◆ " if path in supporting else ""}{esc(path)}</code>' for path in final) or "none"
    facts = (f'{esc(trajectory.get("tool_calls"))} tool calls · {esc(trajectory.get("read_calls"))} reads · '
             f'{esc(trajectory.get("read_tokens"))} read tokens' + (" · fallback final files" if trajectory.get("fallback") else ""))
    return (f'<details class="traj"><summary>trajectory: {len(trajectory.get("calls") or [])} calls, final {finals}</summary>'
            f'<p class="muted">{facts}; <span class="gold">★ gold</span>, <span class="sup">◆ supporting</span></p>'
            f"<ol>{calls}</ol>{contextbench_steps_html(trajectory)}</details>")


def _step_files(step: dict[str, Any]) -> str:
    files = list(dict.fromkeys([*(step.get("files") or []), *(step.get("spans") or {})]))
    spans = step.get("spans") or {}
    return ", ".join(esc(path) + "".join(f":{esc(item.get('start'))}-{esc(item.get('end'))}" for item in spans.get(path) or []) for path in files) or "(nothing)"


def contextbench_steps_html(trajectory: dict[str, Any]) -> str:
    """On a ContextBench row: each step's context and ContextBench's line coverage of the union so
    far (a bar growing step by step), then the final context's figures ("" elsewhere)."""
    block = trajectory.get("contextbench")
    result = block.get("result") if isinstance(block, dict) else None
    if not isinstance(result, dict):
        return ""
    if "error" in result:
        return f'<p class="muted">ContextBench: not scored ({esc(result["error"])}, left out as the official evaluator leaves it out)</p>'
    recorded = (block.get("prediction") or {}).get("traj_data", {}).get("pred_steps") or []
    items = []
    for index, step in enumerate(result["trajectory"]["steps"]):
        coverage = step["coverage"]
        line = float(coverage.get("line", 0.0))
        shown = _step_files(recorded[index]) if index < len(recorded) else "(the final context)"
        items.append(f'<li>{esc(step["step"])}. <span class="cbbar" style="width:{round(line * 80)}px"></span>line {line:.3f} · '
                     f'file {float(coverage.get("file", 0.0)):.3f} · {shown}</li>')
    final = result["final"]
    figures = " · ".join(f"{name} {float(final[name]['coverage']):.3f}/{float(final[name]['precision']):.3f}" for name in ("file", "symbol", "span", "line") if name in final)
    return (f'<p class="muted">ContextBench line coverage after each step (coverage/precision of the final context: {esc(figures)}; '
            f'AUC line {float(result["trajectory"]["auc_coverage"]["line"]):.3f})</p><ol>{"".join(items)}</ol>')
