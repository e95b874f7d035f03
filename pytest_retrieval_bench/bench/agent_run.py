"""Run one agent item: an environment over the snapshot's files, the agent, its episode scored.

The parallel of `run.run_item` for agents. The record is a ranking arm's record whose ranking is
the agent's final files (scored by `run.score`, so summaries, pairing, gates and report checks read
it as any arm's), plus `trajectory`: the episode (every call, the steps in the bench's normalized
format, the final files) and, on a sample with gold, the bench's closed-tool detail row; on a
ContextBench row also ContextBench's own trajectory scores (`contextbench_items.py`). The item's
outcome follows the bench: a hit when a gold file is in the final context.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from pytest_retrieval_bench.arms.agents.arm import AgentArm
from pytest_retrieval_bench.arms.agents.environment import ClosedToolEnvironment
from pytest_retrieval_bench.arms.agents.grep_cache import GrepIndexCache
from pytest_retrieval_bench.arms.agents.protocol import Episode
from pytest_retrieval_bench.arms.agents.scripted import closed_tool_fields
from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles
from pytest_retrieval_bench.arms.base import Answer, Request
from pytest_retrieval_bench.arms.deadline import ArmTimedOut, arm_time_limit, time_limit
from pytest_retrieval_bench.bench.contextbench_items import contextbench_scores
from pytest_retrieval_bench.bench.run import score
from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.errors import ArmError, SnapshotError
from pytest_retrieval_bench.samples.arb_leakage import QUERY_LEAKAGE, query_has_leakage
from pytest_retrieval_bench.samples.model import Sample
from pytest_retrieval_bench.scoring.trajectory import closed_tool_detail

#: the detail row's fields an entry already holds (or the trajectory's steps do)
_ENTRY_FIELDS = ("sample_id", "task_type", "repo", "base_commit", "steps")


class AgentItems:
    """A process's agent items: the current snapshot's `ToolFiles` (made once per snapshot, shared
    by its items; dropped with the snapshot), an environment per item, and each item's run.
    With `grep_cache` (the run's index cache), each snapshot's grep index comes from it, or is
    built at the snapshot's first grep and kept there."""

    def __init__(self, limit: int, arm_timeout: float | None, grep_cache: GrepIndexCache | None = None):
        self.limit = limit
        self.arm_timeout = arm_timeout
        self.grep_cache = grep_cache
        self._snapshot: Snapshot | None = None
        self._files: ToolFiles | None = None

    def files(self, snapshot: Snapshot) -> ToolFiles:
        if self._snapshot is not snapshot or self._files is None:
            self._snapshot, self._files = snapshot, ToolFiles.of_snapshot(snapshot, self.grep_cache)
        return self._files

    def release(self) -> None:
        self._snapshot = self._files = None

    def environment(self, arm: AgentArm, snapshot: Snapshot) -> ClosedToolEnvironment:
        return arm.environment(self.files(snapshot))

    def run(self, sample: Sample, arm: AgentArm, request: Request, snapshot: Snapshot, raised: list[BaseException],
            env: ClosedToolEnvironment | None = None, act: Callable[[ClosedToolEnvironment], Any] | None = None) -> dict[str, Any]:
        """An agent item's record: its environment (made here unless `bench_tools` made it), then `act` (the arm's `run`)."""
        seconds, source = arm_time_limit(arm, self.arm_timeout)
        env = env if env is not None else self.environment(arm, snapshot)
        return run_agent_item(sample, arm, request, snapshot, env, self.limit, act, seconds, source, raised)


def leakage_skip(sample: Sample) -> str | None:
    """The bench's skip of an ARB row whose query leaks the answer, as a skip reason (None: run it)."""
    row = sample.extra.get("row")
    if isinstance(row, dict) and query_has_leakage(row, sample.query_text):
        return f"{QUERY_LEAKAGE}: the query holds a patch, the fix commit or a gold file's name (the bench skips it for agents)"
    return None


def trajectory_sample(sample: Sample) -> dict[str, Any]:
    """The sample as the bench's trajectory scorer reads it: the line as read (spans, blocks,
    supporting files), with the plugin's ids."""
    row = sample.extra.get("row")
    return {**(row if isinstance(row, dict) else {}), "id": sample.id, "task_type": sample.task_type, "repo": sample.repo,
            "base_commit": sample.base_commit}


def trajectory_record(sample: Sample, episode: Episode, error: str | None) -> dict[str, Any]:
    """The record's `trajectory`: the episode, and on a sample with gold the bench's detail row
    (without the fields the entry holds); an errored item's detail is that of no context at all."""
    block = episode.record()
    if not sample.no_gold and sample.gold_files:
        gold = list(sample.gold_files)
        steps = [] if error else episode.steps
        fields = closed_tool_fields(episode)
        if error:
            fields["final_files"] = []
        detail = closed_tool_detail(trajectory_sample(sample), gold, steps, fields)
        block["detail"] = {key: value for key, value in detail.items() if key not in _ENTRY_FIELDS}
        block["final_gold"] = 0 if error else sum(1 for path in dict.fromkeys(episode.final_files) if path in set(gold))
    return block


def answer_of(sample: Sample, episode: Episode) -> Answer:
    """The agent's final files as a ranking. On a no-gold sample, submitting nothing (an empty
    submit, or none) is an abstention; on a positive one the bench's final files stand."""
    if sample.no_gold and not episode.submitted_files:
        return Answer(ranking=[], abstained=True)
    return Answer(ranking=list(episode.final_files), abstained=False)


def run_agent_item(sample: Sample, arm: AgentArm, request: Request, snapshot: Snapshot, env: ClosedToolEnvironment, limit: int,
                   act: Callable[[ClosedToolEnvironment], Any] | None = None, arm_timeout: float | None = None,
                   timeout_source: str = "--bench-arm-timeout", raised: list[BaseException] | None = None) -> dict[str, Any]:
    """One agent item's record: `act(env)` (by default the arm's `run`) acts through the item's
    environment and returns its episode; `error` is set instead of raising (the agent's own
    exception is appended to `raised`, for pytest to show). Only the agent's run is timed."""
    record: dict[str, Any] = {"sample_id": sample.id, "arm": arm.name, "query_chars": len(sample.query_text),
                              "query_truncated": len(request.query_text) < len(sample.query_text), "snapshot_sha256": snapshot.files_digest()}
    error: str | None = None
    act = act or (lambda env: arm.run(request, env))
    episode: Episode | None = None
    kept: Episode | None = None  # the episode up to a failure, when the agent's run says it
    started = time.perf_counter()
    try:
        with time_limit(arm_timeout, f"arm {arm.name}", timeout_source):
            episode = act(env)
        if not isinstance(episode, Episode):
            raise ArmError(f"agent {arm.name} returned {type(episode).__name__}, expected its environment's finish() (an Episode)")
    except ArmTimedOut as exc:
        error = str(exc)
    except SnapshotError as exc:
        error = f"snapshot error: {exc}"
    except (Exception, SystemExit, GeneratorExit) as exc:  # as in `run_item`: recorded, never an abstention
        kept = getattr(exc, "episode", None)
        error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ArmError) else str(exc)
        if raised is not None and not isinstance(exc, ArmError):
            raised.append(exc)
    record["wall_ms"] = round((time.perf_counter() - started) * 1000.0, 3)
    if error is not None or episode is None:
        episode = kept if isinstance(kept, Episode) else env.finish()  # the calls made before the failure
    answer = None if error else answer_of(sample, episode)
    scored = score(sample, answer, error, limit, snapshot.read_text, snapshot.token_counts())
    trajectory = trajectory_record(sample, episode, error)
    contextbench, metrics = contextbench_scores(sample, episode, snapshot, error)  # on a ContextBench row: its own trajectory scores
    if contextbench is not None:
        trajectory["contextbench"] = contextbench
        scored["metrics"].update(metrics)
    return {**record, **scored, "trajectory": trajectory}
