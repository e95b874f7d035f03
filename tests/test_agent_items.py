"""The built-in agent `arb-closed-tool` as pytest items on the bundled release: one item per sample,
selected by name only, with pytest's selection, reruns, stops, durations, outcomes and exit codes."""

from __future__ import annotations

import json
import re

import pytest

SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
AGENT = "arb-closed-tool"

#: a conftest that breaks the agent on one sample after one grep (its calls so far must be kept)
BROKEN_AGENT = """
from pytest_retrieval_bench.arms.agents.arm import ScriptedAgentArm

original = ScriptedAgentArm.run

def run(self, request, env):
    if request.sample_id == "348c688578a4eb0c8ef20fef":
        env.grep("router")
        raise RuntimeError("the agent broke")
    return original(self, request, env)

ScriptedAgentArm.run = run
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", *args, timeout=300)


def leak_one_query(pytester: pytest.Pytester, sample_id: str) -> None:
    """Put a raw patch into one sample's query: the bench skips such a row for agents."""
    path = pytester.path / SAMPLES
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["id"] == sample_id:
            row["query"]["title"] = "fix\ndiff --git a/x.go b/x.go"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def test_agent_items_run_one_per_sample_with_their_trajectory_and_outcome(release_bench: pytest.Pytester) -> None:
    result = run(release_bench, "-p", "no:cacheprovider", f"--bench-arms={AGENT}", "-v", "--durations=2", "--durations-min=0",
                 "--bench-report=out.json")  # pytest 8.4 hides durations under 5 ms, and agent items can be faster
    out = result.stdout.str()
    assert result.ret == 0, out
    # 35 samples: one unlabeled (skipped by protocol), 28 with gold (HIT or MISS), 6 without (abstain or answer)
    hits = re.findall(r"::(\w+)\[arb-closed-tool\] HIT final (\d)/(\d), (\d+) reads?, ([\d,]+) tokens \(", out)
    misses = re.findall(r"\[arb-closed-tool\] MISS final 0/\d, \d+ reads?, [\d,]+ tokens \(", out)
    assert hits and misses and len(hits) + len(misses) == 28
    assert all(int(gold) >= 1 and int(final) <= 3 for _, gold, final, _, _ in hits)
    assert re.search(rf"(\d+) passed, 1 skipped, {len(misses)} missed in", out)
    assert "slowest 2 durations" in out and re.search(r"s call +release/.*\[arb-closed-tool\]", out)
    report = json.loads((release_bench.path / "out.json").read_text(encoding="utf-8"))
    records = {entry["id"]: entry["arms"][AGENT] for entry in report["details"] if AGENT in entry.get("arms", {})}
    assert len(records) == 34
    hit_id, gold, final, reads, tokens = hits[0]
    trajectory = records[hit_id]["trajectory"]
    assert (trajectory["final_gold"], len(trajectory["final_files"]), trajectory["read_calls"], f"{trajectory['read_tokens']:,}") == (
        int(gold), int(final), int(reads), tokens)
    assert [step["path"] for step in trajectory["steps"]] == [call["path"] for call in trajectory["calls"] if call["tool"] == "read_file" and call["counted"]]
    assert records[hit_id]["ranking"] and set(records[hit_id]["ranking"]) <= set(trajectory["final_files"])
    assert trajectory["detail"]["closed_tool"]["final_files"] == trajectory["final_files"]
    no_gold = [record for entry in report["details"] if entry["stratum"] != "positive" for record in entry["arms"].values()]
    assert len(no_gold) == 6 and all("detail" not in record["trajectory"] for record in no_gold)
    assert all(record["selective_success"] == record["abstained"] for record in no_gold)
    # the session's last tables: the agent's trajectory figures, as the report's section has them
    figures = report["trajectory"][AGENT]
    overview = re.search(r"^trajectory \(group all; agents' final context.*\n.*\n(arb-closed-tool .*)$", out, re.M)
    assert overview, out[-3000:]
    cells = overview[1].split()
    assert cells[:3] == [AGENT, "agent", str(figures["final_any_gold"]["n"])] and cells[3] == f"{figures['final_any_gold']['rate']:.3f}"
    assert cells[-1] == f"{figures['metrics']['overall']['final_file_f1']:.3f}"


