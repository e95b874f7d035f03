"""arb-repomap: the bench's RepoMap ranker, checked against rankings recorded from the bench itself.

`tests/fixtures/arb_reference/repomap.json` holds what `agent_retrieval_bench.repomap_eval`
returns for every sample of the bundled release (see the fixture README); the arm must give the
same paths and the same final scores, bit for bit, and the map must be the same whatever the
interpreter's string-hash seed.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.arms.repomap import QueryView, RepoMapArm, file_scores, personalized_pagerank, plain_sum, rank_files
from pytest_retrieval_bench.corpus.chunks import find_chunk_file, read_chunk_file
from pytest_retrieval_bench.index.cache import IndexCache, cache_key, decode, encode
from pytest_retrieval_bench.index.path_kinds import file_kind, is_code_path, is_test_path
from pytest_retrieval_bench.index.chunk_index import file_chunks
from pytest_retrieval_bench.index.repomap import build_repomap, import_specs, resolve_import, source_test_keys
from pytest_retrieval_bench.samples.arb import query_text_for_eval, shown_given_files

ROOT = Path(__file__).resolve().parent.parent
RELEASE_CORPUS = ROOT / "testdata" / "release" / "corpus" / "synthetic_v1"
RELEASE_SAMPLES = ROOT / "testdata" / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
FIXTURE = ROOT / "tests" / "fixtures" / "arb_reference" / "repomap.json"
COMMIT = "c" * 40


def request_for(sample: dict[str, Any], snapshot: Any = None) -> Request:
    query = sample.get("query") or {}
    task = sample.get("task_type", "")
    return Request(sample_id=sample["id"], task_type=task, repo=sample["repo"], base_commit=sample["base_commit"], query=query,
                   query_text=query_text_for_eval(query), changed_file=None, k=20, snapshot=snapshot,
                   given_files=tuple(shown_given_files(task, sample.get("gold") or {}, query)))


@functools.lru_cache(maxsize=None)
def release_cases() -> tuple[tuple[dict[str, Any], Any, dict[str, Any]], ...]:
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))["samples"]
    snapshots: dict[tuple[str, str], Any] = {}
    cases = []
    for line in RELEASE_SAMPLES.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        sample = json.loads(line)
        key = (sample["repo"], sample["base_commit"])
        if key not in snapshots:
            snapshot = read_chunk_file(find_chunk_file(RELEASE_CORPUS, *key), *key)  # type: ignore[arg-type]
            snapshot.index_loader = lambda s, kind, rows=list(snapshot.chunk_rows or []): build_repomap(rows)
            snapshots[key] = snapshot
        cases.append((sample, snapshots[key], recorded[sample["id"]]))
    return tuple(cases)


def test_rankings_and_scores_equal_the_bench_bit_for_bit() -> None:
    """On every supported Python: the recorded scores were summed left to right (Python's `sum`
    before 3.12), and the arm sums that way on every interpreter. The bench run on 3.12 or later
    compensates its sums and can differ from both in a score's last bit."""
    cases = release_cases()
    assert len(cases) == len(json.loads(FIXTURE.read_text(encoding="utf-8"))["samples"]) >= 30
    tasks = set()
    for sample, snapshot, recorded in cases:
        index = snapshot.repomap_index()
        view = QueryView.of(index)
        request = request_for(sample, snapshot)
        ranking = rank_files(index, view, request)
        assert ranking[:50] == recorded["paths"], sample["id"]
        scores = file_scores(index, view, request)
        position = {path: number for number, path in enumerate(index.paths)}
        assert [repr(float(scores[position[path]])) for path in recorded["paths"]] == recorded["scores"], sample["id"]
        assert RepoMapArm().retrieve(request).ranking == [path for path in ranking if path in snapshot.path_set()]
        tasks.add(sample.get("task_type"))
    assert {"code2test", "comment2context", "trace2code"} <= tasks  # every affinity rule is exercised


