"""`arb-repomap`: the bench's aider-style RepoMap ranker, frozen (`repomap_eval.rank_files_for_sample`).

A query scores every file node by its tokens (idf, path tokens 3x, symbol tokens 2x, path and
basename bonuses, sqrt norm), adds a task affinity (files the query names and their graph
neighbours; tests for code2test; the given file's neighbours for comment2context; sources for
trace2code), seeds a personalized PageRank over the snapshot's map with both, and ranks by
0.65 query + 0.25 PageRank + 0.10 affinity, each scaled by its maximum; ties by path.

Every float is computed in the bench's operation order, so the ranking is the bench's bit for
bit: per-node sums run over query tokens in first-occurrence order, PageRank adds each edge's
share in node order (`np.add.at` is sequential), and the two sums the bench takes with Python's
`sum` (the seeds' total and each step's dangling mass) are taken left to right (`plain_sum`).
Python's `sum` added left to right up to 3.11; from 3.12 it compensates, so the bench's last
bits now depend on the interpreter it runs on. This arm's do not: its scores are the bench's as
recorded with a left-to-right `sum`, on every Python the project supports.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, ClassVar, Iterable

import numpy as np

from pytest_retrieval_bench.arms.base import Answer, Request
from pytest_retrieval_bench.arms.lexical import NOT_APPLICABLE, RANKING_CAP
from pytest_retrieval_bench.index.repomap import KIND_CODES, REPOMAP_VERSION, RepoMapIndex, idf
from pytest_retrieval_bench.index.tokens import TOKENIZER_VERSION, bench_tokens

QUERY_WEIGHT, PAGERANK_WEIGHT, AFFINITY_WEIGHT = 0.65, 0.25, 0.10
DAMPING = 0.85
ITERATIONS = 24
PATH_BONUS, BASENAME_BONUS = 20.0, 7.0
QUERY_PATH_KEYS = ("changed_file", "given_file", "path")
QUERY_PATH_LIST_KEYS = ("implementation_files", "changed_files")


@dataclass
class QueryView:
    """What one query needs of the map besides the arrays: lowered paths and basenames, node positions."""

    lowered: list[str]
    basenames: list[str]
    positions: dict[str, int]

    @classmethod
    def of(cls, index: RepoMapIndex) -> "QueryView":
        return cls(lowered=[path.lower() for path in index.paths],
                   basenames=[PurePosixPath(path).name.lower() for path in index.paths],
                   positions={path: position for position, path in enumerate(index.paths)})


def query_scores(index: RepoMapIndex, view: QueryView, query_text: str) -> np.ndarray:
    size = len(index.paths)
    scores = np.zeros(size, dtype=np.float64)
    tokens = bench_tokens(query_text)
    if not tokens:
        return scores
    for token, count in Counter(tokens).items():
        docs, classes = index.postings.get(token)
        if len(docs):
            weight = idf(size, len(docs)) * classes.astype(np.float64)  # class 1 leaves the idf as it is
            scores[docs] += (1.0 + math.log(count)) * weight
    lowered_query = query_text.lower()
    for position in range(size):
        lowered = view.lowered[position]
        if lowered and lowered in lowered_query:
            scores[position] += PATH_BONUS
        basename = view.basenames[position]
        if basename and basename in lowered_query:
            scores[position] += BASENAME_BONUS
    return scores / np.maximum(1.0, np.sqrt(index.token_sizes.astype(np.float64)))


def mentioned_nodes(view: QueryView, query: Any, query_text: str) -> list[int]:
    """Nodes the query names: its path fields, and every path appearing in its text (sorted)."""
    explicit: set[str] = set()
    fields = query if isinstance(query, dict) else {}
    for key in QUERY_PATH_KEYS:
        if isinstance(fields.get(key), str):
            explicit.add(fields[key])
    for key in QUERY_PATH_LIST_KEYS:
        if isinstance(fields.get(key), list):
            explicit.update(str(value) for value in fields[key] if value)
    found = {view.positions[path] for path in explicit if path in view.positions}
    lowered_query = query_text.lower()
    found.update(position for position, lowered in enumerate(view.lowered) if lowered in lowered_query)
    return sorted(found)


def affinity_scores(index: RepoMapIndex, view: QueryView, request: Request) -> np.ndarray:
    scores = np.zeros(len(index.paths), dtype=np.float64)
    for node in mentioned_nodes(view, request.query, request.query_text):
        scores[node] += 0.4
        scores[index.neighbors(node)] += 1.0  # each neighbour once per node
    if request.task_type == "code2test":
        scores[index.kinds == KIND_CODES["test"]] += 1.0
    elif request.task_type == "comment2context":
        for path in request.given_files:
            node = view.positions.get(path)
            if node is not None:
                scores[node] -= 1.0
                scores[index.neighbors(node)] += 0.8
    elif request.task_type == "trace2code":
        scores[index.kinds == KIND_CODES["source"]] += 0.5
        scores[index.kinds == KIND_CODES["test"]] -= 0.2
    return scores


def plain_sum(values: np.ndarray) -> float:
    """values[0] + values[1] + ... in that order, one rounding per addition (0.0 when empty).

    What Python's `sum` gave before 3.12, whose compensated sum (and numpy's pairwise one) can
    differ in the last bit; each partial sum of `np.cumsum` is the previous one plus the next value.
    """
    return float(np.cumsum(values)[-1]) if len(values) else 0.0


def personalized_pagerank(index: RepoMapIndex, personalization: np.ndarray) -> np.ndarray:
    size = len(index.paths)
    if not size:
        return np.zeros(0, dtype=np.float64)
    seeds = np.maximum(0.0, personalization)
    total = plain_sum(seeds)
    base = np.full(size, 1.0 / size) if total <= 0 else seeds / total
    degree = np.diff(index.edge_offsets)
    sources = np.repeat(np.arange(size), degree)
    out_weight = np.zeros(size, dtype=np.float64)
    np.add.at(out_weight, sources, index.edge_weights)  # sums of halves: exact in any order
    dangling = out_weight <= 0
    linked = ~dangling
    ranks = base.copy()
    for _ in range(ITERATIONS):
        following = (1.0 - DAMPING) * base
        mass = plain_sum(ranks[dangling])
        if mass:
            following += DAMPING * mass * base
        share = np.zeros(size, dtype=np.float64)
        share[linked] = DAMPING * ranks[linked] / out_weight[linked]
        np.add.at(following, index.edge_targets, share[sources] * index.edge_weights)
        ranks = following
    return ranks


def file_scores(index: RepoMapIndex, view: QueryView, request: Request) -> np.ndarray:
    """The bench's final score of every node, in node order."""
    size = len(index.paths)
    if not size:
        return np.zeros(0, dtype=np.float64)
    query = query_scores(index, view, request.query_text)
    affinity = affinity_scores(index, view, request)
    seeds = np.maximum(0.0, query) + np.maximum(0.0, affinity)
    if not (seeds > 0).any():
        seeds = np.ones(size, dtype=np.float64)
    pagerank = personalized_pagerank(index, seeds)
    max_query = float(query.max()) or 1.0
    max_pagerank = float(pagerank.max()) or 1.0
    max_affinity = float(np.abs(affinity).max()) or 1.0
    return QUERY_WEIGHT * (query / max_query) + PAGERANK_WEIGHT * (pagerank / max_pagerank) + AFFINITY_WEIGHT * (affinity / max_affinity)


