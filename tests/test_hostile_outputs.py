"""Outputs that would destroy inputs are refused before anything runs, and writes are atomic.

Every case checks the exit status, that the message names the option and the path, and that no
input changed (the inputs are hashed before and after).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from pytest_retrieval_bench.bench.outputs import output_problems, same_file
from pytest_retrieval_bench.cli import main
from pytest_retrieval_bench.report.build import write_atomically

RELEASE = Path(__file__).resolve().parent.parent / "testdata" / "release"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
USAGE_ERROR = 4


def digest_tree(root: Path) -> dict[str, str]:
    return {str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(root.rglob("*")) if path.is_file() and ".pytest_cache" not in path.parts and not path.parts[len(root.parts)].startswith("runpytest-") and path.name not in ("stdout", "stderr")}


@pytest.fixture
def bench(release_bench: pytest.Pytester) -> pytest.Pytester:
    return release_bench


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep",
                                         "-p", "no:cacheprovider", *args, timeout=300)


def test_every_output_over_an_input_is_refused(bench: pytest.Pytester) -> None:
    assert run(bench, "--bench-report=base.json").ret == 0
    (bench.path / "folds.json").write_text('{"acme/gin-lite": "A"}')
    (bench.path / "adir").mkdir()
    (bench.path / "alias.json").symlink_to(bench.path / "base.json")
    os.link(bench.path / SAMPLES, bench.path / "hardlink.jsonl")
    cases = [
        (("--bench-report", SAMPLES), "--bench-report", "--bench-samples"),
        (("--bench-report=base.json", "--bench-baseline=base.json"), "--bench-report", "--bench-baseline"),
        (("--bench-report=alias.json", "--bench-baseline=base.json"), "alias.json", "--bench-baseline"),
        (("--bench-report=hardlink.jsonl",), "hardlink.jsonl", "--bench-samples"),
        (("--bench-report=base.json.registration.json",), "registration sidecar", "base.json.registration.json"),
        (("--bench-report=adir",), "--bench-report", "is a directory"),
        (("--bench-report=out.json", "--bench-markdown=out.json"), "--bench-markdown", "same file"),
        (("--bench-report=out.json", "--bench-html=out.json.registration.json"), "--bench-html", "registration sidecar"),
        (("--bench-report=out.json", "--bench-markdown=folds.json", "--bench-fold-map=folds.json"), "--bench-markdown", "--bench-fold-map"),
        (("--bench-report", f"{CORPUS}/report.json"), "--bench-report", "inside --bench-corpus"),
        (("--bench-report=out.json", "--bench-capture=base.json", "--bench-baseline=base.json"), "--bench-capture", "--bench-baseline"),
        (("--bench-report=base.json", "--bench-baseline=base.json", "--bench-update-baseline"), "--bench-report", "same file"),
    ]
    for args, *words in cases:
        before = digest_tree(bench.path)
        result = run(bench, *args)
        assert result.ret == USAGE_ERROR, (args, result.stdout.str(), result.stderr.str())
        message = result.stderr.str()
        assert "refusing to write" in message and all(word in message for word in words), (args, message)
        after = digest_tree(bench.path)
        assert after == before, (args, {k for k in set(after) ^ set(before)} | {k for k in after if k in before and after[k] != before[k]})


def test_summarize_refuses_to_write_over_its_inputs(bench: pytest.Pytester) -> None:
    assert run(bench, "--bench-report=a.json").ret == 0
    before = digest_tree(bench.path)
    through_pytest = bench.runpytest_subprocess("--bench-summarize=a.json", "--bench-report=a.json", "-p", "no:cacheprovider")
    assert through_pytest.ret == USAGE_ERROR and "--bench-report" in through_pytest.stderr.str() and "--bench-summarize" in through_pytest.stderr.str()
    a = str(bench.path / "a.json")
    for argv in (["summarize", a, "-o", a], ["summarize", a, "-o", str(bench.path / "m.json"), "--markdown", a],
                 ["html", a, "-o", a], ["leaderboard", a, "--markdown", a]):
        assert main(argv) == 2, argv
    assert digest_tree(bench.path) == before


def test_summarize_to_an_unwritable_place_is_a_clear_error(bench: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(bench, "--bench-report=a.json").ret == 0
    blocker = bench.path / "blocker"
    blocker.write_text("a file, not a directory")
    code = main(["summarize", str(bench.path / "a.json"), "-o", str(blocker / "merged.json")])
    assert code == 1
    output = capsys.readouterr()
    assert f"cannot write the report to {blocker / 'merged.json'}" in output.out + output.err
    unreadable = main(["summarize", str(bench.path / "missing.json"), "-o", str(bench.path / "x.json")])
    assert unreadable == 2 and "missing.json" in capsys.readouterr().err


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "report.json"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o640)

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError):
        write_atomically(target, b"new and longer\n")
    assert target.read_bytes() == b"old\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report.json"]
    monkeypatch.undo()
    write_atomically(target, b"new\n")
    assert target.read_bytes() == b"new\n" and (target.stat().st_mode & 0o777) == 0o640  # the mode is kept


def test_output_problems_unit(tmp_path: Path) -> None:
    source = tmp_path / "samples.jsonl"
    source.write_text("{}\n")
    (tmp_path / "snap").mkdir()
    assert same_file(tmp_path / "x" / ".." / "samples.jsonl", source)
    assert output_problems([("--bench-report", tmp_path / "fresh.json")], [("--bench-samples", source)], [("--bench-snapshot", tmp_path / "snap")]) == []
    problems = output_problems([("--bench-report", tmp_path / "snap" / "r.json"), ("--bench-markdown", tmp_path / "snap" / ".." / "snap" / "r.json")],
                               [("--bench-samples", source)], [("--bench-snapshot", tmp_path / "snap")])
    assert any("same file" in problem for problem in problems) and sum("inside --bench-snapshot" in problem for problem in problems) == 2


# -- reports and baselines that are not what they seem ------------------------------------------


def _corrupt(report: dict, how: str) -> dict:
    import copy

    broken = copy.deepcopy(report)
    entry = next(entry for entry in broken["details"] if entry.get("arms"))
    record = next(iter(entry["arms"].values()))
    if how == "detail-not-object":
        broken["details"][0] = "x"
    elif how == "no-metrics":
        del record["metrics"]
    elif how == "no-id":
        del entry["id"]
    elif how == "metric-not-number":
        record["metrics"]["recall@10"] = "0.5"
    elif how == "ranking-not-list":
        record["ranking"] = "src/a.py"
    elif how == "arms-not-list":
        broken["registration"]["arms"] = "grep"
    elif how == "details-not-list":
        broken["details"] = {}
    return broken


CORRUPTIONS = {
    "detail-not-object": "$.details[0]: expected an object, got a string",
    "no-metrics": ".metrics: missing",
    "no-id": ".id: missing",
    "metric-not-number": ".metrics['recall@10']: got a string; metrics must be an object of metric names to numbers",
    "ranking-not-list": ".ranking: expected a list of path strings, got a string",
    "arms-not-list": "$.registration.arms: expected a list of arm names, got a string",
    "details-not-list": "$.details: expected a list, got an object",
}


def test_malformed_reports_are_named_with_their_json_path(bench: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert run(bench, "--bench-report=good.json").ret == 0
    good = json.loads((bench.path / "good.json").read_text())
    for how, expected in CORRUPTIONS.items():
        path = bench.path / f"{how}.json"
        path.write_text(json.dumps(_corrupt(good, how)))
        for argv in (["summarize", str(path), "-o", str(bench.path / "m.json")], ["html", str(path), "-o", str(bench.path / "p.html")],
                     ["leaderboard", str(path)], ["summarize", str(bench.path / "good.json"), "--baseline", str(path), "-o", str(bench.path / "m.json")]):
            assert main(argv) == 2, (how, argv)
            error = capsys.readouterr().err
            assert f"{path}: not a valid report: " in error and expected in error, (how, argv, error)
            assert "Traceback" not in error
    as_baseline = run(bench, "--bench-report=run.json", f"--bench-baseline={bench.path / 'no-metrics.json'}")
    assert as_baseline.ret == USAGE_ERROR and "no-metrics.json" in as_baseline.stderr.str() and ".metrics: missing" in as_baseline.stderr.str()
    assert "INTERNALERROR" not in as_baseline.stdout.str() + as_baseline.stderr.str()
    assert not (bench.path / "m.json").exists() and not (bench.path / "p.html").exists()