def test_map_statistics_equal_the_bench() -> None:
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))["map_stats"]
    seen = {}
    for sample, snapshot, _ in release_cases():
        stats = dict(snapshot.repomap_index().stats)
        stats["symbol_reference_scan_skipped"] = bool(stats["symbol_reference_scan_skipped"])
        seen[snapshot.key] = stats
    assert seen == recorded


def _map_digest_script() -> str:
    return (
        "import hashlib, json, sys\n"
        "from pytest_retrieval_bench.corpus.chunks import find_chunk_file, read_chunk_file\n"
        "from pytest_retrieval_bench.index.repomap import build_repomap\n"
        "from pytest_retrieval_bench.index.cache import encode\n"
        "corpus, repo, commit = sys.argv[1:4]\n"
        "from pathlib import Path\n"
        "rows = read_chunk_file(find_chunk_file(Path(corpus), repo, commit), repo, commit).chunk_rows\n"
        "print(hashlib.sha256(encode('k', build_repomap(rows))).hexdigest())\n"
    )


def test_the_map_does_not_depend_on_the_string_hash_seed() -> None:
    """Where the bench iterates sets, the map iterates sorted: the same arrays under any seed."""
    sample, snapshot, _ = release_cases()[0]
    digests = set()
    for seed in ("0", "1", "12345"):
        result = subprocess.run([sys.executable, "-c", _map_digest_script(), str(RELEASE_CORPUS), snapshot.repo, snapshot.commit],
                                capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed}, check=True)
        digests.add(result.stdout.strip())
    assert len(digests) == 1


def _maps_with_steps(monkeypatch: Any, module: Any, **steps: int) -> list[tuple[Any, Any]]:
    """Each bundled snapshot's map built with the default steps, and with `module`'s step
    constants set to `steps`."""
    maps = []
    for key in sorted({(snapshot.repo, snapshot.commit) for _, snapshot, _ in release_cases()}):
        rows = read_chunk_file(find_chunk_file(RELEASE_CORPUS, *key), *key).chunk_rows or []
        default = build_repomap(rows)
        for name, value in steps.items():
            monkeypatch.setattr(module, name, value)
        maps.append((default, build_repomap(rows)))
        monkeypatch.undo()
    return maps


def test_the_symbol_scan_gives_the_same_edges_whatever_its_step(monkeypatch: Any) -> None:
    """The scan counts a few files at a time: one file a step gives the same maps as the default steps."""
    from pytest_retrieval_bench.index import repomap_symbols

    maps = _maps_with_steps(monkeypatch, repomap_symbols, SCAN_PAIRS=1, SCAN_CELLS=1)
    assert all(encode("k", default) == encode("k", single) for default, single in maps)
    assert any(default.stats["symbol_reference_scan_skipped"] == 0 and default.stats["edge_count"] > 0 for default, _ in maps)  # one was scanned


def test_node_tokens_split_and_counted_a_few_nodes_at_a_time_give_the_same_maps(monkeypatch: Any) -> None:
    """Node tokens are split a range of nodes at a time and counted a batch of nodes at a time:
    ranges and batches as small as they go (every node on its own) give the same maps."""
    from pytest_retrieval_bench.index import repomap

    maps = _maps_with_steps(monkeypatch, repomap, EXPAND_PAIRS=1, BATCH_TOKENS=1)
    assert all(encode("k", default) == encode("k", small) for default, small in maps)
    assert any(len(default.postings.docs) > len(default.paths) > 1 for default, _ in maps)  # so several ranges and batches


