"""known-target-v1: case validation, generation from git blobs, verification, kt_ metrics, full runs.

The git repository is built by the tests at run time (no repository is committed).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path

import pytest

from report_helpers import assert_outcomes

from pytest_retrieval_bench.arms.base import Answer
from pytest_retrieval_bench.cli import main as cli_main
from pytest_retrieval_bench.samples.metrics import extra_metrics
from pytest_retrieval_bench.samples.known_target_generate import Candidate, GenerationError, collect_candidates, generate
from pytest_retrieval_bench.samples import load_samples
from pytest_retrieval_bench.samples.known_target import parse_known_target_row, verify_case

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
CASES = TESTDATA / "formats" / "known_target" / "cases.jsonl"

FILES = {
    "widgets/__init__.py": '"""Tiny toolkit for parsing widget configuration files."""\n',
    "widgets/config.py": '''"""Configuration loading for widgets."""

DEFAULT_PORT = 8080


def load_config(path):
    """Read a widget configuration file from disk."""
    if not path:
        raise ValueError("configuration path is empty")

    def parse(text):
        raise SyntaxError("nested parse failure")

    return parse(path)


class ConfigStore:
    """Keep parsed configurations keyed by name."""

    def lookup(self, name):
        """Return the configuration stored under a name."""
        message = "unknown configuration name"
        raise KeyError(message)

    def _private(self):
        """Hidden helper."""
        raise RuntimeError("never a target")


class _Hidden:
    def visible_name(self):
        """Not public: its class is private."""
''',
    "widgets/network.py": '''"""Network helpers that open widget connections."""


def open_socket(host, port):
    """Open a TCP socket to the widget server."""
    if port <= 0:
        raise ValueError(f"bad port {port}")
    raise ConnectionError("widget server refused the connection")


def load_config():
    """Load the network section of a configuration."""
    return {}
''',
    "README.md": "# Widget toolkit\n\n```sh\n# not a heading\n```\n\n## Installing widgets\n",
    "docs/guide.md": "# Widget toolkit\n\n## Configure widgets\n",
    "tests/test_config.py": '"""Tests are never targets."""\n\n\ndef test_load():\n    """A test."""\n    raise AssertionError("not a target")\n',
    "widgets/test_helpers.py": '"""Test helpers are never targets."""\n',
    "vendor/lib.py": '"""Vendored code is never a target."""\n',
}

# every candidate of FILES, derived by hand from the five rules (load_config is ambiguous: two files
# define it; "Widget toolkit" is ambiguous: two files head with it)
EXPECTED = {
    Candidate("symbol_lookup", "python-definition-name", "parse", "widgets/config.py", 11, "function"),
    Candidate("symbol_lookup", "python-definition-name", "ConfigStore", "widgets/config.py", 17, "class"),
    Candidate("symbol_lookup", "python-definition-name", "lookup", "widgets/config.py", 20, "function"),
    Candidate("symbol_lookup", "python-definition-name", "open_socket", "widgets/network.py", 4, "function"),
    Candidate("architecture_lookup", "python-module-docstring", "Tiny toolkit for parsing widget configuration files.", "widgets/__init__.py", 0, "module"),
    Candidate("architecture_lookup", "python-module-docstring", "Configuration loading for widgets.", "widgets/config.py", 0, "module"),
    Candidate("architecture_lookup", "python-module-docstring", "Network helpers that open widget connections.", "widgets/network.py", 0, "module"),
    Candidate("task_lookup", "python-definition-docstring", "Read a widget configuration file from disk.", "widgets/config.py", 6, "function"),
    Candidate("task_lookup", "python-definition-docstring", "Keep parsed configurations keyed by name.", "widgets/config.py", 17, "class"),
    Candidate("task_lookup", "python-definition-docstring", "Return the configuration stored under a name.", "widgets/config.py", 20, "function"),
    Candidate("task_lookup", "python-definition-docstring", "Open a TCP socket to the widget server.", "widgets/network.py", 4, "function"),
    Candidate("task_lookup", "python-definition-docstring", "Load the network section of a configuration.", "widgets/network.py", 11, "function"),
    Candidate("docs_lookup", "markdown-heading", "Installing widgets", "README.md", 7, "heading"),
    Candidate("docs_lookup", "markdown-heading", "Configure widgets", "docs/guide.md", 3, "heading"),
    Candidate("error_or_trace_lookup", "python-raise-literal", "configuration path is empty", "widgets/config.py", 6, "function"),
    Candidate("error_or_trace_lookup", "python-raise-literal", "nested parse failure", "widgets/config.py", 11, "function"),
    Candidate("error_or_trace_lookup", "python-raise-assigned-literal", "unknown configuration name", "widgets/config.py", 20, "function"),
    Candidate("error_or_trace_lookup", "python-raise-literal", "widget server refused the connection", "widgets/network.py", 4, "function"),
}


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent)}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env, text=True).stdout.strip()


def commit_widgets(root: Path) -> Path:
    """The widgets repository (FILES, one commit) at `root`."""
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "widgets")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return commit_widgets(tmp_path / "widgets")


def _blob_reader(repo: Path, commit: str):
    def read(path: str) -> bytes | None:
        result = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True)
        return result.stdout if result.returncode == 0 else None
    return read


# -- validation of the committed cases ------------------------------------------------------------


def test_committed_cases_load():
    loaded = load_samples(CASES)
    assert loaded.format == "known-target" and not loaded.problems
    assert sorted(sample.task_type for sample in loaded.samples) == sorted(
        ["symbol_lookup", "architecture_lookup", "task_lookup", "docs_lookup", "error_or_trace_lookup"])
    task = next(sample for sample in loaded.samples if sample.task_type == "task_lookup")
    assert task.query_text == "Keep parsed configurations keyed by name." and task.query == {"query": task.query_text}
    assert task.gold_files == ("widgets/config.py",) and task.stratum == "positive"
    assert task.extra["targets"] == [{"path": "widgets/config.py", "line": 13, "kind": "class"}]
    assert task.extra["case"]["channel"] == "emb"  # the intent's channel when the row leaves it out


def _case_rows() -> list[dict]:
    return [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines()]


def _edit(row: dict, dotted: str, value) -> dict:
    row = copy.deepcopy(row)
    target, *path = dotted.split(".")
    holder = row
    keys = [target, *path]
    for key in keys[:-1]:
        holder = holder[int(key)] if isinstance(holder, list) else holder[key]
    last = keys[-1]
    if value is KeyError:
        del holder[last]
    elif isinstance(holder, list):
        holder[int(last)] = value
    else:
        holder[last] = value
    return row


@pytest.mark.parametrize(
    ("edit", "value", "field", "words"),
    [
        ("id", "bad id", "id", "safe id"),
        ("id", KeyError, "id", "missing"),
        ("commit", "ABC" + "0" * 37, "commit", "40 lowercase hex"),
        ("commit", "0" * 39, "commit", "40 lowercase hex"),
        ("repo", "widgets", "repo", "owner/name"),
        ("intent", "guess_lookup", "intent", "unknown intent"),
        ("channel", "docs", "channel", "primary channel"),
        ("query", "  ", "query", "non-empty string"),
        ("targets", [], "targets", "non-empty list"),
        ("targets.0.path", "/abs/config.py", "targets[0]", "repository-relative"),
        ("targets.0.path", "widgets/../config.py", "targets[0]", "not canonical"),
        ("targets.0.path", "./widgets/config.py", "targets[0]", "not canonical"),
        ("targets.0.path", "widgets\\config.py", "targets[0]", "repository-relative"),
        ("targets.0.kind", "heading", "targets[0]", "is not one of"),
        ("targets.0.line", 0, "targets[0]", "positive line"),
        ("targets.0.line", True, "targets[0]", "must be an integer"),
        ("evidence", KeyError, "evidence", "must be an object"),
        ("evidence.rule", "markdown-heading", "evidence.rule", "cannot derive intent"),
        ("evidence.source_sha256", "abc", "evidence.source_sha256", "64 lowercase hex"),
        ("schema", "known-target-v2", "schema", "unsupported schema"),
    ],
)
def test_malformed_cases_name_file_line_and_field(tmp_path, edit, value, field, words):
    rows = _case_rows()
    symbol = next(row for row in rows if row.get("intent") == "symbol_lookup")
    rows.append(_edit(symbol, edit, value) | ({"id": "edited"} if edit != "id" else {}))
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    loaded = load_samples(path)
    assert len(loaded.samples) == 5 and len(loaded.problems) == 1
    message = str(loaded.problems[0])
    assert message.startswith(f"{path}:{len(rows)}: field {field!r}: ") and words in message


def test_file_level_targets_have_line_zero_and_targets_do_not_repeat(tmp_path):
    rows = _case_rows()
    architecture = next(row for row in rows if row.get("intent") == "architecture_lookup")
    with pytest.raises(Exception, match="line 0"):
        parse_known_target_row(_edit(architecture, "targets.0.line", 3), "f", 1)
    twice = _edit(architecture, "targets", architecture["targets"] * 2)
    with pytest.raises(Exception, match="repeats an earlier target"):
        parse_known_target_row(twice, "f", 1)


# -- generation -----------------------------------------------------------------------------------


def test_candidates_follow_the_five_rules(repo):
    commit = _git(repo, "rev-parse", "HEAD")
    candidates, digests = collect_candidates(repo, commit)
    assert set(candidates) == EXPECTED
    assert set(digests) >= {"widgets/config.py", "widgets/network.py", "README.md", "docs/guide.md"}
    assert not any(path.startswith(("tests/", "vendor/")) or "test_" in path for path in digests)


def test_generation_reads_blobs_at_the_commit_not_the_working_tree(repo):
    commit = _git(repo, "rev-parse", "HEAD")
    # after the commit: the working tree changes and a later commit renames a function
    (repo / "widgets" / "network.py").write_text((repo / "widgets" / "network.py").read_text().replace("open_socket", "dial"))
    (repo / "widgets" / "extra.py").write_text('"""Uncommitted module docstring."""\n')
    cases = generate(repo, commit, 2, "acme/widgets")
    assert len(cases) == 10 and {case["commit"] for case in cases} == {commit}
    assert not any(case["query"] in ("dial", "Uncommitted module docstring.") for case in cases)
    for case in cases:
        assert Candidate(case["intent"], case["evidence"]["rule"], case["query"], case["targets"][0]["path"],
                         case["targets"][0]["line"], case["targets"][0]["kind"]) in EXPECTED
        assert verify_case(case, _blob_reader(repo, commit)) is None
    assert generate(repo, commit, 2, "acme/widgets") == cases  # deterministic


def test_a_short_cell_fails_and_nothing_is_written(repo, tmp_path, capsys):
    out = tmp_path / "bank.jsonl"
    code = cli_main(["known-target", "generate", str(repo), "--commit", "HEAD", "--per-intent", "3", "--out", str(out)])
    assert code == 1 and not out.exists()
    error = capsys.readouterr().err
    assert "docs_lookup: 2 of 3" in error and "symbol_lookup" not in error


def test_an_existing_bank_is_never_overwritten(repo, tmp_path, capsys):
    out = tmp_path / "bank.jsonl"
    out.write_text("evidence\n")
    code = cli_main(["known-target", "generate", str(repo), "--commit", "HEAD", "--per-intent", "1", "--out", str(out)])
    assert code == 1 and out.read_text() == "evidence\n"
    assert "already exists" in capsys.readouterr().err


def test_cli_writes_a_bank_that_loads(repo, tmp_path, capsys):
    out = tmp_path / "bank.jsonl"
    assert cli_main(["known-target", "generate", str(repo), "--commit", "HEAD", "--per-intent", "2", "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith("Generated 10 source-verified cases: symbol_lookup 2,")
    loaded = load_samples(out)
    assert loaded.format == "known-target" and not loaded.problems and len(loaded.samples) == 10
    assert {sample.repo for sample in loaded.samples} == {"local/widgets"}
    with pytest.raises(GenerationError, match="not a commit"):
        generate(repo, "no-such-revision", 1, "acme/widgets")


# -- verification ---------------------------------------------------------------------------------


def test_verification_rejects_edited_cases(repo):
    commit = _git(repo, "rev-parse", "HEAD")
    read = _blob_reader(repo, commit)
    case = next(c for c in generate(repo, commit, 2, "acme/widgets") if c["intent"] == "error_or_trace_lookup")
    assert verify_case(case, read) is None
    assert "does not derive" in verify_case({**case, "query": case["query"] + "!"}, read)
    moved = {**case, "targets": [{**case["targets"][0], "line": case["targets"][0]["line"] + 1}]}
    assert "does not derive" in verify_case(moved, read)
    other_rule = {**case, "evidence": {**case["evidence"], "rule": "python-raise-assigned-literal" if case["evidence"]["rule"] == "python-raise-literal" else "python-raise-literal"}}
    assert "does not derive" in verify_case(other_rule, read)
    assert "does not match evidence.source_sha256" in verify_case({**case, "evidence": {**case["evidence"], "source_sha256": "0" * 64}}, read)
    assert "is not a text file" in verify_case({**case, "targets": [{**case["targets"][0], "path": "widgets/gone.py"}]}, read)


def test_a_later_commit_that_changes_the_witness_fails_verification(repo):
    first = _git(repo, "rev-parse", "HEAD")
    case = generate(repo, first, 1, "acme/widgets")[0]
    path = repo / case["targets"][0]["path"]
    path.write_text(path.read_text() + "\n# touched\n")
    _git(repo, "commit", "-q", "-am", "touch")
    assert "source_sha256" in verify_case(case, _blob_reader(repo, _git(repo, "rev-parse", "HEAD")))


# -- metrics --------------------------------------------------------------------------------------


def _sample(targets):
    row = {"id": "c1", "repo": "acme/widgets", "commit": "a" * 40, "intent": "symbol_lookup", "query": "q",
           "targets": targets, "evidence": {"rule": "python-definition-name", "source_sha256": "b" * 64}}
    return parse_known_target_row(row, "f", 1)


def _score(sample, answer, limit=10):
    return extra_metrics(sample, answer, answer.ranking, limit, lambda _: 50)


def test_kt_metrics_by_hand_with_spans():
    sample = _sample([{"path": "a.py", "line": 10, "kind": "function"}])
    answer = Answer(ranking=[], spans=[
        {"path": "b.py", "start_line": 1, "end_line": 50},  # another file
        {"path": "a.py", "kind": "class", "start_line": 5, "end_line": 20},  # contains line 10, wrong kind
        {"path": "a.py", "kind": "function_definition", "start_line": 8, "end_line": 12},  # match at rank 3
    ])
    values = _score(sample, answer).values
    assert values["kt_hit@1"] == 0.0
    assert (values["kt_recall@1"], values["kt_recall@5"], values["kt_recall@10"]) == (0.0, 1.0, 1.0)
    assert (values["kt_mrr@1"], values["kt_mrr@5"], values["kt_mrr@10"]) == (0.0, pytest.approx(1 / 3), pytest.approx(1 / 3))
    assert "kt_recall@20" not in values  # above the limit


def test_kt_line_rule_and_whole_files():
    sample = _sample([{"path": "a.py", "line": 10, "kind": "function"}])
    miss = _score(sample, Answer(ranking=[], spans=[{"path": "a.py", "kind": "function", "start_line": 11, "end_line": 12}])).values
    assert miss["kt_recall@10"] == 0.0
    whole = _score(sample, Answer(ranking=["c.py", "a.py"]), limit=20).values  # a ranked file holds all its lines
    assert whole["kt_hit@1"] == 0.0 and whole["kt_mrr@5"] == 0.5 and whole["kt_recall@20"] == 1.0


def test_kt_file_level_targets_match_any_result_in_the_file():
    row = {"id": "m1", "repo": "acme/widgets", "commit": "a" * 40, "intent": "architecture_lookup", "query": "q",
           "targets": [{"path": "m.py", "line": 0, "kind": "module"}], "evidence": {"rule": "python-module-docstring", "source_sha256": "b" * 64}}
    sample = parse_known_target_row(row, "f", 1)
    values = _score(sample, Answer(ranking=[], spans=[{"path": "m.py", "kind": "function", "start_line": 40, "end_line": 41}])).values
    assert values["kt_hit@1"] == 1.0


def test_kt_recall_over_several_targets_and_errors_in_the_denominator():
    sample = _sample([{"path": "a.py", "line": 10, "kind": "function"}, {"path": "b.py", "line": 20, "kind": "class"}])
    values = _score(sample, Answer(ranking=["b.py", "z.py"])).values
    assert values["kt_hit@1"] == 1.0 and values["kt_recall@1"] == 0.5 and values["kt_mrr@10"] == 1.0
    failed = extra_metrics(sample, None, [], 10, lambda _: 50)
    assert set(failed.values) == set(values) and not any(failed.values.values())
    assert failed.counts["kt_recall@5"] == [0, 2]


# -- end to end -----------------------------------------------------------------------------------


def test_known_target_run_end_to_end(pytester, repo, tmp_path):
    bank = tmp_path / "bank.jsonl"
    assert cli_main(["known-target", "generate", str(repo), "--commit", "HEAD", "--per-intent", "2", "--out", str(bank), "--repo-name", "acme/widgets"]) == 0
    commit = _git(repo, "rev-parse", "HEAD")
    result = pytester.runpytest_subprocess(
        f"--bench-samples={bank}", f"--bench-snapshot=acme/widgets@{commit}={repo}",
        "--bench-arms=grep", "--bench-report=out.json", "-p", "no:cacheprovider",
    )
    assert result.ret == 0, result.stdout.str()
    assert_outcomes(result, passed=10)
    report = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    summary = report["summary"]["all"]["grep"]
    for name in ("kt_hit@1", "kt_recall@5", "kt_mrr@5", "kt_mrr@10", "recall@5"):
        assert name in summary["metrics"], name
    assert {f"task:{intent}" for intent in ("symbol_lookup", "architecture_lookup", "task_lookup", "docs_lookup", "error_or_trace_lookup")} <= set(report["summary"])
    assert "kt_recall@5" in summary["micro"]


def test_an_edited_case_fails_its_items(pytester, repo, tmp_path):
    bank = tmp_path / "bank.jsonl"
    assert cli_main(["known-target", "generate", str(repo), "--commit", "HEAD", "--per-intent", "1", "--out", str(bank), "--repo-name", "acme/widgets"]) == 0
    lines = bank.read_text(encoding="utf-8").splitlines()
    edited = json.loads(lines[1])
    edited["query"] = edited["query"] + "s"
    lines[1] = json.dumps(edited)
    bank.write_text("\n".join(lines) + "\n", encoding="utf-8")
    commit = _git(repo, "rev-parse", "HEAD")
    result = pytester.runpytest_subprocess(
        f"--bench-samples={bank}", f"--bench-snapshot=acme/widgets@{commit}={repo}",
        "--bench-arms=grep", "--bench-report=out.json", "-p", "no:cacheprovider",
    )
    assert_outcomes(result, passed=4, failed=1)
    result.stdout.fnmatch_lines([f"*{edited['id']}*an edited case is rejected*"])
    report = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    record = next(entry for entry in report["details"] if entry["id"] == edited["id"])["arms"]["grep"]
    assert record["error"] and record["metrics"]["kt_hit@1"] == 0.0 and record["ranking"] == []
