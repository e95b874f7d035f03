"""Metrics of the non-ARB sample formats, added beside the common file metrics of each item.

Each format scores what its own benchmark defines (ContextBench `cb_`, cce.relevance `rel_`,
known-target `kt_`, CodeNib code blocks `codenib_`). Ratios also carry their numerator and
denominator (`counts`), so the report can give micro averages next to the per-item means.
An errored item is scored here with an empty answer: the same names, all zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from pytest_retrieval_bench.samples import line_ranges
from pytest_retrieval_bench.scoring.metrics import cutoffs
from pytest_retrieval_bench.samples.model import Sample

LineCount = Callable[[str], "int | None"]
ReadText = Callable[[str], "str | None"]

KNOWN_TARGET_CUTOFFS = (1, 5, 10)


@dataclass
class ExtraScores:
    values: dict[str, float] = field(default_factory=dict)
    counts: dict[str, list[float]] = field(default_factory=dict)

    def ratio(self, name: str, numerator: float, denominator: float) -> None:
        """A ratio that is 0 over an empty denominator, recorded with its counts."""
        self.values[name] = numerator / denominator if denominator else 0.0
        self.counts[name] = [float(numerator), float(denominator)]


@dataclass(frozen=True)
class Result:
    """One scored result: a whole file (no lines) or a span, with an optional chunk kind."""

    path: str
    kind: str | None = None
    start: int | None = None
    end: int | None = None

    def lines(self, line_count: LineCount) -> tuple[int, float]:
        """Inclusive line range; a whole file is 1..its line count (unbounded when unknown)."""
        if self.start is not None and self.end is not None:
            return self.start, self.end
        count = line_count(self.path)
        return 1, float(count) if count is not None else math.inf


def line_count_of(text: str | None) -> int | None:
    """Lines split at "\\n"; a final line without a newline still counts."""
    if text is None:
        return None
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def scored_spans(answer: Any, ranking: Sequence[str], limit: int) -> list[dict[str, Any]] | None:
    """The answer's spans on files of R (so given files go too), cut to the limit; None without spans."""
    spans = getattr(answer, "spans", None) if answer is not None else None
    if spans is None:
        return None
    ranked = set(ranking)
    return [span for span in spans if span["path"] in ranked][:limit]


def results_of(answer: Any, ranking: Sequence[str], limit: int) -> list[Result]:
    """The scored spans as results, or one whole-file result per file of R."""
    spans = scored_spans(answer, ranking, limit)
    if not spans:
        return [Result(path) for path in ranking]
    return [Result(span["path"], span.get("kind"), span.get("start_line"), span.get("end_line")) for span in spans]


def has_extra(sample: Sample) -> bool:
    return sample.extra.get("format") in _SCORERS


def extra_metrics(sample: Sample, answer: Any, ranking: Sequence[str], limit: int, line_count: LineCount,
                  read_text: ReadText | None = None) -> ExtraScores:
    """The format's own metrics for one positive item; `answer` None (an error) scores zero."""
    scorer = _SCORERS.get(sample.extra.get("format"))
    if scorer is None:
        return ExtraScores()
    results = results_of(answer, ranking, limit) if answer is not None else []
    return scorer(sample, list(ranking) if answer is not None else [], results, limit, line_count, read_text or (lambda _: None))


def verify_sample(sample: Sample, read_text: ReadText) -> str | None:
    """Why a sample may not be scored against this snapshot (an edited known-target case)."""
    if sample.extra.get("format") != "known-target":
        return None
    from pytest_retrieval_bench.samples.known_target import verify_case

    def read_blob(path: str) -> bytes | None:
        text = read_text(path)
        return None if text is None else text.encode("utf-8", errors="surrogatepass")

    return verify_case(sample.extra["case"], read_blob)


# -- ContextBench -----------------------------------------------------------------------------


