"""Parity and speed of the built-in `arb-closed-tool` agent beside the bench's `eval-closed-tool`, in one run.

Run it from the project root, in an environment where the package is installed, on a release
corpus directory and an ARB samples file:

    python benchmarks/agents.py --corpus CORPUS_DIR --samples SAMPLES.jsonl --bench-src CHECKOUT [--json OUT]

`--bench-src` is a checkout of eyuansu62/agent-retrieval-bench (its package, under `src/`, is put on
`sys.path`). Budgets are the bench's defaults on both sides.

1. The bench: `closed_tool_eval.evaluate_closed_tool_grep` (what `eval-closed-tool` runs) on the
   samples, in this process, its CPU and wall time taken around the call, and the part spent in
   its per-sample policy (`run_closed_tool_sample`, clocked by wrapping it for the call).
2. The plugin: each snapshot the bench evaluated read once as the plugin reads a release
   (`read_chunk_file`), then for each row the bench evaluated, `arb-closed-tool` in a fresh
   `ClosedToolEnvironment` and `scoring.trajectory.closed_tool_detail`; CPU and wall time for the
   reading and for the agent with its scoring, apart.
3. Parity: the files each side shows the agent (the bench's `load_file_texts` of the chunk file
   against the plugin's snapshot texts, read again after the clocks stop); every detail row compared whole (`closed_tool.latency_seconds` left out, a clock
   reading), the differing fields counted by name; and the bench's summary `metrics` and
   `closed_tool_metrics` against the plugin's aggregates of its rows.

   This is a cold start: each snapshot's files as a run reads them, nothing derived yet, so its
   first rows pay for lowering its files, counting tokens and so on (a snapshot grepped often
   builds its `GrepIndex` on the way, `tool_files.INDEX_AFTER_SCANS`).
3b. Prepared: each snapshot's files again, with no cache, and its `GrepIndex` built at once
   (`ToolFiles.prepare_grep`, clocked apart: in a run, once per snapshot, shared by all its agent
   items); then every row again, clocked, and compared with the bench's rows as in 3.

4. With `--repeat R`, the agents alone once more, interleaved row by row so that both sides meet
   the same machine load: the bench's `run_closed_tool_sample` on its `load_file_texts` files,
   then `arb-closed-tool` and its scoring, cold and prepared, R rounds; each round starts from
   files with no cache (every snapshot's first row pays for lowering its files and counting their
   tokens; the prepared side is given the index built in 3b), and each row keeps its fastest CPU
   time per side.

4b. With `--command-agent`, the environment's cost per tool call for a command agent, beside the
   program's own time (`agent_calls.py`): every row replayed through `CommandAgentArm`, on fresh
   files (`cold_...`: each snapshot's first greps lowercase its files) and on fresh files sharing
   the index built in 3b (`prepared_...`).

4c. With `--largest-only cold|prepared [--repo OWNER/NAME]`, nothing of the above: the rows of the
   largest snapshot (by chunk file size; of that repository's) only, read, (prepared,) run by `arb-closed-tool`, and the process's peak RSS, for the memory
   the environment adds (run each mode in a process of its own).

5. With `--report REPORT` (a report of `pytest --bench-arms=arb-closed-tool,...` on the same samples
   and corpus), the detail row each `arb-closed-tool` record holds, recomputed from the record
   (`report.trajectory_section.detail_row`), against the bench's row; rows the report lacks or
   the bench skipped are counted apart.
5b. With `--pytest-runs`, three whole pytest runs of `arb-closed-tool` on the samples and corpus,
   each in a process of its own (`agent_pytest_runs.py`): without a cache, then cold and warm on
   one fresh cache directory (the warm run loads each snapshot's grep index the cold one built
   and stored); their CPU and wall time, whether their reports equal the cold one, and the warm
   report's rows against the bench's as in 5 (unless `--report` names another report).

Printed: rows, identical rows, mismatching fields, the summaries' agreement, and the CPU ratios
(bench over plugin) for the whole evaluation and for the agent alone, cold and prepared, with
the agent's mean CPU per tool call, and the machine's load average when the run ended (the
figures are comparable within a run only). It prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from pytest_retrieval_bench.arms.agents import scripted
from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles
from pytest_retrieval_bench.corpus.chunks import find_chunk_file, read_chunk_file
from pytest_retrieval_bench.report.build import rounded
from pytest_retrieval_bench.samples.arb import query_text_for_eval, target_gold_files
from pytest_retrieval_bench.scoring.budgets import TokenCounts
from pytest_retrieval_bench.scoring.trajectory import closed_tool_detail, summarize_closed_tool, summarize_trajectory_details


class Clock:
    """CPU and wall seconds summed over the spans it times."""

    def __init__(self) -> None:
        self.cpu = self.wall = 0.0

    def time(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            self.cpu += time.process_time() - cpu
            self.wall += time.perf_counter() - wall


def run_bench(samples: Path, corpus: Path) -> tuple[dict[str, Any], list[dict[str, Any]], Clock, Clock]:
    from agent_retrieval_bench import closed_tool_eval

    policy_clock, total_clock = Clock(), Clock()
    original = closed_tool_eval.run_closed_tool_sample
    closed_tool_eval.run_closed_tool_sample = lambda **kwargs: policy_clock.time(original, **kwargs)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            details_path = Path(scratch) / "details.jsonl"
            summary = total_clock.time(closed_tool_eval.evaluate_closed_tool_grep, sample_paths=[samples], corpus_dir=corpus,
                                       out_path=Path(scratch) / "summary.json", details_path=details_path,
                                       markdown_out_path=Path(scratch) / "summary.md", force=True)
            details = [json.loads(line) for line in details_path.read_text(encoding="utf-8").splitlines()]
    finally:
        closed_tool_eval.run_closed_tool_sample = original
    return summary, details, total_clock, policy_clock


def differing_fields(ours: dict[str, Any], theirs: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted names of the fields whose values differ (nested objects followed)."""
    names = []
    for key in sorted(set(ours) | set(theirs)):
        mine, other = ours.get(key, "<missing>"), theirs.get(key, "<missing>")
        if isinstance(mine, dict) and isinstance(other, dict):
            names.extend(differing_fields(mine, other, f"{prefix}{key}."))
        elif mine != other:
            names.append(f"{prefix}{key}")
    return names


