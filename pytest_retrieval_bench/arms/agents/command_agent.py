"""Command agents: any program as an agent, talking JSON lines over stdin and stdout.

Declared as a command arm is, with `kind = "agent"` (a `[tool.retrieval-bench.arms.NAME]` table or
`--bench-command-arm NAME=JSON`), the closed-tool budgets as fields of their own. Per item the
program is started once and sent the task as its first stdin line; it then writes one action per
line (`{"tool": "grep", "pattern": ...}`, `read_file`, `list_dir`, `submit`) and reads one
observation line back for each, until it submits, runs out of turns, exits or outlives the item's
time limit. A line that is not a JSON object, or names no tool of the protocol, is answered with
the bench's error observation and uses a turn (the bench's agent loop does the same); it is
counted and recorded as a protocol violation, as the bench records its Codex policy's. An agent
that hangs, crashes before submitting or writes a line past the limit fails its item, the calls
it made kept; every other item runs.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Mapping

import orjson

from pytest_retrieval_bench.arms.agents.agent_process import EOF, OVERFLOW, AgentProcess
from pytest_retrieval_bench.arms.agents.arm import AgentArm
from pytest_retrieval_bench.arms.agents.environment import ClosedToolEnvironment, ToolResult
from pytest_retrieval_bench.arms.agents.protocol import ALLOWED_TOOLS, TURNS_EXHAUSTED, Budgets, Episode, refusal_observation
from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.arms.command import ARM_NAME, ExecutableIdentity
from pytest_retrieval_bench.arms.program_call import template_placeholders
from pytest_retrieval_bench.errors import ArmError, InputError

KIND = "agent"
POLICY = "command_agent"
PROTOCOL_VERSION = 1
DEFAULT_TIMEOUT = 300.0
_BUDGETS = tuple(f.name for f in dataclasses.fields(Budgets))
FIELDS = ("kind", "argv", "cwd", "env", "timeout", *_BUDGETS)
_SHOWN_LINE = 200  # characters of a malformed line kept in the record


class AgentRunError(ArmError):
    """An agent item that failed (no start, time limit, a line too long, a crash before submitting),
    with the episode up to the failure: its calls and protocol record are kept."""

    def __init__(self, message: str, episode: Episode):
        super().__init__(message)
        self.episode = episode


@dataclasses.dataclass(frozen=True)
class CommandAgentSpec:
    """A validated `kind = "agent"` table."""

    name: str
    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    timeout: float
    budgets: Budgets

    @classmethod
    def from_mapping(cls, name: str, table: Mapping[str, Any], source: str, base_dir: Path | None = None) -> "CommandAgentSpec":
        """Every field checked; an error names the arm (in `source`) and the field."""
        def bad(field_name: str | None, message: str) -> InputError:
            return InputError(source, message, field=field_name)

        if not ARM_NAME.match(name):
            raise bad(None, f"arm name {name!r} must start with a letter or digit and hold only letters, digits and . _ : + -")
        unknown = sorted(set(table) - set(FIELDS))
        if unknown:
            raise bad(unknown[0], f"unknown field for an agent (known: {', '.join(FIELDS)})")
        argv = table.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(part, str) and part for part in argv):
            raise bad("argv", "expected a non-empty list of non-empty strings")
        if any(template_placeholders(part) for part in argv):
            raise bad("argv", "an agent's argv holds no placeholders: the task comes as the first line of its stdin")
        program = argv[0]
        base = (base_dir or Path.cwd()).absolute()
        if "/" in program and not os.path.isabs(program):
            program = str(base / program)
        env = table.get("env", {})
        if not isinstance(env, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise bad("env", "expected a table of string values")
        cwd = table.get("cwd", ".")
        if not isinstance(cwd, str) or not cwd:
            raise bad("cwd", f"expected a directory (relative to {base}), got {cwd!r}")
        timeout = table.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise bad("timeout", f"expected a positive number of seconds per item, got {timeout!r}")
        try:
            budgets = Budgets(**{key: table[key] for key in _BUDGETS if key in table})
        except ValueError as error:
            field_name = next((key for key in _BUDGETS if key in str(error)), None)
            raise bad(field_name, str(error)) from None
        return cls(name=name, argv=(program, *argv[1:]), cwd=str(base / cwd), env=dict(env), timeout=float(timeout), budgets=budgets)


def task_line(request: Request, budgets: Budgets) -> dict[str, Any]:
    """The first line an agent reads: the task (no gold) and its budgets."""
    return {"protocol": PROTOCOL_VERSION, "task": {"sample_id": request.sample_id, "task_type": request.task_type, "repo": request.repo,
                                                    "base_commit": request.base_commit, "query": request.query_text,
                                                    "changed_file": request.changed_file, "given_files": list(request.given_files)},
            "budgets": budgets.record()}


def observation_line(result: ToolResult, env: ClosedToolEnvironment) -> dict[str, Any]:
    """One call's answer: the bench's observation text, the same facts as values, what is left."""
    line: dict[str, Any] = {"tool": result.tool, "ok": result.ok, "observation": result.observation}
    if not result.ok:
        line["error"] = result.refusal
    for name in ("path", "entries", "hits", "final_files"):
        value = getattr(result, name)
        if value is not None:
            line[name] = value
    if result.ok and result.tool == "read_file":
        line.update(tokens=result.tokens, truncated=result.truncated)
    budgets = env.budgets
    line.update(done=env.done, tool_calls_left=budgets.max_tool_calls - env.tool_calls, grep_calls_left=budgets.max_grep_calls - env.grep_calls,
                read_tokens_left=budgets.max_read_tokens - env.read_tokens, turns_left=budgets.turns - env.turns)
    return line


def _action(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """A line as an action, or why it is none (the kind of protocol violation)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None, "malformed_action"
    if not isinstance(value, dict):
        return None, "malformed_action"
    if str(value.get("tool") or value.get("action") or "").lower() not in ALLOWED_TOOLS:
        return value, "unknown_tool"
    return value, None


