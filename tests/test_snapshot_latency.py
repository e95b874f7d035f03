"""Matched snapshot latency (seed 000, proposed TCP-V0-021), rule by rule, against stub programs."""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.arms.capture import CaptureWriter
from pytest_retrieval_bench.arms.command import CommandArm, CommandArmSpec
from pytest_retrieval_bench.arms.corvint import ContextArm, QueryArm
from pytest_retrieval_bench.arms.snapshot_latency import Matched, MatchedLatency, read_trace
from pytest_retrieval_bench.bench.run import run_item
from pytest_retrieval_bench.corpus.copies import PrivateCopies
from tree_helpers import snapshot_with_copies, write_tree
from pytest_retrieval_bench.errors import ArmError, InputError
from pytest_retrieval_bench.report.build import build_latency
from pytest_retrieval_bench.samples.model import Sample

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
RANKER = TESTDATA / "stubs" / "snapshot_stub.py"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"
REPO, COMMIT = "acme/demo", "a" * 40
FILES = {"README.md": b"demo\n", "src/app.py": b"def app():\n    return 1\n", "tests/test_app.py": b"from src.app import app\n"}
STORE = ".git/corvint/index"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "tree", FILES)


@pytest.fixture
def snapshot(tree: Path, copies: PrivateCopies):
    return snapshot_with_copies(tree, REPO, COMMIT, copies)


def request(snapshot: Any, text: str = '{"title": "fix app"}', sample_id: str = "s1") -> Request:
    return Request(sample_id=sample_id, task_type="code2test", repo=REPO, base_commit=COMMIT, query={}, query_text=text,
                   changed_file="src/app.py", k=10, snapshot=snapshot)


def sample(sample_id: str = "s1") -> Sample:
    return Sample(id=sample_id, task_type="code2test", repo=REPO, base_commit=COMMIT, query={}, query_text='{"title": "app"}',
                  gold_files=("src/app.py",), given_files=(), hard_negatives=(), no_gold=False, organic=False,
                  changed_file="src/app.py", source="samples.jsonl", line=1)


def ranker_arm(**extra: Any) -> CommandArm:
    table = {"argv": [str(RANKER), "search", "{query}", "{k}"], "ranking": "hits[].path", "state": "status", "top_score": "hits[0].score",
             "index": [str(RANKER), "index", "{root}"], "snapshot_store": ".ranker/snapshot", "snapshot_trace": "RANKER_SNAPSHOT_TRACE", **extra}
    return CommandArm(CommandArmSpec.from_mapping("ranker", table, "test"))


def stash_of(measured: MatchedLatency, snapshot: Any) -> Path:
    return measured._stashes[snapshot.key][1] / "store"


# -- the trace ------------------------------------------------------------------------------------
def test_the_trace_line_is_read_strictly() -> None:
    name = "CORVINT_BENCH_SNAPSHOT_TRACE"
    assert read_trace(b'noise\nCORVINT_BENCH_SNAPSHOT_TRACE {"snapshot": "hit", "ms": 3}\n', name, "hit") == "hit"
    assert read_trace(b'CORVINT_BENCH_SNAPSHOT_TRACE {"snapshot":"miss"}', name, "cold") == "miss"
    for stderr, words in [(b"", "printed no CORVINT_BENCH_SNAPSHOT_TRACE line"),
                          (b"CORVINT_BENCH_SNAPSHOT_TRACE {bad\n", "malformed"),
                          (b'CORVINT_BENCH_SNAPSHOT_TRACE {"snapshot": "warm"}\n', "malformed"),
                          (b'CORVINT_BENCH_SNAPSHOT_TRACE ["hit"]\n', "malformed"),
                          (b"CORVINT_BENCH_SNAPSHOT_TRACE\n", "malformed"),
                          (b'CORVINT_BENCH_SNAPSHOT_TRACE {"snapshot": "hit"}\nCORVINT_BENCH_SNAPSHOT_TRACE {"snapshot": "hit"}\n', "2 CORVINT")]:
        with pytest.raises(ArmError, match=words):
            read_trace(stderr, name, "hit")


