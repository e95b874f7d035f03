"""Record the bench's same-budget contrast and budget curve on the bundled release.

Runs the Agent Retrieval Bench's `evaluate_lexical_baseline` and `evaluate_bm25_baseline` (the
rankers the plugin's `arb-lexical` and `arb-bm25` arms reproduce) on the bundled release, then its
`evaluate_ranked_context_as_trajectory` at `top_k` 3 on their detail rows twice: as the bench wrote
them (`as_bench`: given files kept, the bench's baselines never remove them) and with the bench's
`given_files(sample)` removed from each row's `top_files` (`given_removed`: the ranking the plugin
scores, given files never counting). Also runs `evaluate_closed_tool_grep` at the default budgets and
`report_closed_tool_budget_curve` on its details at budgets 2 to 16 (`budget_curve.json`). See
tests/fixtures/arb_closed_tool/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from make_closed_tool_fixture import CORPUS, ROOT, SAMPLES, write
from make_embedding_fixture import plain_release

TOP_K = 3
CURVE_BUDGETS = (2, 4, 6, 8, 10, 12, 14, 16)
"""The bench's default curve (2, 4, 6, 8) and beyond: its scripted policy reads nothing in its first 8 calls."""


def _contrast(baseline: Path, scratch: Path, name: str) -> dict[str, Any]:
    from agent_retrieval_bench.trajectory_compare import evaluate_ranked_context_as_trajectory

    details_path = scratch / f"{name}.ranked.jsonl"
    summary = evaluate_ranked_context_as_trajectory(baseline_details=baseline, top_k=TOP_K, details_path=details_path, model_label=name)
    details = [json.loads(line) for line in details_path.read_text(encoding="utf-8").splitlines()]
    for detail in details:
        detail.pop("source_baseline_detail")  # a path on the machine that ran it
    return {"top_k": TOP_K, "evaluated": summary["evaluated"], "skipped": summary["skipped"], "context": summary["context"],
            "metrics": summary["metrics"], "details": details}


def same_budget_runs(release: Path, scratch: Path) -> dict[str, Any]:
    from agent_retrieval_bench.baseline import evaluate_bm25_baseline, evaluate_lexical_baseline, given_files

    samples = {row["id"]: row for row in map(json.loads, (release / SAMPLES).read_text(encoding="utf-8").splitlines())}
    runs: dict[str, Any] = {}
    for arm, evaluate in (("arb-lexical", evaluate_lexical_baseline), ("arb-bm25", evaluate_bm25_baseline)):
        baseline = scratch / f"{arm}.details.jsonl"
        evaluate([release / SAMPLES], release / CORPUS, out_path=scratch / f"{arm}.json", details_path=baseline)
        rows = [json.loads(line) for line in baseline.read_text(encoding="utf-8").splitlines()]
        removed = scratch / f"{arm}.given_removed.jsonl"
        with removed.open("w", encoding="utf-8") as handle:
            for row in rows:
                given = set(given_files(samples[row["sample_id"]]))
                handle.write(json.dumps({**row, "top_files": [path for path in row["top_files"] if path not in given]}) + "\n")
        runs[arm] = {"as_bench": _contrast(baseline, scratch, f"{arm}.as_bench"), "given_removed": _contrast(removed, scratch, f"{arm}.given_removed"),
                     "given_in_top": sorted(row["sample_id"] for row in rows
                                            if set(given_files(samples[row["sample_id"]])) & set(row["top_files"][:TOP_K]))}
    return runs


def budget_curve_rows(release: Path, scratch: Path) -> list[dict[str, Any]]:
    from agent_retrieval_bench.closed_tool_eval import evaluate_closed_tool_grep, report_closed_tool_budget_curve

    details = scratch / "closed_tool.details.jsonl"
    evaluate_closed_tool_grep(sample_paths=[release / SAMPLES], corpus_dir=release / CORPUS, out_path=scratch / "closed_tool.json",
                              details_path=details, markdown_out_path=scratch / "closed_tool.md", force=True)
    curve = report_closed_tool_budget_curve(details_path=details, out_path=scratch / "curve.json", markdown_out_path=scratch / "curve.md",
                                            budgets=CURVE_BUDGETS)
    return [{key: row[key] for key in ("budget", "evaluated", "metrics", "closed_tool_metrics")} for row in curve["rows"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-src", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "arb_closed_tool" / "same_budget.json")
    args = parser.parse_args()
    sys.path.insert(0, str(args.bench_src / "src"))
    commit = subprocess.run(["git", "-C", str(args.bench_src), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        release = plain_release(scratch)
        os.chdir(release)  # the manifest's chunks_path is relative to the release root, and the bench opens it as given
        header = {"generated_by": "benchmarks/make_same_budget_fixture.py", "upstream_commit": commit}
        document = {**header, "runs": same_budget_runs(release, scratch)}
        curve = {**header, "rows": budget_curve_rows(release, scratch)}
        os.chdir(ROOT)
    write(args.out, document)
    write(args.out.with_name("budget_curve.json"), curve)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
