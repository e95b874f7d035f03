"""A fixture arm sees the fixtures visible where it is declared: an arm in `mine/conftest.py` run with
`pytest mine ...` uses `mine/conftest.py`'s own fixtures, as a test in `mine/` would, whichever
order the paths are given in, on pytest 8 (fixtures by node id) and 9 (by directory node)."""

from __future__ import annotations

import json

import pytest

SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"

MINE = """
import pytest
import pytest_retrieval_bench
from pytest_retrieval_bench.arms.hashing_embedder import HashingEmbedder


@pytest.fixture(scope="session")
def model():
    return HashingEmbedder()


@pytest.fixture
def first_word(bench_request):
    return bench_request.query_text.split()[0]


@pytest_retrieval_bench.arm("dense")
def dense(bench_request, model, first_word):
    return ["README.md"] if first_word else []


@pytest_retrieval_bench.embedder("emb")
def emb(model):
    return model
"""


@pytest.fixture
def mine(release_bench: pytest.Pytester) -> pytest.Pytester:
    release_bench.mkdir("mine").joinpath("conftest.py").write_text(MINE)
    return release_bench


@pytest.mark.parametrize("paths", [["mine", f"--bench-samples={SAMPLES}"], [SAMPLES, "mine"]], ids=["option", "samples-first"])
def test_an_arm_in_a_subdirectory_conftest_uses_that_conftests_fixtures(mine: pytest.Pytester, paths: list[str]) -> None:
    result = mine.runpytest_subprocess(*paths, f"--bench-corpus={CORPUS}", "--bench-arms=dense,emb,bm25:all", "--bench-fuse=hybrid=bm25:all,emb",
                                       "--bench-max-samples=2", "--bench-report=out.json", "-p", "no:cacheprovider", timeout=300)
    text = result.stdout.str()
    assert "not found" not in text and result.ret in (0, 1), text[-3000:]
    report = json.loads((mine.path / "out.json").read_text())
    for arm in ("dense", "emb", "hybrid"):
        records = [entry["arms"][arm] for entry in report["details"] if arm in entry["arms"]]
        assert len(records) == 2 and all(record["error"] is None for record in records), (arm, records)
