"""Agents written as Python functions whose parameters are pytest fixtures.

    @pytest_retrieval_bench.agent("my-agent", max_tool_calls=12)
    def my_agent(bench_request, bench_tools):
        hits = bench_tools.grep("panic").hits
        for hit in hits[:3]:
            bench_tools.read_file(hit["path"])
        bench_tools.submit([hit["path"] for hit in hits[:3]])

`bench_request` is the task (what a ranking arm gets), `bench_tools` the item's closed-tool
environment under the agent's budgets (the bench's defaults, each replaceable here). The
function is the item's test function, as for a fixture arm: its other fixtures, marks and
`parametrize` work the same way (each variant an agent of its own). It may return the files to
submit instead of calling `submit`; without a submit, the bench's fallback picks the final files.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

from pytest_retrieval_bench.arms.agents.arm import AgentArm
from pytest_retrieval_bench.arms.agents.environment import ClosedToolEnvironment
from pytest_retrieval_bench.arms.agents.protocol import Budgets, Episode
from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles
from pytest_retrieval_bench.arms.fixture_arms import FixtureArm, arm
from pytest_retrieval_bench.errors import ArmError

AGENT_ATTRIBUTE = "__retrieval_bench_agent__"
TOOLS_FIXTURE = "bench_tools"


def agent(name: str, *, identity: str | None = None, timeout: float | None = None, **budgets: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a function as the agent `name`; its parameters are fixtures (`bench_request` and
    `bench_tools` among them). `budgets` are `Budgets` fields (`max_tool_calls`, `max_read_tokens`,
    `max_read_tokens_per_file`, `max_grep_calls`, `final_k`, `grep_top_k`, `max_turns`);
    `identity` and `timeout` are as for `pytest_retrieval_bench.arm`."""
    unknown = sorted(set(budgets) - {f.name for f in dataclasses.fields(Budgets)})
    if unknown:
        raise ValueError(f"pytest_retrieval_bench.agent({name!r}): unknown budget {unknown[0]!r} "
                         f"(known: {', '.join(f.name for f in dataclasses.fields(Budgets))})")
    checked = Budgets(**budgets)
    declare = arm(name, identity=identity, timeout=timeout)

    def declare_agent(function: Callable[..., Any]) -> Callable[..., Any]:
        declare(function)
        setattr(function, AGENT_ATTRIBUTE, checked)
        return function

    return declare_agent


@dataclass
class FixtureAgentArm(FixtureArm, AgentArm):
    """One variant of a Python agent: a fixture arm whose item runs an agent through `bench_tools`."""

    budgets: Budgets = field(default_factory=Budgets)

    def environment(self, files: ToolFiles) -> ClosedToolEnvironment:
        return ClosedToolEnvironment(files, self.budgets)

    def identity(self) -> str:
        base = FixtureArm.identity(self)
        return f"agent:{base.partition(':')[2]}" + ("" if self.budgets == Budgets() else f":{sorted(self.budgets.record().items())}")

    def retrieve(self, request: Any) -> Any:
        raise ArmError(f"arm {self.name!r} is an agent: it runs only as an agent item")

    def call(self, arguments: dict[str, Any], env: ClosedToolEnvironment) -> Episode:
        """Run the function with its fixtures; returned files are submitted when it did not submit."""
        result = self.function(**arguments)
        if not env.done and isinstance(result, (list, tuple)):
            env.submit(list(result))
        elif result is not None and not isinstance(result, (list, tuple)):
            raise ArmError(f"agent {self.name} returned {type(result).__name__}; return nothing (after bench_tools.submit) or the files to submit")
        return env.finish()


def as_agent(candidate: FixtureArm) -> FixtureArm:
    """A fixture arm declared with `@agent(...)` as the agent it is; any other as it is."""
    budgets = getattr(candidate.declared, AGENT_ATTRIBUTE, None)
    if not isinstance(budgets, Budgets):
        return candidate
    return FixtureAgentArm(**{f.name: getattr(candidate, f.name) for f in dataclasses.fields(FixtureArm)}, budgets=budgets)
