"""The capture file: exclusive and private, bounded, bound by its footer, and validated."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.arms import capture
from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.arms.command import CommandArm, CommandArmSpec
from pytest_retrieval_bench.arms.capture import CaptureError, CaptureWriter, validate_capture
from pytest_retrieval_bench.corpus.copies import PrivateCopies
from pytest_retrieval_bench.corpus.tree import read_directory
from pytest_retrieval_bench.errors import ArmError

DESCRIPTORS = [{"arm": "mine", "argv": ["tool", "{query}"], "cwd": "root", "timeout": 120.0}]
REGISTRATION = {"plugin_version": "0", "arms": ["mine"]}


def writer(path: Path, **kwargs: Any) -> CaptureWriter:
    return CaptureWriter(path, REGISTRATION, DESCRIPTORS, **kwargs)


def add(w: CaptureWriter, sample: str = "s1", stdout: bytes | None = b'{"ids": []}\n', stderr: bytes | None = b"", **kwargs: Any) -> None:
    fields = {"sample_id": sample, "arm": "mine", "task": "the query", "stdout": stdout, "stderr": stderr, "parse_status": "PARSED", **kwargs}
    w.record(**fields)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def test_a_complete_capture(tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    w = writer(path)
    add(w, "s1", repo="acme/demo", base_commit="c" * 40, exit_status=0)
    add(w, "s1", stdout=b"{bad", parse_status="MALFORMED")
    add(w, "s2", stdout=None, stderr=None, parse_status="NOT_RUN")
    w.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    header, *records, footer = lines(path)
    assert (header["profile"], header["registration"], header["descriptors"]) == ("retrieval-bench-capture-v1", REGISTRATION, DESCRIPTORS)
    assert [(r["invocation"], r["sample_ordinal"], r["parse"]) for r in records] == [(0, 0, "PARSED"), (1, 0, "MALFORMED"), (2, 1, "NOT_RUN")]
    first = records[0]
    assert (first["phase"], first["repo"], first["exit_status"]) == ("ordinary", "acme/demo", 0)
    assert first["task"] == {"bytes": 9, "sha256": hashlib.sha256(b"the query").hexdigest()}
    assert base64.b64decode(first["stdout"]["base64"]) == b'{"ids": []}\n'
    assert (first["stdout"]["state"], first["stdout"]["bytes"]) == ("COMPLETE", 12)
    assert first["stdout"]["sha256"] == hashlib.sha256(b'{"ids": []}\n').hexdigest()
    assert records[2]["stdout"] == {"state": "NOT_PRODUCED"} and records[2]["stderr"] == {"state": "NOT_PRODUCED"}
    prior = path.read_bytes().rsplit(b"\n", 2)[0] + b"\n"
    # seed 000: "total_bytes (the entire encoded file), prior_sha256 (the exact preceding header/record lines)"
    assert footer == {"kind": "footer", "invocations": 3, "total_bytes": path.stat().st_size, "prior_sha256": hashlib.sha256(prior).hexdigest(),
                      "status": "COMPLETE", "failure": None}
    assert validate_capture(path)["status"] == "COMPLETE"
    assert validate_capture(path)["invocations"] == 3
    assert not w.failed


def test_lines_reach_the_disk_on_flush(tmp_path: Path) -> None:
    w = writer(tmp_path / "c.jsonl")
    size = w.path.stat().st_size
    assert size > 0  # the header is written at once
    add(w)
    assert w.path.stat().st_size == size  # kept in memory while an arm is being timed
    w.flush()
    assert w.path.stat().st_size > size
    w.close()
    w.close()  # safe twice
    assert validate_capture(w.path)["invocations"] == 1


def test_refuses_an_existing_path(tmp_path: Path) -> None:
    existing = tmp_path / "c.jsonl"
    existing.write_text("keep me")
    with pytest.raises(CaptureError, match="already exists"):
        writer(existing)
    assert existing.read_text() == "keep me"


def test_refuses_a_symlink_component(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(CaptureError, match="symbolic link"):
        writer(tmp_path / "link" / "c.jsonl")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(CaptureError, match="symbolic link"):
        writer(tmp_path / "dangling")
    assert not (tmp_path / "nowhere").exists()


def test_refuses_a_path_inside_an_input(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "deep").mkdir(parents=True)
    with pytest.raises(CaptureError, match="inside the input"):
        writer(corpus / "deep" / "c.jsonl", forbidden_roots=[corpus])
    with pytest.raises(CaptureError, match="does not exist"):
        writer(tmp_path / "missing" / "c.jsonl")
    writer(tmp_path / "c.jsonl", forbidden_roots=[corpus]).close()  # a sibling is fine


def test_header_limit(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="header"):
        CaptureWriter(tmp_path / "c.jsonl", {"big": "x" * (1 << 20)}, DESCRIPTORS)
    assert not (tmp_path / "c.jsonl").exists()


def test_stderr_beyond_64_kib_is_truncated_not_a_failure(tmp_path: Path) -> None:
    w = writer(tmp_path / "c.jsonl")
    add(w, stderr=b"e" * (70 * 1024))
    w.close()
    record = lines(w.path)[1]
    assert (record["stderr"]["state"], record["stderr"]["bytes"], record["stderr"]["produced_bytes"]) == ("TRUNCATED", 65536, 71680)
    assert not w.failed and validate_capture(w.path)["status"] == "COMPLETE"


def test_stdout_beyond_8_mib_fails_the_capture_and_keeps_the_file(tmp_path: Path) -> None:
    w = writer(tmp_path / "c.jsonl")
    add(w, stdout=b"o" * (8 << 20), stdout_total=(8 << 20) + 5, parse_status="NOT_RUN")
    add(w, "s2")  # dropped after a failure
    w.close()
    assert w.failed and "exceeds 8388608" in (w.failure_reason or "")
    summary = validate_capture(w.path)
    assert (summary["status"], summary["invocations"]) == ("PARTIAL", 0)  # the record is dropped, never kept cut
    assert [line["kind"] for line in lines(w.path)] == ["header", "footer"]


@pytest.mark.parametrize("limit, value, kwargs, reason", [
    ("MAX_INVOCATIONS", 2, {}, "more than 2 invocations"),
    ("MAX_FILE_BYTES", 6000, {}, "would exceed 6000 bytes"),
    ("MAX_RECORD_METADATA_BYTES", 600, {"sample": "s" * 700}, "record metadata"),
])
def test_limits_fail_the_capture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: str, value: int, kwargs: dict[str, Any], reason: str) -> None:
    monkeypatch.setattr(capture, limit, value)
    w = writer(tmp_path / "c.jsonl")
    for _ in range(3):
        add(w, stdout=b"x" * 900, parse_status="MALFORMED", **kwargs)
    w.close()
    assert w.failed and reason in (w.failure_reason or "")
    footer = lines(w.path)[-1]
    assert (footer["status"], footer["failure"]) == ("PARTIAL", w.failure_reason)
    assert validate_capture(w.path)["status"] == "PARTIAL"


def test_an_arm_without_a_descriptor_fails_the_capture(tmp_path: Path) -> None:
    w = writer(tmp_path / "c.jsonl")
    w.record(sample_id="s", arm="other", task="", stdout=b"", stderr=b"", parse_status="PARSED")
    w.close()
    assert w.failed and "'other'" in (w.failure_reason or "")


# -- validation ----------------------------------------------------------------------------------
@pytest.fixture
def valid(tmp_path: Path) -> Path:
    w = writer(tmp_path / "c.jsonl")
    add(w, "s1")
    add(w, "s2")
    w.close()
    return w.path


def rewrite(path: Path, number: int, change: Any) -> None:
    rows = path.read_bytes().splitlines()
    row = json.loads(rows[number])
    change(row)
    rows[number] = json.dumps(row, sort_keys=True).encode()
    path.write_bytes(b"\n".join(rows) + b"\n")


def test_validate_without_a_footer_is_incomplete(valid: Path) -> None:
    valid.write_bytes(b"".join(valid.read_bytes().splitlines(keepends=True)[:-1]))
    assert validate_capture(valid)["status"] == "INCOMPLETE"


@pytest.mark.parametrize("damage, message", [
    (lambda p: p.write_bytes(p.read_bytes()[:-1]), "incomplete"),
    (lambda p: p.write_bytes(p.read_bytes() + b'{"kind": "record"}\n'), "trailing bytes after the footer"),
    (lambda p: p.write_bytes(p.read_bytes().replace(b'"s2"', b'"s3"')), "footer does not match"),
    (lambda p: rewrite(p, 2, lambda r: r.update(invocation=5)), "expected record 1"),
    (lambda p: rewrite(p, 2, lambda r: r.update(sample_ordinal=0)), "sample ordinal"),
    (lambda p: rewrite(p, 1, lambda r: r.update(arm="ghost")), "has no descriptor"),
    (lambda p: rewrite(p, 1, lambda r: r["stdout"].update(base64=base64.b64encode(b"other").decode())), "does not match its byte count or sha256"),
    (lambda p: rewrite(p, 1, lambda r: r.update(stdout={"state": "NOT_PRODUCED", "bytes": 0})), "carries a payload"),
    (lambda p: rewrite(p, 0, lambda r: r.update(profile="v0")), "header"),
    (lambda p: rewrite(p, 3, lambda r: r.update(invocations=3)), "footer does not match"),
])
def test_validate_detects_damage(valid: Path, damage: Any, message: str) -> None:
    assert validate_capture(valid)["status"] == "COMPLETE"
    damage(valid)
    with pytest.raises(CaptureError, match=message):
        validate_capture(valid)


# -- arms write to it ----------------------------------------------------------------------------
@pytest.fixture
def snapshot(tmp_path: Path):
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.py").write_text("a\n")
    copies = PrivateCopies(tmp_path / "copies", owned_root=tmp_path / "copies")
    snap = read_directory(root, "acme/demo", "d" * 40)
    snap.directory_provider = copies.get
    yield snap
    copies.cleanup()
    copies.restore_signals()


@pytest.mark.parametrize("program, argv0, parse, stdout_state, stdout", [
    ("import json; print(json.dumps({'ids': ['a.py']}))", None, "PARSED", "COMPLETE", b'{"ids": ["a.py"]}\n'),
    ("import sys; sys.stdout.write('{not json'); print('why', file=sys.stderr)", None, "MALFORMED", "COMPLETE", b"{not json"),
    ("import sys; print('partial'); print('boom', file=sys.stderr); sys.exit(3)", None, "NOT_RUN", "COMPLETE", b"partial\n"),
    ("", "no-such-program-here", "NOT_RUN", "NOT_PRODUCED", None),
])
def test_command_arm_records_each_invocation(tmp_path: Path, snapshot: Any, program: str, argv0: str | None, parse: str, stdout_state: str, stdout: bytes | None) -> None:
    argv = [argv0] if argv0 else [sys.executable, "-c", program]
    arm = CommandArm(CommandArmSpec.from_mapping("mine", {"argv": [*argv, "{query}"], "ranking": "ids[]"}, "test"))
    w = CaptureWriter(tmp_path / "c.jsonl", REGISTRATION, [arm.descriptor()])
    arm.capture = w
    request = Request(sample_id="s1", task_type="t", repo="acme/demo", base_commit="d" * 40, query={}, query_text="the query",
                      changed_file=None, k=5, snapshot=snapshot)
    try:
        arm.retrieve(request)
    except ArmError:
        pass
    w.close()
    record = lines(w.path)[1]
    assert (record["parse"], record["stdout"]["state"], record["arm"], record["sample_id"]) == (parse, stdout_state, "mine", "s1")
    assert record["task"]["sha256"] == hashlib.sha256(b"the query").hexdigest()
    if stdout is not None:
        assert base64.b64decode(record["stdout"]["base64"]) == stdout
    if parse == "MALFORMED":
        assert base64.b64decode(record["stderr"]["base64"]) == b"why\n"
    assert validate_capture(w.path)["status"] == "COMPLETE"
    assert os.path.getsize(w.path) == lines(w.path)[-1]["total_bytes"]


def test_a_corvint_context_capture_has_the_seed_s_profile(tmp_path: Path) -> None:
    w = CaptureWriter(tmp_path / "c.jsonl", REGISTRATION, [{"arm": "corvint-context", "argv": ["corvint", "context"], "cwd": "root", "timeout": 120}])
    w.record(sample_id="s1", arm="corvint-context", task="t", stdout=b"{}", stderr=b"", parse_status="PARSED")
    w.close()
    assert lines(w.path)[0]["profile"] == "corvint-retrieval-context-capture-v0"
    assert validate_capture(w.path)["profile"] == "corvint-retrieval-context-capture-v0"
    other = writer(tmp_path / "d.jsonl")
    other.close()
    assert lines(other.path)[0]["profile"] == "retrieval-bench-capture-v1"  # any other command arm: the generalised profile


def test_a_footer_whose_total_is_not_the_whole_file_is_refused(tmp_path: Path) -> None:
    w = writer(tmp_path / "c.jsonl")
    add(w, "s1")
    w.close()
    data = w.path.read_bytes()
    footer = json.loads(data.splitlines()[-1])
    prior = data[: len(data) - len(data.splitlines()[-1]) - 1]
    footer["total_bytes"] = len(prior)  # the old reading: bytes before the footer
    w.path.write_bytes(prior + json.dumps(footer, sort_keys=True, separators=(",", ":")).encode() + b"\n")
    with pytest.raises(CaptureError, match="the file's"):
        validate_capture(w.path)


@pytest.mark.parametrize("args, words", [(["--bench-summarize=a.json", "--bench-report=m.json"], "cannot be combined with --bench-summarize"),
                                          ([], "--bench-capture needs --bench-report")])
def test_capture_options_the_seed_refuses(pytester: pytest.Pytester, args: list, words: str) -> None:
    samples = Path(__file__).resolve().parent.parent / "testdata" / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
    corpus = samples.parents[2] / "corpus" / "synthetic_v1"
    base = [] if args and "summarize" in args[0] else [f"--bench-samples={samples}", f"--bench-corpus={corpus}"]
    result = pytester.runpytest_subprocess(*base, *args, f"--bench-capture={pytester.path / 'cap.jsonl'}", "-p", "no:cacheprovider", timeout=120)
    assert result.ret == 4 and words in result.stderr.str()
    assert not (pytester.path / "cap.jsonl").exists()