def fresh_files(snapshot: Any, prepared: ToolFiles | None = None) -> ToolFiles:
    """A snapshot's files with nothing derived yet (token counts neither), but the index of `prepared`."""
    return ToolFiles(snapshot.texts, TokenCounts(snapshot.texts.get).content, grep_index=prepared.prepare_grep() if prepared else None)


def interleaved(bench_details: list[dict[str, Any]], rows: dict[str, Any], snapshots: dict[tuple[str, str], Any], manifest: dict[Any, Path],
                repeat: int, prepared: dict[tuple[str, str], ToolFiles]) -> dict[str, float]:
    """Fastest CPU seconds per row of each side's agent, summed, over `repeat` rounds; the plugin
    cold and with the snapshots' grep indexes built."""
    from agent_retrieval_bench import baseline as bench_baseline
    from agent_retrieval_bench import closed_tool_eval

    bench_files = {key: closed_tool_eval.load_file_texts(manifest[key]) for key in snapshots}
    best_bench = [float("inf")] * len(bench_details)
    best_plugin = [float("inf")] * len(bench_details)
    best_prepared = [float("inf")] * len(bench_details)
    for _ in range(repeat):
        fresh = {key: fresh_files(snapshot) for key, snapshot in snapshots.items()}
        fresh_prepared = {key: fresh_files(snapshot, prepared[key]) for key, snapshot in snapshots.items()}
        for index, expected in enumerate(bench_details):
            sample = rows[expected["sample_id"]]
            key = (sample["repo"], sample["base_commit"])
            gold = bench_baseline.target_gold_files(sample)
            clock = Clock()
            clock.time(closed_tool_eval.run_closed_tool_sample, sample=sample, gold_files=gold, query_text=bench_baseline.query_text_for_eval(sample),
                       files=bench_files[key], max_tool_calls=16, max_read_tokens=8_000, max_read_tokens_per_file=1_200, max_grep_calls=8,
                       final_k=3, grep_top_k=12)
            best_bench[index] = min(best_bench[index], clock.cpu)
            for files, best in ((fresh[key], best_plugin), (fresh_prepared[key], best_prepared)):
                clock = Clock()
                clock.time(lambda: closed_tool_detail(sample, gold, *_episode_parts(sample, files)))
                best[index] = min(best[index], clock.cpu)
    return {"interleaved_bench_cpu_seconds": sum(best_bench), "interleaved_plugin_cpu_seconds": sum(best_plugin),
            "interleaved_cpu_ratio": sum(best_bench) / max(1e-9, sum(best_plugin)),
            "interleaved_prepared_cpu_seconds": sum(best_prepared),
            "interleaved_prepared_cpu_ratio": sum(best_bench) / max(1e-9, sum(best_prepared))}


