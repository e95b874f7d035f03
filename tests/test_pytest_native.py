"""Bench items behave like pytest items: node ids, selection, --lf/--ff/--nf/--sw, set-up phases,
reports never clobbered, fixture arms, progress and the final summary line.

Every run is a separate pytest process (pytester) on the pytest this project installs, over a copy
of the bundled bench inside the test's own directory, so node ids are short and stable.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from report_helpers import assert_outcomes

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
RELEASE = TESTDATA / "release"
GIN = "acme/gin-lite@5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
ROWS = [json.loads(line) for line in (RELEASE / "benchmark" / "synthetic_v1" / "samples.jsonl").read_text().splitlines() if line.strip()]
GIN_IDS = sorted(row["id"] for row in ROWS if f"{row['repo']}@{row['base_commit']}" == GIN)
USAGE_ERROR = 4
UNLABELED = "8b0b00a68102d0681630c347"  # the bench's one no-gold sample without labels: skipped
GIN_RUN = [sample_id for sample_id in GIN_IDS if sample_id != UNLABELED]

FLAKY_CONFTEST = """
from pathlib import Path
import pytest
from pytest_retrieval_bench import Answer

FAIL = Path(__file__).with_name("fail.txt")

class Flaky:
    name = "flaky"

    def retrieve(self, request):
        if FAIL.exists() and request.sample_id in FAIL.read_text().split():
            raise RuntimeError("told to fail")
        return Answer(ranking=request.snapshot.paths()[:5])

@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return [Flaky()]
"""


@pytest.fixture
def bench(pytester: pytest.Pytester) -> pytest.Pytester:
    """The bundled release bench copied into the test's directory (its rootdir)."""
    shutil.copytree(RELEASE, pytester.path / "release")
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--bench-corpus={CORPUS}", *args, timeout=300)


def nodeids(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line and line.startswith(SAMPLES)]


# -- node ids ----------------------------------------------------------------------------------------


def test_node_ids_are_parametrized_and_round_trip(bench: pytest.Pytester) -> None:
    listed = nodeids(run(bench, f"--bench-samples={SAMPLES}", "--co", "-q", "--bench-arms=grep,bm25:all"))
    assert len(listed) == 2 * len(ROWS)
    assert f"{SAMPLES}::{GIN_IDS[0]}[bm25:all]" in listed
    for extra in ((), ("-n", "2")):
        again = run(bench, f"{SAMPLES}::{GIN_IDS[0]}[bm25:all]", "-v", *extra)
        assert_outcomes(again, passed=1)
        assert re.search(rf"(HIT|MISS)@20 .*{GIN_IDS[0]}\[bm25:all\]|{GIN_IDS[0]}\[bm25:all\] (HIT|MISS)@20", again.stdout.str())
    by_sample = run(bench, f"{SAMPLES}::{GIN_IDS[0]}", "--bench-arms=grep,bm25:all", "--co", "-q")
    assert nodeids(by_sample) == [f"{SAMPLES}::{GIN_IDS[0]}[grep]", f"{SAMPLES}::{GIN_IDS[0]}[bm25:all]"]


def test_the_samples_file_as_a_test_path_selects_its_items(bench: pytest.Pytester) -> None:
    result = run(bench, SAMPLES, "--bench-arms=grep")
    assert_outcomes(result, passed=len(ROWS) - 1, skipped=1)


def test_explicit_test_paths_run_without_the_bench_from_the_ini(bench: pytest.Pytester) -> None:
    bench.makeini(f"[pytest]\nbench_samples = {SAMPLES}\nbench_corpus = {CORPUS}\n")
    bench.makepyfile(test_plain="def test_one():\n    assert True\n")
    plain = bench.runpytest_subprocess("test_plain.py")
    assert_outcomes(plain, passed=1)
    assert "retrieval-bench" not in plain.stdout.str().replace("retrieval-bench-", "")
    whole = bench.runpytest_subprocess("--bench-arms=grep")  # no test paths: the ini's bench runs
    assert_outcomes(whole, passed=len(ROWS) - 1, skipped=1)


