"""pytest hooks and fixtures only: each hook decides nothing and delegates to the `BenchSession`.

Without samples (`--bench-samples`, `bench_samples` in the ini, or a samples file named on the
command line) every hook returns at once, so the plugin stays out of the way: this module imports
only what options and fixtures need, and the session, collection and reporting modules (and
numpy) are imported once a bench is configured, so a pytest run without one does not pay for them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generator

import pytest

from pytest_retrieval_bench import dist_mode, hookspecs, leftovers, progress
from pytest_retrieval_bench.bench.ini_samples import note_ini_samples_not_applied
from pytest_retrieval_bench.fixtures import SESSION_KEY, bench_request, bench_samples, bench_session, bench_snapshot, bench_snapshots, bench_tools
from pytest_retrieval_bench.options import WORKER_DIRS, Settings, add_options, path_bases, read_settings, samples_for_run

if TYPE_CHECKING:
    from pytest_retrieval_bench.bench.session import BenchSession

__all__ = ["bench_request", "bench_samples", "bench_snapshot", "bench_snapshots", "bench_tools"]  # fixtures, registered by import

WORKER_BASE = "retrieval_bench_base_dir"
WORKER_SAMPLES = "retrieval_bench_samples"
WORKER_BENCH_ONLY = "retrieval_bench_only"


#: a usage error on an xdist worker, reported as its collection error instead of raised at configure
WORKER_PROBLEM_KEY = pytest.StashKey[str]()
#: this configure installed the SIGTERM handling that unconfigure releases
SIGNALS_KEY = pytest.StashKey[bool]()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)
    pluginmanager.register(dist_mode, "retrieval-bench-dist-mode")  # reads whether an xdist mode was given, before xdist fills one in


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)
    progress.add_ini(parser)


def _role(config: pytest.Config) -> str:
    if hasattr(config, "workerinput"):
        return "worker"
    if config.pluginmanager.has_plugin("xdist") and config.getoption("dist", "no") != "no" and not config.getoption("collectonly"):
        return "controller"
    return "local"


def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """`--bench-summarize` merges written reports instead of running a session."""
    if not config.getoption("bench_summarize"):
        return None
    from pytest_retrieval_bench.bench.summarize_run import summarize_reports

    settings = read_settings(config)
    _refuse_destructive_outputs(settings)
    leftovers.install()  # no session is configured: a SIGTERM while the merge is written removes what it made
    try:
        return summarize_reports(config, settings)
    finally:
        leftovers.release()


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "xdist_group(name): keep a snapshot's items on one xdist worker")
    settings = read_settings(config)
    role = _role(config)
    if role == "worker":  # the controller decided which samples run, and whether alone
        workerinput: dict[str, Any] = config.workerinput  # type: ignore[attr-defined]
        samples, bench_only = tuple(Path(path) for path in workerinput.get(WORKER_SAMPLES, ())), workerinput.get(WORKER_BENCH_ONLY, False)
    else:
        samples, bench_only = samples_for_run(config, settings)
    if not samples:
        note_ini_samples_not_applied(config)
        return
    from pytest_retrieval_bench.bench.session import BenchSession
    from pytest_retrieval_bench.corpus.copies import make_base_directory
    from pytest_retrieval_bench.terminal import SnapshotProgress

    settings = settings.with_samples(samples)
    if role != "worker":
        _refuse_destructive_outputs(settings)
    if role == "local":  # a worker has no terminal; the controller sets no snapshot up
        progress.install(config)
    if role == "worker":
        base, owns = Path(config.workerinput[WORKER_BASE]), False  # type: ignore[attr-defined]
    else:
        leftovers.install()  # before the directory exists: SIGTERM during the arm hooks removes it too
        config.stash[SIGNALS_KEY] = True
        base, owns = make_base_directory(), True
    try:
        bench = BenchSession(config, settings, role, base, owns, bench_only)
    except pytest.UsageError as error:
        if role == "worker":  # raised here, xdist's controller would wait for this worker forever
            config.stash[WORKER_PROBLEM_KEY] = str(error)
            return
        if owns:
            _remove_base(base)
        raise
    except BaseException:
        if owns:
            _remove_base(base)
        raise
    config.stash[SESSION_KEY] = bench
    if role != "worker":
        config.pluginmanager.register(RecordCollector(bench), "retrieval-bench-records")
        config.pluginmanager.register(SnapshotProgress(bench, config), "retrieval-bench-progress")
    if role == "controller":
        from pytest_retrieval_bench.xdist import ControllerHooks

        dist_mode.choose_snapshot_groups(config)

        invocation, rootdir = path_bases(config)
        config.pluginmanager.register(ControllerHooks(bench, {WORKER_BASE: str(base), WORKER_SAMPLES: [str(path) for path in samples],
                                                             WORKER_BENCH_ONLY: bench_only,
                                                             WORKER_DIRS: {"invocation": str(invocation), "rootdir": str(rootdir)}}),
                                      "retrieval-bench-xdist")


def _refuse_destructive_outputs(settings: Settings) -> None:
    """A usage error before anything runs when an output would overwrite an input or another output."""
    from pytest_retrieval_bench.bench.outputs import check_run_outputs
    from pytest_retrieval_bench.errors import BenchError

    try:
        check_run_outputs(settings)
    except BenchError as error:
        raise pytest.UsageError(str(error)) from None


def _remove_base(base: Path) -> None:
    from pytest_retrieval_bench.files.remove_tree import remove_tree

    remove_tree(base, ignore_errors=True)
    leftovers.forget(base)


def pytest_unconfigure(config: pytest.Config) -> None:
    bench = bench_session(config)
    if bench is not None:
        bench.close()
    if config.stash.get(SIGNALS_KEY, False):
        leftovers.release()


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    bench = bench_session(config)
    if bench is None or bench.role == "worker":
        return None
    from pytest_retrieval_bench.terminal import header_lines

    return header_lines(bench) + dist_mode.header_lines(config)


def pytest_sessionstart(session: pytest.Session) -> None:
    bench = bench_session(session.config)
    if bench is not None and bench.role != "worker":
        bench.start()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A samples file named on the command line is collected like a test file."""
    bench = bench_session(parent.config)
    if bench is None or not parent.session.isinitpath(file_path):
        return None
    index = bench.samples_index(file_path)
    if index is None:
        return None
    from pytest_retrieval_bench.collect import BenchFile

    node = BenchFile.from_parent(parent, path=file_path)
    node.bench, node.index = bench, index
    return node


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    """Samples given by option (not as test paths) join the session's top-level collectors; every
    collected directory is noted, for the fixture arms its conftest declares."""
    report = yield
    problem = collector.config.stash.get(WORKER_PROBLEM_KEY, None)
    if problem is not None and isinstance(collector, pytest.Session):  # a worker that cannot run the bench says why
        report.outcome, report.longrepr, report.result = "failed", problem, []
        return report
    bench = bench_session(collector.config)
    if bench is None or report.outcome != "passed":
        return report
    from pytest_retrieval_bench.fixture_scopes import note_directory

    note_directory(collector)
    if not isinstance(collector, pytest.Session):
        return report
    from pytest_retrieval_bench.collect import BenchFile

    if bench.bench_only:
        report.result = []
    for index, path in enumerate(bench.settings.samples):
        if not collector.isinitpath(path):
            node = BenchFile.from_parent(collector, path=path, nodeid=_file_nodeid(collector.config, path))
            node.bench, node.index = bench, index
            report.result.append(node)
    # samples files last: the directories given beside them are collected first, so a fixture arm
    # declared in one of their conftests finds that directory's fixtures (fixture_scopes)
    report.result.sort(key=lambda node: isinstance(node, BenchFile))
    return report


