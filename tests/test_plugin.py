"""End-to-end tests of the plugin as users get it: a separate pytest process loading it by entry point.

Every run goes through `pytester.runpytest_subprocess` (or a plain subprocess where a run is shared
by several tests, or must be interrupted), against the bundled synthetic bench in `testdata/`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from report_helpers import assert_canonical, assert_outcomes, zero_wall

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"
ARCHIVE = TESTDATA / "agent_retrieval_bench_synthetic_v1.tar.zst"
GIN_TREE = TESTDATA / "trees" / "acme__gin-lite"

GIN = "acme/gin-lite"
GIN_COMMIT = "5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5"
PYQUERY = "acme/pyquery-tools"
PYQUERY_COMMIT = "e2601fdf1178e7ede87badac02b7e21d41ae9350"
RUSTY = "nimbus/rusty-cache"
RUSTY_COMMIT = "e8f3e036f8b4abb20c72abbfb89c7d7b80bcc8cf"

BUILTIN_ARMS = ("grep", "grep-ident", "bm25:all", "bm25:ident", "arb-lexical", "arb-bm25")
UNLABELED = "8b0b00a68102d0681630c347"
SECTIONS = {"registration", "details", "summary", "paired", "latency", "skipped", "problems", "missing", "snapshots"}
ARM_ENTRY_KEYS = {"ranking", "abstained", "error", "state", "wall_ms", "metrics", "selective_success"}
WORDS = ("HIT", "MISS", "ABSTAIN", "ANSWER")
USAGE_ERROR = 4


# -- the samples, read independently of the plugin (SPEC 1.1) --------------------------------------


def _paths(values: Any) -> list[str]:
    return [v if isinstance(v, str) else v["path"] for v in values or [] if isinstance(v, str) or (isinstance(v, dict) and v.get("path"))]


def _gold(row: dict[str, Any]) -> list[str]:
    gold, task = row["gold"], row["task_type"]
    if gold.get("no_gold") is True:
        return []
    files = _paths(gold.get("files"))
    if files:
        return files
    if task == "code2test":
        return list(gold.get("related_tests") or [])
    if task == "comment2context":
        context = _paths(gold.get("must_context_files") or gold.get("context_files"))
        if context:
            return context
    return list(gold.get("root_cause_files") or []) or list(gold.get("related_tests") or [])


def _given(row: dict[str, Any]) -> set[str]:
    """gold.given_files plus, for comment2context, the query's given_file or path (SPEC 1.1)."""
    given = set(row["gold"].get("given_files") or [])
    if row["task_type"] == "comment2context":
        reviewed = row["query"].get("given_file") or row["query"].get("path")
        if reviewed:
            given.add(reviewed)
    return given


def _stratum(row: dict[str, Any]) -> str:
    if row["gold"].get("no_gold") is not True:
        return "positive"
    return "natural_no_gold" if (row.get("metadata") or {}).get("organic") is True else "counterfactual_no_gold"


def _load_rows() -> dict[str, dict[str, Any]]:
    rows = {}
    for line in SAMPLES.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            row["_stratum"] = _stratum(row)
            row["_labeled"] = bool(_gold(row)) or row["gold"].get("no_gold") is True
            rows[row["id"]] = row
    return rows


ROWS = _load_rows()
LABELED = sorted(i for i, r in ROWS.items() if r["_labeled"])


# -- helpers ------------------------------------------------------------------------------------------


def bench_args(*extra: str, samples: Path = SAMPLES, corpus: Path | None = CORPUS) -> list[str]:
    args = ["-p", "no:cacheprovider", f"--bench-samples={samples}"]
    if corpus is not None:
        args.append(f"--bench-corpus={corpus}")
    return [*args, *extra]


