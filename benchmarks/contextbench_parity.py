"""The plugin's ContextBench trajectory scores beside the official evaluator's, figure by figure, on
any number of real rows.

`tests/test_contextbench_traj_parity.py` holds the plugin to the recorded official results of two
rows and the hostile cases; this prints the same comparison for a directory built outside the
project:

    python tests/fixtures/contextbench_traj/build_cases.py --rows PARQUET --out DIR \\
        --row ID=OWNER/NAME --mirror OWNER/NAME=GIT_DIR ...          # the project's venv
    PYTHONPATH=CONTEXTBENCH python tests/fixtures/contextbench_traj/run_oracle.py --out DIR   # the evaluator's venv
    python benchmarks/contextbench_parity.py DIR                     # the project's venv

Each task of `DIR/cases.json` is scored with `score_task` on its tree under `DIR/repos/` and
compared with `DIR/oracle.json` to 1e-9, per granularity: the final context (file, symbol, span,
line: coverage, precision, intersection and sizes), EditLoc, and the trajectory (each step's
coverage, AUC, redundancy, `num_steps`). Where the plugin differs on purpose (docs/formats.md,
"ContextBench trajectories"), the figures are counted apart, not as mismatches: the official's
EditLoc of a task without a `model_patch` (scored on the reference patch), and EditLoc's `recall`
(the official's hit / predicted, which the plugin calls `precision`). Symbol figures are compared
only when tree-sitter is installed. It prints; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from pytest_retrieval_bench.arms.agents.contextbench_records import parse_record
from pytest_retrieval_bench.samples.contextbench import normalize_path
from pytest_retrieval_bench.scoring import contextbench_symbols
from pytest_retrieval_bench.scoring.contextbench_aggregate import evaluator_micro
from pytest_retrieval_bench.scoring.contextbench_context import Gold, GoldSpan
from pytest_retrieval_bench.scoring.contextbench_trajectory import score_task

TOLERANCE = 1e-9
GROUPS = ("file", "symbol", "span", "line", "editloc", "steps")


class DirectoryCheckout:
    """A task's tree on disk, read as the official reads its checkout (nothing outside it)."""

    def __init__(self, root: Path):
        self.root = root.resolve()

    def is_file(self, path: str) -> bool:
        target = (self.root / path).resolve()
        return target.is_relative_to(self.root) and target.is_file()

    def read_bytes(self, path: str) -> bytes | None:
        try:
            return (self.root / path).read_bytes()
        except OSError:
            return None


def gold_of(case: dict[str, Any]) -> Gold:
    def spans(items: list[dict[str, Any]]) -> list[GoldSpan]:
        return [GoldSpan(normalize_path(item["file"]), item["start_line"], item["end_line"]) for item in items]
    return Gold(spans(case["gold"]["init_ctx"]), spans(case["gold"]["add_ctx"]))


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        return {key: leaf for name, item in value.items() for key, leaf in flatten(item, f"{prefix}.{name}" if prefix else name).items()}
    if isinstance(value, list):
        return {key: leaf for index, item in enumerate(value) for key, leaf in flatten(item, f"{prefix}[{index}]").items()}
    return {prefix: value}


def group_of(key: str) -> str:
    """`final.<granularity>.*` by granularity; `editloc.*`; the rest (`trajectory.*`, `num_steps`) is steps."""
    if key.startswith("final."):
        return key.split(".")[1]
    return "editloc" if key.startswith("editloc.") else "steps"


def differs(mine: Any, theirs: Any) -> bool:
    if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)):
        return abs(float(mine) - float(theirs)) > TOLERANCE
    return mine != theirs


def compare_task(case: dict[str, Any], ours: dict[str, Any], official: dict[str, Any], symbols: bool) -> dict[str, Any]:
    """Per group: figures compared and mismatching; and the figures set apart as deliberate differences."""
    skip = ("symbols_absent", "missing_grammar", "instance_id")
    mine = {key: value for key, value in flatten(ours).items() if key not in skip}
    theirs = {key: value for key, value in flatten(official).items() if key not in skip}
    deliberate: list[str] = []
    if not case["prediction"].get("model_patch"):
        deliberate += [key for key in theirs if key.startswith("editloc.") and key not in mine]
    if "editloc.recall" in theirs and "editloc.precision" in mine:
        deliberate.append("editloc.recall")
    if not symbols:
        deliberate += [key for key in theirs if "symbol" in key and key not in mine]
    compared: Counter[str] = Counter()
    wrong: list[str] = []
    for key in sorted(set(mine) | set(theirs)):
        if key in deliberate:
            continue
        compared[group_of(key)] += 1
        if key not in mine or key not in theirs or differs(mine[key], theirs[key]):
            wrong.append(f"{key}: plugin {mine.get(key)!r}, official {theirs.get(key)!r}")
    return {"compared": compared, "mismatches": wrong, "deliberate": deliberate}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path, help="holds cases.json, oracle.json and repos/")
    args = parser.parse_args()
    cases = json.loads((args.directory / "cases.json").read_text())
    oracle = json.loads((args.directory / "oracle.json").read_text())
    symbols = contextbench_symbols.unavailable_reason() is None
    print(f"symbols compared: {symbols} ({contextbench_symbols.unavailable_reason() or 'tree-sitter installed'});"
          f" oracle on Python {oracle['python']} with {oracle['packages']}")
    totals: Counter[str] = Counter()
    wrong_by_group: Counter[str] = Counter()
    ours_all, official_all = [], []
    print(f"{'task':40} " + " ".join(f"{group:>9}" for group in GROUPS) + "  mismatches  set apart")
    for index, case in enumerate(cases, start=1):
        _, prediction = parse_record(case["prediction"], "cases.json", index)
        ours = score_task(gold_of(case), prediction, DirectoryCheckout(args.directory / case["repo"]))
        official = oracle["results"][case["instance_id"]]
        outcome = compare_task(case, ours, official, symbols)
        totals.update(outcome["compared"])
        for line in outcome["mismatches"]:
            wrong_by_group[group_of(line.split(":")[0])] += 1
        print(f"{case['instance_id']:40} " + " ".join(f"{outcome['compared'][group]:9d}" for group in GROUPS)
              + f"  {len(outcome['mismatches']):10d}  {len(outcome['deliberate']):9d}")
        for line in outcome["mismatches"]:
            print(f"    MISMATCH {line}")
        ours_all.append(ours)
        official_all.append({key: value for key, value in official.items() if key != "editloc" or case["prediction"].get("model_patch")})
    print(f"{'all (' + str(len(cases)) + ' tasks)':40} " + " ".join(f"{totals[group]:9d}" for group in GROUPS)
          + f"  {sum(wrong_by_group.values()):10d}   total compared {sum(totals.values())}")
    mine_micro, theirs_micro = flatten(evaluator_micro(ours_all)), flatten(evaluator_micro(official_all))
    if not symbols:
        theirs_micro = {key: value for key, value in theirs_micro.items() if "symbol" not in key}
    micro_wrong = [key for key in sorted(set(mine_micro) | set(theirs_micro))
                   if key not in mine_micro or key not in theirs_micro or differs(mine_micro[key], theirs_micro[key])]
    print(f"evaluator micro aggregate (the official's EditLoc of tasks without a model_patch left out):"
          f" {len(theirs_micro)} figures, {len(micro_wrong)} differ {micro_wrong or ''}")


if __name__ == "__main__":
    main()