def rank_files(index: RepoMapIndex, view: QueryView, request: Request) -> list[str]:
    """The bench's ranking of every node, best first, ties by path."""
    final = file_scores(index, view, request)
    order = np.lexsort((view_tiebreak(index), -final))
    return [index.paths[position] for position in order]


def view_tiebreak(index: RepoMapIndex) -> np.ndarray:
    cached = index.__dict__.get("_tiebreak")
    if cached is None:
        order = sorted(range(len(index.paths)), key=index.paths.__getitem__)
        cached = np.empty(len(order), dtype=np.int64)
        cached[np.asarray(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int64)
        index.__dict__["_tiebreak"] = cached
    return cached


@dataclass(frozen=True)
class RepoMapArm:
    """`arb-repomap` over the snapshot's map (see `index/repomap.py` for what it is built from)."""

    name: str = "arb-repomap"
    uses_index: ClassVar[str] = "repomap"
    identity: ClassVar[str] = f"builtin:arb-repomap:{TOKENIZER_VERSION}:{REPOMAP_VERSION}"

    def retrieve(self, request: Request) -> Answer:
        index: RepoMapIndex = request.snapshot.repomap_index()  # type: ignore[attr-defined]
        view = _view(index)
        known = request.snapshot.path_set() if hasattr(request.snapshot, "path_set") else None  # type: ignore[attr-defined]
        ranking = [path for path in rank_files(index, view, request) if known is None or path in known]
        return Answer(ranking=ranking[:RANKING_CAP], cache_state=NOT_APPLICABLE)


def _view(index: RepoMapIndex) -> QueryView:
    cached = index.__dict__.get("_view")
    if cached is None:
        cached = index.__dict__["_view"] = QueryView.of(index)
    return cached


def ranked_paths(index: RepoMapIndex, requests: Iterable[Request]) -> list[list[str]]:
    """Rankings of many requests over one map (benchmarks and checks)."""
    view = _view(index)
    return [rank_files(index, view, request) for request in requests]
