"""One release across CI jobs: `--bench-shard`, and merges that are safe (refusals, identities,
complete shard sets) and equal to a single run, gated and published like a run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from report_helpers import assert_outcomes

from pytest_retrieval_bench.cli import main as cli_main
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.merge import merge_reports
from pytest_retrieval_bench.shard import parse_shard, partition, partition_digest

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"
ARMS = ["grep", "grep-ident", "bm25:all", "bm25:ident", "arb-lexical", "arb-bm25"]
USAGE_ERROR = 4


def _run(tmp: Path, name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "pytest", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", f"--bench-report={tmp / name}",
                             "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q", f"--rootdir={tmp}", *args], cwd=tmp, capture_output=True, text=True,
                            timeout=300)
    if check:
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result


def _comparable(path: Path) -> dict:
    report = json.loads(path.read_text())
    for volatile in ("latency", "commit_info", "machine_info"):  # a merge records where it ran, as a run does
        report.pop(volatile)
    report["registration"].pop("merged_from", None)
    for entry in report["details"]:
        for record in entry["arms"].values():
            record.pop("wall_ms")
    return report


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("single")
    _run(tmp, "single.json")
    return tmp / "single.json"


# -- the partition ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["0/3", "4/3", "a/b", "1/0", "3", ""])
def test_bad_shard_values_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_shard(text)


def test_partition_is_deterministic_balanced_and_whole() -> None:
    costs = {f"o/r{i}@{i:040d}": size for i, size in enumerate([900, 100, 500, 500, 300, 300, 200, 0])}
    assignment = partition(costs, 3)
    assert assignment == partition(dict(reversed(list(costs.items()))), 3)  # input order does not matter
    assert set(assignment) == set(costs) and set(assignment.values()) == {1, 2, 3}
    loads = {shard: sum(costs[key] for key, s in assignment.items() if s == shard) for shard in (1, 2, 3)}
    assert max(loads.values()) - min(loads.values()) <= 100, loads  # greedy largest-first
    assert partition_digest(assignment, 3) != partition_digest(partition(costs, 2), 2)


def test_a_bad_shard_option_is_a_usage_error(tmp_path: Path) -> None:
    result = _run(tmp_path, "x.json", "--bench-shard=4/3", check=False)
    assert result.returncode == USAGE_ERROR and "--bench-shard" in result.stderr


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_shards_merged_equal_the_single_run(tmp_path: Path, single: Path, shards: list[Path], count: int) -> None:
    if count == 3:
        paths = list(shards)  # the module's three shard runs are this count's runs
    else:
        paths = []
        for index in range(1, count + 1):
            _run(tmp_path, f"shard{index}.json", f"--bench-shard={index}/{count}")
            paths.append(tmp_path / f"shard{index}.json")
    shard_ids = [{entry["id"] for entry in json.loads(path.read_text())["details"]} for path in paths]
    assert sum(len(ids) for ids in shard_ids) == len(set().union(*shard_ids))  # every sample in exactly one shard
    for path in paths:
        report = json.loads(path.read_text())
        assert report["partial"] is None and report["registration"]["shard"]["count"] == count
        repos = {entry["repo"] + entry["base_commit"] for entry in report["details"]}
        for entry in report["details"]:  # a snapshot's samples and all their arms stay together
            assert entry.get("skipped") or set(entry["arms"]) == set(ARMS)
        assert len(repos) == len({(e["repo"], e["base_commit"]) for e in report["details"]})
    assert cli_main(["summarize", *map(str, paths), "--output", str(tmp_path / "merged.json")]) == 0
    merged = _comparable(tmp_path / "merged.json")
    assert merged == _comparable(single)
    assert [entry["path"] for entry in json.loads((tmp_path / "merged.json").read_text())["registration"]["merged_from"]] == list(map(str, paths))


# -- merges that are refused ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("shards")
    for index in (1, 2, 3):
        _run(tmp, f"s{index}.json", f"--bench-shard={index}/3")
    return [tmp / f"s{index}.json" for index in (1, 2, 3)]


def test_incomplete_or_duplicated_shards_are_refused_unless_allowed(shards: list[Path]) -> None:
    with pytest.raises(BenchError, match=r"shard\(s\) 3/3 .* missing"):
        merge_reports(shards[:2], ARMS, ARMS)
    with pytest.raises(BenchError, match="both hold shard 2/3"):
        merge_reports([shards[0], shards[1], shards[1], shards[2]], ARMS, ARMS)
    partial = merge_reports(shards[:2], ARMS, ARMS, allow_partial=True)
    assert partial["partial"]["missing_shards"] == [3]


def _edited(path: Path, tmp: Path, name: str, edit) -> Path:
    report = json.loads(path.read_text())
    edit(report)
    target = tmp / name
    target.write_text(json.dumps(report))
    return target


@pytest.mark.parametrize("field, edit", [
    ("plugin_version", lambda r: r["registration"].update(plugin_version="9.9.9")),
    ("tokenizer_version", lambda r: r["registration"].update(tokenizer_version="other")),
    ("corpus digests", lambda r: r["registration"]["corpus"][0]["chunk_files_sha256"].update({"x.chunks.jsonl": "0" * 64})),
    ("limit", lambda r: r["registration"].update(limit=30)),  # records cut at 20 fit a limit of 30 (a limit of 10 they contradict)
])
def test_reports_of_different_benches_are_refused_naming_both_and_the_field(shards: list[Path], tmp_path: Path, field: str, edit) -> None:
    other = _edited(shards[1], tmp_path, "other.json", edit)
    with pytest.raises(BenchError) as raised:
        merge_reports([shards[0], other, shards[2]], ARMS, ARMS)
    message = str(raised.value)
    assert str(other) in message and str(shards[0]) in message and repr(field) in message


def test_one_arm_is_never_made_of_two_identities(tmp_path: Path) -> None:
    _run(tmp_path, "old.json", "--bench-arms=grep")
    def changed(report):
        report["registration"]["arm_identities"]["grep"] = "builtin:grep:v-next"
        report["details"] = [entry for entry in report["details"] if entry["repo"] == "acme/gin-lite"]
    subset = _edited(tmp_path / "old.json", tmp_path, "subset.json", changed)
    with pytest.raises(BenchError, match=r"arm 'grep' is 'builtin:grep:v-next' here but .* does not cover every sample"):
        merge_reports([tmp_path / "old.json", subset], ["grep"], ["grep"])
    whole = _edited(tmp_path / "old.json", tmp_path, "whole.json", lambda r: r["registration"]["arm_identities"].update(grep="builtin:grep:v-next"))
    merged = merge_reports([tmp_path / "old.json", whole], ["grep"], ["grep"])  # a full rerun of the new version replaces the old
    assert merged["registration"]["arm_identities"]["grep"] == "builtin:grep:v-next"


# -- a merge is gated and published like a run ------------------------------------------------------------


def test_a_merge_honours_baseline_gate_markdown_and_table(shards: list[Path], single: Path, tmp_path: Path) -> None:
    out = tmp_path / "merged.json"
    code = cli_main(["summarize", *map(str, shards), "--output", str(out), "--baseline", str(single), "--gate", "recall@10>=0.5",
                     "--markdown", str(tmp_path / "summary.md")])
    assert code == 1  # the gate fails: no arm is 0.5 better than itself
    report = json.loads(out.read_text())
    assert report["baseline"]["failed"] is True
    assert "Against the baseline: **FAILED**" in (tmp_path / "summary.md").read_text()
    result = subprocess.run([sys.executable, "-m", "pytest", *[f"--bench-summarize={path}" for path in shards], f"--bench-report={tmp_path / 'p.json'}",
                             f"--bench-baseline={single}", "--bench-gate=nonsense", "-p", "no:cacheprovider"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == USAGE_ERROR and "nonsense" in result.stderr
    passing = subprocess.run([sys.executable, "-m", "pytest", *[f"--bench-summarize={path}" for path in shards], f"--bench-report={tmp_path / 'p.json'}",
                              f"--bench-baseline={single}", "--bench-gate=recall@10>=-0.02", f"--bench-markdown={tmp_path / 'p.md'}", "-p", "no:cacheprovider"],
                             cwd=tmp_path, capture_output=True, text=True)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "retrieval-bench summary (group all)" in passing.stdout and "against baseline" in passing.stdout
    assert (tmp_path / "p.md").read_text().startswith("## Retrieval bench")


# -- workers through a gateway with another working directory ----------------------------------------

PLUGIN_ARM = """
from pytest_retrieval_bench import Answer

