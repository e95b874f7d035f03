"""ContextBench trajectories through a run: unified records replayed with `--bench-trajectories`,
a live agent on ContextBench rows, the records, the report's two aggregates, the page and the
reader's errors. Scores themselves are pinned against the official evaluator in
test_contextbench_traj_parity.py; here each record must be what the pure scorer gives."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.arms.agents.contextbench_records import from_unified, parse_record, shown_lines
from pytest_retrieval_bench.arms.agents.replay import read_log
from pytest_retrieval_bench.errors import InputError
from pytest_retrieval_bench.samples import load_samples
from pytest_retrieval_bench.scoring.contextbench_aggregate import evaluator_micro, leaderboard_macro
from pytest_retrieval_bench.scoring.contextbench_context import TextCheckout
from pytest_retrieval_bench.scoring.contextbench_trajectory import flat_metrics, score_task
from pytest_retrieval_bench.bench.contextbench_items import contextbench_gold
from pytest_retrieval_bench.report.build import rounded
from pytest_retrieval_bench.report.gate import compare, parse_rule
from pytest_retrieval_bench.errors import BenchError

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
FIXTURE = TESTDATA / "formats" / "contextbench.jsonl"
GIN_TREE = TESTDATA / "trees" / "acme__gin-lite"
GIN_COMMIT = "5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5"

RECORDS = [
    {"instance_id": "acme__gin-lite-101", "model_patch": "--- a/path.go\n+++ b/path.go\n@@ -20,3 +20,2 @@\n keep\n-gone\n-gone too\n",
     "traj_data": {"pred_steps": [{"files": ["/testbed/gin.go"], "spans": {"/testbed/gin.go": [{"start": 1, "end": 30}]}},
                                  {"files": ["path.go"], "spans": {"path.go": [{"start": 1, "end": 20}]}},
                                  {"files": ["path.go"], "spans": {"path.go": [{"start": 15, "end": 45}], "path_test.go": [{"start": 1, "end": 10}]}}],
                   "pred_files": ["path.go", "path_test.go"], "pred_spans": {"path.go": [{"start": 10, "end": 45}]}}},
    {"instance_id": "acme__gin-lite-102", "traj_data": {"pred_steps": [], "pred_files": ["./middleware/recovery.go"], "pred_spans": {}}},
    {"instance_id": "acme__gin-lite-999", "traj_data": {"pred_files": ["gin.go"]}},
]


def _texts() -> TextCheckout:
    return TextCheckout({path.relative_to(GIN_TREE).as_posix(): path.read_text(encoding="utf-8") for path in GIN_TREE.rglob("*") if path.is_file()})


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run for the module (a pytest subprocess, as pytester's, but shared by its tests)."""
    directory = tmp_path_factory.mktemp("cbrun")
    (directory / "records.json").write_text(json.dumps(RECORDS, indent=1), encoding="utf-8")
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTEST_ADDOPTS", "PYTEST_XDIST"))}
    result = subprocess.run([sys.executable, "-m", "pytest", f"--bench-samples={FIXTURE}", f"--bench-snapshot=acme/gin-lite@{GIN_COMMIT}={GIN_TREE}",
                             "--bench-trajectories", "recorded=records.json", "--bench-arms=recorded,arb-closed-tool", "--bench-report=out.json",
                             "--bench-html=out.html", "-rs", "-v", "-p", "no:cacheprovider"], cwd=directory, env=env, capture_output=True, text=True, timeout=300)
    report = json.loads((directory / "out.json").read_text(encoding="utf-8")) if (directory / "out.json").exists() else {}
    html = (directory / "out.html").read_text(encoding="utf-8") if (directory / "out.html").exists() else ""
    return {"out": result.stdout + result.stderr, "ret": result.returncode, "report": report, "html": html}