# -- --lf, --ff, --nf, --sw ---------------------------------------------------------------------------


def test_last_failed_failed_first_new_first_and_stepwise(bench: pytest.Pytester) -> None:
    bench.makeconftest(FLAKY_CONFTEST)
    failing = GIN_IDS[:2]
    (bench.path / "fail.txt").write_text(" ".join(failing))
    args = (f"--bench-samples={SAMPLES}", "--bench-arms=flaky,grep")
    first = run(bench, *args)
    assert_outcomes(first, failed=2, passed=2 * (len(ROWS) - 1) - 2, skipped=2)
    (bench.path / "fail.txt").write_text("")
    last = run(bench, *args, "--lf", "-v")
    assert_outcomes(last, passed=2)
    assert sorted(re.findall(r"::(\w+)\[flaky\] (?:HIT|MISS)", last.stdout.str())) == failing
    (bench.path / "fail.txt").write_text(failing[0])
    assert_outcomes(run(bench, *args), failed=1, passed=2 * (len(ROWS) - 1) - 1, skipped=2)
    first_failed = run(bench, *args, "--ff", "-v")
    ran = re.findall(r"::(\w+)\[(\w[\w:-]*)\] (?:HIT|MISS|ABSTAIN|ANSWER|FAILED|SKIPPED)", first_failed.stdout.str())
    assert ran[0] == (failing[0], "flaky")
    new_first = run(bench, *args, "--nf", "-q")
    assert new_first.ret == 1
    stepwise = run(bench, *args, "--sw", "-q")
    assert_outcomes(stepwise, failed=1, passed=sum(stepwise.parseoutcomes().get(word, 0) for word in ("passed", "missed")))
    (bench.path / "fail.txt").write_text("")
    resumed = run(bench, *args, "--sw", "-v")
    assert resumed.ret == 0
    assert re.findall(r"::(\w+)\[(?:flaky|grep)\] (?:HIT|MISS)", resumed.stdout.str())[0] == failing[0]  # resumes at the failure


# -- set-up: snapshots in a session fixture -----------------------------------------------------------


def test_snapshots_are_set_up_once_each_and_shown(bench: pytest.Pytester) -> None:
    result = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=grep,arb-lexical", "--setup-show", "--durations=3", "--durations-min=0",
                 "--bench-no-cache")
    out = result.stdout.str()
    setups = re.findall(r"SETUP    S bench_snapshot\[([^\]]+)\]", out)
    assert len(setups) == 3 and len(set(setups)) == 3 and GIN[:-33] in setups, setups
    assert len(re.findall(r"TEARDOWN S bench_snapshot\[", out)) == 3
    slowest = out[out.index("slowest 3 durations"):]
    assert re.search(r"\ds setup +\S+samples\.jsonl::\w+\[grep\]", slowest), slowest  # index work is set-up time


def test_setup_plan_lists_snapshots_without_loading_them(bench: pytest.Pytester) -> None:
    result = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=grep", "--setup-plan", "--bench-report=out.json")
    assert len(re.findall(r"SETUP    S bench_snapshot\[", result.stdout.str())) == 3
    assert not (bench.path / "out.json").exists() and not (bench.path / "out.json.registration.json").exists()


def test_an_unreadable_snapshot_is_one_set_up_error_per_item(bench: pytest.Pytester) -> None:
    chunk = next((bench.path / CORPUS).glob("acme__gin-lite/*.chunks.jsonl"))
    chunk.write_text("{not json\n")
    result = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=grep", "--bench-report=out.json")
    assert_outcomes(result, errors=len(GIN_RUN), passed=len(ROWS) - 1 - len(GIN_RUN), skipped=1)
    out = result.stdout.str()
    assert len(re.findall(r"ERROR at setup of \w+\[grep\]", out)) == len(GIN_RUN)
    assert f"snapshot {GIN}:" in out and chunk.name in out and "Traceback" not in out
    report = json.loads((bench.path / "out.json").read_text())
    errors = [entry["arms"]["grep"]["error"] for entry in report["details"] if entry["id"] in GIN_RUN]
    assert len(errors) == len(GIN_RUN) and all(f"snapshot {GIN}:" in error and chunk.name in error for error in errors)


