"""Snapshots that run but cannot be scored as their samples expect: one with no text file at all,
or a gold file the snapshot does not hold; and snapshots whose embedding set-up split batches to fit
the memory budget (said the same way, once per snapshot, and reported in `embedding_models`).

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

from pytest_retrieval_bench.arms.embed_batches import Splits
from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.samples.model import Sample

EMPTY_SNAPSHOT = "empty_snapshot"
UNDECODABLE_PATH = "undecodable_path"
GOLD_NOT_IN_SNAPSHOT = "gold_not_in_snapshot"
EMBEDDING_SPLIT = "embedding_batches_split"
REPORT_ATTRIBUTE = "retrieval_bench_snapshot_problems"
SHOWN_PER_WARNING = 5


class SnapshotProblemWarning(pytest.PytestWarning):
    """A snapshot the bench runs on although some of its samples cannot score (see the report's `snapshot_problems`)."""


class EmbeddingMemoryWarning(pytest.PytestWarning):
    """An embedding arm's set-up split batches of a snapshot to keep the encoder within its memory budget."""


def split_entry(arm: str, key: str, splits: Splits, budget: int) -> dict[str, Any]:
    return {"kind": EMBEDDING_SPLIT, "arm": arm, "snapshot": key, "batches": splits.batches, "texts": splits.texts,
            "encoded_alone_over_budget": splits.alone_over_budget, "longest_chars": splits.longest_chars, "budget_bytes": budget}


def split_text(entry: dict[str, Any]) -> str:
    budget_mib = entry["budget_bytes"] / (1 << 20)
    alone = entry["encoded_alone_over_budget"]
    over = f"; {alone} text{'s' if alone != 1 else ''} over it alone encoded on {'their' if alone != 1 else 'its'} own" if alone else ""
    return (f"{entry['arm']} on snapshot {entry['snapshot']}: {entry['batches']} batch{'es' if entry['batches'] != 1 else ''} "
            f"({entry['texts']} texts, the longest {entry['longest_chars']:,} characters) would exceed the "
            f"{budget_mib:g} MiB encoder memory budget (--bench-embed-memory) and {'were' if entry['batches'] != 1 else 'was'} split{over}")


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

    def split(self, arm: str, key: str, splits: Splits, budget: int) -> None:
        """An embedding arm split batches of a snapshot: said once (a pytest warning), and reported."""
        entry = split_entry(arm, key, splits, budget)
        self.pending.append(entry)
        try:
            warnings.warn(EmbeddingMemoryWarning(split_text(entry)), stacklevel=2)
        except EmbeddingMemoryWarning:
            pass  # `-W error`: the report still has it; the vectors are sound

    def attach(self, report: Any) -> None:
        """Put the problems found since the last report on this (set-up) report."""
        if self.pending:
            setattr(report, REPORT_ATTRIBUTE, self.pending)
            self.pending = []

    def receive(self, report: Any) -> None:
        self.received.extend(getattr(report, REPORT_ATTRIBUTE, None) or ())

    def entries(self) -> list[dict[str, Any]]:
        """Every problem received (twice when two workers opened one snapshot: the report keeps one)."""
        return [entry for entry in self.received if entry.get("kind") != EMBEDDING_SPLIT]

    def splits(self) -> dict[str, list[dict[str, Any]]]:
        """Each embedding arm's split snapshots, one entry per snapshot (the first worker's), by snapshot."""
        by_arm: dict[str, dict[str, dict[str, Any]]] = {}
        for entry in self.received:
            if entry.get("kind") == EMBEDDING_SPLIT:
                fields = {name: value for name, value in entry.items() if name not in ("kind", "arm")}
                by_arm.setdefault(entry["arm"], {}).setdefault(entry["snapshot"], fields)
        return {arm: [found[key] for key in sorted(found)] for arm, found in by_arm.items()}


CHECKS_KEY = pytest.StashKey[SnapshotChecks]()


def snapshot_checks(config: pytest.Config) -> SnapshotChecks:
    if CHECKS_KEY not in config.stash:
        config.stash[CHECKS_KEY] = SnapshotChecks()
    return config.stash[CHECKS_KEY]
