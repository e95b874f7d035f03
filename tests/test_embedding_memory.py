"""Embedding set-up within a memory budget: the bench's batches where they fit, split (and said) where not."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_retrieval_bench.arms.embed_batches import Call, plan_calls

KIB = 1 << 10


def covered(calls: list[Call]) -> list[int]:
    return [index for call in calls for index in range(call.start, call.stop)]


def test_batches_that_fit_keep_the_bench_batching_in_one_call() -> None:
    plan = plan_calls([100] * 70, batch_size=32, budget=32 * 100 * 10, bytes_per_char=10)
    assert plan.calls == [Call(0, 70, 32)]
    assert plan.splits.batches == 0


def test_only_the_batch_over_the_budget_is_cut_and_every_text_stays_in_order() -> None:
    lengths = [10] * 32 + [10] * 5 + [5_000] + [10] * 26 + [10] * 3
    plan = plan_calls(lengths, batch_size=32, budget=4 * 5_000, bytes_per_char=1)
    # the first and last bench batches are kept whole; the second (texts 32-63) is cut so that each part fits
    assert plan.calls[0] == Call(0, 32, 32) and plan.calls[-1] == Call(64, 67, 32)
    middle = plan.calls[1:-1]
    assert covered(plan.calls) == list(range(len(lengths)))
    for call in middle:
        part = lengths[call.start:call.stop]
        assert call.batch_size == len(part) and len(part) * max(part) <= 4 * 5_000
    assert plan.splits.batches == 1 and plan.splits.texts == 32 and plan.splits.longest_chars == 5_000
    assert plan.splits.alone_over_budget == 0


def test_a_text_over_the_budget_alone_is_encoded_on_its_own_and_counted() -> None:
    plan = plan_calls([10, 10, 900, 10], batch_size=4, budget=500, bytes_per_char=1)
    assert plan.calls == [Call(0, 2, 2), Call(2, 3, 1), Call(3, 4, 1)]
    assert plan.splits.alone_over_budget == 1 and plan.splits.batches == 1


def test_an_embedder_that_pads_nothing_is_never_split() -> None:
    plan = plan_calls([1_000_000] * 40, batch_size=32, budget=1, bytes_per_char=0)
    assert plan.calls == [Call(0, 40, 32)] and plan.splits.batches == 0


@pytest.fixture(scope="module")
def wordllama_model():
    pytest.importorskip("wordllama")
    from pytest_retrieval_bench.arms.embedders import EmbedOptions, load_model

    return load_model("wordllama", EmbedOptions())


def test_wordllama_pools_a_text_over_the_budget_in_blocks_to_the_same_bits(wordllama_model) -> None:
    from pytest_retrieval_bench.arms.embedders import WordLlamaEmbedder

    sources = sorted(Path(__file__).parent.parent.joinpath("pytest_retrieval_bench").rglob("*.py"))[:20]
    texts = [path.read_text() for path in sources] + ["x", "def f():\n    return 1\n" * 3_000]
    library = wordllama_model.model.embed(texts, norm=True, batch_size=32)  # padded batches, as wordllama runs them
    small = WordLlamaEmbedder(wordllama_model.model, normalize=True, memory_budget=KIB)
    small.BLOCK_TOKENS = 97  # many blocks, a partial last one
    for text, expected in zip(texts, library):
        assert np.array_equal(small.encode([text])[0], expected)
    assert len(texts[-1]) * small.bytes_per_char > small.memory_budget  # the long text took the block path


PADDING_EMBEDDER = """
import numpy as np
from pytest_retrieval_bench import embedding_arm
from pytest_retrieval_bench.arms.hashing_embedder import HashingEmbedder

CALLS = []

class Padding(HashingEmbedder):
    model_name = "padding"
    bytes_per_char = 100  # a padding encoder's cost, declared as the protocol asks

    def encode(self, texts, batch_size=32):
        with open("calls.jsonl", "a") as out:
            out.write(__import__("json").dumps([len(texts), batch_size, max(map(len, texts))]) + "\\n")
        return super().encode(texts, batch_size)

