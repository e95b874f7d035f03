"""known-target-v1 cases (seed 003): source-derived queries with known targets at a commit.

Loading checks the case's shape (ids, commits, intents, canonical locations, digests); whether
its source witness still holds needs the repository, so `verify_case` re-derives it from the
blob at the commit when the snapshot is at hand. An edited query, target or rule, or a blob
whose digest changed, fails verification and the item errors instead of scoring.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Callable

from pytest_retrieval_bench.errors import InputError
from pytest_retrieval_bench.samples.known_target_generate import INTENTS, SCHEMA, Candidate, derive
from pytest_retrieval_bench.samples.model import Sample

FORMAT = "known-target"
FILE_KINDS = frozenset({"module"})
DEFINITION_KINDS = frozenset({"function", "class"})
INTENT_KINDS = {
    "symbol_lookup": DEFINITION_KINDS,
    "task_lookup": DEFINITION_KINDS,
    "error_or_trace_lookup": DEFINITION_KINDS,
    "architecture_lookup": FILE_KINDS,
    "docs_lookup": frozenset({"heading"}),
}

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_REPO = re.compile(r"^[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+$")


def is_header(row: dict[str, Any]) -> bool:
    return "schema" in row and "query" not in row


def canonical_path(path: Any) -> str | None:
    """Why `path` is not a canonical repository-relative POSIX path, or None when it is."""
    if not isinstance(path, str) or not path:
        return "must be a non-empty string"
    if path.startswith("/") or "\\" in path or (len(path) > 1 and path[1] == ":"):
        return f"{path!r} is not a repository-relative POSIX path"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return f"{path!r} is not canonical (empty, '.' or '..' component)"
    return None


def _string(row: dict[str, Any], name: str, source: str, line: int) -> str:
    value = row.get(name)
    if value is None:
        raise InputError(source, "missing", line=line, field=name)
    if not isinstance(value, str) or not value.strip():
        raise InputError(source, "expected a non-empty string", line=line, field=name)
    return value


def _targets(row: dict[str, Any], intent: str, source: str, line: int) -> list[dict[str, Any]]:
    targets = row.get("targets")
    if not isinstance(targets, list) or not targets:
        raise InputError(source, "must be a non-empty list of {path, line, kind}", line=line, field="targets")
    out: list[dict[str, Any]] = []
    for index, target in enumerate(targets):
        where = f"targets[{index}]"
        if not isinstance(target, dict):
            raise InputError(source, f"expected an object, got {type(target).__name__}", line=line, field=where)
        problem = canonical_path(target.get("path"))
        if problem:
            raise InputError(source, f"path {problem}", line=line, field=where)
        kind = target.get("kind")
        if kind not in INTENT_KINDS[intent]:
            raise InputError(source, f"kind {kind!r} is not one of {sorted(INTENT_KINDS[intent])} for intent {intent}", line=line, field=where)
        number = target.get("line")
        if isinstance(number, bool) or not isinstance(number, int):
            raise InputError(source, f"line must be an integer, got {number!r}", line=line, field=where)
        if kind in FILE_KINDS and number != 0:
            raise InputError(source, f"a file-level target has line 0, got {number}", line=line, field=where)
        if kind not in FILE_KINDS and number < 1:
            raise InputError(source, f"a definition or heading target has a positive line, got {number}", line=line, field=where)
        entry = {"path": target["path"], "line": number, "kind": kind}
        if entry in out:
            raise InputError(source, "repeats an earlier target", line=line, field=where)
        out.append(entry)
    return out


def parse_known_target_row(row: dict[str, Any], source: str, line: int) -> Sample | None:
    """One case -> a positive sample whose task type is its intent (None for a header line)."""
    schema = row.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise InputError(source, f"unsupported schema {schema!r} (expected {SCHEMA!r})", line=line, field="schema")
    if is_header(row):
        return None
    case_id = _string(row, "id", source, line)
    if not _ID.match(case_id):
        raise InputError(source, f"{case_id!r} is not a safe id (letters, digits, '.', '_', '-'; at most 128)", line=line, field="id")
    repo = _string(row, "repo", source, line)
    if not _REPO.match(repo):
        raise InputError(source, f"expected 'owner/name', got {repo!r}", line=line, field="repo")
    commit = _string(row, "commit", source, line)
    if not _COMMIT.match(commit):
        raise InputError(source, f"expected exactly 40 lowercase hex digits, got {commit!r}", line=line, field="commit")
    intent = _string(row, "intent", source, line)
    if intent not in INTENTS:
        raise InputError(source, f"unknown intent {intent!r} (known: {', '.join(INTENTS)})", line=line, field="intent")
    channel, rules = INTENTS[intent]
    if row.get("channel", channel) != channel:
        raise InputError(source, f"intent {intent} has primary channel {channel!r}, got {row.get('channel')!r}", line=line, field="channel")
    query = _string(row, "query", source, line)
    targets = _targets(row, intent, source, line)
    evidence = row.get("evidence")
    if not isinstance(evidence, dict):
        raise InputError(source, "must be an object {rule, source_sha256}", line=line, field="evidence")
    if evidence.get("rule") not in rules:
        raise InputError(source, f"rule {evidence.get('rule')!r} cannot derive intent {intent} (expected {', '.join(rules)})", line=line, field="evidence.rule")
    digest = evidence.get("source_sha256")
    if not isinstance(digest, str) or not _SHA256.match(digest):
        raise InputError(source, f"expected 64 lowercase hex digits, got {digest!r}", line=line, field="evidence.source_sha256")
    case = {"id": case_id, "repo": repo, "commit": commit, "intent": intent, "channel": channel, "query": query,
            "targets": targets, "evidence": {"rule": evidence["rule"], "source_sha256": digest}}
    return Sample.positive(
        id=case_id,
        task_type=intent,
        repo=repo,
        base_commit=commit,
        query={"query": query},
        query_text=query,
        gold_files=tuple(dict.fromkeys(target["path"] for target in targets)),
        source=source,
        line=line,
        extra={"format": FORMAT, "targets": targets, "case": case},
    )


def verify_case(case: dict[str, Any], read_blob: Callable[[str], bytes | None]) -> str | None:
    """Why the case no longer holds at its commit, or None when its witness still derives it.

    The witness is the first target's file: its SHA-256 must equal `evidence.source_sha256`,
    and the case's rule must still derive (query, path, line, kind) for every target from
    that target's file. `read_blob(path)` returns the file's bytes at the commit, or None.
    """
    rule = case["evidence"]["rule"]
    witness = case["targets"][0]["path"]
    blobs: dict[str, bytes | None] = {}
    for target in case["targets"]:
        path = target["path"]
        if path not in blobs:
            blobs[path] = read_blob(path)
        data = blobs[path]
        if data is None:
            return f"known-target case {case['id']}: target file {path!r} is not a text file of {case['repo']}@{case['commit']}"
        if path == witness and hashlib.sha256(data).hexdigest() != case["evidence"]["source_sha256"]:
            return f"known-target case {case['id']}: the source witness {path!r} does not match evidence.source_sha256 at {case['commit']}"
        expected = Candidate(case["intent"], rule, case["query"], path, target["line"], target["kind"])
        if expected not in derive(path, data):
            return (f"known-target case {case['id']}: rule {rule} does not derive query {case['query']!r} -> "
                    f"{path}:{target['line']} ({target['kind']}) from the blob at {case['commit']} (an edited case is rejected)")
    return None
