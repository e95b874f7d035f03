"""An agent as an arm: what an agent item runs in its environment, beside the ranking arms.

A ranking arm returns files; an agent acts through one `ClosedToolEnvironment` per item and is
scored by what it read and submitted (its `Episode`). The item makes the environment (so the
calls made before an agent fails are kept) and hands it to `run`.
"""

from __future__ import annotations

from pytest_retrieval_bench.arms.agents import scripted
from pytest_retrieval_bench.arms.agents.environment import ClosedToolEnvironment
from pytest_retrieval_bench.arms.agents.protocol import Budgets, Episode
from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles
from pytest_retrieval_bench.arms.base import Answer, Request
from pytest_retrieval_bench.errors import ArmError


class AgentArm:
    """Base of the agent arms: a name, budgets, an environment per item and a policy (`run`)."""

    name: str
    budgets: Budgets = Budgets()

    def environment(self, files: ToolFiles) -> ClosedToolEnvironment:
        return ClosedToolEnvironment(files, self.budgets)

    def run(self, request: Request, env: ClosedToolEnvironment) -> Episode:
        """Act on the request through `env` and return `env.finish()` (with any fields of the agent's own)."""
        raise NotImplementedError

    def retrieve(self, request: Request) -> Answer:
        raise ArmError(f"arm {self.name!r} is an agent: it runs as an agent item, not as a ranking (a fusion component)")


class ScriptedAgentArm(AgentArm):
    """`arb-closed-tool`: the bench's scripted grep/read/submit policy, with its submit rule."""

    def __init__(self, budgets: Budgets | None = None):
        self.name = scripted.NAME
        self.budgets = budgets or Budgets()

    def environment(self, files: ToolFiles) -> ClosedToolEnvironment:
        return scripted.environment(files, self.budgets)

    def run(self, request: Request, env: ClosedToolEnvironment) -> Episode:
        return scripted.run(request.query_text, env.files, env)
