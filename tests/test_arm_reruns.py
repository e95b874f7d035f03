"""Rerunning after editing an arm: a run that replaces the whole report replaces its registration
and says what changed, a run of part of the bench is refused (its results would sit beside a report
of another registration), a run that ends partial puts the registration back; and a Python arm's
identity is the arm's, whichever other conftests the session loads."""

from __future__ import annotations

import json

import pytest

SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"

EDITED_ARM = """
import pytest_retrieval_bench


@pytest_retrieval_bench.arm("mine")
def mine(bench_request):
    {body}
"""

HOOK_ARM = """
import pytest


class PathWords:
    name = "pathwords"

    def retrieve(self, request):
        return [path for path in request.snapshot.paths() if "test" in path][:3]


@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return [PathWords()]
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-max-samples=2",
                                         "-p", "no:cacheprovider", *args, timeout=300)


def identity(path) -> str:
    return json.loads(path.read_text())["arm_identities"]["mine"]


def test_an_edited_arm_rerun_replaces_the_registration_of_a_whole_run_only(release_bench: pytest.Pytester) -> None:
    sidecar = release_bench.path / "out.json.registration.json"
    release_bench.makeconftest(EDITED_ARM.format(body="return []"))
    assert run(release_bench, "--bench-arms=mine", "--bench-report=out.json").ret == 0
    first = identity(sidecar)

    release_bench.makeconftest(EDITED_ARM.format(body="return list(bench_request.snapshot.paths())[:2]"))
    rerun = run(release_bench, "--bench-arms=mine", "--bench-report=out.json")
    assert rerun.ret == 0, rerun.stdout.str()[-2000:]
    second = identity(sidecar)
    assert second != first and json.loads((release_bench.path / "out.json").read_text())["registration"]["arm_identities"]["mine"] == second
    replaced = [line for line in rerun.stdout.lines if "registration replaced" in line]
    assert len(replaced) == 1 and f"arm_identities: mine {first} -> {second}" in replaced[0], rerun.stdout.str()[-2000:]

    kept = sidecar.read_bytes()
    release_bench.makeconftest(EDITED_ARM.format(body="return list(bench_request.snapshot.paths())[:3]"))
    part = run(release_bench, "--bench-arms=mine", "--bench-report=out.json", "-k", "pyquery")
    assert part.ret == pytest.ExitCode.USAGE_ERROR
    assert "selects part of the bench (-k)" in part.stderr.str() and f"mine {second} -> " in part.stderr.str()
    assert sidecar.read_bytes() == kept

    release_bench.makeconftest(EDITED_ARM.format(body="raise RuntimeError('edited badly')"))
    stopped = run(release_bench, "--bench-arms=mine", "--bench-report=out.json", "-x")
    assert stopped.ret == 1 and (release_bench.path / "out.partial.json").is_file()
    assert sidecar.read_bytes() == kept  # out.json is the second run's: so is its registration again
    stopped.stdout.fnmatch_lines(["*out.json.registration.json kept as it was: this run did not replace*out.json"])


def test_a_python_arms_identity_does_not_depend_on_the_other_conftests_loaded(release_bench: pytest.Pytester) -> None:
    release_bench.makeconftest(HOOK_ARM)
    release_bench.mkdir("other").joinpath("conftest.py").write_text("LOADED = True\n")
    assert run(release_bench, "--bench-arms=pathwords", "--bench-report=alone.json").ret == 0
    assert run(release_bench, "other", "--bench-arms=pathwords", "--bench-report=beside.json").ret == 0
    alone, beside = (json.loads((release_bench.path / name).read_text())["registration"]["arm_identities"]["pathwords"]
                     for name in ("alone.json", "beside.json"))
    assert alone == beside and alone.startswith("python:conftest.PathWords:") and len(alone.rsplit(":", 1)[1]) == 16
    merged = release_bench.runpytest_subprocess("--bench-summarize=alone.json", "--bench-summarize=beside.json", "--bench-report=merged.json",
                                                "-p", "no:cacheprovider", timeout=300)
    assert merged.ret == 0, merged.stdout.str()[-2000:] + merged.stderr.str()[-2000:]
