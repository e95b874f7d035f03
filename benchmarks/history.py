"""CPU time of `retrieval-bench history` over many saved runs, and the size of its HTML page.

Five runs of the bundled bench (every default arm plus `mine`, bm25 with its first SHIFT answers
moved last, SHIFT 0 to 4: real reports, each consistent with its own records, as the history reads
only such) are saved in turn `--runs` times (default 200) in a scratch storage folder, so every
run pairs against the previous one with a real change. Prints the CPU seconds of the text history
and of the page (with each run's own page), the page's size, and the reference: the CPU of
reading every saved file once. Asserts nothing.

    python benchmarks/history.py [--runs 200]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_retrieval_bench.history.page import write_history_page  # noqa: E402
from pytest_retrieval_bench.history.store import load_saved, save_run, saved_runs  # noqa: E402
from pytest_retrieval_bench.history.table import history_lines  # noqa: E402


SHIFTED = """
from pytest_retrieval_bench.arms.lexical import BM25Arm


class Mine:
    name = "mine"
    uses_index = "lexical"

    def retrieve(self, request):
        ranking = list(BM25Arm("all").retrieve(request).ranking)
        return ranking[{shift}:] + ranking[:{shift}]


def pytest_retrieval_bench_arms(config):
    return [Mine()]
"""


def _reports(scratch: Path, shifts: range = range(5)) -> list[bytes]:
    """The bundled bench run once per shift of `mine`: each report as written."""
    shutil.copytree(ROOT / "testdata" / "release", scratch / "release")
    written = []
    for shift in shifts:
        (scratch / "conftest.py").write_text(SHIFTED.format(shift=shift))
        subprocess.run([sys.executable, "-m", "pytest", "--bench-samples=release/benchmark/synthetic_v1/samples.jsonl",
                        "--bench-corpus=release/corpus/synthetic_v1", "--bench-arms=lexical,mine", "--bench-report=one.json", "-q",
                        "-p", "no:cacheprovider"], cwd=scratch, check=True, capture_output=True)
        written.append((scratch / "one.json").read_bytes())
        (scratch / "one.json").unlink()
        (scratch / "one.json.registration.json").unlink(missing_ok=True)
    return written


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="history-bench-"))
    try:
        reports = _reports(scratch)
        storage = scratch / "storage"
        for number in range(args.runs):
            save_run(storage, reports[number % len(reports)], f"run{number}", None)
        runs = saved_runs(storage)
        started = time.process_time()
        for run in runs:
            json.loads(run.path.read_bytes())
        reading = time.process_time() - started
        started = time.process_time()
        loaded, unreadable = load_saved(runs)
        lines = history_lines(loaded, unreadable, str(storage))
        text = time.process_time() - started
        started = time.process_time()
        page = scratch / "history.html"
        loaded, _ = load_saved(runs, ("summary", "paired", "latency", "baseline"))  # as `history --html` reads them
        write_history_page(loaded, page)
        html = time.process_time() - started
        print(f"saved runs: {len(runs)} ({sum(run.path.stat().st_size for run in runs) / 1e6:.1f} MB), read back: {len(loaded)}, "
              f"unreadable: {len(unreadable)}, history rows: {len(lines) - 2}")
        print(f"reading every saved run once (reference): {reading:.2f} s CPU")
        print(f"retrieval-bench history (text): {text:.2f} s CPU ({text / reading:.1f}x the reference)")
        print(f"history --html (the runs read again, every section its pages show checked; page and {len(runs)} run pages): {html:.2f} s CPU; the page alone {page.stat().st_size / 1e6:.2f} MB")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
