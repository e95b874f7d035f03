"""Replay: trajectories recorded elsewhere, scored as an arm without running anything.

`--bench-trajectories NAME=FILE` reads FILE as the bench's `eval-trajectories` reads its inputs:
JSON lines, each either one step (`{"sample_id", "step", "tool", "path", ...}`) or a whole
trajectory (`{"sample_id", "trajectory": [step, ...]}`), grouped by sample id (`id` is accepted for
`sample_id`) in file order, and each step normalized by the bench's rule (`normalize_step`). Where
the bench would crash or silently drop a row, a line that is not a JSON object, has no sample id,
a `trajectory` that is not a list, or a step without a path is refused here, naming file, line and
field. What the bench does on purpose is done here too, and said: a sample id the samples do not
hold is ignored (its `missing_sample`), duplicate steps are kept (they count in redundancy), a
sample whose trajectory has no step is skipped (its `empty_trajectory`), and a sample with no
trajectory at all is missing, not scored zero.

The same option reads ContextBench's unified prediction records (`contextbench_records.py`): a
file whose first record (its first line, or the first element of a JSON list) has `traj_data` (or
an `instance_id` and no step fields), or that is an empty JSON list, is read as those; its predictions are scored as ContextBench scores them on ContextBench
rows. One arm's files are all of one format.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from pytest_retrieval_bench.arms.agents import contextbench_records
from pytest_retrieval_bench.arms.agents.arm import AgentArm
from pytest_retrieval_bench.arms.agents.environment import ClosedToolEnvironment
from pytest_retrieval_bench.arms.agents.protocol import Episode
from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.errors import InputError
from pytest_retrieval_bench.files.jsonl import json_lines
from pytest_retrieval_bench.files.sha256 import file_sha256
from pytest_retrieval_bench.scoring.contextbench_context import TextCheckout
from pytest_retrieval_bench.scoring.contextbench_trajectory import Prediction

POLICY = "replay"


def _optional_int(value: Any) -> int | None:
    """The bench's `optional_int`: a whole number, or None for anything else."""
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def normalize_step(row: dict[str, Any], default_step: int) -> dict[str, Any]:
    """A recorded step in the bench's normalized format (`normalize_trajectory_step`): a bad line
    range is dropped, the step number defaults to the row's place, kind to `block`, tool to `read`."""
    start_line, end_line = _optional_int(row.get("start_line")), _optional_int(row.get("end_line"))
    if start_line is not None and end_line is not None and (start_line <= 0 or end_line < start_line):
        start_line = end_line = None
    return {
        "step": _optional_int(row.get("step")) or _optional_int(row.get("turn")) or default_step,
        "tool": str(row.get("tool") or row.get("action") or "read"),
        "path": str(row["path"]),
        "start_line": start_line,
        "end_line": end_line,
        "kind": str(row.get("kind") or "block"),
        "symbol": str(row.get("symbol") or ""),
        "content_hash": str(row.get("content_hash") or ""),
        "is_final_context": bool(row.get("is_final_context") or row.get("final") or row.get("selected")),
        "is_utilized_context": bool(row.get("is_utilized_context") or row.get("utilized") or row.get("used")),
    }


@dataclass
class TrajectoryLog:
    """One replayed arm's recorded step rows by sample id (as read, in file order), and its files."""

    name: str
    files: list[str] = field(default_factory=list)
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    format: str | None = None  # "arb" (the bench's steps) or "contextbench" (unified records), set by the first file
    predictions: dict[str, Prediction] = field(default_factory=dict)  # the ContextBench records by instance id

    @property
    def steps(self) -> dict[str, list[dict[str, Any]]]:
        """Each sample's steps, normalized over all its rows (the bench numbers a step by its place)."""
        return {sample_id: [normalize_step(row, index + 1) for index, row in enumerate(rows)] for sample_id, rows in self.rows.items()}

    def notes(self, sample_ids: Iterable[str]) -> list[str]:
        """What replaying says of its input against the run's samples (one line each, none when clean)."""
        known = set(sample_ids)
        where = ", ".join(self.files)
        if self.format == "contextbench":
            return self._contextbench_notes(known, where)
        unknown = sorted(set(self.rows) - known)
        missing = len(known - set(self.rows))
        empty = sum(1 for sample_id, rows in self.rows.items() if sample_id in known and not rows)
        counts = Counter((sample_id, step["step"], step["path"]) for sample_id, steps in self.steps.items() for step in steps)
        duplicates = sum(count - 1 for count in counts.values())
        notes = []
        if missing:
            notes.append(f"{self.name}: {missing} of {len(known)} samples have no trajectory in {where} (missing, not scored: their items are skipped)")
        if empty:
            notes.append(f"{self.name}: {empty} samples have an empty trajectory in {where} (skipped, as the bench's empty_trajectory)")
        if unknown:
            notes.append(f"{self.name}: {len(unknown)} sample ids in {where} are not among the samples (ignored, as the bench's missing_sample): "
                         + ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else ""))
        if duplicates:
            notes.append(f"{self.name}: {duplicates} duplicate steps (same sample, step and path) in {where} kept, as the bench keeps them")
        return notes

    def _contextbench_notes(self, known: set[str], where: str) -> list[str]:
        notes = []
        missing = len(known - set(self.predictions))
        unknown = sorted(set(self.predictions) - known)
        if missing:
            notes.append(f"{self.name}: {missing} of {len(known)} samples have no ContextBench record in {where} (missing, not scored: their items are skipped)")
        if unknown:
            notes.append(f"{self.name}: {len(unknown)} instance ids in {where} are not among the samples (ignored): "
                         + ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else ""))
        return notes


