"""ContextBench's per-task trajectory scores, as `contextbench.evaluate.evaluate_instance` and
`metrics.compute` compute them: the final context's coverage and precision at file, symbol, span
(bytes) and line granularity, the trajectory's per-step union coverage, AUC (the mean over steps)
and redundancy, and EditLoc for a given model patch.

`score_task` returns the official result's shape (`final`, `trajectory`, `editloc`, `num_steps`),
so a result computed here and one the official writes compare key for key, with `symbol` left out
(and `symbols_absent` saying why) when symbols cannot be extracted. `flat_metrics` names each
figure `cb_traj_*` for an item's record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_retrieval_bench.scoring import contextbench_symbols as symbols
from pytest_retrieval_bench.scoring.contextbench_context import (Checkout, ContextStep, Gold, IntervalsByFile, filter_step, intersection_total,
                                                                 merge, step_bytes, step_lines, total)
from pytest_retrieval_bench.scoring.contextbench_editloc import editloc

GRANULARITIES = ("file", "symbol", "span", "line")
NO_CONTEXT = "no_context_extracted"
CB_TRAJ_METRICS = (*(f"cb_traj_{name}_{figure}" for name in GRANULARITIES for figure in ("coverage", "precision", "f1", "auc", "redundancy")),
                   "cb_traj_editloc_precision", "cb_traj_editloc_recall")
"""Every `cb_traj_*` name `flat_metrics` may give (a task has those of the granularities it has)."""


@dataclass
class Prediction:
    """One task's prediction: the trajectory's steps (the final context alone when none is given,
    as the official parser does), the final context, and the model's patch (None: no EditLoc)."""

    steps: list[ContextStep]
    final: ContextStep
    model_patch: str | None = None


def coverage_precision(predicted: float, gold: float, intersection: float) -> tuple[float, float]:
    """Coverage and precision; an empty gold is full coverage, an empty prediction full precision."""
    return (intersection / gold if gold > 0 else 1.0, intersection / predicted if predicted > 0 else 1.0)


def _sizes(intersection: int, gold: int, predicted: int) -> dict[str, Any]:
    coverage, precision = coverage_precision(predicted, gold, intersection)
    return {"coverage": coverage, "precision": precision, "intersection": intersection, "gold_size": gold, "pred_size": predicted}


class _Symbols:
    """The symbol side of one task: extracted while tree-sitter can, given up (with the reason)
    at the first thing it cannot do, so symbol figures are whole or absent, never partial."""

    def __init__(self, checkout: Checkout):
        self.checkout = checkout
        self.absent = symbols.unavailable_reason()
        self.missing_language: str | None = None

    def of(self, step: ContextStep | None, spans: IntervalsByFile) -> set[symbols.Symbol]:
        if self.absent:
            return set()
        try:
            if step is not None and step.symbols:
                return symbols.symbols_named(step.symbols, self.checkout)
            return symbols.symbols_in_spans(spans, self.checkout)
        except symbols.MissingGrammar as error:
            self.missing_language = error.language
            self.absent = f"no tree-sitter grammar for {error.language} in tree-sitter-languages (a file of the task is {error.language})"
            return set()


def _trajectory(steps: list[ContextStep], gold_files: set[str], gold_symbols: set[symbols.Symbol], gold_spans: IntervalsByFile,
                gold_lines: IntervalsByFile, checkout: Checkout, extract: _Symbols) -> dict[str, Any]:
    """`compute_trajectory_metrics`: coverage of the union after each step, its mean, redundancy."""
    union_files: set[str] = set()
    union_symbols: set[symbols.Symbol] = set()
    union_spans: IntervalsByFile = {}
    union_lines: IntervalsByFile = {}
    sums = dict.fromkeys(GRANULARITIES, 0)
    per_step = []
    gold_bytes, gold_line_count = total(gold_spans), total(gold_lines)
    for number, step in enumerate(steps, start=1):
        lines, spans = step_lines(step), step_bytes(step, checkout)
        step_symbols = extract.of(step, spans)
        union_files |= set(step.files)
        union_symbols |= step_symbols
        for path, intervals in spans.items():
            union_spans[path] = merge(union_spans.get(path, []) + intervals)
        for path, intervals in lines.items():
            union_lines[path] = merge(union_lines.get(path, []) + intervals)
        coverage = {
            "file": len(union_files & gold_files) / len(gold_files) if gold_files else 1.0,
            "symbol": len(union_symbols & gold_symbols) / len(gold_symbols) if gold_symbols else 1.0,
            "span": intersection_total(union_spans, gold_spans) / gold_bytes if gold_bytes > 0 else 1.0,
            "line": ((intersection_total(union_lines, gold_lines) / gold_line_count if gold_line_count > 0 else 1.0) if gold_lines else 0.0),
        }
        per_step.append({"step": number, "coverage": coverage})
        sums["file"] += len(step.files)
        sums["symbol"] += len(step_symbols)
        sums["span"] += total(spans)
        sums["line"] += total(lines)
    unions = {"file": len(union_files), "symbol": len(union_symbols), "span": total(union_spans), "line": total(union_lines)}
    count = len(steps)
    return {
        "steps": per_step,
        "auc_coverage": {name: sum(step["coverage"][name] for step in per_step) / count if count else 0.0 for name in GRANULARITIES},
        "redundancy": {name: 1 - unions[name] / sums[name] if sums[name] > 0 else 0.0 for name in GRANULARITIES},
    }


