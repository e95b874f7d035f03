"""Write tests/fixtures/arb_replay/: a trajectory log over the bundled release and what the bench's
`eval-trajectories` command makes of it (see that folder's README).

    python benchmarks/make_replay_fixture.py --bench-src CHECKOUT [--out DIR]

CHECKOUT is a checkout of the bench's repository; its command is run with `CHECKOUT/src` on
PYTHONPATH (the bench is an oracle here, never a dependency of the plugin).
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

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "testdata" / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
UNKNOWN_ID = "not-a-sample-of-the-release"


def _paths(values: Any) -> list[str]:
    return [value["path"] if isinstance(value, dict) else value for value in values or [] if value]


def trajectory_rows(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every shape `eval-trajectories` reads, by the sample's place: no trajectory, one per-sample row
    (line ranges, kinds, flags), per-step rows with step numbers (a duplicate step, `turn` and
    `final` aliases), per-step rows numbered by their place (`selected`/`used`, a bad line range),
    and per-sample rows under `id` with an empty trajectory; and a row for a sample id the release
    does not have."""
    rows: list[dict[str, Any]] = []
    others = [path for sample in samples for path in _paths((sample.get("gold") or {}).get("files"))]
    for index, sample in enumerate(samples):
        gold = _paths((sample.get("gold") or {}).get("files"))
        first = gold[0] if gold else "README.md"
        other = others[(index * 7) % len(others)]
        shape = index % 6
        if shape == 1:
            rows.append({"sample_id": sample["id"], "trajectory": [
                {"step": 1, "tool": "grep", "path": other, "kind": "file"},
                {"step": 2, "tool": "read_file", "path": first, "start_line": 1, "end_line": 20, "is_final_context": True, "is_utilized_context": True},
                {"step": 3, "tool": "read_file", "path": other, "start_line": 5, "end_line": 9, "is_final_context": True}]})
        elif shape == 2:
            rows += [{"sample_id": sample["id"], "step": 1, "tool": "read", "path": other},
                     {"sample_id": sample["id"], "turn": 2, "action": "open", "path": first, "final": True, "utilized": True},
                     {"sample_id": sample["id"], "turn": 2, "action": "open", "path": first, "final": True, "utilized": True}]
        elif shape == 3:
            rows += [{"sample_id": sample["id"], "path": first, "start_line": 0, "end_line": 4, "selected": True},
                     {"sample_id": sample["id"], "path": other, "used": True, "symbol": "main", "content_hash": "abc"}]
        elif shape in (4, 5):
            rows.append({"id": sample["id"], "trajectory": [] if gold and shape == 5 else [{"path": first, "is_final_context": index % 3 == 0}]})
    rows.append({"sample_id": UNKNOWN_ID, "path": "README.md", "is_final_context": True})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-src", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "arb_replay")
    args = parser.parse_args()
    samples = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / "trajectories.jsonl"
    log.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in trajectory_rows(samples)), encoding="utf-8")
    commit = subprocess.run(["git", "-C", str(args.bench_src), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as scratch:
        summary_path, details_path = Path(scratch) / "summary.json", Path(scratch) / "details.jsonl"
        environment = {**os.environ, "PYTHONPATH": str(args.bench_src / "src")}
        subprocess.run([sys.executable, "-m", "agent_retrieval_bench.cli", "eval-trajectories", str(log), "--derived", str(SAMPLES),
                        "--out", str(summary_path), "--details", str(details_path), "--model-label", "replayed"],
                       env=environment, check=True, capture_output=True)
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        details = [json.loads(line) for line in details_path.read_text(encoding="utf-8").splitlines()]
    for key in ("generated_at", "derived", "trajectory_files"):  # a clock reading and paths on the machine that ran it
        summary.pop(key)
    document = {"upstream_commit": commit, "command": "eval-trajectories trajectories.jsonl --derived SAMPLES --model-label replayed",
                "summary": summary, "details": details}
    (args.out / "eval_trajectories.json").write_text(json.dumps(document, sort_keys=True, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
