"""Trajectory scoring (the bench's V1.4 trajectory track), figure for figure: `trajectory_detail`,
the closed-tool figures, their aggregates, and a ranking's top files scored as a trajectory.

A trajectory is a list of steps in the bench's normalized format (`step`, `tool`, `path`,
`start_line`, `end_line`, `kind`, `symbol`, `content_hash`, `is_final_context`,
`is_utilized_context`). Retrieved context is every step with a path; final context the steps
marked final (all retrieved ones when none is); utilized context the steps marked utilized (the
final ones when none is). Everything is a pure function of plain dicts, so a detail row computed
here and one the bench writes can be compared key for key.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterable, Mapping, Sequence

from pytest_retrieval_bench.scoring.summation import plain_sum
from pytest_retrieval_bench.scoring.trajectory_lines import block_metrics, f_score, gold_blocks, gold_spans, line_metrics

TRAJECTORY_METRIC_KEYS = tuple(
    [f"{scope}_{target}file_{measure}" for target in ("", "supporting_", "gold_or_supporting_")
     for scope in ("retrieved", "final", "utilized") for measure in ("recall", "precision", "f1")]
    + ["final_usage_drop", "utilization_drop", "trajectory_redundancy"]
    + [f"{kind}_{measure}@trajectory" for kind in ("line", "block") for measure in ("recall", "precision", "f1")]
)
"""The metrics `summarize_trajectory_details` averages, in the bench's order."""


def dedupe_paths(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(value for value in values if value))


def path_values(values: Iterable[Any]) -> list[str]:
    """Strings as they are, objects by their `path`; anything else dropped."""
    paths: list[str] = []
    for value in values:
        if isinstance(value, str):
            paths.append(value)
        elif isinstance(value, dict) and value.get("path"):
            paths.append(str(value["path"]))
    return paths


def supporting_context_files(sample: Mapping[str, Any]) -> list[str]:
    """The sample's supporting files: `supporting_context_files` then `supporting_files`, each at
    top level then under `gold`, distinct."""
    gold = sample.get("gold") or {}
    values: list[Any] = []
    for key in ("supporting_context_files", "supporting_files"):
        if sample.get(key):
            values.extend(sample.get(key) or [])
        if gold.get(key):
            values.extend(gold.get(key) or [])
    return dedupe_paths(path_values(values))


def file_set_metrics(gold_files: Sequence[str], predicted_files: Iterable[str]) -> dict[str, float]:
    gold = set(gold_files)
    predicted = {path for path in predicted_files if path}
    overlap = len(gold & predicted)
    recall = overlap / len(gold) if gold else 0.0
    precision = overlap / len(predicted) if predicted else 0.0
    return {"recall": recall, "precision": precision, "f1": f_score(precision, recall)}


def trajectory_redundancy(steps: Sequence[Mapping[str, Any]]) -> float:
    """The share of steps that repeat an earlier one (same path, lines and content hash)."""
    keys = [(step.get("path"), step.get("start_line"), step.get("end_line"), step.get("content_hash")) for step in steps]
    if not keys:
        return 0.0
    return max(0, len(keys) - len(set(keys))) / len(keys)


def _named(metrics: dict[str, float], prefix: str, targets: Sequence[str], steps: Sequence[Mapping[str, Any]]) -> None:
    values = file_set_metrics(targets, [str(step["path"]) for step in steps])
    for measure in ("recall", "precision", "f1"):
        metrics[f"{prefix}_{measure}"] = values[measure]