class CommandAgentArm(AgentArm):
    """A declared program run as an agent, once per item."""

    ends_own_program = True  # its own time limit ends its program: no in-process alarm (`deadline.arm_time_limit`)

    def __init__(self, spec: CommandAgentSpec):
        self.spec = spec
        self.name = spec.name
        self.budgets = spec.budgets
        self.timeout = spec.timeout
        base = ExecutableIdentity(f"agent-command:{os.path.basename(spec.argv[0])}", spec.argv[0])
        suffix = "" if spec.budgets == Budgets() else f":{sorted(spec.budgets.record().items())}"
        self.identity = lambda: base() + suffix

    def run(self, request: Request, env: ClosedToolEnvironment) -> Episode:
        spec = self.spec
        if not Path(spec.cwd).is_dir():
            raise ArmError(f"agent {self.name}: working directory {spec.cwd} is not a directory")
        process = AgentProcess(spec.argv, Path(spec.cwd), {**os.environ, **spec.env}, spec.timeout)
        protocol: dict[str, Any] = {"version": PROTOCOL_VERSION, "ended": None, "exit_status": None, "invalid_actions": 0, "violations": []}
        started = process.start()
        if started is not None:
            protocol["ended"] = "not_started"
            raise AgentRunError(f"agent {self.name}: {started}", self._finish(env, protocol))
        try:
            protocol["ended"] = self._converse(process, request, env, protocol)
        finally:
            protocol["exit_status"], stderr = process.close()
        problem = self._problem(process, protocol, stderr)
        episode = self._finish(env, protocol)
        if problem:
            raise AgentRunError(problem, episode)
        return episode

    def _converse(self, process: AgentProcess, request: Request, env: ClosedToolEnvironment, protocol: dict[str, Any]) -> str:
        """Lines in, observations out, until the episode ends; how it ended."""
        if not process.send(task_line(request, env.budgets)):
            return "exited"
        while True:
            if env.turns >= env.budgets.turns:
                process.send({"ok": False, "done": True, "error": TURNS_EXHAUSTED, "observation": refusal_observation(TURNS_EXHAUSTED)})
                return "turns_exhausted"
            received = process.receive()
            if received.kind == OVERFLOW:
                return "output_limit"
            if received.kind == EOF:
                return "time_limit" if process.timed_out else "exited"
            if not received.text.strip():
                continue  # a blank line is no action
            action, violation = _action(received.text)
            if violation:
                protocol["invalid_actions"] += 1
                protocol["violations"].append({"turn": env.turns + 1, "kind": violation, "line": received.text[:_SHOWN_LINE]})
            result = env.act(action or {})
            if not process.send(observation_line(result, env)) and not env.done:
                return "exited"
            if env.done:
                return "submitted"

    def _problem(self, process: AgentProcess, protocol: dict[str, Any], stderr: bytes) -> str | None:
        """Why the item fails (None: it is scored as the agent left it); the violation recorded."""
        ended, status = protocol["ended"], protocol["exit_status"]
        if ended == "time_limit" or process.timed_out:
            protocol["ended"] = "time_limit"
            problem = f"exceeded its time limit of {self.spec.timeout:g} s"
        elif ended == "output_limit":
            problem = "wrote a stdout line past 1 MiB: the program was ended"
        elif ended == "exited" and status:
            problem = f"killed by signal {-status}" if status < 0 else f"exited with status {status} before submitting"
        else:
            return None
        protocol["violations"].append({"kind": protocol["ended"] if ended != "exited" else "crashed", "detail": problem})
        lines = [line.strip() for line in stderr.decode("utf-8", errors="replace").splitlines() if line.strip()][:5]
        return f"agent {self.name} {problem}; stderr: {' | '.join(lines) if lines else '(empty)'}"

    def _finish(self, env: ClosedToolEnvironment, protocol: dict[str, Any]) -> Episode:
        return env.finish({"policy": POLICY, "allowed_tools": list(ALLOWED_TOOLS), "max_tool_calls": env.budgets.max_tool_calls,
                           "max_model_turns": env.budgets.turns, "max_read_tokens": env.budgets.max_read_tokens,
                           "max_read_tokens_per_file": env.budgets.max_read_tokens_per_file, "final_k": env.budgets.final_k,
                           "protocol_violations": list(protocol["violations"])}, protocol=protocol)


def is_agent_table(table: Any) -> bool:
    return isinstance(table, Mapping) and table.get("kind") == KIND


def check_kind(table: Any, source: str) -> None:
    """A `kind` other than "agent" or "ranking" is refused (a misspelt kind must not declare a ranking arm)."""
    if isinstance(table, Mapping) and "kind" in table and table["kind"] not in (KIND, "ranking"):
        raise InputError(source, f"expected \"agent\" or \"ranking\", got {table['kind']!r}", field="kind")
