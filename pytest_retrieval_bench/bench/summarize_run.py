"""`--bench-summarize`: written reports merged, gated and published through pytest options, with
the arms this configuration defines."""

from __future__ import annotations

import pytest

from pytest_retrieval_bench.arms.registry import REFERENCE_ARMS
from pytest_retrieval_bench.bench.arms_setup import configured_arms
from pytest_retrieval_bench.bench.finish import outputs_of, summarize
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.options import Settings


def summarize_reports(config: pytest.Config, settings: Settings) -> int:
    """`--bench-summarize`: merge with the arms this configuration defines, then gate and publish."""
    if settings.report is None:
        raise pytest.UsageError("--bench-summarize needs --bench-report OUT")
    if config.getoption("bench_samples"):  # the ini's bench_samples, which a project keeps for its runs, does not apply
        raise pytest.UsageError("--bench-summarize merges written reports: it takes no --bench-samples")
    try:
        known = sorted(configured_arms(config, settings))
        published, lines = summarize(list(settings.summarize), known, list(settings.baseline_arms or REFERENCE_ARMS), outputs_of(settings),
                                     settings.gate, settings.allow_partial, settings.table_groups, settings.fuse)
    except BenchError as error:
        raise pytest.UsageError(str(error)) from error
    print("\n".join(lines))
    return 1 if published.failures else 0