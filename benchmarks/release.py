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
   PYTHONPATH, run by `--bench-python`): CPU, and CPU per arm-sample beside the cold plugin
   run's. Its `--corpus` is a manifest written in the temporary directory with absolute
   `chunks_path`s (it opens them from its working directory and reads plain JSONL only, so a
   `.zst` chunk file is decompressed there first, untimed); `--no-keep-list`, so its default
   keep list is not picked up from the working directory. It leaves out samples whose query
   leaks the fix; its own `evaluated` count is used. As a side figure, how many of its top-20
   file lists equal the plugin's `arb-lexical` / `arb-bm25` rankings (with the files the plugin
   removes as given, which the evaluator keeps, taken out of its list). Skipped without
   `--bench-src`;
4. the floor, in a child process of its own so imports are not counted: read every chunk file
   once (orjson over each line); find the symbol rows whose text is a line range of their file
   row's text; tokenize every distinct text once with `bench_tokens` (file rows, and symbol rows
   that are not a line range); one identifier-run pass over the file rows' text (`word_run_bytes`, the faster of the two ways the project has). Each part's CPU,
   the total, and cold CPU / floor;
5. sizes: snapshots, rows (file, symbol, other), MB of file-row text and of all rows' text
   ("chunk text", what the evaluator ranks), symbol rows that are line ranges, and the cold
   run's MB/s over the chunk text;
6. the cold run's peak RSS in MB and as a multiple of the file-row text held once (UTF-8).

With `--repeat N` every timed run (floor, start-up, cold, warm, each evaluator ranker) runs once
per round, N rounds one after another, and each figure is the least CPU of its rounds: on a
shared machine a slow spell adds time, never removes it, and with rounds it cannot fall on one
side of a ratio only. The cache is filled once; every round's reports must agree.

It prints figures, a table at the end, and asserts nothing. A child that fails makes it print
the tail of its output and exit non-zero.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_retrieval_bench.corpus.chunks import find_chunk_file, repo_slug
from pytest_retrieval_bench.samples.reader import iter_sample_lines, open_zstd

MB = 1_000_000
TOP = 20
DEFAULT_ARMS = ("grep", "grep-ident", "bm25:all", "bm25:ident", "arb-lexical", "arb-bm25")
EVALUATOR_RANKERS = {"lexical": "arb-lexical", "bm25": "arb-bm25"}  # the bench's ranker -> the plugin arm that reimplements it


# --------------------------------------------------------------------------- child processes


@dataclass
class Child:
    """What one finished child process cost (its own rusage, from os.wait4)."""

    cpu: float
    wall: float
    rss_mb: float
    stdout: str
    #: every round's CPU seconds, when this is the fastest of several runs
    all_cpu: tuple[float, ...] = ()


def fastest(runs: list[Child]) -> Child:
    """The run of least CPU (interference only ever adds time), with the peak RSS of them all and
    every run's CPU kept for printing."""
    best = min(runs, key=lambda child: child.cpu)
    return Child(best.cpu, min(child.wall for child in runs), max(child.rss_mb for child in runs), best.stdout,
                 tuple(child.cpu for child in runs))


def run_child(label: str, command: list[str], cwd: Path, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)) -> Child:
    """Run one child to completion, output to files (no pipe can fill), and reap it with wait4 so
    its CPU and peak RSS are its own, not a delta that another child could blur."""
    out_path, err_path = cwd / f"{label}.stdout", cwd / f"{label}.stderr"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        started = time.perf_counter()
        try:
            process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err)
        except OSError as error:
            sys.stderr.write(f"\n{label} could not start: {' '.join(command)}: {error}\n")
            raise SystemExit(1) from error
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    stdout = out_path.read_text(errors="replace")
    if process.returncode not in ok:
        stderr = err_path.read_text(errors="replace")
        sys.stderr.write(f"\n{label} failed (exit {process.returncode}): {' '.join(command)}\n--- stdout (tail)\n{stdout[-3000:]}\n"
                         f"--- stderr (tail)\n{stderr[-3000:]}\n")
        raise SystemExit(1)
    rss = usage.ru_maxrss / 1024 if sys.platform != "darwin" else usage.ru_maxrss / (1024 * 1024)  # KiB on Linux, bytes on macOS
    return Child(usage.ru_utime + usage.ru_stime, wall, rss, stdout)


