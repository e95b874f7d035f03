"""Speed figures for the `arb-repomap` arm beside the bench's own RepoMap, measured in the same run.

Run it from the project root, in an environment where the package is installed, on a release
corpus directory and an ARB samples file:

    python benchmarks/repomap.py --corpus CORPUS_DIR --samples SAMPLES.jsonl
    python benchmarks/repomap.py --corpus CORPUS_DIR --samples SAMPLES.jsonl \\
        --bench-src AGENT_RETRIEVAL_BENCH_CHECKOUT [--max-snapshots 8] [--repeat 3] [--build-repeat 3]

`--bench-src` is a checkout of eyuansu62/agent-retrieval-bench (its package is under `src/`,
which is put on `sys.path`); the reference is its `agent_retrieval_bench.repomap_eval`. Without
it only our figures are printed.

The snapshots are those the samples name, in order of first appearance (at most
`--max-snapshots`); a sample counts when its snapshot is in the corpus and it has target gold
files by the bench's rule (query leakage is not checked: it does not change what a query costs).
Each snapshot's chunk file is read once; both maps are built from the same parsed rows, so
reading and parsing are not part of either build.

Printed per snapshot (files, chunk rows, edges) and in total:

- map build: our `build_repomap` against the bench's `build_repomap_index`, wall and CPU
  seconds, and bench/ours. Our per-snapshot query setup (`QueryView.of` and the path
  tie-break order, both computed once per map) is printed beside it, not included in it;
  the bench's (`candidate_paths_for_filter`, all files) likewise;
- index cache: wall time to store our map in an `IndexCache` in a temporary directory and
  to load it back, and the compressed entry's size (the content digest keying it is taken
  before, untimed);
- per query: our `rank_files` against the bench's `rank_files_for_sample` (weights
  0.65/0.25/0.10, all files as candidates), median and total milliseconds, wall and CPU, and
  bench/ours. With `--build-repeat B` each map is built B times on each side and its fastest
  build is kept (the machine's speed moves by tens of percent within a minute). With `--repeat R`
  each query runs R times on each side and its fastest run is
  kept;
- as a side figure, how many rankings are identical, in full (every file) and in their first
  20. The bench iterates Python sets in its symbol-reference scan, whose caps then keep the
  first keys, and over the files a query names when it sums their affinity; so its graph and
  its float sums depend on the interpreter's string-hash seed, where ours iterate in sorted
  order. Under an arbitrary seed many rankings differ (one changed edge or last bit reorders
  a tie somewhere); the counts are printed, not asserted. Edge counts are printed for both
  maps where they differ.

With `--phases`, each side builds each map once more with its phases clocked where its build
calls them (`phase_clocks.py`: the functions wrapped for that build, nothing of the build
copied here): the rows read into nodes and symbols, the node tokens with their postings (the
bench's token sets and idf), the import edges, the symbol-reference edges and the source-test
edges; the rest (file kinds, the graph's lists, statistics) is that build's total less them.
Beside ours, the least part of its node tokens that no build by the bench's rules avoids:
each node's path and first 20,000 characters and each distinct symbol split into word runs,
and one dictionary lookup per run.

At the end, the peak RSS of the process (`resource.getrusage`). It prints figures and
asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import orjson
from peak_rss import peak_rss_mb
from phase_clocks import Phases, phase_clocks

import pytest_retrieval_bench.index.repomap as repomap_module
from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.arms.repomap import AFFINITY_WEIGHT, PAGERANK_WEIGHT, QUERY_WEIGHT, QueryView, rank_files, view_tiebreak
from pytest_retrieval_bench.corpus.chunks import find_chunk_file, read_chunk_file
from pytest_retrieval_bench.files.jsonl import iter_sample_lines
from pytest_retrieval_bench.index.cache import IndexCache
from pytest_retrieval_bench.index.repomap import build_repomap
from pytest_retrieval_bench.index.repomap_content import CONTENT_CHARS
from pytest_retrieval_bench.index.repomap_nodes import read_nodes
from pytest_retrieval_bench.index.term_ids import TermIds
from pytest_retrieval_bench.index.tokens import word_run_bytes
from pytest_retrieval_bench.samples.arb import query_text_for_eval, shown_given_files, target_gold_files

MB = 1_000_000
TOP = 20
OUR_PHASES: Phases = {
    "rows into nodes and symbols": ("read_nodes",),
    "node tokens and postings": ("_node_tokens", "_node_batches", "postings_of_batches"),
    "import edges": ("import_pairs",),
    "symbol-reference edges": ("symbol_pairs",),
    "source-test edges": ("source_test_pairs",),
}
BENCH_PHASES: Phases = {
    "rows into nodes and symbols": ("aggregate_file_nodes",),
    "node tokens and postings": ("compute_tokens_and_idf", "build_idf"),
    "import edges": ("add_import_edges",),
    "symbol-reference edges": ("add_symbol_reference_edges",),
    "source-test edges": ("add_source_test_edges",),
}
LEAST = "  of which the least: word runs, a lookup per run"


# --------------------------------------------------------------------------- helpers


@dataclass
class Clock:
    """Wall and CPU seconds of one call."""

    wall: float
    cpu: float


def clocked(function: Callable[[], Any]) -> tuple[Clock, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    return Clock(time.perf_counter() - wall, time.process_time() - cpu), result


def fastest(function: Callable[[], Any], repeat: int) -> tuple[Clock, Any]:
    """The fastest of `repeat` runs (wall and CPU each), and the first run's result."""
    clock, result = clocked(function)
    for _ in range(repeat - 1):
        again, _ = clocked(function)
        clock = Clock(min(clock.wall, again.wall), min(clock.cpu, again.cpu))
    return clock, result


