"""Arms that never return: a Python or fixture arm past --bench-arm-timeout is an error, the run goes on."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from pytest_retrieval_bench.arms.deadline import ArmTimedOut, time_limit

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


OWN_LIMITS = """
import time
from pytest_retrieval_bench import Answer, arm

class Patient:
    name = "patient"
    timeout = 5          # its own limit, above the run's
    def retrieve(self, request):
        time.sleep(0.5)
        return Answer(ranking=[])

class Hasty:
    name = "hasty"
    timeout = 0.2        # its own limit, below the run's
    def retrieve(self, request):
        time.sleep(3600)

def pytest_retrieval_bench_arms(config):
    return [Patient(), Hasty()]

@arm("slow-fixture", timeout=5)
def slow_fixture(bench_request):
    time.sleep(0.5)
    return []
"""


def test_a_declared_arm_sets_its_own_time_limit(pytester: pytest.Pytester) -> None:
    """`timeout` on an object arm and `@arm(timeout=...)` replace --bench-arm-timeout for that arm."""
    shutil.copytree(RELEASE, pytester.path / "release")
    pytester.makeconftest(OWN_LIMITS)
    result = pytester.runpytest_subprocess("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl",
                                           "--bench-corpus=release/corpus/synthetic_v1", "--bench-arms=patient,hasty,slow-fixture",
                                           "--bench-arm-timeout=0.1", "-k", "402beedd849ff8293b36f091", "--bench-report=out.json",
                                           "-p", "no:cacheprovider", timeout=240)
    result.stdout.fnmatch_lines(["*arm hasty failed on *: arm hasty exceeded its time limit of 0.2 s (the arm's own timeout)*"])
    report = json.loads((pytester.path / "out.json").read_text())
    records = {arm: record for entry in report["details"] for arm, record in entry["arms"].items()}
    assert records["patient"]["error"] is None and records["slow-fixture"]["error"] is None  # 0.5 s, above the run's 0.1 s
    assert "0.2 s" in records["hasty"]["error"]


@pytest.mark.parametrize("declaration", ["class Bad:\n    name = 'bad'\n    timeout = -3\n    def retrieve(self, request):\n        return []\n"
                                         "def pytest_retrieval_bench_arms(config):\n    return [Bad()]\n",
                                         "from pytest_retrieval_bench import arm\n@arm('bad', timeout='soon')\ndef bad(bench_request):\n    return []\n"])
def test_a_bad_own_timeout_names_the_arm(pytester: pytest.Pytester, declaration: str) -> None:
    shutil.copytree(RELEASE, pytester.path / "release")
    pytester.makeconftest(declaration)
    result = pytester.runpytest_subprocess("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl",
                                           "--bench-corpus=release/corpus/synthetic_v1", "--bench-arms=bad", "-p", "no:cacheprovider", timeout=120)
    assert result.ret == 4  # a usage error (for the decorator: pytest's conftest error, with the conftest's line)
    assert "arm 'bad': timeout must be a positive number of seconds" in result.stdout.str() + result.stderr.str()
    assert "Traceback" not in result.stderr.str()