# -- the corvint preset -----------------------------------------------------------------------------
def test_context_is_indexed_once_then_measured_cold_and_hit(snapshot: Any, corvint: str, tmp_path: Path) -> None:
    arm = ContextArm(corvint)
    measured = MatchedLatency(arm)
    measured.prepare(snapshot)
    root = snapshot.directory()
    assert not (root / STORE).exists()  # the index step's store is kept outside the copy
    assert stash_of(measured, snapshot).read_text() == "indexed\n"
    assert not stash_of(measured, snapshot).resolve().is_relative_to(root.resolve())
    writer = CaptureWriter(tmp_path / "capture.jsonl", {"run": "test"}, [arm.descriptor()])
    arm.capture = writer
    result = measured.retrieve(request(snapshot))
    assert isinstance(result, Matched) and result.cold_ms > 0 and result.hit_ms > 0
    assert result.answer.cache_state == "OBSERVED_HIT"
    assert result.answer.ranking == ["README.md", "src/app.py", "tests/test_app.py"]
    writer.close()
    rows = [json.loads(line) for line in writer.path.read_text().splitlines() if json.loads(line)["kind"] == "record"]
    assert [row["phase"] for row in rows] == ["cold", "hit"]
    echoes = [json.loads(base64.b64decode(row["stdout"]["base64"]))["echo"] for row in rows]
    assert [echo["store"] for echo in echoes] == [False, True]  # the cold call ran without the store, the hit with it
    assert not (root / STORE).exists() and stash_of(measured, snapshot).is_file()
    assert measured.retrieve(request(snapshot)).answer.ranking == result.answer.ranking  # the next item too


@pytest.mark.parametrize("mode, words", [
    ("TRACE_NONE", "cold call printed no CORVINT_BENCH_SNAPSHOT_TRACE line"),
    ("TRACE_BAD", "cold call's CORVINT_BENCH_SNAPSHOT_TRACE line is malformed"),
    ("TRACE_TWICE", "printed 2 CORVINT_BENCH_SNAPSHOT_TRACE lines"),
    ("TRACE_MISS", "warm miss: the hit call observed a snapshot miss"),
    ("DRIFT", "the hit call's ranking differs from the cold call's"),
    ("SCORE_DRIFT", "the hit call's top score differs from the cold call's: cold 0.9, hit 0.5"),
    ("EXIT3_COLD", "exited with status 3"),
])
def test_a_measurement_that_cannot_be_trusted_fails_and_the_store_is_restored(snapshot: Any, corvint: str, monkeypatch: pytest.MonkeyPatch,
                                                                                mode: str, words: str) -> None:
    measured = MatchedLatency(ContextArm(corvint))
    measured.prepare(snapshot)
    monkeypatch.setenv("CORVINT_STUB_MODE", mode)
    with pytest.raises(ArmError, match=words):
        measured.retrieve(request(snapshot))
    assert stash_of(measured, snapshot).read_text() == "indexed\n"  # restored on this return path too
    assert not (snapshot.directory() / STORE).exists()
    monkeypatch.setenv("CORVINT_STUB_MODE", "")
    assert measured.retrieve(request(snapshot)).answer.cache_state == "OBSERVED_HIT"