@pytest.mark.parametrize("rows", [[], [{"path": "blob.bin", "kind": "file", "text": ""}]], ids=["no-rows", "one-empty-file"])
def test_a_map_of_no_tokens_is_built_and_cached(rows: list[dict[str, Any]]) -> None:
    """A snapshot with no text (no rows, or one empty file) gives a map whose only tokens are
    its paths' (`blob`, `bin`, path class 3) and no edges, as the build in one piece did; it
    survives the cache."""
    built = build_repomap(rows)
    assert len(built.paths) == len(rows) and built.edge_offsets.tolist() == [0] * (len(rows) + 1)
    assert built.postings.docs.tolist() == [0] * (2 * len(rows)) and built.postings.counts.tolist() == [3] * (2 * len(rows))
    assert built.stats["file_count"] == len(rows) and built.stats["edge_count"] == 0
    again = decode(cache_key("d", "repomap"), "repomap", encode(cache_key("d", "repomap"), built))
    assert encode("k", again) == encode("k", built)


def _scan_by_counters(files: dict[int, list[int]], keys_of_token: list[list[int]], part_counts: list[int],
                      definers: list[list[int]]) -> list[tuple[int, int]]:
    """The bench's loop over each file (tokens and keys in sorted order), with a Counter per file."""
    from collections import Counter

    from pytest_retrieval_bench.index.repomap_symbols import KEPT_KEYS, SYMBOL_REFS_PER_FILE

    edges = []
    for file, tokens in sorted(files.items()):
        counted: Counter[int] = Counter()
        for token in sorted(tokens):
            for key in keys_of_token[token]:
                counted[key] += 1
        seen: set[int] = set()
        for key, matched in counted.most_common(KEPT_KEYS):
            if matched < part_counts[key]:
                continue
            for target in definers[key]:
                if target != file and target not in seen and len(seen) < SYMBOL_REFS_PER_FILE:
                    seen.add(target)
                    edges.append((file, target))
    return edges


def test_the_symbol_scan_ranks_keys_as_most_common_does() -> None:
    """Files with more keys than they keep, many ties at the cut-off count: the scan's edges are
    those of a Counter per file, ranked by `most_common` (count, then first counted)."""
    from pytest_retrieval_bench.index.repomap_symbols import _scan

    rng = np.random.default_rng(7)
    node_count, token_count, key_count = 400, 300, 3000  # few edges a file: the cut-off decides which keys make them
    keys_of_token = [sorted(set(rng.integers(0, key_count, size=int(rng.integers(1, 12))).tolist())) for _ in range(token_count)]
    part_counts = rng.integers(1, 7, size=key_count).tolist()
    definers = [sorted(set(rng.integers(0, node_count, size=int(rng.integers(1, 3))).tolist())) for _ in range(key_count)]
    files = {file: sorted(set(rng.integers(0, token_count, size=int(rng.integers(1, 250))).tolist())) for file in range(0, node_count, 8)}
    docs = np.array([file for file, tokens in sorted(files.items()) for _ in tokens], dtype=np.int64)
    ranks = np.array([token for _, tokens in sorted(files.items()) for token in tokens], dtype=np.int64)
    key_offsets = np.concatenate(([0], np.cumsum([len(found) for found in keys_of_token]))).astype(np.int64)
    definer_offsets = np.concatenate(([0], np.cumsum([len(found) for found in definers]))).astype(np.int64)
    referring, defining = _scan(docs, ranks, key_offsets, np.array([key for found in keys_of_token for key in found], dtype=np.int64),
                                np.array(part_counts, dtype=np.int64), definer_offsets,
                                np.array([node for found in definers for node in found], dtype=np.int64), key_count, node_count)
    expected = _scan_by_counters(files, keys_of_token, part_counts, definers)
    assert list(zip(referring.tolist(), defining.tolist())) == expected
    assert len(expected) > 100


