"""CPU, wall time and memory of a plugin run on a release corpus, beside the bench's evaluator and a floor.

Run it from the project root, in an environment where the package is installed, on an ARB
samples file and a release-format corpus made by the bench's own builder
(`OWNER__NAME/COMMIT.chunks.jsonl[.zst]`, optionally `corpus_manifest.jsonl`; see
benchmarks/build_release_corpus.py):

    python benchmarks/release.py --samples SAMPLES.jsonl --corpus CORPUS_DIR
    python benchmarks/release.py --samples SAMPLES.jsonl --corpus CORPUS_DIR \\
        --bench-src AGENT_RETRIEVAL_BENCH_CHECKOUT [--bench-python PYTHON] [--max-snapshots 8]

The samples are those whose snapshot is in the corpus, restricted with `--max-snapshots N` to
the first N such snapshots in order of first appearance; they are written to a filtered samples
file in a temporary directory (removed at the end), and every measurement below reads that file
and those snapshots only. Everything runs one process at a time, each in a child of this one, so
figures are the child's own (`os.wait4`: user+sys CPU and peak RSS; this process stays small,
and Linux's ru_maxrss of a child is never below its parent's RSS at the fork).

1. cold plugin run: `python -m pytest -p no:cacheprovider --bench-samples=S --bench-corpus=C
   --bench-no-cache --bench-report=... -q` (C: links to the chosen snapshots' chunk files only, as
   the evaluator's manifest names only those), the six default built-in arms (grep, grep-ident,
   bm25:all, bm25:ident, arb-lexical, arb-bm25): CPU, wall, peak RSS, items (arm x sample);
2. warm plugin run: one run fills an index cache (`--bench-cache-dir`), then a timed run reads
   it; warm CPU, cold/warm, and whether the cold and warm reports are identical apart from the
   volatile fields (every `wall_ms` and the `latency` section, as the tests compare them);
3. the bench's evaluator (`agent_retrieval_bench.cli eval-selective-baseline`, `--ranker
   lexical` and `--ranker bm25`, one process each, with `src/` of `--bench-src` first on
   PYTHONPATH, run by `--bench-python`), beside a cold plugin run of the same two rankers
   (`--bench-arms=arb-lexical,arb-bm25`, `--bench-no-cache`): the CPU of each, evaluator/plugin
   in total and per arm-sample. The six-arm cold run's CPU per arm-sample is printed apart and
   is not that comparison: its start-up and reading are shared by six arms, the evaluator's by
   two. The evaluator's `--corpus` is a manifest written in the temporary directory with absolute
   `chunks_path`s (it opens them from its working directory and reads plain JSONL only, so a
   `.zst` chunk file is decompressed there first, untimed); `--no-keep-list`, so its default
   keep list is not picked up from the working directory. It leaves out samples whose query
   leaks the fix; its own `evaluated` count is used. As a side figure, how many of its top-20
   file lists equal the six-arm cold run's `arb-lexical` / `arb-bm25` rankings (the files the
   plugin removes as given, which the evaluator keeps, taken out of its list; the whole top 20
   compared), how many differ, and how many have a plugin record that is an error or no record
   at all (both disagreements). Skipped without `--bench-src`;
4. the floor, in a child process of its own so imports are not counted: read every chunk file
   once (orjson over each line); find the symbol rows whose text is a line range of their file
   row's text; tokenize every distinct text once with `bench_tokens` (file rows, and symbol rows
   that are not a line range); one identifier-run pass over the file rows' text (`word_run_bytes`, the faster of the two ways the project has). Each part's CPU,
   the total, and cold CPU / floor;
5. sizes: snapshots, rows (file, symbol, other), MB of file-row text and of all rows' text
   ("chunk text", what the evaluator ranks), symbol rows that are line ranges, and the cold
   run's MB/s over the chunk text;
6. the cold run's peak RSS in MB and as a multiple of the file-row text held once (UTF-8).

With `--repeat N` every timed run (floor, start-up, cold, warm, the two-ranker cold run, each
evaluator ranker) runs once per round, N rounds one after another, and each figure is the least
CPU of its rounds, its wall from that same round: on a shared machine a slow spell adds time,
never removes it, and with rounds it cannot fall on one side of a ratio only. The cache is filled
once; every round's reports must agree.

It prints figures, a table at the end, and asserts nothing. A child that fails makes it print
the tail of its output and exit non-zero.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any


from release_runs import (Agreement, Child, EVALUATOR_RANKERS, MB, TOP, floor, parsed_arguments, differing_keys, evaluator_corpus, fastest, metrics, own_rss_mb,
                          plugin_corpus, plugin_records, rankings, ratio, run_child, select_samples, top_agreement, without_volatile)


def evaluator_rows(evaluator: dict[str, Child], evaluated: dict[str, int], same_rankers: Child, same_items: int,
                   all_arms: Child, all_items: int, arm_count: int) -> list[tuple[str, str]]:
    """The evaluator's CPU against the plugin's over the same rankers (a cold run of those arms only, as its
    start-up and reading are paid once per process either way), and apart, named for what it is, against
    the cold run of every arm, whose start-up and reading `arm_count` arms share."""
    evaluator_cpu = sum(child.cpu for child in evaluator.values())
    evaluator_items = sum(evaluated.values())
    per_theirs = evaluator_cpu / evaluator_items if evaluator_items else 0.0
    per_same = same_rankers.cpu / same_items if same_items else 0.0
    per_all = all_arms.cpu / all_items if all_items else 0.0
    rankers = len(evaluator)
    return [
        (f"evaluator cpu ({' + '.join(evaluator)})", " + ".join(f"{child.cpu:.2f}" for child in evaluator.values()) + f" = {evaluator_cpu:.2f} s"),
        ("evaluator arm-samples / cpu per arm-sample", f"{evaluator_items} / {per_theirs * 1000:.1f} ms"),
        (f"plugin cold, same {rankers} rankers: cpu / arm-samples / per arm-sample", f"{same_rankers.cpu:.2f} s / {same_items} / {per_same * 1000:.1f} ms"),
        (f"evaluator/plugin cpu, same {rankers} rankers", ratio(evaluator_cpu, same_rankers.cpu)),
        (f"evaluator/plugin per arm-sample, same {rankers} rankers", ratio(per_theirs, per_same)),
        (f"evaluator ({rankers} rankers) per arm-sample / the {arm_count}-arm cold run's",
         f"{per_theirs * 1000:.1f} ms / {per_all * 1000:.1f} ms = {ratio(per_theirs, per_all)}"),
    ]


def main(argv: list[str] | None = None) -> int:
    args = parsed_arguments(__doc__, argv, "selective_eval.py", bench_src_required=False, floor_of=floor)
    if args is None:
        return 0
    bench_package = args.bench_src.resolve() / "src" if args.bench_src else None
    samples_in, corpus = args.samples.resolve(), args.corpus.resolve()

    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, PYTHONHASHSEED={os.environ.get('PYTHONHASHSEED', 'random')}")
    with tempfile.TemporaryDirectory(prefix="release-bench-") as scratch:
        work = Path(scratch)
        samples = work / "samples.jsonl"
        snapshots, kept, left_out = select_samples(samples_in, corpus, args.max_snapshots, samples)
        note = ", ".join(f"{count} {reason}" for reason, count in left_out.items() if count)
        print(f"{len(snapshots)} snapshots, {kept} samples" + (f" (left out: {note})" if note else ""))
        if not snapshots:
            raise SystemExit("no sample names a snapshot of the corpus")
        for repo, commit, path in snapshots:
            print(f"  {repo}@{commit[:12]}  {path.stat().st_size / MB:8.1f} MB  {path.name}")

        # hypothesis's pytest plugin comes with the test extras, not with the plugin: its start-up is not ours
        pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", f"--bench-samples={samples}",
                  f"--bench-corpus={plugin_corpus(snapshots, work / 'corpus')}", "-q", f"--rootdir={work}"]
        listing = work / "chunk-files.json"
        listing.write_text(json.dumps([str(path) for _, _, path in snapshots]))
        # the untimed warm-up below compiles (and assertion-rewrites) the modules once, so every timed run starts as a
        # user's second run does, from bytecode; PYTHONDONTWRITEBYTECODE would make each child compile
        # the modules changed since their bytecode was last written (start-up time that is not the run's)
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        env = None
        if bench_package is not None:
            evaluator_corpus(snapshots, work / "arb-corpus")
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(bench_package), os.environ.get("PYTHONPATH")])))
        run_child("warm-up", [*pytest, "--co"], work, ok=(0, 1))  # untimed

        # every timed measurement once per round, the rounds one after another, so that a slow spell
        # of the machine does not fall on one side of a ratio only; each figure is the round's minimum
        floors: list[dict[str, Any]] = []
        startups: list[Child] = []
        colds: list[Child] = []
        warms: list[Child] = []
        same_rankers: list[Child] = []  # cold runs of the evaluator's two rankers only, the plugin's side of its ratio
        evaluator_runs: dict[str, list[Child]] = {ranker: [] for ranker in EVALUATOR_RANKERS} if bench_package is not None else {}
        fill: Child | None = None
        for round_number in range(args.repeat):
            # 4 and 5: the floor child also counts the sizes
            floor_child = run_child(f"floor-{round_number}", [sys.executable, str(Path(__file__).resolve()), "--samples", str(samples_in),
                                                              "--corpus", str(corpus), "--floor-of", str(listing)], work)
            floors.append(json.loads(floor_child.stdout.strip().splitlines()[-1]))
            startups.append(run_child(f"start-up-{round_number}", [*pytest, "--co"], work, ok=(0, 1)))
            # 1 and 2: the plugin, cold, then (once) filling a cache, then warm
            colds.append(run_child(f"cold-{round_number}", [*pytest, "--bench-no-cache", f"--bench-report={work / f'cold-{round_number}.json'}"],
                                   work, ok=(0, 1)))
            if fill is None:
                fill = run_child("fill", [*pytest, f"--bench-cache-dir={work / 'cache'}", f"--bench-report={work / 'fill.json'}"], work, ok=(0, 1))
            warms.append(run_child(f"warm-{round_number}", [*pytest, f"--bench-cache-dir={work / 'cache'}",
                                                            f"--bench-report={work / f'warm-{round_number}.json'}"], work, ok=(0, 1)))
            # 3: the bench's evaluator, and the plugin cold on the same rankers
            if evaluator_runs:
                same_rankers.append(run_child(f"cold-same-rankers-{round_number}", [
                    *pytest, "--bench-no-cache", f"--bench-arms={','.join(EVALUATOR_RANKERS.values())}",
                    f"--bench-report={work / f'cold-same-rankers-{round_number}.json'}"], work, ok=(0, 1)))
            for ranker in evaluator_runs:
                out = work / f"arb-{ranker}"
                evaluator_runs[ranker].append(run_child(f"arb-{ranker}-{round_number}", [
                    args.bench_python, "-m", "agent_retrieval_bench.cli", "eval-selective-baseline", str(samples),
                    "--corpus", str(work / "arb-corpus"), "--no-keep-list", "--ranker", ranker, "--no-progress",
                    "--out", f"{out}-summary.json", "--details", f"{out}-details.jsonl", "--sweep", f"{out}-sweep.jsonl",
                    "--report", f"{out}-report.md"], work, env=env))
        assert fill is not None
        measured = min(floors, key=lambda floor_run: sum(floor_run["parts"].values()))
        parts, sizes = measured["parts"], measured["sizes"]
        floor_cpu = sum(parts.values())
        file_mb, chunk_mb = sizes["file_text_bytes"] / MB, sizes["chunk_text_bytes"] / MB
        startup, cold, warm = fastest(startups), fastest(colds), fastest(warms)
        evaluator = {ranker: fastest(runs) for ranker, runs in evaluator_runs.items()}
        same_cold = fastest(same_rankers) if same_rankers else None
        same_items = 0
        if same_cold is not None:
            same_rankers_report = work / f"cold-same-rankers-{same_rankers.index(min(same_rankers, key=lambda child: child.cpu))}.json"
            if not same_rankers_report.is_file():
                raise SystemExit("the cold run of the evaluator's two rankers wrote no report")
            same_items = sum(len(entry["arms"]) for entry in json.loads(same_rankers_report.read_text())["details"])

        reports = {}
        for name in ("cold", "warm"):
            for round_number in range(args.repeat):
                if not (work / f"{name}-{round_number}.json").is_file():
                    raise SystemExit(f"the {name} run of round {round_number + 1} wrote no report")
            reports[name] = json.loads((work / f"{name}-0.json").read_text())
        repeated_same = all(without_volatile(json.loads((work / f"{name}-{round_number}.json").read_text())) == without_volatile(reports[name])
                            for name in ("cold", "warm") for round_number in range(1, args.repeat))
        items = sum(len(entry["arms"]) for entry in reports["cold"]["details"])
        arms = sorted({arm for entry in reports["cold"]["details"] for arm in entry["arms"]})
        plugin_samples = len(reports["cold"]["details"])
        same_report = without_volatile(reports["cold"]) == without_volatile(reports["warm"]) and repeated_same
        same_rankings = rankings(reports["cold"]) == rankings(reports["warm"])
        same_metrics = metrics(reports["cold"]) == metrics(reports["warm"])
        cache_mb = sum(path.stat().st_size for path in (work / "cache").rglob("*") if path.is_file()) / MB

        evaluated: dict[str, int] = {}
        agree: dict[str, Agreement] = {}
        cold_records = plugin_records(reports["cold"])
        for ranker, arm in EVALUATOR_RANKERS.items():
            if ranker not in evaluator:
                continue
            out = work / f"arb-{ranker}"
            evaluated[ranker] = int(json.loads(Path(f"{out}-summary.json").read_text())["evaluated"])
            details = [json.loads(line) for line in Path(f"{out}-details.jsonl").read_text().splitlines()]
            agree[ranker] = top_agreement(details, cold_records, arm)

    # ------------------------------------------------------------------ print
    print(f"\nthis process: peak RSS {own_rss_mb():.0f} MB (a lower bound of every child's ru_maxrss)")
    print("\n== sizes")
    print(f"snapshots         {sizes['snapshots']}")
    print(f"rows              {sizes['rows']}  (file {sizes['file_rows']}, symbol {sizes['symbol_rows']}"
          + (f", other kinds {sizes['other_rows']}" if sizes["other_rows"] else "") + ")")
    print(f"symbol rows       {sizes['line_range_symbols']} of {sizes['symbol_rows']} are a line range of their file row's text")
    print(f"file-row text     {file_mb:.2f} MB (UTF-8)")
    print(f"chunk text        {chunk_mb:.2f} MB (UTF-8, every row)")
    print(f"distinct texts    {sizes['distinct_texts']} tokenized by the floor: {sizes['tokens']} tokens; {sizes['word_runs']} identifier runs")

    if args.repeat > 1:
        print(f"\n== rounds: {args.repeat}; each figure is the least CPU of its rounds (peak RSS: the most)")
        for name, child in (("start-up", startup), ("cold", cold), ("warm", warm), *((("cold, 2 rankers", same_cold),) if same_cold else ()),
                            *((f"evaluator {r}", c) for r, c in evaluator.items())):
            print(f"{name:<18}{', '.join(f'{cpu:.2f}' for cpu in child.all_cpu)} s cpu")
        floor_totals = [sum(run["parts"].values()) for run in floors]
        print(f"{'floor':<18}{', '.join(f'{total:.2f}' for total in floor_totals)} s cpu")

    print(f"\n== 1. cold plugin run ({len(arms)} arms: {', '.join(arms)}; {plugin_samples} samples)")
    print(f"cpu {cold.cpu:.2f} s   wall {cold.wall:.2f} s   peak RSS {cold.rss_mb:.0f} MB   items {items}   "
          f"cpu per item {cold.cpu / max(1, items) * 1000:.1f} ms")
    print(f"throughput        {chunk_mb / cold.wall:.2f} MB/s of chunk text (wall), {chunk_mb / cold.cpu:.2f} MB per CPU second")
    print(f"peak RSS          {cold.rss_mb:.0f} MB = {ratio(cold.rss_mb, file_mb)} the file-row text held once ({file_mb:.2f} MB)")

    print("\n== 2. warm plugin run")
    print(f"fill cache        cpu {fill.cpu:.2f} s   wall {fill.wall:.2f} s   (cache {cache_mb:.2f} MB on disk)")
    print(f"warm              cpu {warm.cpu:.2f} s   wall {warm.wall:.2f} s   peak RSS {warm.rss_mb:.0f} MB")
    print(f"cold/warm         {ratio(cold.cpu, warm.cpu)} CPU, {ratio(cold.wall, warm.wall)} wall")
    differ = "" if same_report else f" (differing sections: {', '.join(differing_keys(reports['cold'], reports['warm']))})"
    print(f"cold == warm      report without wall_ms/latency: {same_report}{differ}; rankings identical: {same_rankings}; "
          f"metrics identical: {same_metrics}")

    print("\n== 3. the bench's evaluator (eval-selective-baseline; whole processes, start-up and imports included, as the plugin's)")
    per_item = cold.cpu / items if items else 0.0
    compared_rows = evaluator_rows(evaluator, evaluated, same_cold, same_items, cold, items, len(arms)) if same_cold is not None else []
    if same_cold is None:
        print("skipped: no --bench-src")
    else:
        for ranker, child in evaluator.items():
            print(f"--ranker {ranker:<8} cpu {child.cpu:.2f} s   wall {child.wall:.2f} s   peak RSS {child.rss_mb:.0f} MB   "
                  f"evaluated {evaluated[ranker]}   top {TOP} equal to the cold run's {EVALUATOR_RANKERS[ranker]}: {agree[ranker]}")
        print(f"plugin cold, {', '.join(EVALUATOR_RANKERS.values())} only: wall {same_cold.wall:.2f} s   peak RSS {same_cold.rss_mb:.0f} MB")
        for name, value in compared_rows:
            print(f"{name}: {value}")

    print("\n== 4. floor (own child process, imports not counted)")
    for part, seconds in parts.items():
        print(f"{part:<18}{seconds:8.2f} s cpu")
    print(f"{'total':<18}{floor_cpu:8.2f} s cpu   cold/floor {ratio(cold.cpu, floor_cpu)}")
    print(f"start-up          {startup.cpu:.2f} s cpu (the same command with --co: imports, options, samples, collection)")
    print(f"cold - start-up   {cold.cpu - startup.cpu:.2f} s cpu   (cold - start-up)/floor {ratio(cold.cpu - startup.cpu, floor_cpu)}")

    rows_table: list[tuple[str, str]] = [
        ("snapshots / samples / items", f"{sizes['snapshots']} / {plugin_samples} / {items}"),
        ("rows (file / symbol / line-range symbols)", f"{sizes['rows']} ({sizes['file_rows']} / {sizes['symbol_rows']} / {sizes['line_range_symbols']})"),
        ("file-row text / chunk text", f"{file_mb:.2f} MB / {chunk_mb:.2f} MB"),
        ("cold: cpu / wall", f"{cold.cpu:.2f} s / {cold.wall:.2f} s"),
        ("cold: peak RSS", f"{cold.rss_mb:.0f} MB ({ratio(cold.rss_mb, file_mb)} file text)"),
        ("cold: MB/s of chunk text (wall)", f"{chunk_mb / cold.wall:.2f}"),
        ("fill: cpu / wall", f"{fill.cpu:.2f} s / {fill.wall:.2f} s"),
        ("warm: cpu / wall", f"{warm.cpu:.2f} s / {warm.wall:.2f} s"),
        ("cold/warm cpu", ratio(cold.cpu, warm.cpu)),
        ("cold == warm (report / rankings / metrics)", f"{same_report} / {same_rankings} / {same_metrics}"),
        ("floor cpu (read + check + tokenize + ident)", f"{floor_cpu:.2f} s ({' + '.join(f'{v:.2f}' for v in parts.values())})"),
        ("cold cpu / floor", ratio(cold.cpu, floor_cpu)),
        ("start-up cpu (--co)", f"{startup.cpu:.2f} s"),
        ("(cold - start-up) cpu / floor", ratio(cold.cpu - startup.cpu, floor_cpu)),
        (f"plugin cpu per arm-sample, {len(arms)}-arm cold run", f"{per_item * 1000:.1f} ms"),
    ]
    if same_cold is not None:
        rows_table += [*compared_rows, *((f"top {TOP} of {ranker} equal to {arm}'s (equal/compared)", str(agree[ranker]))
                                         for ranker, arm in EVALUATOR_RANKERS.items())]
    else:
        rows_table.append(("evaluator", "not run (no --bench-src)"))
    width = max(len(name) for name, _ in rows_table)
    print(f"\n| {'figure':<{width}} | value |")
    print(f"|{'-' * (width + 2)}|-------|")
    for name, value in rows_table:
        print(f"| {name:<{width}} | {value} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
