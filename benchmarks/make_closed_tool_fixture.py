"""Write tests/fixtures/arb_closed_tool/: what the bench's closed-tool evaluator, its trajectory scorer
and its same-budget contrast return for the bundled release (see that folder's README).

    python benchmarks/make_closed_tool_fixture.py --bench-src CHECKOUT [--out DIR]

CHECKOUT is a checkout of the bench's repository; its `src/` is put on sys.path (the bench is an
oracle here, never a dependency of the plugin).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from make_embedding_fixture import plain_release

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = Path("benchmark") / "synthetic_v1" / "samples.jsonl"
CORPUS = Path("corpus") / "synthetic_v1"

BUDGETS: dict[str, dict[str, int]] = {
    "default": {},
    "tight": {"max_tool_calls": 6, "max_read_tokens": 900, "max_read_tokens_per_file": 400, "max_grep_calls": 2, "final_k": 2, "grep_top_k": 4},
    "no_reads": {"max_tool_calls": 2},
    "small_reads": {"max_tool_calls": 9, "max_read_tokens": 130, "max_read_tokens_per_file": 50, "max_grep_calls": 3, "final_k": 1, "grep_top_k": 20},
}
"""Budget settings run on every sample: the defaults, and settings that reach each of the policy's
stops (tool calls, read tokens, a read cut to the per-file limit, no read at all)."""


def write(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document, sort_keys=True, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def closed_tool_runs(release: Path, scratch: Path) -> dict[str, Any]:
    from agent_retrieval_bench.closed_tool_eval import evaluate_closed_tool_grep

    runs: dict[str, Any] = {}
    for name, budget in BUDGETS.items():
        details_path = scratch / f"{name}.details.jsonl"
        summary = evaluate_closed_tool_grep(sample_paths=[release / SAMPLES], corpus_dir=release / CORPUS, out_path=scratch / f"{name}.json",
                                            details_path=details_path, markdown_out_path=scratch / f"{name}.md", force=True, **budget)
        details = [json.loads(line) for line in details_path.read_text(encoding="utf-8").splitlines()]
        for detail in details:
            detail["closed_tool"].pop("latency_seconds")  # a clock reading, not a result
        runs[name] = {"budget": summary["budget"], "evaluated": summary["evaluated"], "skipped": summary["skipped"],
                      "metrics": summary["metrics"], "closed_tool_metrics": summary["closed_tool_metrics"], "details": details}
    return runs


def ranked_context_runs(release: Path, scratch: Path) -> dict[str, Any]:
    from agent_retrieval_bench.baseline import evaluate_bm25_baseline
    from agent_retrieval_bench.trajectory_compare import evaluate_ranked_context_as_trajectory

    baseline = scratch / "bm25.details.jsonl"
    evaluate_bm25_baseline([release / SAMPLES], release / CORPUS, out_path=scratch / "bm25.json", details_path=baseline)
    kept = ("sample_id", "task_type", "repo", "base_commit", "gold_files", "gold_spans", "gold_blocks", "top_files")
    rows = [{key: row[key] for key in kept if key in row} for row in map(json.loads, baseline.read_text(encoding="utf-8").splitlines())]
    runs: dict[str, Any] = {"baseline_rows": rows}
    for top_k in (1, 3, 8):
        details_path = scratch / f"ranked{top_k}.details.jsonl"
        summary = evaluate_ranked_context_as_trajectory(baseline_details=baseline, top_k=top_k, details_path=details_path, model_label="bm25")
        details = [json.loads(line) for line in details_path.read_text(encoding="utf-8").splitlines()]
        for detail in details:
            detail.pop("source_baseline_detail")  # a path on the machine that ran it
        runs[f"top_{top_k}"] = {"evaluated": summary["evaluated"], "skipped": summary["skipped"], "context": summary["context"],
                                "metrics": summary["metrics"], "details": details}
    return runs


def trajectory_cases(release: Path) -> dict[str, Any]:
    """`trajectory_detail` on steps with line ranges, over samples given spans, blocks and supporting
    files (the bundled samples have no spans or blocks): every metric the scorer has."""
    from agent_retrieval_bench.baseline import target_gold_files
    from agent_retrieval_bench.trajectory import normalize_trajectory_step, summarize_trajectory_details, trajectory_detail

    samples = [json.loads(line) for line in (release / SAMPLES).read_text(encoding="utf-8").splitlines()]
    cases = []
    for index, sample in enumerate(sample for sample in samples if target_gold_files(sample)):
        gold = target_gold_files(sample)
        first = gold[0]
        if index % 3 == 0:
            sample["gold_spans"] = [{"path": first, "start_line": 3, "end_line": 9, "reason": "fix"},
                                    {"path": first, "start_line": 8, "end_line": 12},
                                    {"path": "", "start_line": 1, "end_line": 2}, {"path": first, "start_line": "x", "end_line": 2}]
        if index % 3 == 1:
            sample["gold"]["gold_blocks"] = [{"path": first, "start_line": 5, "end_line": 20, "kind": "function", "symbol": "f", "chunk_id": "c1"},
                                             {"path": gold[-1], "start_line": 30, "end_line": 31},
                                             {"path": first, "start_line": 9, "end_line": 4}]
        if index % 4 == 0:
            sample["supporting_context_files"] = [{"path": "support/one.py"}, first, "support/two.py"]
        raw_steps = [
            {"tool": "read_file", "path": first, "start_line": 1, "end_line": 6, "kind": "function", "content_hash": "c1"},
            {"action": "grep", "path": "support/one.py"},
            {"turn": 7, "path": first, "start_line": 10, "end_line": 40, "final": index % 2 == 0},
            {"path": first, "start_line": 1, "end_line": 6, "content_hash": "c1", "selected": True, "used": index % 5 == 0},
            {"path": "elsewhere.py", "start_line": 8, "end_line": 2, "is_final_context": True},
            {"path": ""},
            {"path": gold[-1], "start_line": 25, "end_line": 35, "kind": "block", "utilized": index % 3 == 2},
        ][: 3 + index % 5]
        steps = [step for step in (normalize_trajectory_step(row, number + 1) for number, row in enumerate(raw_steps)) if step]
        supporting = ["support/two.py", gold[0]] if index % 6 == 5 else None
        cases.append({"sample": sample, "gold_files": gold, "steps": steps, "supporting_files": supporting,
                      "detail": trajectory_detail(sample, gold, steps, supporting_files=supporting)})
    return {"cases": cases, "summary": summarize_trajectory_details([case["detail"] for case in cases])}


class _ScriptedClient:
    """Stands in for the bench's model client: answers each prompt with the next scripted action."""

    def __init__(self, actions: list[str]):
        self.actions = list(actions)
        self.prompts: list[str] = []
        self.responses = self

    def create(self, **kwargs: Any) -> Any:
        self.prompts.append(str(kwargs.get("input") or ""))
        text = self.actions.pop(0) if self.actions else "no more actions"
        return type("Response", (), {"output_text": text})()


