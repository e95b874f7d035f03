"""Line and block metrics of a trajectory: the bench's `line_metrics_at_budget` and
`block_metrics_at_budget` as its trajectory scorer calls them (every step counted, no budget cut).

The bench names these figures `...@8k` even here, where nothing is cut: the names are kept, as the
detail rows it writes have them.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Iterator, Mapping


def f_score(precision: float, recall: float, beta: float = 1.0) -> float:
    """The bench's F-beta (0.0 when both are 0; the denominator floored at 1e-12)."""
    if precision <= 0.0 and recall <= 0.0:
        return 0.0
    beta_sq = beta * beta
    return (1 + beta_sq) * precision * recall / max((beta_sq * precision) + recall, 1e-12)


def _label_rows(sample: Mapping[str, Any], name: str) -> Any:
    values = sample.get(name)
    if values is None:
        values = (sample.get("gold") or {}).get(name)
    return values or []


def _lined_rows(sample: Mapping[str, Any], name: str) -> Iterator[tuple[dict[str, Any], int, int]]:
    """(row, start line, end line) of each label row with a path and integer lines; others skipped, as the bench skips them."""
    for value in _label_rows(sample, name):
        if not isinstance(value, dict) or not str(value.get("path") or ""):
            continue
        try:
            start_line, end_line = int(value.get("start_line")), int(value.get("end_line"))
        except (TypeError, ValueError):
            continue
        yield value, start_line, end_line


