"""The registration sidecar of --bench-report over one run: written before any arm runs, replaced
by a run that replaces the whole report (saying what changed), and put back when the run ends
without replacing the report after all (a partial report is written beside a complete one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.report.build import write_atomically
from pytest_retrieval_bench.report.registration import check_and_write_registration, sidecar_path


def partial_selection(config: pytest.Config) -> str | None:
    """How this run selects part of the collected items, known before collection (None: it does not)."""
    option = config.option
    chosen = [("-k", getattr(option, "keyword", "")), ("-m", getattr(option, "markexpr", "")), ("--lf", getattr(option, "lf", False)),
              ("--sw", getattr(option, "stepwise", False)), ("--deselect", getattr(option, "deselect", None))]
    names = [name for name, value in chosen if value]
    if any("::" in str(arg) for arg in config.args):
        names.append("a node id")
    return ", ".join(names) or None


class RegistrationSidecar:
    def __init__(self, report: Path):
        self.report = report
        self.path = sidecar_path(report)
        self.previous: bytes | None = None  # a replaced sidecar's bytes, until the report is replaced too
        self.changes: str | None = None

    def write(self, registration: dict[str, Any], replace: bool, config: pytest.Config) -> None:
        """Raises BenchError when an existing, differing sidecar must not be replaced (or is unreadable)."""
        try:
            previous = self.path.read_bytes() if self.path.is_file() else None
        except OSError:
            previous = None
        self.changes = check_and_write_registration(self.report, registration, replace, partial_selection(config))
        if self.changes:
            self.previous = previous

    def settle(self, report_path: Path | None) -> list[str]:
        """After publication: the line saying what a replacement changed, or, when the report was not
        replaced (written beside, or not at all), the previous sidecar put back for the report it describes."""
        if self.previous is None:
            return []
        if report_path == self.report:
            return [f"registration replaced ({self.path}): {self.changes}"]
        try:
            write_atomically(self.path, self.previous)
        except OSError as error:
            return [f"{self.path}: describes this run, not {self.report}, and could not be put back: {error.strerror or error}"]
        return [f"{self.path} kept as it was: this run did not replace {self.report}"]