def own_rss_mb() -> float:
    """This process's peak RSS: a bound below every child's ru_maxrss, printed to show it is small."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / (1024 * 1024)


# --------------------------------------------------------------------------- the floor (child)


def iter_raw_lines(path: Path) -> Any:
    """The chunk file's lines as bytes, streamed (zstd as the plugin reads it)."""
    with path.open("rb") as raw:
        if path.name.endswith(".zst"):
            with open_zstd(raw) as stream:
                yield from stream
        else:
            yield from raw


def floor(chunk_files: list[Path]) -> dict[str, Any]:
    """Child mode: the least work any ranker of these chunk files must do, part by part, one
    snapshot at a time (as the plugin holds one at a time); sizes are counted afterwards, untimed."""
    import orjson

    from pytest_retrieval_bench.index.tokens import bench_tokens, word_run_bytes

    clock = time.process_time
    parts = {"read": 0.0, "line-range check": 0.0, "tokenize": 0.0, "identifier runs": 0.0}
    sizes = {"snapshots": 0, "rows": 0, "file_rows": 0, "symbol_rows": 0, "other_rows": 0, "line_range_symbols": 0,
             "distinct_texts": 0, "tokens": 0, "word_runs": 0, "file_text_bytes": 0, "chunk_text_bytes": 0}
    for path in chunk_files:
        started = clock()
        rows = [orjson.loads(line) for line in iter_raw_lines(path) if line.strip()]
        checked = clock()
        parts["read"] += checked - started

        files = {row["path"]: row["text"] for row in rows if row.get("kind") == "file" and isinstance(row.get("text"), str)}
        lines: dict[str, list[str]] = {}
        distinct = dict.fromkeys(files.values())
        ranged = 0
        for row in rows:
            if row.get("kind") == "file":
                continue
            text, file_text = row.get("text"), files.get(row.get("path"))
            if not isinstance(text, str):
                continue
            start, end = row.get("start_line"), row.get("end_line")
            if row.get("kind") == "symbol" and file_text is not None and isinstance(start, int) and isinstance(end, int) and start >= 1:
                split = lines.get(row["path"])
                if split is None:
                    split = lines[row["path"]] = file_text.split("\n")
                if "\n".join(split[start - 1 : end]).strip() == text:
                    ranged += 1
                    continue
            distinct[text] = None
        del lines
        tokenizing = clock()
        parts["line-range check"] += tokenizing - checked

        tokens = sum(len(bench_tokens(text)) for text in distinct)
        running = clock()
        parts["tokenize"] += running - tokenizing

        runs = sum(len(word_run_bytes(text)) for text in files.values())  # the fastest identifier-run pass there is
        parts["identifier runs"] += clock() - running

        kinds = [row.get("kind") for row in rows]
        sizes["snapshots"] += 1
        sizes["rows"] += len(rows)
        sizes["file_rows"] += kinds.count("file")
        sizes["symbol_rows"] += kinds.count("symbol")
        sizes["other_rows"] += len(rows) - kinds.count("file") - kinds.count("symbol")
        sizes["line_range_symbols"] += ranged
        sizes["distinct_texts"] += len(distinct)
        sizes["tokens"] += tokens
        sizes["word_runs"] += runs
        sizes["file_text_bytes"] += sum(len(text.encode("utf-8", errors="surrogatepass")) for text in files.values())
        sizes["chunk_text_bytes"] += sum(len(row["text"].encode("utf-8", errors="surrogatepass")) for row in rows if isinstance(row.get("text"), str))
        del rows, files, distinct
    return {"parts": parts, "sizes": sizes}


# --------------------------------------------------------------------------- inputs


