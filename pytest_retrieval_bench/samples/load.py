"""Read sample files into `Sample`s, keeping bad rows as located problems instead of aborting.

A malformed row becomes one failing item (file, line, field in its message) while every other
sample still runs: one typo must not cost a whole bench run.

The format is read from the file itself (a `.parquet` name, else its first non-blank line), so
one option takes ARB, ContextBench, cce.relevance/v1 and known-target-v1 files alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

from pytest_retrieval_bench.corpus.snapshot import check_relative_path
from pytest_retrieval_bench.errors import InputError
from pytest_retrieval_bench.files.jsonl import Line, is_release_archive, iter_sample_lines, malformed_line
from pytest_retrieval_bench.files.sha256 import file_sha256
from pytest_retrieval_bench.samples import contextbench, known_target, relevance
from pytest_retrieval_bench.samples.arb import parse_arb_row
from pytest_retrieval_bench.samples.model import Sample

RowParser = Callable[[dict[str, Any], str, int], "Sample | None"]


@dataclass
class LoadedSamples:
    """Samples of one file, sorted by id, plus the rows that could not be read."""

    path: Path
    digest: str
    samples: list[Sample] = field(default_factory=list)
    problems: list[InputError] = field(default_factory=list)
    format: str = "arb"
    # snapshot key ("owner/name@commit") -> directory the file itself names (a relevance corpus)
    snapshots: dict[str, Path] = field(default_factory=dict)
    #: every task type and repository of the file's samples, before --bench-task-type filtered them
    task_types: tuple[str, ...] = ()
    repos: tuple[str, ...] = ()


def check_published_checksum(path: Path, digest: str) -> None:
    """A release archive's `<archive>.sha256` beside it (`sha256sum` format, as the bench publishes
    it) must agree with the archive read; a corrupted or swapped download is an InputError."""
    sidecar = path.with_name(path.name + ".sha256")
    if not is_release_archive(path) or not sidecar.is_file():
        return
    try:
        first = sidecar.read_text(encoding="utf-8").strip().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(str(sidecar), f"cannot read the checksum file: {error}") from error
    expected = first[0].split()[0].lower() if first and first[0].split() else ""
    if len(expected) != 64 or any(char not in "0123456789abcdef" for char in expected):
        raise InputError(str(sidecar), f"line 1 is not a sha256 checksum line: {first[0][:80] if first else ''!r}", line=1)
    if expected != digest:
        raise InputError(str(sidecar), f"{path.name} has sha256 {digest}, the checksum file says {expected}: "
                                       "the archive is corrupted or not the published one", line=1)


def _parse_line(text: bytes, source: str, line: int, parse_row: RowParser = parse_arb_row) -> Sample | None:
    if not text.strip():
        return None
    try:
        row = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise InputError(source, malformed_line(error, text), line=line) from error
    if not isinstance(row, dict):
        raise InputError(source, f"expected a JSON object, got {type(row).__name__}", line=line)
    return parse_row(row, source, line)


def detect_format(path: Path) -> str:
    """`arb`, `contextbench`, `relevance` or `known-target`, from the name or the first row.

    A first row that is not a JSON object leaves the file to the ARB reader, which reports it.
    """
    if path.name.endswith(".parquet"):
        return contextbench.FORMAT
    try:
        first = next((line for line in iter_sample_lines(path) if line.text.strip()), None)
    except InputError:
        return "arb"
    try:
        row = orjson.loads(first.text) if first is not None else None
    except orjson.JSONDecodeError:
        return "arb"
    return row_format(row) if isinstance(row, dict) else "arb"


def row_format(row: dict[str, Any]) -> str:
    schema = row.get("schema") if isinstance(row.get("schema"), str) else ""
    # any version of a known schema goes to its reader, which names the unsupported version
    if schema.startswith("cce.relevance/") or (isinstance(row.get("query"), str) and "expected" in row and "task_type" not in row):
        return relevance.FORMAT
    if schema.startswith("known-target-") or ("intent" in row and "targets" in row):
        return known_target.FORMAT
    if "instance_id" in row and "problem_statement" in row:
        return contextbench.FORMAT
    return "arb"


def _parquet_lines(path: Path) -> Iterator[tuple[Line, dict[str, Any] | None]]:
    for number, row in contextbench.iter_parquet_rows(path):
        yield Line(str(path), number, b""), row


def _json_lines(path: Path) -> Iterator[tuple[Line, dict[str, Any] | None]]:
    for line in iter_sample_lines(path):
        yield line, None


def _row_parser(path: Path, loaded: LoadedSamples) -> RowParser:
    if loaded.format == relevance.FORMAT:
        reader = relevance.RelevanceReader(path)

        def parse_case(row: dict[str, Any], source: str, line: int) -> Sample | None:
            sample = reader.parse(row, source, line)
            if reader.corpus is not None:
                loaded.snapshots[reader.snapshot_key] = reader.corpus
            return sample

        return parse_case
    if loaded.format == known_target.FORMAT:
        return known_target.parse_known_target_row
    if loaded.format == contextbench.FORMAT:
        return contextbench.parse_contextbench_row
    return parse_arb_row


def _unsupported(sample: Sample, source: str, line: int) -> InputError | None:
    """What every format refuses: an id pytest cannot name an item by, a gold, given or
    hard-negative path that is absolute or climbs out of the repository."""
    if "::" in sample.id:
        return InputError(source, f"sample id {sample.id!r} contains '::', which pytest node ids cannot hold", line=line, field="id")
    if "[" in sample.id or "]" in sample.id:  # `<id>[<arm>]` is how items and the report's `not_run` name a sample x arm
        return InputError(source, f"sample id {sample.id!r} contains '[' or ']', which bench item names ('<id>[<arm>]') cannot hold",
                          line=line, field="id")
    for field_name, paths in (("gold", sample.gold_files), ("given", sample.given_files), ("hard_negatives", sample.hard_negatives)):
        for path in paths:
            reason = check_relative_path(path)
            if reason:
                return InputError(source, f"{field_name}: {reason}", line=line, field=field_name)
    return None


def load_samples(path: Path, fold_map: dict[str, str] | None = None, task_type: str | None = None) -> LoadedSamples:
    """Load one samples file. Raises InputError only when the file cannot be opened at all."""
    if not path.is_file():
        raise InputError(str(path), "a directory, not a samples file" if path.is_dir() else "no such file" if not path.exists() else "not a regular file")
    if path.name.endswith(".parquet"):
        contextbench.require_pyarrow(path)  # a missing optional dependency is a usage error, not a bad row
    loaded = LoadedSamples(path=path, digest=file_sha256(path), format=detect_format(path))
    check_published_checksum(path, loaded.digest)
    parse_row = _row_parser(path, loaded)
    rows = _parquet_lines(path) if path.name.endswith(".parquet") else _json_lines(path)
    seen: dict[str, Sample] = {}
    try:
        for line, row in rows:
            try:
                if row is None:
                    sample = _parse_line(line.text, line.source, line.number, parse_row)
                else:
                    sample = parse_row(row, line.source, line.number)
            except InputError as problem:
                loaded.problems.append(problem)
                continue
            if sample is None:
                continue
            problem = _unsupported(sample, line.source, line.number)
            if problem is not None:
                loaded.problems.append(problem)
                continue
            if sample.id in seen:
                first = seen[sample.id]
                loaded.problems.append(
                    InputError(line.source, f"duplicate sample id {sample.id!r} (first at line {first.line})", line=line.number, field="id")
                )
                continue
            seen[sample.id] = sample
    except InputError as problem:
        loaded.problems.append(problem)
    samples = sorted(seen.values(), key=lambda sample: sample.id)
    loaded.task_types = tuple(sorted({sample.task_type for sample in samples}))
    loaded.repos = tuple(sorted({sample.repo for sample in samples}))
    if task_type:
        samples = [sample for sample in samples if sample.task_type == task_type]
    if fold_map:
        samples = [replace(sample, partition=fold_map.get(sample.repo, "unassigned")) for sample in samples]
    loaded.samples = samples
    return loaded
