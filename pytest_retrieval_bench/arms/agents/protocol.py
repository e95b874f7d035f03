"""The Agent Retrieval Bench's closed-tool protocol: its tools, budgets, refusals and record shapes.

An agent acquires context with four tools only (`list_dir`, `grep`, `read_file`, `submit`) under
budgets; its trajectory is scored from the bench's normalized steps. Everything here is the bench's
(`closed_tool_eval`, `trajectory`) unless a docstring says otherwise, so that a trajectory recorded
here and one recorded by the bench score alike.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ALLOWED_TOOLS = ("list_dir", "grep", "read_file", "submit")
FORBIDDEN = ("embedding_index", "repo_map_index", "edit", "test_execution", "network", "fix_commit")

# The bench's refusals, word for word (its model loop sends each back as `ERROR: <text>`).
UNKNOWN_ACTION = "Action must be one of list_dir, grep, read_file, submit."
TOOL_BUDGET_EXHAUSTED = "Tool-call budget exhausted; submit from already read files."
EMPTY_PATTERN = "grep requires a non-empty pattern."
READ_NOT_FOUND = "read_file path not found: {path}"
ALREADY_READ = "file already read: {path}"
READ_BUDGET_EXHAUSTED = "read token budget exhausted; submit from already read files."
# Refusals the bench's loop has no words for: its loop never offers these calls.
GREP_BUDGET_EXHAUSTED = "grep-call budget exhausted; read or submit."
TURNS_EXHAUSTED = "turn budget exhausted; the episode is over."
ALREADY_SUBMITTED = "files already submitted; the episode is over."


def refusal_observation(message: str) -> str:
    """What an agent is shown for a refused call, as the bench's loop shows it."""
    return f"ERROR: {message}"


@dataclass(frozen=True)
class Budgets:
    """The closed-tool budgets, with the bench's defaults (`eval-closed-tool`).

    `max_turns` bounds the calls an agent may make, refused ones included: the bench's model
    loop stops after `max_tool_calls + 4` turns (`max_model_turns`), which is the default here.
    """

    max_tool_calls: int = 16
    max_read_tokens: int = 8_000
    max_read_tokens_per_file: int = 1_200
    max_grep_calls: int = 8
    final_k: int = 3
    grep_top_k: int = 12
    max_turns: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_tool_calls", "max_read_tokens", "max_read_tokens_per_file", "max_grep_calls", "final_k", "grep_top_k", "max_turns"):
            value = getattr(self, name)
            if value is None and name == "max_turns":
                continue
            if type(value) is not int:
                raise ValueError(f"budget {name}: expected an integer, got {value!r}")
        # the bench's own checks, in its words
        if self.max_tool_calls < 2:
            raise ValueError("max_tool_calls must be at least 2")
        if self.max_read_tokens <= 0:
            raise ValueError("max_read_tokens must be positive")
        if self.final_k <= 0:
            raise ValueError("final_k must be positive")
        for name in ("max_read_tokens_per_file", "max_grep_calls", "grep_top_k", "max_turns"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive")

    @property
    def turns(self) -> int:
        return self.max_turns if self.max_turns is not None else self.max_tool_calls + 4

    def record(self) -> dict[str, Any]:
        """The budgets as the bench's summaries list them."""
        return {
            "max_tool_calls": self.max_tool_calls,
            "max_read_tokens": self.max_read_tokens,
            "max_read_tokens_per_file": self.max_read_tokens_per_file,
            "max_grep_calls": self.max_grep_calls,
            "final_k": self.final_k,
            "grep_top_k": self.grep_top_k,
            "max_turns": self.turns,
            "allowed_tools": list(ALLOWED_TOOLS),
            "forbidden": list(FORBIDDEN),
        }


@dataclass
class ToolCall:
    """One call an agent made, accepted or refused: the item's trajectory keeps every one.

    `counted` says whether it used up a tool call (a refused call does not, as in the bench);
    `tokens` is what a read charged against the read budget; `step` is the bench step number of an
    accepted call (its tool-call count after it), None for a refusal.
    """

    tool: str
    arguments: dict[str, Any]
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    tokens: int = 0
    truncated: bool = False
    wall_seconds: float = 0.0
    refusal: str | None = None
    step: int | None = None

    @property
    def counted(self) -> bool:
        return self.refusal is None

    def record(self) -> dict[str, Any]:
        return {**asdict(self), "counted": self.counted}


def context_step(step: int, tool: str, path: str, *, final: bool = False) -> dict[str, Any]:
    """A whole-file step in the bench's normalized step format (what `trajectory_detail` scores)."""
    return {
        "step": step,
        "tool": tool,
        "path": path,
        "start_line": None,
        "end_line": None,
        "kind": "file",
        "symbol": "",
        "content_hash": "",
        "is_final_context": final,
        "is_utilized_context": final,
    }


@dataclass
class Episode:
    """What an item's agent did: its calls, its context steps, the files it submitted, its counts.

    `steps` are the bench's normalized steps (each read, its final/utilized flags set from the
    final files; the final files as `submit` steps when nothing was read); `fallback` says the
    final files were chosen for the agent (it never submitted, or submitted nothing usable).
    """

    budgets: Budgets | None
    calls: list[ToolCall]
    steps: list[dict[str, Any]]
    final_files: list[str]
    submitted_files: list[str] | None
    fallback: bool
    tool_calls: int
    grep_calls: int
    read_calls: int
    read_tokens: int
    extra: dict[str, Any] = field(default_factory=dict)
    protocol: dict[str, Any] | None = None  # a command agent's line protocol: how it ended, its violations
    contextbench: Any = None  # a replayed ContextBench prediction (`scoring.contextbench_trajectory.Prediction`), scored on ContextBench rows

    def record(self) -> dict[str, Any]:
        """The episode as JSON values: what an item's record keeps of its trajectory."""
        return {
            "budgets": self.budgets.record() if self.budgets is not None else None,  # None: a replay, whose budgets are not recorded
            "calls": [call.record() for call in self.calls],
            "steps": [dict(step) for step in self.steps],
            "final_files": list(self.final_files),
            "submitted_files": None if self.submitted_files is None else list(self.submitted_files),
            "fallback": self.fallback,
            "tool_calls": self.tool_calls,
            "grep_calls": self.grep_calls,
            "read_calls": self.read_calls,
            "read_tokens": self.read_tokens,
            **({"protocol": self.protocol} if self.protocol is not None else {}),
        }
