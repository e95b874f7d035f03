"""Arms that never return: a Python or fixture arm past --bench-arm-timeout is an error, the run goes on."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from pytest_retrieval_bench.bench.deadline import ArmTimedOut, time_limit

RELEASE = Path(__file__).resolve().parent.parent / "testdata" / "release"

CONFTEST = """
import time
import pytest
from pytest_retrieval_bench import Answer, arm

class Sleeper:
    name = "sleeper"
    def retrieve(self, request):
        try:
            time.sleep(3600)
        except Exception:   # an arm's own broad handler must not swallow the limit
            return Answer(ranking=[])

@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return [Sleeper()]

@arm("spinner")
def spinner(bench_request):
    while True:
        pass
"""


def test_time_limit_interrupts_and_restores_an_outer_timer() -> None:
    import signal

    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(True))
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    try:
        started = time.monotonic()
        with pytest.raises(ArmTimedOut, match="arm x exceeded its time limit of 0.2 s"):
            with time_limit(0.2, "arm x"):
                time.sleep(10)
        assert time.monotonic() - started < 2
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 3.0 < remaining <= 5.0  # the outer timer runs on
        with time_limit(None, "arm y"):
            time.sleep(0.01)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not fired


def test_a_hanging_arm_is_an_error_and_the_session_goes_on(pytester: pytest.Pytester) -> None:
    shutil.copytree(RELEASE, pytester.path / "release")
    pytester.makeconftest(CONFTEST)
    started = time.monotonic()
    result = pytester.runpytest_subprocess("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl",
                                           "--bench-corpus=release/corpus/synthetic_v1", "--bench-arms=sleeper,spinner,grep",
                                           "--bench-arm-timeout=0.2", "-k", "gin-lite", "--bench-report=out.json",
                                           "-p", "no:cacheprovider", timeout=240)
    assert time.monotonic() - started < 200
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*arm sleeper failed on *: arm sleeper exceeded its time limit of 0.2 s (--bench-arm-timeout)*",
                                 "*arm spinner failed on *: arm spinner exceeded its time limit of 0.2 s*"])
    report = json.loads((pytester.path / "out.json").read_text())
    ran = [entry for entry in report["details"] if entry.get("arms")]
    assert ran and all(entry["arms"]["sleeper"]["error"] and entry["arms"]["spinner"]["error"] for entry in ran)
    assert all(entry["arms"]["grep"]["error"] is None for entry in ran)  # the other arm ran on every item


@pytest.mark.parametrize("value", ["-1", "soon", "inf"])
def test_a_bad_timeout_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    shutil.copytree(RELEASE, pytester.path / "release")
    result = pytester.runpytest_subprocess("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl",
                                           "--bench-corpus=release/corpus/synthetic_v1", f"--bench-arm-timeout={value}", timeout=120)
    assert result.ret == 4 and "--bench-arm-timeout" in result.stderr.str()
