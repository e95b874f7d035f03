"""The plugin's fixtures: the snapshot an item runs against, its request, and read access for tests.

`bench_snapshot` is session-scoped and indirectly parametrized by each item with its snapshot
key, so pytest materializes a snapshot (read, private copy on demand, indexes) once before the
snapshot's first item and finalizes it when the next snapshot is needed: one snapshot per
process at a time, shown by `--setup-show` and charged to set-up by `--durations`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

import pytest

from pytest_retrieval_bench.errors import SnapshotError

if TYPE_CHECKING:  # what the fixtures use is imported once a bench is active, so a run without one never loads it
    from pytest_retrieval_bench.arms.base import Request
    from pytest_retrieval_bench.bench.session import BenchSession
    from pytest_retrieval_bench.corpus.snapshot import Snapshot
    from pytest_retrieval_bench.samples.model import Sample

SESSION_KEY = pytest.StashKey["BenchSession"]()


def bench_session(config: pytest.Config) -> BenchSession | None:
    return config.stash.get(SESSION_KEY, None)


def _active(request: pytest.FixtureRequest) -> BenchSession:
    bench = bench_session(request.config)
    if bench is None:
        pytest.fail("the retrieval bench is not active in this run (give --bench-samples or a samples file)", pytrace=False)
    return bench


@pytest.fixture(scope="session")
def bench_snapshot(request: pytest.FixtureRequest) -> Iterator[Snapshot]:
    """The snapshot of the current bench item, with the indexes its selected arms use."""
    from pytest_retrieval_bench.bench.snapshot_checks import snapshot_checks
    from pytest_retrieval_bench.bench.snapshot_failures import SnapshotUnavailable
    from pytest_retrieval_bench.progress import showing_setup

    bench = _active(request)
    key = getattr(request, "param", None)
    if not isinstance(key, str):
        pytest.fail("bench_snapshot is set up by bench items; in a test, use bench_snapshots(key)", pytrace=False)
    try:
        with showing_setup(request.config, key) as notify:
            snapshot = bench.open_snapshot(key, notify)
    except SnapshotError as error:
        problem = f"snapshot {key}: {error}"
    else:
        problem = None
    if problem is not None:
        raise SnapshotUnavailable(key, problem)  # outside the except: one message, no chained traceback
    snapshot_checks(request.config).check(snapshot, bench.samples_by_id.values())
    yield snapshot
    bench.release_snapshot(key)


@pytest.fixture
def bench_request(request: pytest.FixtureRequest, bench_snapshot: Snapshot) -> Request:
    """What the current item's arm receives: the sample's query, never its gold."""
    bench = _active(request)
    item = request.node
    sample: Sample | None = getattr(item, "sample", None)
    if sample is None:
        pytest.fail("bench_request is only available to bench items", pytrace=False)
    return bench.make_request(sample, getattr(item, "arm_name"), bench_snapshot)


@pytest.fixture
def bench_tools(request: pytest.FixtureRequest, bench_snapshot: Snapshot) -> Any:
    """The current agent item's closed-tool environment: `list_dir`, `grep`, `read_file`, `submit`
    under the agent's budgets, over the snapshot's files; what it records is the item's trajectory."""
    bench = _active(request)
    item = request.node
    arm = bench.arms.get(getattr(item, "arm_name", ""))
    if not callable(getattr(arm, "environment", None)):
        pytest.fail("bench_tools is only available to agent items (@pytest_retrieval_bench.agent)", pytrace=False)
    return bench.agents.environment(arm, bench_snapshot)


@pytest.fixture(scope="session")
def bench_samples(request: pytest.FixtureRequest) -> list[Sample]:
    """Every sample this run loaded (after --bench-task-type and --bench-max-samples), by file order."""
    bench = _active(request)
    return [sample for loaded in bench.loaded for sample in loaded.samples]


@pytest.fixture(scope="session")
def bench_snapshots(request: pytest.FixtureRequest) -> Callable[[str], Snapshot]:
    """A loader `bench_snapshots("owner/name@commit")` for ordinary tests: the snapshot as the
    arms see it, read from the run's snapshot sources (not held by the bench's own store)."""
    bench = _active(request)

    def load(key: str) -> Any:
        try:
            return bench.load_snapshot(key)
        except SnapshotError as error:
            problem = f"snapshot {key}: {error}"
        pytest.fail(problem, pytrace=False)

    return load
