"""The closed-tool environment, the `arb-closed-tool` agent and trajectory scoring against the bench.

Every expected value comes from the bench's own evaluator run on the bundled release
(`tests/fixtures/arb_closed_tool/`, see its README); rows are compared whole, every field.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.arms.agents import scripted
from pytest_retrieval_bench.arms.agents.environment import ClosedToolEnvironment
from pytest_retrieval_bench.arms.agents.protocol import Budgets
from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles
from pytest_retrieval_bench.corpus.chunks import read_chunk_file
from pytest_retrieval_bench.samples.arb import query_text_for_eval, target_gold_files
from pytest_retrieval_bench.scoring.trajectory import (
    closed_tool_detail,
    ranked_context_as_trajectory,
    summarize_closed_tool,
    summarize_trajectory_details,
    trajectory_detail,
)

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "testdata" / "release"
FIXTURES = ROOT / "tests" / "fixtures" / "arb_closed_tool"
BUDGET_NAMES = ("max_tool_calls", "max_read_tokens", "max_read_tokens_per_file", "max_grep_calls", "final_k", "grep_top_k")


def _load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


CLOSED_TOOL = _load("closed_tool.json")
AGENT_LOOP = _load("agent_loop.json")


@pytest.fixture(scope="module")
def snapshot_files() -> dict[str, ToolFiles]:
    """Each bundled snapshot read once, as the plugin reads a release, keyed `repo@commit`."""
    found = {}
    for line in (RELEASE / "corpus" / "synthetic_v1" / "corpus_manifest.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        snapshot = read_chunk_file(RELEASE / row["chunks_path"], row["repo"], row["base_commit"])
        found[f"{row['repo']}@{row['base_commit']}"] = ToolFiles.of_snapshot(snapshot)
    return found


@pytest.fixture(scope="module")
def samples() -> dict[str, dict[str, Any]]:
    lines = (RELEASE / "benchmark" / "synthetic_v1" / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["id"]: row for row in map(json.loads, lines)}


def test_the_agents_see_exactly_the_files_the_bench_shows(snapshot_files: dict[str, ToolFiles]) -> None:
    digests = {key: {path: hashlib.sha256(files.texts[path].encode("utf-8", "surrogatepass")).hexdigest() for path in sorted(files.texts)}
               for key, files in snapshot_files.items()}
    assert digests == AGENT_LOOP["file_digests"]


@pytest.mark.parametrize("run_name", sorted(CLOSED_TOOL["runs"]))
def test_arb_closed_tool_reproduces_every_detail_row(run_name: str, snapshot_files: dict[str, ToolFiles], samples: dict[str, dict[str, Any]]) -> None:
    run = CLOSED_TOOL["runs"][run_name]
    budgets = Budgets(**{name: run["budget"][name] for name in BUDGET_NAMES})
    details = []
    for expected in run["details"]:
        sample = samples[expected["sample_id"]]
        files = snapshot_files[f"{sample['repo']}@{sample['base_commit']}"]
        episode = scripted.run(query_text_for_eval(sample["query"]), files, scripted.environment(files, budgets))
        detail = closed_tool_detail(sample, target_gold_files(sample["task_type"], sample["gold"]), episode.steps, scripted.closed_tool_fields(episode))
        assert detail == expected, expected["sample_id"]
        details.append(detail)
    assert len(details) == run["evaluated"] == 28
    assert summarize_trajectory_details(details) == run["metrics"]
    assert summarize_closed_tool(details) == run["closed_tool_metrics"]


def test_the_runs_reach_every_stop_of_the_policy() -> None:
    """The fixture is only as good as its cases: reads cut to the per-file limit, runs out of read
    tokens or tool calls, no read at all (unread files submitted), gold read and not read."""
    rows = [detail["closed_tool"] for run in CLOSED_TOOL["runs"].values() for detail in run["details"]]
    reads = [entry for row in rows for entry in row["trace"] if entry["tool"] == "read_file"]
    assert any(entry["truncated"] for entry in reads) and any(not entry["truncated"] for entry in reads)
    assert any(row["read_calls"] == 0 and row["final_files"] for row in rows)
    assert any(row["read_tokens"] == row["max_read_tokens"] for row in rows)
    assert any(row["tool_calls"] == row["max_tool_calls"] for row in rows)
    assert {row["first_gold_step"] is None for row in rows} == {True, False}


def _drive(run: dict[str, Any], files: ToolFiles) -> tuple[ClosedToolEnvironment, list[str | None], list[str]]:
    """The recorded actions replayed into an environment with the run's budgets: each turn's
    refusal (None when accepted), and the observations of accepted list/grep/read calls."""
    settings = run["settings"]
    budgets = Budgets(**{name: settings[name] for name in BUDGET_NAMES if name in settings}, max_turns=settings["max_model_turns"])
    env = ClosedToolEnvironment(files, budgets)
    outcomes: list[str | None] = []
    shown: list[str] = []
    for entry in run["detail"]["closed_tool"]["trace"]:
        if entry["tool"] != "model_action":
            continue
        result = env.act(entry["parsed"])
        outcomes.append(result.refusal)
        if result.ok and result.tool != "submit":
            shown.append(result.observation)
        if env.done:
            break
    return env, outcomes, shown


@pytest.mark.parametrize("index", range(len(AGENT_LOOP["runs"])), ids=[f"{run['script']}-{run['sample_id'][:6]}" for run in AGENT_LOOP["runs"]])
def test_the_environment_follows_the_bench_agent_loop(index: int, snapshot_files: dict[str, ToolFiles], samples: dict[str, dict[str, Any]]) -> None:
    run = AGENT_LOOP["runs"][index]
    expected = run["detail"]
    sample = samples[run["sample_id"]]
    env, outcomes, shown = _drive(run, snapshot_files[f"{sample['repo']}@{sample['base_commit']}"])
    episode = env.finish()
    assert shown == run["observations"]
    assert [refusal for refusal in outcomes[:-1] if refusal] == run["errors"]  # a turn's refusal shows in the next turn's prompt
    block = expected["closed_tool"]
    submits = [entry for entry in block["trace"] if entry["tool"] == "submit"]
    assert (episode.tool_calls, episode.grep_calls, episode.read_calls, episode.read_tokens) == (
        block["tool_calls"], block["grep_calls"], block["read_calls"], block["read_tokens"])
    assert episode.final_files == block["final_files"]
    assert episode.fallback == any(entry.get("fallback") for entry in submits)
    assert episode.submitted_files == next((entry["raw_files"] for entry in submits if "raw_files" in entry), None)
    assert episode.steps == expected["steps"]
    reads = [entry for entry in block["trace"] if entry["tool"] == "read_file"]
    assert [(call.path, call.tokens, call.truncated) for call in episode.calls if call.tool == "read_file" and call.counted] == [
        (entry["path"], entry["tokens"], entry["truncated"]) for entry in reads]
    assert trajectory_detail(sample, expected["gold_files"], episode.steps) == {key: value for key, value in expected.items() if key != "closed_tool"}


def test_the_agent_loop_runs_cover_the_hostile_cases() -> None:
    errors = {error.split(":")[0] for run in AGENT_LOOP["runs"] for error in run["errors"]}
    assert errors == {"grep requires a non-empty pattern.", "read_file path not found", "file already read",
                      "Action must be one of list_dir, grep, read_file, submit.", "Tool-call budget exhausted; submit from already read files.",
                      "read token budget exhausted; submit from already read files."}


def test_trajectory_detail_matches_on_spans_blocks_and_supporting_files() -> None:
    document = _load("trajectory_cases.json")
    cases = document["cases"]
    details = [trajectory_detail(case["sample"], case["gold_files"], case["steps"], supporting_files=case["supporting_files"]) for case in cases]
    for case, detail in zip(cases, details):
        assert detail == case["detail"], case["sample"]["id"]
    assert summarize_trajectory_details(details) == document["summary"]
    assert any("line_metrics" in case["detail"] for case in cases) and any("block_metrics" in case["detail"] for case in cases)
    assert any(case["detail"]["metrics"].get("block_recall@trajectory", 0) > 0 for case in cases)
    assert any(0 < case["detail"]["metrics"].get("line_precision@trajectory", 0) < 1 for case in cases)


@pytest.mark.parametrize("top_k", [1, 3, 8])
def test_ranked_context_as_trajectory_matches_the_bench(top_k: int) -> None:
    document = _load("ranked_context.json")
    expected = document[f"top_{top_k}"]
    result = ranked_context_as_trajectory(document["baseline_rows"], top_k)
    assert result == {key: expected[key] for key in ("details", "evaluated", "skipped", "context", "metrics")}
