"""Saved runs: one report a file in a storage folder (`--bench-save`, `--bench-autosave`), and the
saved run a later run is compared with (`--bench-compare`).

A saved run is named `NNNN_COMMIT_YYYYMMDD_HHMMSS_NAME.json`: a counter one past the highest
already there, the first 7 hex digits of the commit (`nocommit` outside a git repository), the
local date and time, and the run's name; a partial run (saved only when named with `--bench-save`)
ends in `_partial`. Its registration goes in the `registrations/` subfolder under the same name, so
that the natural glob (`.retrieval-bench/*.json`) matches the saved reports and nothing else. Both
are written atomically, so an interrupted save leaves the folder as it was. A folder the save
creates gets a `.gitignore` of `*`, as pytest's cache folder does: saved runs are local history,
not sources (delete the file to commit them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Sequence

import orjson

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.build import canonical_json, samples_digests, write_atomically
from pytest_retrieval_bench.report.merge import checked_report, read_report

_FILE = re.compile(r"^(?P<counter>\d{4,})_(?P<commit>[0-9a-f]{7}|nocommit)_(?P<date>\d{8}_\d{6})_(?P<name>[A-Za-z0-9.-]+)(?P<partial>_partial)?\.json$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,63}$")
REGISTRATIONS = "registrations"
GITIGNORE = "# Created by pytest-retrieval-bench automatically: saved runs are local history.\n*\n"


@dataclass(frozen=True)
class SavedRun:
    path: Path
    counter: int
    commit: str
    date: str
    name: str
    partial: bool

    @property
    def label(self) -> str:
        return f"{self.counter:04d} {self.name}{' (partial)' if self.partial else ''}"


def check_name(name: str) -> str:
    """A run name that is safe in a file name: letters, digits, `.` and `-`, at most 64 characters."""
    if not _NAME.match(name):
        raise BenchError(f"--bench-save {name!r}: a run name is 1 to 64 letters, digits, '.' or '-', starting with a letter or digit")
    return name


def saved_runs(storage: Path) -> list[SavedRun]:
    """The runs saved in `storage`, oldest first (by counter); other files there are ignored."""
    if not storage.is_dir():
        return []
    runs = []
    for path in storage.iterdir():
        match = None if path.name.endswith(".registration.json") else _FILE.match(path.name)  # a sidecar of an older store
        if match:
            runs.append(SavedRun(path, int(match["counter"]), match["commit"], match["date"], match["name"], bool(match["partial"])))
    return sorted(runs, key=lambda run: run.counter)


def save_run(storage: Path, report_bytes: bytes, name: str, commit: dict[str, Any] | None, now: datetime | None = None) -> Path:
    """Write the report (and its registration beside it) as the next saved run; returns its path."""
    report = orjson.loads(report_bytes)
    counter = max((run.counter for run in saved_runs(storage)), default=0) + 1
    short = (commit or {}).get("id", "")[:7] or "nocommit"
    stamp = (now or datetime.now()).strftime("%Y%m%d_%H%M%S")
    path = storage / f"{counter:04d}_{short}_{stamp}_{check_name(name)}{'_partial' if report.get('partial') else ''}.json"
    if not storage.is_dir():
        storage.mkdir(parents=True)
        write_atomically(storage / ".gitignore", GITIGNORE.encode())
    (storage / REGISTRATIONS).mkdir(exist_ok=True)
    write_atomically(registration_path(path), canonical_json(report.get("registration", {})))
    write_atomically(path, report_bytes)
    return path


def registration_path(saved: Path) -> Path:
    """Where a saved run's registration is kept: apart, so a glob over the folder's `*.json` gets reports only."""
    return saved.parent / REGISTRATIONS / saved.name


def _misfit(report: Any, digests: Sequence[str], limit: int) -> str | None:
    """Why a report read as JSON cannot be paired with this run, for the cheap reasons (None when it can,
    or when it is too malformed to tell: `read_report` then says why)."""
    try:
        if samples_digests(report) != sorted(digests):
            return "over other samples"
        if report["registration"].get("limit") != limit:
            return f"limit {report['registration'].get('limit')}, not {limit}"
        return "partial" if report.get("partial") else None
    except (AttributeError, KeyError, TypeError):
        return None


def _fits(run: SavedRun, digests: Sequence[str], limit: int) -> str | None:
    """Why a saved run cannot be paired with this run (None when it can): the cheap reasons first,
    then every check a baseline gets, on the JSON parsed once (the run's baseline reads it again)."""
    try:
        report = orjson.loads(run.path.read_bytes())
        misfit = _misfit(report, digests, limit)
        if misfit is None:
            checked_report(report, run.path)
    except (OSError, orjson.JSONDecodeError) as error:
        return f"unreadable ({error})"
    except BenchError as error:
        return f"unreadable ({_without_path(error, run.path)})"
    return misfit


def find_compared(storage: Path, choice: str, digests: Sequence[str], limit: int) -> tuple[SavedRun, list[str]]:
    """The saved run `--bench-compare CHOICE` names (`latest`, a counter, or a run name: its newest run),
    and the runs skipped on the way with their reasons. A named run that does not fit is refused."""
    runs = saved_runs(storage)
    if not runs:
        raise BenchError(f"--bench-compare: no saved run in {storage} (save one with --bench-save NAME or --bench-autosave)")
    if choice == "latest":
        skipped = []
        for run in reversed(runs):
            why = _fits(run, digests, limit)
            if why is None:
                return run, skipped
            skipped.append(f"{run.path.name}: {why}")
        raise BenchError(f"--bench-compare: no saved run in {storage} fits this run ({'; '.join(skipped)})")
    chosen = named_run(runs, choice)
    if chosen is None:
        raise BenchError(f"--bench-compare {choice!r}: {_not_found(runs, storage)}")
    why = _fits(chosen, digests, limit)
    if why is not None:
        raise BenchError(f"--bench-compare {choice!r}: {chosen.path.name} is {why}, so it cannot be paired with this run")
    return chosen, []


def named_run(runs: Sequence[SavedRun], choice: str) -> SavedRun | None:
    """The saved run a counter (`7`, `0007`) or a run name (its newest run) names, or None."""
    chosen = [run for run in runs if (choice.isdigit() and run.counter == int(choice)) or run.name == choice]
    return chosen[-1] if chosen else None


def _not_found(runs: Sequence[SavedRun], storage: Path) -> str:
    return f"no saved run numbered or named so in {storage} (saved: {', '.join(run.label for run in runs) or 'none'})"


def report_or_saved_run(given: Path, storage: Path) -> Path:
    """A report path as given, or, when no such file exists, the saved run it names (`latest`, a counter
    or a run name, as `--bench-compare` takes them); neither is an error saying both were tried."""
    if given.exists() or given.parent != Path("."):
        return given
    runs = saved_runs(storage)
    chosen = runs[-1] if runs and str(given) == "latest" else named_run(runs, str(given))
    if chosen is None:
        raise BenchError(f"{given}: no such report file, and {_not_found(runs, storage)}")
    return chosen.path


Loaded = list[tuple[SavedRun, dict[str, Any]]]


def _without_path(error: BenchError, path: Path) -> str:
    """The error's words, less the path `read_report` puts first (the note names the run already)."""
    return str(error).removeprefix(f"{path}: ")


def load_saved(runs: list[SavedRun], sections: tuple[str, ...] = ("summary",)) -> tuple[Loaded, list[str]]:
    """Each saved run with its report, read once for every view of the history, checked for the
    `sections` they show (the table the summary; the page each run's whole page); notes name the
    unreadable and the refused."""
    loaded: Loaded = []
    notes: list[str] = []
    for run in runs:
        try:
            loaded.append((run, read_report(run.path, sections=sections)))
        except BenchError as error:
            notes.append(f"{run.path.name}: unreadable ({_without_path(error, run.path)})")
    return loaded, notes


def series_labels(loaded: Loaded) -> dict[int, str]:
    """Each run's series (by counter): runs over the same samples files and limit share one, S1, S2, ..."""
    labels: dict[tuple[Any, ...], str] = {}
    return {run.counter: labels.setdefault((tuple(samples_digests(report)), report.get("registration", {}).get("limit") or 20),
                                           f"S{len(labels) + 1}") for run, report in loaded}
