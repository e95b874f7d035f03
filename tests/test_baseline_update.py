"""`--bench-update-baseline` (and `summarize --update-baseline`) replace the arms they ran and keep
the baseline's other arms, so a baseline grows with a team's arms instead of losing them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from report_helpers import zero_wall

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"
USAGE_ERROR = 4

# "mine": grep, its ranking cut by MODE (to change an arm between runs); "fx": a parametrized fixture arm (its version FXID).
CONFTEST = '''
import os

import pytest
import pytest_retrieval_bench
from pytest_retrieval_bench import Answer
from pytest_retrieval_bench.arms.lexical import GrepArm


class Mine:
    name = "mine"

    def retrieve(self, request):
        ranking = GrepArm().retrieve(request).ranking
        return Answer(ranking=ranking[4:] if os.environ.get("MODE") == "worse" else ranking)


def pytest_retrieval_bench_arms(config):
    return [Mine()]


@pytest_retrieval_bench.arm("fx", identity=os.environ.get("FXID"))
@pytest.mark.parametrize("cut", [1, 2])
def fx(bench_request, cut):
    return GrepArm().retrieve(bench_request).ranking[cut:]
'''
ALL_ARMS = "--bench-arms=grep,mine,fx"


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: str, *args: str) -> pytest.RunResult:
    monkeypatch.setenv("MODE", mode)
    return pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "-p", "no:cacheprovider", *args, timeout=300)


def _arms(report: dict) -> set[str]:
    return {arm for entry in report["details"] for arm in entry["arms"]}


def _sections(report: dict) -> dict:
    """What a baseline is read for: every record (timings aside) and every summary rebuilt from them."""
    return {"details": zero_wall(report["details"]), "summary": report["summary"], "paired": report["paired"], "skipped": report["skipped"]}


@pytest.fixture
def created(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, pytest.RunResult]:
    """The baseline every arm made, created by an update (every arm is new to it), and that run."""
    pytester.makeconftest(CONFTEST)
    path = pytester.path / "baseline.json"
    result = _run(pytester, monkeypatch, "same", ALL_ARMS, f"--bench-baseline={path}", "--bench-update-baseline")
    assert result.ret == 0, result.stdout.str()
    return path, result


@pytest.fixture
def week_one(created: tuple[Path, pytest.RunResult]) -> Path:
    return created[0]


def test_an_update_of_one_arm_replaces_it_and_keeps_the_others(pytester, monkeypatch, created):
    week_one, creation = created
    creation.stdout.fnmatch_lines([f"baseline updated: {week_one} (added grep, mine, fx[1], fx[2])"])
    before = json.loads(week_one.read_text())
    result = _run(pytester, monkeypatch, "worse", "--bench-arms=mine", f"--bench-baseline={week_one}", "--bench-update-baseline")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([f"baseline updated: {week_one} (replaced mine; kept grep, fx[1], fx[2])"])
    updated = json.loads(week_one.read_text())
    assert _arms(updated) == _arms(before) == {"grep", "mine", "fx[1]", "fx[2]"}
    assert updated["registration"]["arms"] == ["mine", "grep", "fx[1]", "fx[2]"]
    assert set(updated["registration"]["arm_identities"]) == _arms(before)
    # the baseline is what one run of every arm, mine changed, writes: the kept records as they were, mine's new ones, every summary rebuilt
    whole = _run(pytester, monkeypatch, "worse", ALL_ARMS, "--bench-report=whole.json")
    assert whole.ret == 0
    assert _sections(updated) == _sections(json.loads((pytester.path / "whole.json").read_text()))
    assert updated["summary"]["all"]["mine"] != before["summary"]["all"]["mine"]  # the change is in it
    # so the next run of every arm pairs with it (before, it exited 4: the baseline had no results for grep, fx[1], fx[2])
    gated = _run(pytester, monkeypatch, "worse", ALL_ARMS, f"--bench-baseline={week_one}", "--bench-gate=recall@10>=0")
    assert gated.ret == 0, gated.stdout.str() + gated.stderr.str()
    gated.stdout.fnmatch_lines(["*gate recall@10>=0 arm fx[[]1[]]*PASS*", "*gate recall@10>=0 arm grep*PASS*", "*gate recall@10>=0 arm mine*PASS*"])


def test_an_update_that_would_keep_arms_of_another_bench_is_refused(pytester, monkeypatch, week_one):
    before = week_one.read_bytes()
    result = _run(pytester, monkeypatch, "same", "--bench-arms=mine", "--bench-max-samples=5", f"--bench-baseline={week_one}", "--bench-update-baseline")
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(["*updating the baseline would keep its arm(s) grep, fx[[]1[]], fx[[]2[]]*'max_samples' differs (None vs this run's 5)*"])
    shard = _run(pytester, monkeypatch, "same", ALL_ARMS, "--bench-shard=1/2", f"--bench-baseline={week_one}", "--bench-update-baseline")
    assert shard.ret == USAGE_ERROR
    shard.stderr.fnmatch_lines(["*--bench-update-baseline with --bench-shard: a shard's report holds only its own snapshots*"])
    assert week_one.read_bytes() == before
    # replacing every arm needs no common bench with the old baseline
    whole = _run(pytester, monkeypatch, "same", ALL_ARMS, "--bench-max-samples=5", f"--bench-baseline={week_one}", "--bench-update-baseline")
    assert whole.ret == 0, whole.stderr.str()
    whole.stdout.fnmatch_lines([f"baseline updated: {week_one} (replaced grep, mine, fx[1], fx[2])"])
    assert len(json.loads(week_one.read_text())["details"]) == 5


def test_summarize_update_baseline_keeps_the_other_arms(pytester, monkeypatch, week_one):
    """The console script's --update-baseline publishes through the same step."""
    assert _run(pytester, monkeypatch, "worse", "--bench-arms=mine", "--bench-report=pr.json").ret == 0
    result = subprocess.run([sys.executable, "-m", "pytest_retrieval_bench.cli", "summarize", "pr.json", "--baseline", str(week_one),
                             "--update-baseline", "-o", "merged.json"], cwd=pytester.path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"baseline updated: {week_one} (replaced mine; kept grep, fx[1], fx[2])" in result.stdout.splitlines()
    updated = json.loads(week_one.read_text())
    assert _arms(updated) == {"grep", "mine", "fx[1]", "fx[2]"}
    merged = json.loads((pytester.path / "merged.json").read_text())
    assert zero_wall([{**e, "arms": {"mine": e["arms"]["mine"]}} for e in updated["details"] if "mine" in e["arms"]]) == \
        zero_wall([e for e in merged["details"] if e["arms"]])


def test_an_arm_new_to_the_baseline_is_added(pytester, monkeypatch, week_one):
    """What an update writes, from the reports alone: a run with an arm the baseline lacks adds it."""
    from pytest_retrieval_bench.report.baseline_update import updated_baseline

    assert _run(pytester, monkeypatch, "same", "--bench-arms=grep,bm25:all", "--bench-report=run.json").ret == 0
    run = json.loads((pytester.path / "run.json").read_text())
    written, changes = updated_baseline(json.loads(week_one.read_text()), str(week_one), run, "run.json", ["grep"])
    assert changes.describe() == "replaced grep; added bm25:all; kept mine, fx[1], fx[2]"
    assert written["registration"]["arms"] == ["grep", "bm25:all", "mine", "fx[1]", "fx[2]"]
    assert set(written["summary"]["all"]) == _arms(written) == {"grep", "bm25:all", "mine", "fx[1]", "fx[2]"}
    assert set(written["paired"]["all"]) == {"bm25:all vs grep", "mine vs grep", "fx[1] vs grep", "fx[2] vs grep"}
    assert [entry["path"] for entry in written["registration"]["merged_from"]] == [str(week_one), "run.json"]


def test_a_kept_fusion_of_a_changed_arm_is_refused(pytester, monkeypatch):
    """A fusion's records are made of its components': kept while a component changes, they would lie."""
    pytester.makeconftest(CONFTEST)
    path = pytester.path / "baseline.json"
    monkeypatch.setenv("FXID", "fx-v1")
    fuse = "--bench-fuse=rrf=grep,fx[1]"
    assert _run(pytester, monkeypatch, "same", "--bench-arms=grep,fx", fuse, f"--bench-baseline={path}", "--bench-update-baseline").ret == 0
    before = path.read_bytes()
    monkeypatch.setenv("FXID", "fx-v2")
    refused = _run(pytester, monkeypatch, "same", "--bench-arms=fx", f"--bench-baseline={path}", "--bench-update-baseline")
    assert refused.ret == USAGE_ERROR
    refused.stderr.fnmatch_lines(["*would keep its fused arm 'rrf', computed from the earlier version of fx[[]1[]], which this run changes*"])
    assert path.read_bytes() == before
    with_fusion = _run(pytester, monkeypatch, "same", "--bench-arms=fx", fuse, f"--bench-baseline={path}", "--bench-update-baseline")
    assert with_fusion.ret == 0, with_fusion.stdout.str() + with_fusion.stderr.str()
    with_fusion.stdout.fnmatch_lines([f"baseline updated: {path} (replaced fx[1], fx[2], rrf; kept grep)"])