class Mine:
    name = "mine"

    def retrieve(self, request):
        return Answer(ranking=request.snapshot.paths()[:3])

def pytest_retrieval_bench_arms(config):
    return [Mine()]
"""


def test_gateways_with_another_working_directory_see_the_same_bench(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    shutil.copytree(TESTDATA / "release", pytester.path / "release")
    elsewhere = pytester.mkdir("elsewhere")
    relative = ("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl", "--bench-corpus=release/corpus/synthetic_v1")
    single = pytester.runpytest_subprocess(*relative, "--bench-arms=grep", "--bench-report=single.json", "-p", "no:cacheprovider", timeout=300)
    assert_outcomes(single, passed=34, skipped=1)
    remote = pytester.runpytest_subprocess(*relative, "--bench-arms=grep", "--bench-report=remote.json", "-p", "no:cacheprovider",
                                           "-d", "--dist=loadgroup", f"--tx=2*popen//chdir={elsewhere}", timeout=300)
    assert_outcomes(remote, passed=34, skipped=1)
    assert _comparable(pytester.path / "remote.json") == _comparable(pytester.path / "single.json")
    (pytester.path / "mine_arms.py").write_text(PLUGIN_ARM)
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    with_arm = pytester.runpytest_subprocess(*relative, "--bench-arms=mine", "-p", "mine_arms", "-p", "no:cacheprovider",
                                             "-d", f"--tx=2*popen//chdir={elsewhere}", timeout=300)
    assert_outcomes(with_arm, passed=34, skipped=1)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_conftest_arm_missing_on_a_gateway_worker_is_one_error_not_a_hang(pytester: pytest.Pytester, workers: int) -> None:
    """The conftest stays behind in the rootdir, so a worker started elsewhere does not know the arm:
    one collection error naming the arm and the remedies, in bounded time, exit code 1 (xdist's
    controller used to wait forever for a worker whose configure raised)."""
    import shutil
    import time

    shutil.copytree(TESTDATA / "release", pytester.path / "release")
    pytester.makeconftest(PLUGIN_ARM)
    elsewhere = pytester.mkdir("elsewhere")
    started = time.monotonic()
    result = pytester.runpytest_subprocess("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl", "--bench-corpus=release/corpus/synthetic_v1",
                                           "--bench-arms=mine", "-p", "no:cacheprovider", "-d", "--dist=loadgroup",
                                           f"--tx={workers}*popen//chdir={elsewhere}", timeout=120)
    assert time.monotonic() - started < 100
    assert result.ret == 1
    text = result.stdout.str()
    assert "ERROR collecting test session" in text and "unknown arm 'mine' in --bench-arms" in text
    assert "on this xdist worker" in text and "--rsyncdir" in text