def test_replayed_records_are_scored_as_the_scorer_scores_them(run: dict[str, Any]) -> None:
    assert run["ret"] == 0, run["out"]
    samples = {sample.id: sample for sample in load_samples(FIXTURE).samples}
    entries = {entry["id"]: entry for entry in run["report"]["details"]}
    for index, row in enumerate(RECORDS[:2], start=1):
        record = entries[row["instance_id"]]["arms"]["recorded"]
        _, prediction = parse_record(row, "records.json", index)
        expected = score_task(contextbench_gold(samples[row["instance_id"]]), prediction, _texts())
        assert record["trajectory"]["contextbench"]["result"]["final"]["line"] == rounded(expected["final"]["line"])
        for name, value in flat_metrics(expected).items():
            assert record["metrics"][name] == pytest.approx(value, abs=1e-6), name
    first = entries["acme__gin-lite-101"]["arms"]["recorded"]
    steps = first["trajectory"]["contextbench"]["result"]["trajectory"]["steps"]
    assert [step["coverage"]["line"] for step in steps] == sorted(step["coverage"]["line"] for step in steps) and steps[-1]["coverage"]["line"] > 0
    assert first["metrics"]["cb_traj_file_coverage"] == 1.0  # /testbed/ and the spans' files resolved against the snapshot
    assert first["metrics"]["cb_traj_editloc_precision"] == 1.0  # path.go lines 21-22 deleted, inside the gold 12-40
    assert "cb_traj_editloc_precision" not in entries["acme__gin-lite-102"]["arms"]["recorded"]["metrics"]  # no model_patch: no EditLoc
    assert len(entries["acme__gin-lite-102"]["arms"]["recorded"]["trajectory"]["contextbench"]["result"]["trajectory"]["steps"]) == 1
    assert "recorded" not in entries["acme__gin-lite-103"]["arms"]  # no record: skipped, not zero
    assert "no ContextBench record for this sample" in run["out"] and "acme__gin-lite-999" in run["out"]
    assert "acme__gin-lite-101[recorded] HIT final 2/2, 3 steps replayed, ContextBench line coverage 0.537" in run["out"]


def test_the_section_holds_both_aggregates_named_for_what_they_are(run: dict[str, Any]) -> None:
    entries = run["report"]["details"]
    for arm in ("recorded", "arb-closed-tool"):
        results = [entry["arms"][arm]["trajectory"]["contextbench"]["result"] for entry in sorted(entries, key=lambda entry: entry["id"]) if arm in entry["arms"]]
        section = run["report"]["trajectory"][arm]["contextbench"]
        assert section["evaluator_micro"]["num_total"] == len(results) and "final_line" in section["evaluator_micro"]
        assert section["evaluator_micro"]["final_line"]["coverage"] == pytest.approx(evaluator_micro(results)["final_line"]["coverage"], abs=1e-6)
        assert section["leaderboard_macro"]["line"]["f1"] == pytest.approx(leaderboard_macro(results)["line"]["f1"], abs=1e-6)
    summary = run["report"]["summary"]["all"]["recorded"]["metrics"]
    assert summary["cb_traj_line_coverage"] == pytest.approx(run["report"]["trajectory"]["recorded"]["contextbench"]["leaderboard_macro"]["line"]["coverage"], abs=1e-6)
    assert "evaluator micro averages" in run["html"] and "leaderboard per-task macro means" in run["html"]
    assert "ContextBench line coverage after each step" in run["html"]


def test_a_live_agent_reads_are_its_steps(run: dict[str, Any]) -> None:
    entries = [entry for entry in run["report"]["details"] if "arb-closed-tool" in entry["arms"]]
    assert len(entries) == 3
    texts = _texts()
    for entry in entries:
        record = entry["arms"]["arb-closed-tool"]
        reads = [call for call in record["trajectory"]["calls"] if call["tool"] == "read_file" and not call["refusal"]]
        prediction = from_unified(record["trajectory"]["contextbench"]["prediction"])
        assert [step.files for step in prediction.steps] == ([[call["path"]] for call in reads] or [prediction.final.files])
        for call, step in zip(reads, prediction.steps):
            assert step.spans[0].start == 1 and step.spans[0].end == shown_lines(texts.texts[call["path"]], call["tokens"])
        assert prediction.final.files == record["trajectory"]["final_files"]


@pytest.mark.parametrize(("text", "line", "field", "words"), [
    ('[\n{"instance_id": "a", "traj_data": {"pred_files": "x.py"}}\n]', 2, "traj_data.pred_files", "expected a list of path strings"),
    ('{"instance_id": "a", "traj_data": {}}\n{"instance_id": "b", "traj_data": {"pred_steps": [{"spans": {"x.py": [{"start": 1}]}}]}}\n',
     2, "traj_data.pred_steps[0].spans['x.py'][0]", 'expected {"start": int, "end": int}'),
    ('{"instance_id": "a", "traj_data": {"pred_symbols": {"x.py": "f"}}}\n', 1, "traj_data.pred_symbols['x.py']", "a list of symbol names"),
    ('{"instance_id": "a", "traj_data": []}\n', 1, "traj_data", "expected an object"),
    ('{"instance_id": "a", "traj_data": {}, "model_patch": 3}\n', 1, "model_patch", "expected a string"),
    ('{"instance_id": "a", "traj_data": {}}\n{"instance_id": "a", "traj_data": {}}\n', 2, "instance_id", "a second record"),
    ('{"traj_data": {}}\n', 1, "instance_id", "non-empty instance_id"),
])
def test_a_bad_record_names_file_line_and_field(tmp_path: Path, text: str, line: int, field: str, words: str) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_log("mine", path)
    assert (caught.value.line, caught.value.field) == (line, field) and words in str(caught.value)
    assert str(caught.value).startswith(f"{path}:{line}:")