def comparable(data: bytes, drop: tuple[str, ...] = ()) -> bytes:
    """The report's bytes with wall_ms values zeroed and the latency section (and `drop`) removed."""
    assert_canonical(data)
    report = json.loads(data)
    for section in ("latency", *drop):
        report.pop(section)
    return json.dumps(zero_wall(report), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def read_report(path: Path) -> dict[str, Any]:
    return json.loads(path.read_bytes())


def collected_ids(result: pytest.RunResult) -> set[str]:
    """Node ids printed by `--collect-only -q`."""
    return {line.strip() for line in result.outlines if "::" in line and not line.startswith(("ERROR", "FAILED"))}


def no_unknown_mark_warning(result: pytest.RunResult) -> None:
    text = result.stdout.str() + result.stderr.str()
    assert "Unknown pytest.mark" not in text
    assert "PytestUnknownMarkWarning" not in text


def bench_dirs(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("pytest-retrieval-bench-"))


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A TMPDIR of the test's own for the runs it starts, to see (and drop) what they leave behind."""
    directory = tmp_path / "tmpdir"
    directory.mkdir()
    monkeypatch.setenv("TMPDIR", str(directory))
    return directory


def _run_shared(directory: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], bytes]:
    directory.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    report = directory / "out.json"
    process = subprocess.run(
        [sys.executable, "-m", "pytest", *args, f"--bench-report={report}"],
        cwd=directory, env=env, capture_output=True, text=True, timeout=120,
    )
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    return process, report.read_bytes()


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], bytes]:
    """Every built-in arm over the whole release directory bench, verbose (shared by several tests)."""
    return _run_shared(tmp_path_factory.mktemp("full"), *bench_args("-v", "-rs"))


# -- 1. out of the way without --bench-samples ---------------------------------------------------------


def test_without_bench_samples_the_plugin_adds_nothing(pytester: pytest.Pytester, private_tmp: Path) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    assert 1\n\ndef test_two():\n    assert 2\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")
    assert_outcomes(result, passed=2)
    assert any(line.startswith("plugins:") and "retrieval-bench" in line for line in result.outlines)  # loaded, yet silent
    assert not [line for line in result.outlines if line.startswith("retrieval-bench")]  # no header, no summary
    assert not [line for line in result.outlines if "::" in line and "test_plain.py" not in line]
    assert bench_dirs(private_tmp) == []