def test_a_cold_hit_is_refused(snapshot: Any, corvint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A binary that says "hit" with its store moved outside the copy is not observing its loader."""
    measured = MatchedLatency(ContextArm(corvint))
    measured.prepare(snapshot)
    monkeypatch.setattr("pytest_retrieval_bench.arms.snapshot_latency.read_trace", lambda stderr, name, call: "hit")
    with pytest.raises(ArmError, match="the cold call observed a snapshot hit"):
        measured.retrieve(request(snapshot))


def test_what_a_cold_call_writes_is_replaced_by_the_indexed_store(snapshot: Any, corvint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    measured = MatchedLatency(ContextArm(corvint))
    measured.prepare(snapshot)
    monkeypatch.setenv("CORVINT_STUB_MODE", "COLD_WRITES")
    measured.retrieve(request(snapshot))
    assert stash_of(measured, snapshot).read_text() == "indexed\n"


def test_another_arm_s_store_is_moved_aside_and_put_back(snapshot: Any, corvint: str) -> None:
    """corvint-query priming its own store on the shared copy must neither warm the cold call nor be lost."""
    QueryArm(corvint).retrieve(request(snapshot, "STUB:PRIME"))
    root = snapshot.directory()
    assert (root / STORE).read_text() == "index\n"
    measured = MatchedLatency(ContextArm(corvint))
    measured.prepare(snapshot)  # the index step starts without it
    (root / STORE).write_text("index\n")
    measured.retrieve(request(snapshot))
    assert (root / STORE).read_text() == "index\n"
    assert stash_of(measured, snapshot).read_text() == "indexed\n"


@pytest.mark.parametrize("mode, words", [("INDEX_FAIL", "index step of arm 'corvint-context' .* failed: exited with status 5; stderr: index failed"),
                                          ("INDEX_NOOP", "did not create its snapshot store '.git/corvint/index'")])
def test_a_failed_index_step_is_an_error(snapshot: Any, corvint: str, monkeypatch: pytest.MonkeyPatch, mode: str, words: str) -> None:
    monkeypatch.setenv("CORVINT_STUB_MODE", mode)
    measured = MatchedLatency(ContextArm(corvint))
    with pytest.raises(ArmError, match=words):
        measured.prepare(snapshot)
    with pytest.raises(ArmError, match="no index step ran"):
        measured.retrieve(request(snapshot))


# -- the generic part: any command arm ------------------------------------------------------------
def test_a_command_arm_declares_index_store_and_trace_together() -> None:
    arm = ranker_arm()
    assert arm.snapshot_latency is not None and arm.snapshot_latency.store == ".ranker/snapshot"
    base = {"argv": ["x"], "ranking": "ids[]"}
    assert CommandArmSpec.from_mapping("plain", base, "t").snapshot_latency is None
    for extra, words in [({"index": ["x", "index"]}, "field 'snapshot_store': index needs snapshot_store, snapshot_trace too"),
                         ({"index": ["x", "{query}"], "snapshot_store": "s", "snapshot_trace": "T"}, "field 'index'.*only the {root}"),
                         ({"index": [], "snapshot_store": "s", "snapshot_trace": "T"}, "field 'index'"),
                         ({"index": ["x"], "snapshot_store": "../s", "snapshot_trace": "T"}, "field 'snapshot_store'"),
                         ({"index": ["x"], "snapshot_store": "s", "snapshot_trace": "A B"}, "field 'snapshot_trace'"),
                         ({"top_score": "a[x"}, "field 'top_score'")]:
        with pytest.raises(InputError, match=words):
            CommandArmSpec.from_mapping("arm", {**base, **extra}, "t")


def test_a_command_arm_is_measured_through_the_runner(snapshot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store lives outside .git, where every item's reset would delete it: it is kept outside the copy."""
    log = tmp_path / "calls.log"
    monkeypatch.setenv("RANKER_LOG", str(log))
    measured = MatchedLatency(ranker_arm())
    measured.prepare(snapshot)
    for number in range(2):
        req = request(snapshot, "app", sample_id=f"s{number}")
        record = run_item(sample(f"s{number}"), "ranker", req, snapshot, 20, lambda req=req: measured.retrieve(req), matched=True)
        assert record["error"] is None
        assert record["ranking"][0] == "src/app.py" and record["cache_state"] == "OBSERVED_HIT"
        assert record["cold_wall_ms"] > 0 and record["wall_ms"] > 0
    assert log.read_text().split() == ["miss", "hit", "miss", "hit"]
    assert not (snapshot.directory() / ".ranker/snapshot").exists()


@pytest.mark.parametrize("mode, words", [("TRACE_BAD", "malformed"), ("TRACE_MISS", "warm miss"), ("DRIFT", "ranking differs"),
                                          ("FAIL_COLD", "exited with status 4"), ("DELETE_STORE", "removed its snapshot store")])
def test_a_failed_command_measurement_is_an_error_record(snapshot: Any, monkeypatch: pytest.MonkeyPatch, mode: str, words: str) -> None:
    measured = MatchedLatency(ranker_arm())
    measured.prepare(snapshot)
    monkeypatch.setenv("RANKER_MODE", mode)
    req = request(snapshot, "app")
    record = run_item(sample(), "ranker", req, snapshot, 20, lambda: measured.retrieve(req), matched=True)
    assert words in record["error"]
    assert record["cold_wall_ms"] is None and record["abstained"] is False


def test_an_ordinary_record_has_no_cold_span(snapshot: Any) -> None:
    req = request(snapshot, "app")
    record = run_item(sample(), "ranker", req, snapshot, 20, lambda: ranker_arm().retrieve(req))
    assert "cold_wall_ms" not in record and record["cache_state"] == "UNRECORDED"


# -- the latency section --------------------------------------------------------------------------
def test_observed_hit_and_miss_rows_with_min_and_the_30_sample_floor() -> None:
    rows = [{"error": None, "wall_ms": float(n), "cold_wall_ms": float(100 + n), "cache_state": "OBSERVED_HIT"} for n in range(1, 31)]
    rows.append({"error": "failed", "wall_ms": 1e6, "cold_wall_ms": None})
    latency = build_latency({"ranker": rows, "few": rows[:29], "plain": [{"error": None, "wall_ms": 1.0, "cache_state": "COLD_UNIQUE"}] * 30})
    assert latency["ranker"]["OBSERVED_HIT"] == {"n": 30, "min": 1.0, "p50": 15.0, "p95": 29.0, "max": 30.0, "mad": 7.0}
    assert latency["ranker"]["OBSERVED_MISS"]["min"] == 101.0 and latency["ranker"]["OBSERVED_MISS"]["max"] == 130.0
    assert sorted(latency["ranker"]) == ["OBSERVED_HIT", "OBSERVED_MISS"]
    assert latency["few"] == {"OBSERVED_HIT": "NOT_RUN", "OBSERVED_MISS": "NOT_RUN"}
    assert latency["plain"] == {"COLD_UNIQUE": {"n": 30, "p50": 1.0, "p95": 1.0, "max": 1.0, "mad": 0.0}}  # no min: unchanged


# -- the run ---------------------------------------------------------------------------------------
def run(pytester: pytest.Pytester, corvint: str, *args: str, mode: str = "", touch: str = "") -> Any:
    env = {"CORVINT": corvint, "CORVINT_STUB_MODE": mode, "CORVINT_STUB_TOUCH": touch}
    for name, value in env.items():
        os.environ[name] = value
    try:
        no_xdist = [] if "-n" in args else ["-p", "no:xdist"]
        return pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "-p", "no:cacheprovider",
                                             *no_xdist, *args, timeout=300)
    finally:
        for name in env:
            os.environ.pop(name, None)


