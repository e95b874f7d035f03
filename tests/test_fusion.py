"""Fusion arms (`--bench-fuse`): the bench's reciprocal rank fusion over the components' recorded
rankings, each component run once per sample, errors and abstentions, fixture arms, xdist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_retrieval_bench.arms.fusion import ComponentFailed, FusionArm, fuse_records, parse_fusion, reciprocal_rank_fusion
from pytest_retrieval_bench.errors import BenchError

RELEASE = Path(__file__).resolve().parent.parent / "testdata" / "release"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
USAGE_ERROR = 4

COUNTING_CONFTEST = """
import os
from pathlib import Path
import pytest
from pytest_retrieval_bench import Answer, arm

CALLS = Path(__file__).with_name("calls.txt")

def note(name, request):
    with CALLS.open("a") as handle:
        handle.write(f"{os.getpid()} {name} {request.sample_id}\\n")

class Counting:
    name = "counting"
    def retrieve(self, request):
        note(self.name, request)
        return Answer(ranking=request.snapshot.paths()[::-1][:8])

class Broken:
    name = "broken"
    def retrieve(self, request):
        raise RuntimeError("no index today")

class Silent:
    name = "silent"
    def retrieve(self, request):
        return Answer(ranking=[])

@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return [Counting(), Broken(), Silent()]

@pytest.fixture(scope="session")
def reversed_order():
    return -1

@arm("fixtured")
def fixtured(bench_request, reversed_order):
    note("fixtured", bench_request)
    return bench_request.snapshot.paths()[::reversed_order][2:9]
"""


# -- the rule --------------------------------------------------------------------------------------


def test_rrf_is_the_bench_rule() -> None:
    """weight / (k + rank) per first occurrence, summed in component order, ties by path."""
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a", "a", "d"]], [1.0, 1.0], k=60)
    scores = {"a": 1 / 61 + 1 / 62, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 64}
    assert fused == sorted(scores, key=lambda path: (-scores[path], path))
    assert reciprocal_rank_fusion([["x", "y"], ["y", "x"]], [1.0, 1.0]) == ["x", "y"]  # a tie: by path
    assert reciprocal_rank_fusion([["x", "y"], ["y", "x"]], [1.0, 2.0]) == ["y", "x"]
    assert reciprocal_rank_fusion([["x", "y"], ["y"]], [1.0, 1.0], k=1) == ["y", "x"]  # 1/2+1/3 against 1/2 + 1/2


def test_rrf_against_the_bench_worked_values() -> None:
    """Scores as the bench's `reciprocal_rank_fusion` computes them: float(k + rank) in the denominator."""
    fused = reciprocal_rank_fusion([["p1", "p2"], ["p2", "p3"], ["p3", "p1"]], [1.0, 0.5, 2.0], k=60)
    expected = {"p1": 1.0 / 61.0 + 2.0 / 62.0, "p2": 1.0 / 62.0 + 0.5 / 61.0, "p3": 0.5 / 62.0 + 2.0 / 61.0}
    assert fused == sorted(expected, key=lambda path: (-expected[path], path))


@pytest.mark.parametrize(("entry", "expected"), [
    ("f=a,b", FusionArm("f", (("a", 1.0), ("b", 1.0)), 60)),
    ("f=bm25:all*2,b:k=10", FusionArm("f", (("bm25:all", 2.0), ("b", 1.0)), 10)),
    (" f = dense[small] , b*0.5 ", FusionArm("f", (("dense[small]", 1.0), ("b", 0.5)), 60)),
])
def test_parse_fusion(entry: str, expected: FusionArm) -> None:
    assert parse_fusion(entry) == expected


@pytest.mark.parametrize(("entry", "why"), [
    ("f", "needs a name"), ("=a,b", "needs a name"), ("f=a", "at least two"), ("f=a,a", "named twice"),
    ("f=a,b:k=0", "from 1 to"), ("f=a,b:k=x", "whole number"), ("f=a*0,b", "positive"), ("f=a*nan,b", "positive"),
    ("f=a,,b", "empty component"), ("f=f,b", "fuse itself"), ("f[x]=a,b", "needs a name"),
])
def test_parse_fusion_refuses(entry: str, why: str) -> None:
    with pytest.raises(BenchError, match=why) as raised:
        parse_fusion(entry)
    assert repr(entry) in str(raised.value)