def test_bench_alone_unless_test_paths_are_named(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    pass\n")
    alone = pytester.runpytest_subprocess(*bench_args("--collect-only", "-q", "--bench-arms=grep"))
    ids = collected_ids(alone)
    assert len(ids) == len(ROWS) and not any("test_plain" in i for i in ids)
    both = pytester.runpytest_subprocess(*bench_args("--collect-only", "-q", "--bench-arms=grep"), "test_plain.py")
    ids = collected_ids(both)
    assert "test_plain.py::test_one" in ids and len(ids) == len(ROWS) + 1


# -- 2. item names and -k ------------------------------------------------------------------------------


def _expected(predicate: Any, arms: tuple[str, ...] = BUILTIN_ARMS) -> set[str]:
    return {f"bench/samples.jsonl::{sid}[{arm}]" for sid, row in ROWS.items() for arm in arms if predicate(sid, row, arm)}


K_CASES = {
    "gin and code2test": lambda sid, row, arm: row["repo"] == GIN and row["task_type"] == "code2test",
    "bm25": lambda sid, row, arm: "bm25" in arm,
    "348c688578a4eb0c8ef20fef": lambda sid, row, arm: sid == "348c688578a4eb0c8ef20fef",
    "natural_no_gold": lambda sid, row, arm: row["_stratum"] == "natural_no_gold",
    "acme": lambda sid, row, arm: row["repo"].startswith("acme/"),
    "rusty-cache and grep-ident": lambda sid, row, arm: row["repo"] == RUSTY and arm == "grep-ident",
}


K_RUNS = [pytest.param(expression, (), id=expression) for expression in K_CASES] + [
    pytest.param(expression, ("-p", "no:xdist"), id=f"{expression}-no-xdist") for expression in ("gin and code2test", "bm25")
]


@pytest.mark.parametrize(("expression", "plugins"), K_RUNS)
def test_item_names_and_k_selection(pytester: pytest.Pytester, expression: str, plugins: tuple[str, ...]) -> None:
    local = pytester.path / "bench" / "samples.jsonl"
    local.parent.mkdir()
    shutil.copyfile(SAMPLES, local)
    strict = ("--strict-markers", "-W", "error::pytest.PytestUnknownMarkWarning")
    result = pytester.runpytest_subprocess(*plugins, *bench_args("--collect-only", "-q", *strict, "-k", expression, samples=local))
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    expected = _expected(K_CASES[expression])
    assert expected, "the case must select something"
    assert collected_ids(result) == expected
    no_unknown_mark_warning(result)


# -- 3. outcomes -----------------------------------------------------------------------------------------


def _word_of(record: dict[str, Any]) -> str:
    if record["abstained"]:
        return "ABSTAIN"
    if record["rank_of_first_gold"] is not None:
        return "HIT"
    return "MISS" if record["metrics"] else "ANSWER"


def test_outcomes_and_verbose_words(full_run: tuple[subprocess.CompletedProcess[str], bytes]) -> None:
    process, data = full_run
    report = json.loads(data)
    out = process.stdout
    labeled, arms = len(LABELED), len(BUILTIN_ARMS)
    missed = sum(_word_of(record) == "MISS" for entry in report["details"] for record in entry["arms"].values())
    assert missed and re.search(rf"\b{labeled * arms - missed} passed, {arms} skipped, {missed} missed\b", out), out[-2000:]
    assert "retrieval-bench: samples" in out  # the header line
    lines = [line for line in out.splitlines() if re.match(r"^\S*samples\.jsonl::\w+\[.+\] \w", line)]
    by_item = {}
    for line in lines:
        match = re.match(r"^\S*samples\.jsonl::(\w+)\[([^\]]+)\] (\w+)", line)
        by_item[(match[1], match[2])] = line  # type: ignore[index]
    assert len(by_item) == len(ROWS) * arms
    seen = set()
    for entry in report["details"]:
        for arm, record in entry["arms"].items():
            word = _word_of(record)
            seen.add(word)
            assert re.search(rf"\] {word}\b", by_item[(entry["id"], arm)]), (entry["id"], arm, by_item[(entry["id"], arm)])
    assert seen == set(WORDS)
    # a known abstention: grep-ident finds no identifier in a natural no-gold query
    assert "] ABSTAIN" in by_item[("b24f8e7fc13075669c0b315e", "grep-ident")]
    for arm in BUILTIN_ARMS:
        assert "SKIPPED" in by_item[(UNLABELED, arm)]
    assert re.search(rf"SKIPPED \[{arms}\] .*: no_gold_unlabeled", out)
    assert report["skipped"] == {"no_gold_unlabeled": 1}
    unlabeled = next(e for e in report["details"] if e["id"] == UNLABELED)
    assert unlabeled["skipped"] == "no_gold_unlabeled" and unlabeled["arms"] == {}


# -- 4. the report ---------------------------------------------------------------------------------------


def test_report_sections_and_details(full_run: tuple[subprocess.CompletedProcess[str], bytes]) -> None:
    _, data = full_run
    assert_canonical(data)
    report = json.loads(data)
    assert SECTIONS <= set(report)
    assert report["problems"] == [] and report["missing"] == []
    assert set(report["snapshots"]) == {f"{GIN}@{GIN_COMMIT}", f"{PYQUERY}@{PYQUERY_COMMIT}", f"{RUSTY}@{RUSTY_COMMIT}"}
    assert report["registration"]["arms"] == list(BUILTIN_ARMS) and report["registration"]["limit"] == 20
    ids = [entry["id"] for entry in report["details"]]
    assert ids == sorted(ids) == sorted(ROWS)
    limit = 20
    for entry in report["details"]:
        row = ROWS[entry["id"]]
        assert (entry["repo"], entry["task_type"], entry["stratum"]) == (row["repo"], row["task_type"], row["_stratum"])
        if entry["id"] == UNLABELED:
            continue
        assert entry["gold"] == list(dict.fromkeys(_gold(row)))
        assert set(entry["arms"]) == set(BUILTIN_ARMS)
        for arm, record in entry["arms"].items():
            assert ARM_ENTRY_KEYS <= set(record), (entry["id"], arm)
            assert len(record["ranking"]) <= limit and len(set(record["ranking"])) == len(record["ranking"])
            assert record["error"] is None
            assert isinstance(record["wall_ms"], (int, float)) and record["wall_ms"] >= 0
            if record["abstained"]:
                assert record["ranking"] == []
            if row["_stratum"] == "positive":
                assert {f"recall@{k}" for k in (5, 10, 20)} | {"mrr@k"} <= set(record["metrics"])
                assert record["selective_success"] == (not record["abstained"] and bool(set(record["ranking"]) & set(entry["gold"])))
            else:
                assert record["selective_success"] == record["abstained"]
    summary_all = report["summary"]["all"]
    assert set(summary_all) == set(BUILTIN_ARMS)
    for row in summary_all.values():
        assert row["n"] == len(LABELED) and row["positives"] == sum(1 for i in LABELED if ROWS[i]["_stratum"] == "positive")


def test_given_files_never_ranked(full_run: tuple[subprocess.CompletedProcess[str], bytes]) -> None:
    _, data = full_run
    report = json.loads(data)
    checked = 0
    for entry in report["details"]:
        given = _given(ROWS[entry["id"]])
        assert set(entry["given"]) == given, entry["id"]
        for arm, record in entry["arms"].items():
            assert not given & set(record["ranking"]), (entry["id"], arm, given & set(record["ranking"]))
            checked += bool(given)
    with_given = [i for i in LABELED if _given(ROWS[i])]
    assert len(with_given) >= 8 and checked == len(with_given) * len(BUILTIN_ARMS)


def test_two_runs_write_the_same_report(pytester: pytest.Pytester, full_run: tuple[subprocess.CompletedProcess[str], bytes]) -> None:
    _, first = full_run
    result = pytester.runpytest_subprocess(*bench_args("-q", "--bench-report=again.json"))
    assert result.ret == 0
    second = (pytester.path / "again.json").read_bytes()
    assert comparable(second) == comparable(first)


WHOLE_RANKING = {"mrr@k", "mrr", "mrr_given_kept", "gold_coverage@8k"}
"""Metrics named without a cut-off k: MRR at the limit, and the bench's MRR and gold coverage over the whole ranking."""


def test_limit_5_scores_only_at_5(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(*bench_args("-q", "--bench-limit", "5", "--bench-arms=grep,bm25:all", "--bench-report=out.json"))
    assert result.ret == 0
    report = read_report(pytester.path / "out.json")
    assert report["registration"]["limit"] == 5
    for entry in report["details"]:
        for record in entry["arms"].values():
            assert len(record["ranking"]) <= 5
            for name in record["metrics"]:
                assert name in WHOLE_RANKING or name.endswith("@5") or name.startswith("bcy@"), name  # BCY budgets are tokens, not k
    for group in report["summary"].values():
        for row in group.values():
            assert all(name in WHOLE_RANKING or name.endswith("@5") or name.startswith("bcy@") for name in row["metrics"])
            assert set(row["wilson95"]) <= {"hit@5"}
    for group in report["paired"].values():
        for comparison in group.values():
            assert set(comparison) <= {"recall@5", "mrr@k", "mrr", "bcy@8000"}


@pytest.mark.parametrize("limit", ["0", "51"])
def test_limit_out_of_range_is_a_usage_error(pytester: pytest.Pytester, private_tmp: Path, limit: str) -> None:
    result = pytester.runpytest_subprocess(*bench_args("--bench-limit", limit))
    assert result.ret == USAGE_ERROR
    assert "--bench-limit" in result.stderr.str() and limit in result.stderr.str()
    result.stdout.no_fnmatch_line("*passed*")


def test_unknown_arm_is_a_usage_error_naming_it(pytester: pytest.Pytester, private_tmp: Path) -> None:
    result = pytester.runpytest_subprocess(*bench_args("--bench-arms=grep,no-such-arm"))
    assert result.ret == USAGE_ERROR
    assert "no-such-arm" in result.stderr.str()


def test_release_archive_gives_the_directory_results(pytester: pytest.Pytester, full_run: tuple[subprocess.CompletedProcess[str], bytes]) -> None:
    _, from_directory = full_run
    cache = pytester.path / "cache"
    result = pytester.runpytest_subprocess(*bench_args("-q", f"--bench-cache-dir={cache}", "--bench-report=out.json", samples=ARCHIVE, corpus=None))
    assert result.ret == 0, result.stdout.str()
    from_archive = (pytester.path / "out.json").read_bytes()
    assert comparable(from_archive, drop=("registration",)) == comparable(from_directory, drop=("registration",))
    report = json.loads(from_archive)
    assert report["registration"]["samples"][0]["path"].endswith(ARCHIVE.name)


# -- 5. the registration sidecar ------------------------------------------------------------------------------

PROBE_CONFTEST = """
import os
from pathlib import Path
from pytest_retrieval_bench import Answer

class Probe:
    name = "probe"

    def retrieve(self, request):
        sidecar = Path(os.environ["RB_SIDECAR"])
        assert sidecar.is_file(), "the registration sidecar must exist before any arm runs"
        return Answer(ranking=request.snapshot.paths()[:1])

def pytest_retrieval_bench_arms(config):
    return [Probe()]
"""


def test_registration_sidecar(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeconftest(PROBE_CONFTEST)
    report, sidecar = pytester.path / "out.json", pytester.path / "out.json.registration.json"
    monkeypatch.setenv("RB_SIDECAR", str(sidecar))
    common = bench_args("-q", "-k", "gin", f"--bench-report={report}")

    first = pytester.runpytest_subprocess(*common, "--bench-arms=grep,probe")
    assert first.ret == 0, first.stdout.str()
    registered = sidecar.read_bytes()
    assert_canonical(registered)
    assert json.loads(registered) == read_report(report)["registration"]
    assert json.loads(registered)["arms"] == ["grep", "probe"]

    same = pytester.runpytest_subprocess(*common, "--bench-arms=grep,probe")
    assert same.ret == 0, same.stdout.str()

    before = report.read_bytes()
    refused = pytester.runpytest_subprocess(*common, "--bench-arms=bm25:all")
    assert refused.ret != 0
    assert "out.json.registration.json" in refused.stdout.str() + refused.stderr.str()
    assert "passed" not in refused.stdout.str()
    assert sidecar.read_bytes() == registered and report.read_bytes() == before

    replaced = pytester.runpytest_subprocess(*common, "--bench-arms=bm25:all", "--bench-replace-registration")
    assert replaced.ret == 0, replaced.stdout.str()
    assert json.loads(sidecar.read_bytes())["arms"] == ["bm25:all"]
    assert read_report(report)["registration"]["arms"] == ["bm25:all"]


# -- 6. bad input ------------------------------------------------------------------------------------------------


def test_bad_rows_fail_alone_with_file_and_line(pytester: pytest.Pytester) -> None:
    lines = SAMPLES.read_text(encoding="utf-8").splitlines()
    no_repo = json.loads(lines[3])
    del no_repo["repo"]
    broken = lines[:2] + ['{"id": "broken", "task_type": ', json.dumps(no_repo)] + lines[4:] + [lines[0]]
    samples = pytester.path / "bad.jsonl"
    samples.write_text("\n".join(broken) + "\n", encoding="utf-8")
    dropped = {json.loads(lines[2])["id"], no_repo["id"]}
    malformed_line, no_repo_line, duplicate_line = 3, 4, len(broken)

    result = pytester.runpytest_subprocess(*bench_args("-rf", "--bench-arms=grep", "--bench-report=out.json", samples=samples))
    assert result.ret == 1
    running = [i for i in ROWS if i not in dropped]
    assert_outcomes(result, failed=3, passed=sum(1 for i in running if ROWS[i]["_labeled"]), skipped=1)
    out = result.stdout.str()
    for line, what in ((malformed_line, "malformed JSON"), (no_repo_line, "'repo'"), (duplicate_line, "duplicate")):
        assert re.search(rf"FAILED bad\.jsonl::invalid-line{line} - ", out), out
        assert re.search(rf"{re.escape(str(samples))}:{line}: .*{what}", out), (line, what)
    problems = read_report(pytester.path / "out.json")["problems"]
    assert len(problems) == 3
    for line in (malformed_line, no_repo_line, duplicate_line):
        assert any(problem.startswith(f"{samples}:{line}:") for problem in problems), problems
    assert {entry["id"] for entry in read_report(pytester.path / "out.json")["details"]} == set(running)


def test_unknown_repository_fails_its_items_only(pytester: pytest.Pytester) -> None:
    lines = SAMPLES.read_text(encoding="utf-8").splitlines()
    ghost = json.loads(lines[0])
    ghost.update(id="0000ghost000000000000000", repo="ghost/none")
    samples = pytester.path / "ghost.jsonl"
    samples.write_text("\n".join([*lines, json.dumps(ghost)]) + "\n", encoding="utf-8")
    result = pytester.runpytest_subprocess(*bench_args("-q", "--bench-arms=grep,bm25:all", "--bench-report=out.json", samples=samples))
    assert_outcomes(result, errors=2, passed=2 * len(LABELED), skipped=2)
    result.stdout.fnmatch_lines(["*ERROR at setup of 0000ghost000000000000000[[]grep[]]*",
                                 f"snapshot ghost/none@{ghost['base_commit']}: no snapshot for ghost/none@{ghost['base_commit']}; searched corpus *"])
    assert "During handling" not in result.stdout.str()
    entry = next(e for e in read_report(pytester.path / "out.json")["details"] if e["id"] == "0000ghost000000000000000")
    for record in entry["arms"].values():
        assert "no snapshot for ghost/none@" in record["error"] and record["ranking"] == [] and not record["abstained"]


def test_corrupt_chunk_file_fails_that_snapshot_only(pytester: pytest.Pytester) -> None:
    corpus = pytester.path / "corpus"
    shutil.copytree(CORPUS, corpus)
    (chunk_file,) = corpus.rglob("*.zst")
    assert chunk_file.parent.name == "nimbus__rusty-cache"
    data = chunk_file.read_bytes()
    chunk_file.write_bytes(data[: len(data) // 2])
    result = pytester.runpytest_subprocess(*bench_args("-q", "--bench-arms=grep", "--bench-report=out.json", corpus=corpus))
    rusty = [i for i in LABELED if ROWS[i]["repo"] == RUSTY]
    assert_outcomes(result, errors=len(rusty), passed=len(LABELED) - len(rusty), skipped=1)
    report = read_report(pytester.path / "out.json")
    for entry in report["details"]:
        record = entry["arms"].get("grep")
        if entry["repo"] == RUSTY:
            assert str(chunk_file) in record["error"], record["error"]
        elif record is not None:
            assert record["error"] is None
    assert f"{RUSTY}@{RUSTY_COMMIT}" not in report["snapshots"]
    assert str(chunk_file) in result.stdout.str()


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_samples_that_cannot_be_opened_are_a_usage_error(pytester: pytest.Pytester, private_tmp: Path, kind: str) -> None:
    path = pytester.path / "samples.jsonl"
    if kind == "directory":
        path.mkdir()
    result = pytester.runpytest_subprocess(*bench_args(samples=path))
    assert result.ret == USAGE_ERROR
    assert str(path) in result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("kind", [
    pytest.param("permission", marks=pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads anything")),
    pytest.param("read-error", marks=pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc")),
])
def test_unreadable_samples_file_is_a_usage_error(pytester: pytest.Pytester, private_tmp: Path, kind: str) -> None:
    path = pytester.path / "samples.jsonl"
    if kind == "permission":
        shutil.copyfile(SAMPLES, path)
        path.chmod(0)
    else:
        path.symlink_to("/proc/self/mem")  # a regular file whose first read fails with EIO
    result = pytester.runpytest_subprocess(*bench_args(samples=path))
    assert result.ret == USAGE_ERROR, result.stdout.str()[-2000:] + result.stderr.str()[-2000:]
    assert str(path) in result.stderr.str()


def test_usage_error_leaves_no_temporary_directory(pytester: pytest.Pytester, private_tmp: Path) -> None:
    result = pytester.runpytest_subprocess(*bench_args("--bench-arms=no-such-arm"))
    assert result.ret == USAGE_ERROR
    assert bench_dirs(private_tmp) == []


# -- 7. a snapshot from a directory ----------------------------------------------------------------------------------


def test_directory_snapshot_matches_the_corpus(pytester: pytest.Pytester, full_run: tuple[subprocess.CompletedProcess[str], bytes]) -> None:
    snapshot = f"--bench-snapshot={GIN}@{GIN_COMMIT}={GIN_TREE}"
    result = pytester.runpytest_subprocess(*bench_args("-q", snapshot, "--bench-arms=grep,bm25:all,grep-ident", "--bench-report=out.json", corpus=None))
    gin = [i for i in LABELED if ROWS[i]["repo"] == GIN]
    others = [i for i in LABELED if ROWS[i]["repo"] != GIN]
    assert_outcomes(result, passed=3 * len(gin), errors=3 * len(others), skipped=3)
    out = result.stdout.str()
    assert f"no snapshot for {PYQUERY}@{PYQUERY_COMMIT}" in out and f"no snapshot for {RUSTY}@{RUSTY_COMMIT}" in out
    from_tree = {e["id"]: e for e in read_report(pytester.path / "out.json")["details"]}
    from_corpus = {e["id"]: e for e in json.loads(full_run[1])["details"]}
    for sample_id in gin:
        for arm in ("grep", "bm25:all", "grep-ident"):
            assert from_tree[sample_id]["arms"][arm]["error"] is None
            assert from_tree[sample_id]["arms"][arm]["ranking"] == from_corpus[sample_id]["arms"][arm]["ranking"], (sample_id, arm)
    report = read_report(pytester.path / "out.json")
    assert f"{GIN}@{GIN_COMMIT}" in report["registration"]["snapshots"]
    assert list(report["snapshots"]) == [f"{GIN}@{GIN_COMMIT}"]  # its digest covers chunk rows, so it differs from the corpus's


# -- 8. the index cache ---------------------------------------------------------------------------------------------------


def _cache_files(directory: Path) -> dict[Path, tuple[bytes, int]]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted((directory / "index").rglob("*")) if p.is_file()}


def test_cache_never_changes_a_result(pytester: pytest.Pytester, full_run: tuple[subprocess.CompletedProcess[str], bytes]) -> None:
    cache = pytester.path / "cache"

    def run(name: str, *extra: str) -> bytes:
        result = pytester.runpytest_subprocess(*bench_args("-q", f"--bench-report={name}", *extra))
        assert result.ret == 0, result.stdout.str()
        return (pytester.path / name).read_bytes()

    cold = run("cold.json", f"--bench-cache-dir={cache}")
    entries = _cache_files(cache)
    assert entries, "the cold run writes index entries"
    time.sleep(0.05)
    warm = run("warm.json", f"--bench-cache-dir={cache}")
    assert _cache_files(cache) == entries, "a warm run reads the entries and leaves them alone"
    uncached = run("nocache.json", f"--bench-cache-dir={pytester.path / 'unused'}", "--bench-no-cache")
    assert not (pytester.path / "unused").exists()
    assert comparable(cold) == comparable(warm) == comparable(uncached) == comparable(full_run[1])
    receipts = sorted((cache / "reads").rglob("*.receipt"))
    assert len(receipts) == 3, "one receipt for each chunk file read in full"

    # receipts kept, indexes gone: the file rows come by receipt, the rows are read again to build
    shutil.move(cache / "index", pytester.path / "index-aside")
    assert comparable(run("rebuilt.json", f"--bench-cache-dir={cache}")) == comparable(cold)
    shutil.rmtree(cache / "index")
    shutil.move(pytester.path / "index-aside", cache / "index")

    for path, (data, _) in entries.items():
        flipped = bytearray(data)
        for position in range(0, len(flipped), max(1, len(flipped) // 16)):
            flipped[position] ^= 0xFF
        path.write_bytes(bytes(flipped))
    repaired = run("repaired.json", f"--bench-cache-dir={cache}")
    assert comparable(repaired) == comparable(cold)
    after = _cache_files(cache)
    assert set(after) == set(entries)
    assert all(after[path][0] == data for path, (data, _) in entries.items()), "corrupt entries are rebuilt and rewritten"


# -- 9. private copies removed on SIGINT and SIGTERM --------------------------------------------------------------------------

SLOW_CONFTEST = """
import os
import time
from pathlib import Path
from pytest_retrieval_bench import Answer

class Slow:
    name = "slow"

    def retrieve(self, request):
        copy = request.snapshot.directory()
        target = Path(os.environ["RB_COPY_PATH_FILE"])
        target.with_suffix(".tmp").write_text(str(copy))
        target.with_suffix(".tmp").replace(target)
        time.sleep(30)
        return Answer(ranking=[])

def pytest_retrieval_bench_arms(config):
    return [Slow()]
"""


def _interrupted(directory: Path, signum: int) -> dict[str, Any]:
    """Start a run whose arm builds a private copy then sleeps; signal it; what is left."""
    work, tmp = directory / "work", directory / "tmp"
    work.mkdir(parents=True)
    tmp.mkdir()
    (work / "conftest.py").write_text(SLOW_CONFTEST)
    path_file = directory / "copy-path.txt"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    env.update(RB_COPY_PATH_FILE=str(path_file), TMPDIR=str(tmp))
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *bench_args("-q", "--bench-arms=slow")],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background parent may ignore SIGINT
    )
    try:
        deadline = time.monotonic() + 30
        while not path_file.exists():
            assert process.poll() is None, process.communicate()[0].decode(errors="replace")
            assert time.monotonic() < deadline, "the arm never built its private copy"
            time.sleep(0.05)
        copy = Path(path_file.read_text())
        state = {"copy": copy, "tmp": tmp, "copy_was_dir": copy.is_dir(), "copy_had_git": (copy / ".git").is_dir(),
                 "copy_had_files": (copy / "gin.go").is_file()}
        process.send_signal(signum)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    state.update(returncode=process.returncode, output=output.decode(errors="replace"))
    return state


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    cache: dict[int, dict[str, Any]] = {}

    def get(signum: int) -> dict[str, Any]:
        if signum not in cache:
            cache[signum] = _interrupted(tmp_path_factory.mktemp(f"signal{int(signum)}"), signum)
        return cache[signum]

    yield get


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_private_copy_removed_on_signal(interrupted: Any, signum: int) -> None:
    state = interrupted(signum)
    assert state["copy_was_dir"] and state["copy_had_git"] and state["copy_had_files"]
    assert state["returncode"] != 0
    assert not state["copy"].exists()


@pytest.mark.parametrize("signum", [
    signal.SIGINT,
    signal.SIGTERM,
], ids=["SIGINT", "SIGTERM"])
def test_no_temporary_directory_left_on_signal(interrupted: Any, signum: int) -> None:
    state = interrupted(signum)
    base = next(parent for parent in state["copy"].parents if parent.name.startswith("pytest-retrieval-bench-"))
    assert base.parent == state["tmp"]
    assert not base.exists()
    assert bench_dirs(state["tmp"]) == []