def test_a_latency_run_reports_hit_and_matched_miss(pytester: pytest.Pytester, corvint: str) -> None:
    report = pytester.path / "out.json"
    result = run(pytester, corvint, "--bench-arms=corvint-context,grep", "--bench-snapshot-latency", f"--bench-report={report}")
    assert result.ret == 0, result.stdout.str()
    document = json.loads(report.read_text())
    records = [entry["arms"] for entry in document["details"] if "skipped" not in entry]
    assert records and all(arms["corvint-context"]["cold_wall_ms"] > 0 for arms in records)
    assert all("cold_wall_ms" not in arms["grep"] for arms in records)
    latency = document["latency"]["corvint-context"]
    assert set(latency) == {"OBSERVED_HIT", "OBSERVED_MISS"}
    registration = json.loads((pytester.path / "out.json.registration.json").read_text())
    assert registration == document["registration"]
    section = registration["snapshot_latency"]
    assert section["mode"] == "matched-snapshot-latency" and section["arms"]["corvint-context"]["store"] == STORE
    assert section["arms"]["corvint-context"]["trace"] == "CORVINT_BENCH_SNAPSHOT_TRACE"
    assert section["bench"].startswith("sha256:") and len(section["selected_ids"]) == 35
    again = run(pytester, corvint, "--bench-arms=corvint-context", "--bench-snapshot-latency", f"--bench-report={report}")
    assert again.ret == 4 and "a registration already exists there; each run needs a new registration path" in again.stderr.str()


def test_a_run_without_the_option_is_unchanged(pytester: pytest.Pytester, corvint: str) -> None:
    report = pytester.path / "out.json"
    assert run(pytester, corvint, "--bench-arms=corvint-context", f"--bench-report={report}").ret == 0
    document = json.loads(report.read_text())
    assert "snapshot_latency" not in document["registration"]
    assert all("cold_wall_ms" not in entry["arms"].get("corvint-context", {}) for entry in document["details"])
    assert set(document["latency"]["corvint-context"]) <= {"COLD_UNIQUE", "PRIMED_SHARED"}


def test_a_warm_miss_fails_the_items(pytester: pytest.Pytester, corvint: str) -> None:
    report = pytester.path / "out.json"
    result = run(pytester, corvint, "--bench-arms=corvint-context", "--bench-snapshot-latency", f"--bench-report={report}", mode="TRACE_MISS")
    assert result.ret == 1 and "warm miss" in result.stdout.str()
    details = json.loads(report.read_text())["details"]
    errors = [entry["arms"]["corvint-context"]["error"] for entry in details if "skipped" not in entry]
    assert errors and all("warm miss" in error for error in errors)


