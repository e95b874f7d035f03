"""Matched snapshot latency (seed 000, proposed TCP-V0-021): a cold call and a hit call per item.

A latency label inferred from a directory's presence says nothing about what the program did, so
here the program says it: with its trace variable set to `1` it prints one stderr line
`NAME {"snapshot": "hit"|"miss", ...}` telling whether it loaded its snapshot store. An arm that
declares an index step, a snapshot store (a path inside the copy) and that trace variable can be
measured this way:

- once per private copy, outside every timed span: the index step runs in the copy and the
  store it built is kept outside the copy (so no other arm's reset or call touches it);
- per item: the copy is reset to its commit, whatever another arm left at the store's path is
  moved aside, the **cold** call runs with no store (it must observe a miss), the store is put
  back on every return path, the **hit** call runs (it must observe a hit), and the store goes
  back outside while what was moved aside returns;
- the hit must agree with the cold call on ranking, state, abstention and top score.

A missing or malformed trace, a warm miss or a cold hit, or a disagreement fails the item's
measurement (an arm error, never an abstention). `wall_ms` is the hit span, `cold_wall_ms` the
matched miss; each span covers the program's process, the packet parse and the ranking's
extraction, and neither is a claim about the operating system's page cache.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, Sequence

import orjson

from pytest_retrieval_bench.arms.base import Answer, Request
from pytest_retrieval_bench.arms.program_call import problem_of, run_program, substitute
from pytest_retrieval_bench.errors import ArmError
from pytest_retrieval_bench.files.remove_tree import remove_tree

HIT, MISS = "hit", "miss"
OBSERVED_HIT, OBSERVED_MISS = "OBSERVED_HIT", "OBSERVED_MISS"
COLD, WARM = "cold", "hit"  # the capture's phase labels


@dataclass(frozen=True)
class SnapshotLatencySpec:
    """What an arm declares so it can be measured cold and hit."""

    index: tuple[str, ...]  # argv of the index step ({root} is the copy); run in the copy
    store: str  # the snapshot store: a relative path inside the copy
    trace: str  # the environment variable that turns the stderr trace on (and the trace's prefix)


@dataclass
class Observation:
    """One call's answer and what the matched check compares beyond it."""

    answer: Answer
    top_score: Any
    stderr: bytes


class MatchedArm(Protocol):
    """An arm that can run one call in a copy it did not reset, with extra environment variables."""

    name: str
    snapshot_latency: SnapshotLatencySpec | None
    timeout: float

    def call_in(self, request: Request, root: Path, phase: str, env: dict[str, str]) -> Observation:
        """Answer `request` in `root` as it is (no reset); `phase` labels the capture record."""


@dataclass(frozen=True)
class Matched:
    """The hit answer with both spans, for the runner to record."""

    answer: Answer
    hit_ms: float
    cold_ms: float


def read_trace(stderr: bytes, name: str, call: str) -> str:
    """`hit` or `miss` from the one trace line of a call's stderr; ArmError when it is missing,
    repeated or malformed (the measurement cannot be trusted then)."""
    prefix = name.encode("ascii") + b" "
    lines = [line for line in stderr.splitlines() if line.startswith(prefix) or line.rstrip() == name.encode("ascii")]
    if not lines:
        raise ArmError(f"the {call} call printed no {name} line on stderr (run a binary with {name} support)")
    if len(lines) > 1:
        raise ArmError(f"the {call} call printed {len(lines)} {name} lines on stderr, expected exactly one")
    payload = lines[0][len(prefix):]
    try:
        document = orjson.loads(payload)
    except orjson.JSONDecodeError:
        document = None
    observed = document.get("snapshot") if isinstance(document, dict) else None
    if observed not in (HIT, MISS):
        shown = payload[:200].decode("utf-8", "replace")
        raise ArmError(f'the {call} call\'s {name} line is malformed (expected {name} {{"snapshot": "hit"|"miss", ...}}): {shown!r}')
    return observed  # type: ignore[return-value]