def test_cache_round_trip_keeps_the_ranking() -> None:
    sample, snapshot, recorded = release_cases()[0]
    index = snapshot.repomap_index()
    key = cache_key("d" * 64, "repomap")
    loaded = decode(key, "repomap", encode(key, index))
    assert loaded.paths == index.paths and loaded.stats == index.stats
    for name in ("kinds", "token_sizes", "edge_offsets", "edge_targets", "edge_weights"):
        assert np.array_equal(getattr(loaded, name), getattr(index, name)), name
    assert rank_files(loaded, QueryView.of(loaded), request_for(sample))[:50] == recorded["paths"]
    assert cache_key("d" * 64, "repomap") != cache_key("d" * 64, "chunks")


def test_cache_store_and_load(tmp_path: Path) -> None:
    sample, snapshot, recorded = release_cases()[1]
    cache = IndexCache(tmp_path)
    cache.store("e" * 64, "repomap", snapshot.repomap_index())
    loaded = cache.load("e" * 64, "repomap")
    assert loaded is not None and loaded.paths == snapshot.repomap_index().paths
    assert cache.load("e" * 64, "chunks") is None


# -- the map's rules, on tiny inputs where the expected graph is known by hand ------------------


def _tree(files: dict[str, str]) -> Any:
    return build_repomap(file_chunks(sorted(files.items())))


def _edges(index: Any) -> dict[tuple[str, str], float]:
    out = {}
    for node, path in enumerate(index.paths):
        start, end = index.edge_offsets[node], index.edge_offsets[node + 1]
        for target, weight in zip(index.edge_targets[start:end].tolist(), index.edge_weights[start:end].tolist()):
            out[(path, index.paths[target])] = weight
    return out


def test_a_tree_maps_its_text_files_with_import_and_test_pair_edges() -> None:
    index = _tree({
        "pkg/router.py": "from pkg.handlers import handle_request\n",
        "pkg/handlers.py": "def handle_request(): pass\n",
        "tests/test_router.py": "import pkg.router\n",
        "README.md": "# docs\n",
    })
    edges = _edges(index)
    assert index.paths == ["README.md", "pkg/handlers.py", "pkg/router.py", "tests/test_router.py"]  # path order
    assert edges[("pkg/router.py", "pkg/handlers.py")] == 1.5 and edges[("pkg/handlers.py", "pkg/router.py")] == 1.5
    # an import (1.5) and the router/test_router name pair (2.0) add up on the same edge
    assert edges[("tests/test_router.py", "pkg/router.py")] == 3.5
    assert not any("README.md" in pair for pair in edges)
    assert index.stats["symbol_count"] == 0  # a tree has no symbol rows
    assert [int(kind) for kind in index.kinds] == [0, 1, 1, 2]


def test_path_kinds_follow_the_bench() -> None:
    assert file_kind("src/app.py") == "source" and file_kind("tests/test_app.py") == "test"
    assert file_kind("docs/conf.py") == "other"  # a noise directory
    assert file_kind("web/app.spec.ts") == "test" and file_kind("README.md") == "other"
    assert is_test_path("src/FooTest.java") and not is_code_path("vendor/lib.go")
    assert file_kind("testdata/fixture.json") == "other"  # a test location, but not code


_PATH_PIECES = st.sampled_from(["a", "b", "/", ".", "_", "\\", "test", "tests", "Testing", "__tests__", "docs", "vendor", "README",
                                "CHANGELOG", "license.md", "x.py", ".PY", ".spec.ts", "_test.go", "Test.java", "test_", "..", "//"])


@given(st.lists(_PATH_PIECES, max_size=8).map("".join))
@settings(max_examples=500, deadline=None)
def test_file_kind_is_the_bench_test_rule_then_its_code_rule(path: str) -> None:
    """The one-pass `file_kind` is `is_test_path`, else `is_code_path` (the bench's rules as written)."""
    expected = "test" if is_test_path(path) else "source" if is_code_path(path) else "other"
    assert file_kind(path) == expected


