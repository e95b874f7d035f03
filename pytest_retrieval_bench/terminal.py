"""What the terminal shows: a header line, snapshot progress, a status per item, a table per arm,
and the run's own failures (gate, baseline update, writes) in pytest's final summary line."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Generator

import pytest
from _pytest._code.code import ReprFileLocation, TerminalRepr
from _pytest.pathlib import bestrelpath

from pytest_retrieval_bench.bench.arms_setup import VECTORS_EVENT
from pytest_retrieval_bench.report.contextbench_section import symbols_lines
from pytest_retrieval_bench.report.run_tables import report_lines
from pytest_retrieval_bench.report.tables import printable
from pytest_retrieval_bench.scoring.outcome import outcome_word
from pytest_retrieval_bench.words import counted

if TYPE_CHECKING:
    from pytest_retrieval_bench.bench.session import BenchSession

#: word -> (category, short letter): distinct letters, documented in the README
STATUS_LETTERS = {"HIT": ".", "MISS": "m", "ABSTAIN": "a", "ANSWER": "n"}
_NEW_LINE = Path("<retrieval-bench: next snapshot>")  # never a test file: makes pytest start a line


class MessageRepr(TerminalRepr):
    """A failure shown as one message, which pytest's short summary also shows (`FAILED id - message`)."""

    def __init__(self, message: str, path: str, line: int | None = None):
        self.message = message
        self.reprcrash = ReprFileLocation(path, line or 0, message)

    def toterminal(self, tw: Any) -> None:
        tw.line(self.message)


