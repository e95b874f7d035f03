"""Snapshots that run but cannot be scored as their samples expect: one with no text file at all,
or a gold file the snapshot does not hold.

The bench scores them as it always did (an absent gold file is simply never ranked); these checks
only make the cause visible, where a run would otherwise pass silently: a pytest warning once per
snapshot, and entries under the report's `snapshot_problems`. The check runs where the snapshot is
open (an xdist worker), and its entries travel on the item's set-up report to the process that
writes the report.
"""

from __future__ import annotations

import warnings
from typing import Any, Iterable

import pytest

from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.samples.model import Sample

EMPTY_SNAPSHOT = "empty_snapshot"
UNDECODABLE_PATH = "undecodable_path"
GOLD_NOT_IN_SNAPSHOT = "gold_not_in_snapshot"
REPORT_ATTRIBUTE = "retrieval_bench_snapshot_problems"
SHOWN_PER_WARNING = 5


class SnapshotProblemWarning(pytest.PytestWarning):
    """A snapshot the bench runs on although some of its samples cannot score (see the report's `snapshot_problems`)."""


def find_problems(snapshot: Snapshot, samples: Iterable[Sample]) -> list[dict[str, Any]]:
    """The snapshot's problems, as report entries, in a stable order."""
    key = snapshot.key
    problems: list[dict[str, Any]] = []
    if len(snapshot.texts) == 0:
        problems.append({"kind": EMPTY_SNAPSHOT, "snapshot": key})
    for shown in getattr(snapshot, "undecodable_paths", ()):
        problems.append({"kind": UNDECODABLE_PATH, "path": shown, "snapshot": key})
    paths = snapshot.path_set()
    for sample in sorted(samples, key=lambda sample: sample.id):
        for path in sorted(set(sample.gold_files)):
            if path not in paths:
                problems.append({"kind": GOLD_NOT_IN_SNAPSHOT, "sample": sample.id, "path": path, "snapshot": key})
    return problems


def warning_text(key: str, problems: list[dict[str, Any]]) -> str:
    """One message for one snapshot, naming what to look at."""
    parts = []
    if any(problem["kind"] == EMPTY_SNAPSHOT for problem in problems):
        parts.append("it has no text file (every file is binary, over 1 MiB or absent), so no arm can rank anything in it")
    names = [problem["path"] for problem in problems if problem["kind"] == UNDECODABLE_PATH]
    if names:
        parts.append(f"{len(names)} file name(s) are not valid UTF-8 and were left out ({', '.join(names[:SHOWN_PER_WARNING])}"
                     f"{' ...' if len(names) > SHOWN_PER_WARNING else ''})")
    absent = [problem for problem in problems if problem["kind"] == GOLD_NOT_IN_SNAPSHOT]
    if absent:
        shown = ", ".join(f"{problem['sample']}: {problem['path']}" for problem in absent[:SHOWN_PER_WARNING])
        more = f" and {len(absent) - SHOWN_PER_WARNING} more" if len(absent) > SHOWN_PER_WARNING else ""
        parts.append(f"{len(absent)} gold file(s) of its samples are not in it, so they can never be ranked ({shown}{more}); "
                     "check the samples' base commit and paths against the snapshot source")
    return f"snapshot {key}: " + "; ".join(parts) + ". Scored as usual; listed under snapshot_problems in the report"


class SnapshotChecks:
    """Per process: problems found here and not yet sent on a report, and those received from reports."""

    def __init__(self) -> None:
        self.checked: set[str] = set()
        self.by_snapshot: dict[str, list[Sample]] | None = None
        self.pending: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []

    def check(self, snapshot: Snapshot, samples: Iterable[Sample]) -> None:
        """After a snapshot's set-up: find its problems among the run's `samples` and warn once
        (a revisit checks nothing again)."""
        if snapshot.key in self.checked:
            return
        self.checked.add(snapshot.key)
        if self.by_snapshot is None:  # grouped once: a run may have thousands of snapshots
            self.by_snapshot = {}
            for sample in samples:
                self.by_snapshot.setdefault(sample.snapshot_key, []).append(sample)
        problems = find_problems(snapshot, self.by_snapshot.get(snapshot.key, ()))
        if not problems:
            return
        self.pending.extend(problems)
        try:
            warnings.warn(SnapshotProblemWarning(warning_text(snapshot.key, problems)), stacklevel=2)
        except SnapshotProblemWarning:
            pass  # `-W error`: the report still lists them; turning set-up into an error would change the scores

    def attach(self, report: Any) -> None:
        """Put the problems found since the last report on this (set-up) report."""
        if self.pending:
            setattr(report, REPORT_ATTRIBUTE, self.pending)
            self.pending = []

    def receive(self, report: Any) -> None:
        self.received.extend(getattr(report, REPORT_ATTRIBUTE, None) or ())

    def entries(self) -> list[dict[str, Any]]:
        """Every problem received (twice when two workers opened one snapshot: the report keeps one)."""
        return list(self.received)


CHECKS_KEY = pytest.StashKey[SnapshotChecks]()


def snapshot_checks(config: pytest.Config) -> SnapshotChecks:
    if CHECKS_KEY not in config.stash:
        config.stash[CHECKS_KEY] = SnapshotChecks()
    return config.stash[CHECKS_KEY]