def select_samples(samples: Path, corpus: Path, max_snapshots: int | None, out: Path) -> tuple[list[tuple[str, str, Path]], int, dict[str, int]]:
    """Write the samples of the chosen snapshots to `out`: (snapshots with their chunk files, samples kept, left out by reason)."""
    chunk_files: dict[tuple[str, str], Path | None] = {}
    chosen: list[tuple[str, str]] = []
    kept = 0
    left_out = {"snapshot not in corpus": 0, "snapshot beyond --max-snapshots": 0, "no repo/base_commit": 0}
    with out.open("wb") as written:
        for line in iter_sample_lines(samples):
            if not line.text.strip():
                continue
            sample = json.loads(line.text)
            repo, commit = sample.get("repo"), sample.get("base_commit")
            if not isinstance(repo, str) or not isinstance(commit, str):
                left_out["no repo/base_commit"] += 1
                continue
            key = (repo, commit)
            if key not in chunk_files:
                chunk_files[key] = find_chunk_file(corpus, repo, commit)
            if chunk_files[key] is None:
                left_out["snapshot not in corpus"] += 1
                continue
            if key not in chosen:
                if max_snapshots is not None and len(chosen) >= max_snapshots:
                    left_out["snapshot beyond --max-snapshots"] += 1
                    continue
                chosen.append(key)
            written.write(line.text.rstrip(b"\r\n") + b"\n")
            kept += 1
    return [(repo, commit, chunk_files[(repo, commit)]) for repo, commit in chosen], kept, left_out  # type: ignore[misc]


def plugin_corpus(snapshots: list[tuple[str, str, Path]], directory: Path) -> Path:
    """A corpus directory of the chosen snapshots only (links to their chunk files), as the
    evaluator's manifest names only them: the plugin's registration hashes every chunk file of
    its corpus directory, and the others are no part of the work compared."""
    for repo, commit, path in snapshots:
        link = directory / repo_slug(repo) / f"{commit}{'.chunks.jsonl.zst' if path.name.endswith('.zst') else '.chunks.jsonl'}"
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(path.resolve())
    return directory


def evaluator_corpus(snapshots: list[tuple[str, str, Path]], directory: Path) -> None:
    """A manifest the bench's evaluator can open from any working directory: absolute plain-JSONL paths."""
    directory.mkdir()
    with (directory / "corpus_manifest.jsonl").open("w") as manifest:
        for repo, commit, path in snapshots:
            if path.name.endswith(".zst"):
                plain = directory / repo_slug(repo) / f"{commit}.chunks.jsonl"
                plain.parent.mkdir(parents=True, exist_ok=True)
                with path.open("rb") as raw, open_zstd(raw) as stream, plain.open("wb") as target:
                    shutil.copyfileobj(stream, target, 1 << 20)
                path = plain
            manifest.write(json.dumps({"repo": repo, "base_commit": commit, "status": "ok", "chunks_path": str(path.resolve())}) + "\n")


# --------------------------------------------------------------------------- reports


def without_volatile(value: Any) -> Any:
    """A report without what may differ between two runs of the same rows: `wall_ms` and `latency`."""
    if isinstance(value, dict):
        return {key: without_volatile(item) for key, item in value.items() if key not in ("wall_ms", "latency")}
    if isinstance(value, list):
        return [without_volatile(item) for item in value]
    return value


def rankings(report: dict[str, Any]) -> dict[tuple[str, str], Any]:
    return {(entry["id"], arm): record.get("ranking") for entry in report["details"] for arm, record in entry["arms"].items()}


def metrics(report: dict[str, Any]) -> dict[tuple[str, str], Any]:
    return {(entry["id"], arm): record.get("metrics") for entry in report["details"] for arm, record in entry["arms"].items()}


def differing_keys(cold: dict[str, Any], warm: dict[str, Any]) -> list[str]:
    return sorted(key for key in set(cold) | set(warm) if without_volatile(cold.get(key)) != without_volatile(warm.get(key)))


def top_agreement(details: list[dict[str, Any]], plugin_rankings: dict[tuple[str, str], Any], arm: str) -> tuple[int, int]:
    """(equal, compared): how many of the bench's top-TOP file lists equal the plugin's ranking of `arm`.

    The plugin removes a sample's given files (a comment2context row's reviewed file) from every
    ranking, the bench does not: they are taken out of its list before comparing."""
    same = compared = 0
    for detail in details:
        ours = plugin_rankings.get((detail["sample_id"], arm))
        if ours is not None:
            compared += 1
            theirs = [path for path in list(detail.get("top_files") or [])[:TOP] if path in set(ours)]
            same += list(ours[: len(theirs)]) == theirs
    return same, compared


# --------------------------------------------------------------------------- main


def ratio(numerator: float, denominator: float) -> str:
    return f"{numerator / denominator:.2f}x" if denominator > 0 else "n/a"


