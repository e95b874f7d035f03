"""Command arms: an external retriever run once per item, declared in TOML or on the command line.

A user should be able to benchmark any program that prints JSON without writing Python, and a
program that fails must never look like a program that abstained. So every failure - a non-zero
exit, a timeout, output that is not JSON, a ranking path that does not resolve - is an
`ArmError` carrying the first lines of the program's stderr; only an empty ranking or a declared
abstention state is an abstention.

The program runs without a shell, in the snapshot's private copy, with a timeout; its stdout is
read up to 8 MiB and its stderr up to 64 KiB.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import orjson

from pytest_retrieval_bench import leftovers
from pytest_retrieval_bench.arms.base import MAX_RANKING_ENTRIES, Answer, Request
from pytest_retrieval_bench.arms.jsonpath import PathMissError, PathSyntaxError, extract, extract_scalar, parse
from pytest_retrieval_bench.arms.capture import MALFORMED, NOT_RUN, PARSED, CaptureWriter
from pytest_retrieval_bench.arms.program_call import (Invocation, problem_of, run_program,  # re-exported: the arms' one way
                                                      substitute, template_placeholders)  # to run a program and read its outcome
from pytest_retrieval_bench.arms.snapshot_latency import Observation, SnapshotLatencySpec
from pytest_retrieval_bench.corpus.snapshot import check_relative_path
from pytest_retrieval_bench.errors import ArmError, BenchError, InputError

PLACEHOLDERS = ("query", "query_file", "k", "changed_file", "root")
ARM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
INDEX_PLACEHOLDERS = ("root",)
NO_CHANGED_FILE = "no changed_file in query"
PRIMED_SHARED, COLD_UNIQUE, UNRECORDED = "PRIMED_SHARED", "COLD_UNIQUE", "UNRECORDED"


@dataclass
class Outcome:
    """An invocation with its parsed stdout, or the reason it is an arm error."""

    invocation: Invocation
    document: Any = None
    problem: str | None = None

    def fail(self, message: str) -> ArmError:
        """An ArmError that carries the first lines of the program's stderr."""
        lines = self.invocation.stderr_lines()
        return ArmError(message + (f"; stderr: {' | '.join(lines)}" if lines else "; stderr: (empty)"))

    def packet(self) -> Any:
        """The parsed JSON stdout; raises ArmError if the call failed."""
        if self.problem is not None:
            raise self.fail(self.problem)
        return self.document

    @property
    def packet_bytes(self) -> int:
        return self.invocation.stdout_total


def invoke(arm: str, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float, request: Request,
           task: str, capture: CaptureWriter | None, phase: str = "ordinary") -> Outcome:
    """Run once, parse stdout as JSON when the run succeeded, hand the bytes to the capture."""
    invocation = run_program(argv, cwd, env, timeout)
    outcome = Outcome(invocation, problem=problem_of(invocation))
    parse_status = NOT_RUN
    if outcome.problem is None:
        try:
            outcome.document = orjson.loads(invocation.stdout or b"")
            parse_status = PARSED
        except orjson.JSONDecodeError as error:
            outcome.problem = f"stdout is not JSON ({error})"
            parse_status = MALFORMED
    if capture is not None:
        capture.record(sample_id=request.sample_id, repo=request.repo, base_commit=request.base_commit, arm=arm, task=task,
                       stdout=None if invocation.start_error else invocation.stdout, stdout_total=invocation.stdout_total,
                       stderr=None if invocation.start_error else invocation.stderr, stderr_total=invocation.stderr_total,
                       parse_status=parse_status, exit_status=invocation.returncode, timed_out=invocation.timed_out, phase=phase)
    return outcome


def cache_state(root: Path, probe: str | None) -> str:
    """Observed, not inferred: whether the program's cache exists in the copy before the call."""
    if probe is None:
        return UNRECORDED
    return PRIMED_SHARED if (root / probe).exists() else COLD_UNIQUE


