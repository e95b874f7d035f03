"""ContextBench trajectory scores against the official evaluator's recorded outputs, task by task.

`tests/fixtures/contextbench_traj/oracle.json` is what `contextbench.evaluate.evaluate_instance`
and `aggregate_results` gave on `cases.json` (two real rows with the plugin's built-in agent's
trajectory, hostile hand-made ones); README.md there says how it is regenerated. Every figure is
compared to 1e-9; symbol figures too when tree-sitter is installed (else they must be absent,
with the reason). Each deliberate difference is pinned by an `equivalent_of` case: the plugin's
score of the case equals the official score of the equivalent, and the official scores differ.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.arms.agents.contextbench_records import parse_record
from pytest_retrieval_bench.scoring import contextbench_symbols
from pytest_retrieval_bench.scoring.contextbench_aggregate import evaluator_micro, leaderboard_macro
from pytest_retrieval_bench.scoring.contextbench_trajectory import score_task

FIXTURES = Path(__file__).parent / "fixtures" / "contextbench_traj"
_spec = importlib.util.spec_from_file_location("contextbench_parity", Path(__file__).resolve().parent.parent / "benchmarks" / "contextbench_parity.py")
assert _spec is not None and _spec.loader is not None
parity = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(parity)  # the directory checkout, gold and flattening the benchmark script compares with too
DirectoryCheckout, gold_of, flatten = parity.DirectoryCheckout, parity.gold_of, parity.flatten
SYMBOLS = contextbench_symbols.unavailable_reason() is None


@pytest.fixture(scope="module")
def scored() -> dict[str, Any]:
    cases = json.loads((FIXTURES / "cases.json").read_text())
    oracle = json.loads((FIXTURES / "oracle.json").read_text())
    ours = {}
    for index, case in enumerate(cases, start=1):
        instance_id, prediction = parse_record(case["prediction"], "cases.json", index)
        ours[case["instance_id"]] = score_task(gold_of(case), prediction, DirectoryCheckout(FIXTURES / case["repo"]))
    return {"cases": {case["instance_id"]: case for case in cases}, "oracle": oracle["results"], "ours": ours, "aggregate": oracle["aggregate"]}


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """The official figures the plugin reproduces: symbol ones only with tree-sitter; EditLoc's
    per-task `recall` is the official's hit / predicted, which the plugin calls `precision`."""
    flat = {key: value for key, value in flatten(result).items() if key not in ("symbols_absent", "missing_grammar", "instance_id")}
    if not SYMBOLS:
        flat = {key: value for key, value in flat.items() if "symbol" not in key}
    if "editloc.recall" in flat and "editloc.gold_size" in flat:
        flat.pop("editloc.recall")
    return flat


def mismatches(ours: dict[str, Any], official: dict[str, Any]) -> list[str]:
    mine, theirs = comparable(ours), comparable(official)
    found = [f"{key}: plugin {mine.get(key)!r}, official {theirs.get(key)!r}" for key in sorted(set(mine) | set(theirs))
             if key not in mine or key not in theirs or (mine[key] != theirs[key] if isinstance(mine[key], str)
                                                          else abs(float(mine[key]) - float(theirs[key])) > 1e-9)]
    return found


def test_every_task_equals_the_official_result(scored: dict[str, Any]) -> None:
    compared = 0
    for name, case in scored["cases"].items():
        if "equivalent_of" in case:
            continue
        official = dict(scored["oracle"][name])
        if name == "hostile__reversed-3" or name == "hostile__outside-4":
            continue  # deliberate differences: test_deliberate_differences
        if not case["prediction"].get("model_patch"):  # the official's reference-patch EditLoc is not reproduced
            assert ("editloc" in official) == bool(case["gold"].get("patch")) and "editloc" not in scored["ours"][name]
            official.pop("editloc", None)
        assert mismatches(scored["ours"][name], official) == [], name
        compared += len(comparable(official))
    assert compared > 300  # every granularity, every step, of the real and hostile tasks


def test_deliberate_differences_score_as_the_official_scores_their_equivalents(scored: dict[str, Any]) -> None:
    for name, case in scored["cases"].items():
        original = case.get("equivalent_of")
        if not original:
            continue
        official, equivalent = scored["oracle"][original], scored["oracle"][name]
        assert mismatches(official, equivalent), f"{original}: the official scores the case and its equivalent alike"
        assert mismatches(scored["ours"][original], equivalent) == [], original


def test_the_reference_patch_is_never_scored_as_editloc(scored: dict[str, Any]) -> None:
    """The official scores the dataset's patch when the prediction has none; the plugin does not."""
    assert "editloc" in scored["oracle"]["hostile__reversed-3"]
    assert "editloc" not in scored["ours"]["hostile__reversed-3"]
    ours, official = scored["ours"]["hostile__patch-9"]["editloc"], scored["oracle"]["hostile__patch-9"]["editloc"]
    assert ours["precision"] == pytest.approx(official["recall"], abs=1e-9) == pytest.approx(official["precision"], abs=1e-9)
    assert 0 < ours["intersection"] < ours["pred_size"]  # deleted lines inside and outside the gold


def test_a_task_without_context_is_left_out_as_the_official_leaves_it(scored: dict[str, Any]) -> None:
    assert scored["oracle"]["hostile__no-context-11"]["error"] == scored["ours"]["hostile__no-context-11"]["error"] == "no_context_extracted"


def test_symbols_are_absent_with_the_reason_or_equal(scored: dict[str, Any]) -> None:
    result = scored["ours"]["hostile__symbols-10"]
    if SYMBOLS:
        assert result["final"]["symbol"]["gold_size"] == scored["oracle"]["hostile__symbols-10"]["final"]["symbol"]["gold_size"] > 0
    else:
        assert "symbol" not in result["final"] and "tree-sitter" in result["symbols_absent"]


def test_the_evaluator_aggregate_equals_the_official_one(scored: dict[str, Any]) -> None:
    """`aggregate_results` over the tasks the official and the plugin score alike."""
    same = [name for name, case in scored["cases"].items() if "equivalent_of" not in case and name not in ("hostile__reversed-3", "hostile__outside-4")]
    same += [f"{name}=" for name in ("hostile__reversed-3", "hostile__outside-4")]
    ours = evaluator_micro([scored["ours"][name.rstrip("=")] for name in same])
    official = evaluator_micro([{key: value for key, value in scored["oracle"][name].items()
                                 if key != "editloc" or scored["cases"][name]["prediction"].get("model_patch")} for name in same])
    assert mismatches(ours, official) == []
    everything = evaluator_micro([scored["oracle"][name] for name in scored["oracle"]])
    assert mismatches(everything, scored["aggregate"]) == []  # the module is the official aggregate, key for key
    macro = leaderboard_macro([scored["ours"][name.rstrip("=")] for name in same])
    assert macro["num_valid"] == ours["num_valid"] == len(same) - 1
    assert 0 <= macro["line"]["f1"] <= 1 and macro["file"]["coverage"] != ours["final_file"]["coverage"]