def pytest_retrieval_bench_arms(config):
    return [embedding_arm("padded", Padding())]
"""

COMMIT = "1" * 40


@pytest.fixture(scope="module")
def long_text_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40 small files and one of 600,000 characters: its bench batch would need 32 x 600,000 x 100 bytes."""
    root = tmp_path_factory.mktemp("tree")
    for index in range(40):
        (root / f"pkg/mod_{index:02d}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / f"pkg/mod_{index:02d}.py").write_text(f"def handler_{index}():\n    return {index}\n")
    (root / "pkg/huge.txt").write_text("token " * 100_000)
    sample = {"id": "s1", "repo": "acme/tree", "base_commit": COMMIT, "task_type": "code2test",
              "query": {"text": "handler 7"}, "gold": {"related_tests": ["pkg/mod_07.py"]}}
    (root.parent / "tree_samples.jsonl").write_text(json.dumps(sample) + "\n")
    return root


def run_tree(pytester: pytest.Pytester, tree: Path, *args: str) -> tuple[pytest.RunResult, dict]:
    (pytester.path / "calls.jsonl").unlink(missing_ok=True)
    result = pytester.runpytest_subprocess(f"--bench-samples={tree.parent / 'tree_samples.jsonl'}", f"--bench-snapshot=acme/tree@{COMMIT}={tree}",
                                           "--bench-arms=padded", "-p", "no:cacheprovider", "--bench-no-cache", "--bench-report=out.json",
                                           "--bench-replace-registration", *args, timeout=300)
    report = json.loads((pytester.path / "out.json").read_text())
    return result, report


def test_a_batch_holding_one_very_long_text_is_split_under_a_small_budget_and_reported(pytester: pytest.Pytester, long_text_tree: Path) -> None:
    pytester.makeconftest(PADDING_EMBEDDER)
    result, report = run_tree(pytester, long_text_tree)  # the default budget, 512 MiB: 32 x 600,000 x 100 bytes is 1.9 GB
    assert result.ret == 0, result.stdout.str()
    whole = [json.loads(line) for line in (pytester.path / "calls.jsonl").read_text().splitlines()]
    split = report["embedding_models"]["padded"]["batches_split"]
    assert len(split) == 1 and split[0]["snapshot"] == f"acme/tree@{COMMIT}" and split[0]["batches"] == 1
    assert 600_000 < split[0]["longest_chars"] < 600_100 and split[0]["budget_bytes"] == 512 << 20  # the chunk text: path, kind, content
    assert all(count * longest * 100 <= 512 << 20 or count == 1 for count, _, longest in whole)
    result.stdout.fnmatch_lines(["*padded on snapshot acme/tree@1111*1 batch (32 texts, the longest 600,0?? characters) would exceed "
                                 "the 512 MiB encoder memory budget (--bench-embed-memory) and was split*"])
    ranking = report["details"][0]["arms"]["padded"]["ranking"]

    result, report = run_tree(pytester, long_text_tree, "--bench-embed-memory=4096")  # 4 GiB: the bench's batches fit
    assert result.ret == 0, result.stdout.str()
    calls = [json.loads(line) for line in (pytester.path / "calls.jsonl").read_text().splitlines()]
    assert [(count, size) for count, size, _ in calls if count > 1] == [(41, 32)]  # the bench's call: all 41 chunk texts, batches of 32
    assert report["embedding_models"]["padded"]["batches_split"] == []
    assert "would exceed" not in result.stdout.str()
    assert report["details"][0]["arms"]["padded"]["ranking"] == ranking  # a batch-independent model: the same vectors


def test_the_budget_option_is_checked(pytester: pytest.Pytester, long_text_tree: Path) -> None:
    result = pytester.runpytest_subprocess(f"--bench-samples={long_text_tree.parent / 'tree_samples.jsonl'}",
                                           f"--bench-snapshot=acme/tree@{COMMIT}={long_text_tree}", "--bench-arms=grep", "--bench-embed-memory=0")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--bench-embed-memory: must be at least 1 (MiB), got 0*"])
