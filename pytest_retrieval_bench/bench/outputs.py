"""Output paths checked against the run's inputs and each other before anything runs.

A report written over the samples file, the baseline it is compared with, an earlier run's
registration sidecar or the Markdown of the same run destroys data that cannot be recomputed, so
every output (report, sidecar, Markdown, HTML, capture, baseline update) is refused when it is, or
aliases, an input file or another output, when it is a directory, or when it lies inside a
directory the run reads snapshots from. Paths are compared resolved (symlinks followed), and
existing files also by device and inode, which catches hard links and case-insensitive aliases.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import orjson

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.registration import SIDECAR_SUFFIX, sidecar_path

if TYPE_CHECKING:
    from pytest_retrieval_bench.options import Settings

Place = tuple[str, Path]
"""(what the path is, in the user's words: an option name, `the registration sidecar`), path."""


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def same_file(first: Path, second: Path) -> bool:
    if _resolved(first) == _resolved(second):
        return True
    try:
        return os.path.samefile(first, second)
    except OSError:  # one of them does not exist (yet): the resolved paths decide
        return False


def inside(path: Path, directory: Path) -> bool:
    resolved, root = _resolved(path), _resolved(directory)
    return resolved != root and resolved.is_relative_to(root)


def output_problems(outputs: Sequence[Place], input_files: Iterable[Place], input_directories: Iterable[Place]) -> list[str]:
    """Every reason an output would destroy an input or another output (empty: all is well)."""
    problems: list[str] = []
    files, directories = list(input_files), list(input_directories)
    for number, (label, path) in enumerate(outputs):
        if path.is_dir():
            problems.append(f"{label} {path} is a directory")
        if path.name.endswith(SIDECAR_SUFFIX) and not label.startswith("the registration sidecar") and label != "--bench-registration":
            problems.append(f"{label} {path} names a registration sidecar (*{SIDECAR_SUFFIX}), which records how a report was made")
        for other_label, other in outputs[number + 1 :]:
            if same_file(path, other):
                problems.append(f"{label} and {other_label} are the same file {path}")
        for input_label, source in files:
            if same_file(path, source):
                problems.append(f"{label} {path} is the {input_label} file this run reads")
        for input_label, directory in directories:
            if inside(path, directory) or same_file(path, directory):
                problems.append(f"{label} {path} is inside {input_label} {directory}, which this run reads")
    return problems


def check_outputs(outputs: Sequence[Place], input_files: Iterable[Place], input_directories: Iterable[Place]) -> None:
    """Raise BenchError listing every problem, so nothing is written over an input."""
    problems = output_problems([(label, path) for label, path in outputs if path is not None], input_files, input_directories)
    if problems:
        raise BenchError("refusing to write: " + "; ".join(problems))


def partial_beside(path: Path) -> Path:
    """Where a partial report goes when a complete one is at `path`: `out.json` -> `out.partial.json`."""
    return path.with_name(f"{path.stem}.partial{path.suffix}" if path.suffix else f"{path.name}.partial")


def holds_complete_report(path: Path) -> bool:
    """True for a readable report without a `partial` mark (what a debug run must not replace)."""
    try:
        existing = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(existing, dict) and "details" in existing and "registration" in existing and not existing.get("partial")


def report_destination(path: Path, report: dict[str, Any]) -> tuple[Path, str | None]:
    """A partial report (a `-k` or node-id run, `-x`, an interrupt) never replaces a complete one at
    the same path: it is written beside it, and the note says where."""
    if not report.get("partial") or not holds_complete_report(path):
        return path, None
    beside = partial_beside(path)
    return beside, f"a partial run does not replace the complete report {path}: this run's report is {beside}"


def check_run_outputs(settings: Settings) -> None:
    """`check_outputs` of a plugin run's outputs against its inputs and the directories it reads
    snapshots from: a BenchError before anything runs when one would overwrite what it must not."""
    report = settings.report
    sidecar = sidecar_path(report) if report and not settings.summarize and settings.registration is None else None
    outputs = [("--bench-report", report), ("the registration sidecar of --bench-report", sidecar), ("--bench-registration", settings.registration),
               ("--bench-markdown", settings.markdown), ("--bench-html", settings.html), ("--bench-capture", settings.capture),
               ("--bench-baseline (with --bench-update-baseline)", settings.baseline if settings.update_baseline else None)]
    inputs = [*(("--bench-samples", path) for path in settings.samples), *(("--bench-summarize", path) for path in settings.summarize)]
    if settings.baseline is not None and not settings.update_baseline:
        inputs.append(("--bench-baseline", settings.baseline))
    if settings.fold_map_path is not None:
        inputs.append(("--bench-fold-map", settings.fold_map_path))
    directories = [*(("--bench-corpus", path) for path in settings.corpus), *(("--bench-snapshot", path) for path in settings.snapshots.values())]
    check_outputs([(label, path) for label, path in outputs if path is not None], inputs, directories)
