"""A report's same-budget contrast beside the bench's, on the same samples and corpus.

Run it from the project root, in an environment where the package is installed:

    python benchmarks/same_budget.py --report REPORT --corpus CORPUS_DIR --samples SAMPLES.jsonl --bench-src CHECKOUT [--arm arb-bm25]

REPORT is a report of `pytest --bench-arms=arb-closed-tool,arb-bm25` (or `arb-lexical`) on those
samples and corpus. The bench's baseline of the same name (`evaluate_bm25_baseline` or
`evaluate_lexical_baseline`) is run on the samples, then `evaluate_ranked_context_as_trajectory` at
the report's `top_k` on its rows twice: as written (given files kept, as the bench's baselines keep
them) and with the bench's `given_files(sample)` removed from `top_files` (what R alone would give).
Each of the report's rows (`report.same_budget._contrast`'s details, rebuilt from the report; given
files kept where the arm ranked them) is compared with the bench's row as written by metrics, and
the summaries are compared at six decimals. Printed: rows, rows whose metrics differ, rows where the
bench's own top files held a given file, and the overall final file F1 of each. It prints figures
and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from pytest_retrieval_bench.report.build import rounded
from pytest_retrieval_bench.report.merge import read_report
from pytest_retrieval_bench.report.same_budget import same_budget_rows


def bench_rows(arm: str, samples: Path, corpus: Path, scratch: Path, top_k: int) -> tuple[dict[str, Any], dict[str, Any], set[str]]:
    """(the bench's summary and rows by sample as written, the same given files removed, samples with a given file in the top)."""
    from agent_retrieval_bench.baseline import evaluate_bm25_baseline, evaluate_lexical_baseline, given_files
    from agent_retrieval_bench.trajectory_compare import evaluate_ranked_context_as_trajectory

    evaluate = {"arb-bm25": evaluate_bm25_baseline, "arb-lexical": evaluate_lexical_baseline}[arm]
    baseline = scratch / "baseline.jsonl"
    evaluate([samples], corpus, out_path=scratch / "baseline.json", details_path=baseline)
    by_id = {row["id"]: row for row in (json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip())}
    rows = [json.loads(line) for line in baseline.read_text(encoding="utf-8").splitlines()]
    removed = scratch / "removed.jsonl"
    removed.write_text("".join(json.dumps({**row, "top_files": [p for p in row["top_files"] if p not in set(given_files(by_id[row["sample_id"]]))]}) + "\n"
                               for row in rows), encoding="utf-8")
    found = {}
    for name, path in (("as_bench", baseline), ("given_removed", removed)):
        details = scratch / f"{name}.details.jsonl"
        summary = evaluate_ranked_context_as_trajectory(baseline_details=path, top_k=top_k, details_path=details)
        found[name] = (summary, {row["sample_id"]: row for row in map(json.loads, details.read_text(encoding="utf-8").splitlines())})
    given_in_top = {row["sample_id"] for row in rows if set(given_files(by_id[row["sample_id"]])) & set(row["top_files"][:top_k])}
    return found["as_bench"], found["given_removed"], given_in_top


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--samples", type=Path, required=True)
    parser.add_argument("--bench-src", type=Path, required=True)
    parser.add_argument("--arm", default="arb-bm25", choices=("arb-bm25", "arb-lexical"))
    args = parser.parse_args()
    sys.path.insert(0, str(args.bench_src / "src"))
    from pytest_retrieval_bench.report.trajectory_section import agent_records

    report = read_report(args.report, sections=("trajectory",))
    top_k, ours = same_budget_rows(report["details"], agent_records(report["details"]))[args.arm]
    section = report["trajectory"][args.arm]["same_budget"][f"top_{top_k}"]
    with tempfile.TemporaryDirectory() as scratch:
        (as_bench, kept), (removed, _), given_in_top = bench_rows(args.arm, args.samples.resolve(), args.corpus.resolve(), Path(scratch), top_k)
    common = sorted(set(ours) & set(kept))
    differing = [sample for sample in common if rounded(ours[sample]["metrics"]) != rounded(kept[sample]["metrics"])]
    print(f"{args.arm}@{top_k}: report rows {len(ours)}, bench rows {len(kept)} (skipped {as_bench['skipped']}), common {len(common)}, "
          f"rows whose metrics differ {len(differing)} {differing[:5]}")
    print(f"summary metrics equal to the bench's at six decimals: {rounded(section['metrics']) == rounded(as_bench['metrics'])}")
    print(f"rows where the bench's own top {top_k} held a given file: {len(given_in_top & set(common))}; "
          f"overall final_file_f1: report {section['metrics'].get('overall', {}).get('final_file_f1', 0):.4f}, "
          f"bench given removed {removed['metrics'].get('overall', {}).get('final_file_f1', 0):.4f}, "
          f"bench as written {as_bench['metrics'].get('overall', {}).get('final_file_f1', 0):.4f} ({len(kept)} rows)")


if __name__ == "__main__":
    main()