def _file_nodeid(config: pytest.Config, path: Path) -> str:
    """Relative to the (controller's) rootdir, with `..` outside it, so the printed node id works
    when passed back and every worker names the items as the controller does."""
    return Path(os.path.relpath(path.resolve(), path_bases(config)[1])).as_posix()


def pytest_collection_finish(session: pytest.Session) -> None:
    bench = bench_session(session.config)
    if bench is None:
        return
    from pytest_retrieval_bench.collect import BenchItem

    bench.plan_indexes(session.items)
    if bench.role == "local":
        bench.expect(item.nodeid for item in session.items if isinstance(item, BenchItem))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Records travel on reports: the call's record, or an error record for a failed set-up."""
    report = yield
    if bench_session(item.config) is None:
        return report
    from pytest_retrieval_bench.bench.snapshot_checks import snapshot_checks
    from pytest_retrieval_bench.collect import RECORD_KEY, BenchItem
    from pytest_retrieval_bench.terminal import show_snapshot_failure_once

    if not isinstance(item, BenchItem):
        return report
    if call.when == "call" and RECORD_KEY in item.stash:
        report.retrieval_bench_record = item.stash[RECORD_KEY]
    elif call.when == "setup" and report.failed:
        message = (report.longreprtext or "set-up failed").strip().splitlines()
        report.retrieval_bench_record = item.bench.setup_failure_record(item.sample, item.arm_name, message[-1] if message else "set-up failed")
        show_snapshot_failure_once(item, call, report)
    elif call.when == "setup" and report.skipped and item.sample.skip_reason:
        report.retrieval_bench_record = {"sample_id": item.sample.id, "arm": item.arm_name, "skipped": item.sample.skip_reason}
    if call.when in ("setup", "call"):  # an agent's grep index is loaded or built during its call
        report.retrieval_bench_setup = item.bench.store.drain_events()
    if call.when == "setup":
        snapshot_checks(item.config).attach(report)
        report.retrieval_bench_loads = item.bench.store.drain_loads()
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    record = getattr(report, "retrieval_bench_record", None)
    bench = bench_session(config)
    if record is not None and bench is not None and report.when == "call" and report.passed:
        from pytest_retrieval_bench.terminal import status_of

        sample = bench.samples_by_id.get(record["sample_id"])
        return status_of(record, bench.settings.limit, f"{sample.repo}, {sample.task_type}" if sample else "")
    return None


