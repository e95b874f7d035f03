"""What CI users read and configure: ini keys, pytest-json-report, JUnit XML, Markdown, progress
lines, arms from entry points and from pyproject.toml, and the capture file of a real run."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from report_helpers import assert_outcomes

from pytest_retrieval_bench.arms.capture import validate_capture

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"
STUB = TESTDATA / "stubs" / "corvint_stub.py"


def _args(*extra: str) -> list[str]:
    return [f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "-p", "no:cacheprovider", *extra]


def test_every_option_is_an_ini_key(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml(f"""
[tool.pytest.ini_options]
bench_samples = ["{SAMPLES.as_posix()}"]
bench_corpus = ["{CORPUS.as_posix()}"]
bench_arms = ["grep"]
bench_limit = "10"
bench_report = "ini.json"
bench_task_type = "code2test"
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == 0
    report = json.loads((pytester.path / "ini.json").read_text())
    assert report["registration"]["arms"] == ["grep"] and report["registration"]["limit"] == 10
    assert {entry["task_type"] for entry in report["details"]} == {"code2test"}
    scored = [entry["arms"]["grep"]["metrics"] for entry in report["details"] if entry["arms"]]
    assert scored and all(not key.endswith("@20") for metrics in scored for key in metrics)
    overridden = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--bench-limit=5", "--bench-report=cli.json")
    assert overridden.ret == 0 and json.loads((pytester.path / "cli.json").read_text())["registration"]["limit"] == 5


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["local", "xdist"])
def test_json_report_and_junit(pytester: pytest.Pytester, workers: tuple[str, ...]) -> None:
    pytest.importorskip("pytest_jsonreport")
    result = pytester.runpytest_subprocess(*_args("--bench-arms=grep", "--json-report", "--json-report-file=jr.json",
                                                  "--junitxml=junit.xml", "--bench-report=out.json", *workers))
    assert result.ret == 0
    json_report = json.loads((pytester.path / "jr.json").read_text())
    report = json.loads((pytester.path / "out.json").read_text())
    assert json_report["retrieval_bench"]["summary"] == report["summary"]
    passed = [test for test in json_report["tests"] if test["outcome"] == "passed"]
    assert len(passed) == 34
    for test in passed:
        record = test["metadata"]["retrieval_bench"]
        assert test["nodeid"].endswith(f"{record['sample_id']}[grep]")
        assert record["ranking"] == next(e for e in report["details"] if e["id"] == record["sample_id"])["arms"]["grep"]["ranking"]
    cases = ElementTree.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    properties = {case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")} for case in cases}
    hit = [name for name, props in properties.items() if props.get("bench.hit@10") == "1.0"]
    assert hit and all({"bench.recall@10", "bench.mrr@k", "bench.abstained", "bench.selective_success"} <= properties[name].keys() for name in hit)


def test_markdown_summary(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
from pytest_retrieval_bench import Answer
from pytest_retrieval_bench.arms.lexical import GrepArm

class Reversed:
    name = "reversed"
    def retrieve(self, request):
        return Answer(ranking=list(reversed(GrepArm().retrieve(request).ranking[:20])))

def pytest_retrieval_bench_arms(config):
    return [Reversed()]
""")
    result = pytester.runpytest_subprocess(*_args("--bench-arms=grep,reversed", "--bench-markdown=summary.md"))
    assert result.ret == 0
    text = (pytester.path / "summary.md").read_text()
    assert text.startswith("## Retrieval bench\n")
    assert "| grep | 34 | 28 |" in text and "| reversed | 34 | 28 |" in text
    assert "| reversed vs grep | recall@10 |" in text and "| reversed vs grep | mrr@k |" in text


def test_an_arm_from_an_entry_point(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    site = pytester.mkdir("site")
    (site / "teamarm.py").write_text(
        "from pytest_retrieval_bench import Answer\n"
        "class TeamArm:\n    name = 'team'\n"
        "    def retrieve(self, request):\n        return Answer(ranking=request.snapshot.paths()[:3])\n"
        "def arms():\n    return [TeamArm()]\n")
    info = site / "teamarm-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: teamarm\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest_retrieval_bench.arms]\nteam = teamarm:arms\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    result = pytester.runpytest_subprocess(*_args("--bench-arms=team", "--bench-report=out.json"))
    assert result.ret == 0
    report = json.loads((pytester.path / "out.json").read_text())
    assert report["registration"]["arm_identities"]["team"].startswith("python:teamarm.TeamArm")
    assert all(len(entry["arms"]["team"]["ranking"]) <= 3 for entry in report["details"] if entry["arms"])


def test_a_command_arm_from_pyproject_with_capture(pytester: pytest.Pytester) -> None:
    wrapper = pytester.path / "bin" / "corvint"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STUB}" "$@"\n')
    wrapper.chmod(0o755)
    pytester.makepyprojecttoml(f"""
[tool.retrieval-bench.arms.stubby]
argv = ["{wrapper.as_posix()}", "query", "--task", "{{query}}", "--limit", "{{k}}"]
ranking = "results[].path"
state = "state"
abstain_states = ["OUT_OF_SCOPE"]
timeout = 30
""")
    result = pytester.runpytest_subprocess(*_args("--bench-arms=stubby,grep", "--bench-report=out.json", "--bench-capture=capture.jsonl", "-k", "gin"))
    assert result.ret == 0, result.stdout.str()[-3000:]
    report = json.loads((pytester.path / "out.json").read_text())
    assert report["registration"]["arm_identities"]["stubby"].startswith("command:corvint:sha256:")
    answered = [entry["arms"]["stubby"] for entry in report["details"] if "stubby" in entry["arms"]]
    assert answered and all(record["packet_bytes"] > 0 and record["error"] is None for record in answered)
    capture = validate_capture(pytester.path / "capture.jsonl")
    assert capture["status"] == "COMPLETE" and capture["invocations"] == len(answered)
    assert (pytester.path / "capture.jsonl").stat().st_mode & 0o777 == 0o600
    again = pytester.runpytest_subprocess(*_args("--bench-arms=stubby", "--bench-report=again.json", "--bench-capture=capture.jsonl", "-k", "gin"))
    assert again.ret == 4 and "already exists; a capture is never overwritten" in again.stderr.str()


def test_a_sample_id_in_two_files_is_a_located_problem(pytester: pytest.Pytester) -> None:
    copy = pytester.path / "again.jsonl"
    copy.write_bytes(SAMPLES.read_bytes())
    result = pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-samples={copy}", f"--bench-corpus={CORPUS}",
                                           "-p", "no:cacheprovider", "--bench-arms=grep", "--bench-report=out.json")
    assert result.ret == 1
    report = json.loads((pytester.path / "out.json").read_text())
    assert report["summary"]["all"]["grep"]["n"] == 34
    assert len(report["problems"]) == 35 and all("duplicate sample id" in problem and str(SAMPLES) in problem for problem in report["problems"])
    assert_outcomes(result, passed=34, skipped=1, failed=35)


def test_bad_baseline_arms_and_unwritable_outputs(pytester: pytest.Pytester) -> None:
    unknown = pytester.runpytest_subprocess(*_args("--bench-arms=grep", "--bench-baseline-arms=grpe"))
    assert unknown.ret == 4
    unknown.stderr.fnmatch_lines(["*unknown arm 'grpe' in --bench-baseline-arms*"])
    (pytester.path / "blocker").write_text("a file, not a directory")
    report = pytester.runpytest_subprocess(*_args("--bench-arms=grep", "--bench-report=blocker/out.json"))
    assert report.ret == 4 and "INTERNALERROR" not in report.stdout.str() + report.stderr.str()
    markdown = pytester.runpytest_subprocess(*_args("--bench-arms=grep", "--bench-markdown=blocker/summary.md"))
    assert markdown.ret == 1 and "INTERNALERROR" not in markdown.stdout.str() + markdown.stderr.str()
    markdown.stdout.fnmatch_lines(["*cannot write the Markdown summary to*"])