def gold_spans(sample: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sample's `gold_spans` (top level, else under `gold`): rows with a path and integer lines."""
    spans: list[dict[str, Any]] = []
    for value, start_line, end_line in _lined_rows(sample, "gold_spans"):
        spans.append({"path": str(value["path"]), "start_line": start_line, "end_line": end_line, "reason": str(value.get("reason") or "")})
    return spans


def gold_blocks(sample: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sample's `gold_blocks` (top level, else under `gold`): rows with a path and a valid line range."""
    blocks: list[dict[str, Any]] = []
    for value, start_line, end_line in _lined_rows(sample, "gold_blocks"):
        if start_line <= 0 or end_line < start_line:
            continue
        block: dict[str, Any] = {"path": str(value["path"]), "start_line": start_line, "end_line": end_line, "kind": str(value.get("kind") or "block"),
                                 "symbol": str(value.get("symbol") or ""), "reason": str(value.get("reason") or "")}
        if value.get("chunk_id"):
            block["chunk_id"] = str(value["chunk_id"])
        if value.get("source"):
            block["source"] = str(value["source"])
        blocks.append(block)
    return blocks


def _merge(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if not merged or start > merged[-1][1] + 1:
            merged.append((start, end))
        else:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
    return merged


def _intervals(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[tuple[int, int]]]:
    found: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for row in rows:
        path = str(row.get("path") or "")
        try:
            start_line, end_line = int(row.get("start_line") or 0), int(row.get("end_line") or 0)
        except (TypeError, ValueError):
            continue
        if path and start_line > 0 and end_line >= start_line:
            found[path].append((start_line, end_line))
    return found


def _line_count(intervals: Mapping[str, list[tuple[int, int]]]) -> int:
    return sum(end - start + 1 for rows in intervals.values() for start, end in _merge(rows))


def line_metrics(spans: list[dict[str, Any]], steps: list[Mapping[str, Any]]) -> dict[str, float]:
    """Lines of the gold spans covered by the steps' line ranges (merged per file)."""
    gold = {path: _merge(rows) for path, rows in _intervals(spans).items()}
    if not gold:
        return {"line_samples": 0, "line_recall@8k": 0.0, "line_precision@8k": 0.0, "line_f1@8k": 0.0, "line_f0.5@8k": 0.0,
                "line_gold_count": 0.0, "line_predicted_count": 0.0, "line_overlap_count": 0.0}
    predicted = _intervals(steps)
    gold_lines, predicted_lines = _line_count(gold), _line_count(predicted)
    overlap = 0
    for path, gold_rows in gold.items():
        predicted_rows = _merge(predicted.get(path, []))
        for gold_start, gold_end in gold_rows:
            for start, end in predicted_rows:
                low, high = max(gold_start, start), min(gold_end, end)
                if high >= low:
                    overlap += high - low + 1
    recall = overlap / gold_lines if gold_lines else 0.0
    precision = overlap / predicted_lines if predicted_lines else 0.0
    return {"line_samples": 1, "line_recall@8k": recall, "line_precision@8k": precision, "line_f1@8k": f_score(precision, recall),
            "line_f0.5@8k": f_score(precision, recall, beta=0.5), "line_gold_count": float(gold_lines),
            "line_predicted_count": float(predicted_lines), "line_overlap_count": float(overlap)}


def _block_row(row: Mapping[str, Any], chunk_id: str) -> dict[str, Any] | None:
    path = str(row.get("path") or "")
    if not path:
        return None
    try:
        start_line, end_line = int(row.get("start_line") or 0), int(row.get("end_line") or 0)
    except (TypeError, ValueError):
        return None
    if start_line <= 0 or end_line < start_line:
        return None
    return {"path": path, "start_line": start_line, "end_line": end_line, "kind": str(row.get("kind") or "block"),
            "symbol": str(row.get("symbol") or ""), "chunk_id": chunk_id}


def _overlap(gold: Mapping[str, Any], predicted: Mapping[str, Any]) -> bool:
    if gold["path"] != predicted["path"]:
        return False
    if gold["chunk_id"] and predicted["chunk_id"] and gold["chunk_id"] == predicted["chunk_id"]:
        return True
    return min(gold["end_line"], predicted["end_line"]) >= max(gold["start_line"], predicted["start_line"])


def block_metrics(blocks: list[dict[str, Any]], steps: list[Mapping[str, Any]]) -> dict[str, float]:
    """Gold blocks overlapped (same file and overlapping lines, or the same chunk id) by the steps'
    distinct non-file blocks, and those blocks that overlap a gold one."""
    gold_rows = [row for row in (_block_row(block, str(block.get("chunk_id") or "")) for block in blocks) if row]
    if not gold_rows:
        return {"block_samples": 0, "block_recall@8k": 0.0, "block_precision@8k": 0.0, "block_f1@8k": 0.0, "block_f0.5@8k": 0.0,
                "gold_blocks": 0.0, "predicted_blocks": 0.0, "matched_blocks": 0.0}
    predicted: dict[tuple[Any, ...], dict[str, Any]] = {}
    for step in steps:  # a step's content hash is its chunk id, as the bench turns steps into chunks
        row = _block_row({**step, "kind": step.get("kind") or "block"}, str(step.get("content_hash") or ""))
        if row and row["kind"] != "file":
            predicted.setdefault((row["path"], row["start_line"], row["end_line"], row["kind"], row["symbol"], row["chunk_id"]), row)
    predicted_rows = list(predicted.values())
    matched_gold: set[int] = set()
    matched_predicted: set[int] = set()
    for predicted_index, row in enumerate(predicted_rows):
        for gold_index, gold in enumerate(gold_rows):
            if _overlap(gold, row):
                matched_gold.add(gold_index)
                matched_predicted.add(predicted_index)
    recall = len(matched_gold) / len(gold_rows)
    precision = len(matched_predicted) / len(predicted_rows) if predicted_rows else 0.0
    return {"block_samples": 1, "block_recall@8k": recall, "block_precision@8k": precision, "block_f1@8k": f_score(precision, recall),
            "block_f0.5@8k": f_score(precision, recall, beta=0.5), "gold_blocks": float(len(gold_rows)),
            "predicted_blocks": float(len(predicted_rows)), "matched_blocks": float(len(matched_gold))}