def score_task(gold: Gold, prediction: Prediction, checkout: Checkout) -> dict[str, Any]:
    """One task's official result, or `{"error": "no_context_extracted"}` when the final context
    names no file and no span of the checkout (the official then leaves the task out of its averages)."""
    steps = [filter_step(step, checkout) for step in prediction.steps]
    final = filter_step(prediction.final, checkout)
    if not final.files and not final.spans:
        return {"error": NO_CONTEXT}
    extract = _Symbols(checkout)
    gold_files, gold_spans, gold_lines = gold.files(), gold.byte_spans(checkout), gold.lines()
    gold_symbols = extract.of(None, gold_spans)
    final_spans, final_lines = step_bytes(final, checkout), step_lines(final)
    final_symbols = extract.of(final, final_spans)
    final_files = set(final.files)
    result: dict[str, Any] = {
        "num_steps": len(steps),
        "final": {
            "file": _sizes(len(final_files & gold_files), len(gold_files), len(final_files)),
            "symbol": _sizes(len(final_symbols & gold_symbols), len(gold_symbols), len(final_symbols)),
            "span": _sizes(intersection_total(final_spans, gold_spans), total(gold_spans), total(final_spans)),
            "line": _sizes(intersection_total(final_lines, gold_lines), total(gold_lines), total(final_lines)),
        },
        "trajectory": _trajectory(steps, gold_files, gold_symbols, gold_spans, gold_lines, checkout, extract),
    }
    if prediction.model_patch:
        sizes = editloc(prediction.model_patch, gold_lines)
        result["editloc"] = {**sizes, "precision": sizes["intersection"] / sizes["pred_size"] if sizes["pred_size"] else 0.0,
                             "recall": sizes["intersection"] / sizes["gold_size"] if sizes["gold_size"] else 0.0}
    if extract.absent:
        _drop_symbols(result)
        result["symbols_absent"] = extract.absent
        if extract.missing_language:
            result["missing_grammar"] = extract.missing_language
    return result


def _drop_symbols(result: dict[str, Any]) -> None:
    del result["final"]["symbol"]
    trajectory = result["trajectory"]
    for step in trajectory["steps"]:
        del step["coverage"]["symbol"]
    del trajectory["auc_coverage"]["symbol"], trajectory["redundancy"]["symbol"]


def f1(coverage: float, precision: float) -> float:
    """The leaderboard's per-task F1 (the harmonic mean; 0 when both are 0)."""
    return 2 * coverage * precision / (coverage + precision) if coverage + precision else 0.0


def flat_metrics(result: dict[str, Any]) -> dict[str, float]:
    """The task's figures as `cb_traj_*` metrics (none for a task the official leaves out)."""
    if "error" in result:
        return {}
    metrics: dict[str, float] = {}
    for name in GRANULARITIES:
        final = result["final"].get(name)
        if final is None:
            continue
        metrics[f"cb_traj_{name}_coverage"] = final["coverage"]
        metrics[f"cb_traj_{name}_precision"] = final["precision"]
        metrics[f"cb_traj_{name}_f1"] = f1(final["coverage"], final["precision"])
        metrics[f"cb_traj_{name}_auc"] = result["trajectory"]["auc_coverage"][name]
        metrics[f"cb_traj_{name}_redundancy"] = result["trajectory"]["redundancy"][name]
    if "editloc" in result:
        metrics["cb_traj_editloc_precision"] = result["editloc"]["precision"]
        metrics["cb_traj_editloc_recall"] = result["editloc"]["recall"]
    return metrics
