"""Which arms a merge accepts: those its reports record under one identity, and `--arm NAME` (a fixture
arm's name selecting all its variants) for the others; reports that disagree on an arm are refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from report_helpers import without_provenance

from pytest_retrieval_bench.cli import main as cli_main

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"

FIXTURE_ARM = '''
import pytest
import pytest_retrieval_bench
from pytest_retrieval_bench.arms.lexical import GrepArm


@pytest_retrieval_bench.arm("fx")
@pytest.mark.parametrize("cut", [1, 2])
def fx(bench_request, cut):
    return GrepArm().retrieve(bench_request).ranking[cut:]
'''
VARIANTS = ("fx[1]", "fx[2]")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """main.json and pr.json: the same run of grep and a parametrized conftest fixture arm."""
    tmp = tmp_path_factory.mktemp("fixture-arm")
    (tmp / "conftest.py").write_text(FIXTURE_ARM)
    for name in ("main.json", "pr.json"):
        result = subprocess.run([sys.executable, "-m", "pytest", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep,fx",
                                 f"--bench-report={tmp / name}", "-p", "no:cacheprovider", "-q", f"--rootdir={tmp}"],
                                cwd=tmp, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return tmp / "main.json", tmp / "pr.json"


def _edited(source: Path, target: Path, edit) -> Path:
    report = json.loads(source.read_text())
    edit(report["registration"]["arm_identities"])
    target.write_text(json.dumps(report))
    return target


def test_arms_the_reports_record_need_no_arm_option(reports, tmp_path):
    """`retrieval-bench summarize pr.json --baseline main.json -o d.json`, with no `--arm` for `fx[1]`."""
    main, pr = reports
    assert cli_main(["summarize", str(pr), "--baseline", str(main), "-o", str(tmp_path / "d.json")]) == 0
    merged = json.loads((tmp_path / "d.json").read_text())
    assert set(merged["summary"]["all"]) == {"grep", *VARIANTS}
    assert set(merged["baseline"]["arms"]) == {"grep", *VARIANTS}
    # pytest --bench-summarize, in a directory whose configuration defines no fx, merges the same
    result = subprocess.run([sys.executable, "-m", "pytest", f"--bench-summarize={pr}", f"--bench-baseline={main}", f"--bench-report={tmp_path / 'p.json'}",
                             "-p", "no:cacheprovider", f"--rootdir={tmp_path}"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert without_provenance((tmp_path / "p.json").read_bytes()) == without_provenance((tmp_path / "d.json").read_bytes())  # each records where it ran


def test_arm_option_names_a_fixture_arm_with_all_its_variants(reports, tmp_path, capsys):
    """Reports that do not record the variants' identities need them declared; `--arm fx` declares them all."""
    _, pr = reports
    unrecorded = _edited(pr, tmp_path / "unrecorded.json", lambda identities: [identities.pop(arm) for arm in VARIANTS])
    out = str(tmp_path / "d.json")
    assert cli_main(["summarize", str(unrecorded), "-o", out]) == 2
    error = capsys.readouterr().err
    assert f"{unrecorded}: arm 'fx[1]' is not one this bench defines" in error and "does not record its identity" in error and "--arm fx" in error
    assert cli_main(["summarize", str(unrecorded), "-o", out, "--arm", "fx[1]"]) == 2
    assert "arm 'fx[2]'" in capsys.readouterr().err
    assert cli_main(["summarize", str(unrecorded), "-o", out, "--arm", "fx"]) == 0
    assert set(json.loads(Path(out).read_text())["summary"]["all"]) == {"grep", *VARIANTS}
    assert cli_main(["summarize", str(unrecorded), "-o", str(tmp_path / "each.json"), "--arm", "fx[1]", "--arm", "fx[2]"]) == 0
    assert (tmp_path / "each.json").read_bytes() == Path(out).read_bytes()


def test_reports_that_disagree_on_an_arms_identity_are_refused(reports, tmp_path, capsys):
    main, pr = reports
    changed = _edited(pr, tmp_path / "changed.json", lambda identities: identities.update({"fx[1]": "fixture:conftest.fx:changed[1]"}))
    out = str(tmp_path / "d.json")
    assert cli_main(["summarize", str(main), str(changed), "-o", out]) == 2
    error = capsys.readouterr().err
    assert "arm 'fx[1]'" in error and str(main) in error and str(changed) in error and "disagree on its version" in error
    # declared, the later report's version replaces the earlier one's, as for any arm
    assert cli_main(["summarize", str(main), str(changed), "-o", out, "--arm", "fx"]) == 0
    assert json.loads(Path(out).read_text())["registration"]["arm_identities"]["fx[1]"] == "fixture:conftest.fx:changed[1]"
