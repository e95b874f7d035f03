"""Presets for the four corvint verbs (query, context, impact, affected), rule by rule.

These reproduce the arms of the original corvint retrieval bench so its published numbers can be
re-measured here; each rule below is that bench's, and docs/arms.md states the packet shapes
read. The executable is `binary`, else the CORVINT environment variable, else `corvint` on PATH.
Every preset runs in the snapshot's private copy and labels its cache state by whether the
copy holds corvint's snapshot store (`.git/corvint/index`) before the call.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pytest_retrieval_bench.arms.base import Answer, Arm, Request
from pytest_retrieval_bench.arms.command import (NO_CHANGED_FILE, ExecutableIdentity, Outcome, substitute, cache_state, distinct_strings, invoke,
                                                 problem_of, run_program)
from pytest_retrieval_bench.arms.capture import CaptureWriter
from pytest_retrieval_bench.arms.snapshot_latency import Observation, SnapshotLatencySpec
from pytest_retrieval_bench.corpus.own_programs import git_command, neutral_directory
from pytest_retrieval_bench.files.remove_tree import remove_tree
from pytest_retrieval_bench.corpus.snapshot import check_relative_path
from pytest_retrieval_bench.errors import ArmError

INDEX_PROBE = ".git/corvint/index"
#: seed 000's opt-in stderr observation of the snapshot loader (matched snapshot latency)
SNAPSHOT_TRACE = "CORVINT_BENCH_SNAPSHOT_TRACE"
QUERY_MAX_CHARS = 2_000
CONTEXT_MAX_CHARS = 32_000
IMPACT_MAX_LIMIT = 50
UNSUPPORTED_CONJUNCTION = "unsupported-conjunction"
DIRTY_SUFFIX = b"\n\n"  # a dirty edit in every language
VERSION_TIMEOUT = 30.0
_VERSIONS: dict[str, str] = {}  # binary -> what `--version` said


class CorvintArm:
    """Shared plumbing: the executable, its identity, the argv template, one call in the copy."""

    name = ""
    template: tuple[str, ...] = ()
    max_query_chars: int | None = None
    snapshot_latency: SnapshotLatencySpec | None = None

    def __init__(self, binary: str | None = None, timeout: float = 120.0):
        self.binary = binary or os.environ.get("CORVINT") or "corvint"
        self.timeout = timeout
        self.capture: CaptureWriter | None = None
        self.identity = ExecutableIdentity("corvint", self.binary)

    def descriptor(self) -> dict[str, Any]:
        return {"arm": self.name, "argv": [self.binary, *self.template], "cwd": "root", "timeout": self.timeout}

    def version(self) -> str:
        """`corvint --version`'s first line (asked once per binary), for the registration; a
        binary that cannot say is recorded with the reason, never guessed. It runs as an arm call
        does (its own session, bounded output, nothing left running), but in the run's neutral
        directory: the caller's working directory may be the snapshot."""
        if self.binary not in _VERSIONS:
            program = os.path.abspath(self.binary) if os.sep in self.binary else self.binary  # as the identity reads it, from here
            invocation = run_program([program, "--version"], neutral_directory(), dict(os.environ), VERSION_TIMEOUT)
            lines = (invocation.stdout or b"").decode("utf-8", "replace").strip().splitlines()
            problem = problem_of(invocation)
            _VERSIONS[self.binary] = lines[0].strip() if problem is None and lines else f"UNKNOWN: --version {problem or 'printed nothing'}"
        return _VERSIONS[self.binary]

    def _call(self, request: Request, task: str, fresh: bool = True, root: Path | None = None, phase: str = "ordinary",
              extra_env: dict[str, str] | None = None, **values: str) -> tuple[Outcome, str]:
        """One call in the copy, reset to its commit first unless the caller prepared it (`fresh`, `root`)."""
        root = root if root is not None else request.snapshot.directory(fresh=fresh)
        label = cache_state(root, INDEX_PROBE)
        values = {"root": str(root), "k": str(request.k), **values}
        argv = [self.binary, *(substitute(part, values) for part in self.template)]
        env = {**os.environ, **extra_env} if extra_env else os.environ
        outcome = invoke(self.name, argv, cwd=root, env=env, timeout=self.timeout, request=request, task=task, capture=self.capture, phase=phase)
        return outcome, label

    def retrieve(self, request: Request) -> Answer:
        raise NotImplementedError


