"""Options that mean nothing and inputs that would fail item by item are named once, at start-up."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

RELEASE = Path(__file__).resolve().parent.parent / "testdata" / "release"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
USAGE_ERROR = 4


@pytest.fixture
def bench(release_bench: pytest.Pytester) -> pytest.Pytester:
    return release_bench


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=300)


def test_start_up_problems_are_one_usage_error(bench: pytest.Pytester) -> None:
    (bench.path / "afile").write_text("x")
    with gzip.open(bench.path / "samples.jsonl", "wb") as handle:
        handle.write((RELEASE / "benchmark" / "synthetic_v1" / "samples.jsonl").read_bytes())
    cases = [
        ((f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms="), ["--bench-arms: an empty value"]),
        ((f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=,"), ["--bench-arms: an empty value"]),
        ((f"--bench-samples={SAMPLES}", "--bench-corpus=nowhere"), ["--bench-corpus", "nowhere: no such directory"]),
        ((f"--bench-samples={SAMPLES}", "--bench-corpus=afile"), ["--bench-corpus", "afile: not a directory"]),
        ((f"--bench-samples={SAMPLES}", "--bench-repos=nowhere"), ["--bench-repos", "no such directory"]),
        ((f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-cache-dir=afile"), ["--bench-cache-dir", "not a directory"]),
        ((f"--bench-samples={SAMPLES}", f"--bench-samples=./{SAMPLES}", f"--bench-corpus={CORPUS}"), ["--bench-samples", "given twice"]),
        (("--bench-samples=samples.jsonl", f"--bench-corpus={CORPUS}"), ["samples.jsonl: gzip-compressed, an unsupported compression"]),
        ((f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-task-type=nosuch"),
         ["--bench-task-type 'nosuch': no sample has this task type", "code2test"]),
    ]
    for args, words in cases:
        result = run(bench, *args)
        message = result.stderr.str()
        assert result.ret == USAGE_ERROR, (args, result.stdout.str(), message)
        assert all(word in message for word in words), (args, message)
        assert message.count("ERROR:") == 1 and "Traceback" not in message, (args, message)


def test_a_fold_map_naming_no_repository_warns(bench: pytest.Pytester) -> None:
    (bench.path / "folds.json").write_text(json.dumps({"someone/else": "A", "other/repo": "B"}))
    result = run(bench, f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep", "--bench-fold-map=folds.json", "-W", "error::pytest.PytestConfigWarning")
    assert result.ret != 0
    assert "none of its repositories (other/repo, someone/else) is a sample's" in result.stdout.str() + result.stderr.str()
    (bench.path / "folds2.json").write_text(json.dumps({"acme/gin-lite": "A", "x/y": "B"}))
    matched = run(bench, f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep", "--bench-fold-map=folds2.json")
    assert matched.ret == 0 and "none of its repositories" not in matched.stdout.str() + matched.stderr.str()


def test_ids_and_paths_pytest_cannot_carry_are_refused_by_line(bench: pytest.Pytester) -> None:
    rows = [json.loads(line) for line in (RELEASE / "benchmark" / "synthetic_v1" / "samples.jsonl").read_text().splitlines() if line.strip()]
    positives = [row for row in rows if (row.get("gold") or {}).get("files")][:3]
    assert len(positives) == 3
    positives[0]["id"] = "a::b"
    positives[1]["gold"]["files"] = ["../outside.py"]
    positives[2]["gold"]["files"] = ["/etc/passwd"]
    (bench.path / "bad.jsonl").write_text("".join(json.dumps(row) + "\n" for row in positives))
    result = run(bench, "--bench-samples=bad.jsonl", f"--bench-corpus={CORPUS}", "--bench-arms=grep", "--bench-report=out.json")
    assert result.ret == 1
    text = result.stdout.str()
    assert "bad.jsonl:1" in text and "contains '::'" in text
    assert "bad.jsonl:2" in text and "'..' component" in text
    assert "bad.jsonl:3" in text and "absolute path" in text
    report = json.loads((bench.path / "out.json").read_text())
    assert report["details"] == [] and len(report["problems"]) == 3 and report["missing"] == []
