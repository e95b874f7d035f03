"""The report's `mrr` beside the MRR the bench's own evaluator publishes, sample by sample.

Run it from the project root, in an environment where the package is installed, on an ARB samples
file, a release-format corpus (see benchmarks/build_release_corpus.py) and a checkout of the bench:

    python benchmarks/bench_mrr.py --samples SAMPLES.jsonl --corpus CORPUS_DIR --bench-src BENCH_CHECKOUT

The samples whose snapshot is in the corpus are written to a filtered file in a temporary
directory (removed at the end). Then, each in a child process:

1. the plugin: `python -m pytest --bench-samples=S --bench-corpus=C --bench-arms=arb-lexical,arb-bm25
   --bench-no-cache --bench-report=...`;
2. the bench's evaluator, `agent_retrieval_bench.cli eval-selective-baseline` with `--ranker lexical`
   and `--ranker bm25` (`src/` of the checkout first on PYTHONPATH, `--no-keep-list`, a manifest of
   absolute plain-JSONL chunk paths), whose per-sample details hold its `MRR` and `gold_ranks`.

For every positive sample both evaluated it prints the bench's MRR and first gold rank, the report's
`mrr` (and `rank_of_first_gold_uncut`) and `mrr@k`, and counts per task how many agree at six
decimals. The bench keeps given files in its rankings and the protocol removes them, so a sample
whose given file is a gold file (every comment2context row of the bench: the reviewed file is its
gold) cannot agree on `mrr`; such rows are marked `given is gold`. The report's `mrr_given_kept`
(given files kept where the arm ranked them) is counted beside it. It asserts nothing.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from release_runs import EVALUATOR_RANKERS, chosen_snapshots, evaluator_corpus, floor, parsed_arguments, plugin_corpus, run_child


def _same(a: float, b: float) -> bool:
    return abs(round(a, 6) - round(b, 6)) <= 1e-9


def comparison_rows(report: dict[str, Any], details: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per (positive sample the bench evaluated, ranker)."""
    entries = {entry["id"]: entry for entry in report["details"]}
    rows = []
    for ranker, arm in EVALUATOR_RANKERS.items():
        for detail in details[ranker]:
            entry = entries.get(detail["sample_id"])
            if detail.get("label") != "positive" or entry is None or arm not in entry["arms"]:
                continue
            record = entry["arms"][arm]
            ranks = [rank for rank in detail["gold_ranks"].values() if rank]
            rows.append({"sample": detail["sample_id"], "task": detail["task_type"], "repo": detail["repo"], "ranker": ranker,
                         "bench_mrr": detail["metrics"]["MRR"], "bench_rank": min(ranks) if ranks else None,
                         "mrr": record["metrics"]["mrr"], "kept": record["metrics"].get("mrr_given_kept"), "rank_uncut": record.get("rank_of_first_gold_uncut"), "mrr_at_k": record["metrics"]["mrr@k"],
                         "given_is_gold": bool(set(entry.get("given") or []) & set(entry.get("gold") or []))})
    return rows


def print_rows(rows: list[dict[str, Any]]) -> None:
    print(f"{'ranker':8} {'task':16} {'sample':12} {'bench MRR':>10} {'rank':>5} {'mrr':>10} {'rank':>5} {'mrr@k':>8} {'kept':>8}  note")
    for row in rows:
        note = "" if _same(row["mrr"], row["bench_mrr"]) else ("differs: given is gold" if row["given_is_gold"] else "DIFFERS")
        kept = "-" if row["kept"] is None else f"{row['kept']:.6f}"
        print(f"{row['ranker']:8} {row['task']:16} {row['sample'][:12]:12} {row['bench_mrr']:10.6f} {row['bench_rank'] or '-':>5} "
              f"{row['mrr']:10.6f} {row['rank_uncut'] or '-':>5} {row['mrr_at_k']:8.6f} {kept:>8}  {note}")
    by_task: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_task[(row["ranker"], row["task"])].append(row)
    print("\nranker   task             rows  mrr = bench MRR  mrr@k = bench MRR  mrr_given_kept = bench MRR  given is gold")
    for (ranker, task), group in sorted(by_task.items()):
        print(f"{ranker:8} {task:16} {len(group):4}  {sum(_same(r['mrr'], r['bench_mrr']) for r in group):15}  "
              f"{sum(_same(r['mrr_at_k'], r['bench_mrr']) for r in group):17}  "
              f"{sum(r['kept'] is not None and _same(r['kept'], r['bench_mrr']) for r in group):26}  {sum(r['given_is_gold'] for r in group):13}")
    print(f"all: {sum(_same(r['mrr'], r['bench_mrr']) for r in rows)} of {len(rows)} rows agree; of the others "
          f"{sum(1 for r in rows if not _same(r['mrr'], r['bench_mrr']) and r['given_is_gold'])} have a given file that is gold")
    print(f"mrr_given_kept, the MRR the bench publishes: {sum(r['kept'] is not None and _same(r['kept'], r['bench_mrr']) for r in rows)} "
          f"of {len(rows)} rows agree")


def main(argv: list[str] | None = None) -> int:
    args = parsed_arguments(__doc__, argv, "selective_eval.py", bench_src_required=True, floor_of=floor)
    if args is None:
        return 0
    bench_package = args.bench_src.resolve() / "src"
    with tempfile.TemporaryDirectory(prefix="bench-mrr-") as scratch:
        work = Path(scratch)
        samples = work / "samples.jsonl"
        snapshots = chosen_snapshots(args, samples)
        evaluator_corpus(snapshots, work / "arb-corpus")
        run_child("plugin", [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", f"--bench-samples={samples}",
                             f"--bench-corpus={plugin_corpus(snapshots, work / 'corpus')}", "--bench-arms=arb-lexical,arb-bm25", "--bench-no-cache",
                             f"--bench-report={work / 'report.json'}", "-q", f"--rootdir={work}"], work, ok=(0, 1))
        env = {**os.environ, "PYTHONPATH": str(bench_package)}
        details = {}
        for ranker in EVALUATOR_RANKERS:
            out = work / f"arb-{ranker}"
            run_child(f"arb-{ranker}", [args.bench_python, "-m", "agent_retrieval_bench.cli", "eval-selective-baseline", str(samples),
                                        "--corpus", str(work / "arb-corpus"), "--no-keep-list", "--ranker", ranker, "--no-progress",
                                        "--out", f"{out}-summary.json", "--details", f"{out}-details.jsonl", "--sweep", f"{out}-sweep.jsonl",
                                        "--report", f"{out}-report.md"], work, env=env)
            details[ranker] = [json.loads(line) for line in Path(f"{out}-details.jsonl").read_text().splitlines() if line.strip()]
        print_rows(comparison_rows(json.loads((work / "report.json").read_text()), details))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
