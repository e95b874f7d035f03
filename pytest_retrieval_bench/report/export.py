"""A written report in the formats other IR tools read: `retrieval-bench export`.

- `trec`: a TREC run file, `qid Q0 docid rank score tag`, one line per ranked file of each sample
  of one arm, the tag being the arm. The report keeps each ranking as scored (given files removed,
  cut to the limit), not the arm's own scores, so the score is 1/rank: strictly decreasing, and any
  tool that sorts by score recovers the report's order. The run holds the samples the qrels hold
  (the positive samples the arm scored), so `ranx.evaluate(Qrels.from_file(q), Run.from_file(r))`
  runs as it is and its means are the report's: a positive sample the arm has no ranking for (an
  abstention or an error, which score zero) is one line naming `/NO_RANKING`, a document no snapshot
  holds (a report's paths are relative). `all_samples` adds the no-gold samples' rankings (which no
  qrels can hold) and leaves the unranked samples out.
- `qrels`: the gold files of every positive sample (of those the chosen arms scored), `qid 0 docid 1`.
- `csv` / `jsonl`: one row per sample x arm for pandas: the sample's labels, the outcome fields and
  every metric the record holds (a column per metric; empty where a record has none); with agent
  arms, the trajectory figures too (`export_trajectory.py`).

Sample ids, arm names and paths are written as they are; a field holding white space (which the
TREC formats split on) is refused rather than written ambiguously.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Iterator, Sequence

import orjson

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.export_trajectory import trajectory_columns
from pytest_retrieval_bench.report.merge import is_named

FORMATS = ("trec", "qrels", "csv", "jsonl")
ROW_FIELDS = ("sample_id", "arm", "repo", "task_type", "stratum", "rank_of_first_gold", "rank_of_first_gold_uncut", "abstained", "error",
              "selective_success")
#: the document of a positive sample's line when the arm ranked nothing: a relative path never starts with "/"
NO_RANKING = "/NO_RANKING"


def _records(report: dict[str, Any], arms: Sequence[str]) -> Iterator[tuple[dict[str, Any], str, dict[str, Any]]]:
    """(entry, arm, record) in the report's order: samples by id, arms sorted; only `arms` when given."""
    for entry in report.get("details", []):
        for arm in sorted(entry.get("arms", {})):
            if not arms or is_named(arm, arms):
                yield entry, arm, entry["arms"][arm]


def _token(value: Any, what: str) -> str:
    text = str(value)
    if not text or any(char.isspace() for char in text):
        raise BenchError(f"{what} {text!r} holds white space (or is empty), which TREC files cannot hold")
    return text


def _scored(entry: dict[str, Any]) -> bool:
    """A sample the qrels hold: positive, with gold files."""
    return entry.get("stratum") == "positive" and bool(entry.get("gold"))


def trec_run(report: dict[str, Any], arms: Sequence[str] = (), all_samples: bool = False) -> str:
    """One arm's run over the samples the qrels hold (every sample it ranked with `all_samples`)."""
    records = list(_records(report, arms))
    chosen = sorted({arm for _, arm, _ in records})
    if len(chosen) > 1:
        raise BenchError(f"a TREC run file holds one arm's rankings (IR tools read every line as one system's): choose one with --arm "
                         f"(the report holds {', '.join(chosen)})")
    lines = []
    for entry, arm, record in records:
        qid, tag = _token(entry["id"], "sample id"), _token(arm, "arm")
        ranking = [] if record.get("error") else record.get("ranking") or []
        if not all_samples and not _scored(entry):
            continue
        if not ranking and not all_samples:  # scores zero in the report: a line ranx reads as no gold found
            lines.append(f"{qid} Q0 {NO_RANKING} 1 0.000000 {tag}")
        for rank, path in enumerate(ranking, start=1):
            lines.append(f"{qid} Q0 {_token(path, 'path')} {rank} {1.0 / rank:.6f} {tag}")
    return "".join(line + "\n" for line in lines)


def qrels(report: dict[str, Any], arms: Sequence[str] = ()) -> str:
    """The gold of the positive samples (those the arms scored, when arms are named)."""
    scored_by_arms = {entry["id"] for entry, _, _ in _records(report, arms)}
    lines = []
    for entry in report.get("details", []):
        if not _scored(entry) or (arms and entry["id"] not in scored_by_arms):
            continue
        for path in sorted(set(entry.get("gold") or [])):
            lines.append(f"{_token(entry['id'], 'sample id')} 0 {_token(path, 'path')} 1")
    return "".join(line + "\n" for line in lines)


def flat_rows(report: dict[str, Any], arms: Sequence[str] = ()) -> list[dict[str, Any]]:
    rows = []
    trajectory = trajectory_columns(report) if report.get("trajectory") else {}
    for entry, arm, record in _records(report, arms):
        row: dict[str, Any] = {"sample_id": entry["id"], "arm": arm, "repo": entry.get("repo"), "task_type": entry.get("task_type"),
                               "stratum": entry.get("stratum")}
        row.update({field: record.get(field) for field in ROW_FIELDS[5:]})
        row.update(record.get("metrics") or {})
        row.update(trajectory.get((entry["id"], arm), {}))
        rows.append(row)
    return rows


def to_csv(rows: list[dict[str, Any]]) -> str:
    metrics = sorted({key for row in rows for key in row if key not in ROW_FIELDS})
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[*ROW_FIELDS, *metrics], restval="", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: ("" if value is None else value) for key, value in row.items()})
    return out.getvalue()


def to_jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(orjson.dumps(row, option=orjson.OPT_SORT_KEYS).decode() + "\n" for row in rows)


def export(report: dict[str, Any], form: str, arms: Sequence[str] = (), all_samples: bool = False) -> str:
    """The report in `form` (one of FORMATS); BenchError for an arm no record has or a bad field."""
    held = {arm for entry in report.get("details", []) for arm in entry.get("arms", {})}
    unknown = [name for name in arms if not any(is_named(arm, [name]) for arm in held)]
    if unknown:
        raise BenchError(f"--arm {', '.join(unknown)}: the report holds no such arm (it holds: {', '.join(sorted(held)) or 'none'})")
    if form == "trec":
        return trec_run(report, arms, all_samples)
    if form == "qrels":
        return qrels(report, arms)
    rows = flat_rows(report, arms)
    return to_csv(rows) if form == "csv" else to_jsonl(rows)
