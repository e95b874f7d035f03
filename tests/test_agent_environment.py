"""The closed-tool environment under hostile agents: every misuse gets the bench's answer, none raises."""

from __future__ import annotations

import itertools
import json
import random
import sys
from typing import Any

import pytest

from pytest_retrieval_bench.arms.agents import observations
from pytest_retrieval_bench.arms.agents.environment import ClosedToolEnvironment
from pytest_retrieval_bench.arms.agents.observations import grep_observation, list_dir_observation, token_prefix
from pytest_retrieval_bench.arms.agents.protocol import Budgets
from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles

TEXTS = {
    "README.md": "Widgets: call f(x) then g(x).",
    "src/app.py": "def main():\n    return run(1, 2)\n",
    "src/util/paths.py": "def clean(path):\n    return path.strip('/')\n",
    "tests/test_app.py": "from src.app import main\n\ndef test_main():\n    assert main() == 3\n",
    "empty.txt": "",
    "docs/notes.md": "See the readme; the readme says it all (readme).",
}


def environment(**budgets: Any) -> ClosedToolEnvironment:
    return ClosedToolEnvironment(ToolFiles(dict(TEXTS)), Budgets(**budgets))


def test_an_agent_looping_past_its_budget_is_refused_then_stopped() -> None:
    env = environment(max_tool_calls=3)
    results = [env.list_dir("") for _ in range(50)]
    assert env.tool_calls == 3 and env.turns == 3 + 4
    assert [result.refusal for result in results[:3]] == [None] * 3
    assert {result.observation for result in results[3:7]} == {"ERROR: Tool-call budget exhausted; submit from already read files."}
    assert {result.observation for result in results[7:]} == {"ERROR: turn budget exhausted; the episode is over."}
    assert env.submit(["README.md"]).refusal is not None  # the bench refuses a submit over the budget too
    episode = env.finish()
    assert episode.final_files == [] and episode.fallback and episode.steps == []
    assert len(episode.calls) == 51 and sum(call.counted for call in episode.calls) == 3


@pytest.mark.parametrize("path", ["../x", "../README.md", "/README.md", "/etc/passwd", "src", "src/", "./README.md", "src/util/../app.py", "", None, 7])
def test_reads_outside_the_snapshot_or_of_a_directory_are_not_found(path: Any) -> None:
    env = environment()
    result = env.read_file(path)
    assert result.observation == f"ERROR: read_file path not found: {'' if path is None else path}"
    assert env.read_tokens == env.tool_calls == 0 and env.calls[0].refusal is not None


def test_list_dir_shows_only_the_snapshot_and_strips_slashes_as_the_bench_does() -> None:
    env = environment()
    assert env.list_dir("").entries == ["README.md", "docs", "empty.txt", "src", "tests"]
    assert env.list_dir("/src/").entries == ["app.py", "util"]
    assert env.list_dir("../").entries == [] and env.list_dir("/etc").entries == []
    assert env.list_dir("").observation == "OBS list_dir path=.\n- README.md\n- docs\n- empty.txt\n- src\n- tests"
    assert env.list_dir("nowhere").observation == "OBS list_dir path=nowhere\n(empty)"


def test_submitting_nothing_keeps_the_first_files_read() -> None:
    env = environment(final_k=1)
    env.read_file("src/app.py")
    env.read_file("README.md")
    assert env.submit([]).final_files == ["src/app.py"]
    episode = env.finish()
    assert not episode.fallback and episode.submitted_files == []
    assert [(step["path"], step["is_final_context"]) for step in episode.steps] == [("src/app.py", True), ("README.md", False)]


def test_submitting_nothing_without_reads_is_an_empty_fallback() -> None:
    env = environment()
    env.grep("main")
    assert env.submit([]).final_files == []
    episode = env.finish()
    assert episode.fallback and episode.final_files == [] and episode.steps == []


def test_unread_files_paths_outside_and_duplicates_are_dropped_from_a_submit() -> None:
    env = environment()
    env.read_file("src/app.py")
    env.read_file("tests/test_app.py")
    result = env.submit(["README.md", "../etc/passwd", "tests/test_app.py", "tests/test_app.py", "", "src/app.py"])
    assert result.final_files == ["tests/test_app.py", "src/app.py"]
    episode = env.finish()
    assert episode.submitted_files == ["README.md", "../etc/passwd", "tests/test_app.py", "src/app.py"]
    assert [step["step"] for step in episode.steps] == [1, 2] and all(step["is_final_context"] for step in episode.steps)


