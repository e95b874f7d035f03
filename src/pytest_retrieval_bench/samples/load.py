"""Read sample files into `Sample`s, keeping bad rows as located problems instead of aborting.

A malformed row becomes one failing item (file, line, field in its message) while every other
sample still runs: one typo must not cost a whole bench run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

import orjson

from pytest_retrieval_bench.errors import InputError
from pytest_retrieval_bench.samples.arb import parse_arb_row
from pytest_retrieval_bench.samples.model import Sample
from pytest_retrieval_bench.samples.reader import iter_sample_lines


@dataclass
class LoadedSamples:
    """Samples of one file, sorted by id, plus the rows that could not be read."""

    path: Path
    digest: str
    samples: list[Sample] = field(default_factory=list)
    problems: list[InputError] = field(default_factory=list)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _parse_line(text: bytes, source: str, line: int) -> Sample | None:
    if not text.strip():
        return None
    try:
        row = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise InputError(source, f"malformed JSON: {error}", line=line) from error
    if not isinstance(row, dict):
        raise InputError(source, f"expected a JSON object, got {type(row).__name__}", line=line)
    return parse_arb_row(row, source, line)


def load_samples(path: Path, fold_map: dict[str, str] | None = None, task_type: str | None = None) -> LoadedSamples:
    """Load one samples file. Raises InputError only when the file cannot be opened at all."""
    if not path.is_file():
        raise InputError(str(path), "no such file")
    loaded = LoadedSamples(path=path, digest=file_sha256(path))
    seen: dict[str, Sample] = {}
    try:
        for line in iter_sample_lines(path):
            try:
                sample = _parse_line(line.text, line.source, line.number)
            except InputError as problem:
                loaded.problems.append(problem)
                continue
            if sample is None:
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
    if task_type:
        samples = [sample for sample in samples if sample.task_type == task_type]
    if fold_map:
        samples = [replace(sample, partition=fold_map.get(sample.repo, "unassigned")) for sample in samples]
    loaded.samples = samples
    return loaded