def test_no_snapshot_source_is_one_usage_error(bench: pytest.Pytester) -> None:
    result = bench.runpytest_subprocess(f"--bench-samples={SAMPLES}")
    assert result.ret == USAGE_ERROR
    assert "no snapshot source" in result.stderr.str() and "--bench-corpus" in result.stderr.str()


# -- reports are never clobbered; partial runs say so -------------------------------------------------


@pytest.mark.parametrize("mode", ["--co", "--setup-only", "--setup-plan"])
def test_modes_that_run_no_arm_write_nothing(bench: pytest.Pytester, mode: str) -> None:
    args = (f"--bench-samples={SAMPLES}", "--bench-arms=grep", "--bench-report=out.json", "--bench-markdown=out.md")
    assert_outcomes(run(bench, *args), passed=len(ROWS) - 1, skipped=1)
    before = {name: (bench.path / name).read_bytes() for name in ("out.json", "out.md", "out.json.registration.json")}
    run(bench, *args, mode)
    assert {name: (bench.path / name).read_bytes() for name in before} == before


def test_a_deselected_run_writes_a_partial_report(bench: pytest.Pytester) -> None:
    result = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=grep", "--bench-report=out.json", "-k", "gin")
    report = json.loads((bench.path / "out.json").read_text())
    others = sorted(f"{row['id']}[grep]" for row in ROWS if row["id"] not in GIN_IDS)
    assert report["partial"] == {"not_run": others}
    assert "PARTIAL report" in result.stdout.str()
    full = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=grep", "--bench-report=full.json")
    assert json.loads((bench.path / "full.json").read_text())["partial"] is None
    assert "PARTIAL" not in full.stdout.str()


def test_a_run_stopped_by_x_is_partial(bench: pytest.Pytester) -> None:
    bench.makeconftest(FLAKY_CONFTEST)
    (bench.path / "fail.txt").write_text(GIN_IDS[0])
    run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=flaky", "--bench-report=out.json", "-x")
    report = json.loads((bench.path / "out.json").read_text())
    assert report["partial"] and len(report["partial"]["not_run"]) >= 1


# -- arms written with fixtures -----------------------------------------------------------------------

FIXTURE_ARMS = """
import sys
from pathlib import Path
import pytest
import pytest_retrieval_bench

SETUPS = Path(__file__).with_name("setups.txt")

@pytest.fixture(scope="session")
def model():
    with SETUPS.open("a") as out:
        out.write("model\\n")
    return {"size": 3}

@pytest_retrieval_bench.arm("dense")
def dense(bench_request, model):
    return bench_request.snapshot.paths()[: model["size"]]

@pytest_retrieval_bench.arm("sized")
@pytest.mark.parametrize("size", [1, 4], ids=["small", "large"])
def sized(bench_request, size):
    return pytest_retrieval_bench.Answer(ranking=bench_request.snapshot.paths()[:size])

@pytest_retrieval_bench.arm("never")
@pytest.mark.skipif(sys.platform != "nonexistent", reason="not on this platform")
def never(bench_request):
    return []
"""


