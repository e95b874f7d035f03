"""The bench's own chunk-level reference rankers, so published leaderboard numbers reproduce.

Scores are computed in the same operation order as the bench's `rank_chunks_with_scores`
(`arb-lexical`) and `rank_chunks_bm25_with_scores` (`arb-bm25`, k1 1.5) so that ties break
identically; every chunk is ranked, as there, and the ranking is every distinct path in order
(no cap: the bench's MRR reads the first gold file wherever it ranks, 1,508th on a real diffusers row).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from pytest_retrieval_bench.arms.base import Answer, Request
from pytest_retrieval_bench.arms.lexical import NOT_APPLICABLE
from pytest_retrieval_bench.index.tokens import bench_tokens
from pytest_retrieval_bench.index.chunk_index import ChunkIndex

ARB_BM25_K1 = 1.5
ARB_BM25_B = 0.75
RANKING_CAP: int | None = None
"""Paths kept of a ranking: all of them, as the bench ranks every chunk (a number only in tests)."""


def lexical_chunk_scores(index: ChunkIndex, query_text: str) -> np.ndarray:
    """`rank_chunks_with_scores`: log-weighted overlap, path/basename/symbol bonuses, sqrt norm."""
    query_counts = Counter(bench_tokens(query_text))
    total = max(1, len(index.paths))
    scores = np.zeros(len(index.paths), dtype=np.float64)
    for token, count in query_counts.items():
        docs, _ = index.postings.get(token)
        if len(docs):
            weight = (1.0 + math.log(count)) * math.log((total + 1) / (1 + len(docs)) + 1.0)
            scores[docs] += weight
    lowered_query = query_text.lower()
    values = index.label_values  # each test once per distinct value; adding 0.0 elsewhere keeps the bench's sums bit for bit
    scores += np.where(values.lowered_paths.found_in(lowered_query), 25.0, 0.0)[values.path_ids]
    scores += np.where(values.lowered_basenames.found_in(lowered_query), 8.0, 0.0)[values.path_ids]
    scores += np.where(values.lowered_symbols.found_in(lowered_query), 5.0, 0.0)[values.symbol_ids]
    return scores / np.maximum(1.0, np.sqrt(index.distinct_counts.astype(np.float64)))


def bm25_chunk_scores(index: ChunkIndex, query_text: str, k1: float = ARB_BM25_K1, b: float = ARB_BM25_B) -> np.ndarray:
    """`rank_chunks_bm25_with_scores`: BM25 with the query's term counts as weights."""
    query_counts = Counter(bench_tokens(query_text))
    size = len(index.paths)
    total = max(1, size)
    scores = np.zeros(size, dtype=np.float64)
    mean_length = float(index.token_counts.sum()) / size if size else 0.0
    length_norm = np.full(size, 1.0 - b)
    if mean_length > 0:
        length_norm = length_norm + b * (index.token_counts / mean_length)
    for token, query_count in query_counts.items():
        docs, counts = index.postings.get(token)
        if not len(docs):
            continue
        frequency = len(docs)
        idf = math.log(1.0 + (total - frequency + 0.5) / (frequency + 0.5))
        tf = counts.astype(np.float64)
        denominator = tf + k1 * length_norm[docs]
        scores[docs] += query_count * idf * ((tf * (k1 + 1.0)) / denominator)
    return scores


def _distinct_paths(index: ChunkIndex, scores: np.ndarray | None) -> list[str]:
    """The distinct non-empty paths of the chunks ranked by score (descending), ties by
    tiebreak, in order of each path's first chunk (at most `RANKING_CAP` when it is set).

    A path's first chunk in that order is its best one: its highest score, and of the chunks with
    that score the lowest tiebreak. So the paths are ranked by their best chunk, found per path
    with two grouped reductions, instead of walking the sorted chunks one by one.
    """
    values = index.label_values
    groups = values.path_groups
    if not len(groups.order):
        return []
    if scores is None:  # row order: each path's first row
        ranked = groups.path_ids[np.argsort(groups.order[groups.starts])]
    else:  # the formulas' scores are finite: every comparison below is the sort's
        grouped = scores[groups.order]
        best = np.maximum.reduceat(grouped, groups.starts)
        sizes = np.diff(np.append(groups.starts, len(grouped)))
        tiebreaks = np.where(grouped == np.repeat(best, sizes), index.tiebreak[groups.order], np.iinfo(np.int64).max)
        ranked = groups.path_ids[np.lexsort((np.minimum.reduceat(tiebreaks, groups.starts), -best))]
    paths = values.paths
    ranking: list[str] = []
    for path_id in ranked.tolist():
        path = paths[path_id]
        if path:
            ranking.append(path)
            if RANKING_CAP is not None and len(ranking) >= RANKING_CAP:
                break
    return ranking


@dataclass(frozen=True)
class ArbReferenceArm:
    """`arb-lexical` or `arb-bm25` over the snapshot's chunk rows (file rows only for trees)."""

    name: str
    uses_index: ClassVar[str] = "chunks"

    def retrieve(self, request: Request) -> Answer:
        index: ChunkIndex = request.snapshot.chunk_index()  # type: ignore[attr-defined]
        if not bench_tokens(request.query_text):
            return Answer(ranking=_distinct_paths(index, None), cache_state=NOT_APPLICABLE)
        scorer = bm25_chunk_scores if self.name == "arb-bm25" else lexical_chunk_scores
        return Answer(ranking=_distinct_paths(index, scorer(index, request.query_text)), cache_state=NOT_APPLICABLE)
