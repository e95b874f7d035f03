"""The embedding arms in a run: the bench's own rankings, the vector cache, the model wiring, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_retrieval_bench.arms.hashing_embedder import HashingEmbedder
from pytest_retrieval_bench.index.vectors import VectorStore, vectors_for

SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
REFERENCE = Path(__file__).parent / "fixtures" / "arb_reference" / "embedding.json"

USER_ARM = """
from pytest_retrieval_bench import embedding_arm
from pytest_retrieval_bench.arms.hashing_embedder import HashingEmbedder

def pytest_retrieval_bench_arms(config):
    return [embedding_arm("dense", HashingEmbedder())]
"""

NO_NETWORK = """
import socket

def _refused(*args, **kwargs):
    raise OSError("network use in a test")

socket.socket.connect = _refused
socket.create_connection = _refused
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "-p", "no:cacheprovider",
                                         "--bench-cache-dir=cache", "--bench-report=out.json", "--bench-replace-registration", *args, timeout=300)


def records(pytester: pytest.Pytester, arm: str) -> dict[str, dict]:
    report = json.loads((pytester.path / "out.json").read_text())
    return {entry["id"]: {**entry["arms"][arm], "given": entry["given"]} for entry in report["details"] if arm in entry["arms"]}


def check_against_reference(found: dict[str, dict]) -> None:
    """Each file ranking is the bench's `top_files` (the given files removed, as the plugin scores);
    each metric of a sample without given files is the bench's (MRR where the first gold is in the top k)."""
    reference = json.loads(REFERENCE.read_text())["samples"]
    assert reference and set(reference) <= set(found)
    for sample_id, expected in reference.items():
        record = found[sample_id]
        assert record["error"] is None, record["error"]
        given = set(record["given"])
        top = [path for path in expected["top_files"] if path not in given]
        assert record["ranking"][:len(top)] == top, sample_id
        if given:
            continue
        metrics, theirs = record["metrics"], expected["metrics"]
        for k in (5, 10, 20):
            assert metrics[f"recall@{k}"] == pytest.approx(theirs[f"Recall@{k}"], abs=1e-6), sample_id
            assert metrics[f"precision@{k}"] == pytest.approx(theirs[f"Precision@{k}"], abs=1e-6), sample_id
        if record["rank_of_first_gold"] is not None:
            assert metrics["mrr@k"] == pytest.approx(theirs["MRR"], abs=1e-6), sample_id


def test_a_user_embedder_and_embed_hash_rank_as_the_bench_does(release_bench: pytest.Pytester) -> None:
    release_bench.makeconftest(USER_ARM)
    result = run(release_bench, "--bench-arms=dense,embed:hash")
    assert result.ret == 0, result.stdout.str()
    check_against_reference(records(release_bench, "dense"))
    check_against_reference(records(release_bench, "embed:hash"))
    report = json.loads((release_bench.path / "out.json").read_text())
    identities = report["registration"]["arm_identities"]
    assert identities["dense"].startswith("embedding:hash:") and identities["embed:hash"].startswith("embedding:hash:")
    assert identities["dense"] != identities["embed:hash"]  # a user's embedder is not the built-in model
    models = report["embedding_models"]
    assert models["embed:hash"]["model"] == "hash" and models["embed:hash"]["device"] == "cpu"
    assert models["dense"]["embedder"].endswith("HashingEmbedder") and models["dense"]["dimension"] == 256
    assert "numpy" in models["dense"]["libraries"] and report["machine_info"]["device"] == "cpu"