def test_a_registration_path_for_a_terminal_only_run(pytester: pytest.Pytester, corvint: str) -> None:
    registration = pytester.path / "reg.json"
    result = run(pytester, corvint, "--bench-arms=corvint-context", "--bench-snapshot-latency", f"--bench-registration={registration}")
    assert result.ret == 0, result.stdout.str()
    assert json.loads(registration.read_text())["snapshot_latency"]["mode"] == "matched-snapshot-latency"
    again = run(pytester, corvint, "--bench-arms=corvint-context", "--bench-snapshot-latency", f"--bench-registration={registration}")
    assert again.ret == 4 and "each run needs a new registration path" in again.stderr.str()


@pytest.mark.parametrize("args, words", [
    (["--bench-arms=corvint-context", "--bench-snapshot-latency"], "--bench-snapshot-latency without --bench-report"),
    (["--bench-arms=grep,corvint-query", "--bench-snapshot-latency", "--bench-report=r.json"],
     "--bench-snapshot-latency needs a selected arm that declares an index step"),
    (["--bench-arms=corvint-context", "--bench-snapshot-latency", "--bench-report=r.json", "--bench-registration=r.json"],
     "--bench-report and --bench-registration are the same file"),
    (["--bench-arms=corvint-context", "--bench-snapshot-latency", "--bench-report=r.json", "--bench-registration=link.json"],
     "--bench-report and --bench-registration are the same file"),
    (["--bench-arms=corvint-context", "--bench-snapshot-latency", "--bench-report=r.json", "--bench-replace-registration"],
     "--bench-replace-registration cannot be combined"),
    (["--bench-arms=corvint-context", "--bench-snapshot-latency", "--bench-report=r.json", "-n", "2"],
     "without xdist workers"),
])
def test_usage_errors_before_any_call_or_write(pytester: pytest.Pytester, corvint: str, args: list[str], words: str) -> None:
    pytest.importorskip("xdist")
    (pytester.path / "link.json").symlink_to(pytester.path / "r.json")
    log = pytester.path / "calls.log"
    result = run(pytester, corvint, *args, touch=str(log))
    assert result.ret == 4 and words in result.stderr.str(), result.stderr.str()
    assert not log.exists() and not (pytester.path / "r.json").exists() and not (pytester.path / "r.json.registration.json").exists()


def test_summarize_refuses_latency_options(pytester: pytest.Pytester) -> None:
    for option in ("--bench-snapshot-latency", f"--bench-registration={pytester.path / 'reg.json'}"):
        result = pytester.runpytest_subprocess(f"--bench-summarize={pytester.path / 'a.json'}", f"--bench-report={pytester.path / 'm.json'}",
                                               option, "-p", "no:cacheprovider", timeout=120)
        assert result.ret == 4 and "cannot be combined with --bench-summarize" in result.stderr.str()


def test_a_capture_can_be_bound_to_a_registration_path(pytester: pytest.Pytester, corvint: str) -> None:
    registration, capture = pytester.path / "reg.json", pytester.path / "cap.jsonl"
    result = run(pytester, corvint, "--bench-arms=corvint-context", "--bench-snapshot-latency", "--bench-max-samples=2",
                 f"--bench-registration={registration}", f"--bench-capture={capture}")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    lines = [json.loads(line) for line in capture.read_text().splitlines()]
    assert lines[0]["registration"] == json.loads(registration.read_text())
    assert [line["phase"] for line in lines if line["kind"] == "record"] == ["cold", "hit", "cold", "hit"]


@pytest.mark.parametrize("target, words", [("binary", "its executable changed during the run"),
                                            ("registration", "was changed during the run")])
def test_a_run_that_drifted_from_its_registration_is_not_published(pytester: pytest.Pytester, corvint: str, target: str, words: str) -> None:
    report = pytester.path / "out.json"
    touched = corvint if target == "binary" else str(pytester.path / "out.json.registration.json")
    result = run(pytester, corvint, "--bench-arms=corvint-context", "--bench-snapshot-latency", "--bench-max-samples=1",
                 f"--bench-report={report}", touch=touched)
    assert result.ret == 1 and words in result.stdout.str() and "the report was not published" in result.stdout.str()
    assert not report.exists() and (pytester.path / "out.json.registration.json").exists()


def test_an_unchanged_run_without_latency_is_not_rechecked(pytester: pytest.Pytester, corvint: str) -> None:
    """The drift check belongs to exclusive registrations: an ordinary run's behaviour is unchanged."""
    report = pytester.path / "out.json"
    result = run(pytester, corvint, "--bench-arms=corvint-context", "--bench-max-samples=1", f"--bench-report={report}", touch=corvint)
    assert result.ret == 0 and report.exists()
    assert sys.executable  # the stub ran through its wrapper
