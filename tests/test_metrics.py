"""Per-item metrics on hand-computed cases, and the report's order independence."""

from __future__ import annotations

import math
import random

import pytest

from pytest_retrieval_bench.scoring.metrics import (given_kept_rank, given_kept_top, positive_metrics, rank_of_first_gold,
                                                    scored_ranking, selective_success, split_given, zero_metrics)
from pytest_retrieval_bench.report.build import build_report, canonical_json
from pytest_retrieval_bench.samples.arb import parse_arb_row


def test_hand_computed_case():
    ranking = ["n1", "g1", "x", "x2", "g2", "y1", "y2", "y3", "y4", "y5", "g3"]
    metrics = positive_metrics(ranking, ["g1", "g2", "g3"], ["n1", "y2"], limit=20)
    assert metrics["recall@5"] == pytest.approx(2 / 3)
    assert metrics["hit@5"] == 1.0
    assert metrics["precision@5"] == pytest.approx(2 / 5)
    assert metrics["f1@5"] == pytest.approx(2 * 0.4 * (2 / 3) / (0.4 + 2 / 3))
    assert metrics["hard_negative_hits@5"] == 1.0
    assert metrics["accuracy@5"] == 0.0
    assert metrics["recall@10"] == pytest.approx(2 / 3) and metrics["hard_negative_hits@10"] == 2.0
    assert metrics["recall@20"] == 1.0 and metrics["accuracy@20"] == 1.0
    assert metrics["precision@20"] == pytest.approx(3 / 11)  # divides by min(k, |R|)
    assert metrics["mrr@k"] == 0.5
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert metrics["ndcg@5"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(6)) / ideal)
    assert metrics["ndcg@20"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(6) + 1 / math.log2(12)) / ideal)


def test_limit_cuts_metrics_and_mrr():
    metrics = positive_metrics(["a", "b", "c", "d", "e", "g"], ["g"], [], limit=5)
    assert sorted(k for k in metrics if "@" in k and not k.endswith("@k")) == sorted(
        f"{m}@5" for m in ("recall", "hit", "precision", "f1", "accuracy", "hard_negative_hits", "ndcg"))
    assert metrics["mrr@k"] == 0.0


def test_empty_ranking_and_zero_metrics():
    metrics = positive_metrics([], ["g"], [], limit=10)
    assert metrics["precision@5"] == 0.0 and metrics["recall@10"] == 0.0 and metrics["mrr@k"] == 0.0
    assert zero_metrics(10) == {name: 0.0 for name in metrics}


def test_given_files_removed_before_the_cut():
    assert scored_ranking(["given", "a", "a", "b", "c"], ["given"], 2) == ["a", "b"]


@pytest.mark.parametrize(
    ("no_gold", "abstained", "errored", "ranking", "expected"),
    [(True, True, False, [], True), (True, False, False, ["x"], False), (True, True, True, [], False),
     (False, False, False, ["g"], True), (False, False, False, ["x"], False), (False, True, False, [], False)],
)
def test_selective_success(no_gold, abstained, errored, ranking, expected):
    assert selective_success(no_gold, abstained, errored, ranking, ["g"]) is expected


def _samples():
    rows = []
    for i in range(12):
        gold = {"files": [], "no_gold": True} if i % 4 == 0 else {"files": [f"g{i}"]}
        rows.append(parse_arb_row({"id": f"s{i:02d}", "task_type": "code2test" if i % 2 else "trace2code", "repo": f"o/r{i % 2}",
                                   "base_commit": "a" * 40, "query": {"t": str(i)}, "gold": gold, "metadata": {"organic": True}}, "f", i + 1))
    return rows


def _records(samples, arms=("grep", "mine")):
    from pytest_retrieval_bench.bench.run import score
    from pytest_retrieval_bench.arms.base import Answer

    rng = random.Random(7)
    out = []
    for sample in samples:
        for arm in arms:
            ranking = rng.sample([f"g{i}" for i in range(12)] + ["x", "y"], rng.randint(0, 6))
            out.append({"sample_id": sample.id, "arm": arm, "wall_ms": 1.0, "query_chars": 3, "query_truncated": False,
                        **score(sample, Answer(ranking=ranking), None, 10)})
    return out


def test_report_is_independent_of_record_order():
    samples = _samples()
    records = _records(samples)
    first = canonical_json(build_report({}, samples, records, ["grep"], 10, False))
    shuffled = list(records)
    random.Random(1).shuffle(shuffled)
    assert canonical_json(build_report({}, list(reversed(samples)), shuffled, ["grep"], 10, False)) == first
    report = build_report({}, samples, records, ["grep"], 10, False)
    assert report["summary"]["all"]["mine"]["n"] == 12 and report["summary"]["all"]["mine"]["positives"] == 9
    assert set(report["paired"]["all"]) == {"mine vs grep"}
    assert report["paired"]["all"]["mine vs grep"]["recall@10"]["n"] == 9
    assert report["latency"]["grep"] == {"UNRECORDED": "NOT_RUN"}


def test_given_kept_figures_rebuild_the_raw_ranking_from_R_and_given_ranks() -> None:
    """The bench keeps given files in its rankings; a record keeps R (given removed, cut) and where the
    given files ranked. From those two the given-kept first-gold rank and top k come back exactly."""
    rng = random.Random(7)
    files = [f"f{i}.py" for i in range(12)]
    for _ in range(400):
        raw = rng.sample(files, rng.randint(0, 12)) + rng.sample(files, 2)  # repeats: each path counts once
        given = rng.sample(files, rng.randint(1, 3))
        gold = rng.sample(files, rng.randint(1, 3))
        limit = rng.randint(3, 8)
        distinct = list(dict.fromkeys(raw))
        whole, ranks = split_given(raw, given)
        assert ranks == {path: distinct.index(path) + 1 for path in given if path in distinct}
        expected = next((position for position, path in enumerate(distinct, start=1) if path in gold), None)
        assert given_kept_rank(rank_of_first_gold(whole, gold), ranks, gold) == expected, (raw, given, gold)
        for k in range(1, limit + 1):
            assert given_kept_top(whole[:limit], ranks, k) == distinct[:k], (raw, given, k)