def test_fixture_arms_use_fixtures_variants_and_skipif(bench: pytest.Pytester) -> None:
    bench.makeconftest(FIXTURE_ARMS)
    result = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=dense,sized,never", "--bench-report=out.json", "-rs", "-n", "2")
    labeled = len(ROWS) - 1
    assert_outcomes(result, passed=3 * labeled, skipped=4 + labeled)
    assert (bench.path / "setups.txt").read_text().count("model") <= 2  # once per process (two workers)
    report = json.loads((bench.path / "out.json").read_text())
    assert report["registration"]["arms"] == ["dense", "sized[small]", "sized[large]", "never"]
    assert set(report["summary"]["all"]) == {"dense", "sized[small]", "sized[large]"}
    assert report["partial"] is None  # a skipped arm was not selected to run, so nothing is missing
    some = next(entry for entry in report["details"] if entry["arms"])
    assert len(some["arms"]["sized[small]"]["ranking"]) <= 1 < len(some["arms"]["sized[large]"]["ranking"])
    assert report["registration"]["arm_identities"]["sized[large]"].endswith("[large]")
    single = run(bench, f"{SAMPLES}::{GIN_IDS[0]}[sized[large]]", "--bench-arms=sized", "-v")
    assert_outcomes(single, passed=1)


def test_ordinary_tests_can_use_the_bench_fixtures(bench: pytest.Pytester) -> None:
    bench.makepyfile(test_uses=f"""
def test_snapshot_and_samples(bench_snapshots, bench_samples):
    assert len(bench_samples) == {len(ROWS)}
    snapshot = bench_snapshots("{GIN}")
    assert "tree.go" in snapshot.paths()
""")
    result = run(bench, "test_uses.py", f"--bench-samples={SAMPLES}", "--bench-arms=grep")
    assert_outcomes(result, passed=1 + len(ROWS) - 1, skipped=1)


# -- the terminal ---------------------------------------------------------------------------------------


def test_progress_keeps_pytest_lines_and_percentages(bench: pytest.Pytester) -> None:
    normal = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=grep,bm25:all")
    lines = [line for line in normal.outlines if line.startswith(SAMPLES)]
    assert [re.search(r"snapshot (\d)/3", line)[1] for line in lines if "snapshot" in line] == ["1", "2", "3"]  # type: ignore[index]
    assert all(re.search(r"\[ *\d+%\]$", line) for line in lines), lines
    assert normal.outlines[[i for i, line in enumerate(normal.outlines) if "%]" in line][-1]].endswith("[100%]")
    verbose = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=grep", "-v")
    assert len([line for line in verbose.outlines if line.startswith("retrieval-bench: snapshot")]) == 3
    assert all(re.search(r"\[ *\d+%\]$", line) for line in verbose.outlines if "::" in line and line.startswith(SAMPLES))
    workers = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=grep", "-v", "-n", "2")
    assert len([line for line in workers.outlines if line.startswith("retrieval-bench: snapshot")]) == 3
    quiet = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=grep", "-q")
    assert "snapshot 1/3" not in quiet.stdout.str()


def test_status_letters_are_distinct_and_skips_point_at_the_sample(bench: pytest.Pytester) -> None:
    result = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=grep,grep-ident", "-rs")
    progress = [line.rsplit("[", 1)[0] for line in result.outlines if re.search(r"\[ *\d+%\]$", line)]
    dots = "".join(re.sub(rf"^{re.escape(SAMPLES)}( snapshot \S+ \S+)? ", "", line) for line in progress)
    assert set(dots) - {" "} <= {".", "m", "a", "n", "s"} and "a" in dots and "n" in dots
    line_of_unlabeled = next(number for number, row in enumerate(ROWS, start=1) if row["id"] == UNLABELED)
    skipped = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert skipped and all(f"{SAMPLES}:{line_of_unlabeled}:" in line and "collect.py" not in line for line in skipped), skipped


def test_a_failed_gate_is_in_the_final_line_in_red(bench: pytest.Pytester) -> None:
    args = (f"--bench-samples={SAMPLES}", "--bench-arms=grep,bm25:all")
    assert_outcomes(run(bench, *args, "--bench-report=base.json"), passed=2 * (len(ROWS) - 1), skipped=2)
    result = run(bench, *args, "--bench-baseline=base.json", "--bench-gate=recall@10>=0.5", "--color=yes")
    assert result.ret == 1
    final = result.outlines[-1]
    assert "1 failed" in re.sub(r"\x1b\[[0-9;]*m", "", final) and "\x1b[31m" in final, final
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in result.outlines]
    assert any("gate failed" in line for line in plain if line.startswith("FAILED retrieval-bench::"))


