"""ContextBench's two aggregates as tables (leaderboard text, Markdown, the page), one row per
agent and granularity, each table titled with the aggregate it is, so a figure compared with
ContextBench's leaderboard is the leaderboard's kind of mean."""

from __future__ import annotations

from typing import Any

GRANULARITIES = ("file", "symbol", "span", "line")
MICRO_TITLE = "ContextBench, evaluator micro averages (contextbench.evaluate's final_*: sizes pooled over tasks)"
MACRO_TITLE = "ContextBench, leaderboard per-task macro means (each task weighs the same; per-task F1)"
NOTE = ("ContextBench tables: Tasks = tasks scored of those with a trajectory (the official leaves out a task without context); "
        "AUC = mean per-step coverage of the growing union, Redundancy = 1 - |union| / sum of step sizes (both per-task means in either table); "
        "EditLoc only from the agent's own model_patch")


def _value(value: Any) -> str:
    return "-" if value is None else f"{float(value):.4f}"


def contextbench_tables(section: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    arms = sorted(arm for arm, block in section.items() if isinstance(block.get("contextbench"), dict))
    if not arms:
        return []
    micro_rows, macro_rows = [], []
    for arm in arms:
        micro, macro = section[arm]["contextbench"]["evaluator_micro"], section[arm]["contextbench"]["leaderboard_macro"]
        tasks = f"{micro['num_valid']}/{micro['num_total']}"
        for name in GRANULARITIES:
            if f"final_{name}" in micro:
                final = micro[f"final_{name}"]
                micro_rows.append([arm, name, tasks, _value(final["coverage"]), _value(final["precision"]),
                                   _value(micro.get(f"traj_auc_{name}")), _value(micro.get(f"traj_redundancy_{name}"))])
            if name in macro:
                block = macro[name]
                macro_rows.append([arm, name, tasks, *(_value(block[key]) for key in ("coverage", "precision", "f1", "auc_coverage", "redundancy"))])
        if "editloc" in micro:
            edits = f"{(macro.get('editloc') or {}).get('tasks', '-')}/{micro['num_total']}"
            micro_rows.append([arm, "editloc", edits, _value(micro["editloc"]["recall"]), _value(micro["editloc"]["precision"]), "-", "-"])
        if "editloc" in macro:
            macro_rows.append([arm, "editloc", f"{macro['editloc']['tasks']}/{micro['num_total']}", _value(macro["editloc"]["recall"]),
                               _value(macro["editloc"]["precision"]), "-", "-", "-"])
    return [(MICRO_TITLE, ["Run", "Granularity", "Tasks", "Coverage", "Precision", "AUC", "Redundancy"], micro_rows),
            (MACRO_TITLE, ["Run", "Granularity", "Tasks", "Coverage", "Precision", "F1", "AUC", "Redundancy"], macro_rows)]


def contextbench_notes(section: dict[str, Any]) -> list[str]:
    """The tables' note, and each arm's symbol note (why symbol rows are missing)."""
    notes = [f"{arm}: symbol figures absent for {note['tasks']} of {note['of']} tasks: {note['reason']}" for arm, block in sorted(section.items())
             if isinstance(block.get("contextbench"), dict) and isinstance(note := block["contextbench"].get("symbols_absent"), dict)]
    return [NOTE, *notes] if any(isinstance(block.get("contextbench"), dict) for block in section.values()) else []
