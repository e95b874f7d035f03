"""What `benchmarks/release.py` and `benchmarks/leaderboard.py` share: timed child processes, the
samples and snapshots they choose, the read+tokenize floor, the corpora laid out for each side, the
rankings read back from reports, the top-20 agreement with the bench, and the common options.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pytest_retrieval_bench.corpus.chunks import find_chunk_file, repo_slug
from pytest_retrieval_bench.files.jsonl import iter_sample_lines, open_zstd
MB = 1_000_000
TOP = 20
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
    """The run of least CPU (interference only ever adds time), its CPU and wall both from that one
    round, with the peak RSS of them all and every run's CPU kept for printing."""
    best = min(runs, key=lambda child: child.cpu)
    return Child(best.cpu, best.wall, max(child.rss_mb for child in runs), best.stdout, tuple(child.cpu for child in runs))


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



def chosen_snapshots(args: argparse.Namespace, out: Path) -> list[tuple[str, str, Path]]:
    """`select_samples` over the script's --samples, --corpus and --max-snapshots, said in one line;
    the script stops when no sample names a snapshot of the corpus."""
    snapshots, kept, _ = select_samples(args.samples.resolve(), args.corpus.resolve(), args.max_snapshots, out)
    if not snapshots:
        raise SystemExit("no sample names a snapshot of the corpus")
    print(f"{len(snapshots)} snapshots, {kept} samples")
    return snapshots

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


@dataclass(frozen=True)
class PluginRecord:
    """What the agreement needs of one plugin record: its ranking, its error, its sample's given files."""

    ranking: tuple[str, ...]
    error: str | None
    given: frozenset[str]


def plugin_records(report: dict[str, Any]) -> dict[tuple[str, str], PluginRecord]:
    """Every (sample id, arm) record of a plugin report."""
    return {(entry["id"], arm): PluginRecord(tuple(record.get("ranking") or ()), record.get("error"), frozenset(entry.get("given") or ()))
            for entry in report["details"] for arm, record in entry["arms"].items()}


@dataclass(frozen=True)
class Agreement:
    """How the bench's top-TOP lists compare with the plugin's rankings of one arm, each bench list
    counted once: equal, different, the plugin's record an error, or no plugin record at all."""

    agree: int = 0
    differ: int = 0
    errored: int = 0
    missing: int = 0

    @property
    def compared(self) -> int:
        return self.agree + self.differ + self.errored + self.missing

    def __str__(self) -> str:
        return f"{self.agree}/{self.compared} (differ {self.differ}, errored {self.errored}, missing {self.missing})"


def same_top(bench_top: list[str], ours: tuple[str, ...] | list[str], given: frozenset[str] | set[str]) -> bool:
    """Whether the bench's top-TOP list is the plugin's ranking, the given files taken out of the bench's list
    (the plugin removes them from every ranking, the bench does not).

    Every other path of the bench's list must be in the plugin's ranking, in the same place. Removing a given
    file lets the bench's list stop early (its TOP+1st file is unknown), so the plugin's ranking may go on past
    it; a bench list shorter than TOP ranked every file the bench had, so the plugin's must end there too.
    Only the plugin's first TOP paths count (a run with a larger --bench-limit ranks more)."""
    full = list(bench_top)[:TOP]
    theirs = [path for path in full if path not in given]
    mine = list(ours)[:TOP]
    if mine[: len(theirs)] != theirs:
        return False
    return len(mine) == len(theirs) or (len(full) == TOP and len(theirs) < TOP)


def top_agreement(details: list[dict[str, Any]], records: dict[tuple[str, str], PluginRecord], arm: str) -> Agreement:
    """The bench's top-TOP file lists (one per line of its details file) against the plugin's records of `arm`.

    A plugin record that is an error (its ranking is empty) or that does not exist is a disagreement, counted
    apart from the rankings that differ."""
    counts = {"agree": 0, "differ": 0, "errored": 0, "missing": 0}
    for detail in details:
        record = records.get((detail["sample_id"], arm))
        if record is None:
            counts["missing"] += 1
        elif record.error is not None:
            counts["errored"] += 1
        elif same_top(list(detail.get("top_files") or []), record.ranking, record.given):
            counts["agree"] += 1
        else:
            counts["differ"] += 1
    return Agreement(**counts)


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


def parsed_arguments(doc: str | None, argv: list[str] | None, bench_module: str, bench_src_required: bool,
                     floor_of: Callable[[list[Path]], dict[str, Any]]) -> argparse.Namespace | None:
    """The checked options of a benchmark; None after its child mode (printing `floor_of` the listed
    chunk files) has run. `bench_module` is the bench's module a `--bench-src` checkout must hold.
    """
    parser = arguments(doc, bench_src_required)
    args = parser.parse_args(argv)
    if args.floor_of is not None:
        print(json.dumps(floor_of([Path(path) for path in json.loads(args.floor_of.read_text())])))
        return None
    if args.max_snapshots is not None and args.max_snapshots < 1:
        parser.error("--max-snapshots must be at least 1")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    for what, path in (("--samples", args.samples), ("--corpus", args.corpus)):
        if not path.exists():
            parser.error(f"{what} {path} does not exist")
    if args.bench_src is not None:
        if not (args.bench_src.resolve() / "src" / "agent_retrieval_bench" / bench_module).is_file():
            parser.error(f"--bench-src: no src/agent_retrieval_bench/{bench_module} under {args.bench_src}")
        if shutil.which(args.bench_python) is None:
            parser.error(f"--bench-python {args.bench_python} is not an executable")
    return args
