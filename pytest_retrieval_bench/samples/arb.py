"""Agent Retrieval Bench rows (SPEC 1.1), rule for rule as the bench's own baseline reads them."""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from pytest_retrieval_bench.errors import InputError
from pytest_retrieval_bench.samples.model import Sample

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REPO = re.compile(r"^[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+$")


def query_text_for_eval(query: Any) -> str:
    """Byte for byte the bench's `query_text_for_eval` (Python json.dumps, default separators)."""
    return json.dumps(query or {}, ensure_ascii=False, sort_keys=True)


def _dedupe(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(value for value in values if value))


def _paths(values: Iterable[Any]) -> list[str]:
    """Strings, or the `path` of objects; anything else is dropped (as the bench does)."""
    out: list[str] = []
    for value in values:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict) and value.get("path"):
            out.append(str(value["path"]))
    return out


PATH_LISTS = ("files", "related_tests", "must_context_files", "context_files", "root_cause_files", "given_files",
              "negative_distractors", "hard_negative_files")


def _check_path_lists(row: dict[str, Any], gold: dict[str, Any], source: str, line: int) -> None:
    """Path fields must be lists of strings or {path} objects: a bare string would otherwise be
    read character by character, and a number or nested list would become a "path"."""
    fields = [(f"gold.{name}", gold.get(name)) for name in PATH_LISTS] + [("hard_negative_files", row.get("hard_negative_files"))]
    for field, value in fields:
        if value is None:
            continue
        if not isinstance(value, list):
            raise InputError(source, f"expected a list of paths, got {type(value).__name__}", line=line, field=field)
        for item in value:
            if not isinstance(item, str) and not (isinstance(item, dict) and isinstance(item.get("path", ""), str)):
                raise InputError(source, f"expected a path string or {{\"path\": ...}} object, got {item!r}", line=line, field=field)


def target_gold_files(task_type: str, gold: dict[str, Any]) -> list[str]:
    """The bench's `target_gold_files`."""
    if gold.get("no_gold") is True:
        return []
    explicit = _dedupe(_paths(gold.get("files") or []))
    if explicit:
        return explicit
    if task_type == "code2test":
        return _dedupe(_paths(gold.get("related_tests") or []))
    if task_type == "comment2context":
        context = _dedupe(_paths(gold.get("must_context_files") or gold.get("context_files") or []))
        if context:
            return context
    return _dedupe(_paths(gold.get("root_cause_files") or [])) or _dedupe(_paths(gold.get("related_tests") or []))


def given_files(task_type: str, gold: dict[str, Any], query: Any) -> list[str]:
    """Given context: gold.given_files plus, for comment2context, the reviewed file (SPEC 1.1).

    The bench's own `given_files` adds the reviewed file only when gold.given_files is empty;
    the protocol takes the union, so a reviewed file is never scored as a success.
    """
    values = _paths(gold.get("given_files") or [])
    if task_type == "comment2context" and isinstance(query, dict):
        values.append(query.get("given_file") or query.get("path"))
    return _dedupe(str(value) for value in values if value)


def shown_given_files(task_type: str, gold: dict[str, Any], query: Any) -> list[str]:
    """The bench's own `given_files`, which its rankers receive: gold.given_files, or for
    comment2context without them the reviewed file. The scorer removes the union instead."""
    values = _paths(gold.get("given_files") or [])
    if not values and task_type == "comment2context" and isinstance(query, dict):
        values = [query.get("given_file") or query.get("path")]
    return _dedupe(str(value) for value in values if value)


def hard_negatives(row: dict[str, Any], gold: dict[str, Any], gold_files: list[str]) -> list[str]:
    """gold.negative_distractors plus hard_negative_files (top level or in gold), minus gold."""
    values = _paths(gold.get("negative_distractors") or [])
    values += _paths(row.get("hard_negative_files") or [])
    values += _paths(gold.get("hard_negative_files") or [])
    excluded = set(gold_files)
    return [path for path in _dedupe(values) if path not in excluded]


def _require(row: dict[str, Any], name: str, kind: type, source: str, line: int) -> Any:
    if name not in row:
        raise InputError(source, "missing", line=line, field=name)
    value = row[name]
    if not isinstance(value, kind):
        raise InputError(source, f"expected {kind.__name__}, got {type(value).__name__}", line=line, field=name)
    return value


def parse_arb_row(row: dict[str, Any], source: str, line: int) -> Sample:
    """Validate an ARB envelope and apply the gold, given, hard-negative and stratum rules."""
    sample_id = _require(row, "id", str, source, line)
    if not sample_id.strip():
        raise InputError(source, "empty", line=line, field="id")
    task_type = _require(row, "task_type", str, source, line)
    repo = _require(row, "repo", str, source, line)
    if not _REPO.match(repo):
        raise InputError(source, f"expected 'owner/name', got {repo!r}", line=line, field="repo")
    commit = _require(row, "base_commit", str, source, line)
    if not _COMMIT.match(commit):
        raise InputError(source, f"expected 40 lowercase hex digits, got {commit!r}", line=line, field="base_commit")
    query = _require(row, "query", dict, source, line)
    gold = _require(row, "gold", dict, source, line)
    metadata = row.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InputError(source, "expected object", line=line, field="metadata")
    _check_path_lists(row, gold, source, line)
    gold_files = target_gold_files(task_type, gold)
    changed = query.get("changed_file")
    return Sample(
        id=sample_id,
        task_type=task_type,
        repo=repo,
        base_commit=commit,
        query=query,
        query_text=query_text_for_eval(query),
        gold_files=tuple(gold_files),
        given_files=tuple(given_files(task_type, gold, query)),
        shown_given=tuple(shown_given_files(task_type, gold, query)),
        hard_negatives=tuple(hard_negatives(row, gold, gold_files)),
        no_gold=gold.get("no_gold") is True,
        organic=metadata.get("organic") is True,
        changed_file=changed if isinstance(changed, str) else None,
        source=source,
        line=line,
        extra={"row": row},  # the line as read: agent items score trajectories and skip leaking queries by it
    )
