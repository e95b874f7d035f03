"""One closed-tool environment per item: the bench's four tools over a snapshot's files, under budgets.

The rules are those of the bench's agent loop (`run_closed_tool_llm_sample`): a call over a budget,
on a path the snapshot does not have, or of an unknown tool is refused with the bench's message
(`ERROR: ...`) and uses no tool call; no call ever raises. The environment holds no gold, and shows
nothing but the snapshot's files (`ToolFiles`): a path outside it (`../x`, `/etc/passwd`, a
directory) is simply not found. Every call is recorded (`ToolCall`), and `finish` gives the item's
`Episode`: its steps in the bench's normalized format and its final files.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pytest_retrieval_bench.arms.agents import observations
from pytest_retrieval_bench.arms.agents.protocol import (
    ALREADY_READ,
    ALREADY_SUBMITTED,
    EMPTY_PATTERN,
    GREP_BUDGET_EXHAUSTED,
    READ_BUDGET_EXHAUSTED,
    READ_NOT_FOUND,
    TOOL_BUDGET_EXHAUSTED,
    TURNS_EXHAUSTED,
    UNKNOWN_ACTION,
    Budgets,
    Episode,
    ToolCall,
    context_step,
    refusal_observation,
)
from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles


@dataclass
class ToolResult:
    """A call's outcome: the observation the agent is shown, and the same facts as values.

    The observation text is rendered on first use (the built-in policy reads the values only).
    The bench's loop shows nothing after a submit (the episode ends); `OBS submit files=[...]`,
    the final files, is this environment's own.
    """

    tool: str
    refusal: str | None = None
    path: str | None = None
    entries: list[str] | None = None
    pattern: str | None = None
    hits: list[dict[str, Any]] | None = None
    tokens: int = 0
    truncated: bool = False
    final_files: list[str] | None = None
    _render: Callable[[], str] | None = None

    @property
    def ok(self) -> bool:
        return self.refusal is None

    @property
    def observation(self) -> str:
        if self.refusal is not None:
            return refusal_observation(self.refusal)
        return self._render() if self._render is not None else f"OBS {self.tool} files={self.final_files}"


def _clamp(value: Any, default: int, low: int, high: int) -> int:
    """The bench's `clamp_int`: an unreadable value is the default; the result lies in [low, high]."""
    try:
        parsed = int(value)
    except (TypeError, ValueError, OverflowError):
        parsed = default
    return max(low, min(high, parsed))


def _dedupe(values: Any) -> list[str]:
    """Submitted paths as the bench reads them: each `str()`ed once, empty ones dropped, in order.
    Anything but a list, tuple or string is no paths (the bench's loop would stop on it)."""
    if not isinstance(values, (list, tuple, str)):
        return []
    return list(dict.fromkeys(str(value) for value in values if value))


