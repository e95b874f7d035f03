"""The corvint presets, rule by rule, against a stub that prints each verb's packet shape."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.arms.corvint import AffectedArm, ContextArm, ImpactArm, QueryArm, preset_arms
from pytest_retrieval_bench.arms.capture import CaptureWriter
from pytest_retrieval_bench.corpus.copies import PrivateCopies
from tree_helpers import snapshot_with_copies, write_tree
from pytest_retrieval_bench.corpus.resolve import SnapshotResolver
from pytest_retrieval_bench.corpus.store import SnapshotStore
from pytest_retrieval_bench.errors import ArmError
from pytest_retrieval_bench.report.registration import arm_identity
from pytest_retrieval_bench.bench.run import run_arm
from pytest_retrieval_bench.samples.model import Sample

STUB = Path(__file__).resolve().parent.parent / "testdata" / "stubs" / "corvint_stub.py"
REPO, COMMIT = "acme/demo", "a" * 40
APP = b"def app():\n    return 1"  # no final newline: the restore must keep that
FILES = {
    "README.md": b"demo\n",
    "src/app.py": APP,
    "src/util.py": b"def util():\r\n    return 2\r\n",
    "tests/test_app.py": b"from src.app import app\n",
    "tests/test_util.py": b"from src.util import util\n",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "tree", FILES)


@pytest.fixture
def snapshot(tree: Path, copies: PrivateCopies):
    return snapshot_with_copies(tree, REPO, COMMIT, copies)


def request(snapshot: Any, text: str = '{"title": "fix app"}', changed: str | None = "src/app.py", k: int = 10) -> Request:
    return Request(sample_id="s1", task_type="code2test", repo=REPO, base_commit=COMMIT, query={}, query_text=text,
                   changed_file=changed, k=k, snapshot=snapshot)


def capture_for(tmp_path: Path, *arms: Any) -> CaptureWriter:
    writer = CaptureWriter(tmp_path / f"capture-{len(list(tmp_path.iterdir()))}.jsonl", {"run": "test"}, [arm.descriptor() for arm in arms])
    for arm in arms:
        arm.capture = writer
    return writer


def records(writer: CaptureWriter) -> list[dict[str, Any]]:
    writer.close()
    lines = [json.loads(line) for line in writer.path.read_text().splitlines()]
    return [line for line in lines if line["kind"] == "record"]


def stdout_of(record: dict[str, Any]) -> bytes:
    return base64.b64decode(record["stdout"]["base64"])


def sample(text: str, changed: str | None = "src/app.py") -> Sample:
    return Sample(id="s1", task_type="code2test", repo=REPO, base_commit=COMMIT, query={}, query_text=text,
                  gold_files=("tests/test_app.py",), given_files=(), hard_negatives=(), no_gold=False, organic=False,
                  changed_file=changed, source="samples.jsonl", line=1)


def store(tree: Path, copies: PrivateCopies) -> SnapshotStore:
    return SnapshotStore(SnapshotResolver(explicit={f"{REPO}@{COMMIT}": tree}), copies, None)


# -- shared --------------------------------------------------------------------------------------
def test_preset_names_and_binary_from_environment(monkeypatch: pytest.MonkeyPatch, corvint: str) -> None:
    monkeypatch.setenv("CORVINT", corvint)
    arms = preset_arms()
    assert [arm.name for arm in arms] == ["corvint-query", "corvint-context", "corvint-impact", "corvint-affected"]
    assert all(arm.binary == corvint for arm in arms)
    assert QueryArm("/elsewhere/corvint").binary == "/elsewhere/corvint"


def test_identity_is_the_executable_digest_or_not_run(corvint: str) -> None:
    expected = "corvint:sha256:" + hashlib.sha256(Path(corvint).read_bytes()).hexdigest()
    assert arm_identity(QueryArm(corvint), "t") == expected
    assert arm_identity(AffectedArm("no-such-corvint-binary"), "t") == "NOT_RUN"


def test_missing_binary_is_an_error_not_an_abstention(snapshot: Any) -> None:
    with pytest.raises(ArmError, match="not found"):
        QueryArm("no-such-corvint-binary").retrieve(request(snapshot))


def test_cache_state_observes_the_snapshot_store_before_the_call(snapshot: Any, corvint: str) -> None:
    arm = QueryArm(corvint)
    assert arm.retrieve(request(snapshot, "STUB:PRIME")).cache_state == "COLD_UNIQUE"  # the call builds it
    assert (snapshot.directory() / ".git/corvint/index").is_file()
    assert arm.retrieve(request(snapshot)).cache_state == "PRIMED_SHARED"
    assert ImpactArm(corvint).retrieve(request(snapshot)).cache_state == "PRIMED_SHARED"


# -- query ---------------------------------------------------------------------------------------
def test_query_ranking_is_result_paths_distinct_in_packet_order(snapshot: Any, corvint: str, tmp_path: Path) -> None:
    arm = QueryArm(corvint)
    writer = capture_for(tmp_path, arm)
    answer = arm.retrieve(request(snapshot, k=3))
    assert answer.ranking == ["README.md", "src/app.py", "src/util.py"]  # the stub repeats the first at the end
    assert (answer.state, answer.abstained) == ("OK", False)
    [record] = records(writer)
    packet = json.loads(stdout_of(record))
    assert answer.packet_bytes == len(stdout_of(record))
    assert packet["echo"]["args"][:2] == ["query", "--task"] and packet["echo"]["limit"] == 3
    assert Path(packet["echo"]["cwd"]).resolve() == snapshot.directory().resolve()


def test_query_sees_the_2000_character_prefix(snapshot: Any, corvint: str, tmp_path: Path, tree: Path, copies: PrivateCopies) -> None:
    arm = QueryArm(corvint)
    assert arm.max_query_chars == 2000
    writer = capture_for(tmp_path, arm)
    text = '{"q": "' + "w" * 4991 + '"}'
    record = run_arm(sample(text), arm, store(tree, copies), 20)
    assert record["error"] is None
    assert (record["query_chars"], record["query_truncated"]) == (5000, True)
    arm.retrieve(request(snapshot, text))  # called directly, the arm bounds the text itself
    sent = [json.loads(stdout_of(r))["echo"]["task"] for r in records(writer)]
    assert sent == [text[:2000], text[:2000]]


def test_query_out_of_scope_abstains_even_with_results(snapshot: Any, corvint: str) -> None:
    answer = QueryArm(corvint).retrieve(request(snapshot, "STUB:OUT_OF_SCOPE"))
    assert (answer.ranking, answer.abstained, answer.state) == ([], True, "OUT_OF_SCOPE")


def test_query_empty_packet_abstains(snapshot: Any, corvint: str) -> None:
    answer = QueryArm(corvint).retrieve(request(snapshot, "STUB:EMPTY"))
    assert (answer.ranking, answer.abstained, answer.state) == ([], True, "OK")
    assert answer.packet_bytes and answer.packet_bytes > 0


def test_query_exit_status_is_an_error_with_five_stderr_lines(snapshot: Any, corvint: str) -> None:
    with pytest.raises(ArmError) as raised:
        QueryArm(corvint).retrieve(request(snapshot, "STUB:EXIT3"))
    message = str(raised.value)
    assert "exited with status 3" in message
    assert "stub error line 1" in message and "stub error line 5" in message
    assert "stub error line 6" not in message


@pytest.mark.parametrize("mode, expected", [("BADJSON", "not JSON"), ("NOT_OBJECT", "not a JSON object")])
def test_query_malformed_packet_is_an_error(snapshot: Any, corvint: str, mode: str, expected: str) -> None:
    with pytest.raises(ArmError, match=expected):
        QueryArm(corvint).retrieve(request(snapshot, f"STUB:{mode}"))


def test_query_timeout_is_an_error(snapshot: Any, corvint: str) -> None:
    started = time.monotonic()
    with pytest.raises(ArmError, match="timed out after 1 s"):
        QueryArm(corvint, timeout=1).retrieve(request(snapshot, "STUB:SLEEP"))
    assert time.monotonic() - started < 15


def test_a_runner_error_is_never_an_abstention(tree: Path, copies: PrivateCopies, corvint: str) -> None:
    record = run_arm(sample('"STUB:EXIT3"'), QueryArm(corvint), store(tree, copies), 20)
    assert record["error"].startswith("exited with status 3")
    assert record["abstained"] is False and record["selective_success"] is False


# -- context -------------------------------------------------------------------------------------
def test_context_ranks_result_ids_over_the_full_text(snapshot: Any, corvint: str, tmp_path: Path) -> None:
    arm = ContextArm(corvint)
    assert arm.max_query_chars is None
    writer = capture_for(tmp_path, arm)
    text = "c" * 32_000  # exactly the bound: accepted, not truncated
    answer = arm.retrieve(request(snapshot, text, k=2))
    assert answer.ranking == ["README.md", "src/app.py"]
    assert (answer.state, answer.abstained) == ("OK", False)
    [record] = records(writer)
    assert json.loads(stdout_of(record))["echo"]["task"] == text
    assert record["task"]["bytes"] == 32_000


def test_context_longer_than_32000_characters_is_an_error_without_a_call(snapshot: Any, corvint: str, tmp_path: Path) -> None:
    arm = ContextArm(corvint)
    writer = capture_for(tmp_path, arm)
    with pytest.raises(ArmError, match="32001 characters; corvint context accepts at most 32000"):
        arm.retrieve(request(snapshot, "c" * 32_001))
    assert records(writer) == []


@pytest.mark.parametrize("mode, state", [("NO_CANDIDATES", "NO_CANDIDATES"), ("EMPTY", "OK"), ("UNSUPPORTED", "OK+unsupported-conjunction")])
def test_context_abstentions(snapshot: Any, corvint: str, mode: str, state: str) -> None:
    answer = ContextArm(corvint).retrieve(request(snapshot, f"STUB:{mode}"))
    assert (answer.ranking, answer.abstained, answer.state) == ([], True, state)


def test_context_failure_is_an_error(snapshot: Any, corvint: str) -> None:
    with pytest.raises(ArmError, match="exited with status 3"):
        ContextArm(corvint).retrieve(request(snapshot, "STUB:EXIT3"))


# -- impact --------------------------------------------------------------------------------------
def test_impact_ranks_evidence_minus_the_changed_file(snapshot: Any, corvint: str, tmp_path: Path) -> None:
    arm = ImpactArm(corvint)
    writer = capture_for(tmp_path, arm)
    answer = arm.retrieve(request(snapshot, "ignored text", k=50))
    assert answer.ranking == ["README.md", "src/util.py", "tests/test_app.py", "tests/test_util.py"]
    assert (answer.state, answer.abstained) == ("OK", False)
    [record] = records(writer)
    assert json.loads(stdout_of(record))["echo"]["args"] == ["impact", "src/app.py", "--limit", "50"]
    assert answer.packet_bytes == record["stdout"]["bytes"]


def test_impact_needs_a_changed_file(snapshot: Any, corvint: str, tree: Path, copies: PrivateCopies) -> None:
    with pytest.raises(ArmError, match="^no changed_file in query$"):
        ImpactArm(corvint).retrieve(request(snapshot, changed=None))
    assert run_arm(sample("x", changed=None), ImpactArm(corvint), store(tree, copies), 20)["error"] == "no changed_file in query"


def test_impact_refuses_a_limit_above_50(snapshot: Any, corvint: str, tmp_path: Path) -> None:
    arm = ImpactArm(corvint)
    writer = capture_for(tmp_path, arm)
    with pytest.raises(ArmError, match="above 50"):
        arm.retrieve(request(snapshot, k=51))
    assert records(writer) == []


@pytest.mark.parametrize("mode, state", [("OUT_OF_SCOPE", "OUT_OF_SCOPE"), ("EMPTY", "OK")])
def test_impact_abstentions(snapshot: Any, corvint: str, monkeypatch: pytest.MonkeyPatch, mode: str, state: str) -> None:
    monkeypatch.setenv("CORVINT_STUB_MODE", mode)
    answer = ImpactArm(corvint).retrieve(request(snapshot))
    assert (answer.ranking, answer.abstained, answer.state) == ([], True, state)


def test_impact_refusal_is_an_error(snapshot: Any, corvint: str) -> None:
    with pytest.raises(ArmError, match=r"exited with status 4; stderr: refused: docs/missing.md is not tracked"):
        ImpactArm(corvint).retrieve(request(snapshot, changed="docs/missing.md"))


# -- affected ------------------------------------------------------------------------------------
def copy_status(snapshot: Any) -> str:
    return subprocess.run(["git", "-C", str(snapshot.directory()), "status", "--porcelain"], capture_output=True, text=True, check=True).stdout


def test_affected_dirties_runs_restores_and_ranks_plan_tests(snapshot: Any, corvint: str, tmp_path: Path) -> None:
    arm = AffectedArm(corvint)
    writer = capture_for(tmp_path, arm)
    answer = arm.retrieve(request(snapshot, k=10))
    assert answer.ranking == ["tests/test_app.py", "tests/test_util.py"]  # changed file removed, repeats dropped
    assert (answer.state, answer.abstained) == ("BOUNDED", False)
    [record] = records(writer)
    packet = json.loads(stdout_of(record))
    assert packet["observed"] == {"src/app.py": hashlib.sha256(APP + b"\n\n").hexdigest()}  # dirty while it ran
    assert packet["echo"]["args"] == ["affected"] and Path(packet["echo"]["cwd"]).resolve() == snapshot.directory().resolve()
    assert answer.packet_bytes == len(stdout_of(record))
    assert (snapshot.directory() / "src/app.py").read_bytes() == APP
    assert copy_status(snapshot) == ""


def test_affected_reports_the_scope_and_leaves_the_cut_to_the_scorer(snapshot: Any, corvint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORVINT_STUB_MODE", "UNKNOWN")
    answer = AffectedArm(corvint).retrieve(request(snapshot, k=1))
    assert (answer.ranking, answer.state) == (["tests/test_app.py", "tests/test_util.py"], "UNKNOWN")


def test_affected_removes_given_files_before_the_cut_to_k(tree: Path, copies: PrivateCopies, corvint: str) -> None:
    """Seed 000: the plan's tests "with the changed file and the given files removed and truncated to
    k". The plan lists tests/test_app.py, then tests/test_util.py (the gold here); with the first
    given, a cut to k = 1 before the removal lost the gold test."""
    given = Sample(id="s1", task_type="code2test", repo=REPO, base_commit=COMMIT, query={}, query_text="x",
                   gold_files=("tests/test_util.py",), given_files=("tests/test_app.py",), hard_negatives=(), no_gold=False, organic=False,
                   changed_file="src/app.py", source="samples.jsonl", line=1)
    record = run_arm(given, AffectedArm(corvint), store(tree, copies), 1)
    assert record["error"] is None
    assert record["ranking"] == ["tests/test_util.py"] and record["metrics"]["mrr@k"] == 1.0


def test_affected_plan_without_another_test_abstains(snapshot: Any, corvint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORVINT_STUB_MODE", "EMPTY")
    answer = AffectedArm(corvint).retrieve(request(snapshot))
    assert (answer.ranking, answer.abstained, answer.state) == ([], True, "BOUNDED")


def test_affected_needs_a_changed_file_the_copy_holds(snapshot: Any, corvint: str) -> None:
    with pytest.raises(ArmError, match="^no changed_file in query$"):
        AffectedArm(corvint).retrieve(request(snapshot, changed=None))
    for missing in ("src/gone.py", "../tree/src/app.py", "src"):
        with pytest.raises(ArmError, match="is not a file of the snapshot copy"):
            AffectedArm(corvint).retrieve(request(snapshot, changed=missing))


@pytest.mark.parametrize("modes, expected", [
    ("EXIT3", "exited with status 3"),
    ("MUTATE,EXIT3", "exited with status 3"),
    ("BADJSON", "not JSON"),
])
def test_affected_restores_exact_bytes_after_a_failure(snapshot: Any, corvint: str, monkeypatch: pytest.MonkeyPatch, modes: str, expected: str) -> None:
    monkeypatch.setenv("CORVINT_STUB_MODE", modes)
    with pytest.raises(ArmError, match=expected):
        AffectedArm(corvint).retrieve(request(snapshot))
    assert (snapshot.directory() / "src/app.py").read_bytes() == APP
    assert copy_status(snapshot) == ""


def test_affected_restores_a_file_the_command_rewrote(snapshot: Any, corvint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORVINT_STUB_MODE", "MUTATE")
    changed = "src/util.py"  # CRLF line ends must survive too
    answer = AffectedArm(corvint).retrieve(request(snapshot, changed=changed))
    assert answer.ranking == ["tests/test_app.py", "tests/test_util.py"]
    assert (snapshot.directory() / changed).read_bytes() == FILES[changed]


def test_affected_timeout_still_restores(snapshot: Any, corvint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORVINT_STUB_MODE", "SLEEP")
    with pytest.raises(ArmError, match="timed out"):
        AffectedArm(corvint, timeout=1).retrieve(request(snapshot))
    assert (snapshot.directory() / "src/app.py").read_bytes() == APP


def test_affected_copy_left_dirty_is_an_error(snapshot: Any, corvint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORVINT_STUB_MODE", "DIRTY")
    with pytest.raises(ArmError, match=r"not clean after corvint affected \(git status --porcelain: \?\? stray.txt\)"):
        AffectedArm(corvint).retrieve(request(snapshot))
    assert (snapshot.directory() / "src/app.py").read_bytes() == APP


def test_affected_through_the_runner(tree: Path, copies: PrivateCopies, corvint: str) -> None:
    record = run_arm(sample("x"), AffectedArm(corvint), store(tree, copies), 20)
    assert record["error"] is None
    assert record["ranking"] == ["tests/test_app.py", "tests/test_util.py"]
    assert (record["state"], record["cache_state"], record["metrics"]["hit@5"]) == ("BOUNDED", "COLD_UNIQUE", 1.0)


def test_one_sample_s_mess_never_reaches_the_next(snapshot: Any, corvint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An affected call that leaves the copy dirty is that item's error; the next affected item of the
    snapshot starts from the committed tree (it used to fail "not clean" too), while corvint's own
    snapshot store under .git/corvint/ survives."""
    monkeypatch.setenv("CORVINT_STUB_MODE", "DIRTY,PRIME")
    with pytest.raises(ArmError, match="not clean"):
        AffectedArm(corvint).retrieve(request(snapshot))
    root = snapshot.directory()
    (root / ".corvint").mkdir()
    (root / ".corvint" / "state.db").write_text("a command's own state directory\n")
    (root / "README.md").write_text("edited by a command\n")
    monkeypatch.setenv("CORVINT_STUB_MODE", "")
    answer = AffectedArm(corvint).retrieve(request(snapshot))
    assert answer.ranking == ["tests/test_app.py", "tests/test_util.py"]
    assert answer.cache_state == "PRIMED_SHARED"  # .git/corvint/index kept
    assert not (root / ".corvint").exists() and not (root / "stray.txt").exists()
    assert (root / "README.md").read_bytes() == FILES["README.md"]
    assert copy_status(snapshot) == ""


def test_the_registration_names_the_corvint_digest_and_version(corvint: str, tmp_path: Path) -> None:
    """Seed 000: "the corvint digest (NOT_RUN when no Corvint verb was selected)" and "the corvint
    version and digest it measured"; a selection without a corvint verb starts no corvint."""
    import hashlib as _hashlib

    from pytest_retrieval_bench.arms.registry import builtin_arms
    from pytest_retrieval_bench.report.registration import corvint_registration

    arms = {**builtin_arms(), **{arm.name: arm for arm in preset_arms(corvint)}}
    recorded = corvint_registration(["grep", "corvint-query"], arms)
    assert recorded == {"digest": f"sha256:{_hashlib.sha256(Path(corvint).read_bytes()).hexdigest()}", "version": "corvint-stub 0.0.1"}
    missing = {**builtin_arms(), **{arm.name: arm for arm in preset_arms(str(tmp_path / "no-such-corvint"))}}
    assert corvint_registration(["grep", "bm25:all"], missing) == {"digest": "NOT_RUN", "version": "NOT_RUN"}
    unknown = corvint_registration(["corvint-impact"], missing)
    assert unknown["digest"] == "NOT_RUN" and unknown["version"].startswith("UNKNOWN: ")
