"""What the environment costs a command agent per tool call, beside the program's own time.

Used by `benchmarks/agents.py --command-agent`. Each row is run twice as a command agent (the
plugin's `CommandAgentArm`, a program over JSON lines, started per item): once replaying every call
`arb-closed-tool` made on the row (its list_dir, greps, reads and submit, the same arguments), once
submitting at once. The run's CPU (this process, every thread: the environment, the JSON lines, the
pipes) of the second is the per-item cost (starting and ending the program); the difference over
the difference in calls is the cost per call. CPU inside the environment's `act` (the tool's own
work) is clocked apart, so the rest is the protocol's (action parsing, the observation line, pipe
I/O). The program's CPU (its interpreter start-up included) is read from `RUSAGE_CHILDREN`.

The replayed calls must give what they gave `arb-closed-tool`: each call's tool, arguments,
refusal, tokens and truncation are compared, and the rows whose calls differ are counted.

Run as `python agent_calls.py --play ACTIONS.json` it is the agent program itself: it reads the
task line, sends the row's actions one line each, and reads (and parses) each observation line.
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # the program (`--play`) imports nothing of the package: its time is its own
    from pytest_retrieval_bench.arms.agents.protocol import Episode, ToolCall
    from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles
    from pytest_retrieval_bench.arms.base import Request


def actions_of(episode: Episode) -> list[dict[str, Any]]:
    """The calls an episode made, as the actions a command agent sends."""
    return [{"tool": call.tool, **call.arguments} for call in episode.calls]


def _call_facts(calls: list[ToolCall]) -> list[tuple[Any, ...]]:
    return [(call.tool, call.arguments, call.path, call.refusal, call.tokens, call.truncated, call.step) for call in calls]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _request(sample: dict[str, Any], query_text: str) -> Request:
    from pytest_retrieval_bench.arms.base import Request

    return Request(sample_id=sample["id"], task_type=sample["task_type"], repo=sample["repo"], base_commit=sample["base_commit"],
                   query={}, query_text=query_text, changed_file=None, k=3, snapshot=None)  # type: ignore[arg-type]


def measure(rows: list[tuple[dict[str, Any], str, Episode, Callable[[], ToolFiles]]]) -> dict[str, Any]:
    """`rows`: (sample, query text, the `arb-closed-tool` episode, its snapshot's files made
    ready as the run under test has them). The figures, summed over rows."""
    from pytest_retrieval_bench.arms.agents.command_agent import CommandAgentArm, CommandAgentSpec
    from pytest_retrieval_bench.arms.agents.environment import ClosedToolEnvironment

    with tempfile.TemporaryDirectory() as scratch:
        plays = {"replay": Path(scratch) / "replay.json", "submit": Path(scratch) / "submit.json"}
        plays["replay"].write_text(json.dumps({sample["id"]: actions_of(episode) for sample, _, episode, _ in rows}), encoding="utf-8")
        plays["submit"].write_text(json.dumps({sample["id"]: [{"tool": "submit", "files": []}] for sample, _, _, _ in rows}), encoding="utf-8")
        arms = {name: CommandAgentArm(CommandAgentSpec.from_mapping(
                    name, {"kind": "agent", "argv": [sys.executable, str(Path(__file__).resolve()), "--play", str(path)], "timeout": 60},
                    "benchmarks/agent_calls.py", Path(scratch))) for name, path in plays.items()}
        totals = {f"{name}_{figure}": 0.0 for name in plays for figure in ("cpu", "act_cpu", "program_cpu", "wall", "calls")}
        differing = []
        for sample, query_text, episode, files in rows:
            for name, arm in arms.items():
                env = ClosedToolEnvironment(files(), arm.budgets)
                act, act_cpu = env.act, [0.0]

                def clocked(action: Any, act: Callable[[Any], Any] = act, act_cpu: list[float] = act_cpu) -> Any:
                    started = time.process_time()
                    try:
                        return act(action)
                    finally:
                        act_cpu[0] += time.process_time() - started
                env.act = clocked  # type: ignore[method-assign]
                children, cpu, wall = _children_cpu(), time.process_time(), time.perf_counter()
                replayed = arm.run(_request(sample, query_text), env)
                totals[f"{name}_cpu"] += time.process_time() - cpu
                totals[f"{name}_wall"] += time.perf_counter() - wall
                totals[f"{name}_program_cpu"] += _children_cpu() - children
                totals[f"{name}_act_cpu"] += act_cpu[0]
                totals[f"{name}_calls"] += len(replayed.calls)
                if name == "replay" and _call_facts(replayed.calls) != _call_facts(episode.calls):
                    differing.append(sample["id"])
    calls = totals["replay_calls"] - totals["submit_calls"]
    per_call = (totals["replay_cpu"] - totals["submit_cpu"]) / max(1.0, calls)
    act_per_call = (totals["replay_act_cpu"] - totals["submit_act_cpu"]) / max(1.0, calls)
    return {
        "command_rows": len(rows), "command_calls": int(totals["replay_calls"]), "command_rows_with_other_calls": differing,
        "command_env_ms_per_call": 1000 * per_call, "command_tool_ms_per_call": 1000 * act_per_call,
        "command_protocol_ms_per_call": 1000 * (per_call - act_per_call),
        "command_item_ms": 1000 * totals["submit_cpu"] / max(1, len(rows)),
        "command_program_ms_per_call": 1000 * (totals["replay_program_cpu"] - totals["submit_program_cpu"]) / max(1.0, calls),
        "command_program_item_ms": 1000 * totals["submit_program_cpu"] / max(1, len(rows)),
        "command_wall_ms_per_call": 1000 * (totals["replay_wall"] - totals["submit_wall"]) / max(1.0, calls),
    }


def play(actions_path: Path) -> int:
    """The agent program: the row's actions, one line each, each observation read and parsed."""
    plan = json.loads(actions_path.read_text(encoding="utf-8"))
    task = json.loads(sys.stdin.readline())
    for action in plan[task["task"]["sample_id"]]:
        sys.stdout.write(json.dumps(action) + "\n")
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line or json.loads(line).get("done"):
            break
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--play":
        raise SystemExit(play(Path(sys.argv[2])))
    raise SystemExit("usage: agent_calls.py --play ACTIONS.json (benchmarks/agents.py --command-agent runs it)")
