"""Why the bench did not run when `bench_samples` is in the ini and test paths are given.

Samples from the ini do not apply then (so `pytest tests/test_plain.py` runs just that file), and
the plugin stays out of the way. When the run shows the user meant the bench (a `--bench-*`
option given, or no test ran at all), the terminal's summary says so and how to add the samples.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from pytest_retrieval_bench.options import OPTIONS, ini_name


class IniSamplesNotApplied:
    """Registered for a run whose ini samples were left out; speaks at the terminal summary."""

    def __init__(self, samples: list[str], given: list[str], paths: list[str]):
        self.samples = samples
        self.given = given
        self.paths = paths

    def message(self) -> str:
        named = " ".join([*self.paths, *self.samples])
        unused = f"; so {', '.join(self.given)} had no effect (not even checked)" if self.given else ""
        return (f"retrieval-bench: bench_samples from the ini ({', '.join(self.samples)}) does not apply when test paths are given, "
                f"and the bench did not run{unused}. To run it too, name the samples file as a test path (pytest {named}) "
                "or pass --bench-samples=PATH")

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        if self.given or exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            terminalreporter.write_line(self.message(), yellow=True, bold=True)


def note_ini_samples_not_applied(config: pytest.Config) -> None:
    """With test paths given and samples only in the ini: register the note (the run itself is unchanged)."""
    if config.args_source != pytest.Config.ArgsSource.ARGS or config.getoption("bench_samples") or hasattr(config, "workerinput"):
        return
    invocation = config.invocation_params.dir  # ini paths are the rootdir's; the advice is typed where pytest was run
    samples = [os.path.relpath(config.rootpath / value, invocation) for value in config.getini("bench_samples") if value]
    if not samples:
        return
    given = [f"--bench-{option}" for option, _, _ in OPTIONS if option != "samples" and config.getoption(ini_name(option)) is not None]
    config.pluginmanager.register(IniSamplesNotApplied(samples, given, list(config.args)), "retrieval-bench-ini-samples")
