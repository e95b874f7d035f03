"""Samples -> pytest items: one collector per samples file, one parametrized item per sample x arm.

An item is a real `pytest.Function` named `<sample id>[<arm>]` (original name: the sample id,
parameter id: the arm), so node ids round-trip through pytest's own parsing (`--lf`, `--ff`,
`--sw`, a printed node id passed back). Each item is indirectly parametrized by its snapshot on
the session-scoped `bench_snapshot` fixture: pytest then sets a snapshot up once before its first
item, tears it down when the next snapshot is needed, and shows both in `--setup-show`.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import TYPE_CHECKING, Any, Callable, Iterator

import pytest
from _pytest.python import FunctionDefinition

from pytest_retrieval_bench.arms.agents.arm import AgentArm
from pytest_retrieval_bench.arms.agents.python_agent import TOOLS_FIXTURE
from pytest_retrieval_bench.arms.agents.replay import ReplayArm
from pytest_retrieval_bench.arms.fusion import FusionArm
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.fixture_scopes import declaring_directory
from pytest_retrieval_bench.junit import item_properties
from pytest_retrieval_bench.arms.fixture_arms import REQUEST_FIXTURE, FixtureArm
from pytest_retrieval_bench.arms.fixture_embedders import bind_embedders
from pytest_retrieval_bench.bench.agent_run import leakage_skip
from pytest_retrieval_bench.samples.model import Sample
from pytest_retrieval_bench.terminal import MessageRepr
from pytest_retrieval_bench.tracebacks import arm_traceback

if TYPE_CHECKING:
    from pytest_retrieval_bench.bench.session import BenchSession

RECORD_KEY = pytest.StashKey[dict[str, Any]]()
SNAPSHOT_FIXTURE = "bench_snapshot"


class ItemFailure(BenchError):
    """Raised from an item to fail it with a one-line message and no traceback."""


def object_arm_item(bench_snapshot: Any, bench_request: Any) -> None:
    """The test function of an item whose arm is an object (built-in, hook, entry point, command).

    Never called: its parameters name the fixtures such an item needs; `BenchItem.runtest`
    calls the arm itself.
    """


def fusion_item_function(fusion: FusionArm, arms: dict[str, Any]) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The test function of a fusion's items: the snapshot, and every fixture its fixture-arm
    components take (so pytest sets them up for the fused item too); plus their variant values."""
    names = [SNAPSHOT_FIXTURE, REQUEST_FIXTURE]
    params: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for component in fusion.component_names:
        arm = arms[component]
        if not isinstance(arm, FixtureArm):
            continue
        names += [name for name in arm.parameters() if name not in names]
        for name, value in arm.params.items():
            if name in params and owner[name] != component:
                raise BenchError(f"fusion {fusion.name!r}: components {owner[name]!r} and {component!r} both set parameter {name!r}")
            params[name], owner[name] = value, component

    def fused_item(**fixtures: Any) -> None:
        """Never called: `BenchItem.runtest` runs the components and fuses their records."""

    fused_item.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in names])
    return fused_item, params


class BenchFile(pytest.File):
    """The items of one samples file."""

    bench: "BenchSession"
    index: int

    def collect(self) -> Iterator[pytest.Item]:
        loaded = self.bench.loaded[self.index]
        for number, problem in enumerate(loaded.problems, start=1):
            line = f"line{problem.line}" if problem.line is not None else f"file{number}"
            yield InvalidRowItem.from_parent(self, name=f"invalid-{line}", message=str(problem))
        for sample in self.bench.selected_samples(self.index):
            for arm_name in self.bench.arm_names:
                yield from self._items(sample, arm_name)

    def _items(self, sample: Sample, arm_name: str) -> Iterator["BenchItem"]:
        arm = self.bench.arms[arm_name]
        function: Callable[..., Any] = arm.function if isinstance(arm, FixtureArm) else object_arm_item
        params: dict[str, Any] = arm.params if isinstance(arm, FixtureArm) else {}
        if isinstance(arm, FusionArm):
            try:
                function, params = fusion_item_function(arm, self.bench.arms)
            except BenchError as error:
                raise self.CollectError(str(error)) from None
        declared = [part.declared for part in [arm, *(self.bench.arms[name] for name in getattr(arm, "component_names", ()))]
                    if isinstance(part, FixtureArm)]
        scope = declaring_directory(self.config, declared) or self  # fixtures as seen where the arm is declared
        definition = FunctionDefinition.from_parent(scope, name=sample.id, callobj=function)
        fixtureinfo = definition._fixtureinfo
        if SNAPSHOT_FIXTURE not in fixtureinfo.names_closure:
            raise self.CollectError(f"arm {arm_name!r}: its function must take {REQUEST_FIXTURE!r} (or {SNAPSHOT_FIXTURE!r})")
        metafunc = pytest.Metafunc(definition, fixtureinfo, self.config, _ispytest=True)
        key = self.bench.snapshot_param(sample.snapshot_key)
        metafunc.parametrize(SNAPSHOT_FIXTURE, [key], indirect=True, scope="session", ids=[pytest.HIDDEN_PARAM])
        if params:
            names = list(params)
            metafunc.parametrize(names, [tuple(params[name] for name in names)], ids=[pytest.HIDDEN_PARAM])
        metafunc._recompute_direct_params_indices()
        fixtureinfo.prune_dependency_tree()
        ordinal = self.bench.snapshot_ordinal(sample.snapshot_key)
        for callspec in metafunc._calls:
            # the id is the arm's name; the snapshot's index keys pytest's grouping of items by snapshot
            callspec = dataclasses.replace(callspec, _idlist=[arm_name], indices={**callspec.indices, SNAPSHOT_FIXTURE: ordinal})
            yield BenchItem.from_parent(self, name=f"{sample.id}[{arm_name}]", originalname=sample.id, callspec=callspec,
                                        callobj=function, fixtureinfo=fixtureinfo, keywords={arm_name: True}, sample=sample, arm_name=arm_name)