def contextbench_scores(sample: Sample, ranking: list[str], results: list[Result], limit: int, line_count: LineCount, read_text: ReadText) -> ExtraScores:
    """File and line coverage/precision of R; a ranked file predicts every one of its lines."""
    scores = ExtraScores()
    gold = set(sample.gold_files)
    hits = sum(1 for path in ranking if path in gold)
    scores.ratio("cb_file_coverage", hits, len(gold))
    scores.ratio("cb_file_precision", hits, len(ranking))
    blocks = [(span["path"], span["start_line"], span["end_line"]) for span in sample.extra["spans"]]
    gold_lines = line_ranges.by_path(blocks)
    predicted = overlap = 0
    for path in ranking:
        count = line_count(path) or 0
        predicted += count
        overlap += line_ranges.size(line_ranges.intersect(gold_lines.get(path, []), [(1, count)]))
    scores.ratio("cb_line_coverage", overlap, sum(line_ranges.size(ranges) for ranges in gold_lines.values()))
    scores.ratio("cb_line_precision", overlap, predicted)
    _codenib_blocks(scores, blocks, results, limit, line_count)
    return scores


# -- cce.relevance/v1 -------------------------------------------------------------------------


def estimate_tokens(line: str) -> int:
    """cce.tokens/v1: max(1, floor(UTF-8 bytes / 4)) of one line without its line ending."""
    return max(1, len(line.encode("utf-8", errors="surrogatepass")) // 4)


def anchor_matches(anchor: dict[str, Any], result: Result, line_count: LineCount) -> bool:
    """Every facet the anchor has must hold; a result without a kind never matches a kind."""
    if anchor["path"] is not None and result.path != anchor["path"]:
        return False
    if anchor["kind"] is not None and result.kind != anchor["kind"]:
        return False
    if anchor["start_line"] is not None:
        start, end = result.lines(line_count)
        return start <= anchor["end_line"] and anchor["start_line"] <= end
    return True


def relevance_scores(sample: Sample, ranking: list[str], results: list[Result], limit: int, line_count: LineCount, read_text: ReadText) -> ExtraScores:
    """precision@k (over k), recall over anchors, MRR, F1; token metrics for ranged cases."""
    scores = ExtraScores()
    anchors: list[dict[str, Any]] = sample.extra["anchors"]
    k: int = sample.extra["k"]
    considered = results[:k]
    relevant, first = 0, None
    for rank, result in enumerate(considered, start=1):
        if any(anchor_matches(anchor, result, line_count) for anchor in anchors):
            relevant += 1
            first = first or rank
    matched = sum(1 for anchor in anchors if any(anchor_matches(anchor, result, line_count) for result in considered))
    scores.ratio("rel_precision@k", relevant, k)
    scores.ratio("rel_recall", matched, len(anchors))
    precision, recall = scores.values["rel_precision@k"], scores.values["rel_recall"]
    scores.values["rel_mrr"] = 1.0 / first if first else 0.0
    scores.values["rel_f1"] = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    ranged = [anchor for anchor in anchors if anchor["start_line"] is not None]
    if ranged:
        _token_scores(scores, ranged, considered, results, line_count, read_text)
        blocks = [(anchor["path"], anchor["start_line"], anchor["end_line"]) for anchor in ranged]
        _codenib_blocks(scores, blocks, results, limit, line_count)
    return scores


def _token_scores(scores: ExtraScores, ranged: list[dict[str, Any]], considered: list[Result], results: list[Result],
                  line_count: LineCount, read_text: ReadText) -> None:
    """cce's token precision/recall/IoU; line weights as cce's `LineWeights::from_chunks` gives them.

    cce weighs a line by the estimator over the text of the indexed chunk that covers it, and a
    line no chunk covers weighs 1. The chunks known here are the answer's results: a line inside
    one of them weighs its text in the snapshot's file (lines as Rust's `str::lines()` splits
    them), any other line 1. A whole-file result covers every line of its file.
    """
    expected = line_ranges.by_path((anchor["path"], anchor["start_line"], anchor["end_line"]) for anchor in ranged)
    retrieved_spans: list[tuple[str, int, int]] = []
    for result in considered:
        start, end = result.lines(line_count)
        if end != math.inf:
            retrieved_spans.append((result.path, start, int(end)))
    retrieved = line_ranges.by_path(retrieved_spans)
    covered: dict[str, list[tuple[int, int]]] = {}
    for result in results:
        start, end = result.lines(line_count)
        covered.setdefault(result.path, []).append((start, int(min(end, 2**63))))
    tables: dict[str, line_ranges.LineWeights] = {}

    def mass(sets: dict[str, list[tuple[int, int]]]) -> int:
        total = 0
        for path, ranges in sets.items():
            if path not in tables:
                text = read_text(path)
                lines = line_ranges.rust_lines(text) if text is not None else []
                chunks = line_ranges.merged(covered.get(path, []))
                weights = [1] * len(lines)
                for start, end in line_ranges.intersect(chunks, [(1, len(lines))]):
                    weights[start - 1:end] = [estimate_tokens(line) for line in lines[start - 1:end]]
                tables[path] = line_ranges.LineWeights(weights)
            total += tables[path].mass(ranges)
        return total

    overlap = {path: line_ranges.intersect(ranges, retrieved[path]) for path, ranges in expected.items() if path in retrieved}
    expected_mass, retrieved_mass, overlap_mass = mass(expected), mass(retrieved), mass(overlap)
    scores.ratio("rel_tok_precision", overlap_mass, retrieved_mass)
    scores.ratio("rel_tok_recall", overlap_mass, expected_mass)
    scores.ratio("rel_tok_iou", overlap_mass, expected_mass + retrieved_mass - overlap_mass)


# -- known-target-v1 --------------------------------------------------------------------------


def kind_matches(target_kind: str, result_kind: str | None) -> bool:
    """A result without a kind, or a module target, matches any kind; else the kinds agree.

    `function_definition` agrees with `function` (the first `_`-separated word), so arms that
    report tree-sitter node types are not penalised for naming the same thing differently.
    """
    if result_kind is None or target_kind == "module":
        return True
    return result_kind == target_kind or result_kind.split("_")[0] == target_kind


def target_matches(target: dict[str, Any], result: Result) -> bool:
    """Same path; the result's lines contain the target line (line 0 = the whole file); kinds agree."""
    if result.path != target["path"] or not kind_matches(target["kind"], result.kind):
        return False
    if target["line"] == 0 or result.start is None or result.end is None:
        return True
    return result.start <= target["line"] <= result.end


def known_target_scores(sample: Sample, ranking: list[str], results: list[Result], limit: int, line_count: LineCount, read_text: ReadText) -> ExtraScores:
    """Hit@1, recall@k over targets and MRR@k, with k in 1, 5, 10 and the report's cut-offs."""
    scores = ExtraScores()
    targets: list[dict[str, Any]] = sample.extra["targets"]
    first = next((rank for rank, result in enumerate(results, start=1) if any(target_matches(t, result) for t in targets)), None)
    scores.values["kt_hit@1"] = 1.0 if first == 1 else 0.0
    for k in sorted({*KNOWN_TARGET_CUTOFFS, *cutoffs(limit)}):
        if k > limit:
            continue
        found = sum(1 for target in targets if any(target_matches(target, result) for result in results[:k]))
        scores.ratio(f"kt_recall@{k}", found, len(targets))
        scores.values[f"kt_mrr@{k}"] = 1.0 / first if first is not None and first <= k else 0.0
    return scores


# -- CodeNib code blocks ----------------------------------------------------------------------


def _overlaps(a: tuple[str, float, float], b: tuple[str, float, float]) -> bool:
    return a[0] == b[0] and a[1] <= b[2] and b[1] <= a[2]


def _codenib_blocks(scores: ExtraScores, blocks: list[tuple[str, int, int]], results: list[Result], limit: int, line_count: LineCount) -> None:
    """CodeNib code-block recall/precision/accuracy@k; a prediction overlapping an earlier one is dropped first.

    The gold blocks are counted as listed, repeats included, as CodeNib's `compute_block_metrics`
    does (it de-duplicates the predictions, never the gold): `[a, a, b, c]` is four blocks.
    """
    kept: list[tuple[str, float, float]] = []
    for result in results:
        span = (result.path, *result.lines(line_count))
        if not any(_overlaps(span, earlier) for earlier in kept):
            kept.append(span)  # type: ignore[arg-type]
    for k in cutoffs(limit):
        top = kept[:k]
        recalled = sum(1 for block in blocks if any(_overlaps(block, span) for span in top))
        on_target = sum(1 for span in top if any(_overlaps(block, span) for block in blocks))
        scores.ratio(f"codenib_block_recall@{k}", recalled, len(blocks))
        scores.ratio(f"codenib_block_precision@{k}", on_target, len(top))
        scores.values[f"codenib_block_accuracy@{k}"] = 1.0 if blocks and recalled == len(blocks) else 0.0


_SCORERS: dict[Any, Callable[..., ExtraScores]] = {
    "contextbench": contextbench_scores,
    "relevance": relevance_scores,
    "known-target": known_target_scores,
}