def test_the_agent_is_selected_by_name_only_and_by_keywords(release_bench: pytest.Pytester) -> None:
    default = run(release_bench, "-p", "no:cacheprovider", "--co", "-q")
    assert default.ret == 0 and AGENT not in default.stdout.str()
    assert not any(line.startswith("trajectory (") for line in default.stdout.lines)  # a run without agents has no trajectory table
    chosen = run(release_bench, "-p", "no:cacheprovider", "--co", "-q", f"--bench-arms={AGENT},bm25:all", "-k", f"{AGENT} and code2test")
    ids = [line for line in chosen.stdout.lines if "::" in line]
    assert chosen.ret == 0 and len(ids) == 11 and all(line.endswith(f"[{AGENT}]") for line in ids)


def test_a_failing_agent_fails_its_item_only_and_reruns_with_lf_and_stops_with_x(release_bench: pytest.Pytester) -> None:
    release_bench.makeconftest(BROKEN_AGENT)
    leak_one_query(release_bench, "4b1003d6b170ec68f81887f5")
    first = run(release_bench, f"--bench-arms={AGENT},bm25:all", "-rs", "--bench-report=out.json")
    out = first.stdout.str()
    assert first.ret == 1, out
    assert "RuntimeError: the agent broke" in out and re.search(r"1 failed, \d+ passed, 3 skipped, \d+ missed", out)
    assert re.search(r"SKIPPED \[1\] release/.*: query_leakage: the query holds a patch", out)
    report = json.loads((release_bench.path / "out.json").read_text(encoding="utf-8"))
    entries = {entry["id"]: entry for entry in report["details"]}
    broken = entries["348c688578a4eb0c8ef20fef"]["arms"][AGENT]
    assert broken["error"] == "RuntimeError: the agent broke" and broken["ranking"] == []
    assert [call["tool"] for call in broken["trajectory"]["calls"]] == ["grep"] and broken["trajectory"]["final_gold"] == 0
    leaked = entries["4b1003d6b170ec68f81887f5"]
    assert set(leaked["arms"]) == {"bm25:all"} and "skipped" not in leaked and report["partial"] is None
    rerun = run(release_bench, f"--bench-arms={AGENT},bm25:all", "--lf", "-q")
    assert rerun.ret == 1 and re.search(r"^1 failed(, \d+ deselected)? in", rerun.stdout.lines[-1]) and "348c688578a4eb0c8ef20fef[arb-closed-tool]" in rerun.stdout.str()
    stopped = run(release_bench, f"--bench-arms={AGENT}", "-x", "-q", "-p", "no:cacheprovider", "--bench-report=stopped.json")
    assert stopped.ret == 1 and "stopping after 1 failures" in stopped.stdout.str()
    assert json.loads((release_bench.path / "stopped.json").read_text(encoding="utf-8"))["partial"]["not_run"]


def _clockless(value: object) -> object:
    """A report with its clock readings (`wall_ms`, each call's `wall_seconds`) and latency section gone."""
    if isinstance(value, dict):
        return {key: _clockless(item) for key, item in value.items() if key not in ("wall_ms", "wall_seconds", "latency")}
    if isinstance(value, list):
        return [_clockless(item) for item in value]
    return value


def test_agent_items_give_the_same_report_under_xdist(release_bench: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    reports = {}
    for name, mode in (("local", ("-p", "no:xdist")), ("n2", ("-n", "2"))):
        result = run(release_bench, *mode, "-q", "-p", "no:cacheprovider", f"--bench-arms={AGENT}", f"--bench-report={name}.json")
        assert result.ret == 0, result.stdout.str()
        reports[name] = json.loads((release_bench.path / f"{name}.json").read_text(encoding="utf-8"))
    assert reports["local"]["trajectory"][AGENT]["evaluated"] == 28
    assert _clockless(reports["n2"]) == _clockless(reports["local"])