def _object(value: Any, source: str, line: int, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(source, f"expected a JSON object, got {type(value).__name__}", line=line, field=what or None)
    return value


def _step_row(row: dict[str, Any], source: str, line: int, where: str) -> dict[str, Any]:
    if not isinstance(row.get("path"), str) or not row["path"]:
        raise InputError(source, "a step needs a non-empty path string", line=line, field=f"{where}path")
    return row


def read_log(name: str, path: Path, log: TrajectoryLog | None = None) -> TrajectoryLog:
    """Read one file into `log` (a new one by default): per-step and per-sample rows alike, or
    ContextBench's records (one arm's files are all of one format)."""
    log = log or TrajectoryLog(name)
    source = str(path)
    log.files.append(source)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(source, f"cannot read: {error.strerror or error}") from None
    form = _format_of(data, source)
    if log.format is not None and form is not None and form != log.format:
        raise InputError(source, f"holds {form} records, but {log.files[0]} (the same arm {name!r}) holds {log.format} ones")
    log.format = log.format or form
    if log.format == "contextbench":
        for number, row in contextbench_records.parse_records(data, source):
            instance_id, prediction = contextbench_records.parse_record(row, source, number)
            if instance_id in log.predictions:
                raise InputError(source, f"a second record for {instance_id!r} (one record per instance)", line=number, field="instance_id")
            log.predictions[instance_id] = prediction
        return log
    for number, value in json_lines(data, source):
        row = _object(value, source, number, "")
        sample_id = str(row.get("sample_id") or row.get("id") or "")
        if not sample_id:
            raise InputError(source, "no sample id (`sample_id` or `id`)", line=number, field="sample_id")
        trajectory = row.get("trajectory")
        if "trajectory" in row and not isinstance(trajectory, list):
            raise InputError(source, f"expected a list of steps, got {type(trajectory).__name__}", line=number, field="trajectory")
        rows = ([_step_row(_object(item, source, number, f"trajectory[{index}]"), source, number, f"trajectory[{index}].")
                 for index, item in enumerate(trajectory)] if isinstance(trajectory, list) else [_step_row(row, source, number, "")])
        log.rows.setdefault(sample_id, []).extend(rows)
    return log


def _format_of(data: bytes, source: str) -> str | None:
    """"contextbench" when the first record (of a JSON list, or the first line) is a unified
    record, "arb" for a step or trajectory row, None for a file with no record."""
    if data.lstrip()[:1] == b"[":
        first = contextbench_records.first_list_record(data)
        if first is not None and (first == [] or (isinstance(first, dict) and contextbench_records.is_unified_record(first))):
            return "contextbench"
    for _, row in json_lines(data, source):  # the first record only
        return "contextbench" if isinstance(row, dict) and contextbench_records.is_unified_record(row) else "arb"
    return None


def parse_trajectories_option(entries: Iterable[str], base_dir: Path, log: TrajectoryLog | None = None) -> TrajectoryLog:
    """`--bench-trajectories NAME=FILE` entries of one NAME (repeatable: its files are read in order, into `log`)."""
    for text in entries:
        name, separator, file_name = text.partition("=")
        name = name.strip()
        if not separator or not name or not file_name.strip():
            raise InputError(f"--bench-trajectories {text!r}", "expected NAME=FILE, e.g. my-agent=trajectories.jsonl")
        path = Path(file_name.strip())
        log = read_log(name, path if path.is_absolute() else base_dir / path, log)
    if log is None:
        raise InputError("--bench-trajectories", "expected NAME=FILE")
    return log


class ReplayArm(AgentArm):
    """A recorded trajectory per sample, scored as the bench's `eval-trajectories` scores it."""

    budgets = None  # type: ignore[assignment]  # the recording's budgets are not known

    def __init__(self, log: TrajectoryLog):
        self.name = log.name
        self.log = log
        digest = hashlib.sha256()
        for file in log.files:
            digest.update(file_sha256(Path(file)).encode())
        self.identity = f"replay:{','.join(Path(file).name for file in log.files)}:sha256:{digest.hexdigest()}"

    def skip_reason(self, sample_id: str) -> str | None:
        if self.log.format == "contextbench":
            return None if sample_id in self.log.predictions else f"no ContextBench record for this sample in {', '.join(self.log.files)} (missing, not scored)"
        steps = self.log.rows.get(sample_id)
        if steps is None:
            return f"no trajectory for this sample in {', '.join(self.log.files)} (missing, not scored)"
        if not steps:
            return f"empty trajectory in {', '.join(self.log.files)} (the bench skips it)"
        return None

    def run(self, request: Request, env: ClosedToolEnvironment) -> Episode:
        """The recorded steps as an episode: its final files are the steps flagged final context
        (a ContextBench record's: its final context)."""
        if self.log.format == "contextbench":
            files = env.files
            return contextbench_records.replay_episode(self.log.predictions[request.sample_id], TextCheckout(files.texts))
        rows = self.log.rows.get(request.sample_id) or []
        steps = [normalize_step(row, index + 1) for index, row in enumerate(rows)]
        final = list(dict.fromkeys(step["path"] for step in steps if step["is_final_context"]))
        return Episode(budgets=None, calls=[], steps=steps, final_files=final, submitted_files=final, fallback=False,  # type: ignore[arg-type]
                       tool_calls=None, grep_calls=None, read_calls=None, read_tokens=None,  # type: ignore[arg-type]  # not recorded
                       extra={"policy": POLICY})
