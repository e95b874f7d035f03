"""pytest hooks only: each decides nothing and delegates to the `BenchSession` in config.stash.

Without --bench-samples every hook returns at once, so the plugin stays out of the way.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Generator

import orjson
import pytest

from pytest_retrieval_bench import hookspecs
from pytest_retrieval_bench.corpus.copies import make_base_directory
from pytest_retrieval_bench.collect import RECORD_KEY, BenchFile, BenchItem
from pytest_retrieval_bench.options import add_options, read_settings
from pytest_retrieval_bench.bench.session import BenchSession
from pytest_retrieval_bench.terminal import header_lines, outcome_word, summary_lines

SESSION_KEY = pytest.StashKey[BenchSession]()
WORKER_BASE = "retrieval_bench_base_dir"
WORKER_BENCH_ONLY = "retrieval_bench_only"


def _bench(config: pytest.Config) -> BenchSession | None:
    return config.stash.get(SESSION_KEY, None)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


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
    from pytest_retrieval_bench.bench.session import summarize_reports

    return summarize_reports(config, read_settings(config))


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "xdist_group(name): keep a snapshot's items on one xdist worker")
    settings = read_settings(config)
    if not settings.active:
        return
    role = _role(config)
    if role == "worker":
        base, owns = Path(config.workerinput[WORKER_BASE]), False  # type: ignore[attr-defined]
    else:
        base, owns = make_base_directory(), True
    # No test paths given: only the bench is collected. Workers follow the controller's decision,
    # since xdist hands them the controller's arguments as explicit ones.
    bench_only = config.workerinput[WORKER_BENCH_ONLY] if role == "worker" else config.args_source != pytest.Config.ArgsSource.ARGS  # type: ignore[attr-defined]
    try:
        bench = BenchSession(config, settings, role, base, owns, bench_only)
    except BaseException:
        if owns:
            shutil.rmtree(base, ignore_errors=True)
        raise
    config.stash[SESSION_KEY] = bench
    if role != "worker":
        config.pluginmanager.register(RecordCollector(bench), "retrieval-bench-records")
    if role == "controller":
        from pytest_retrieval_bench.xdist import ControllerHooks

        config.pluginmanager.register(ControllerHooks(bench, WORKER_BASE, WORKER_BENCH_ONLY), "retrieval-bench-xdist")


def pytest_unconfigure(config: pytest.Config) -> None:
    bench = _bench(config)
    if bench is not None:
        bench.close()


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    bench = _bench(config)
    return header_lines(bench) if bench is not None and bench.role != "worker" else None


def pytest_sessionstart(session: pytest.Session) -> None:
    bench = _bench(session.config)
    if bench is not None and bench.role != "worker":
        bench.start()


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    report = yield
    bench = _bench(collector.config)
    if bench is None or not isinstance(collector, pytest.Session) or report.outcome != "passed":
        return report
    if bench.bench_only:
        report.result = []
    for index, path in enumerate(bench.settings.samples):
        node = BenchFile.from_parent(collector, path=path.resolve(), nodeid=_file_nodeid(collector.config, path))
        node.bench, node.index = bench, index
        report.result.append(node)
    return report


def _file_nodeid(config: pytest.Config, path: Path) -> str:
    try:
        return path.resolve().relative_to(config.rootpath).as_posix()
    except ValueError:
        return path.name


def pytest_collection_finish(session: pytest.Session) -> None:
    bench = _bench(session.config)
    if bench is not None and bench.role == "local":
        bench.expect(item.nodeid for item in session.items if isinstance(item, BenchItem))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if isinstance(item, BenchItem) and call.when == "call" and RECORD_KEY in item.stash:
        report.retrieval_bench_record = item.stash[RECORD_KEY]
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    record = getattr(report, "retrieval_bench_record", None)
    if record is not None and report.when == "call" and report.passed:
        word = outcome_word(record)
        return "passed", word[0].lower() if word != "HIT" else ".", word
    return None


class RecordCollector:
    """Registered in the local process or the xdist controller: records arrive on reports."""

    def __init__(self, bench: BenchSession):
        self.bench = bench

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, "retrieval_bench_record", None)
        if record is not None:
            self.bench.add_record(record)
        elif report.failed:
            reason = (report.longreprtext or "").strip().splitlines()
            self.bench.add_lost(report.nodeid, reason[-1] if reason else f"{report.when} failed")

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_modifyreport(self, json_report: dict[str, Any]) -> None:
        """pytest-json-report: the whole canonical report under `retrieval_bench`."""
        if self.bench.report_bytes is not None:
            json_report["retrieval_bench"] = orjson.loads(self.bench.report_bytes)  # as written: rounded


@pytest.hookimpl(optionalhook=True)
def pytest_json_runtest_metadata(item: pytest.Item, call: pytest.CallInfo[None]) -> dict[str, Any] | None:
    """pytest-json-report: each bench item's record under its `metadata`."""
    if isinstance(item, BenchItem) and call.when == "call" and RECORD_KEY in item.stash:
        return {"retrieval_bench": item.stash[RECORD_KEY]}
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, Any, Any]:
    bench = _bench(session.config)
    try:
        return (yield)
    finally:
        if bench is not None and bench.role != "worker":
            bench.finish()
            session.testsfailed += len(bench.failures)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    bench = _bench(config)
    if bench is not None and bench.role != "worker" and bench.report is not None:
        for line in summary_lines(bench):
            terminalreporter.write_line(line)
