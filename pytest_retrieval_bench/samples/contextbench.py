"""ContextBench rows (SPEC 1.2): a JSONL export of the dataset, or its Parquet files.

The query is the problem statement verbatim and the gold is the distinct files of the gold
spans, so every file-level metric and report section works unchanged; the spans themselves
go to `extra["spans"]` for the ContextBench line metrics.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import orjson

from pytest_retrieval_bench.corpus.snapshot import check_relative_path
from pytest_retrieval_bench.errors import InputError
from pytest_retrieval_bench.samples.model import Sample

FORMAT = "contextbench"
TASK_TYPE = "contextbench"

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REPO = re.compile(r"^[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+$")
_BARE_REPO = re.compile(r"^[A-Za-z0-9_.\-]+$")
_GITHUB = re.compile(r"^(?:https?://)?(?:www\.)?github\.com/")
_BAD_ID = re.compile(r"[\s:\[\]]")
# the official evaluator's `_resolve_repo_from_original_id`: `owner__name-123`
_ORIGINAL_ID = re.compile(r"^([A-Za-z0-9_.-]+)__([A-Za-z0-9_.-]+)-\d+$")


def normalize_path(raw: str) -> str:
    """A gold span's file exactly as ContextBench's evaluator reads it (`parsers/gold.py`,
    `_normalize_rel_path`), then refused when the result cannot name a file inside a snapshot.

    The official rule, in order: backslashes become slashes; `/testbed/` is dropped; `/workspace/`
    is dropped with the one directory after it (the Multi-SWE checkout, `owner__name__0.1`); any
    other leading slashes are dropped (`/app/x` is `app/x`); a relative path loses every leading
    `.` and `/` (`lstrip("./")`, so `.github/x` is `github/x`, as the official gold has it).
    Nothing else is changed. A result that is empty, absolute or has a `..` component is a
    ValueError (the official would keep it as a gold file no answer can match).
    """
    path = raw.replace("\\", "/")
    if path.startswith("/testbed/"):
        path = path[len("/testbed/"):]
    elif path.startswith("/workspace/"):
        parts = path[len("/workspace/"):].split("/", 1)
        path = parts[1] if len(parts) == 2 else parts[0]
    elif path.startswith("/"):
        path = path.lstrip("/")
    else:
        path = path.lstrip("./")
    if not path:
        raise ValueError(f"path {raw!r} names no file")
    problem = check_relative_path(path)
    if problem:
        raise ValueError(f"path {raw!r} becomes {path!r} under ContextBench's rule: {problem}")
    return path


def normalize_repo(raw: str) -> str:
    """`owner/name`, also from a GitHub URL (`https://github.com/owner/name.git`)."""
    repo = _GITHUB.sub("", raw.strip()).rstrip("/")
    if repo.endswith(".git"):
        repo = repo[:-4]
    if not _REPO.match(repo):
        raise ValueError(f"expected 'owner/name', got {raw!r}")
    return repo


def resolve_repo(row: dict[str, Any], source: str, line: int) -> str:
    """The row's repository: `repo` when it has an owner, else a `repo_url` column, else the owner
    and name in `original_inst_id` (`cli__cli-5973`, the official evaluator's rule), else the bare
    name (a Multi-SWE row's `repo` is `cli`, `core`, `clap`): its snapshot is then `NAME@COMMIT`,
    named with `--bench-snapshot`."""
    raw = _text(row, "repo", source, line)
    try:
        return normalize_repo(raw)
    except ValueError:
        pass
    url = row.get("repo_url")
    if isinstance(url, str) and url.strip():
        try:
            return normalize_repo(url)
        except ValueError as error:
            raise InputError(source, str(error), line=line, field="repo_url") from error
    original = row.get("original_inst_id")
    match = _ORIGINAL_ID.match(original.strip()) if isinstance(original, str) else None
    if match:
        return f"{match.group(1)}/{match.group(2)}"
    if _BARE_REPO.match(raw.strip()):
        return raw.strip()
    raise InputError(source, f"expected 'owner/name' or a repository name, got {raw!r}", line=line, field="repo")


def _text(row: dict[str, Any], name: str, source: str, line: int) -> str:
    value = row.get(name)
    if value is None:
        raise InputError(source, "missing", line=line, field=name)
    if not isinstance(value, str):
        raise InputError(source, f"expected string, got {type(value).__name__}", line=line, field=name)
    if not value.strip():
        raise InputError(source, "empty", line=line, field=name)
    return value


def _line_number(item: dict[str, Any], name: str) -> int:
    value = item.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def gold_spans(value: Any, source: str, line: int) -> list[dict[str, Any]]:
    """The `gold_context` column (a JSON string or a list) as normalised spans, in order, repeats kept."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError as error:
            raise InputError(source, f"not a JSON list: {error}", line=line, field="gold_context") from error
    if value is None:
        raise InputError(source, "missing", line=line, field="gold_context")
    if not isinstance(value, list):
        raise InputError(source, f"expected a list of spans, got {type(value).__name__}", line=line, field="gold_context")
    spans: list[dict[str, Any]] = []
    for index, item in enumerate(value):
        where = f"gold_context[{index}]"
        if not isinstance(item, dict):
            raise InputError(source, f"expected an object, got {type(item).__name__}", line=line, field=where)
        raw = item.get("file", item.get("path"))
        if not isinstance(raw, str):
            raise InputError(source, "'file' must be a string", line=line, field=where)
        try:
            span = {"path": normalize_path(raw), "start_line": _line_number(item, "start_line"), "end_line": _line_number(item, "end_line")}
        except ValueError as error:
            raise InputError(source, str(error), line=line, field=where) from error
        if span["end_line"] < span["start_line"]:
            raise InputError(source, f"end_line {span['end_line']} is before start_line {span['start_line']}", line=line, field=where)
        spans.append(span)  # a repeated span is kept: CodeNib's block metrics count each one
    if not spans:
        raise InputError(source, "no gold spans", line=line, field="gold_context")
    return spans


def parse_contextbench_row(row: dict[str, Any], source: str, line: int) -> Sample:
    """One dataset row -> a positive sample (`line` is the JSONL line or the Parquet row number)."""
    sample_id = _text(row, "instance_id", source, line)
    if _BAD_ID.search(sample_id):
        raise InputError(source, f"{sample_id!r} has whitespace, ':' or brackets (it names a test item)", line=line, field="instance_id")
    repo = resolve_repo(row, source, line)
    commit = _text(row, "base_commit", source, line)
    if not _COMMIT.match(commit):
        raise InputError(source, f"expected 40 lowercase hex digits, got {commit!r}", line=line, field="base_commit")
    statement = _text(row, "problem_statement", source, line)
    spans = gold_spans(row.get("gold_context"), source, line)
    return Sample.positive(
        id=sample_id,
        task_type=TASK_TYPE,
        repo=repo,
        base_commit=commit,
        query={"problem_statement": statement},
        query_text=statement,
        gold_files=tuple(dict.fromkeys(span["path"] for span in spans)),
        source=source,
        line=line,
        extra={"format": FORMAT, "spans": spans},
    )


def require_pyarrow(path: Path) -> Any:
    """`pyarrow.parquet`, or an InputError telling the user to install the optional dependency."""
    try:
        import pyarrow.parquet as parquet  # type: ignore[import-not-found]
    except ImportError as error:
        raise InputError(str(path), "reading Parquet samples needs pyarrow, which is not installed: pip install pyarrow") from error
    return parquet


def iter_parquet_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based row number, row) of a Parquet file, read in batches; pyarrow is optional."""
    parquet = require_pyarrow(path)
    try:
        handle = parquet.ParquetFile(path)
        number = 0
        for batch in handle.iter_batches(batch_size=1024):
            for row in batch.to_pylist():
                number += 1
                yield number, row
    except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
        raise InputError(str(path), f"cannot read Parquet: {error}") from error
