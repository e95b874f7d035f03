"""Whole pytest runs of `arb-closed-tool`: without a cache, then cold and warm on one cache directory.

Used by `benchmarks/agents.py --pytest-runs`. Each run is `pytest --bench-arms=arb-closed-tool` on
the samples and corpus, in a process of its own (its CPU, user and system, from `RUSAGE_CHILDREN`;
its wall time around it), in a scratch directory:

- `uncached`: `--bench-no-cache`, as a run without a cache behaves (each snapshot's greps scan its
  files until it has been scanned `INDEX_AFTER_SCANS` times);
- `cold`: an empty `--bench-cache-dir`: reading, building and storing each snapshot's grep index
  (at its first grep) and everything else the cache keeps;
- `warm`: the same directory again: each snapshot's grep index loaded before its first grep.

Each run's items' own time (the agent's run, timed by the plugin: the records' `wall_ms`, summed)
is printed beside the process's. Every report is compared with the cold one, wall times aside (`reports_equal_to_cold`); the warm
report is the one `--report` would read, so the caller compares its rows with the bench's.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

RUNS = ("uncached", "cold", "warm")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def without_times(value: Any) -> Any:
    """A report with what may differ between runs of the same inputs set to 0 (wall times), latency left out."""
    if isinstance(value, dict):
        return {key: (0 if key in ("wall_ms", "wall_seconds") else without_times(item)) for key, item in value.items() if key != "latency"}
    return [without_times(item) for item in value] if isinstance(value, list) else value


def pytest_runs(samples: Path, corpus: Path, scratch: Path) -> dict[str, Any]:
    """The three runs' CPU and wall seconds, the agents' own wall seconds, the summary line on set-up (indexes built or loaded),
    whether each report equals the cold one, and the warm report's path."""
    figures: dict[str, Any] = {}
    reports: dict[str, Any] = {}
    for name in RUNS:
        cache = ["--bench-no-cache"] if name == "uncached" else [f"--bench-cache-dir={scratch / 'cache'}"]
        report = scratch / f"{name}.json"
        command = [sys.executable, "-m", "pytest", f"--bench-samples={samples.resolve()}", f"--bench-corpus={corpus.resolve()}",
                   "--bench-arms=arb-closed-tool", f"--bench-report={report}", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                   f"--rootdir={scratch}", *cache]
        cpu, wall = _children_cpu(), time.perf_counter()
        done = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
        figures[f"pytest_{name}_cpu_seconds"] = _children_cpu() - cpu
        figures[f"pytest_{name}_wall_seconds"] = time.perf_counter() - wall
        if done.returncode != 0:
            raise SystemExit(f"pytest ({name}) exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
        figures[f"pytest_{name}_setup"] = next((line.removeprefix("retrieval-bench: ") for line in done.stdout.splitlines()
                                                  if " set up: " in line), "")
        written = json.loads(report.read_bytes())
        figures[f"pytest_{name}_agent_wall_seconds"] = sum(record.get("wall_ms", 0.0) for entry in written["details"]
                                                           for record in entry.get("arms", {}).values()) / 1000
        reports[name] = without_times(written)
    figures["pytest_reports_equal_to_cold"] = {name: reports[name] == reports["cold"] for name in RUNS if name != "cold"}
    figures["pytest_warm_report"] = str(scratch / "warm.json")
    return figures
