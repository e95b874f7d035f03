"""A cold leaderboard run end to end: the plugin's three reference rankers beside the bench's own commands for them.

Run it from the project root, in an environment where the package is installed, on an ARB
samples file, a release-format corpus made by the bench's own builder and a checkout of
eyuansu62/agent-retrieval-bench:

    python benchmarks/leaderboard.py --samples SAMPLES.jsonl --corpus CORPUS_DIR \\
        --bench-src AGENT_RETRIEVAL_BENCH_CHECKOUT [--bench-python PYTHON] [--max-snapshots N] [--repeat 3]

The samples and snapshots are chosen as `benchmarks/release.py` chooses them (both take their
helpers from `benchmarks/release_runs.py`), and every measurement is a child process of its own,
reaped with `os.wait4` so its CPU (user + sys) and peak RSS are its own. Each round runs, one
after another:

1. the floor: read every chunk file once (orjson over each line) and one bench-token pass
   (`bench_tokens`) over the file rows' text, one snapshot at a time;
2. cold: `python -m pytest -p pytest_retrieval_bench.plugin --bench-arms=arb-lexical,arb-bm25,arb-repomap`
   on the samples and corpus, with an empty `--bench-cache-dir` (a new one each round), so every
   index is built; with `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`, so the other pytest plugins installed
   in the environment (which a user may or may not have) are not loaded and not counted;
3. warm: the same command again on the cache the cold run filled;
4. start-up: the same command with `--co` (collection only: the interpreter, the imports, the
   plugin's configuration, reading the samples, collecting the items, no index and no query),
   the part of every run that neither a cache nor a faster build can remove;
5. the bench: `eval-selective-baseline --ranker lexical`, `--ranker bm25` and `eval-repomap`
   (all files, `--no-keep-list`), each a process of its own, with `src/` of `--bench-src` first
   on PYTHONPATH.

Printed: each round's CPU, then for the round of least CPU of each command: CPU and wall
seconds, peak RSS, arm-samples (the plugin's items; the lines of each bench command's details
file), CPU per arm-sample and the bench/plugin ratios of CPU per arm-sample, in total and per
ranker (the plugin's CPU per item for every ranker, as one run builds and ranks them together),
the bench's three commands' CPU against the cold run's, wall likewise; cold/floor; cold/warm;
start-up, cold and warm beyond it, and cold/start-up (the most cold/warm can be, as a warm run
pays the start-up too); the cold run's peak RSS against 3x the largest snapshot's file-row text plus 150 MB. As a
side figure, how many of each bench command's top-20 lists equal the plugin's ranking (the files
the plugin removes as given taken out of the bench's list, the whole top 20 compared), how many
differ, and how many have a plugin record that is an error or no record at all (both
disagreements); the bench's RepoMap depends on the string-hash seed, see benchmarks/repomap.py.
It asserts nothing.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from release_runs import (TOP, MB, Agreement, Child, parsed_arguments, evaluator_corpus, fastest, iter_raw_lines, plugin_corpus, plugin_records, ratio, run_child,
                          chosen_snapshots, top_agreement)

ARMS = ("arb-lexical", "arb-bm25", "arb-repomap")
BENCH_COMMANDS = {  # the plugin arm -> the bench's command for the same ranker
    "arb-lexical": ["eval-selective-baseline", "--ranker", "lexical"],
    "arb-bm25": ["eval-selective-baseline", "--ranker", "bm25"],
    "arb-repomap": ["eval-repomap"],
}
RSS_ALLOWANCE_MB = 150


def floor(chunk_files: list[Path]) -> dict[str, Any]:
    """Child mode: read each chunk file once and take one bench-token pass over its file rows' text."""
    import orjson

    from pytest_retrieval_bench.index.tokens import bench_tokens

    read = tokenize = 0.0
    largest = 0
    for path in chunk_files:
        started = time.process_time()
        rows = [orjson.loads(line) for line in iter_raw_lines(path) if line.strip()]
        texts = [row["text"] for row in rows if row.get("kind") == "file" and isinstance(row.get("text"), str)]
        middle = time.process_time()
        for text in texts:
            bench_tokens(text)
        tokenize += time.process_time() - middle
        read += middle - started
        largest = max(largest, sum(len(text.encode("utf-8", errors="surrogatepass")) for text in texts))
        del rows, texts
    return {"read": read, "tokenize": tokenize, "largest_file_text_bytes": largest}


