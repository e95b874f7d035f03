"""Wall time of one bench run at `-n 0` and at `-n 2 --dist loadgroup`, and the speed-up.

The bench is generated from installed packages (numpy, statsmodels, scipy, pandas, _pytest,
hypothesis): each (sub)package directory holding 1 to 4 MB of Python source becomes one snapshot, and 300
queries made from real identifiers and docstring sentences of those trees (fixed seed) are
spread over them; every built-in lexical arm runs. Each directory is registered as `--copies`
snapshots (default 6, about 235 MB of text in 132 snapshots), so that the run lasts long enough
for xdist's fixed start-up to matter as little as on a real release corpus. The index cache is off so both runs do
the same work, index builds included. Prints figures; asserts nothing.

    python benchmarks/parallel.py [--queries 300] [--copies 6] [--arms grep,...] [--repeat 3]

Besides the end-to-end wall time it prints the time the controller (or the only process) spent in
pytest's run-test loop, from a conftest the script writes into its scratch directory: the part
xdist can divide, without the fixed cost of starting Python and pytest; the CPU seconds of each
process (the controller's share is what competes with the workers for the cores); and the machine
reference, the speed-up of two CPU-bound processes over one, measured before each run (the
median is used) because on shared or hyperthreaded cores it moves by tens of percent within
minutes; `--repeat N` runs every kind N times, interleaved, and uses each kind's least wall time. "speed-up / reference" is how much of what the
machine can give the run gets. Last, the workload reference: the same work split by
`--bench-shard=1/2` and `2/2` into two plain `-n 0` processes started together, no xdist at all;
the serial time over theirs is what two processes sharing these cores give this workload (its
memory traffic, not only a CPU-bound loop's), so "speed-up / workload ref" is xdist's own cost.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PACKAGES = ("numpy", "statsmodels", "scipy", "pandas", "_pytest", "hypothesis")
MIN_BYTES, MAX_BYTES = 1_000_000, 4_000_000
IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:_[A-Za-z0-9]+|[a-z][A-Z][A-Za-z0-9]*)\b")
SENTENCE = re.compile(r'"""\s*([A-Z][^."\n]{20,120}\.)')


def package_dir(name: str) -> Path:
    return Path(importlib.import_module(name).__file__).resolve().parent


def snapshot_roots() -> list[tuple[str, Path]]:
    """Directories of 1 to 4 MB of Python source: a larger directory is split into its
    subdirectories (recursively), so the snapshots are of similar size and balance over workers."""
    roots: list[tuple[str, Path]] = []

    def visit(name: str, directory: Path) -> None:
        size = python_bytes(directory)
        if size > MAX_BYTES:
            for child in sorted(p for p in directory.iterdir() if p.is_dir()):
                visit(f"{name}-{child.name}", child)
        elif size >= MIN_BYTES:
            roots.append((name, directory))

    for package in PACKAGES:
        try:
            visit(package.strip("_"), package_dir(package))
        except ImportError:
            continue
    return roots


def python_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*.py") if p.is_file())


def make_samples(root: Path, repo: str, commit: str, count: int, rng: random.Random) -> list[dict]:
    files = sorted(p for p in root.rglob("*.py") if p.is_file() and p.stat().st_size < 1_000_000)
    samples = []
    while len(samples) < count:
        path = rng.choice(files)
        text = path.read_text(encoding="utf-8", errors="replace")
        identifiers = sorted(set(IDENTIFIER.findall(text)))
        sentences = SENTENCE.findall(text)
        if not identifiers:
            continue
        words = rng.sample(identifiers, min(3, len(identifiers)))
        query = {"pr_title": f"Fix {' and '.join(words)}", "pr_body": rng.choice(sentences) if sentences else " ".join(words)}
        gold = path.relative_to(root).as_posix()
        sample_id = hashlib.sha1(f"{repo}:{len(samples)}".encode()).hexdigest()[:24]
        samples.append({"id": sample_id, "task_type": "trace2code", "repo": repo, "base_commit": commit, "query": query,
                        "gold": {"files": [gold]}, "metadata": {}})
    return samples


REFERENCE = "import re, time\ntext = 'parseHTTPRequest foo_bar baz ' * 400000\nfor _ in range(4): re.findall(r'[A-Za-z0-9]+', text)\n"


def machine_reference() -> float:
    """Speed-up of two CPU-bound processes over one on this machine: the ceiling for -n 2."""
    def timed(copies: int) -> float:
        started = time.perf_counter()
        processes = [subprocess.Popen([sys.executable, "-c", REFERENCE]) for _ in range(copies)]
        for process in processes:
            process.wait()
        return time.perf_counter() - started
    one = timed(1)
    two = timed(2)
    return 2 * one / two


LOOP_TIMER = """
import resource, time, pytest
@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    started = time.perf_counter()
    try:
        return (yield)
    finally:
        if not hasattr(session.config, "workerinput"):
            with open("loop-seconds", "w") as out:
                out.write(str(time.perf_counter() - started))
def pytest_unconfigure(config):
    usage = resource.getrusage(resource.RUSAGE_SELF)
    name = config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller"
    with open(f"cpu-{name}", "w") as out:
        out.write(str(usage.ru_utime + usage.ru_stime))
"""


def two_halves(args: list[str], cwd: Path) -> tuple[float, list[float]]:
    """The run's work split by `--bench-shard=1/2` and `2/2` into two plain `-n 0` processes
    started together: (seconds until both ended, each half's seconds). No xdist at all, so this
    is what two processes sharing this machine's cores give this workload: the ceiling that
    contention (caches, memory bandwidth, a hyperthread sibling) leaves for `-n 2`."""
    from concurrent.futures import ThreadPoolExecutor

    started = time.perf_counter()

    def half(number: int) -> float:
        result = subprocess.run([sys.executable, "-m", "pytest", *args, f"--bench-shard={number}/2",
                                 f"--bench-report={cwd / f'half-{number}.json'}"], cwd=cwd, capture_output=True, text=True)
        if result.returncode not in (0, 1):
            sys.stderr.write(result.stdout[-3000:] + result.stderr[-3000:])
            raise SystemExit(f"half {number} exited {result.returncode}")
        return time.perf_counter() - started

    with ThreadPoolExecutor(2) as pool:
        ended = list(pool.map(half, (1, 2)))
    return max(ended), ended


def run(args: list[str], cwd: Path) -> tuple[float, float, dict[str, float]]:
    """(end-to-end seconds, seconds in the run-test loop, CPU seconds of each pytest process)."""
    for stale in cwd.glob("cpu-*"):
        stale.unlink()
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode not in (0, 1):
        sys.stderr.write(result.stdout[-3000:] + result.stderr[-3000:])
        raise SystemExit(f"pytest exited {result.returncode}")
    cpu = {path.name[4:]: float(path.read_text()) for path in sorted(cwd.glob("cpu-*"))}
    return elapsed, float((cwd / "loop-seconds").read_text()), cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--copies", type=int, default=6, help="register each directory as this many snapshots (more index work)")
    parser.add_argument("--arms", default="grep,grep-ident,bm25:all,bm25:ident,arb-lexical,arb-bm25")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the three runs, interleaved; the least wall time of each is used")
    options = parser.parse_args()
    if options.repeat < 1:
        parser.error("--repeat must be at least 1")
    rng = random.Random(20261130)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        snapshot_args, samples = [], []
        roots = [(f"{name}-{copy}" if options.copies > 1 else name, root) for copy in range(options.copies) for name, root in snapshot_roots()]
        total_files = total_bytes = 0
        for position, (name, root) in enumerate(roots):
            repo, commit = f"bench/{name}", hashlib.sha1(name.encode()).hexdigest()
            snapshot_args.append(f"--bench-snapshot={repo}@{commit}={root}")
            share = options.queries // len(roots) + (1 if position < options.queries % len(roots) else 0)
            samples += make_samples(root, repo, commit, share, rng)
            total_files += sum(1 for p in root.rglob("*") if p.is_file())
            total_bytes += python_bytes(root)
        (work / "conftest.py").write_text(LOOP_TIMER)
        samples_path = work / "samples.jsonl"
        samples_path.write_text("".join(json.dumps(s) + "\n" for s in samples))
        # hypothesis (a test dependency) imports itself at the terminal summary: seconds of
        # controller CPU in both runs that are not this plugin's, so its pytest plugin is off.
        common = [f"--bench-samples={samples_path}", *snapshot_args, f"--bench-arms={options.arms}", "--bench-no-cache",
                  "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q", f"--rootdir={work}"]
        print(f"bench: {len(samples)} samples over {len(roots)} snapshots ({total_files} files, {total_bytes / 1e6:.0f} MB of Python), arms {options.arms}, {os.cpu_count()} cpus")
        references: list[float] = []
        serials, parallels, halves = [], [], []
        for _ in range(options.repeat):  # interleaved, so a slow spell of the machine hits every kind alike
            references.append(machine_reference())
            serials.append(run([*common, "-n", "0", f"--bench-report={work / 'serial.json'}"], work))
            references.append(machine_reference())
            parallels.append(run([*common, "-n", "2", "--dist", "loadgroup", f"--bench-report={work / 'parallel.json'}"], work))
            references.append(machine_reference())
            halves.append(two_halves([*common, "-n", "0"], work))
        strip = lambda p: [(e["id"], {a: r["ranking"] for a, r in e["arms"].items()}) for e in json.loads(p.read_text())["details"]]
        same = strip(work / "serial.json") == strip(work / "parallel.json")
        (serial, serial_loop, serial_cpu), (parallel, parallel_loop, parallel_cpu) = min(serials, key=lambda r: r[0]), min(parallels, key=lambda r: r[0])
        both_halves, each_half = min(halves, key=lambda h: h[0])
        workers = sum(seconds for name, seconds in parallel_cpu.items() if name != "controller")
        reference = sorted(references)[len(references) // 2]
        if options.repeat > 1:
            print(f"rounds: {options.repeat}; each figure is the least wall time of its rounds, the reference the median of all")
            for label, runs in (("-n 0", [r[0] for r in serials]), ("-n 2", [r[0] for r in parallels]), ("two halves", [h[0] for h in halves])):
                print(f"  {label:<11}{', '.join(f'{seconds:.2f}' for seconds in runs)} s")
        print("                        end to end   run-test loop   CPU s")
        print(f"-n 0:                   {serial:7.2f} s   {serial_loop:7.2f} s     {sum(serial_cpu.values()):7.2f}")
        print(f"-n 2 --dist loadgroup:  {parallel:7.2f} s   {parallel_loop:7.2f} s     {parallel_cpu.get('controller', 0.0):7.2f} controller + {workers:.2f} workers")
        print(f"speed-up:               {serial / parallel:7.2f}x  {serial_loop / parallel_loop:7.2f}x   (same rankings: {same})")
        print(f"machine reference:      {reference:7.2f}x   (two CPU-bound processes vs one; median of "
              f"{', '.join(f'{r:.2f}' for r in references)}, measured before each run)")
        print(f"speed-up / reference:   {serial / parallel / reference:7.2f}    {serial_loop / parallel_loop / reference:7.2f}")
        print(f"two halves, no xdist:   {both_halves:7.2f} s   (--bench-shard=1/2 and 2/2 as two -n 0 processes at once; "
              f"they ended after {', '.join(f'{seconds:.2f}' for seconds in each_half)} s)")
        print(f"workload reference:     {serial / both_halves:7.2f}x   (-n 0 / two halves: this workload's own ceiling on these cores)")
        print(f"speed-up / workload ref:{serial / parallel / (serial / both_halves):7.2f}")


if __name__ == "__main__":
    main()