def trajectory_detail(sample: Mapping[str, Any], gold_files: list[str], steps: list[dict[str, Any]], *,
                      supporting_files: list[str] | None = None) -> dict[str, Any]:
    """The bench's `trajectory_detail`: one sample's trajectory scored. `sample` holds the labels
    (`id`, `task_type`, `repo`, `base_commit`, and where it has them `gold_spans`, `gold_blocks` and
    supporting files, at top level or under `gold`); `supporting_files`, when given, replaces the
    sample's own. Supporting files that are gold are left out of the supporting figures."""
    retrieved = [step for step in steps if step.get("path")]
    final = [step for step in retrieved if step.get("is_final_context")] or retrieved
    utilized = [step for step in retrieved if step.get("is_utilized_context")] or final
    spans, blocks = gold_spans(sample), gold_blocks(sample)
    gold_set = set(gold_files)
    supporting = [path for path in dedupe_paths(supporting_context_files(sample) if supporting_files is None else supporting_files)
                  if path not in gold_set]
    gold_or_supporting = dedupe_paths([*gold_files, *supporting])
    metrics: dict[str, float] = {}
    recalls = {}
    for scope, scope_steps in (("retrieved", retrieved), ("final", final), ("utilized", utilized)):
        _named(metrics, f"{scope}_file", gold_files, scope_steps)
        recalls[scope] = metrics[f"{scope}_file_recall"]
    metrics["final_usage_drop"] = max(0.0, recalls["retrieved"] - recalls["final"])
    metrics["utilization_drop"] = max(0.0, recalls["retrieved"] - recalls["utilized"])
    metrics["trajectory_redundancy"] = trajectory_redundancy(retrieved)
    if supporting:
        for target, files in (("supporting_file", supporting), ("gold_or_supporting_file", gold_or_supporting)):
            for scope, scope_steps in (("retrieved", retrieved), ("final", final), ("utilized", utilized)):
                _named(metrics, f"{scope}_{target}", files, scope_steps)
    detail: dict[str, Any] = {
        "sample_id": sample.get("id"),
        "task_type": sample.get("task_type"),
        "repo": sample.get("repo"),
        "base_commit": sample.get("base_commit"),
        "gold_files": gold_files,
        "supporting_context_files": supporting,
        "gold_or_supporting_context_files": gold_or_supporting,
        "gold_spans": spans,
        "gold_blocks": blocks,
        "steps": steps,
        "metrics": metrics,
    }
    if spans:
        lines = detail["line_metrics"] = line_metrics(spans, retrieved)
        for measure in ("recall", "precision", "f1"):
            metrics[f"line_{measure}@trajectory"] = lines[f"line_{measure}@8k"]
    if blocks:
        found = detail["block_metrics"] = block_metrics(blocks, retrieved)
        for measure in ("recall", "precision", "f1"):
            metrics[f"block_{measure}@trajectory"] = found[f"block_{measure}@8k"]
    return detail


def first_gold_step(steps: Sequence[Mapping[str, Any]], gold_files: Sequence[str]) -> int | None:
    """The step number of the first step on a gold file, None when no step is."""
    gold = set(gold_files)
    values = [int(step["step"]) for step in steps if step.get("path") in gold and step.get("step") is not None]
    return min(values) if values else None


def closed_tool_detail(sample: Mapping[str, Any], gold_files: list[str], steps: list[dict[str, Any]], fields: Mapping[str, Any], *,
                       supporting_files: list[str] | None = None) -> dict[str, Any]:
    """A closed-tool run's detail row: `trajectory_detail`, and under `closed_tool` the agent's
    `fields` (policy, budgets, counts, final files, trace) with `first_gold_step` added."""
    detail = trajectory_detail(sample, gold_files, steps, supporting_files=supporting_files)
    detail["closed_tool"] = {**fields, "first_gold_step": first_gold_step(steps, gold_files)}
    return detail