class RecordCollector:
    """Registered in the local process or the xdist controller: records arrive on reports."""

    def __init__(self, bench: BenchSession):
        self.bench = bench

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        from pytest_retrieval_bench.bench.snapshot_checks import snapshot_checks

        self.bench.snapshot_setups.extend(getattr(report, "retrieval_bench_setup", None) or ())
        snapshot_checks(self.bench.config).receive(report)
        worker = getattr(report, "worker_id", None)  # xdist's, on a worker's report
        self.bench.snapshot_loads.extend((key, worker) for key in getattr(report, "retrieval_bench_loads", None) or ())
        record = getattr(report, "retrieval_bench_record", None)
        if record is not None:
            self.bench.add_record(record)
        elif report.skipped:
            self.bench.add_skipped(report.nodeid)
        elif report.failed:
            reason = (report.longreprtext or "").strip().splitlines()
            self.bench.add_lost(report.nodeid, reason[-1] if reason else f"{report.when} failed")

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_modifyreport(self, json_report: dict[str, Any]) -> None:
        """pytest-json-report: the whole canonical report under `retrieval_bench`."""
        if self.bench.report_bytes is not None:
            import orjson

            json_report["retrieval_bench"] = orjson.loads(self.bench.report_bytes)  # as written: rounded


@pytest.hookimpl(optionalhook=True)
def pytest_json_runtest_metadata(item: pytest.Item, call: pytest.CallInfo[None]) -> dict[str, Any] | None:
    """pytest-json-report: each bench item's record under its `metadata`."""
    if bench_session(item.config) is None:
        return None
    from pytest_retrieval_bench.collect import RECORD_KEY, BenchItem

    if isinstance(item, BenchItem) and call.when == "call" and RECORD_KEY in item.stash:
        return {"retrieval_bench": item.stash[RECORD_KEY]}
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, Any, Any]:
    bench = bench_session(session.config)
    try:
        return (yield)
    finally:
        if bench is not None and bench.role != "worker":
            from pytest_retrieval_bench.junit import add_suite_properties
            from pytest_retrieval_bench.terminal import add_failures_to_summary

            bench.finish()
            add_suite_properties(session.config, bench.records.values())
            session.testsfailed += len(bench.failures)
            add_failures_to_summary(session.config, bench.failures)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A shard with no snapshot of its own (more CI jobs than snapshots) has nothing to run: not an error."""
    bench = bench_session(session.config)
    if bench is not None and bench.role != "worker" and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and bench.shard_keys == set():
        session.exitstatus = pytest.ExitCode.OK


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    bench = bench_session(config)
    if bench is not None and bench.role != "worker" and bench.writes_outputs:
        from pytest_retrieval_bench.terminal import summary_lines

        for line, markup in summary_lines(bench):
            terminalreporter.write_line(line, **markup)
