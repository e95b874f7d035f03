"""Declarations are checked when they are made: fusion specs, sample ids, and arms that leave by
SystemExit, GeneratorExit or KeyboardInterrupt (each with pytest's own meaning)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_retrieval_bench.arms.fusion import MAX_K, parse_fusion
from pytest_retrieval_bench.errors import BenchError

RELEASE = Path(__file__).resolve().parent.parent / "testdata" / "release"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
ROWS = [json.loads(line) for line in (RELEASE / "benchmark" / "synthetic_v1" / "samples.jsonl").read_text().splitlines() if line.strip()]
USAGE_ERROR = 4


@pytest.fixture
def bench(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(RELEASE, pytester.path / "release")
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--bench-corpus={CORPUS}", "-p", "no:cacheprovider", *args, timeout=300)


@pytest.mark.parametrize("k", ["9" * 400, str(MAX_K + 1), "0"])
def test_a_fusion_k_out_of_range_is_refused_at_declaration(k: str) -> None:
    with pytest.raises(BenchError, match=f"k must be a whole number from 1 to {MAX_K:,}"):
        parse_fusion(f"mix=grep,bm25:all:k={k}")
    assert parse_fusion(f"mix=grep,bm25:all:k={MAX_K}").k == MAX_K


def test_a_400_digit_k_is_one_usage_error_before_any_item(bench: pytest.Pytester) -> None:
    result = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=grep,bm25:all", f"--bench-fuse=mix=grep,bm25:all:k={'9' * 400}")
    assert result.ret == USAGE_ERROR
    assert "k must be a whole number from 1 to" in result.stderr.str() and "(400 digits)" in result.stderr.str()
    assert "OverflowError" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("name", ["lexical", "bm25", "arb"])
def test_a_fusion_named_like_an_alias_is_refused(bench: pytest.Pytester, name: str) -> None:
    result = run(bench, f"--bench-samples={SAMPLES}", f"--bench-fuse={name}=grep,bm25:all")
    assert result.ret == USAGE_ERROR
    assert f"{name!r} already names a group of arms" in result.stderr.str()


def test_a_fusion_named_like_a_fixture_arms_variant_group_is_refused(bench: pytest.Pytester) -> None:
    bench.makeconftest("""
import pytest
import pytest_retrieval_bench

@pytest_retrieval_bench.arm("sized")
@pytest.mark.parametrize("size", [1, 2])
def sized(bench_request, size):
    return bench_request.snapshot.paths()[:size]
""")
    result = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=sized", "--bench-fuse=sized=grep,bm25:all")
    assert result.ret == USAGE_ERROR and "'sized' already names a group of arms" in result.stderr.str()


@pytest.mark.parametrize("bad_id", ["weird[1]", "odd]", "x[y"])
def test_a_sample_id_with_brackets_is_an_invalid_row_naming_file_line_and_field(bench: pytest.Pytester, bad_id: str) -> None:
    rows = [dict(row) for row in ROWS[:3]]
    rows[1]["id"] = bad_id
    (bench.path / "bad.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = run(bench, "--bench-samples=bad.jsonl", "--bench-arms=grep", "--bench-report=out.json", "-rf")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 1 and outcomes.get("passed", 0) + outcomes.get("missed", 0) == 2  # the other rows still run
    assert "FAILED bad.jsonl::invalid-line2" in result.stdout.str()
    assert "bad.jsonl:2: field 'id'" in result.stdout.str() and "'[' or ']'" in result.stdout.str()
    report = json.loads((bench.path / "out.json").read_text())
    assert report["missing"] == [] and bad_id not in {entry["id"] for entry in report["details"]}  # no phantom sample
    assert any("bad.jsonl:2" in problem for problem in report["problems"])


EXITING_ARMS = """
import sys
import pytest

class Leaver:
    def __init__(self, name, leave):
        self.name, self.leave = name, leave
    def retrieve(self, request):
        self.leave()

def generator_exit():
    raise GeneratorExit("closed")

@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return [Leaver("exiter", lambda: sys.exit(3)), Leaver("closer", generator_exit)]
"""


@pytest.mark.parametrize("arm, error", [("exiter", "SystemExit: 3"), ("closer", "GeneratorExit: closed")])
def test_an_arm_leaving_by_systemexit_or_generatorexit_fails_its_items_and_the_others_run(bench: pytest.Pytester, arm: str, error: str) -> None:
    bench.makeconftest(EXITING_ARMS)
    result = run(bench, f"--bench-samples={SAMPLES}", f"--bench-arms={arm},grep", "--bench-report=out.json")
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and result.ret == 1
    labeled = len(ROWS) - 1
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == labeled and outcomes["passed"] + outcomes.get("missed", 0) == labeled
    assert error.split(":")[0] in output
    report = json.loads((bench.path / "out.json").read_text())
    records = [entry["arms"][arm] for entry in report["details"] if arm in entry["arms"]]
    assert len(records) == labeled and {record["error"] for record in records} == {error}
    assert report["partial"] is None


def test_an_arm_raising_keyboardinterrupt_interrupts_the_session_with_a_partial_report(bench: pytest.Pytester) -> None:
    bench.makeconftest("""
import pytest

class Stopper:
    name = "stopper"
    def retrieve(self, request):
        raise KeyboardInterrupt

@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return [Stopper()]
""")
    result = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=grep,stopper", "--bench-report=out.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "KeyboardInterrupt" in result.stdout.str()
    report = json.loads((bench.path / "out.json").read_text())
    assert report["partial"]["not_run"]  # what did not run is listed; nothing is scored as a stopper's answer
    assert not any("stopper" in entry["arms"] for entry in report["details"])
