"""`@embedder(...)`: a function of fixtures returns the embedder; the dense arm runs it as `embed:<model>` does."""

from __future__ import annotations

import json

import pytest

from test_embedding_arms import check_against_reference, records, run

FIXTURE_EMBEDDER = """
import pytest
import pytest_retrieval_bench
from pytest_retrieval_bench.arms.hashing_embedder import HashingEmbedder

made = []

@pytest.fixture(scope="session")
def hashing():
    made.append(1)
    return HashingEmbedder()

@pytest_retrieval_bench.embedder("dense")
def dense(hashing):
    return hashing

@pytest_retrieval_bench.embedder("dense-prefixed", query_prefix="query: ")
def dense_prefixed(hashing):
    return hashing

@pytest_retrieval_bench.embedder("broken")
def broken(hashing):
    return "not an embedder"

@pytest_retrieval_bench.embedder("skipped")
@pytest.mark.skip(reason="no such service here")
def skipped(hashing):
    return hashing

def pytest_sessionfinish(session):
    print(f"embedder fixture made {len(made)} time(s)")
"""


def test_a_fixture_returning_an_embedder_ranks_as_the_bench_does_with_its_fixture_set_up_once(release_bench: pytest.Pytester) -> None:
    release_bench.makeconftest(FIXTURE_EMBEDDER)
    result = run(release_bench, "--bench-arms=dense,dense-prefixed,skipped,bm25:all", "--bench-fuse=hybrid=bm25:all,dense", "-s",
                 "--setup-show")
    assert result.ret == 0, result.stdout.str()[-3000:]
    check_against_reference(records(release_bench, "dense"))
    result.stdout.fnmatch_lines(["*embedder fixture made 1 time(s)*"])
    result.stdout.fnmatch_lines(["*SETUP    S hashing*"])
    assert all(record["error"] is None for record in records(release_bench, "hybrid").values())
    assert records(release_bench, "dense") != records(release_bench, "dense-prefixed")  # the query prefix changes the scores
    report = json.loads((release_bench.path / "out.json").read_text())
    identities = report["registration"]["arm_identities"]
    assert identities["dense"].startswith("fixture-embedder:conftest.dense:")
    assert identities["dense"].rsplit(":", 1)[0] != identities["dense-prefixed"].rsplit(":", 1)[0]
    assert identities["dense"].rsplit(":", 1)[1] != identities["dense-prefixed"].rsplit(":", 1)[1]  # options are part of it
    model = report["embedding_models"]["dense"]
    assert model["embedder_fixture"] == "conftest.dense" and model["query_prefix"] == ""
    assert report["embedding_models"]["dense-prefixed"]["query_prefix"] == "query: "
    skipped = result.parseoutcomes()["skipped"]
    assert skipped >= len(records(release_bench, "dense")) - 1  # every `skipped` item (and the bundled skip)


def test_a_cached_run_of_a_fixture_embedder_encodes_nothing_and_ranks_the_same(release_bench: pytest.Pytester) -> None:
    release_bench.makeconftest(FIXTURE_EMBEDDER)
    vectors = release_bench.path / "cache" / "vectors"
    assert run(release_bench, "--bench-arms=dense").ret == 0
    first = records(release_bench, "dense")
    packs = {folder.name: sorted(pack.name for pack in folder.glob("*.vec")) for folder in vectors.iterdir()}
    assert len(packs) == 1 and len(next(iter(packs.values()))) == 3  # one model key, a pack a snapshot
    assert run(release_bench, "--bench-arms=dense,embed:hash").ret == 0
    again = {folder.name: sorted(pack.name for pack in folder.glob("*.vec")) for folder in vectors.iterdir()}
    assert len(again) == 2 and {name: again[name] for name in packs} == packs  # embed:hash encoded; dense nothing new
    assert {key: value["ranking"] for key, value in records(release_bench, "dense").items()} == \
        {key: value["ranking"] for key, value in first.items()}


def test_a_function_that_returns_no_embedder_fails_its_items_naming_the_arm(release_bench: pytest.Pytester) -> None:
    release_bench.makeconftest(FIXTURE_EMBEDDER)
    result = run(release_bench, "--bench-arms=broken", "--bench-max-samples=2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*arm 'broken': its function returned str, not an embedder (an object with encode(texts, batch_size))*"])


def test_an_unknown_option_is_an_error_naming_the_arm(release_bench: pytest.Pytester) -> None:
    release_bench.makeconftest("""
import pytest_retrieval_bench

@pytest_retrieval_bench.embedder("dense", query_prefx="q: ")
def dense():
    return None
""")
    result = run(release_bench, "--bench-arms=dense")
    assert result.ret != 0
    assert "embedder arm 'dense': unknown option among query_prefx" in result.stdout.str() + result.stderr.str()


def test_the_report_describes_the_models_the_same_with_and_without_xdist_workers(release_bench: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    release_bench.makeconftest(FIXTURE_EMBEDDER)
    described = []
    for workers in ("0", "2"):
        result = run(release_bench, "--bench-arms=dense,embed:hash", "-n", workers)
        assert result.ret == 0, result.stdout.str()[-2000:]
        report = json.loads((release_bench.path / "out.json").read_text())
        described.append((report["embedding_models"], report["machine_info"]["device"]))
    assert described[0] == described[1]  # the controller, which ran no item, writes what a local run writes
    assert described[0][0]["embed:hash"]["dimension"] == 256 and described[0][1] == "cpu"