class ClosedToolEnvironment:
    """The bench's closed-tool protocol for one item.

    `submit_unread_without_reads` is the rule of the bench's scripted policy, which alone may
    submit files it never read, and only when it read none (its loop ran out of calls or hit an
    empty file first); its agent loop keeps only files that were read.
    """

    def __init__(self, files: ToolFiles, budgets: Budgets | None = None, *, submit_unread_without_reads: bool = False,
                 clock: Callable[[], float] = time.perf_counter):
        self._files = files
        self.budgets = budgets or Budgets()
        self._submit_unread = submit_unread_without_reads
        self._clock = clock
        self.calls: list[ToolCall] = []
        self.steps: list[dict[str, Any]] = []
        self.read_paths: list[str] = []
        self._read_set: set[str] = set()
        self.tool_calls = self.grep_calls = self.read_calls = self.read_tokens = self.turns = 0
        self.final_files: list[str] = []
        self.submitted: list[str] | None = None

    @property
    def files(self) -> ToolFiles:
        """The snapshot's files: the built-in policy reads them directly, as the bench's does (an
        agent of the user's is given only the tools)."""
        return self._files

    # -- the tools ---------------------------------------------------------------------------------

    def act(self, action: Mapping[str, Any]) -> ToolResult:
        """One action as the bench's agents send it: `{"action" (or "tool"): name, ...arguments}`."""
        if not isinstance(action, Mapping):
            action = {}
        kind = str(action.get("action") or action.get("tool") or "").lower()
        if kind == "list_dir":
            return self.list_dir(action.get("path"))
        if kind == "grep":
            return self.grep(action.get("pattern") or action.get("query"), action.get("top_k"))
        if kind == "read_file":
            return self.read_file(action.get("path"))
        if kind == "submit":
            return self.submit(action.get("files") or action.get("context_files") or [])
        started = self._clock()
        call = ToolCall(kind or "?", {key: value for key, value in action.items() if key not in ("action", "tool")})
        return self._refuse(call, self._turn_refusal() or UNKNOWN_ACTION, started)

    def list_dir(self, path: Any = "") -> ToolResult:
        started = self._clock()
        path = str(path or "")
        call = ToolCall("list_dir", {"path": path}, path=path)
        refusal = self._gate()
        if refusal:
            return self._refuse(call, refusal, started)
        entries = self._files.list_dir(path)
        self._count(call, started)
        return ToolResult("list_dir", path=path, entries=entries, _render=lambda: observations.list_dir_observation(path, entries))

    def grep(self, pattern: Any, top_k: Any = None) -> ToolResult:
        started = self._clock()
        text = str(pattern or "").strip()
        limit = _clamp(top_k, self.budgets.grep_top_k, 1, self.budgets.grep_top_k)
        call = ToolCall("grep", {"pattern": text, "top_k": limit})
        refusal = self._gate()
        if refusal is None and not text:
            refusal = EMPTY_PATTERN
        if refusal is None and self.grep_calls >= self.budgets.max_grep_calls:
            refusal = GREP_BUDGET_EXHAUSTED
        if refusal:
            return self._refuse(call, refusal, started)
        hits = self._files.grep(text, limit)
        self.grep_calls += 1
        self._count(call, started)
        return ToolResult("grep", pattern=text, hits=hits, _render=lambda: observations.grep_observation(text, hits))

    def read_file(self, path: Any) -> ToolResult:
        started = self._clock()
        path = str(path or "")
        call = ToolCall("read_file", {"path": path}, path=path)
        refusal = self._gate()
        if refusal is None and path not in self._files:
            refusal = READ_NOT_FOUND.format(path=path)
        if refusal is None and path in self._read_set:
            refusal = ALREADY_READ.format(path=path)
        if refusal is None and self.read_tokens >= self.budgets.max_read_tokens:
            refusal = READ_BUDGET_EXHAUSTED
        included = token_count = 0
        if refusal is None:
            token_count = self._files.tokens(path)
            included = min(token_count, self.budgets.max_read_tokens - self.read_tokens, self.budgets.max_read_tokens_per_file)
            if included <= 0:
                refusal = READ_BUDGET_EXHAUSTED
        if refusal:
            return self._refuse(call, refusal, started)
        self.read_tokens += included
        self.read_calls += 1
        self._read_set.add(path)
        self.read_paths.append(path)
        call.tokens, call.truncated = included, token_count > included
        self._count(call, started)
        self.steps.append(context_step(self.tool_calls, "read_file", path))
        text = self._files.text(path) or ""
        return ToolResult("read_file", path=path, tokens=included, truncated=call.truncated,
                          _render=lambda: observations.read_file_observation(path, text, included))

    def submit(self, files: Any) -> ToolResult:
        started = self._clock()
        requested = _dedupe(files)
        call = ToolCall("submit", {"files": requested})
        refusal = self._gate()
        if refusal:
            return self._refuse(call, refusal, started)
        final_k = self.budgets.final_k
        if self._submit_unread and not self.read_paths:
            final = [path for path in requested if path in self._files][:final_k]
        else:
            final = [path for path in requested if path in self._read_set][:final_k]
        if not final and self.read_paths:
            final = self.read_paths[:final_k]
        self.final_files = final
        self.submitted = requested
        self._count(call, started)
        return ToolResult("submit", final_files=list(final), _render=lambda: f"OBS submit files={final}")

    # -- the record --------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.submitted is not None

    def finish(self, extra: dict[str, Any] | None = None, protocol: dict[str, Any] | None = None) -> Episode:
        """The item's episode. Without usable final files (never submitted, or nothing usable
        submitted) the first `final_k` files read are final, as the bench falls back."""
        fallback = not self.final_files
        if fallback:
            self.final_files = self.read_paths[: self.budgets.final_k]
        final = set(self.final_files)
        for step in self.steps:
            if step["path"] in final:
                step["is_final_context"] = step["is_utilized_context"] = True
        steps = self.steps or [context_step(index, "submit", path, final=True) for index, path in enumerate(self.final_files, start=1)]
        return Episode(budgets=self.budgets, calls=self.calls, steps=steps, final_files=list(self.final_files), submitted_files=self.submitted,
                       fallback=fallback, tool_calls=self.tool_calls, grep_calls=self.grep_calls, read_calls=self.read_calls,
                       read_tokens=self.read_tokens, extra=dict(extra or {}), protocol=protocol)

    # -- budgets -----------------------------------------------------------------------------------

    def _turn_refusal(self) -> str | None:
        if self.done:
            return ALREADY_SUBMITTED
        if self.turns >= self.budgets.turns:
            return TURNS_EXHAUSTED
        self.turns += 1
        return None

    def _gate(self) -> str | None:
        """The checks every tool shares, in the bench's order: the turn, then the tool-call budget."""
        refusal = self._turn_refusal()
        if refusal is None and self.tool_calls >= self.budgets.max_tool_calls:
            refusal = TOOL_BUDGET_EXHAUSTED
        return refusal

    def _count(self, call: ToolCall, started: float) -> None:
        self.tool_calls += 1
        call.step = self.tool_calls
        call.wall_seconds = self._clock() - started
        self.calls.append(call)

    def _refuse(self, call: ToolCall, refusal: str, started: float) -> ToolResult:
        call.refusal = refusal
        call.wall_seconds = self._clock() - started
        self.calls.append(call)
        return ToolResult(call.tool, refusal=refusal, path=call.path)