def _clear(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        remove_tree(path)


def _move(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(source, target)


class MatchedLatency:
    """Wraps a matched arm for one run: `prepare` indexes each copy, `retrieve` measures an item."""

    def __init__(self, arm: Any):
        spec: SnapshotLatencySpec | None = getattr(arm, "snapshot_latency", None)
        if spec is None:
            raise ValueError(f"arm {arm.name!r} declares no index step and snapshot store")
        self.arm, self.spec, self.name = arm, spec, arm.name
        self._stashes: dict[str, tuple[Path, Path]] = {}  # snapshot key -> (copy, directory outside it)

    def prepare(self, snapshot: Any) -> None:
        """Index the copy once (untimed) and keep the store it built outside the copy."""
        old = self._stashes.pop(snapshot.key, None)
        if old is not None:
            remove_tree(old[1], ignore_errors=True)
        root = snapshot.directory(fresh=True)
        store = root / self.spec.store
        _clear(store)  # the index step starts without a store, whatever another arm built
        argv = [substitute(part, {"root": str(root)}) for part in self.spec.index]
        invocation = run_program(argv, root, dict(os.environ), self.arm.timeout)
        problem = problem_of(invocation)
        if problem is not None:
            lines = " | ".join(invocation.stderr_lines()) or "(empty)"
            raise ArmError(f"the index step of arm {self.name!r} ({' '.join(argv)}) failed: {problem}; stderr: {lines}")
        if not store.exists():
            raise ArmError(f"the index step of arm {self.name!r} did not create its snapshot store {self.spec.store!r} in the copy")
        stash = Path(tempfile.mkdtemp(prefix=f"{root.name}-store-", dir=root.parent))  # outside the copy, removed with the copies
        _move(store, stash / "store")
        self._stashes[snapshot.key] = (root, stash)

    def retrieve(self, request: Request) -> Matched:
        """The cold call (store moved aside), then the hit call; both spans, checked to agree."""
        stashed = self._stashes.get(request.snapshot.key)
        if stashed is None:
            raise ArmError(f"no index step ran for {request.snapshot.key} (arm {self.name!r})")
        root, stash = stashed
        if request.snapshot.directory(fresh=True) != root:  # the store stays outside, so the reset cannot touch it
            raise ArmError(f"the private copy of {request.snapshot.key} was rebuilt after its index step")
        store, kept, aside = root / self.spec.store, stash / "store", stash / "aside"
        if not kept.exists():
            raise ArmError(f"the snapshot store of arm {self.name!r} is gone from {stash}")
        _clear(aside)
        if os.path.lexists(store):
            _move(store, aside)  # another arm's state at that path: back after the item
        env = {self.spec.trace: "1"}
        try:
            try:
                cold, cold_ms = self._timed(request, root, COLD, env)
            finally:
                _clear(store)  # whatever the cold call wrote there
                _move(kept, store)
            hit, hit_ms = self._timed(request, root, WARM, env)
        finally:
            if os.path.lexists(store) and not os.path.lexists(kept):
                _move(store, kept)
            if os.path.lexists(aside):
                _clear(store)
                _move(aside, store)
        if not kept.exists():
            raise ArmError(f"the hit call of arm {self.name!r} removed its snapshot store {self.spec.store!r}")
        observed_cold = read_trace(cold.stderr, self.spec.trace, "cold")
        observed_hit = read_trace(hit.stderr, self.spec.trace, "hit")
        if observed_cold != MISS:
            raise ArmError(f"the cold call observed a snapshot {observed_cold} although its store was moved outside the copy")
        if observed_hit != HIT:
            raise ArmError(f"warm miss: the hit call observed a snapshot {observed_hit} with the indexed store in place")
        _check_agreement(cold, hit)
        return Matched(replace(hit.answer, cache_state=OBSERVED_HIT), hit_ms, cold_ms)

    def _timed(self, request: Request, root: Path, phase: str, env: dict[str, str]) -> tuple[Observation, float]:
        started = time.perf_counter()
        observation = self.arm.call_in(request, root, phase, env)
        return observation, (time.perf_counter() - started) * 1000.0


def _check_agreement(cold: Observation, hit: Observation) -> None:
    differences: Sequence[tuple[str, Any, Any]] = [
        ("ranking", cold.answer.ranking, hit.answer.ranking),
        ("state", cold.answer.state, hit.answer.state),
        ("abstention", cold.answer.is_abstention, hit.answer.is_abstention),
        ("top score", cold.top_score, hit.top_score),
    ]
    for what, before, after in differences:
        if before != after:
            raise ArmError(f"the hit call's {what} differs from the cold call's: cold {_short(before)}, hit {_short(after)}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."