def test_the_plugin_disabled_by_name_with_a_hook_conftest(bench: pytest.Pytester) -> None:
    bench.makeconftest(FLAKY_CONFTEST)
    bench.makepyfile(test_plain="def test_one():\n    assert True\n")
    result = bench.runpytest_subprocess("-p", "no:retrieval_bench", "test_plain.py")
    assert_outcomes(result, passed=1)
    assert "unknown hook" not in result.stdout.str() + result.stderr.str()


TEARDOWN_CONFTEST = """
import json
from pathlib import Path
import pytest
from pytest_retrieval_bench import Answer

LOG = Path(__file__).with_name("copies.jsonl")

class Copier:
    name = "copier"

    def retrieve(self, request):
        directory = request.snapshot.directory()
        earlier = [json.loads(line) for line in LOG.read_text().splitlines()] if LOG.exists() else []
        others = sorted({entry["dir"] for entry in earlier if entry["key"] != f"{request.repo}@{request.base_commit}"})
        with LOG.open("a") as out:
            out.write(json.dumps({"key": f"{request.repo}@{request.base_commit}", "dir": str(directory),
                                  "others_alive": [d for d in others if Path(d).exists()]}) + "\\n")
        return Answer(ranking=request.snapshot.paths()[:3])

@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return [Copier()]
"""


def test_a_snapshot_is_torn_down_before_the_next_is_set_up(bench: pytest.Pytester) -> None:
    bench.makeconftest(TEARDOWN_CONFTEST)
    assert_outcomes(run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=copier"), passed=len(ROWS) - 1, skipped=1)
    calls = [json.loads(line) for line in (bench.path / "copies.jsonl").read_text().splitlines()]
    assert len({call["key"] for call in calls}) == 3 and len(calls) == len(ROWS) - 1
    assert all(call["others_alive"] == [] for call in calls)  # one snapshot (and its private copy) per process
    keys = [call["key"] for call in calls]
    assert sum(1 for before, after in zip(keys, keys[1:]) if before != after) == 2  # each snapshot's items run together


def test_an_arm_that_abstains_everywhere_counts_its_positive_samples_as_missed(bench: pytest.Pytester) -> None:
    bench.makeconftest("""
import pytest_retrieval_bench

@pytest_retrieval_bench.arm("silent")
def silent(bench_request):
    return []
""")
    result = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=silent", "-p", "no:cacheprovider", "-v")
    labelled_no_gold = [row["id"] for row in ROWS if row["gold"].get("no_gold") is True]
    positives = len(ROWS) - len(labelled_no_gold) - 1  # the unlabeled one is skipped
    assert result.ret == 0
    assert result.parseoutcomes() == {"passed": len(labelled_no_gold), "missed": positives, "skipped": 1}
    assert sum(" ABSTAIN " in line for line in result.outlines) == positives + len(labelled_no_gold)  # the word stays ABSTAIN


def test_after_x_the_samples_with_no_record_are_those_of_the_items_not_run(bench: pytest.Pytester) -> None:
    bench.makeconftest("""
import pytest_retrieval_bench

@pytest_retrieval_bench.arm("broken")
def broken(bench_request):
    raise RuntimeError("boom")
""")
    result = run(bench, f"--bench-samples={SAMPLES}", "--bench-arms=broken", "-p", "no:cacheprovider", "-x", "--bench-report=x.json")
    assert result.ret == 1
    report = json.loads((bench.path / "x.json").read_text())  # no complete report there: the partial one takes its name
    not_run = report["partial"]["not_run"]
    assert len(not_run) == len(ROWS) - 2  # one failed, the unlabeled one is a protocol skip that records nothing
    assert report["missing"] == sorted({item.partition("[")[0] for item in not_run}) and UNLABELED not in report["missing"]
