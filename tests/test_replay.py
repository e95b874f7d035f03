"""Replay (`--bench-trajectories NAME=FILE`): trajectories recorded elsewhere, scored as an arm.

The parity test replays `tests/fixtures/arb_replay/trajectories.jsonl` (every input shape the bench
reads, duplicates, an unknown sample id, empty and missing trajectories) over the bundled release
and compares each record and the section with the bench's `eval-trajectories` output on the same
file, recorded beside it (see that folder's README)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.arms.agents.replay import read_log
from pytest_retrieval_bench.errors import InputError
from pytest_retrieval_bench.report.trajectory_section import trajectory_record_problem

FIXTURE = Path(__file__).parent / "fixtures" / "arb_replay"
ENTRY_FIELDS = ("sample_id", "task_type", "repo", "base_commit", "steps")


@pytest.mark.parametrize(("text", "line", "field", "message"), [
    ('{"sample_id": "a", "path": "x.py"}\nnot json\n', 2, None, "not JSON"),
    ('\n["a", "x.py"]\n', 2, None, "expected a JSON object, got list"),
    ('{"path": "x.py"}\n', 1, "sample_id", "no sample id"),
    ('{"sample_id": "a", "trajectory": "x.py"}\n', 1, "trajectory", "expected a list of steps"),
    ('{"sample_id": "a", "trajectory": [{"path": "x.py"}, 3]}\n', 1, "trajectory[1]", "expected a JSON object, got int"),
    ('{"id": "a", "trajectory": [{"path": "x.py"}, {"tool": "grep"}]}\n', 1, "trajectory[1].path", "a step needs a non-empty path"),
    ('{"sample_id": "a", "step": 1}\n', 1, "path", "a step needs a non-empty path"),
])
def test_a_malformed_line_names_file_line_and_field(tmp_path: Path, text: str, line: int, field: str | None, message: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_log("mine", log)
    assert caught.value.line == line and caught.value.field == field and message in str(caught.value)
    assert str(caught.value).startswith(f"{log}:{line}:")


def test_notes_say_what_is_missing_unknown_empty_and_duplicated(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in [
        {"sample_id": "a", "step": 1, "path": "x.py"}, {"sample_id": "a", "step": 1, "path": "x.py"}, {"id": "b", "trajectory": []},
        {"sample_id": "zz", "path": "y.py"}]), encoding="utf-8")
    notes = read_log("mine", log).notes(["a", "b", "c", "d"])
    assert notes == [f"mine: 2 of 4 samples have no trajectory in {log} (missing, not scored: their items are skipped)",
                     f"mine: 1 samples have an empty trajectory in {log} (skipped, as the bench's empty_trajectory)",
                     f"mine: 1 sample ids in {log} are not among the samples (ignored, as the bench's missing_sample): zz",
                     f"mine: 1 duplicate steps (same sample, step and path) in {log} kept, as the bench keeps them"]


def _close(written: Any, expected: Any, where: str) -> None:
    """Equal, numbers to the report's six decimals."""
    if isinstance(expected, dict):
        assert isinstance(written, dict) and sorted(written) == sorted(expected), where
        for key in expected:
            _close(written[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, float) and not isinstance(written, bool):
        assert written == pytest.approx(expected, abs=1e-6), where
    else:
        assert written == expected, where


def test_replayed_records_and_section_equal_the_benchs_eval_trajectories(release_bench: pytest.Pytester) -> None:
    shutil.copy(FIXTURE / "trajectories.jsonl", release_bench.path / "trajectories.jsonl")
    bench = json.loads((FIXTURE / "eval_trajectories.json").read_text(encoding="utf-8"))
    result = release_bench.runpytest_subprocess("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl", "--bench-corpus=release/corpus/synthetic_v1",
                                                "--bench-trajectories", "replayed=trajectories.jsonl", "--bench-arms=replayed", "-v", "-rs",
                                                "-p", "no:cacheprovider", "--bench-report=out.json", timeout=300)
    out = result.stdout.str()
    assert result.ret == 0, out
    skipped = bench["summary"]["skipped"]
    assert re.search(r"retrieval-bench: replay replayed: \d+ of 35 samples have no trajectory in .*trajectories\.jsonl \(missing, not scored", out), out
    assert f"replayed: {skipped['empty_trajectory']} samples have an empty trajectory in" in out
    assert f"replayed: {skipped['missing_sample']} sample ids in" in out and "not-a-sample-of-the-release" in out
    assert re.search(r"replayed: \d+ duplicate steps \(same sample, step and path\)", out)
    assert "no trajectory for this sample in" in out or "SKIPPED" in out
    rows = (release_bench.path / "release/benchmark/synthetic_v1/samples.jsonl").read_text(encoding="utf-8").splitlines()
    logged = {row.get("sample_id") or row.get("id") for row in map(json.loads, (FIXTURE / "trajectories.jsonl").read_text(encoding="utf-8").splitlines())}
    unlabeled = sum(1 for line in re.findall(r"samples\.jsonl:(\d+): no_gold_unlabeled", out)  # the plugin skips an unlabeled row for every arm
                    if json.loads(rows[int(line) - 1])["id"] in logged)
    report = json.loads((release_bench.path / "out.json").read_text(encoding="utf-8"))
    records = {entry["id"]: entry["arms"]["replayed"] for entry in report["details"] if "replayed" in entry.get("arms", {})}
    with_gold = {sample_id: record for sample_id, record in records.items() if "detail" in record["trajectory"]}
    assert sorted(with_gold) == sorted(detail["sample_id"] for detail in bench["details"])
    for detail in bench["details"]:
        trajectory = with_gold[detail["sample_id"]]["trajectory"]
        assert trajectory["steps"] == detail["steps"], detail["sample_id"]
        _close({key: value for key, value in trajectory["detail"].items() if key != "closed_tool"},
               {key: value for key, value in detail.items() if key not in ENTRY_FIELDS}, detail["sample_id"])
        assert trajectory["final_files"] == list(dict.fromkeys(step["path"] for step in detail["steps"] if step["is_final_context"]))
    assert set(records) <= logged and len(records) == 35 - 6 - skipped["empty_trajectory"] - unlabeled  # missing samples have no record, not a zero
    entries = {entry["id"]: entry for entry in report["details"]}
    assert all(trajectory_record_problem(record, entries[sample_id], sample_id) is None for sample_id, record in records.items())  # read back as written
    section = report["trajectory"]["replayed"]
    assert section["evaluated"] == bench["summary"]["evaluated"] and section["errors"] == 0 and "closed_tool_metrics" not in section
    assert unlabeled and section["no_gold"]["samples"] + unlabeled == skipped["no_gold"] and section["budget"] is None
    _close(section["metrics"], bench["summary"]["metrics"], "metrics")


def test_a_replay_named_like_another_arm_or_badly_is_a_usage_error(release_bench: pytest.Pytester) -> None:
    shutil.copy(FIXTURE / "trajectories.jsonl", release_bench.path / "trajectories.jsonl")
    common = ("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl", "--bench-corpus=release/corpus/synthetic_v1", "--co", "-q")
    taken = release_bench.runpytest_subprocess(*common, "--bench-trajectories", "grep=trajectories.jsonl")
    assert taken.ret == pytest.ExitCode.USAGE_ERROR and "arm 'grep' is defined elsewhere" in taken.stderr.str()
    spaced = release_bench.runpytest_subprocess(*common, "--bench-trajectories", "a,b=trajectories.jsonl")
    assert spaced.ret == pytest.ExitCode.USAGE_ERROR and "arm name 'a,b'" in spaced.stderr.str()
