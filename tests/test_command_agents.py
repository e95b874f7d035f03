"""Command agents (`kind = "agent"`): programs talking JSON lines, including hostile ones. Each
hostile agent is a small script written here; every case ends its item as the protocol says, the
calls it made are kept, and nothing it started outlives the item."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

from pytest_retrieval_bench.arms.agents.command_agent import AgentRunError, CommandAgentArm, CommandAgentSpec
from pytest_retrieval_bench.arms.agents.environment import ClosedToolEnvironment
from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles
from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.arms.command import parse_command_arm_option
from pytest_retrieval_bench.errors import InputError

TEXTS = {"src/router.py": "def route(path):\n    return path  # router\n", "src/app.py": "import router\n", "README.md": "router docs\n"}

PRELUDE = """import json, sys
task = json.loads(sys.stdin.readline())
def act(action):
    print(json.dumps(action), flush=True)
    return json.loads(sys.stdin.readline())
"""
AGENTS = {
    "good": "hits = act({'tool': 'grep', 'pattern': 'router'})['hits']\n"
            "act({'tool': 'read_file', 'path': hits[0]['path']})\nact({'tool': 'submit', 'files': [hits[0]['path']]})\n",
    "looper": "while True:\n    act({'tool': 'grep', 'pattern': 'router'})\n",
    "outside": "print(act({'tool': 'read_file', 'path': '../../etc/passwd'})['observation'], file=sys.stderr)\n"
               "act({'tool': 'read_file', 'path': '/etc/passwd'})\nact({'tool': 'submit', 'files': ['/etc/passwd']})\n",
    "nothing": "pass\n",
    "unread": "act({'tool': 'grep', 'pattern': 'router'})\nact({'tool': 'submit', 'files': ['src/router.py']})\n",
    "garbage": "while True:\n    print('not json {', flush=True)\n    sys.stdin.readline()\n",
    "crasher": "act({'tool': 'read_file', 'path': 'src/app.py'})\nprint('boom', file=sys.stderr)\nsys.exit(3)\n",
    "hanger": "act({'tool': 'list_dir', 'path': ''})\nimport time\ntime.sleep(600)\n",
    "flood": "sys.stdout.write('x' * (3 << 20))\nsys.stdout.flush()\ntime.sleep(600)\n",
    "deaf": "import time\nwhile True:\n    print(json.dumps({'tool': 'list_dir', 'path': ''}), flush=True)\n",
}


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("agents")
    for name, body in AGENTS.items():
        (folder / f"{name}.py").write_text(PRELUDE.replace("import json, sys", "import json, sys, time") + body, encoding="utf-8")
    return folder


def _request() -> Request:
    return Request(sample_id="s1", task_type="code2test", repo="acme/demo", base_commit="c" * 40, query={}, query_text="the router breaks",
                   changed_file=None, k=20, snapshot=None)  # type: ignore[arg-type]


def _arm(scripts: Path, name: str, **fields: object) -> CommandAgentArm:
    table = {"kind": "agent", "argv": [sys.executable, str(scripts / f"{name}.py")], "timeout": 3, "max_tool_calls": 4, **fields}
    return CommandAgentArm(CommandAgentSpec.from_mapping(name, table, f"test {name}", scripts))


def _run(scripts: Path, name: str, **fields: object):
    arm = _arm(scripts, name, **fields)
    env = ClosedToolEnvironment(ToolFiles(dict(TEXTS)), arm.budgets)
    return arm.run(_request(), env)


def _failed(scripts: Path, name: str, **fields: object) -> AgentRunError:
    with pytest.raises(AgentRunError) as caught:
        _run(scripts, name, **fields)
    return caught.value


def test_a_good_agent_reads_and_submits_through_json_lines(scripts: Path) -> None:
    episode = _run(scripts, "good")
    assert [call.tool for call in episode.calls] == ["grep", "read_file", "submit"] and episode.final_files == ["src/router.py"]
    assert episode.protocol == {"version": 1, "ended": "submitted", "exit_status": 0, "invalid_actions": 0, "violations": []}
    assert episode.extra["policy"] == "command_agent" and episode.extra["protocol_violations"] == []


def test_an_agent_looping_past_its_budget_is_stopped_at_its_turns(scripts: Path) -> None:
    episode = _run(scripts, "looper")
    assert episode.protocol["ended"] == "turns_exhausted" and len(episode.calls) == 8  # max_tool_calls 4 + 4 turns
    assert episode.tool_calls == 4 and [call.refusal for call in episode.calls[4:]] == ["Tool-call budget exhausted; submit from already read files."] * 4
    assert episode.final_files == [] and episode.fallback and episode.submitted_files is None


def test_paths_outside_the_snapshot_are_not_found_and_never_read(scripts: Path) -> None:
    episode = _run(scripts, "outside")
    assert [call.refusal for call in episode.calls[:2]] == ["read_file path not found: ../../etc/passwd", "read_file path not found: /etc/passwd"]
    assert episode.read_calls == 0 and episode.final_files == [] and episode.submitted_files == ["/etc/passwd"]


def test_an_agent_that_submits_nothing_gets_the_fallback(scripts: Path) -> None:
    episode = _run(scripts, "nothing")
    assert episode.protocol["ended"] == "exited" and episode.protocol["exit_status"] == 0 and episode.calls == [] and episode.fallback


def test_a_file_never_read_does_not_count_when_submitted(scripts: Path) -> None:
    episode = _run(scripts, "unread")
    assert episode.submitted_files == ["src/router.py"] and episode.final_files == [] and episode.fallback


def test_garbage_lines_are_answered_with_the_error_observation_counted_and_recorded(scripts: Path) -> None:
    episode = _run(scripts, "garbage")
    protocol = episode.protocol
    assert protocol["ended"] == "turns_exhausted" and protocol["invalid_actions"] == 8 and len(protocol["violations"]) == 8
    assert protocol["violations"][0] == {"turn": 1, "kind": "malformed_action", "line": "not json {"}
    assert all(call.refusal == "Action must be one of list_dir, grep, read_file, submit." for call in episode.calls)
    assert episode.extra["protocol_violations"] == protocol["violations"]


def test_an_agent_that_exits_mid_item_fails_it_with_its_calls_and_stderr_kept(scripts: Path) -> None:
    error = _failed(scripts, "crasher")
    assert str(error) == "agent crasher exited with status 3 before submitting; stderr: boom"
    assert [call.path for call in error.episode.calls] == ["src/app.py"] and error.episode.final_files == ["src/app.py"]
    assert error.episode.protocol["violations"] == [{"kind": "crashed", "detail": "exited with status 3 before submitting"}]


def test_a_hanging_agent_is_ended_at_its_time_limit(scripts: Path) -> None:
    started = time.monotonic()
    error = _failed(scripts, "hanger", timeout=1)
    assert time.monotonic() - started < 6 and "exceeded its time limit of 1 s" in str(error)
    assert error.episode.protocol["ended"] == "time_limit" and error.episode.protocol["exit_status"] is None
    assert [call.tool for call in error.episode.calls] == ["list_dir"]


def test_a_line_flooding_stdout_ends_the_agent(scripts: Path) -> None:
    started = time.monotonic()
    error = _failed(scripts, "flood", timeout=30)
    assert time.monotonic() - started < 10 and "wrote a stdout line past 1 MiB" in str(error)
    assert error.episode.protocol["ended"] == "output_limit" and error.episode.calls == []


def test_an_agent_that_never_reads_its_observations_cannot_stall_the_item(scripts: Path) -> None:
    started = time.monotonic()  # its stdin fills and the run's write blocks, until the time limit ends the agent
    error = _failed(scripts, "deaf", max_tool_calls=20_000, timeout=2)
    assert time.monotonic() - started < 8 and error.episode.protocol["ended"] == "time_limit"
    assert 100 < len(error.episode.calls) < 20_000 and {call.tool for call in error.episode.calls} == {"list_dir"}


def test_a_missing_program_fails_the_item() -> None:
    arm = CommandAgentArm(CommandAgentSpec.from_mapping("ghost", {"kind": "agent", "argv": ["no-such-agent-program-x"]}, "test"))
    with pytest.raises(AgentRunError, match="executable 'no-such-agent-program-x' not found"):
        arm.run(_request(), ClosedToolEnvironment(ToolFiles(dict(TEXTS))))


@pytest.mark.parametrize(("payload", "field", "message"), [
    ('{"kind": "agent", "argv": ["a"], "ranking": "x"}', "ranking", "unknown field for an agent"),
    ('{"kind": "agent", "argv": ["a", "{query}"]}', "argv", "holds no placeholders"),
    ('{"kind": "agent", "argv": ["a"], "max_tool_calls": 1}', "max_tool_calls", "at least 2"),
    ('{"kind": "agent", "argv": ["a"], "final_k": "3"}', "final_k", "expected an integer"),
    ('{"kind": "agent", "argv": ["a"], "timeout": 0}', "timeout", "positive number of seconds"),
    ('{"kind": "agnet", "argv": ["a"], "ranking": "x"}', "kind", 'expected "agent" or "ranking"'),
])
def test_a_bad_agent_declaration_names_its_field(payload: str, field: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_command_arm_option(f"x={payload}")
    assert caught.value.field == field and message in str(caught.value)


def test_a_declaration_chooses_agent_or_ranking_by_kind(tmp_path: Path) -> None:
    agent = parse_command_arm_option('a={"kind": "agent", "argv": ["prog"], "final_k": 2, "timeout": 9}', tmp_path)
    ranking = parse_command_arm_option('r={"kind": "ranking", "argv": ["prog"], "ranking": "x[]"}', tmp_path)
    assert isinstance(agent, CommandAgentArm) and agent.budgets.final_k == 2 and agent.timeout == 9.0
    assert type(ranking).__name__ == "CommandArm"


PYPROJECT = """
[tool.retrieval-bench.arms.good]
kind = "agent"
argv = ["{python}", "agents/good.py"]
max_tool_calls = 6
timeout = 20