def test_an_episode_is_recorded_as_json_values() -> None:
    env = environment(final_k=2)
    env.grep("main")
    env.read_file("src/app.py")
    env.read_file("nope")
    env.submit(["src/app.py", "README.md"])
    record = env.finish().record()
    assert json.loads(json.dumps(record)) == record
    assert [(call["tool"], call["counted"], call["refusal"]) for call in record["calls"]] == [
        ("grep", True, None), ("read_file", True, None), ("read_file", False, "read_file path not found: nope"), ("submit", True, None)]
    assert (record["final_files"], record["submitted_files"], record["fallback"]) == (["src/app.py"], ["src/app.py", "README.md"], False)
    assert (record["tool_calls"], record["grep_calls"], record["read_calls"], record["read_tokens"]) == (3, 1, 1, 12)
    assert record["steps"] == [{"step": 2, "tool": "read_file", "path": "src/app.py", "start_line": None, "end_line": None, "kind": "file",
                                "symbol": "", "content_hash": "", "is_final_context": True, "is_utilized_context": True}]
    assert record["budgets"]["final_k"] == 2 and record["budgets"]["max_turns"] == 20


def test_only_unread_files_submitted_fall_back_to_the_files_read() -> None:
    env = environment()
    env.read_file("README.md")
    assert env.submit(["src/app.py", "nowhere.py"]).final_files == ["README.md"]


def test_a_second_submit_is_refused_and_changes_nothing() -> None:
    env = environment()
    env.read_file("README.md")
    env.read_file("src/app.py")
    env.submit(["README.md"])
    again = env.submit(["src/app.py"])
    assert again.observation == "ERROR: files already submitted; the episode is over."
    assert env.read_file("tests/test_app.py").refusal == "files already submitted; the episode is over."
    episode = env.finish()
    assert episode.final_files == ["README.md"] and episode.tool_calls == 3


@pytest.mark.parametrize(("pattern", "paths"), [("(x)", ["README.md"]), ("[a-", []), ("*", []), ("\\", []), ("('/')", ["src/util/paths.py"])])
def test_grep_is_a_substring_search_so_no_pattern_is_invalid(pattern: str, paths: list[str]) -> None:
    result = environment().grep(pattern)
    assert result.ok and [hit["path"] for hit in result.hits or []] == paths


def test_grep_refusals_and_limits() -> None:
    env = environment(max_grep_calls=2, grep_top_k=2)
    assert env.grep("   ").observation == "ERROR: grep requires a non-empty pattern."
    assert env.grep(None).refusal == "grep requires a non-empty pattern."
    assert len(env.grep("main", top_k=50).hits or []) == 2  # the agent's top_k is clamped to the budget's
    assert env.grep(" app ", top_k="many").pattern == "app"
    assert env.grep("main").observation == "ERROR: grep-call budget exhausted; read or submit."
    assert (env.grep_calls, env.tool_calls) == (2, 2)


def test_grep_ranks_path_matches_first_then_counts() -> None:
    env = environment()
    assert [(hit["path"], hit["matches"], hit["path_match"]) for hit in env.grep("README").hits or []] == [
        ("README.md", 1, True), ("docs/notes.md", 3, False)]
    assert [(hit["path"], hit["matches"]) for hit in env.grep("app").hits or []] == [("tests/test_app.py", 2), ("src/app.py", 1)]
    assert (env.grep("readme").hits or [])[1]["snippet"] == "See the readme; the readme says it all (readme)."


def test_reads_charge_the_bench_tokens_and_refuse_past_the_budget() -> None:
    env = environment(max_read_tokens=12, max_read_tokens_per_file=9)
    first = env.read_file("tests/test_app.py")  # 18 tokens charged by the punctuation-counting tokenizer
    assert (first.tokens, first.truncated) == (9, True)
    # the text is cut at 9 identifier/number tokens, as the bench cuts it
    assert first.observation == "OBS read_file path=tests/test_app.py tokens=9\nfrom src.app import main\n\ndef test_main():\n    assert main\n[TRUNCATED]"
    assert env.read_file("tests/test_app.py").refusal == "file already read: tests/test_app.py"
    second = env.read_file("src/app.py")
    assert (second.tokens, second.truncated, env.read_tokens) == (3, True, 12)
    assert second.observation.endswith("\ndef main():\n    return\n[TRUNCATED]")
    assert env.read_file("README.md").refusal == "read token budget exhausted; submit from already read files."
    assert env.read_calls == 2


def test_a_read_cut_by_its_charge_may_still_show_the_whole_text() -> None:
    """The bench charges punctuation tokens but cuts at word tokens: 9 charged of 12, all 6 words shown."""
    result = environment(max_read_tokens_per_file=9).read_file("src/app.py")
    assert (result.tokens, result.truncated) == (9, True)
    assert result.observation == "OBS read_file path=src/app.py tokens=9\n" + TEXTS["src/app.py"]


def test_an_empty_file_cannot_be_read() -> None:
    env = environment()
    assert env.read_file("empty.txt").refusal == "read token budget exhausted; submit from already read files."