def _by_task(details: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for detail in details:
        grouped["overall"].append(detail)
        grouped[str(detail.get("task_type") or "unknown")].append(detail)
    return dict(sorted(grouped.items()))


def average_trajectory_metrics(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Means over the rows of each metric that any row has, a row without it counting 0."""
    if not rows:
        return {"samples": 0}
    present = [key for key in TRAJECTORY_METRIC_KEYS if any(key in row for row in rows)]
    return {"samples": len(rows), **{key: plain_sum(float(row.get(key) or 0.0) for row in rows) / len(rows) for key in present}}


def summarize_trajectory_details(details: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Macro means of the trajectory metrics per task type and `overall`, keys sorted."""
    return {task: average_trajectory_metrics([row["metrics"] for row in rows]) for task, rows in _by_task(details).items()}


def median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(float(value) for value in values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _mean(values: Iterable[Any]) -> float:
    clean = [float(value) for value in values if value is not None]
    return plain_sum(clean) / len(clean) if clean else 0.0


def summarize_closed_tool_rows(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"samples": 0}
    tools = [row["closed_tool"] for row in rows]
    first = [block["first_gold_step"] for block in tools if block.get("first_gold_step") is not None]
    final_hits = [1.0 if any(path in set(row["gold_files"]) for path in row["closed_tool"].get("final_files", [])) else 0.0 for row in rows]
    return {
        "samples": len(rows),
        "any_gold_rate": len(first) / len(rows),
        "final_any_gold_rate": sum(final_hits) / len(rows),
        "median_first_gold_step": median(first),
        "mean_tool_calls": _mean(block.get("tool_calls") for block in tools),
        "mean_grep_calls": _mean(block.get("grep_calls") for block in tools),
        "mean_read_calls": _mean(block.get("read_calls") for block in tools),
        "mean_read_tokens": _mean(block.get("read_tokens") for block in tools),
    }


def summarize_closed_tool(details: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The bench's closed-tool figures per task type and `overall`: how often a gold file was read
    (and when, as a median step), how often one is final, and the mean calls and read tokens."""
    return {task: summarize_closed_tool_rows(rows) for task, rows in _by_task(details).items()}


def ranked_context_as_trajectory(rows: Iterable[Mapping[str, Any]], top_k: int = 3) -> dict[str, Any]:
    """The bench's same-budget contrast (`evaluate_ranked_context_as_trajectory`): each ranking's
    first `top_k` files taken as a trajectory whose every step is final and utilized context.

    A row is a ranking's detail (`sample_id`, `task_type`, `repo`, `base_commit`, `gold_files`,
    `top_files`, and optionally `gold_spans`, `gold_blocks`, `supporting_context_files`). Rows
    without gold or without files are skipped and counted, as the bench does. Returns the
    `details`, `evaluated`, `skipped`, `context` (final file counts) and `metrics`."""
    if top_k <= 0:
        raise ValueError("top_k must be positive")
    details: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    sizes: Counter[int] = Counter()
    for row in rows:
        gold_files = [str(path) for path in row.get("gold_files") or [] if path]
        if not gold_files:
            skipped["no_gold"] += 1
            continue
        top_files = [str(path) for path in row.get("top_files") or [] if path][:top_k]
        if not top_files:
            skipped["no_top_files"] += 1
            continue
        sizes[len(top_files)] += 1
        sample = {"id": row.get("sample_id"), "task_type": row.get("task_type"), "repo": row.get("repo"), "base_commit": row.get("base_commit"),
                  "gold_spans": row.get("gold_spans") or [], "gold_blocks": row.get("gold_blocks") or [],
                  "supporting_context_files": row.get("supporting_context_files") or []}
        steps = [{"step": index, "tool": "ranked-context", "path": path, "start_line": None, "end_line": None, "kind": "file", "symbol": "",
                  "content_hash": "", "is_final_context": True, "is_utilized_context": True} for index, path in enumerate(top_files, start=1)]
        detail = trajectory_detail(sample, gold_files, steps)
        detail["top_k"] = top_k
        details.append(detail)
    total = sum(sizes.values())
    context = {"average_final_files": sum(size * count for size, count in sizes.items()) / total if total else 0.0,
               "final_file_count_distribution": {str(size): count for size, count in sorted(sizes.items())}}
    return {"details": details, "evaluated": len(details), "skipped": dict(skipped), "context": context,
            "metrics": summarize_trajectory_details(details)}