def test_fuse_records_errors_and_abstentions() -> None:
    fusion = FusionArm("f", (("a", 1.0), ("b", 1.0), ("c", 1.0)))
    ok = {"ranking": ["x", "y"], "error": None, "abstained": False}
    silent = {"ranking": ["z"], "error": None, "abstained": True}
    assert fuse_records(fusion, {"a": ok, "b": silent, "c": ok}) == ["x", "y"]  # the abstention adds nothing
    with pytest.raises(ComponentFailed, match="component 'b' failed: boom"):
        fuse_records(fusion, {"a": ok, "b": {"error": "boom"}, "c": ok})
    with pytest.raises(ComponentFailed, match="component 'c' has no record"):
        fuse_records(fusion, {"a": ok, "b": ok})


# -- in a run --------------------------------------------------------------------------------------


@pytest.fixture
def bench(release_bench: pytest.Pytester) -> pytest.Pytester:
    release_bench.makeconftest(COUNTING_CONFTEST)
    return release_bench


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "-p", "no:cacheprovider", *args, timeout=300)


def report_of(pytester: pytest.Pytester, name: str = "out.json") -> dict:
    return json.loads((pytester.path / name).read_text())


def calls(pytester: pytest.Pytester) -> list[list[str]]:
    path = pytester.path / "calls.txt"
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def test_fused_arm_over_selected_and_unselected_components(bench: pytest.Pytester) -> None:
    result = run(bench, "--bench-arms=arb-lexical,fixtured", "--bench-fuse=mix=arb-lexical,counting,fixtured*2:k=10",
                 "--bench-report=out.json")
    assert result.ret == 0, result.stdout.str()
    report = report_of(bench)
    assert report["registration"]["arms"] == ["arb-lexical", "fixtured", "mix"]  # the component not selected is not reported
    identity = report["registration"]["arm_identities"]["mix"]
    assert identity.startswith("fusion:rrf-1:k=10:arb-lexical*1<builtin:arb-lexical:") and "fixtured*2<fixture:" in identity
    positives = [entry for entry in report["details"] if "mix" in entry["arms"]]
    assert positives
    # each component ran once per sample, although `fixtured` is also an item of its own
    made = calls(bench)
    ran = sorted((name, sample) for _, name, sample in made)
    assert ran == sorted(set(ran))
    assert {name for name, _ in ran} == {"counting", "fixtured"}
    # the fused ranking is RRF over the components' recorded rankings (given files removed, cut to k)
    for entry in positives:
        arms = entry["arms"]
        counting = [path for path in _counting_ranking(bench, entry) if path not in entry["given"]][:20]
        expected = reciprocal_rank_fusion([arms["arb-lexical"]["ranking"], counting, arms["fixtured"]["ranking"]], [1.0, 1.0, 2.0], k=10)
        expected = [path for path in expected if path not in entry["given"]][:20]
        assert arms["mix"]["ranking"] == expected, entry["id"]


def _counting_ranking(pytester: pytest.Pytester, entry: dict) -> list[str]:
    """What the conftest's `counting` arm returns: the snapshot's paths, reversed, first eight."""
    repo, commit = entry["repo"], entry["base_commit"]
    rows = _corpus_paths(pytester, repo, commit)
    return sorted(rows)[::-1][:8]


def _corpus_paths(pytester: pytest.Pytester, repo: str, commit: str) -> list[str]:
    import zstandard

    directory = pytester.path / CORPUS / repo.replace("/", "__")
    for path in directory.iterdir():
        if path.name.startswith(commit):
            data = path.read_bytes()
            if path.suffix == ".zst":
                data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
            return [json.loads(line)["path"] for line in data.decode().splitlines() if line.strip() and json.loads(line).get("kind") == "file"]
    raise AssertionError(f"no chunk file for {repo}@{commit}")


def test_an_errored_component_makes_the_fused_item_an_error(bench: pytest.Pytester) -> None:
    result = run(bench, "--bench-arms=grep", "--bench-fuse=bad=grep,broken", "--bench-fuse=quiet=grep,silent",
                 "--bench-report=out.json", "-k", "gin-lite or bad or quiet")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*arm bad failed on *component 'broken' failed: RuntimeError: no index today*"])
    report = report_of(bench)
    for entry in report["details"]:
        if "bad" in entry["arms"]:
            assert entry["arms"]["bad"]["error"].startswith("component 'broken' failed")
        if "quiet" in entry["arms"] and "grep" in entry["arms"] and not entry["arms"]["grep"]["error"]:
            assert entry["arms"]["quiet"]["ranking"] == entry["arms"]["grep"]["ranking"]  # the abstention adds nothing