def _episode(sample: dict[str, Any], tool_files: ToolFiles) -> Any:
    return scripted.run(query_text_for_eval(sample["query"]), tool_files, scripted.environment(tool_files))


def _episode_parts(sample: dict[str, Any], tool_files: ToolFiles) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    episode = _episode(sample, tool_files)
    return episode.steps, scripted.closed_tool_fields(episode)


def agent_rows(bench_details: list[dict[str, Any]], rows: dict[str, Any], files_of: Callable[[dict[str, Any]], ToolFiles],
               clock: Clock) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Counter[str], int]:
    """`arb-closed-tool` and its scoring on each row the bench evaluated (clocked; the files made
    by `files_of` outside the clock), each detail row against the bench's: the rows, the
    mismatches, the differing fields, the tool calls."""
    details, mismatches, fields, tool_calls = [], [], Counter(), 0
    for expected in bench_details:
        sample = rows[expected["sample_id"]]
        tool_files = files_of(sample)
        detail = clock.time(lambda: closed_tool_detail(sample, target_gold_files(sample["task_type"], sample["gold"]),
                                                       *_episode_parts(sample, tool_files)))
        details.append(detail)
        tool_calls += detail["closed_tool"]["tool_calls"]
        expected["closed_tool"].pop("latency_seconds", None)
        names = differing_fields(detail, expected)
        if names:
            fields.update(names)
            mismatches.append({"sample_id": expected["sample_id"], "fields": names})
    return details, mismatches, fields, tool_calls


def largest_only(corpus: Path, samples: Path, mode: str, repo: str | None) -> int:
    """The largest snapshot's rows (of `repo`'s, when given; by chunk file size) by `arb-closed-tool`,
    cold or prepared, and the peak RSS."""
    from peak_rss import peak_rss_mb

    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if repo is None or json.loads(line)["repo"] == repo]
    chunk_files = {(row["repo"], row["base_commit"]): find_chunk_file(corpus, row["repo"], row["base_commit"]) for row in rows}
    key = max((key for key in chunk_files if chunk_files[key] is not None), key=lambda key: chunk_files[key].stat().st_size)
    snapshot = read_chunk_file(chunk_files[key], *key)
    read_peak, text_mb = peak_rss_mb(), sum(map(len, snapshot.texts.values())) / 1e6
    tool_files, cpu = ToolFiles.of_snapshot(snapshot), time.process_time()
    if mode == "prepared":
        tool_files.prepare_grep()
    prepare_cpu = time.process_time() - cpu
    cpu, calls = time.process_time(), 0
    for row in rows:
        if (row["repo"], row["base_commit"]) == key:
            calls += _episode(row, tool_files).tool_calls
    print(f"{key[0]}@{key[1][:12]}: {len(snapshot.texts)} files, {text_mb:.1f} MB of text; {mode}: prepare {prepare_cpu:.3f} s CPU, "
          f"agent {time.process_time() - cpu:.3f} s CPU for {calls} tool calls; peak RSS {peak_rss_mb():.1f} MB (after reading {read_peak:.1f} MB)")
    return 0


