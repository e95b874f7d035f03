"""The RepoMap's file graph as arrays, and its source-test pairs.

The bench adds its edges one call at a time to a dictionary per node (`graph[a][b] += w` and
`graph[b][a] += w`), so a node's neighbours are listed in the order of their first edge and a
weight is the sum of its edges in call order. `EdgeCalls` keeps the calls as arrays and gives
the same lists with one sort: each directed pair's first call and its weights summed in call
order (`np.add.reduceat` adds left to right), then the pairs by node, first call first.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import PurePosixPath
from typing import Sequence

import numpy as np

from pytest_retrieval_bench.index.distinct import lex_order, run_starts
from pytest_retrieval_bench.index.path_kinds import is_plain_path, split_path

PAIRED_FILES = 20
TEST_MARKERS = frozenset({"test", "tests", "testing", "__tests__", "testsuite", "testsuites"})


class EdgeCalls:
    """Undirected weighted edge additions between node positions, in call order."""

    def __init__(self) -> None:
        self._left: list[np.ndarray] = []
        self._right: list[np.ndarray] = []
        self._weights: list[np.ndarray] = []

    def add(self, left: Sequence[int] | np.ndarray, right: Sequence[int] | np.ndarray, weight: float) -> None:
        """One call per pair `left[i], right[i]`, in order; a node is never joined to itself."""
        a, b = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
        keep = a != b
        self._left.append(a[keep])
        self._right.append(b[keep])
        self._weights.append(np.full(int(keep.sum()), weight, dtype=np.float64))

    def csr(self, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(offsets, targets, weights): node i's neighbours are `targets[offsets[i]:offsets[i + 1]]`."""
        left = np.concatenate([np.zeros(0, dtype=np.int64), *self._left])
        right = np.concatenate([np.zeros(0, dtype=np.int64), *self._right])
        weights = np.concatenate([np.zeros(0, dtype=np.float64), *self._weights])
        calls = np.arange(len(left), dtype=np.int64)
        sources, targets = np.concatenate((left, right)), np.concatenate((right, left))
        calls, weights = np.concatenate((calls, calls)), np.concatenate((weights, weights))
        pairs = sources * max(size, 1) + targets
        order = lex_order((pairs, max(size, 1) ** 2), (calls, len(left)))  # by pair, each pair's calls in call order
        pairs, calls, weights = pairs[order], calls[order], weights[order]
        starts = np.flatnonzero(run_starts(pairs))
        summed = np.add.reduceat(weights, starts) if len(starts) else weights
        firsts, pairs = calls[starts], pairs[starts]
        sources, targets = np.divmod(pairs, max(size, 1))
        listed = lex_order((sources, size), (firsts, len(left)))  # by node, neighbours in the order of their first call
        offsets = np.zeros(size + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(np.bincount(sources, minlength=size))
        return offsets, targets[listed].astype(np.int32), summed[listed]


def source_test_keys(path: str) -> list[str]:
    """The bench's `canonical_test_source_keys`: the stem without test affixes, and `module:stem`."""
    stem = split_path(path)[2].lower()
    for suffix in ("_test", "test", "tests", ".test", ".spec", "_spec"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    for prefix in ("test_", "tests_"):
        if stem.startswith(prefix):
            stem = stem[len(prefix) :]
    stem = re.sub(r"[^a-z0-9]+", "", stem)
    if len(stem) < 3:
        return []
    directories = path.split("/")[:-1] if is_plain_path(path) else PurePosixPath(path).parent.parts
    parents = [part.lower() for part in directories if part.lower() not in TEST_MARKERS]
    return [stem, f"{parents[-1]}:{stem}"] if parents and parents[-1] else [stem]


def source_test_pairs(paths: list[str], kinds: list[str]) -> tuple[list[int], list[int]]:
    """(source node, test node) for each source-test edge, in the bench's order: keys in the order
    their first test names them, at most `PAIRED_FILES` sources and tests a key."""
    sources: dict[str, list[int]] = defaultdict(list)
    tests: dict[str, list[int]] = defaultdict(list)
    for position, (path, kind) in enumerate(zip(paths, kinds)):
        if kind == "other":
            continue
        for key in source_test_keys(path):
            (tests if kind == "test" else sources)[key].append(position)
    left: list[int] = []
    right: list[int] = []
    for key, paired_tests in tests.items():
        for source in sources.get(key, [])[:PAIRED_FILES]:
            left.extend([source] * len(paired_tests[:PAIRED_FILES]))
            right.extend(paired_tests[:PAIRED_FILES])
    return left, right