def test_one_arm_is_one_format(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"instance_id": "a", "traj_data": {}}\n', encoding="utf-8")
    (tmp_path / "b.jsonl").write_text('{"sample_id": "a", "path": "x.py"}\n', encoding="utf-8")
    log = read_log("mine", tmp_path / "a.jsonl")
    assert log.format == "contextbench" and set(log.predictions) == {"a"} and log.predictions["a"].steps == [log.predictions["a"].final]
    with pytest.raises(InputError, match="holds arb records, but .*a.jsonl .* holds contextbench ones"):
        read_log("mine", tmp_path / "b.jsonl", log)


def test_a_language_without_a_grammar_leaves_symbols_out_and_names_it() -> None:
    """tree-sitter-languages 1.10.2 has no Swift grammar: the official evaluator stops there; here the
    task's symbol figures are absent, the rest scored, and the language named."""
    from pytest_retrieval_bench.scoring import contextbench_symbols
    from pytest_retrieval_bench.scoring.contextbench_context import ContextStep, Gold, GoldSpan, Span
    from pytest_retrieval_bench.scoring.contextbench_trajectory import Prediction

    checkout = TextCheckout({"App.swift": "func a() {}\nfunc b() {}\n", "util.py": "def f():\n    pass\n"})
    final = ContextStep(["App.swift"], [Span("App.swift", 1, 1)])
    result = score_task(Gold([GoldSpan("App.swift", 1, 2)]), Prediction([final], final), checkout)
    assert "symbol" not in result["final"] and result["final"]["line"]["coverage"] == 0.5
    assert "cb_traj_symbol_coverage" not in flat_metrics(result) and flat_metrics(result)["cb_traj_line_coverage"] == 0.5
    if contextbench_symbols.unavailable_reason() is None:
        assert result["missing_grammar"] == "swift" and "swift" in result["symbols_absent"]
        read = ContextStep(["util.py"], [Span("util.py", 2, 2)])
        python = score_task(Gold([GoldSpan("util.py", 1, 2)]), Prediction([read], read), checkout)
        assert python["final"]["symbol"] == {"coverage": 1.0, "precision": 1.0, "intersection": 1, "gold_size": 1, "pred_size": 1}
    else:
        assert "tree-sitter" in result["symbols_absent"]


def test_cb_traj_metrics_are_paired_and_gated(run: dict[str, Any]) -> None:
    """ContextBench's figures go downstream as the bench's do: paired between agents, and gated."""
    report = run["report"]
    shared = [entry for entry in sorted(report["details"], key=lambda entry: entry["id"])
              if "cb_traj_line_coverage" in entry["arms"].get("recorded", {}).get("metrics", {})
              and "cb_traj_line_coverage" in entry["arms"].get("arb-closed-tool", {}).get("metrics", {})]
    figures = report["trajectory"]["recorded"]["paired"]["arb-closed-tool"]["cb_traj_line_coverage"]
    diffs = [entry["arms"]["recorded"]["metrics"]["cb_traj_line_coverage"] - entry["arms"]["arb-closed-tool"]["metrics"]["cb_traj_line_coverage"]
             for entry in shared]
    assert shared and figures["n"] == len(diffs) and figures["mean_difference"] == pytest.approx(sum(diffs) / len(diffs), abs=1e-6)
    rules = [parse_rule("noninferior:cb_traj_line_coverage>=-0.02:arm=recorded")]
    assert compare(report, report, rules)["rules"][0]["verdict"] == "pass"
    better = copy.deepcopy(report)
    for entry in better["details"]:
        metrics = entry["arms"].get("recorded", {}).get("metrics", {})
        if "cb_traj_line_coverage" in metrics:
            metrics["cb_traj_line_coverage"] += 0.5  # a baseline that covered far more lines
    verdict = compare(report, better, rules)["rules"][0]
    assert verdict["verdict"] == "fail" and verdict["n"] == len([e for e in report["details"] if "cb_traj_line_coverage" in e["arms"].get("recorded", {}).get("metrics", {})])
    with pytest.raises(BenchError, match="cb_traj_line_coverage"):
        parse_rule("cb_traj_line_coverag>=0")