def _action_scripts(paths: list[str]) -> dict[str, tuple[dict[str, int], list[Any]]]:
    """Action sequences for the bench's agent loop, hostile ones included, over a snapshot's paths."""
    directory = next(path.split("/", 1)[0] for path in paths if "/" in path)
    first, second, third = paths[1], paths[-1], paths[len(paths) // 2]

    def act(kind: str, **fields: Any) -> str:
        return json.dumps({"action": kind, **fields})
    return {
        "hostile": ({}, [act("list_dir", path=""), act("list_dir", path=f"/{directory}/"), act("list_dir", path="../"), act("list_dir", path="nowhere"),
                         act("grep", pattern=""), act("grep", pattern="  func  ", top_k=3), act("grep", pattern="(", top_k="x"), act("grep", query="return", top_k=99),
                         act("grep", pattern="zzz-no-such-text"), act("read_file", path="../x"), act("read_file", path="/etc/passwd"),
                         act("read_file", path=directory), act("read_file", path=first), act("read_file", path=first), act("read_file", path=second),
                         "hello, no JSON here", act("delete", path=first), json.dumps([1, 2]),
                         act("submit", files=[third, "no/such/file.py", second, second, first, ""])]),
        "loop_past_budget": ({"max_tool_calls": 4, "max_model_turns": 11}, [act("list_dir", path="")] * 3 + [act("read_file", path=first)] * 3
                             + [act("submit", files=[first])] * 4),
        "submit_nothing_after_reads": ({"final_k": 1}, [act("read_file", path=second), act("read_file", path=first), act("submit", files=[])]),
        "submit_nothing": ({}, [act("grep", pattern="the"), act("submit", files=[])]),
        "submit_unread": ({}, [act("read_file", path=first), act("submit", context_files=[second, third])]),
        "read_budget": ({"max_read_tokens": 60, "max_read_tokens_per_file": 40}, [act("read_file", path=second), act("read_file", path=third),
                                                                                   act("read_file", path=first), act("submit", files=[first, second, third])]),
        "never_submits": ({"max_model_turns": 3}, [act("read_file", path=first), act("grep", pattern="a"), act("read_file", path=third)]),
    }


def agent_loop_runs(release: Path) -> dict[str, Any]:
    """The bench's agent loop (`run_closed_tool_llm_sample`) driven by scripted actions: each run's
    detail row, and per turn what the agent was shown (the observation, or the refusal)."""
    from agent_retrieval_bench import closed_tool_eval as bench
    from agent_retrieval_bench.baseline import load_corpus_manifest, query_text_for_eval, target_gold_files

    shown: list[str] = []
    for name in ("format_list_dir_observation", "format_grep_observation", "format_read_file_observation"):
        original = getattr(bench, name)

        def recording(*args: Any, _original: Any = original) -> str:
            shown.append(_original(*args))
            return shown[-1]
        setattr(bench, name, recording)
    manifest = load_corpus_manifest(release / CORPUS)
    samples = [json.loads(line) for line in (release / SAMPLES).read_text(encoding="utf-8").splitlines()]
    runs = []
    for sample in [sample for sample in samples if target_gold_files(sample)][:3]:
        files = bench.load_file_texts(manifest[(sample["repo"], sample["base_commit"])])
        for name, (budget, actions) in _action_scripts(sorted(files)).items():
            shown.clear()
            client = _ScriptedClient(actions + ['{"action": "list_dir", "path": ""}'])  # one more turn shows the last refusal
            settings = {"max_tool_calls": 16, "max_read_tokens": 8_000, "max_read_tokens_per_file": 1_200, "final_k": 3, "grep_top_k": 12,
                        "max_model_turns": len(actions), **budget}
            detail = bench.run_closed_tool_llm_sample(sample=sample, gold_files=target_gold_files(sample), query_text=query_text_for_eval(sample),
                                                     files=files, model="scripted", client=client, **settings)
            detail["closed_tool"].pop("latency_seconds")
            errors = [line.removeprefix("Previous action error: ") for prompt in client.prompts[1:]
                      for line in prompt.splitlines() if line.startswith("Previous action error: ")]
            runs.append({"sample_id": sample["id"], "script": name, "settings": settings, "detail": detail, "observations": list(shown),
                         "errors": errors})
    return {"runs": runs, "file_digests": {f"{repo}@{commit}": {path: hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
                                                             for path, text in sorted(bench.load_file_texts(path_).items())}
                                           for (repo, commit), path_ in sorted(manifest.items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-src", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "arb_closed_tool")
    args = parser.parse_args()
    sys.path.insert(0, str(args.bench_src / "src"))
    commit = subprocess.run(["git", "-C", str(args.bench_src), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    header = {"generated_by": "benchmarks/make_closed_tool_fixture.py", "upstream_commit": commit}
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        release = plain_release(scratch)
        os.chdir(release)  # the manifest's chunks_path is relative to the release root, and the bench opens it as given
        write(args.out / "closed_tool.json", {**header, "runs": closed_tool_runs(release, scratch)})
        write(args.out / "ranked_context.json", {**header, **ranked_context_runs(release, scratch)})
        write(args.out / "trajectory_cases.json", {**header, **trajectory_cases(release)})
        write(args.out / "agent_loop.json", {**header, **agent_loop_runs(release)})
        os.chdir(ROOT)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
