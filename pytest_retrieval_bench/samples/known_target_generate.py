"""Generate a known-target-v1 case bank from a git repository at one commit (seed 003).

Every case is derived from a git blob at the commit (never the working tree) by one of five
rules, and carries the blob's SHA-256, so a later run can re-derive it and reject an edited
case. The same `derive` function serves generation and verification: a case is valid exactly
when the rule that produced it still produces it.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from pytest_retrieval_bench.corpus.tree import git, iter_git_blobs
from pytest_retrieval_bench.errors import SnapshotError

SCHEMA = "known-target-v1"
MAX_WITNESS_BYTES = 1_048_576  # the snapshot text-file bound: a larger witness could not be verified

# intent -> (primary channel, rules that may derive it)
INTENTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "symbol_lookup": ("emb", ("python-definition-name",)),
    "architecture_lookup": ("emb", ("python-module-docstring",)),
    "task_lookup": ("emb", ("python-definition-docstring",)),
    "docs_lookup": ("docs", ("markdown-heading",)),
    "error_or_trace_lookup": ("emb", ("python-raise-literal", "python-raise-assigned-literal")),
}
RULE_INTENT = {rule: intent for intent, (_, rules) in INTENTS.items() for rule in rules}

EXCLUDED_DIRECTORIES = frozenset(
    {"test", "tests", "testing", "fixture", "fixtures", "testdata", "benchmark", "benchmarks", "bench",
     "vendor", "vendored", "third_party", "thirdparty", "archive", "archives", "node_modules"}
)
MIN_SYMBOL_CHARS = 3

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class GenerationError(Exception):
    """The bank cannot be generated as asked (a short cell, an unreadable repository, ...)."""


@dataclass(frozen=True)
class Candidate:
    """One derivable (query, target) pair and the rule that derived it."""

    intent: str
    rule: str
    query: str
    path: str
    line: int
    kind: str


# -- eligibility ------------------------------------------------------------------------------


def excluded(path: str) -> bool:
    """Tests, fixtures, benchmarks, vendored and archived code, and hidden directories are out."""
    parts = path.split("/")
    if any(part.lower() in EXCLUDED_DIRECTORIES or part.startswith(".") for part in parts[:-1]):
        return True
    name = parts[-1]
    return name.startswith(("test_", ".")) or name.endswith("_test.py") or name == "conftest.py"


def witness_text(data: bytes) -> str | None:
    """A blob usable as a witness: under 1 MiB, no NUL byte, strict UTF-8 (so it can be re-read)."""
    if len(data) >= MAX_WITNESS_BYTES or b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# -- the five rules ---------------------------------------------------------------------------


def _summary(docstring: str | None) -> str | None:
    """The first non-blank line of a docstring, stripped."""
    for line in (docstring or "").splitlines():
        if line.strip():
            return line.strip()
    return None


def _kind(node: ast.AST) -> str:
    return "class" if isinstance(node, ast.ClassDef) else "function"


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _statement_lists(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """`body` and every statement list nested in it, without entering nested definitions."""
    yield body
    for statement in body:
        if isinstance(statement, _DEFINITIONS):
            continue
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(statement, name, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from _statement_lists(inner)
        for handler in getattr(statement, "handlers", None) or []:
            yield from _statement_lists(handler.body)
        for case in getattr(statement, "cases", None) or []:
            yield from _statement_lists(case.body)


def _literal(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip():
        return node.value.strip()
    return None


def _raise_messages(owner: ast.AST) -> Iterator[tuple[str, str]]:
    """(rule, message) of each `raise E("literal")` or `msg = "literal"; raise E(msg)` owned by `owner`."""
    for statements in _statement_lists(owner.body):  # type: ignore[attr-defined]
        for index, statement in enumerate(statements):
            if not isinstance(statement, ast.Raise) or not isinstance(statement.exc, ast.Call) or not statement.exc.args:
                continue
            argument = statement.exc.args[0]
            message = _literal(argument)
            if message is not None:
                yield "python-raise-literal", message
                continue
            if isinstance(argument, ast.Name) and index > 0:
                previous = statements[index - 1]
                if (isinstance(previous, ast.Assign) and len(previous.targets) == 1 and isinstance(previous.targets[0], ast.Name)
                        and previous.targets[0].id == argument.id):
                    message = _literal(previous.value)
                    if message is not None:
                        yield "python-raise-assigned-literal", message


def _definitions(body: list[ast.stmt], public: bool = True) -> Iterator[tuple[ast.AST, bool]]:
    """(definition, public) for every definition at any depth; public = no `_` name on its path."""
    for statements in _statement_lists(body):
        for statement in statements:
            if isinstance(statement, _DEFINITIONS):
                is_public = public and not statement.name.startswith("_")
                yield statement, is_public
                yield from _definitions(statement.body, is_public)


def python_candidates(path: str, text: str) -> list[Candidate]:
    """Symbol, task, architecture and error candidates of one Python file (none if it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found: list[Candidate] = []
    summary = _summary(ast.get_docstring(tree))
    if summary:
        found.append(Candidate("architecture_lookup", "python-module-docstring", summary, path, 0, "module"))
    for node, public in _definitions(tree.body):
        if not public:
            continue
        line, kind = node.lineno, _kind(node)  # type: ignore[attr-defined]
        name = node.name  # type: ignore[attr-defined]
        if len(name) >= MIN_SYMBOL_CHARS:
            found.append(Candidate("symbol_lookup", "python-definition-name", name, path, line, kind))
        summary = _summary(ast.get_docstring(node))  # type: ignore[arg-type]
        if summary:
            found.append(Candidate("task_lookup", "python-definition-docstring", summary, path, line, kind))
        for rule, message in _raise_messages(node):
            found.append(Candidate("error_or_trace_lookup", rule, message, path, line, kind))
    return list(dict.fromkeys(found))


def markdown_candidates(path: str, text: str) -> list[Candidate]:
    """ATX headings outside fenced code blocks (the heading text is the query)."""
    found: list[Candidate] = []
    fence: str | None = None
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        opening = _FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence) and not line.strip()[len(opening.group(1)):].strip():
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        heading = _ATX.match(line)
        if heading and heading.group(2) and heading.group(2).strip():
            found.append(Candidate("docs_lookup", "markdown-heading", heading.group(2).strip(), path, number, "heading"))
    return found


