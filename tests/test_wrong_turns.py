"""An arm author's wrong turns get one message naming the real cause and what to do: a test path
taken as --bench-compare's value, a corpus given one folder too high, a baseline over other
samples, a misspelt arm, a pasted node id of a custom arm without its --bench-arms."""

from __future__ import annotations

import pytest

from pytest_retrieval_bench.arms.registry import UnknownArm, builtin_arms, select_arms
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.gate import check_compatible

SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
ITEM = f"{SAMPLES}::00dbb090e0398e32269f1ce0[mine]"

MINE = """
import pytest_retrieval_bench


@pytest_retrieval_bench.arm("mine")
def mine(bench_request):
    return []
"""


@pytest.fixture
def mine(release_bench: pytest.Pytester) -> pytest.Pytester:
    release_bench.mkdir("mine").joinpath("conftest.py").write_text(MINE)
    return release_bench


def usage_error(pytester: pytest.Pytester, *args: str) -> str:
    result = pytester.runpytest_subprocess(*args, "-p", "no:cacheprovider", timeout=120)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    assert "passed" not in result.stdout.str() and "error" not in result.stdout.str().lower()  # one start-up error, no item
    return " ".join(result.stderr.str().split())


def test_a_test_path_taken_as_the_value_of_bench_compare_is_named(mine: pytest.Pytester) -> None:
    error = usage_error(mine, "--bench-compare", "mine", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=mine")
    assert "--bench-compare took 'mine' as the saved run to compare with (its value is optional), but 'mine' is a directory" in error
    assert "pytest mine ... --bench-compare" in error and "unknown arm" not in error
    named = usage_error(mine, "--bench-compare=mine", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}")
    assert "no saved run" in named  # written with '=', the value is a saved run's name


def test_a_corpus_one_folder_too_high_is_one_start_up_error_naming_the_subfolder(release_bench: pytest.Pytester) -> None:
    error = usage_error(release_bench, f"--bench-samples={SAMPLES}", "--bench-corpus=release/corpus", "--bench-arms=grep")
    assert "release/corpus: holds no snapshot of these samples" in error
    assert "its subfolder synthetic_v1 does: give --bench-corpus" in error and error.rstrip().endswith("release/corpus/synthetic_v1")


def test_a_pasted_node_id_of_a_custom_arm_says_the_arm_needs_bench_arms_again(mine: pytest.Pytester) -> None:
    undefined = usage_error(mine, ITEM, f"--bench-corpus={CORPUS}")
    assert f"{ITEM}: no arm 'mine' in this run: custom arms need --bench-arms again" in undefined
    assert "pytest mine 'release/" in undefined and "--bench-arms=mine" in undefined
    unselected = usage_error(mine, "mine", ITEM, f"--bench-corpus={CORPUS}")
    assert f"{ITEM}: arm 'mine' is not selected in this run" in unselected and "add --bench-arms=mine" in unselected


def registration(*samples: tuple[str, str]) -> dict:
    return {"samples": [{"path": path, "sha256": digest} for path, digest in samples], "limit": 20}


@pytest.mark.parametrize("baseline_file, advice", [("benchmark/old/samples.jsonl", "run over the baseline's samples file"),
                                                   ("benchmark/v1/samples.jsonl", "the samples file changed since the baseline was written")])
def test_a_baseline_over_other_samples_names_both_files_and_what_to_do(baseline_file: str, advice: str) -> None:
    baseline = {"registration": registration((baseline_file, "a" * 64)), "details": []}
    with pytest.raises(BenchError) as raised:
        check_compatible(registration(("benchmark/v1/samples.jsonl", "b" * 64)), baseline, ["grep"], [])
    message = str(raised.value)
    assert f"it was written over {baseline_file} (sha256 aaaaaaaaaaaa), this run reads benchmark/v1/samples.jsonl (sha256 bbbbbbbbbbbb)" in message
    assert advice in message and "--bench-update-baseline on a new path" in message


def test_an_unknown_arm_suggests_the_closest_names() -> None:
    with pytest.raises(UnknownArm) as raised:
        select_arms(["bm25:al"], builtin_arms())
    assert "unknown arm 'bm25:al' in --bench-arms; did you mean 'bm25:all'" in str(raised.value)
    with pytest.raises(UnknownArm) as far:
        select_arms(["zzzzzz"], builtin_arms())
    assert "did you mean" not in str(far.value)