def show_snapshot_failure_once(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """A failed set-up's report: when its snapshot is what failed, the one-line message for this item
    (the item's record keeps the whole reason, taken from the report before this)."""
    from pytest_retrieval_bench.bench.snapshot_failures import SnapshotUnavailable

    failure = call.excinfo.value if call.excinfo is not None else None
    if isinstance(failure, SnapshotUnavailable):
        sample = getattr(item, "sample", None)
        report.longrepr = MessageRepr(failure.message_for(item.nodeid), str(item.path), sample.line if sample else None)


def status_of(record: dict[str, Any], limit: int, what: str = "") -> tuple[str, str, str]:
    """pytest's (category, letter, word) for a passed bench item; HIT and MISS name their k, and
    `what` (the repository and task type) follows the word on a `-v` line.

    A miss is its own category, so pytest's final line counts it (`7 missed`) beside the passed
    items; it is still a passed test (exit code, `--lf` and JUnit see it as one). An abstention on
    a positive sample (which carries metrics; a no-gold one does not) found no gold file either, so
    it counts as missed too, keeping its own word: an arm that abstains everywhere is not all green.
    """
    word = outcome_word(record)
    shown = f"{word}@{limit}" if word in ("HIT", "MISS") else word
    if isinstance(record.get("trajectory"), dict):
        shown = f"{word} {trajectory_how(record['trajectory'])}"
    missed = word == "MISS" or (word == "ABSTAIN" and bool(record.get("metrics")))
    return ("missed" if missed else "passed"), STATUS_LETTERS[word], f"{shown} ({what})" if what else shown


def trajectory_how(trajectory: dict[str, Any]) -> str:
    """How an agent's item ended: `final 1/3, 5 reads, 3,600 tokens` (gold among the final files
    where the sample has gold), and on a ContextBench row the final context's line coverage."""
    final = len(trajectory.get("final_files") or [])
    shown = f"final {trajectory['final_gold']}/{final}" if "final_gold" in trajectory else f"final {final}"
    reads = trajectory.get("read_calls", 0)
    contextbench = (trajectory.get("contextbench") or {}).get("result") or {}
    line = f", ContextBench line coverage {contextbench['final']['line']['coverage']:.3f}" if "final" in contextbench else ""
    if reads is None:  # a replay: steps recorded elsewhere, no calls
        steps = contextbench.get("num_steps", len(trajectory.get("steps") or []))
        return f"{shown}, {steps} steps replayed{line}"
    return f"{shown}, {reads} read{'s' if reads != 1 else ''}, {trajectory.get('read_tokens', 0):,} tokens{line}"


class SnapshotProgress:
    """Shows which snapshot the run is on without breaking pytest's own progress output.

    Default verbosity (local run): each snapshot starts a line of its own, `<file> snapshot 3/71
    owner/name@abc1234 ....  [ 40%]`, so pytest's dots and percentage stay intact. `-v`: a line
    before the snapshot's first item (also under xdist, from the controller). `-q`: nothing.
    """

    def __init__(self, bench: "BenchSession", config: pytest.Config):
        self.bench = bench
        self.config = config
        self.seen: set[str] = set()
        self.total: int | None = None

    def _label(self, nodeid: str) -> str | None:
        key = self.bench.snapshot_of_node(nodeid)
        if key is None or key in self.seen:
            return None
        self.seen.add(key)
        if self.total is None:  # the selection is known by the first item's start: count once
            expected = {self.bench.samples_by_id[sample_id].snapshot_key for sample_id, _ in self.bench.expected if sample_id in self.bench.samples_by_id}
            self.total = len(expected) or len(self.bench.index_kinds)
        total = max(self.total, len(self.seen))
        repo, _, commit = key.rpartition("@")
        return f"snapshot {len(self.seen)}/{total} {repo}@{commit[:7]}"

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> Generator[None, None, None]:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        verbosity = self.config.get_verbosity()
        label = self._label(nodeid) if reporter is not None and verbosity >= 0 else None
        inline = label is not None and verbosity == 0 and self.bench.role == "local" and getattr(reporter, "showfspath", False)
        prefix = ""
        if inline and reporter.currentfspath is not None:
            if getattr(reporter._tw, "width_of_current_line", 1) == 0:
                # pytest already ended the line with its percentage (a long line reached the edge): a new
                # file line now would print a second, empty percentage line, so this one starts the line
                fspath = self.config.rootpath / nodeid.split("::")[0]
                reporter.currentfspath, prefix = fspath, f"{bestrelpath(reporter.startpath, fspath)} "
            else:
                reporter.currentfspath = _NEW_LINE
        elif label is not None and verbosity > 0:
            reporter.ensure_newline()
            if self.bench.role == "local":
                reporter.write(f"retrieval-bench: {label}")  # pytest ends the line before the item's own
            else:
                reporter.write_line(f"retrieval-bench: {label}")
        result = yield
        if inline:
            reporter.write(f"{prefix}{label} ")
        return result


def add_failures_to_summary(config: pytest.Config, failures: list[str]) -> None:
    """The run's own failures count in pytest's final line ("1 failed") and its short summary."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    for number, failure in enumerate(failures, start=1):
        report = pytest.TestReport(nodeid=f"retrieval-bench::session[{number}]", location=("retrieval-bench", None, "retrieval-bench session"),
                                   keywords={}, outcome="failed", longrepr=MessageRepr(f"retrieval-bench: {failure}", "retrieval-bench"), when="call")
        reporter.stats.setdefault("failed", []).append(report)


def header_lines(bench: "BenchSession") -> list[str]:
    samples = sum(len(loaded.samples) for loaded in bench.loaded)
    snapshots = len({sample.snapshot_key for loaded in bench.loaded for sample in loaded.samples})
    files = ", ".join(str(loaded.path) for loaded in bench.loaded)
    lines = [f"retrieval-bench: samples {files} ({counted(samples, 'sample')}, {counted(snapshots, 'snapshot')}); "
             f"arms {', '.join(bench.arm_names)}; limit {bench.settings.limit}"]
    shard = bench.registration.get("shard")
    if shard and bench.shard_keys is not None:
        lines.append(f"retrieval-bench: shard {shard['index']}/{shard['count']}: {len(bench.shard_keys)} of {counted(snapshots, 'snapshot')} "
                     f"(partition {shard['partition_sha256'][:12]})")
    replays = [arm for name in bench.arm_names if hasattr(arm := bench.arms[name], "log") and hasattr(arm.log, "notes")]
    lines += [f"retrieval-bench: replay {note}" for arm in replays for note in arm.log.notes(bench.samples_by_id)]
    return lines




def load_count(loads: list[tuple[str, str | None]]) -> str:
    """How many times snapshots were read, and by how many xdist workers: more reads than
    snapshots means a snapshot was set up again (on another worker, or revisited)."""
    workers = {worker for _, worker in loads if worker is not None}
    return counted(len(loads), "snapshot load") + (f" in {counted(len(workers), 'worker')}" if workers else "")


def vector_lines(events: list[dict[str, Any]]) -> list[str]:
    """Per embedding arm, where its chunk vectors came from: the cache, or encoded in this run."""
    arms: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        arms.setdefault(event["arm"], []).append(event)
    lines = []
    for arm, own in sorted(arms.items()):
        texts, encoded = sum(event["texts"] for event in own), sum(event["encoded"] for event in own)
        seconds = sum(event["seconds"] for event in own)
        where = "all from the vector cache" if not encoded else f"{encoded} encoded ({seconds:.2f} s)" + (
            f", the other {texts - encoded} from the vector cache" if texts > encoded else "")
        lines.append(f"retrieval-bench: embedding arm {arm}: {counted(texts, 'distinct chunk text')} in {counted(len(own), 'snapshot')}: {where}")
    return lines


def summary_lines(bench: "BenchSession") -> list[tuple[str, dict[str, bool]]]:
    """The summary block, each line with its terminal markup (failures red, partial yellow)."""
    lines: list[tuple[str, dict[str, bool]]] = [(line, {}) for line in report_lines(bench.report or {}, bench.settings.limit,
                                                                                   bench.settings.table_groups, bench.settings.baseline,
                                                                                   bench.report_path if bench.report_bytes is not None else None)]
    setups = [event for event in bench.snapshot_setups if event["kind"] != VECTORS_EVENT]
    loads = bench.snapshot_loads
    if setups or loads:
        built = [event for event in setups if event["source"] == "built"]
        seconds = sum(event["seconds"] for event in built)
        snapshots = {event["snapshot"] for event in setups} | {key for key, _ in loads}
        lines.append((f"retrieval-bench: {counted(len(snapshots), 'snapshot')} set up: {counted(len(built), 'index')} built "
                      f"({seconds:.2f} s), {len(setups) - len(built)} loaded from cache ({load_count(loads)})", {}))
    lines += [(line, {}) for line in vector_lines([event for event in bench.snapshot_setups if event["kind"] == VECTORS_EVENT])]
    partial = (bench.report or {}).get("partial")
    settings = bench.settings
    if partial and (settings.report is not None or settings.markdown is not None or settings.html is not None):  # only a written report is partial
        shown = ", ".join(partial["not_run"][:10]) + (" ..." if len(partial["not_run"]) > 10 else "")
        lines.append((f"retrieval-bench: PARTIAL report: {len(partial['not_run'])} selected sample x arm item(s) did not run "
                      f"(deselected, stopped early, interrupted or lost): {shown}", {"yellow": True, "bold": True}))
    for failure in bench.failures:
        lines.append((f"retrieval-bench: {failure}", {"red": True, "bold": True}))
    if bench.updated_baseline:
        lines.append((f"baseline updated: {bench.settings.baseline} ({bench.updated_baseline})", {}))
    report = bench.report or {}
    if report.get("missing"):
        lines.append((f"samples with no record: {', '.join(report['missing'])}", {}))
    for note in bench.report_notes:
        lines.append((f"retrieval-bench: {note}", {"yellow": True}))
    lines += [(f"retrieval-bench: {line}", {"yellow": True}) for line in symbols_lines(report)]
    if bench.report_path is not None and bench.report_bytes is not None and not any(f.startswith("cannot write the report") for f in bench.failures):
        lines.append((f"report written to {bench.report_path}", {}))
    lines += [(written, {}) for written in bench.written]
    return [(printable(line), markup) for line, markup in lines]