def ratio(theirs: float, ours: float) -> str:
    return f"{theirs / ours:.1f}x" if ours > 0 else "n/a"


def ms(values: list[float]) -> tuple[float, float]:
    """(median, total) in milliseconds."""
    return (statistics.median(values) * 1000.0 if values else 0.0), sum(values) * 1000.0


def load_bench(source: Path) -> Any:
    package = source / "src"
    if not (package / "agent_retrieval_bench" / "repomap_eval.py").is_file():
        raise SystemExit(f"--bench-src: no src/agent_retrieval_bench/repomap_eval.py under {source}")
    sys.path.insert(0, str(package))
    from agent_retrieval_bench import repomap_eval

    return repomap_eval


# --------------------------------------------------------------------------- inputs


def group_samples(corpus: Path, samples_path: Path, max_snapshots: int | None) -> tuple[list[tuple[str, str, Path, list[dict[str, Any]]]], dict[str, int]]:
    """Samples by snapshot, in order of first appearance, and what was left out."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    chunk_files: dict[tuple[str, str], Path | None] = {}
    skipped = {"without gold files": 0, "snapshot not in corpus": 0, "snapshot beyond --max-snapshots": 0}
    for line in iter_sample_lines(samples_path):
        if not line.text.strip():
            continue
        sample = orjson.loads(line.text)
        key = (str(sample.get("repo")), str(sample.get("base_commit")))
        if not target_gold_files(str(sample.get("task_type") or ""), sample.get("gold") or {}):
            skipped["without gold files"] += 1
            continue
        if key not in chunk_files:
            chunk_files[key] = find_chunk_file(corpus, *key)
        if chunk_files[key] is None:
            skipped["snapshot not in corpus"] += 1
            continue
        if key not in groups and max_snapshots is not None and len(groups) >= max_snapshots:
            skipped["snapshot beyond --max-snapshots"] += 1
            continue
        groups.setdefault(key, []).append(sample)
    return [(repo, commit, chunk_files[(repo, commit)], group) for (repo, commit), group in groups.items()], skipped  # type: ignore[misc]


def make_request(sample: dict[str, Any]) -> Request:
    query = sample.get("query") or {}
    task_type = str(sample.get("task_type") or "")
    changed = query.get("changed_file") if isinstance(query, dict) else None
    return Request(sample_id=str(sample.get("id")), task_type=task_type, repo=str(sample["repo"]), base_commit=str(sample["base_commit"]),
                   query=query, query_text=query_text_for_eval(query), changed_file=changed if isinstance(changed, str) else None,
                   k=20, snapshot=None, given_files=tuple(shown_given_files(task_type, sample.get("gold") or {}, query)))


# --------------------------------------------------------------------------- one snapshot


@dataclass
class Figures:
    files: int = 0
    rows: int = 0
    edges: int = 0
    build: list[Clock] = field(default_factory=list)
    setup: list[float] = field(default_factory=list)
    store: list[float] = field(default_factory=list)
    load: list[float] = field(default_factory=list)
    entry_bytes: int = 0
    query_wall: list[float] = field(default_factory=list)
    query_cpu: list[float] = field(default_factory=list)
    phases: Counter[str] = field(default_factory=Counter)  # with --phases: CPU per phase, and "total" of those builds


def clock_phases(build: Callable[[], Any], module: Any, phases: Phases, spent: Counter[str]) -> None:
    """One more build, its phases clocked into `spent` (and its whole CPU as "total")."""
    with phase_clocks(module, phases, spent):
        started = time.process_time()
        build()
        spent["total"] += time.process_time() - started


def least_node_token_work(rows: list[dict[str, Any]]) -> float:
    """CPU of the part of the node tokens any build by the bench's rules must do in Python: each
    node's path and first `CONTENT_CHARS` characters and each distinct informative symbol split
    into word runs, and one dictionary lookup per run (the bench's tokenizer does more per run)."""
    paths, texts, table = read_nodes(rows)
    started = time.process_time()
    ids = TermIds()
    for path, text in zip(paths, texts):
        ids.of(word_run_bytes(path))
        ids.of(word_run_bytes(text[:CONTENT_CHARS]))
    ids.of([run for name in table.names for run in word_run_bytes(name)])
    return time.process_time() - started


def print_phases(ours: Counter[str], theirs: Counter[str] | None) -> None:
    print("\n== map build by phase (CPU seconds; one more build per snapshot and side, its functions clocked where the build calls them)")
    header = f"{'phase':<52} {'ours':>8}"
    print(header + (f" {'bench':>8} {'bench/ours':>10}" if theirs is not None else ""))
    rows = [*OUR_PHASES, "the rest (kinds, graph lists, statistics)", "total"]
    for name in rows:
        mine = ours["total"] - sum(ours[phase] for phase in OUR_PHASES) if name.startswith("the rest") else ours[name]
        line = f"{name:<52} {mine:8.3f}"
        if theirs is not None:
            other = theirs["total"] - sum(theirs[phase] for phase in BENCH_PHASES) if name.startswith("the rest") else theirs[name]
            line += f" {other:8.3f} {ratio(other, mine):>10}"
        print(line)
        if name == "node tokens and postings":
            print(f"{LEAST:<52} {ours[LEAST]:8.3f}")


def measure_snapshot(repo: str, commit: str, chunk_file: Path, samples: list[dict[str, Any]], bench: Any, repeat: int,
                     cache: IndexCache, ours: Figures, theirs: Figures, build_repeat: int = 1, phases: bool = False) -> tuple[int, int, int]:
    """Print one snapshot's figures; returns (identical rankings, identical first TOP, queries compared)."""
    snapshot = read_chunk_file(chunk_file, repo, commit)
    rows = list(snapshot.chunk_rows or [])  # the same parsed rows for both builds, held (a read no longer holds them)
    digest = snapshot.content_digest()
    requests = [make_request(sample) for sample in samples]

    build_ours, index = fastest(lambda: build_repomap(rows), build_repeat)
    setup_ours, view = clocked(lambda: (QueryView.of(index), view_tiebreak(index))[0])
    store, _ = clocked(lambda: cache.store(digest, "repomap", index))
    entry_bytes = sum(path.stat().st_size for path in cache.directory.rglob("*.idx.zst"))
    load, loaded = clocked(lambda: cache.load(digest, "repomap"))
    for path in cache.directory.rglob("*.idx.zst"):
        path.unlink()  # one entry on disk at a time, so the size above is this snapshot's

    edges = int(index.stats["edge_count"])
    ours.files += len(index.paths)
    ours.rows += len(rows)
    ours.edges += edges
    ours.build.append(build_ours)
    ours.setup.append(setup_ours.wall)
    ours.store.append(store.wall)
    ours.load.append(load.wall)
    ours.entry_bytes += entry_bytes

    reference = candidates = None
    if bench is not None:
        build_theirs, reference = fastest(lambda: bench.build_repomap_index(rows), build_repeat)
        setup_theirs, candidates = clocked(lambda: bench.candidate_paths_for_filter(reference.nodes, "all_files"))
        theirs.edges += int(reference.stats["edge_count"])
        theirs.build.append(build_theirs)
        theirs.setup.append(setup_theirs.wall)
    if phases:
        clock_phases(lambda: build_repomap(rows), repomap_module, OUR_PHASES, ours.phases)
        ours.phases[LEAST] += least_node_token_work(rows)
        if bench is not None:
            clock_phases(lambda: bench.build_repomap_index(rows), bench, BENCH_PHASES, theirs.phases)

    identical = top_identical = 0
    wall_ours: list[float] = []
    cpu_ours: list[float] = []
    wall_theirs: list[float] = []
    cpu_theirs: list[float] = []
    for sample, request in zip(samples, requests):
        clock, got = fastest(lambda: rank_files(index, view, request), repeat)
        wall_ours.append(clock.wall)
        cpu_ours.append(clock.cpu)
        if reference is None:
            continue
        clock, ranked = fastest(lambda: bench.rank_files_for_sample(
            sample=sample, query_text=request.query_text, index=reference, candidate_paths=candidates,
            query_weight=QUERY_WEIGHT, pagerank_weight=PAGERANK_WEIGHT, affinity_weight=AFFINITY_WEIGHT), repeat)
        wall_theirs.append(clock.wall)
        cpu_theirs.append(clock.cpu)
        expected = [path for path, _, _ in ranked]
        identical += expected == got
        top_identical += expected[:TOP] == got[:TOP]
    ours.query_wall += wall_ours
    ours.query_cpu += cpu_ours
    theirs.query_wall += wall_theirs
    theirs.query_cpu += cpu_theirs

    edge_note = f" (bench {reference.stats['edge_count']})" if reference is not None and reference.stats["edge_count"] != edges else ""
    skipped_scan = " symbol scan skipped (>3000 source/test files)," if index.stats["symbol_reference_scan_skipped"] else ""
    print(f"\n== {repo} @ {commit[:10]}: {len(index.paths)} files, {len(rows)} chunk rows, {edges} edges{edge_note},{skipped_scan} "
          f"{len(samples)} queries")
    line = f"build     ours  {build_ours.wall:8.3f} s (cpu {build_ours.cpu:8.3f})"
    if reference is not None:
        line += f"   bench {build_theirs.wall:8.3f} s (cpu {build_theirs.cpu:8.3f})   bench/ours {ratio(build_theirs.wall, build_ours.wall)}"
    print(line)
    line = f"setup     ours  {setup_ours.wall * 1000:8.2f} ms (query view + tie-break order, once per map)"
    if reference is not None:
        line += f"   bench {setup_theirs.wall * 1000:.2f} ms (candidate set)"
    print(line)
    state = "" if loaded is not None else "   LOAD FAILED (entry not found or not trusted)"
    print(f"cache     store {store.wall * 1000:8.1f} ms   load {load.wall * 1000:8.1f} ms   entry {entry_bytes / MB:.3f} MB{state}")
    median_ours, total_ours = ms(wall_ours)
    line = f"query     ours  median {median_ours:8.2f} ms  total {total_ours:9.1f} ms (cpu {sum(cpu_ours) * 1000:9.1f})"
    if reference is not None:
        median_theirs, total_theirs = ms(wall_theirs)
        print(line)
        print(f"          bench median {median_theirs:8.2f} ms  total {total_theirs:9.1f} ms (cpu {sum(cpu_theirs) * 1000:9.1f})"
              f"   bench/ours {ratio(median_theirs, median_ours)} median, {ratio(total_theirs, total_ours)} total")
        print(f"rankings  identical {identical}/{len(samples)}, first {TOP} identical {top_identical}/{len(samples)}")
    else:
        print(line)
    print(f"peak RSS  {peak_rss_mb():.0f} MB so far", flush=True)
    return identical, top_identical, len(samples) if reference is not None else 0


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="a release corpus directory (with corpus_manifest.jsonl)")
    parser.add_argument("--samples", type=Path, required=True, help="ARB sample rows (.jsonl or .jsonl.zst)")
    parser.add_argument("--bench-src", type=Path, help="a checkout of eyuansu62/agent-retrieval-bench, for the reference figures")
    parser.add_argument("--max-snapshots", type=int, help="measure at most this many snapshots (first named by the samples)")
    parser.add_argument("--repeat", type=int, default=1, help="time each query this many times per side, keep the fastest (default 1)")
    parser.add_argument("--build-repeat", type=int, default=1,
                        help="build each snapshot's map this many times per side, keep the fastest (default 1)")
    parser.add_argument("--phases", action="store_true", help="also build each map once more per side with its phases clocked, and print them")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.build_repeat < 1:
        parser.error("--repeat and --build-repeat must be at least 1")

    bench = load_bench(args.bench_src) if args.bench_src else None
    version = getattr(sys.modules.get("agent_retrieval_bench"), "__version__", "?") if bench is not None else None
    print(f"python {platform.python_version()}, numpy {np.__version__}, PYTHONHASHSEED={os.environ.get('PYTHONHASHSEED', 'random')}, "
          f"{os.cpu_count()} CPUs")
    print(f"reference: agent_retrieval_bench {version} repomap_eval" if bench is not None
          else "reference: not measured (no --bench-src): our figures only")

    groups, skipped = group_samples(args.corpus, args.samples, args.max_snapshots)
    left_out = ", ".join(f"{count} {reason}" for reason, count in skipped.items() if count)
    print(f"{len(groups)} snapshots, {sum(len(group) for *_, group in groups)} queries" + (f" (samples left out: {left_out})" if left_out else ""))
    print(f"query timing: fastest of {args.repeat} run(s) per query and side; map builds: fastest of {args.build_repeat} per snapshot and side")

    ours, theirs = Figures(), Figures()
    identical = top_identical = compared = 0
    with tempfile.TemporaryDirectory(prefix="repomap-cache-") as directory:
        cache = IndexCache(Path(directory))
        for repo, commit, chunk_file, samples in groups:
            same, same_top, count = measure_snapshot(repo, commit, chunk_file, samples, bench, args.repeat, cache, ours, theirs, args.build_repeat,
                                                     args.phases)
            identical += same
            top_identical += same_top
            compared += count

    print(f"\n== total: {len(groups)} snapshots, {ours.files} files, {ours.rows} chunk rows, {ours.edges} edges"
          + (f" (bench {theirs.edges})" if bench is not None and theirs.edges != ours.edges else "") + f", {len(ours.query_wall)} queries")
    build_wall, build_cpu = sum(c.wall for c in ours.build), sum(c.cpu for c in ours.build)
    line = f"build     ours  {build_wall:8.3f} s (cpu {build_cpu:8.3f})"
    if bench is not None:
        their_wall, their_cpu = sum(c.wall for c in theirs.build), sum(c.cpu for c in theirs.build)
        line += f"   bench {their_wall:8.3f} s (cpu {their_cpu:8.3f})   bench/ours {ratio(their_wall, build_wall)}"
    print(line)
    print(f"setup     ours  {sum(ours.setup) * 1000:8.1f} ms" + (f"   bench {sum(theirs.setup) * 1000:.1f} ms" if bench is not None else ""))
    print(f"cache     store {sum(ours.store) * 1000:8.1f} ms   load {sum(ours.load) * 1000:8.1f} ms   entries {ours.entry_bytes / MB:.3f} MB "
          f"(build/load {ratio(build_wall, sum(ours.load))})")
    median_ours, total_ours = ms(ours.query_wall)
    line = f"query     ours  median {median_ours:8.2f} ms  total {total_ours:9.1f} ms (cpu {sum(ours.query_cpu) * 1000:9.1f})"
    print(line)
    if bench is not None:
        median_theirs, total_theirs = ms(theirs.query_wall)
        print(f"          bench median {median_theirs:8.2f} ms  total {total_theirs:9.1f} ms (cpu {sum(theirs.query_cpu) * 1000:9.1f})"
              f"   bench/ours {ratio(median_theirs, median_ours)} median, {ratio(total_theirs, total_ours)} total")
        print(f"rankings  identical {identical}/{compared}, first {TOP} identical {top_identical}/{compared} (not asserted: the bench "
              f"iterates Python sets in its symbol-reference scan and affinity sums, so its graph and scores depend on the "
              f"string-hash seed; ours iterate in sorted order)")
    else:
        print("reference not measured (no --bench-src)")
    if args.phases:
        print_phases(ours.phases, theirs.phases if bench is not None else None)
    print(f"peak RSS  {peak_rss_mb():.0f} MB (end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