def derive(path: str, data: bytes) -> list[Candidate]:
    """Every candidate one blob yields, by the file's type; the verifier re-runs exactly this."""
    text = witness_text(data)
    if text is None:
        return []
    if path.endswith(".py"):
        return python_candidates(path, text)
    if path.lower().endswith((".md", ".markdown")):
        return markdown_candidates(path, text)
    return []


# -- reading a commit -------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> bytes:
    try:
        return git(repo, *args)
    except SnapshotError as error:
        raise GenerationError(str(error)) from error


def resolve_commit(repo: Path, revision: str) -> str:
    """The 40-hex commit `revision` names in `repo`."""
    if not (repo / ".git").exists() and not (repo / "HEAD").is_file():
        raise GenerationError(f"{repo} is not a git repository")
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}").decode().strip()
    except GenerationError as error:
        raise GenerationError(f"{revision!r} is not a commit of {repo}") from error


def read_blobs(repo: Path, commit: str) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of every regular blob in the commit's tree: Git blobs, never the work tree."""
    try:
        yield from iter_git_blobs(repo, commit)
    except SnapshotError as error:
        raise GenerationError(str(error)) from error


# -- the bank ---------------------------------------------------------------------------------


def _unambiguous(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Drop every query that names more than one target within its intent (no guessed labels)."""
    targets: dict[tuple[str, str], set[tuple[str, int]]] = defaultdict(set)
    unique: dict[tuple[str, str], Candidate] = {}
    for candidate in candidates:
        key = (candidate.intent, candidate.query)
        targets[key].add((candidate.path, candidate.line))
        unique.setdefault(key, candidate)
    return [candidate for key, candidate in unique.items() if len(targets[key]) == 1]


def _draw_order(commit: str, candidate: Candidate) -> str:
    """A fixed pseudo-random order, so N cases spread over the repository, not its first files."""
    return hashlib.sha256(f"{commit}\0{candidate.intent}\0{candidate.path}\0{candidate.line}\0{candidate.query}".encode()).hexdigest()


def collect_candidates(repo_dir: Path, commit: str) -> tuple[list[Candidate], dict[str, str]]:
    """Every unambiguous candidate of the commit's eligible blobs, and each witness blob's SHA-256."""
    digests: dict[str, str] = {}
    candidates: list[Candidate] = []
    for path, data in read_blobs(repo_dir, commit):
        if excluded(path):
            continue
        found = derive(path, data)
        if found:
            digests[path] = hashlib.sha256(data).hexdigest()
            candidates.extend(found)
    return _unambiguous(candidates), digests


def generate(repo_dir: Path, revision: str, per_intent: int, repo_name: str) -> list[dict[str, Any]]:
    """`per_intent` cases for each of the five intents; GenerationError when any intent is short."""
    if per_intent < 1:
        raise GenerationError("--per-intent must be at least 1")
    commit = resolve_commit(repo_dir, revision)
    candidates, digests = collect_candidates(repo_dir, commit)
    by_intent: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        by_intent[candidate.intent].append(candidate)
    short = [f"{intent}: {len(by_intent[intent])} of {per_intent}" for intent in INTENTS if len(by_intent[intent]) < per_intent]
    if short:
        raise GenerationError(f"too few source-verifiable cases in {repo_name}@{commit} ({'; '.join(short)}); no bank was written")
    slug = repo_name.split("/")[-1]
    cases: list[dict[str, Any]] = []
    for intent, (channel, _) in INTENTS.items():
        chosen = sorted(by_intent[intent], key=lambda c: _draw_order(commit, c))[:per_intent]
        for number, candidate in enumerate(sorted(chosen, key=lambda c: (c.path, c.line, c.query)), start=1):
            cases.append({
                "id": f"{slug}-{intent}-{number:03d}",
                "repo": repo_name,
                "commit": commit,
                "intent": intent,
                "channel": channel,
                "query": candidate.query,
                "targets": [{"path": candidate.path, "line": candidate.line, "kind": candidate.kind}],
                "evidence": {"rule": candidate.rule, "source_sha256": digests[candidate.path]},
            })
    return cases


def header(repo_name: str, commit: str, per_intent: int) -> dict[str, Any]:
    return {"schema": SCHEMA, "repo": repo_name, "commit": commit, "per_intent": per_intent, "intents": list(INTENTS)}


def write_bank(out: Path, lines: list[dict[str, Any]]) -> None:
    """Create `out` exclusively: existing evidence is never overwritten, even by a race."""
    import json

    payload = "".join(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines).encode("utf-8")
    try:
        descriptor = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError as error:
        raise GenerationError(f"{out} already exists; choose a new output path (an existing bank is never overwritten)") from error
    except OSError as error:
        raise GenerationError(f"cannot create {out}: {error.strerror or error}") from error
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(payload)
    except OSError as error:
        out.unlink(missing_ok=True)
        raise GenerationError(f"cannot write {out}: {error.strerror or error}") from error