def distinct_strings(values: Sequence[Any], what: str) -> list[str]:
    """Ranking entries: strings, first occurrence kept, order kept (linear in the entries)."""
    if len(values) > MAX_RANKING_ENTRIES:
        raise ArmError(f"{what} has {len(values):,} entries, above the limit of {MAX_RANKING_ENTRIES:,}")
    out: list[str] = []
    seen: set[str] = set()
    for number, value in enumerate(values):
        if not isinstance(value, str):
            raise ArmError(f"{what} entry {number} is not a string: {value!r}")
        if value not in seen:
            seen.add(value)
            out.append(value)
    return out


class ExecutableIdentity:
    """`PREFIX:NAME:sha256:HEX` of the program a name resolves to, or NOT_RUN; computed once."""

    def __init__(self, prefix: str, program: str):
        self.prefix, self.program = prefix, program
        self._value: str | None = None

    def __call__(self) -> str:
        if self._value is None:
            self._value = self.recompute()
        return self._value

    def recompute(self) -> str:
        """The identity read afresh (the check before a matched latency report is published)."""
        found = shutil.which(self.program)
        digest = hashlib.sha256()
        try:
            if found is None:
                raise FileNotFoundError(self.program)
            with open(found, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            return f"{self.prefix}:sha256:{digest.hexdigest()}"
        except OSError:
            return "NOT_RUN"  # the run will record why each call failed


# -- the declaration ------------------------------------------------------------------------------
_FIELDS = ("argv", "cwd", "timeout", "env", "ranking", "state", "abstain_states", "max_query_chars", "cache_probe", "requires_changed_file",
           "index", "snapshot_store", "snapshot_trace", "top_score")
_LATENCY_FIELDS = ("index", "snapshot_store", "snapshot_trace")


@dataclass(frozen=True)
class CommandArmSpec:
    """A validated `[tool.retrieval-bench.arms.NAME]` table (or its JSON equivalent)."""

    name: str
    argv: tuple[str, ...]
    ranking: str
    cwd: str = "root"
    timeout: float = 120.0
    env: Mapping[str, str] = field(default_factory=dict)
    state: str | None = None
    abstain_states: tuple[str, ...] = ()
    max_query_chars: int | None = None
    cache_probe: str | None = None
    requires_changed_file: bool = False
    snapshot_latency: SnapshotLatencySpec | None = None
    top_score: str | None = None

    @property
    def placeholders(self) -> set[str]:
        return set().union(*(template_placeholders(part) for part in (*self.argv, *self.env.values())))

    def descriptor(self) -> dict[str, Any]:
        """What the capture header records about how this arm is invoked."""
        return {"arm": self.name, "argv": list(self.argv), "cwd": self.cwd, "timeout": self.timeout}

    @classmethod
    def from_mapping(cls, name: str, table: Any, source: str, base_dir: Path | None = None) -> "CommandArmSpec":
        """Validate every field; an error names the arm (in `source`) and the field."""
        def bad(field_name: str | None, message: str) -> InputError:
            return InputError(source, message, field=field_name)

        if not isinstance(name, str) or not ARM_NAME.match(name):
            raise bad(None, f"arm name {name!r} must start with a letter or digit and hold only letters, digits and . _ : + -")
        if not isinstance(table, Mapping):
            raise bad(None, "an arm is a table of fields")
        unknown = sorted(set(table) - set(_FIELDS))
        if unknown:
            raise bad(unknown[0], f"unknown field (known: {', '.join(_FIELDS)})")
        argv = table.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(part, str) for part in argv):
            raise bad("argv", "expected a non-empty list of strings")
        if template_placeholders(argv[0]) or not argv[0]:
            raise bad("argv", "argv[0] names the program and may not be empty or hold a placeholder")
        program = argv[0]
        if "/" in program and not os.path.isabs(program) and base_dir is not None:
            program = str((base_dir / program).absolute())
        env = table.get("env", {})
        if not isinstance(env, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise bad("env", "expected a table of string values")
        for part in (*argv, *env.values()):
            unknown_placeholders = sorted(template_placeholders(part) - set(PLACEHOLDERS))
            if unknown_placeholders:
                raise bad("argv" if part in argv else "env", f"unknown placeholder {{{unknown_placeholders[0]}}} (known: {', '.join(PLACEHOLDERS)}; "
                          f"write {{{{{unknown_placeholders[0]}}}}} for a literal)")
        ranking = table.get("ranking")
        if not isinstance(ranking, str):
            raise bad("ranking", "expected a path into the JSON stdout, e.g. 'results[].path'")
        state = table.get("state")
        for field_name, path in (("ranking", ranking), ("state", state)):
            if path is not None:
                if not isinstance(path, str):
                    raise bad(field_name, "expected a path string")
                try:
                    parse(path)
                except PathSyntaxError as error:
                    raise bad(field_name, str(error)) from None
        cwd = table.get("cwd", "root")
        if not isinstance(cwd, str) or (cwd != "root" and check_relative_path(cwd)):
            raise bad("cwd", f"expected 'root' or a relative directory inside the copy, got {cwd!r}")
        timeout = table.get("timeout", 120)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise bad("timeout", f"expected a positive number of seconds, got {timeout!r}")
        abstain = table.get("abstain_states", [])
        if not isinstance(abstain, list) or not all(isinstance(s, str) for s in abstain):
            raise bad("abstain_states", "expected a list of strings")
        if abstain and state is None:
            raise bad("abstain_states", "needs a 'state' path to read the state from")
        max_chars = table.get("max_query_chars")
        if max_chars is not None and (isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1):
            raise bad("max_query_chars", f"expected a positive whole number, got {max_chars!r}")
        probe = table.get("cache_probe")
        if probe is not None and (not isinstance(probe, str) or check_relative_path(probe)):
            raise bad("cache_probe", f"expected a relative path inside the copy, got {probe!r}")
        requires = table.get("requires_changed_file", False)
        if not isinstance(requires, bool):
            raise bad("requires_changed_file", "expected true or false")
        top_score = table.get("top_score")
        if top_score is not None:
            if not isinstance(top_score, str):
                raise bad("top_score", "expected a path string, e.g. 'results[0].score'")
            try:
                parse(top_score)
            except PathSyntaxError as error:
                raise bad("top_score", str(error)) from None
        return cls(name=name, argv=(program, *argv[1:]), ranking=ranking, cwd=cwd, timeout=float(timeout), env=dict(env),
                   state=state, abstain_states=tuple(abstain), max_query_chars=max_chars, cache_probe=probe,
                   requires_changed_file=requires, snapshot_latency=_latency_spec(table, bad, base_dir), top_score=top_score)


def _latency_spec(table: Mapping[str, Any], bad: Any, base_dir: Path | None) -> SnapshotLatencySpec | None:
    """`index`, `snapshot_store` and `snapshot_trace`: all three or none (matched snapshot latency)."""
    given = [name for name in _LATENCY_FIELDS if name in table]
    if not given:
        return None
    if len(given) < len(_LATENCY_FIELDS):
        missing = [name for name in _LATENCY_FIELDS if name not in table]
        raise bad(missing[0], f"{', '.join(given)} needs {', '.join(missing)} too: an arm measured cold and hit declares its index step, "
                  "its snapshot store and its trace variable")
    index = table["index"]
    if not isinstance(index, list) or not index or not all(isinstance(part, str) and part for part in index):
        raise bad("index", "expected a non-empty list of strings (the argv of the index step)")
    for part in index:
        unknown = sorted(template_placeholders(part) - set(INDEX_PLACEHOLDERS))
        if unknown or template_placeholders(index[0]):
            raise bad("index", f"the index step may hold only the {{root}} placeholder, and not in argv[0] (got {part!r})")
    program = index[0]
    if "/" in program and not os.path.isabs(program) and base_dir is not None:
        program = str((base_dir / program).absolute())
    store = table["snapshot_store"]
    if not isinstance(store, str) or check_relative_path(store) or store in (".", ".git"):
        raise bad("snapshot_store", f"expected a relative path inside the copy (not the copy or .git itself), got {store!r}")
    trace = table["snapshot_trace"]
    if not isinstance(trace, str) or not _ENV_NAME.match(trace):
        raise bad("snapshot_trace", f"expected an environment variable name, got {trace!r}")
    return SnapshotLatencySpec(index=(program, *index[1:]), store=store, trace=trace)


# -- the arm --------------------------------------------------------------------------------------
@contextmanager
def _query_file(text: str | None) -> Iterator[str]:
    """A private temporary file holding the query text, removed after the call (outside the copy)
    and by a signal during it."""
    if text is None:
        yield ""
        return
    with leftovers.held_signals():
        fd, name = tempfile.mkstemp(prefix="retrieval-bench-query-", suffix=".txt")
        leftovers.track(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8", errors="surrogatepass"))
        yield name
    finally:
        Path(name).unlink(missing_ok=True)
        leftovers.forget(name)


def _relative(path: str, root: Path) -> str:
    """Accept `./x` and absolute paths below the copy as the repo-relative path they name."""
    if os.path.isabs(path):
        try:
            return Path(path).relative_to(root).as_posix()
        except ValueError:
            return path
    return path[2:] if path.startswith("./") else path


class CommandArm:
    """Runs a declared program once per item and reads its ranking from JSON stdout."""

    def __init__(self, spec: CommandArmSpec):
        self.spec = spec
        self.name = spec.name
        self.max_query_chars = spec.max_query_chars
        self.capture: CaptureWriter | None = None
        self.identity = ExecutableIdentity(f"command:{os.path.basename(spec.argv[0])}", spec.argv[0])
        self.snapshot_latency = spec.snapshot_latency
        self.timeout = spec.timeout

    def descriptor(self) -> dict[str, Any]:
        return self.spec.descriptor()

    def retrieve(self, request: Request) -> Answer:
        self._check_request(request)
        root = request.snapshot.directory(fresh=True)  # each item starts from the committed tree
        return self.call_in(request, root, "ordinary", {}).answer

    def _check_request(self, request: Request) -> None:
        spec = self.spec
        if (spec.requires_changed_file or "changed_file" in spec.placeholders) and not request.changed_file:
            raise ArmError(NO_CHANGED_FILE)

    def call_in(self, request: Request, root: Path, phase: str, extra_env: Mapping[str, str]) -> Observation:
        """One call in `root` as it is (the caller reset it or prepared it), `extra_env` added."""
        self._check_request(request)
        spec = self.spec
        text = request.query_text[: spec.max_query_chars] if spec.max_query_chars else request.query_text
        cwd = root if spec.cwd == "root" else root / spec.cwd
        if not cwd.is_dir() or not cwd.resolve().is_relative_to(root.resolve()):
            raise ArmError(f"working directory {spec.cwd!r} is not a directory inside the snapshot copy")
        cache = cache_state(root, spec.cache_probe)
        with _query_file(text if "query_file" in spec.placeholders else None) as query_file:
            values = {"query": text, "query_file": query_file, "k": str(request.k), "changed_file": request.changed_file or "", "root": str(root)}
            argv = [substitute(part, values) for part in spec.argv]
            env = {**os.environ, **{key: substitute(value, values) for key, value in spec.env.items()}, **extra_env}
            if any("\x00" in part for part in [*argv, *env.values()]):
                raise ArmError("the query holds a NUL byte, which a command line or environment variable cannot carry; "
                               "pass it with {query_file} instead")
            outcome = invoke(self.name, argv, cwd=cwd, env=env, timeout=spec.timeout, request=request, task=text, capture=self.capture,
                             phase=phase)
        document = outcome.packet()
        try:
            ranking = [_relative(entry, root) if isinstance(entry, str) else entry for entry in extract(document, spec.ranking)]
        except PathMissError as error:
            raise outcome.fail(f"ranking path {spec.ranking!r} does not resolve: {error}") from None
        try:
            state = extract_scalar(document, spec.state) if spec.state else None
        except PathMissError as error:
            raise outcome.fail(f"state path {spec.state!r} does not resolve: {error}") from None
        ranking = distinct_strings(ranking, "ranking")
        abstained = not ranking or (state is not None and state in spec.abstain_states)
        top_score = None
        if spec.top_score and not abstained:
            try:
                top_score = extract_scalar(document, spec.top_score)
            except PathMissError as error:
                raise outcome.fail(f"top_score path {spec.top_score!r} does not resolve: {error}") from None
        answer = Answer(ranking=[] if abstained else ranking, state=state, packet_bytes=outcome.packet_bytes, cache_state=cache, abstained=abstained)
        return Observation(answer, top_score, outcome.invocation.stderr or b"")


# -- integration ----------------------------------------------------------------------------------
def _toml_loads(pyproject: Path) -> Any:
    try:
        import tomllib as toml  # type: ignore[import-not-found]
    except ImportError:
        try:
            import tomli as toml  # type: ignore[import-not-found,no-redef]
        except ImportError:
            raise BenchError(f"{pyproject}: reading [tool.retrieval-bench.arms] needs Python 3.11+ or, on Python 3.10, "
                             "the 'tomli' package (pip install tomli)") from None
    try:
        return toml.loads(pyproject.read_bytes().decode("utf-8"))
    except (toml.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputError(str(pyproject), f"not valid TOML: {error}") from None


def declared_arm(name: str, table: Any, source: str, base_dir: Path | None) -> Any:
    """A declared table as the arm it declares: a command agent with `kind = "agent"`, else a
    command arm (`kind = "ranking"` may be written out)."""
    from pytest_retrieval_bench.arms.agents.command_agent import CommandAgentArm, CommandAgentSpec, check_kind, is_agent_table  # it builds on this module

    check_kind(table, source)
    if is_agent_table(table):
        return CommandAgentArm(CommandAgentSpec.from_mapping(name, table, source, base_dir))
    if isinstance(table, Mapping):
        table = {key: value for key, value in table.items() if key != "kind"}
    return CommandArm(CommandArmSpec.from_mapping(name, table, source, base_dir))


def load_command_arms(pyproject: Path) -> list[Any]:
    """The arms declared as `[tool.retrieval-bench.arms.NAME]` tables, in file order ([] if none)."""
    pyproject = Path(pyproject)
    if not pyproject.is_file() or b"retrieval-bench" not in pyproject.read_bytes():
        return []  # no table to read: never require a TOML parser for it
    section: Any = _toml_loads(pyproject).get("tool", {})
    for key in ("retrieval-bench", "arms"):
        section = section.get(key, {}) if isinstance(section, dict) else None
    arms = section
    if not isinstance(arms, dict):
        raise InputError(str(pyproject), "[tool.retrieval-bench.arms] must be a table of arm tables")
    return [declared_arm(name, table, f"{pyproject} [tool.retrieval-bench.arms.{name}]", pyproject.parent) for name, table in arms.items()]


def parse_command_arm_option(text: str, base_dir: Path | None = None) -> Any:
    """`--bench-command-arm NAME=JSON`: the same fields as the TOML table, as one JSON object."""
    name, separator, payload = text.partition("=")
    source = f"--bench-command-arm {name.strip() or repr(text)}"
    if not separator or not name.strip():
        raise InputError(source, "expected NAME=JSON, e.g. mytool={\"argv\": [\"mytool\", \"{query}\"], \"ranking\": \"results[].path\"}")
    try:
        table = orjson.loads(payload)
    except orjson.JSONDecodeError as error:
        raise InputError(source, f"malformed JSON: {error}") from None
    return declared_arm(name.strip(), table, source, base_dir or Path.cwd())
