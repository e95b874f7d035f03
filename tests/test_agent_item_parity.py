"""A plugin run of `arb-closed-tool` on the bundled release against the bench's own closed-tool run
(`tests/fixtures/arb_closed_tool/closed_tool.json`, default budgets): per sample, the detail row its
record holds is the bench's, and the report's trajectory section is the bench's summaries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_retrieval_bench.report.build import rounded
from pytest_retrieval_bench.report.trajectory_section import detail_row

EXPECTED = json.loads((Path(__file__).parent / "fixtures" / "arb_closed_tool" / "closed_tool.json").read_text(encoding="utf-8"))["runs"]["default"]
AGENT = "arb-closed-tool"


def test_a_plugin_run_gives_the_bench_s_detail_rows_and_summaries(release_bench: pytest.Pytester) -> None:
    result = release_bench.runpytest_subprocess("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl", "--bench-corpus=release/corpus/synthetic_v1",
                                                f"--bench-arms={AGENT}", "--bench-report=out.json", "-q", "-p", "no:cacheprovider", timeout=300)
    assert result.ret == 0, result.stdout.str()
    report = json.loads((release_bench.path / "out.json").read_text(encoding="utf-8"))
    entries = {entry["id"]: entry for entry in report["details"]}
    for expected in EXPECTED["details"]:
        entry = entries[expected["sample_id"]]
        record = entry["arms"][AGENT]
        trajectory = record["trajectory"]
        # as written (six decimals), field for field; and recomputed from the record's steps, to the last digit
        written = {"sample_id": entry["id"], "task_type": entry["task_type"], "repo": entry["repo"], "base_commit": entry["base_commit"],
                   **trajectory["detail"], "steps": trajectory["steps"]}
        assert written == rounded(expected), expected["sample_id"]
        assert detail_row(entry, record) == expected, expected["sample_id"]
        assert record["ranking"] == [path for path in trajectory["final_files"] if path not in entry["given"]]
    section = report["trajectory"][AGENT]
    assert len(EXPECTED["details"]) == section["evaluated"] == 28
    assert section["metrics"] == rounded(EXPECTED["metrics"])
    assert section["closed_tool_metrics"] == rounded(EXPECTED["closed_tool_metrics"])