def test_bad_fusions_are_usage_errors(bench: pytest.Pytester) -> None:
    unknown = run(bench, "--bench-fuse=f=grep,nosuch")
    assert unknown.ret == USAGE_ERROR
    unknown.stderr.fnmatch_lines(["*--bench-fuse 'f=grep,nosuch': unknown component arm 'nosuch'*"])
    clash = run(bench, "--bench-fuse=grep=bm25:all,arb-bm25")
    assert clash.ret == USAGE_ERROR and "an arm named 'grep' already exists" in clash.stderr.str()
    nested = run(bench, "--bench-fuse=f=grep,bm25:all", "--bench-fuse=g=f,grep")
    assert nested.ret == USAGE_ERROR and "is itself a fusion" in nested.stderr.str()


def test_collect_only_and_ini(bench: pytest.Pytester) -> None:
    bench.makeini("[pytest]\nbench_fuse =\n    rrf=grep,arb-repomap\n")
    listed = run(bench, "--bench-arms=grep", "--co", "-q")
    assert listed.ret == 0
    assert any(line.endswith("[rrf]") for line in listed.outlines)
    assert not any(line.endswith("[arb-repomap]") for line in listed.outlines)
    assert not (bench.path / "calls.txt").exists()


def test_xdist_gives_the_same_report(bench: pytest.Pytester) -> None:
    args = ("--bench-arms=arb-repomap,grep", "--bench-fuse=rrf=arb-repomap,grep,counting")
    single = run(bench, *args, "--bench-report=one.json")
    spread = run(bench, *args, "--bench-report=two.json", "-n", "2")
    assert single.ret == spread.ret == 0, spread.stdout.str()

    def stable(document: dict) -> dict:
        for entry in document["details"]:
            for record in entry["arms"].values():
                record.pop("wall_ms", None)
        document.pop("latency", None)
        return document

    assert stable(report_of(bench, "one.json")) == stable(report_of(bench, "two.json"))


def test_a_merge_fuses_arms_that_ran_in_different_jobs(bench: pytest.Pytester) -> None:
    """Each arm in its own job; `summarize --fuse` gives the fused rankings and file metrics of one run."""
    from pytest_retrieval_bench.cli import main

    assert run(bench, "--bench-arms=arb-repomap", "--bench-report=a.json").ret == 0
    assert run(bench, "--bench-arms=grep", "--bench-report=b.json").ret == 0
    assert run(bench, "--bench-arms=arb-repomap,grep", "--bench-fuse=rrf=arb-repomap,grep*2", "--bench-report=online.json").ret == 0
    base = bench.path
    code = main(["summarize", str(base / "a.json"), str(base / "b.json"), "--fuse", "rrf=arb-repomap,grep*2", "-o", str(base / "merged.json")])
    assert code == 0
    merged, online = report_of(bench, "merged.json"), report_of(bench, "online.json")
    assert merged["registration"]["arm_identities"]["rrf"] == online["registration"]["arm_identities"]["rrf"] + ":offline"
    fused = {entry["id"]: entry["arms"]["rrf"] for entry in merged["details"] if "rrf" in entry["arms"]}
    expected = {entry["id"]: entry["arms"]["rrf"] for entry in online["details"] if "rrf" in entry["arms"]}
    assert fused.keys() == expected.keys() and fused
    for sample_id, record in expected.items():
        assert fused[sample_id]["ranking"] == record["ranking"], sample_id
        packed = ("bcy@", "gold_coverage@")  # a merge has no snapshot text to pack
        assert {name: value for name, value in fused[sample_id]["metrics"].items() if not name.startswith(packed)} == \
            {name: value for name, value in record["metrics"].items() if not name.startswith(packed)}
    assert merged["summary"]["all"]["rrf"]["metrics"]["recall@10"] == online["summary"]["all"]["rrf"]["metrics"]["recall@10"]
    # an unknown component, or a second fusion under an existing name, is refused with the reason
    assert main(["summarize", str(base / "a.json"), "--fuse", "rrf=arb-repomap,grep", "-o", str(base / "x.json")]) == 2
    assert main(["summarize", str(base / "merged.json"), "--fuse", "rrf=arb-repomap,grep", "-o", str(base / "y.json")]) == 2
    assert not (base / "x.json").exists() and not (base / "y.json").exists()