class BenchItem(pytest.Function):
    """One sample x arm. Set-up: the snapshot (session fixture), the arm's fixtures, its `prepare`."""

    _use_item_location = True  # skip reasons point at the sample's line, not at this file

    def __init__(self, *, sample: Sample, arm_name: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.sample = sample
        self.arm_name = arm_name
        owner, _, name = sample.repo.partition("/")
        self.extra_keyword_matches.update({sample.id, sample.repo, owner, name, sample.task_type, sample.stratum, arm_name})
        self.add_marker(pytest.mark.xdist_group(sample.snapshot_key))

    @property
    def bench(self) -> "BenchSession":
        return self.parent.bench  # type: ignore[union-attr]

    @property
    def arm(self) -> Any:
        return self.bench.arms[self.arm_name]

    def setup(self) -> None:
        if self.sample.skip_reason:  # before any fixture: a skipped sample loads no snapshot
            raise pytest.skip.Exception(self.sample.skip_reason, _use_item_location=True)
        if isinstance(self.arm, ReplayArm):  # a replay: only samples with a recorded trajectory (the bench checks no leakage there)
            if missing := self.arm.skip_reason(self.sample.id):
                raise pytest.skip.Exception(missing, _use_item_location=True)
        elif isinstance(self.arm, AgentArm) and (leaking := leakage_skip(self.sample)):
            raise pytest.skip.Exception(leaking, _use_item_location=True)
        super().setup()  # fixtures: the snapshot first (session scope), then the arm's own
        bind_embedders(self.arm, self.bench.arms, self.funcargs)  # an `@embedder(...)` arm's embedder, from its fixtures
        self.bench.prepare_arm(self.arm, self.funcargs[SNAPSHOT_FIXTURE])

    def runtest(self) -> None:
        arm = self.arm
        snapshot = self.funcargs[SNAPSHOT_FIXTURE]
        request = self.funcargs.get(REQUEST_FIXTURE) or self.bench.make_request(self.sample, self.arm_name, snapshot)  # an agent may take only `bench_tools`
        raised: list[BaseException] = []
        if isinstance(arm, FusionArm):
            record = self.bench.run_fused(self.sample, arm, snapshot, self.funcargs)
        elif isinstance(arm, AgentArm):
            env, act = None, None
            if isinstance(arm, FixtureArm):  # a Python agent: its function, with its fixtures (`bench_tools`, the environment, among them)
                arguments = {name: self.funcargs[name] for name in self._fixtureinfo.argnames}
                env, act = self.funcargs.get(TOOLS_FIXTURE), lambda env: arm.call(arguments, env)
            record = self.bench.agents.run(self.sample, arm, request, snapshot, raised, env, act)
        else:
            if isinstance(arm, FixtureArm):
                arguments = {name: self.funcargs[name] for name in self._fixtureinfo.argnames}
                call: Callable[[], Any] = lambda: arm.function(**arguments)
            else:
                call = lambda: arm.retrieve(request)
            record = self.bench.run(self.sample, self.arm_name, request, snapshot, call, raised)
        self.stash[RECORD_KEY] = record
        for name, value in item_properties(record):
            self.user_properties.append((name, value))
        if record["error"]:
            if raised:  # the arm's own exception, shown by pytest from the arm's frame on (`_traceback_filter`)
                raise raised[0]
            raise ItemFailure(f"arm {self.arm_name} failed on {self.sample.id}: {record['error']}")
        regression = self.bench.regression(record)
        if regression:
            raise ItemFailure(f"{self.sample.id} ({self.sample.repo}) regressed against the baseline with arm {self.arm_name}: {regression}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, BenchError):
            return MessageRepr(str(excinfo.value), str(self.path), self.sample.line)
        return super().repr_failure(excinfo)  # pytest's own, `--tb` and `--showlocals` included

    def _traceback_filter(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:
        """The traceback from the arm's own code on, as pytest cuts a test's at its function."""
        if self.config.getoption("fulltrace", False):
            return excinfo.traceback
        return arm_traceback(excinfo, self.config.getoption("tbstyle", "auto"))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, self.sample.line - 1, f"{self.sample.id}[{self.arm_name}] ({self.sample.repo}, {self.sample.task_type})"


class InvalidRowItem(pytest.Item):
    """A samples row that could not be read: fails with file, line and field; others still run."""

    def __init__(self, *, message: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.message = message

    def runtest(self) -> None:
        raise ItemFailure(self.message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return MessageRepr(str(excinfo.value), str(self.path))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.name
