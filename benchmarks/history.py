"""CPU time of `retrieval-bench history` over many saved runs, and the size of its HTML page.

One run of the bundled bench (every built-in arm plus a shifted bm25 arm, so the runs differ) is
written, then saved `--runs` times (default 200) in a scratch storage folder, each copy's shifted
arm re-scored with a different shift so that every run pairs against the previous one with a real
change. Prints the CPU seconds of the text history and of the page (with each run's own page),
the page's size, and the reference: the CPU of reading every saved file once. Asserts nothing.

    python benchmarks/history.py [--runs 200]
"""

from __future__ import annotations

import argparse
import json
import random
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
from pytest_retrieval_bench.report.build import canonical_json  # noqa: E402


def _one_report(scratch: Path) -> dict:
    shutil.copytree(ROOT / "testdata" / "release", scratch / "release")
    subprocess.run([sys.executable, "-m", "pytest", "--bench-samples=release/benchmark/synthetic_v1/samples.jsonl",
                    "--bench-corpus=release/corpus/synthetic_v1", "--bench-report=one.json", "-q", "-p", "no:cacheprovider"],
                   cwd=scratch, check=True, capture_output=True)
    return json.loads((scratch / "one.json").read_text())


def _varied(report: dict, generator: random.Random) -> dict:
    """The report with one arm's per-sample metrics moved a little (a changed arm), summaries left as written."""
    copy = json.loads(json.dumps(report))
    for entry in copy["details"]:
        record = entry["arms"].get("grep")
        if record and record.get("metrics"):
            for name in ("recall@10", "mrr@k", "hit@20"):
                if name in record["metrics"]:
                    record["metrics"][name] = float(generator.random() < 0.7)
    return copy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="history-bench-"))
    try:
        report = _one_report(scratch)
        storage = scratch / "storage"
        generator = random.Random(7)
        for number in range(args.runs):
            save_run(storage, canonical_json(_varied(report, generator)), f"run{number}", None)
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
        write_history_page(loaded, page)
        html = time.process_time() - started
        print(f"saved runs: {len(runs)} ({sum(run.path.stat().st_size for run in runs) / 1e6:.1f} MB), history rows: {len(lines) - 2}")
        print(f"reading every saved run once (reference): {reading:.2f} s CPU")
        print(f"retrieval-bench history (text): {text:.2f} s CPU ({text / reading:.1f}x the reference)")
        print(f"history --html, the runs already read (page and {len(runs)} run pages): {html:.2f} s CPU; the page alone {page.stat().st_size / 1e6:.2f} MB")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