def arguments(doc: str | None, bench_src_required: bool) -> argparse.ArgumentParser:
    """The options of a benchmark that runs the plugin and the bench's commands on a release corpus."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--samples", type=Path, required=True, help="ARB sample rows (.jsonl, .jsonl.zst or a release .tar.zst)")
    parser.add_argument("--corpus", type=Path, required=True, help="a release corpus directory made by the bench's builder")
    parser.add_argument("--bench-src", type=Path, required=bench_src_required, help="a checkout of eyuansu62/agent-retrieval-bench, whose commands are run")
    parser.add_argument("--bench-python", default=sys.executable, help="the Python that runs the bench's commands (default: this one)")
    parser.add_argument("--max-snapshots", type=int, help="only the samples of the first N snapshots named by the samples")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of every timed run; each figure is the least CPU of its rounds")
    parser.add_argument("--floor-of", type=Path, help=argparse.SUPPRESS)  # child mode: a JSON list of chunk files
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__, bench_src_required=False)
    args = parser.parse_args(argv)
    if args.floor_of is not None:
        print(json.dumps(floor([Path(path) for path in json.loads(args.floor_of.read_text())])))
        return 0
    if args.max_snapshots is not None and args.max_snapshots < 1:
        parser.error("--max-snapshots must be at least 1")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    for what, path in (("--samples", args.samples), ("--corpus", args.corpus)):
        if not path.exists():
            parser.error(f"{what} {path} does not exist")
    bench_package = args.bench_src.resolve() / "src" if args.bench_src else None
    if bench_package is not None and not (bench_package / "agent_retrieval_bench" / "selective_eval.py").is_file():
        parser.error(f"--bench-src: no src/agent_retrieval_bench/selective_eval.py under {args.bench_src}")
    if bench_package is not None and shutil.which(args.bench_python) is None:
        parser.error(f"--bench-python {args.bench_python} is not an executable")
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
            # 3: the bench's evaluator
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
        agree: dict[str, tuple[int, int]] = {}
        plugin_rankings = rankings(reports["cold"])
        for ranker, arm in EVALUATOR_RANKERS.items():
            if ranker not in evaluator:
                continue
            out = work / f"arb-{ranker}"
            evaluated[ranker] = int(json.loads(Path(f"{out}-summary.json").read_text())["evaluated"])
            details = [json.loads(line) for line in Path(f"{out}-details.jsonl").read_text().splitlines()]
            agree[ranker] = top_agreement(details, plugin_rankings, arm)

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
        for name, child in (("start-up", startup), ("cold", cold), ("warm", warm), *((f"evaluator {r}", c) for r, c in evaluator.items())):
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

    print("\n== 3. the bench's evaluator (eval-selective-baseline)")
    per_item = cold.cpu / items if items else 0.0
    evaluator_cpu = sum(child.cpu for child in evaluator.values())
    evaluator_items = sum(evaluated.values())
    if not evaluator:
        print("skipped: no --bench-src")
    else:
        for ranker, child in evaluator.items():
            same, compared = agree[ranker]
            print(f"--ranker {ranker:<8} cpu {child.cpu:.2f} s   wall {child.wall:.2f} s   peak RSS {child.rss_mb:.0f} MB   "
                  f"evaluated {evaluated[ranker]}   top {TOP} equal to {EVALUATOR_RANKERS[ranker]}'s: {same}/{compared}")
        per_theirs = evaluator_cpu / evaluator_items if evaluator_items else 0.0
        print(f"per arm-sample    evaluator {per_theirs * 1000:.1f} ms   plugin cold {per_item * 1000:.1f} ms   "
              f"evaluator/plugin {ratio(per_theirs, per_item)}   (both whole processes, start-up and imports included)")

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
        ("plugin cpu per arm-sample", f"{per_item * 1000:.1f} ms"),
    ]
    if evaluator:
        rows_table += [
            ("evaluator cpu (lexical + bm25)", " + ".join(f"{child.cpu:.2f}" for child in evaluator.values()) + f" = {evaluator_cpu:.2f} s"),
            ("evaluator arm-samples", str(evaluator_items)),
            ("evaluator cpu per arm-sample", f"{evaluator_cpu / max(1, evaluator_items) * 1000:.1f} ms"),
            ("evaluator/plugin per arm-sample", ratio(evaluator_cpu / max(1, evaluator_items), per_item)),
        ]
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