def _packet(outcome: Outcome) -> dict[str, Any]:
    packet = outcome.packet()
    if not isinstance(packet, dict):
        raise outcome.fail("packet is not a JSON object")
    return packet


def _list(outcome: Outcome, container: dict[str, Any], key: str) -> list[Any]:
    """An array field; absent or null reads as empty (an empty packet)."""
    value = container.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise outcome.fail(f"packet field {key!r} is not an array")
    return value


def _field_of_each(outcome: Outcome, entries: list[Any], key: str, what: str) -> list[str]:
    values = []
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get(key), str):
            raise outcome.fail(f"{what} entry {number} has no string {key!r}")
        values.append(entry[key])
    return distinct_strings(values, what)


def _state(outcome: Outcome, container: dict[str, Any], key: str = "state") -> str | None:
    value = container.get(key)
    if value is not None and not isinstance(value, str):
        raise outcome.fail(f"packet field {key!r} is not a string")
    return value


def _answer(ranking: list[str], state: str | None, abstained: bool, outcome: Outcome, label: str) -> Answer:
    """An abstention answers nothing: its ranking is empty whatever the packet listed."""
    return Answer(ranking=[] if abstained else ranking, state=state, packet_bytes=outcome.packet_bytes, cache_state=label, abstained=abstained)


class QueryArm(CorvintArm):
    """`corvint query`: sees the 2,000-character prefix; OUT_OF_SCOPE or no result abstains."""

    name = "corvint-query"
    template = ("query", "--task", "{query}", "--limit", "{k}")
    max_query_chars = QUERY_MAX_CHARS

    def retrieve(self, request: Request) -> Answer:
        text = request.query_text[:QUERY_MAX_CHARS]
        outcome, label = self._call(request, text, query=text)
        packet = _packet(outcome)
        state = _state(outcome, packet)
        ranking = _field_of_each(outcome, _list(outcome, packet, "results"), "path", "results")
        return _answer(ranking, state, state == "OUT_OF_SCOPE" or not ranking, outcome, label)


class ContextArm(CorvintArm):
    """`corvint context` over the full text (32,000 characters at most, else an arm error)."""

    name = "corvint-context"
    template = ("context", "--task", "{query}", "--limit", "{k}")

    def __init__(self, binary: str | None = None, timeout: float = 120.0):
        super().__init__(binary, timeout)
        # seed 000's matched snapshot latency: `corvint index` once per copy, the store it builds, the loader's trace
        self.snapshot_latency = SnapshotLatencySpec(index=(self.binary, "index"), store=INDEX_PROBE, trace=SNAPSHOT_TRACE)

    def retrieve(self, request: Request) -> Answer:
        return self._observe(request).answer

    def call_in(self, request: Request, root: Path, phase: str, env: dict[str, str]) -> Observation:
        """One call in a copy the caller prepared (matched snapshot latency: the cold and the hit call)."""
        return self._observe(request, root, phase, env)

    def _observe(self, request: Request, root: Path | None = None, phase: str = "ordinary", env: dict[str, str] | None = None) -> Observation:
        text = request.query_text
        if len(text) > CONTEXT_MAX_CHARS:
            raise ArmError(f"query text is {len(text)} characters; corvint context accepts at most {CONTEXT_MAX_CHARS}")
        outcome, label = self._call(request, text, root=root, phase=phase, extra_env=env, query=text)
        packet = _packet(outcome)
        state = _state(outcome, packet)
        ranking = _field_of_each(outcome, _list(outcome, packet, "results"), "id", "results")
        coverage = packet.get("coverage")
        answerability = coverage.get("answerability") if isinstance(coverage, dict) else None
        verdict = answerability.get("verdict") if isinstance(answerability, dict) else None
        unsupported = verdict == UNSUPPORTED_CONJUNCTION
        if unsupported:
            state = f"{state}+{verdict}" if state else verdict
        answer = _answer(ranking, state, state == "NO_CANDIDATES" or not ranking or unsupported, outcome, label)
        return Observation(answer, _top_score(packet), outcome.invocation.stderr or b"")


