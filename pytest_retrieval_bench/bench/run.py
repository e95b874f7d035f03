"""Run one item: build the request (never the gold), call the arm, time it, score the answer.

The result is a record of builtins only, because it travels from xdist workers to the
controller and is aggregated there.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from pytest_retrieval_bench.samples import metrics as format_metrics
from pytest_retrieval_bench.arms.base import Answer, Arm, Request
from pytest_retrieval_bench.arms.fusion import ComponentFailed, FusionArm, fuse_records
from pytest_retrieval_bench.arms.snapshot_latency import Matched
from pytest_retrieval_bench.arms.deadline import ArmTimedOut, time_limit
from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.corpus.store import SnapshotStore
from pytest_retrieval_bench.errors import ArmError, SnapshotError
from pytest_retrieval_bench.scoring.budgets import BCY_NAMES, TokenCounts, bcy_metrics
from pytest_retrieval_bench.scoring.metrics import (GIVEN_KEPT_MRR, GOLD_COVERAGE, WHOLE_MRR, given_kept_rank, gold_coverage,
                                                    positive_metrics, rank_of_first_gold, selective_success, split_given, zero_metrics)
from pytest_retrieval_bench.samples.model import Sample


def as_answer(result: Any) -> Answer:
    """An arm's return value as an Answer: an Answer, or a ranking (a list, tuple or other iterable
    of paths, read once; a lone string is refused rather than read character by character)."""
    if isinstance(result, Answer):
        return result
    if isinstance(result, (str, bytes)):
        raise ArmError(f"arm returned a single {type(result).__name__} ({result[:60]!r}), expected a list of paths")
    if isinstance(result, (list, tuple)) or (hasattr(result, "__iter__") and not isinstance(result, dict)):
        return Answer(ranking=list(result))
    raise ArmError(f"arm returned {type(result).__name__}, expected pytest_retrieval_bench.Answer or a list of paths")


def _validate(answer: Any, snapshot_paths: frozenset[str]) -> Answer:
    answer = as_answer(answer)
    ranking = answer.ranking
    if type(ranking) is list and set(map(type, ranking)) <= {str} and snapshot_paths.issuperset(ranking):  # the usual case, at C speed
        return answer
    for entry in ranking:
        if not isinstance(entry, str):
            raise ArmError(f"ranking entry {entry!r} is not a path string")
        if entry not in snapshot_paths:
            raise ArmError(f"ranking entry {entry!r} is not a file of the snapshot")
    return answer


def make_request(sample: Sample, snapshot: Snapshot, limit: int, max_query_chars: int | None) -> Request:
    """What the arm sees of a sample: its query (cut to the arm's bound), never its gold."""
    query_text = sample.query_text[:max_query_chars] if max_query_chars else sample.query_text
    return Request(sample_id=sample.id, task_type=sample.task_type, repo=sample.repo, base_commit=sample.base_commit,
                   query=sample.query, query_text=query_text, changed_file=sample.changed_file, k=limit, snapshot=snapshot,
                   given_files=sample.arm_given_files)


def run_item(sample: Sample, arm_name: str, request: Request, snapshot: Snapshot, limit: int, call: Callable[[], Any],
             arm_timeout: float | None = None, timeout_source: str = "--bench-arm-timeout", matched: bool = False,
             raised: list[BaseException] | None = None) -> dict[str, Any]:
    """Everything SPEC 4 records for one sample x arm; `error` is set instead of raising.

    An exception the arm itself raised is also appended to `raised` (when given), so the item can
    show it with pytest's own traceback, `--showlocals` and `--pdb`.

    Only `call()` (the arm) is timed: the snapshot and its indexes were set up before. With
    `matched` (matched snapshot latency) the call returns a `Matched`: `wall_ms` is its hit span
    and `cold_wall_ms` its cold span (None when the measurement failed).
    """
    record: dict[str, Any] = {
        "sample_id": sample.id,
        "arm": arm_name,
        "query_chars": len(sample.query_text),
        "query_truncated": len(request.query_text) < len(sample.query_text),
        "snapshot_sha256": snapshot.files_digest(),
    }
    answer: Answer | None = None
    error: str | None = None
    spans: Matched | None = None
    started = time.perf_counter()
    try:
        with time_limit(arm_timeout, f"arm {arm_name}", timeout_source):
            result = call()
        if matched:
            spans, result = result, result.answer
        answer = _validate(result, snapshot.path_set())
    except ArmTimedOut as exc:
        error = str(exc)
    except SnapshotError as exc:
        error = f"snapshot error: {exc}"
    except (Exception, SystemExit, GeneratorExit) as exc:  # an arm's failure is recorded, never an abstention
        # SystemExit and GeneratorExit fail the item, as pytest fails a test that raises them;
        # KeyboardInterrupt is not caught: it interrupts the session, as in any test
        error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ArmError) else str(exc)
        if raised is not None and not isinstance(exc, ArmError):
            raised.append(exc)
    record["wall_ms"] = round((time.perf_counter() - started) * 1000.0, 3)
    if matched:
        record["cold_wall_ms"] = round(spans.cold_ms, 3) if spans is not None and error is None else None
        if spans is not None:
            record["wall_ms"] = round(spans.hit_ms, 3)
    return {**record, **score(sample, answer, error, limit, snapshot.read_text, snapshot.token_counts())}