[tool.retrieval-bench.arms.crasher]
kind = "agent"
argv = ["{python}", "agents/crasher.py"]

[tool.retrieval-bench.arms.hanger]
kind = "agent"
argv = ["{python}", "agents/hanger.py"]
timeout = 1

[tool.retrieval-bench.arms.llm-agent]
kind = "agent"
argv = ["{python}", "{example}"]
timeout = 60
"""
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "llm_agent.py"
SECRET = "sk-test-0123456789-not-a-real-key"


def test_command_agents_run_as_items_and_a_failing_one_loses_nothing(release_bench: pytest.Pytester, scripts: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    monkeypatch.setenv("AGENT_API_KEY", SECRET)  # a CI secret: the agent's environment has it, the report must not
    monkeypatch.delenv("AGENT_API_URL", raising=False)  # so the example uses its scripted stand-in, offline
    shutil.copytree(scripts, release_bench.path / "agents")
    (release_bench.path / "agents" / "good.py").write_text(  # the release's queries name the router's words
        (scripts / "good.py").read_text(encoding="utf-8").replace("'router'", "'func'"), encoding="utf-8")
    release_bench.makepyprojecttoml(PYPROJECT.replace("{python}", sys.executable.replace("\\", "/")).replace("{example}", EXAMPLE.as_posix()))
    result = release_bench.runpytest_subprocess("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl", "--bench-corpus=release/corpus/synthetic_v1",
                                                "--bench-arms=good,crasher,hanger,llm-agent", "-k", "402beedd849ff8293b36f091 or 348c688578a4eb0c8ef20fef",
                                                "-v", "-p", "no:cacheprovider", "--bench-report=out.json", timeout=300)
    out = result.stdout.str()
    assert result.ret == 1, out
    assert re.search(r"\b4 failed\b", out) and re.search(r"llm-agent\] (HIT|MISS) final \d/\d, \d reads?", out), out
    assert "exited with status 3 before submitting; stderr: boom" in out
    assert "exceeded its time limit of 1 s" in out
    report = json.loads((release_bench.path / "out.json").read_text(encoding="utf-8"))
    records = {(entry["id"], arm): record for entry in report["details"] for arm, record in entry["arms"].items()}
    assert len(records) == 8 and report["registration"]["arm_identities"]["good"].startswith("agent-command:")
    assert all(records[(sample, "good")]["error"] is None for sample in ("402beedd849ff8293b36f091", "348c688578a4eb0c8ef20fef"))
    crashed = records[("402beedd849ff8293b36f091", "crasher")]
    assert crashed["error"].startswith("agent crasher exited with status 3") and [call["tool"] for call in crashed["trajectory"]["calls"]] == ["read_file"]
    assert crashed["trajectory"]["detail"]["closed_tool"]["protocol_violations"][0]["kind"] == "crashed"
    section = report["trajectory"]
    assert section["hanger"]["errors"] == 2 and section["hanger"]["protocol"] == {"violation_samples": 2, "invalid_actions": 0, "ended": {"time_limit": 2}}
    assert section["good"]["protocol"] == {"violation_samples": 0, "invalid_actions": 0, "ended": {"submitted": 2}}
    assert section["llm-agent"]["protocol"]["ended"] == {"submitted": 2} and section["llm-agent"]["errors"] == 0
    assert any(records[(sample, "llm-agent")]["trajectory"]["read_calls"] >= 1 for sample in ("402beedd849ff8293b36f091", "348c688578a4eb0c8ef20fef"))
    written = b"".join(path.read_bytes() for path in release_bench.path.glob("out.json*"))
    assert SECRET.encode() not in written and SECRET not in out
