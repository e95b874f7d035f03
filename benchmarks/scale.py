"""How set-up cost grows with a repository: the built-in arms over git snapshots of real repositories.

    python benchmarks/scale.py --repos DIR OWNER/NAME[@REV] [OWNER/NAME[@REV] ...] \\
        [--arms arb-lexical,bm25:all,arb-repomap,embed:wordllama] [--repeat N] [--scratch DIR] [--embed-memory MIB]

DIR holds the repositories as `--bench-repos` finds them (`OWNER+NAME`, `OWNER__NAME` or
`OWNER/NAME`, bare or not); REV defaults to HEAD. For each repository a one-sample bench is written
(an ARB row whose gold is the repository's first text file), and for each arm two pytest runs are
made in a child process, one after the other on one cache directory: cold (an empty cache) and warm
(everything the cold run cached). The floor is a run of an arm that builds nothing and abstains
(written as a Python arm into the scratch directory's conftest): pytest's start and reading the
snapshot from git. Each child's own CPU (user + system) and peak RSS come from `wait4`, so they are
the child's alone.

With `--repeat N` every run is made N times and the least CPU kept (a loaded machine adds to CPU
time too). Printed per repository: text files, text bytes, the bench tokens of the texts (the
lexical arms' unit of work), the floor's CPU, and per arm the cold and warm CPU and peak RSS and the
set-up CPU (cold minus floor). Then, per arm, the slope of set-up CPU against text bytes (least
squares through the origin, seconds per MB) and each repository's own seconds per MB and per
million tokens beside it: a repository more than 1.5x off the slope is marked, since a linear cost
should keep every ratio near it. Set-up figures under about half a second are within the noise of
a pytest run. Figures are measured in this run; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ARMS = "arb-lexical,bm25:all,arb-repomap,embed:wordllama"
FLOOR_ARM = "floor"
FLOOR_CONFTEST = """
import pytest
from pytest_retrieval_bench import Answer


class Floor:
    name = "floor"

    def retrieve(self, request):
        return Answer(ranking=[])  # reads nothing, builds nothing: the run's cost is pytest's and the snapshot's


@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return [Floor()]
"""
MAX_TEXT_BYTES = 1_048_576
OFF_SLOPE = 1.5


@dataclass
class Run:
    cpu: float
    peak_mb: float
    wall: float
    code: int


def git(repo_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo_dir), *args], check=True, capture_output=True).stdout


def find_repo(root: Path, name: str) -> Path:
    for candidate in (root / name.replace("/", "+"), root / name.replace("/", "__"), root / name):
        if candidate.exists():
            return candidate
    raise SystemExit(f"{name}: not found under {root} (as OWNER+NAME, OWNER__NAME or OWNER/NAME)")


def text_size(repo_dir: Path, commit: str) -> tuple[int, int]:
    """Text files and their bytes at the commit, by SPEC 2's rule (under 1 MiB, no NUL byte)."""
    listing = git(repo_dir, "ls-tree", "-r", "-z", "--format=%(objecttype) %(objectname) %(objectsize)", commit).split(b"\0")
    blobs = [line.split(b" ") for line in listing if line.startswith(b"blob ")]
    small = [(name.decode(), int(size)) for _, name, size in blobs if int(size) < MAX_TEXT_BYTES]
    batch = subprocess.run(["git", "-C", str(repo_dir), "cat-file", "--batch"], input=b"".join(f"{name}\n".encode() for name, _ in small),
                           check=True, capture_output=True).stdout
    files = total = 0
    at = 0
    for _, size in small:
        at = batch.index(b"\n", at) + 1  # the header line
        if b"\0" not in batch[at:at + size]:
            files, total = files + 1, total + size
        at += size + 1
    return files, total


def write_bench(where: Path, repo: str, commit: str, repo_dir: Path) -> Path:
    first = next(name for name in git(repo_dir, "ls-tree", "-r", "--name-only", commit).decode().splitlines() if name.endswith((".py", ".java", ".rs", ".go", ".ts", ".md")))
    row = {"id": f"scale-{repo.replace('/', '-')}", "repo": repo, "base_commit": commit, "task_type": "code2test",
           "query": {"title": "where is the configuration loaded and validated", "body": "the settings parser rejects an empty path"},
           "gold": {"related_tests": [first]}}
    path = where / f"{repo.replace('/', '__')}.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