class ImpactArm(CorvintArm):
    """`corvint impact CHANGED_FILE`: evidence paths minus the changed file; a refusal is an error."""

    name = "corvint-impact"
    template = ("impact", "{changed_file}", "--limit", "{k}")

    def retrieve(self, request: Request) -> Answer:
        changed = request.changed_file
        if not changed:
            raise ArmError(NO_CHANGED_FILE)
        if request.k > IMPACT_MAX_LIMIT:
            raise ArmError(f"corvint impact refuses --limit above {IMPACT_MAX_LIMIT} (got {request.k})")
        outcome, label = self._call(request, changed, changed_file=changed)
        packet = _packet(outcome)
        state = _state(outcome, packet)
        evidence = _field_of_each(outcome, _list(outcome, packet, "evidence"), "path", "evidence")
        ranking = [path for path in evidence if path != changed]
        return _answer(ranking, state, state == "OUT_OF_SCOPE" or not ranking, outcome, label)


class AffectedArm(CorvintArm):
    """`corvint --root COPY affected` with the changed file dirtied, then restored byte for byte."""

    name = "corvint-affected"
    template = ("--root", "{root}", "affected")

    def retrieve(self, request: Request) -> Answer:
        changed = request.changed_file
        if not changed:
            raise ArmError(NO_CHANGED_FILE)
        root = request.snapshot.directory(fresh=True)  # the committed tree, whatever an earlier item left
        target = root / changed
        if check_relative_path(changed) or target.is_symlink() or not target.is_file() or not target.resolve().is_relative_to(root.resolve()):
            raise ArmError(f"changed file {changed!r} is not a file of the snapshot copy")
        previous = target.read_bytes()
        try:
            target.write_bytes(previous + DIRTY_SUFFIX)
            outcome, label = self._call(request, changed, fresh=False)
        finally:
            _restore(target, previous)
        dirty = _porcelain(root)
        if dirty:
            also = f"; the call also failed: {outcome.problem}" if outcome.problem else ""
            raise outcome.fail(f"the copy is not clean after corvint affected (git status --porcelain: {dirty}){also}")
        packet = _packet(outcome)
        plan = packet.get("plan")
        if not isinstance(plan, dict):
            raise outcome.fail("packet has no 'plan' object")
        tests: list[Any] = []
        for number, selected in enumerate(_list(outcome, plan, "selected")):
            if not isinstance(selected, dict):
                raise outcome.fail(f"plan.selected entry {number} is not an object")
            tests.extend(_list(outcome, selected, "tests"))
        # not cut to k here: the scorer removes the given files first, then cuts (seed 000: "with the
        # changed file and the given files removed and truncated to k")
        ranking = [path for path in distinct_strings(tests, "plan.selected[].tests") if path != changed]
        return _answer(ranking, _state(outcome, plan, "scope"), not ranking, outcome, label)


def _top_score(packet: dict[str, Any]) -> Any:
    """The first result's `score` (None when the packet has no result or the result no score)."""
    results = packet.get("results")
    first = results[0] if isinstance(results, list) and results else None
    return first.get("score") if isinstance(first, dict) else None


def _restore(target: Path, previous: bytes) -> None:
    """Put the exact previous bytes back, even if the command replaced the file with something else."""
    if target.is_symlink() or (target.exists() and not target.is_file()):
        if target.is_dir() and not target.is_symlink():
            remove_tree(target)
        else:
            target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(previous)


def _porcelain(root: Path) -> str:
    """`git status --porcelain` in the copy, first lines joined; empty when clean."""
    result = git_command(root, "status", "--porcelain")
    if result.returncode != 0:
        raise ArmError(f"git status failed in the snapshot copy: {result.stderr.decode('utf-8', 'replace').strip()}")
    lines = result.stdout.decode("utf-8", "replace").splitlines()
    return " | ".join(lines[:5])


def preset_arms(binary: str | None = None, timeout: float = 120.0) -> list[Arm]:
    """The four corvint presets, sharing one executable."""
    return [cls(binary, timeout) for cls in (QueryArm, ContextArm, ImpactArm, AffectedArm)]