def test_cached_vectors_give_the_same_rankings_and_a_corrupt_entry_is_encoded_again(release_bench: pytest.Pytester) -> None:
    cold = run(release_bench, "--bench-arms=embed:hash")
    assert cold.ret == 0
    cold.stdout.fnmatch_lines(["retrieval-bench: embedding arm embed:hash: * distinct chunk texts in 3 snapshots: * encoded (* s)"])
    assert "from the vector cache" not in cold.stdout.str()  # a cold cache: every distinct text encoded
    first = records(release_bench, "embed:hash")
    packs = sorted((release_bench.path / "cache" / "vectors").rglob("*.vec"))
    assert len(packs) == 3  # one encode call per snapshot
    packs[0].write_bytes(packs[0].read_bytes()[:-7])  # truncated
    result = run(release_bench, "--bench-arms=embed:hash")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*vector cache entry*unreadable*encoded again*",
                                 "retrieval-bench: embedding arm embed:hash: * in 3 snapshots: * encoded (* s), the other * from the vector cache"])
    assert {key: value["ranking"] for key, value in records(release_bench, "embed:hash").items()} == \
        {key: value["ranking"] for key, value in first.items()}
    warm = run(release_bench, "--bench-arms=embed:hash")
    warm.stdout.fnmatch_lines(["retrieval-bench: embedding arm embed:hash: * distinct chunk texts in 3 snapshots: all from the vector cache"])