def run_child(arguments: list[str], cwd: Path) -> Run:
    started = time.perf_counter()
    with tempfile.TemporaryFile() as output:  # a file, not a pipe: a child that writes much never blocks
        child = subprocess.Popen([sys.executable, "-m", "pytest", *arguments], cwd=cwd, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0:
            output.seek(0)
            print(f"  (exit {code}: {output.read().decode(errors='replace').strip()[-400:]})", file=sys.stderr)
    return Run(usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, wall, code)


def measure(samples: Path, repos: Path, arm: str, cache: Path, scratch: Path, embed_memory: int | None, repeat: int) -> tuple[Run, Run]:
    """(cold, warm), each the least-CPU round of `repeat`."""
    arguments = ["-p", "no:cacheprovider", "-q", f"--bench-samples={samples}", f"--bench-repos={repos}", f"--bench-arms={arm}",
                 f"--bench-cache-dir={cache}", f"--bench-report={scratch / 'report.json'}", "--bench-replace-registration"]
    if embed_memory is not None:
        arguments.append(f"--bench-embed-memory={embed_memory}")
    rounds = []
    for _ in range(max(1, repeat)):
        shutil.rmtree(cache, ignore_errors=True)
        rounds.append((run_child(arguments, scratch), run_child(arguments, scratch)))
    return min((cold for cold, _ in rounds), key=lambda run: run.cpu), min((warm for _, warm in rounds), key=lambda run: run.cpu)


def token_count(repo_dir: Path, name: str, commit: str) -> int:
    """The bench tokens of the snapshot's texts, read as the plugin reads a git snapshot."""
    from pytest_retrieval_bench.corpus.tree import read_git_tree
    from pytest_retrieval_bench.index.tokens import bench_tokens

    return sum(len(bench_tokens(text)) for _, text in read_git_tree(repo_dir, name, commit).text_files())


def slope(points: list[tuple[float, float]]) -> float:
    """Least squares through the origin: seconds per MB."""
    denominator = sum(x * x for x, _ in points)
    return sum(x * y for x, y in points) / denominator if denominator else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("repositories", nargs="+", metavar="OWNER/NAME[@REV]")
    parser.add_argument("--arms", default=DEFAULT_ARMS)
    parser.add_argument("--scratch", type=Path, default=None)
    parser.add_argument("--embed-memory", type=int, default=None, help="--bench-embed-memory for the runs (MiB)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds per run, the least CPU kept (default 1)")
    args = parser.parse_args(argv)
    arms = [arm for arm in args.arms.split(",") if arm]
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="scale-"))
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "conftest.py").write_text(FLOOR_CONFTEST)
    repos = args.repos.resolve()
    rows: list[dict] = []
    for entry in args.repositories:
        name, _, revision = entry.partition("@")
        repo_dir = find_repo(repos, name)
        commit = git(repo_dir, "rev-parse", "--verify", f"{revision or 'HEAD'}^{{commit}}").decode().strip()
        files, size = text_size(repo_dir, commit)
        tokens = token_count(repo_dir, name, commit)
        samples = write_bench(scratch, name, commit, repo_dir)
        floor, _ = measure(samples, repos, FLOOR_ARM, scratch / "cache", scratch, args.embed_memory, args.repeat)
        row = {"repo": name, "commit": commit[:12], "files": files, "mb": size / 1e6, "mtokens": tokens / 1e6, "floor": floor, "arms": {}}
        for arm in arms:
            row["arms"][arm] = measure(samples, repos, arm, scratch / "cache", scratch, args.embed_memory, args.repeat)
        rows.append(row)
        print(f"{name}@{commit[:12]}: {files:,} text files, {size / 1e6:.1f} MB, {tokens / 1e6:.2f} M bench tokens; "
              f"floor ({FLOOR_ARM}) {floor.cpu:.2f} s CPU, peak {floor.peak_mb:.0f} MB", flush=True)
        for arm, (cold, warm) in row["arms"].items():
            failed = " (FAILED)" if cold.code or warm.code else ""
            print(f"  {arm:16} cold {cold.cpu:7.2f} s CPU, peak {cold.peak_mb:6.0f} MB | warm {warm.cpu:6.2f} s, peak {warm.peak_mb:6.0f} MB"
                  f" | set-up {cold.cpu - floor.cpu:7.2f} s{failed}", flush=True)
    print("\nset-up CPU against text bytes (cold minus floor), least squares through the origin:")
    for arm in arms:
        points = [(row["mb"], row["arms"][arm][0].cpu - row["floor"].cpu) for row in rows]
        fitted = slope(points)
        print(f"  {arm:16} {fitted:.3f} s/MB")
        for row, (mb, seconds) in zip(rows, points):
            own = seconds / mb if mb else float("nan")
            mark = "  <- off the slope" if fitted > 0 and not (1 / OFF_SLOPE <= own / fitted <= OFF_SLOPE) else ""
            per_token = seconds / row["mtokens"] if row["mtokens"] else float("nan")
            print(f"    {row['repo']:32} {mb:7.1f} MB {seconds:8.2f} s {own:7.3f} s/MB {per_token:7.3f} s/M tokens{mark}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