def detail_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def main(argv: list[str] | None = None) -> int:
    args = parsed_arguments(__doc__, argv, "repomap_eval.py", bench_src_required=True, floor_of=floor)
    if args is None:
        return 0
    bench_package = args.bench_src.resolve() / "src"

    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, PYTHONHASHSEED={os.environ.get('PYTHONHASHSEED', 'random')}")
    with tempfile.TemporaryDirectory(prefix="leaderboard-bench-") as scratch:
        work = Path(scratch)
        samples = work / "samples.jsonl"
        snapshots = chosen_snapshots(args, samples)
        listing = work / "chunk-files.json"
        listing.write_text(json.dumps([str(path) for _, _, path in snapshots]))
        # only this plugin: other plugins installed in the environment (autoloaded by entry point) are not its cost
        pytest = [sys.executable, "-m", "pytest", "-p", "pytest_retrieval_bench.plugin", "-p", "no:cacheprovider", f"--bench-samples={samples}",
                  f"--bench-corpus={plugin_corpus(snapshots, work / 'corpus')}", f"--bench-arms={','.join(ARMS)}", "-q", f"--rootdir={work}"]
        evaluator_corpus(snapshots, work / "arb-corpus")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(bench_package), os.environ.get("PYTHONPATH")])))
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        plugin_env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        run_child("warm-up", [*pytest, "--co"], work, env=plugin_env, ok=(0, 1))  # untimed: modules compiled once, as for a user's second run

        floors: list[dict[str, Any]] = []
        colds: list[Child] = []
        warms: list[Child] = []
        startups: list[Child] = []
        theirs: dict[str, list[Child]] = {arm: [] for arm in ARMS}
        for round_number in range(args.repeat):
            floor_child = run_child(f"floor-{round_number}", [sys.executable, str(Path(__file__).resolve()), "--samples", str(args.samples),
                                                              "--corpus", str(args.corpus), "--bench-src", str(args.bench_src),
                                                              "--floor-of", str(listing)], work)
            floors.append(json.loads(floor_child.stdout.strip().splitlines()[-1]))
            cache = work / f"cache-{round_number}"  # empty: the cold run builds every index and fills it
            colds.append(run_child(f"cold-{round_number}", [*pytest, f"--bench-cache-dir={cache}",
                                                            f"--bench-report={work / f'cold-{round_number}.json'}"], work, env=plugin_env, ok=(0, 1)))
            warms.append(run_child(f"warm-{round_number}", [*pytest, f"--bench-cache-dir={cache}",
                                                            f"--bench-report={work / f'warm-{round_number}.json'}"], work, env=plugin_env, ok=(0, 1)))
            startups.append(run_child(f"startup-{round_number}", [*pytest, "--co", f"--bench-cache-dir={cache}"], work, env=plugin_env))
            for arm, command in BENCH_COMMANDS.items():
                out = work / f"bench-{arm}-{round_number}"
                extra = ["--sweep", f"{out}-sweep.jsonl", "--report", f"{out}-report.md"] if command[0] == "eval-selective-baseline" else []
                theirs[arm].append(run_child(f"bench-{arm}-{round_number}", [
                    args.bench_python, "-m", "agent_retrieval_bench.cli", *command, str(samples), "--corpus", str(work / "arb-corpus"),
                    "--no-keep-list", "--no-progress", "--out", f"{out}-summary.json", "--details", f"{out}-details.jsonl", *extra],
                    work, env=env))

        measured = min(floors, key=lambda run: run["read"] + run["tokenize"])
        floor_cpu = measured["read"] + measured["tokenize"]
        largest_mb = measured["largest_file_text_bytes"] / MB
        cold, warm, startup = fastest(colds), fastest(warms), fastest(startups)
        bench = {arm: fastest(runs) for arm, runs in theirs.items()}
        cold_round = colds.index(min(colds, key=lambda child: child.cpu))
        report = json.loads((work / f"cold-{cold_round}.json").read_text())
        ours = plugin_records(report)
        items = sum(1 for key in ours if key[1] in ARMS)
        evaluated: dict[str, int] = {}
        agree: dict[str, Agreement] = {}
        for arm in ARMS:
            round_number = theirs[arm].index(min(theirs[arm], key=lambda child: child.cpu))
            details = detail_lines(work / f"bench-{arm}-{round_number}-details.jsonl")
            evaluated[arm] = len(details)
            agree[arm] = top_agreement(details, ours, arm)

    print(f"\n== rounds: {args.repeat}; each figure is the least CPU of its rounds (peak RSS: the most)")
    for name, child in (("plugin cold", cold), ("plugin warm", warm), ("plugin start-up", startup),
                        *((f"bench {arm}", child) for arm, child in bench.items())):
        print(f"{name:<22}{', '.join(f'{cpu:.2f}' for cpu in child.all_cpu)} s cpu")
    floor_totals = [run["read"] + run["tokenize"] for run in floors]
    print(f"{'floor':<22}{', '.join(f'{total:.2f}' for total in floor_totals)} s cpu")

    per_item = cold.cpu / max(1, items)
    bench_cpu = sum(child.cpu for child in bench.values())
    bench_wall = sum(child.wall for child in bench.values())
    bench_items = sum(evaluated.values())
    print(f"\n== plugin ({', '.join(ARMS)}; {len(report['details'])} samples, {items} arm-samples)")
    print(f"cold   cpu {cold.cpu:7.2f} s   wall {cold.wall:7.2f} s   peak RSS {cold.rss_mb:5.0f} MB   cpu per arm-sample {per_item * 1000:.1f} ms")
    print(f"warm   cpu {warm.cpu:7.2f} s   wall {warm.wall:7.2f} s   peak RSS {warm.rss_mb:5.0f} MB   cold/warm {ratio(cold.cpu, warm.cpu)} cpu, "
          f"{ratio(cold.wall, warm.wall)} wall")
    print("\n== the bench's commands (whole processes, start-up and imports included, as the plugin's)")
    for arm, child in bench.items():
        per_theirs = child.cpu / max(1, evaluated[arm])
        print(f"{' '.join(BENCH_COMMANDS[arm]):<44} cpu {child.cpu:7.2f} s   wall {child.wall:7.2f} s   peak RSS {child.rss_mb:5.0f} MB   "
              f"arm-samples {evaluated[arm]}   cpu per arm-sample {per_theirs * 1000:.1f} ms = {ratio(per_theirs, per_item)} the plugin's   "
              f"top {TOP} equal to {arm}'s: {agree[arm]}")
    per_bench = bench_cpu / max(1, bench_items)
    print(f"{'all three':<44} cpu {bench_cpu:7.2f} s   wall {bench_wall:7.2f} s   arm-samples {bench_items}   "
          f"cpu per arm-sample {per_bench * 1000:.1f} ms")
    print("\n== ratios")
    print(f"bench/plugin cold     {ratio(bench_cpu, cold.cpu)} cpu ({ratio(per_bench, per_item)} per arm-sample), {ratio(bench_wall, cold.wall)} wall")
    print(f"floor                 {floor_cpu:.2f} s cpu (read {measured['read']:.2f} + bench tokens {measured['tokenize']:.2f})   "
          f"cold/floor {ratio(cold.cpu, floor_cpu)}")
    print(f"cold/warm             {ratio(cold.cpu, warm.cpu)} cpu")
    print(f"start-up (--co)       {startup.cpu:.2f} s cpu: paid by every run, cold or warm; beyond it, cold {cold.cpu - startup.cpu:.2f} s and "
          f"warm {warm.cpu - startup.cpu:.2f} s ({ratio(cold.cpu - startup.cpu, warm.cpu - startup.cpu)}); cold/start-up "
          f"{ratio(cold.cpu, startup.cpu)}, the most cold/warm can be")
    bound = 3 * largest_mb + RSS_ALLOWANCE_MB
    print(f"cold peak RSS         {cold.rss_mb:.0f} MB against 3 x {largest_mb:.1f} MB (largest snapshot's file-row text) + "
          f"{RSS_ALLOWANCE_MB} MB = {bound:.0f} MB ({ratio(cold.rss_mb, bound)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