def test_malformed_actions_are_refused_and_counted_as_turns() -> None:
    env = environment(max_tool_calls=2, max_turns=4)
    for action in ({"action": "delete", "path": "README.md"}, {}, ["grep"], {"tool": "LIST_DIR"}):
        env.act(action)  # type: ignore[arg-type]
    assert [call.refusal for call in env.calls] == ["Action must be one of list_dir, grep, read_file, submit."] * 3 + [None]
    assert env.act({"action": "grep", "pattern": "x"}).refusal == "turn budget exhausted; the episode is over."


def test_submit_with_anything_but_a_list_keeps_no_path() -> None:
    env = environment()
    env.read_file("README.md")
    assert env.submit(42).final_files == ["README.md"]  # no paths: the first file read


def test_every_call_is_recorded_with_its_wall_time() -> None:
    ticks = itertools.count(0.0, 0.5)
    env = ClosedToolEnvironment(ToolFiles(dict(TEXTS)), clock=lambda: next(ticks))
    env.grep("main")
    env.read_file("nope")
    env.read_file("src/app.py")
    records = [call.record() for call in env.calls]
    assert [(record["tool"], record["step"], record["counted"], record["wall_seconds"]) for record in records] == [
        ("grep", 1, True, 0.5), ("read_file", None, False, 0.5), ("read_file", 2, True, 0.5)]
    assert records[2]["path"] == "src/app.py" and records[2]["tokens"] == 12 and records[2]["start_line"] is None


@pytest.mark.parametrize(("fields", "message"), [
    ({"max_tool_calls": 1}, "max_tool_calls must be at least 2"),
    ({"max_read_tokens": 0}, "max_read_tokens must be positive"),
    ({"final_k": 0}, "final_k must be positive"),
    ({"grep_top_k": -1}, "grep_top_k must be positive"),
    ({"max_grep_calls": "8"}, "budget max_grep_calls: expected an integer, got '8'"),
    ({"max_turns": True}, "budget max_turns: expected an integer, got True"),
])
def test_budgets_are_checked(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Budgets(**fields)


def test_observations_cut_long_listings_and_hit_lists_as_the_bench_does() -> None:
    entries = [f"f{index:03}" for index in range(61)]
    assert list_dir_observation("a", entries).endswith("- f059\n... 1 more entries")
    hits = [{"path": f"p{index}", "matches": 1, "snippet": "x" * 300} for index in range(12)]
    text = grep_observation("it's", hits)
    assert text.startswith('OBS grep pattern="it\'s"\n1. p0 matches=1 snippet=' + "x" * 260 + "\n")
    assert text.endswith("... 2 more hits omitted")
    assert token_prefix("a b c", 3) == "a b c" and token_prefix("a, b; c", 2) == "a, b\n[TRUNCATED]" and token_prefix("a", 0) == ""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the counted pattern needs atomic groups (Python 3.11)")
def test_a_read_is_cut_by_one_counted_match_where_token_by_token_cuts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    generator = random.Random(7)
    texts = ["".join(generator.choice("a1_ .Z\u00e9\n9(") for _ in range(generator.randrange(0, 25))) for _ in range(3000)]
    counted = [token_prefix(text, limit) for text in texts for limit in range(7)]
    monkeypatch.setattr(observations, "_ATOMIC", False)
    assert counted == [token_prefix(text, limit) for text in texts for limit in range(7)]
    assert any(text.endswith("[TRUNCATED]") for text in counted) and any(not text.endswith("[TRUNCATED]") and text for text in counted)


def test_a_repeated_grep_gives_fresh_hits() -> None:
    env = environment()
    first = env.grep("main").hits or []
    first[0]["path"] = "changed"
    again = env.grep("MAIN").hits or []
    assert [hit["path"] for hit in again] == ["tests/test_app.py", "src/app.py"] and env.grep_calls == 2


@pytest.mark.parametrize("paths", [
    ["src/HttpServer.go", "lib/http_server.rs", "docs/HTTP.md", "a/\u212aelvin.txt", "b/\u0130stanbul.py", "c/\u03a3\u03a3.md", "README"],
    ["with\0nul/http.py", "http/x.py", "plain.txt"],
])
def test_path_pattern_counts_follow_the_bench_path_score(paths: list[str]) -> None:
    from pytest_retrieval_bench.arms.agents.scripted_query import path_pattern_counts, tokenize

    patterns = ["http", "server", "kelvin", "istanbul", "\u03c3\u03c2", "readme", "x", "nul", "s/h"]
    expected = {index: count for index, path in enumerate(paths)
                if (count := sum(1 for pattern in patterns if pattern in tokenize(path) or pattern in path.lower()))}
    assert path_pattern_counts([path.lower() for path in paths], patterns) == expected
    assert expected  # the case matches something