def run_arm(sample: Sample, arm: Arm, store: SnapshotStore, limit: int) -> dict[str, Any]:
    """Run an object arm outside pytest items: snapshot, indexes and `prepare` first, untimed."""
    index_kind = getattr(arm, "uses_index", None)
    try:
        snapshot = store.open(sample.repo, sample.base_commit, [index_kind] if index_kind else [])
        store.prepare(arm, snapshot)
    except SnapshotError as exc:
        return failed_record(sample, arm.name, f"snapshot error: {exc}", limit)
    except Exception as exc:
        return failed_record(sample, arm.name, f"{type(exc).__name__}: {exc}", limit)
    request = make_request(sample, snapshot, limit, getattr(arm, "max_query_chars", None))
    return run_item(sample, arm.name, request, snapshot, limit, lambda: arm.retrieve(request))


def offline_fused_record(fusion: FusionArm, sample: Sample, components: dict[str, dict[str, Any]], limit: int) -> dict[str, Any]:
    """A fusion's record from components' records read back from reports (a merge): file metrics only."""
    error: str | None = None
    answer: Answer | None = None
    try:
        answer = Answer(ranking=fuse_records(fusion, components))
    except ComponentFailed as failure:
        error = str(failure)
    first = components[fusion.component_names[0]]
    return {"sample_id": sample.id, "arm": fusion.name, "wall_ms": 0.0, "query_chars": first.get("query_chars", len(sample.query_text)),
            "query_truncated": False, "snapshot_sha256": first.get("snapshot_sha256"), **score(sample, answer, error, limit)}


NO_TEXT = TokenCounts(lambda _: None)
"""An item that never reached its snapshot still scores zero BCY, like every metric."""


def failed_record(sample: Sample, arm_name: str, error: str, limit: int) -> dict[str, Any]:
    """The record of an item that never reached its arm (its snapshot failed, or it was lost)."""
    return {"sample_id": sample.id, "arm": arm_name, "wall_ms": 0.0, "query_chars": len(sample.query_text),
            "query_truncated": False, **score(sample, None, error, limit, counts=NO_TEXT)}


def score(sample: Sample, answer: Answer | None, error: str | None, limit: int,
          read_text: Callable[[str], str | None] | None = None, counts: TokenCounts | None = None) -> dict[str, Any]:
    """The scored part of a record; an error scores zero and is never an abstention.

    `read_text` (the snapshot's) lets a format check its sample against the snapshot and
    score line spans; without it those checks are skipped and span weights fall back to 1.
    `counts` (the snapshot's token counts) adds `bcy@<budget>` to a positive item's metrics.
    """
    if answer is not None and not error and read_text is not None:
        error = format_metrics.verify_sample(sample, read_text)  # an edited known-target case
    whole, ranks = split_given(answer.ranking, sample.given_files) if answer and not error else ([], {})
    ranking = whole[:limit]  # R
    abstained = bool(answer.is_abstention) if answer and not error else False
    whole_rank = None if sample.no_gold else rank_of_first_gold(whole, sample.gold_files)
    if sample.no_gold:
        metrics: dict[str, float] = {}
    elif error:
        metrics = zero_metrics(limit)
    else:
        metrics = positive_metrics(ranking, sample.gold_files, sample.hard_negatives, limit)
    if not sample.no_gold:  # the bench's MRR, over the whole ranking: a record keeps its rank, as R is cut
        metrics[WHOLE_MRR] = 1.0 / whole_rank if whole_rank else 0.0
        kept_rank = given_kept_rank(whole_rank, ranks, sample.gold_files)
        metrics[GIVEN_KEPT_MRR] = 1.0 / kept_rank if kept_rank else 0.0
    if not sample.no_gold and counts is not None:  # without the snapshot's text (a merge's fusion) there is no BCY
        metrics.update(dict.fromkeys(BCY_NAMES, 0.0) if error else bcy_metrics(ranking, sample.gold_files, counts))
        metrics[GOLD_COVERAGE] = 0.0 if error or read_text is None else gold_coverage(whole, sample.gold_files, read_text)
    extra: dict[str, Any] = {}
    if not sample.no_gold and format_metrics.has_extra(sample):
        text = read_text or (lambda _: None)
        scored = format_metrics.extra_metrics(sample, None if error else answer, ranking, limit,
                                              lambda path: format_metrics.line_count_of(text(path)), text)
        metrics.update(scored.values)
        if scored.counts:
            extra["metric_counts"] = scored.counts
        spans = None if error else format_metrics.scored_spans(answer, ranking, limit)
        if spans is not None:
            extra["spans"] = spans
    return {
        "ranking": ranking,
        "abstained": abstained,
        "error": error,
        "state": answer.state if answer else None,
        "packet_bytes": answer.packet_bytes if answer else None,
        "cache_state": (answer.cache_state if answer else None) or "UNRECORDED",
        "metrics": metrics,
        "selective_success": selective_success(sample.no_gold, abstained, error is not None, ranking, sample.gold_files),
        "rank_of_first_gold": None if sample.no_gold else rank_of_first_gold(ranking, sample.gold_files),
        "rank_of_first_gold_uncut": whole_rank,
        **({"given_ranks": ranks} if sample.given_files else {}),
        **extra,
    }
