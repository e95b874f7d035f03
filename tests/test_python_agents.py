"""Python agents (`@pytest_retrieval_bench.agent`) as items: fixtures, `parametrize` variants,
budgets of their own, the agent's exception shown as a test's, a looping agent refused, not lost."""

from __future__ import annotations

import json
import re

import pytest

from pytest_retrieval_bench.arms.agents.python_agent import agent

CONFTEST = """
import pytest
import pytest_retrieval_bench

@pytest.fixture(scope="session")
def word():
    return "router"

@pytest_retrieval_bench.agent("greedy", max_tool_calls=4, final_k=2)
@pytest.mark.parametrize("reads", [1, 2])
def greedy(bench_request, bench_tools, word, reads):
    hits = bench_tools.grep(word).hits
    for hit in hits[:reads]:
        bench_tools.read_file(hit["path"])
    if bench_request.sample_id == "348c688578a4eb0c8ef20fef":
        raise ValueError("greedy gave up")
    return [hit["path"] for hit in hits]

@pytest_retrieval_bench.agent("looper")
def looper(bench_tools):
    for _ in range(30):
        bench_tools.grep("func")
    bench_tools.read_file("../../etc/passwd")
    bench_tools.submit([])
"""


def test_python_agents_run_as_items_with_their_fixtures_budgets_and_failures(release_bench: pytest.Pytester) -> None:
    release_bench.makeconftest(CONFTEST)
    result = release_bench.runpytest_subprocess("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl", "--bench-corpus=release/corpus/synthetic_v1",
                                                "--bench-arms=greedy,looper", "-k", "code2test", "-v", "-p", "no:cacheprovider",
                                                "--bench-report=out.json", timeout=300)
    out = result.stdout.str()
    assert result.ret == 1, out
    assert re.search(r"2 failed, 3 skipped, 72 deselected, 28 missed in", out) and "ValueError: greedy gave up" in out and "conftest.py:" in out
    assert re.search(r"::348c688578a4eb0c8ef20fef\[greedy\[1\]\] FAILED", out)
    assert re.search(r"\[looper\] MISS final 0/0, 0 reads, 0 tokens", out)
    report = json.loads((release_bench.path / "out.json").read_text(encoding="utf-8"))
    assert report["registration"]["arm_identities"]["greedy[1]"].startswith("agent:conftest.greedy:")
    records = {(entry["id"], arm): record for entry in report["details"] for arm, record in entry["arms"].items()}
    assert {arm for _, arm in records} == {"greedy[1]", "greedy[2]", "looper"} and len(records) == 30  # 11 code2test samples, one unlabeled (skipped)
    one, two = records[("402beedd849ff8293b36f091", "greedy[1]")], records[("402beedd849ff8293b36f091", "greedy[2]")]
    assert [call["tool"] for call in one["trajectory"]["calls"]] == ["grep", "read_file", "submit"]
    assert [call["tool"] for call in two["trajectory"]["calls"]] == ["grep", "read_file", "read_file", "submit"]
    assert one["trajectory"]["budgets"]["max_tool_calls"] == 4 and len(two["trajectory"]["final_files"]) == 2
    loop = records[("402beedd849ff8293b36f091", "looper")]["trajectory"]
    refusals = [call["refusal"] for call in loop["calls"] if call["refusal"]]
    assert loop["grep_calls"] == 8 and loop["read_calls"] == 0 and loop["final_files"] == [] and len(loop["calls"]) == 32
    assert refusals[0] == "grep-call budget exhausted; read or submit." and refusals[-1] == "turn budget exhausted; the episode is over."
    failed = records[("348c688578a4eb0c8ef20fef", "greedy[1]")]
    assert failed["error"] == "ValueError: greedy gave up" and [call["tool"] for call in failed["trajectory"]["calls"]] == ["grep", "read_file"]
    assert report["trajectory"]["greedy[2]"]["budget"]["final_k"] == 2 and report["trajectory"]["greedy[1]"]["errors"] == 1


def test_an_unknown_or_bad_budget_is_refused_at_declaration() -> None:
    with pytest.raises(ValueError, match="unknown budget 'max_calls'"):
        agent("x", max_calls=3)
    with pytest.raises(ValueError, match="max_tool_calls must be at least 2"):
        agent("x", max_tool_calls=1)