def test_wordllama_runs_offline_and_fuses_with_bm25(release_bench: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("wordllama")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    release_bench.makeconftest(NO_NETWORK)
    result = run(release_bench, "--bench-arms=embed:wordllama,bm25:all", "--bench-fuse=hybrid=bm25:all,embed:wordllama")
    assert result.ret == 0, result.stdout.str()
    dense = records(release_bench, "embed:wordllama")
    assert all(record["error"] is None for record in dense.values())
    assert sum(record["metrics"].get("hit@20", 0.0) for record in dense.values()) > 0
    assert all(record["error"] is None for record in records(release_bench, "hybrid").values())


WRONG_SHAPE = """
import numpy as np
from pytest_retrieval_bench import embedding_arm

class Flat:
    def encode(self, texts, batch_size=32):
        return np.zeros(len(texts) + 1, dtype=np.float32)

def pytest_retrieval_bench_arms(config):
    return [embedding_arm("flat", Flat())]
"""


def test_an_embedder_of_the_wrong_shape_is_an_error_naming_the_arm(release_bench: pytest.Pytester) -> None:
    release_bench.makeconftest(WRONG_SHAPE)
    result = run(release_bench, "--bench-arms=flat", "--bench-max-samples=2")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*arm 'flat': the embedder returned shape (*) for * expected (*, dim)*"])


def test_a_model_without_sentence_transformers_is_an_error_saying_what_to_install(release_bench: pytest.Pytester) -> None:
    release_bench.syspathinsert()  # nothing named sentence_transformers on it
    result = run(release_bench, "--bench-arms=embed:some/model", "--bench-max-samples=1")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*arm 'embed:some/model': model 'some/model' needs sentence-transformers (pip install*"])


STAND_IN = """
import json
import numpy as np

class SentenceTransformer:
    def __init__(self, name, **kwargs):
        if name == "missing/model":
            raise OSError("no such model folder")
        self.name = name
        with open("st-calls.jsonl", "a") as out:
            out.write(json.dumps({"init": name, "kwargs": kwargs}) + "\\n")

    def get_sentence_embedding_dimension(self):
        return 8

    def encode(self, texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=False, show_progress_bar=True):
        with open("st-calls.jsonl", "a") as out:
            out.write(json.dumps({"texts": [t[:20] for t in texts], "batch_size": batch_size,
                                  "normalize": normalize_embeddings, "bar": show_progress_bar}) + "\\n")
        return np.array([[len(t) % 7, 1, 0, 0, 0, 0, 0, 1] for t in texts], dtype=np.float32)
"""


def st_calls(pytester: pytest.Pytester) -> list[dict]:
    return [json.loads(line) for line in (pytester.path / "st-calls.jsonl").read_text().splitlines()]


def test_a_sentence_transformers_model_is_loaded_and_called_as_the_bench_does(release_bench: pytest.Pytester) -> None:
    (release_bench.path / "sentence_transformers.py").write_text(STAND_IN)
    release_bench.makeconftest("import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n")
    result = run(release_bench, "--bench-arms=embed:team/model", "--bench-max-samples=3", "--bench-embed-query-prefix=query: ",
                 "--bench-embed-passage-prefix=passage: ", "--bench-embed-batch-size=4")
    assert result.ret == 0, result.stdout.str()
    calls = st_calls(release_bench)
    assert calls[0] == {"init": "team/model", "kwargs": {"device": "cpu"}}  # no torch here: cpu; no remote code unless asked
    encodes = [call for call in calls if "texts" in call]
    assert all(call["batch_size"] == 4 and call["normalize"] is True and call["bar"] is False for call in encodes)
    assert any(call["texts"][0].startswith("passage: path: ") for call in encodes)
    assert any(call["texts"] == [call["texts"][0]] and call["texts"][0].startswith("query: {") for call in encodes)
    (release_bench.path / "st-calls.jsonl").unlink()
    result = run(release_bench, "--bench-arms=embed:team/model", "--bench-max-samples=1", "--bench-embed-device=cuda:1",
                 "--bench-embed-trust-remote-code", "--bench-embed-normalize=false", "--bench-no-cache")
    assert result.ret == 0, result.stdout.str()
    calls = st_calls(release_bench)
    assert calls[0]["kwargs"] == {"device": "cuda:1", "trust_remote_code": True}
    assert all(call["normalize"] is False for call in calls if "texts" in call)
    result = run(release_bench, "--bench-arms=embed:missing/model", "--bench-max-samples=1")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*arm 'embed:missing/model': model 'missing/model' could not be loaded: OSError: no such model folder*"])


def test_a_second_commit_encodes_only_the_texts_it_does_not_share(tmp_path: Path) -> None:
    store = VectorStore(tmp_path)
    embedder = HashingEmbedder(dimension=16)
    encoded: list[list[str]] = []

    def encode(texts: list[str]) -> np.ndarray:
        encoded.append(texts)
        return embedder.encode(texts)

    first, fresh = vectors_for(["a b", "c d", "e f"], "model", store, 16, encode)
    assert fresh == 3
    second, fresh = vectors_for(["c d", "a b", "g h"], "model", store, 16, encode)
    assert fresh == 1 and encoded[-1] == ["g h"]
    assert np.array_equal(second[:2], first[[1, 0]])
    assert np.array_equal(second, embedder.encode(["c d", "a b", "g h"]))
    _, fresh = vectors_for(["a b"], "another model", store, 16, encode)
    assert fresh == 1  # vectors of one model are never another's


def test_distinct_texts_are_encoded_in_the_bench_s_windows_and_each_window_is_kept_as_it_comes(tmp_path: Path) -> None:
    from pytest_retrieval_bench.index.vectors import encode_window

    assert [encode_window(size) for size in (1, 2, 32, 64)] == [256, 256, 4096, 4096]  # the bench's window rule
    store = VectorStore(tmp_path)
    embedder = HashingEmbedder(dimension=8)
    texts = [f"text {number % 7}" for number in range(12)]  # 7 distinct texts, repeated
    calls: list[list[str]] = []
    heard: list[tuple[int, int]] = []

    def encode(batch: list[str]) -> np.ndarray:
        calls.append(batch)
        return embedder.encode(batch)

    vectors, fresh = vectors_for(texts, "model", store, 8, encode, window=3, progress=lambda done, total: heard.append((done, total)))
    assert fresh == 7
    assert calls == [["text 0", "text 1", "text 2"], ["text 3", "text 4", "text 5"], ["text 6"]]  # first appearance, 3 at a time
    assert heard == [(3, 7), (6, 7), (7, 7)]
    assert np.array_equal(vectors, embedder.encode(texts))

    def interrupted(batch: list[str]) -> np.ndarray:
        if "new 3" in batch:
            raise KeyboardInterrupt
        return embedder.encode(batch)

    more = [f"new {number}" for number in range(6)]
    with pytest.raises(KeyboardInterrupt):
        vectors_for(more, "model", store, 8, interrupted, window=3)
    calls.clear()
    _, fresh = vectors_for(more, "model", store, 8, encode, window=3)
    assert fresh == 3 and calls == [["new 3", "new 4", "new 5"]]  # the window done before the interrupt was kept


def _encode_into(directory: str, order: int) -> int:
    """One writer of the concurrent-writers test: the shared texts in its own order, its own texts too."""
    embedder = HashingEmbedder(dimension=8)
    texts = [f"shared {number}" for number in range(40)][::1 if order % 2 else -1] + [f"own {order} {number}" for number in range(10)]
    vectors, _ = vectors_for(texts, "model", VectorStore(Path(directory)), 8, embedder.encode, window=6)
    return int(np.array_equal(vectors, embedder.encode(texts)))


def test_concurrent_writers_share_one_store_and_every_vector_read_back_is_sound(tmp_path: Path) -> None:
    """xdist workers and concurrent runs write packs at once: each pack is written whole under its
    content's name, so every writer and a later reader find only sound packs."""
    import multiprocessing
    import warnings

    with multiprocessing.get_context("spawn").Pool(4) as pool:
        assert pool.starmap(_encode_into, [(str(tmp_path), order) for order in range(8)]) == [1] * 8
    assert not list(tmp_path.rglob(".tmp-*"))  # no temporary file left behind
    texts = [f"shared {number}" for number in range(40)] + [f"own {order} {number}" for order in range(8) for number in range(10)]

    def must_not_encode(batch: list[str]) -> np.ndarray:
        raise AssertionError(f"encoded again: {batch[:3]}")

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a pack found unreadable would warn
        vectors, fresh = vectors_for(texts, "model", VectorStore(tmp_path), 8, must_not_encode)
    assert fresh == 0 and np.array_equal(vectors, HashingEmbedder(dimension=8).encode(texts))


def test_two_xdist_workers_encoding_the_same_snapshots_at_once_leave_a_sound_cache(release_bench: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    cold = run(release_bench, "--bench-arms=embed:hash", "-n", "2", "--dist", "load")  # both workers set every snapshot up
    assert cold.ret == 0, cold.stdout.str()[-2000:]
    first = {key: value["ranking"] for key, value in records(release_bench, "embed:hash").items()}
    warm = run(release_bench, "--bench-arms=embed:hash", "-W", "error::pytest_retrieval_bench.index.cache_writes.CacheWarning")
    assert warm.ret == 0, warm.stdout.str()[-2000:]
    assert "unreadable" not in warm.stdout.str()
    assert {key: value["ranking"] for key, value in records(release_bench, "embed:hash").items()} == first


def test_one_store_finds_packs_written_after_its_first_look_and_a_pack_written_anew_under_its_name(tmp_path: Path) -> None:
    embedder = HashingEmbedder(dimension=8)
    reader, writer = VectorStore(tmp_path), VectorStore(tmp_path)

    def must_not_encode(batch: list[str]) -> np.ndarray:
        raise AssertionError(f"encoded again: {batch}")

    assert vectors_for(["a"], "model", reader, 8, embedder.encode)[1] == 1
    assert vectors_for(["a"], "model", reader, 8, must_not_encode)[1] == 0  # the reader has read the folder's lists
    assert vectors_for(["b"], "model", writer, 8, embedder.encode)[1] == 1  # another process's pack, after the reader's look
    assert vectors_for(["a", "b"], "model", reader, 8, must_not_encode)[1] == 0
    for path in (tmp_path / "model").glob("*.vec"):
        path.write_bytes(path.read_bytes()[:-3])  # every pack truncated
    with pytest.warns(UserWarning, match="unreadable"):
        assert vectors_for(["a", "b"], "model", reader, 8, embedder.encode)[1] == 2  # dropped, encoded and written anew
    assert vectors_for(["a", "b"], "model", reader, 8, must_not_encode)[1] == 0  # the same names, read again
