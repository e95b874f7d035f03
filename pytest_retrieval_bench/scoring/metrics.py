"""Per-item scoring (SPEC 4): an answer's ranking against a sample's gold, after given files go."""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

CUTOFFS = (5, 10, 20)
#: the bench's MRR: 1 / rank of the first gold file in the arm's whole ranking (given files removed), not cut at the limit
WHOLE_MRR = "mrr"
#: the bench's MRR as it publishes it: the same rank, with given files kept where the arm ranked them
GIVEN_KEPT_MRR = "mrr_given_kept"
#: the bench's `gold_coverage@8k`: gold files among the ranked files whose texts fit 8,000 characters
GOLD_COVERAGE = "gold_coverage@8k"
GOLD_COVERAGE_BUDGET = 8_000


def cutoffs(limit: int) -> list[int]:
    return [k for k in CUTOFFS if k <= limit]


def scored_ranking(ranking: Sequence[str], given: Sequence[str], limit: int) -> list[str]:
    """R: the ranking without given files (never a success), distinct, cut to the limit."""
    excluded = set(given)
    out: list[str] = []
    for path in ranking:
        if path not in excluded and path not in out:
            out.append(path)
            if len(out) >= limit:
                break
    return out


def split_given(ranking: Sequence[str], given: Sequence[str]) -> tuple[list[str], dict[str, int]]:
    """One walk over the arm's ranking, each path once: the whole ranking without given files (what
    the bench's MRR reads) and where the arm ranked each given file, 1-based (what the record keeps
    of them, so the bench's given-kept figures can be rebuilt from R alone)."""
    excluded = set(given)
    kept: list[str] = []
    ranks: dict[str, int] = {}
    for position, path in enumerate(dict.fromkeys(ranking), start=1):
        if path in excluded:
            ranks[path] = position
        else:
            kept.append(path)
    return kept, ranks


def given_kept_rank(uncut_rank: int | None, ranks: Mapping[str, int], gold: Sequence[str]) -> int | None:
    """The first gold file's rank in the arm's ranking with given files kept (the bench's ranking):
    the given-removed rank moved down past every given file ranked at or above it, or a given file
    that is itself gold, whichever comes first."""
    best = None
    if uncut_rank is not None:
        best = uncut_rank
        for position in sorted(ranks.values()):
            if position <= best:
                best += 1
    targets = set(gold)
    for path, position in ranks.items():
        if path in targets and (best is None or position < best):
            best = position
    return best


def given_kept_top(ranking: Sequence[str], ranks: Mapping[str, int], k: int) -> list[str]:
    """The first k files of the arm's ranking with given files kept, rebuilt from R (given files
    removed, cut to the limit) and the given files' ranks; exact for every k up to the limit."""
    at = {position: path for path, position in ranks.items()}
    rest = iter(ranking)
    top: list[str] = []
    for position in range(1, k + 1):
        path = at.get(position) or next(rest, None)
        if path is None:
            break
        top.append(path)
    return top


def rank_of_first_gold(ranking: Sequence[str], gold: Sequence[str]) -> int | None:
    targets = set(gold)
    for position, path in enumerate(ranking, start=1):
        if path in targets:
            return position
    return None


def positive_metrics(ranking: Sequence[str], gold: Sequence[str], hard_negatives: Sequence[str], limit: int) -> dict[str, float]:
    """recall, hit, precision, f1, ndcg, accuracy, hard-negative hits at each k; mrr@k at the limit."""
    targets = set(gold)
    negatives = set(hard_negatives)
    metrics: dict[str, float] = {}
    for k in cutoffs(limit):
        top = ranking[:k]
        found = sum(1 for path in top if path in targets)
        recall = found / len(targets)
        precision = found / min(k, len(top)) if top else 0.0
        metrics[f"recall@{k}"] = recall
        metrics[f"hit@{k}"] = 1.0 if found else 0.0
        metrics[f"precision@{k}"] = precision
        metrics[f"f1@{k}"] = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        metrics[f"accuracy@{k}"] = 1.0 if found == len(targets) else 0.0
        metrics[f"hard_negative_hits@{k}"] = float(sum(1 for path in top if path in negatives))
        dcg = sum(1.0 / math.log2(position + 2) for position, path in enumerate(top) if path in targets)
        ideal = sum(1.0 / math.log2(position + 2) for position in range(min(len(targets), k)))
        metrics[f"ndcg@{k}"] = dcg / ideal
    first = rank_of_first_gold(ranking[:limit], gold)
    metrics["mrr@k"] = 1.0 / first if first else 0.0
    return metrics


def gold_coverage(ranking: Sequence[str], gold: Sequence[str], text_of: Callable[[str], str | None],
                  budget: int = GOLD_COVERAGE_BUDGET) -> float:
    """The bench's `gold_coverage_at_budget` over a file ranking, as it scores its file rankers
    (RepoMap's `ranked_file_chunks`): each ranked file is one chunk whose text is the file's text
    (its path when the text is empty or unknown); chunks are taken in rank order while their
    lengths in characters fit the budget (the first always), and packing stops at the first that
    does not; covered gold files / distinct gold files."""
    targets = set(gold)
    if not targets:
        return 0.0
    used = 0
    covered: set[str] = set()
    for path in ranking:
        length = len(text_of(path) or path)
        if used + length > budget and used > 0:
            break
        used += length
        if path in targets:
            covered.add(path)
    return len(covered) / len(targets)


def zero_metrics(limit: int) -> dict[str, float]:
    """An errored positive item scores zero on every metric."""
    return {name: 0.0 for name in positive_metrics([], ["-"], [], limit)}


def selective_success(no_gold: bool, abstained: bool, errored: bool, ranking: Sequence[str], gold: Sequence[str]) -> bool:
    """No-gold samples succeed by abstaining; positive ones by answering with a gold file in R."""
    if errored:
        return False
    if no_gold:
        return abstained
    return not abstained and rank_of_first_gold(ranking, gold) is not None