def report_parity(report_path: Path, bench_details: list[dict[str, Any]]) -> dict[str, Any]:
    """The plugin run's `arb-closed-tool` rows (from its report) against the bench's rows."""
    from pytest_retrieval_bench.report.merge import read_report
    from pytest_retrieval_bench.report.trajectory_section import detail_row

    report = read_report(report_path, sections=("trajectory",))
    entries = {entry["id"]: entry for entry in report["details"] if "arb-closed-tool" in entry.get("arms", {})}
    mismatches, fields = [], Counter()
    for expected in bench_details:
        entry = entries.get(expected["sample_id"])
        if entry is None:
            mismatches.append({"sample_id": expected["sample_id"], "fields": ["<no record in the report>"]})
            continue
        names = differing_fields(detail_row(entry, entry["arms"]["arb-closed-tool"]), expected)
        if names:
            fields.update(names)
            mismatches.append({"sample_id": expected["sample_id"], "fields": names})
    section = (report.get("trajectory") or {}).get("arb-closed-tool", {})
    return {"report_rows": sum(1 for expected in bench_details if expected["sample_id"] in entries),
            "report_rows_not_in_bench": len(set(entries) - {expected["sample_id"] for expected in bench_details}),
            "report_identical_rows": len(bench_details) - len(mismatches), "report_mismatching_rows": len(mismatches),
            "report_mismatching_fields": dict(fields), "report_mismatches": mismatches, "report_section": section}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--samples", type=Path, required=True)
    parser.add_argument("--bench-src", type=Path, required=True)
    parser.add_argument("--json", type=Path, help="also write the figures and every mismatch here")
    parser.add_argument("--repeat", type=int, default=0, help="rounds of the interleaved agent timing (0: none)")
    parser.add_argument("--report", type=Path, help="also compare the arb-closed-tool records of this plugin report with the bench's rows")
    parser.add_argument("--pytest-runs", action="store_true", help="also time pytest runs of arb-closed-tool: without a cache, cold and warm")
    parser.add_argument("--command-agent", action="store_true", help="also measure the environment's cost per call for a command agent")
    parser.add_argument("--largest-only", choices=("cold", "prepared"), help="only the largest snapshot's rows, and the peak RSS")
    parser.add_argument("--repo", help="with --largest-only: the largest snapshot of this repository (owner/name)")
    args = parser.parse_args(argv)
    if args.largest_only:
        return largest_only(args.corpus, args.samples, args.largest_only, args.repo)
    sys.path.insert(0, str(args.bench_src / "src"))

    summary, bench_details, bench_total, bench_policy = run_bench(args.samples, args.corpus)

    rows = {row["id"]: row for row in map(json.loads, args.samples.read_text(encoding="utf-8").splitlines())}
    read_clock, agent_clock = Clock(), Clock()
    files: dict[tuple[str, str], ToolFiles] = {}
    snapshots: dict[tuple[str, str], Any] = {}

    def cold_files(sample: dict[str, Any]) -> ToolFiles:
        key = (sample["repo"], sample["base_commit"])
        if key not in files:
            chunk_file = find_chunk_file(args.corpus, *key)
            if chunk_file is None:
                raise SystemExit(f"{args.corpus}: no chunk file for {key[0]}@{key[1]}")
            snapshots[key] = read_clock.time(read_chunk_file, chunk_file, *key)
            files[key] = read_clock.time(ToolFiles.of_snapshot, snapshots[key])
        return files[key]

    details, mismatches, fields, tool_calls = agent_rows(bench_details, rows, cold_files, agent_clock)

    prepare_clock, prepared_clock, prepared = Clock(), Clock(), {}
    for key, snapshot in snapshots.items():
        prepared[key] = fresh_files(snapshot)
        prepare_clock.time(prepared[key].prepare_grep)
    prepared_details, prepared_mismatches, prepared_fields, _ = agent_rows(
        bench_details, rows, lambda sample: prepared[(sample["repo"], sample["base_commit"])], prepared_clock)

    from agent_retrieval_bench.baseline import load_corpus_manifest
    from agent_retrieval_bench.closed_tool_eval import load_file_texts

    manifest = load_corpus_manifest(args.corpus)
    differing_snapshots = [f"{key[0]}@{key[1]}" for key, tool_files in sorted(files.items()) if load_file_texts(manifest[key]) != dict(tool_files.texts)]
    figures = {
        "rows": len(bench_details),
        "bench_skipped": summary["skipped"],
        "snapshots": len(files),
        "snapshots_with_other_files": differing_snapshots,
        "identical_rows": len(bench_details) - len(mismatches),
        "mismatching_rows": len(mismatches),
        "mismatching_fields": dict(fields),
        "trajectory_summary_equal": summarize_trajectory_details(details) == summary["metrics"],
        "closed_tool_summary_equal": summarize_closed_tool(details) == summary["closed_tool_metrics"],
        "bench_cpu_seconds": bench_total.cpu,
        "bench_wall_seconds": bench_total.wall,
        "bench_policy_cpu_seconds": bench_policy.cpu,
        "plugin_read_cpu_seconds": read_clock.cpu,
        "plugin_agent_cpu_seconds": agent_clock.cpu,
        "plugin_wall_seconds": read_clock.wall + agent_clock.wall,
        "cpu_ratio_total": bench_total.cpu / max(1e-9, read_clock.cpu + agent_clock.cpu),
        "cpu_ratio_agent": bench_policy.cpu / max(1e-9, agent_clock.cpu),
        "tool_calls": tool_calls,
        "plugin_ms_per_tool_call": 1000 * agent_clock.cpu / max(1, tool_calls),
        "prepared_identical_rows": len(bench_details) - len(prepared_mismatches),
        "prepared_mismatching_fields": dict(prepared_fields),
        "prepared_trajectory_summary_equal": summarize_trajectory_details(prepared_details) == summary["metrics"],
        "prepared_closed_tool_summary_equal": summarize_closed_tool(prepared_details) == summary["closed_tool_metrics"],
        "prepare_cpu_seconds": prepare_clock.cpu,
        "prepared_agent_cpu_seconds": prepared_clock.cpu,
        "cpu_ratio_prepared_agent": bench_policy.cpu / max(1e-9, prepared_clock.cpu),
        "cpu_ratio_prepared_agent_with_prepare": bench_policy.cpu / max(1e-9, prepared_clock.cpu + prepare_clock.cpu),
        "prepared_ms_per_tool_call": 1000 * prepared_clock.cpu / max(1, tool_calls),
    }
    for name, value in figures.items():
        print(f"{name:28} {value:.4f}" if isinstance(value, float) else f"{name:28} {value}")
    for mismatch in mismatches[:20] + prepared_mismatches[:20]:
        print(f"  {mismatch['sample_id']}: {', '.join(mismatch['fields'][:8])}")
    if args.repeat > 0:
        figures.update(interleaved(bench_details, rows, snapshots, manifest, args.repeat, prepared))
        for name in ("interleaved_bench_cpu_seconds", "interleaved_plugin_cpu_seconds", "interleaved_cpu_ratio", "interleaved_prepared_cpu_seconds",
                     "interleaved_prepared_cpu_ratio"):
            print(f"{name:28} {figures[name]:.4f}")
    if args.command_agent:
        from agent_calls import measure

        for regime in ("cold", "prepared"):
            by_snapshot = {key: fresh_files(snapshot, prepared[key] if regime == "prepared" else None) for key, snapshot in snapshots.items()}
            replays = []
            for expected in bench_details:
                sample = rows[expected["sample_id"]]
                key = (sample["repo"], sample["base_commit"])
                replays.append((sample, query_text_for_eval(sample["query"]), _episode(sample, prepared[key]), lambda key=key: by_snapshot[key]))
            command = {f"{regime}_{name}": value for name, value in measure(replays).items()}
            figures.update(command)
            for name, value in command.items():
                print(f"{name:28} {value:.4f}" if isinstance(value, float) else f"{name:28} {value}")
    scratch = None
    if args.pytest_runs:
        from agent_pytest_runs import pytest_runs

        scratch = Path(tempfile.mkdtemp(prefix="agent-pytest-runs-"))
        runs = pytest_runs(args.samples, args.corpus, scratch)
        figures.update(runs)
        for name, value in runs.items():
            print(f"{name:28} {value:.4f}" if isinstance(value, float) else f"{name:28} {value}")
        args.report = args.report or Path(runs["pytest_warm_report"])
    if args.report:
        parity = report_parity(args.report, bench_details)
        figures.update({name: value for name, value in parity.items() if name not in ("report_mismatches", "report_section")})
        for name in ("report_rows", "report_rows_not_in_bench", "report_identical_rows", "report_mismatching_rows", "report_mismatching_fields"):
            print(f"{name:28} {parity[name]}")
        for mismatch in parity["report_mismatches"][:20]:
            print(f"  report {mismatch['sample_id']}: {', '.join(mismatch['fields'][:8])}")
        section = parity["report_section"]
        figures["report_section_equal"] = {
            "metrics": section.get("metrics") == rounded(summary["metrics"]),
            "closed_tool_metrics": section.get("closed_tool_metrics") == rounded(summary["closed_tool_metrics"])}
        print(f"{'report_section_equal':28} {figures['report_section_equal']}")
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
    figures["load_average_at_end"] = os.getloadavg()
    print(f"{'load_average_at_end':28} {' '.join(f'{value:.2f}' for value in figures['load_average_at_end'])}")
    if args.json:
        args.json.write_text(json.dumps({**figures, "mismatches": mismatches, "prepared_mismatches": prepared_mismatches}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