def test_import_specs_and_resolution() -> None:
    assert import_specs("from .models import User\n// import x\nconst a = require('./util')\n#include \"io.h\"\n") == [".models", "./util", "io.h"]
    paths = {"pkg/models.py", "pkg/util.js", "include/io.h", "pkg/__init__.py"}
    from pytest_retrieval_bench.index.repomap_imports import module_names as _module_names

    names = _module_names(sorted(paths))
    assert resolve_import(".models", "pkg/views.py", names) == ["pkg/models.py"]
    assert resolve_import("./util", "pkg/index.js", names) == ["pkg/util.js"]
    assert resolve_import("io.h", "src/main.c", names) == ["include/io.h"]  # by its file name
    assert resolve_import("..", "pkg/sub/x.py", names) == ["pkg/__init__.py"]


def test_module_names_for_wanted_names_are_the_full_tables_entries() -> None:
    """The filtered table (files passed over by their name tails) holds exactly the full table's
    entries for the wanted names: dotted stems, non-ASCII and non-normal paths included."""
    from pytest_retrieval_bench.index.repomap_imports import module_names

    paths = ["pkg/models.py", "web/app.spec.ts", "web/index.test.js", "src/Ünï/Mod.rs", "a/b/c/d/e/f.go", "./odd/path.py",
             "lib/x.", "README", "pkg/__init__.py", "deep/a.b/c.d.py", "include/io.h"]
    full = module_names(paths)
    for wanted in [set(full), {"app.spec", "web.app.spec", "f", "c.d", "ünï/mod", "x.", "readme", "absent/name"}, {"models"}, {"io.h"}, set()]:
        filtered = module_names(paths, wanted)
        assert dict(filtered) == {name: full[name] for name in wanted if name in full}


def test_test_source_keys() -> None:
    assert source_test_keys("tests/test_router.py") == ["router"]
    assert source_test_keys("binding/json_test.go") == ["json", "binding:json"]
    assert source_test_keys("a/io_test.go") == []  # a stem under three characters pairs with nothing


def left_to_right(values: Any) -> float:
    total = 0.0
    for value in values:
        total += value
    return total


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(min_value=-1e300, max_value=1e300, allow_nan=False), max_size=40))
def test_plain_sum_adds_left_to_right_whatever_the_interpreters_sum_does(values: list[float]) -> None:
    assert plain_sum(np.asarray(values, dtype=np.float64)) == left_to_right(values)


def test_plain_sum_keeps_the_rounding_of_each_addition() -> None:
    assert plain_sum(np.array([1e16, 1.0, -1e16])) == 0.0  # exactly rounded, or compensated: 1.0
    assert plain_sum(np.array([0.1] * 10)) == 0.9999999999999999
    assert plain_sum(np.zeros(0)) == 0.0


def test_pagerank_matches_the_sequential_definition() -> None:
    """The vectorised iteration against the bench's loop written out, on a graph with a dangling node."""
    index = _tree({"a.py": "import b\nimport c\n", "b.py": "import c\n", "c.py": "", "d.py": ""})
    seeds = np.array([0.5, 0.0, 2.0, 0.25])
    got = personalized_pagerank(index, seeds)
    edges = _edges(index)
    nodes = index.paths
    total = left_to_right(seeds.tolist())
    base = {node: seeds[i] / total for i, node in enumerate(nodes)}
    out = {node: left_to_right(weight for (source, _), weight in edges.items() if source == node) for node in nodes}
    ranks = dict(base)
    for _ in range(24):
        following = {node: (1.0 - 0.85) * base[node] for node in nodes}
        dangling = left_to_right(ranks[node] for node in nodes if out[node] <= 0)
        if dangling:
            for node in nodes:
                following[node] += 0.85 * dangling * base[node]
        for node in nodes:
            if out[node] > 0:
                share = 0.85 * ranks[node] / out[node]
                for (source, target), weight in edges.items():
                    if source == node:
                        following[target] += share * weight
        ranks = following
    assert [float(value) for value in got] == [ranks[node] for node in nodes]
    assert out["d.py"] == 0 and ranks["d.py"] > 0
