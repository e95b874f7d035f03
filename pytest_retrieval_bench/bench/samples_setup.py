"""The samples a session runs, settled before any item exists: one id per sample across files,
filters that select something, and `--bench-max-samples` applied in id order."""

from __future__ import annotations

import pytest

from pytest_retrieval_bench.corpus.corpus_level import MANIFEST, subfolders_holding
from pytest_retrieval_bench.errors import InputError
from pytest_retrieval_bench.options import Settings
from pytest_retrieval_bench.samples import LoadedSamples, Sample


def load_all(settings: Settings) -> list[LoadedSamples]:
    """Every samples file of the run, read and settled (a usage error names a file that cannot be read)."""
    from pytest_retrieval_bench.samples import load_samples

    loaded: list[LoadedSamples] = []
    for path in settings.samples:
        try:
            loaded.append(load_samples(path, settings.fold_map, settings.task_type))
        except InputError as error:
            raise pytest.UsageError(f"--bench-samples: {error}") from error
    reject_ids_seen_in_earlier_files(loaded)
    return loaded


def reject_ids_seen_in_earlier_files(loaded: list[LoadedSamples]) -> None:
    """Records are keyed by sample id: an id in two files would silently merge two samples."""
    first: dict[str, Sample] = {}
    for samples in loaded:
        kept = []
        for sample in samples.samples:
            if sample.id in first:
                earlier = first[sample.id]
                samples.problems.append(InputError(sample.source, f"duplicate sample id {sample.id!r} (first in {earlier.source} at line {earlier.line})",
                                                   line=sample.line, field="id"))
            else:
                first[sample.id] = sample
                kept.append(sample)
        samples.samples = kept


def check_filters(loaded: list[LoadedSamples], settings: Settings, config: pytest.Config) -> None:
    """A task filter that keeps nothing is a usage error; a fold map that names no sample's
    repository is a warning naming its keys (every sample would be `unassigned`)."""
    if settings.task_type and not any(samples.samples for samples in loaded):
        present = sorted({task for samples in loaded for task in samples.task_types})
        raise pytest.UsageError(f"--bench-task-type {settings.task_type!r}: no sample has this task type "
                                f"(the samples' task types: {', '.join(present) or 'none'})")
    if settings.fold_map:
        repos = {repo for samples in loaded for repo in samples.repos}
        unmatched = sorted(key for key in settings.fold_map if key not in repos)
        if len(unmatched) == len(settings.fold_map):
            config.issue_config_time_warning(pytest.PytestConfigWarning(
                f"--bench-fold-map {settings.fold_map_path}: none of its repositories ({', '.join(unmatched)}) is a sample's; "
                "every sample's partition is 'unassigned'"), stacklevel=2)


def check_corpus_levels(loaded: list[LoadedSamples], settings: Settings) -> None:
    """A --bench-corpus directory that holds none of the samples' snapshots while a subfolder of it
    does (given one folder too high) is a usage error naming that subfolder."""
    keys = [(sample.repo, sample.base_commit) for samples in loaded for sample in samples.samples if not sample.skip_reason]
    for corpus_dir in settings.corpus:
        below = subfolders_holding(corpus_dir, keys)
        if below:
            shown = " or ".join(f"--bench-corpus {folder}" for folder in below)
            which = f"subfolder {below[0].name} does" if len(below) == 1 else f"subfolders {', '.join(folder.name for folder in below)} do"
            raise pytest.UsageError(f"--bench-corpus {corpus_dir}: holds no snapshot of these samples (no {MANIFEST}); its {which}: give {shown}")


def apply_max_samples(loaded: list[LoadedSamples], max_samples: int | None) -> None:
    if max_samples is None:
        return
    remaining = max_samples
    for samples in loaded:
        samples.samples = samples.samples[: max(remaining, 0)]
        remaining -= len(samples.samples)
