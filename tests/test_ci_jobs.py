"""docs/ci.md's GitHub Actions and GitLab CI bench jobs and its local check, run as written over two
weeks: week one benches main and a pull request against it; in week two the team adds an arm of its
own (a conftest arm selected by `bench_arms` in the ini file), which runs new and unpaired in the
next pull request and is paired once main's report holds it; locally the new arm is added to the
baseline with `--bench-update-baseline`, keeping every other arm.

The scripts are read out of the document, so a drift of the document fails here. What a CI service
does between steps (check out, download the main branch's artifact) is done by the test: a fresh
job directory per job and the previous main report copied to `baseline/report.json`. GitLab's
`curl` artifact step is the one script line not run (it would reach the network).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ci_doc_helpers import CI_DOC, github_run, gitlab_script, yaml_block

ROOT = Path(__file__).resolve().parent.parent

MINE = '''
from pytest_retrieval_bench.arms.lexical import BM25Arm


class Mine:
    """The team's own arm: bm25 over the bench tokens, its first answer moved last."""

    name = "mine"
    uses_index = "lexical"

    def retrieve(self, request):
        ranking = list(BM25Arm("all").retrieve(request).ranking)
        return ranking[1:] + ranking[:1]


def pytest_retrieval_bench_arms(config):
    return [Mine()]
'''
WEEK_TWO_INI = "[pytest]\nbench_arms =\n    lexical\n    mine\n"


def _local_commands() -> str:
    text = CI_DOC.read_text()
    start = text.index("\n## Running the same check locally\n")
    match = re.search(r"```\n(.*?)```", text[start:], re.S)
    assert match
    return match.group(1)


def _job_directory(base: Path, name: str, week_two: bool) -> Path:
    """A fresh checkout: the bundled bench, and in week two the team's arm and ini file."""
    job = base / name
    job.mkdir()
    shutil.copytree(ROOT / "testdata", job / "testdata")
    if week_two:
        (job / "conftest.py").write_text(MINE)
        (job / "pytest.ini").write_text(WEEK_TWO_INI)
    return job


def _bash(job: Path, script: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The script in a job directory; its pytest runs leave hypothesis's plugin out (a test-only
    install, it imports all of hypothesis at each session's end: a large share of a small run's time)."""
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                   "PYTEST_ADDOPTS": "-p no:hypothesispytest", **env}
    return subprocess.run(["bash", "-e", "-c", script], cwd=job, env=environment, capture_output=True, text=True, timeout=600)


def _arms_of(report_path: Path) -> set[str]:
    report = json.loads(report_path.read_text())
    return {arm for entry in report["details"] for arm in entry["arms"]}


def _with_baseline(job: Path, main_report: Path) -> None:
    (job / "baseline").mkdir()
    shutil.copy(main_report, job / "baseline" / "report.json")


def test_the_github_actions_job_over_two_weeks_with_an_arm_added(tmp_path: Path) -> None:
    block = yaml_block("## GitHub Actions")
    on_push, on_pull_request = github_run(block, "Bench main"), github_run(block, "Bench the pull request against main")
    main1 = _job_directory(tmp_path, "main-week1", week_two=False)
    assert _bash(main1, on_push).returncode == 0
    first_pr = _job_directory(tmp_path, "pr-week1", week_two=False)
    _with_baseline(first_pr, main1 / "report.json")
    result = _bash(first_pr, on_pull_request)
    assert result.returncode == 0, result.stdout[-3000:]
    gated = json.loads((first_pr / "report.json").read_text())["baseline"]
    assert gated["rules"] and all(rule["verdict"] == "pass" for rule in gated["rules"]) and not gated["failed"]
    assert "## " in (first_pr / "summary.md").read_text()  # the job summary the next step appends

    second_pr = _job_directory(tmp_path, "pr-week2", week_two=True)
    _with_baseline(second_pr, main1 / "report.json")
    result = _bash(second_pr, on_pull_request)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "new arm(s), no baseline records, unpaired: mine" in result.stdout
    report = json.loads((second_pr / "report.json").read_text())
    assert report["baseline"]["new_arms"] == ["mine"] and "mine" not in {rule["arm"] for rule in report["baseline"]["rules"]}

    main2 = _job_directory(tmp_path, "main-week2", week_two=True)
    assert _bash(main2, on_push).returncode == 0
    assert "mine" in _arms_of(main2 / "report.json")
    third_pr = _job_directory(tmp_path, "pr-week3", week_two=True)
    _with_baseline(third_pr, main2 / "report.json")
    result = _bash(third_pr, on_pull_request)
    assert result.returncode == 0, result.stdout[-3000:]
    rules = json.loads((third_pr / "report.json").read_text())["baseline"]["rules"]
    assert "mine" in {rule["arm"] for rule in rules}  # paired and gated once main's report holds it


def test_the_gitlab_job_over_two_weeks_with_an_arm_added(tmp_path: Path) -> None:
    items = gitlab_script(yaml_block("## GitLab CI"))
    run = [item for item in items if not item.startswith(("pip install", "curl "))]  # the install is the test's; curl needs the network
    assert any(item.startswith("pytest ") for item in run) and any(item.startswith("if ") for item in run), items
    script = "\n".join(run) + "\n"
    main1 = _job_directory(tmp_path, "main-week1", week_two=False)
    assert _bash(main1, script, CI_PIPELINE_SOURCE="push", CI_COMMIT_BRANCH="main", CI_DEFAULT_BRANCH="main").returncode == 0
    assert (main1 / "junit.xml").is_file() and "baseline" not in json.loads((main1 / "report.json").read_text())

    request = _job_directory(tmp_path, "mr-week2", week_two=True)
    _with_baseline(request, main1 / "report.json")
    result = _bash(request, script, CI_PIPELINE_SOURCE="merge_request_event")
    assert result.returncode == 0, result.stdout[-3000:]
    report = json.loads((request / "report.json").read_text())
    assert report["baseline"]["new_arms"] == ["mine"] and not report["baseline"]["failed"]
    assert 'name="bench.outcome"' in (request / "junit.xml").read_text()


def test_the_local_check_adds_next_weeks_arm_to_the_baseline(tmp_path: Path) -> None:
    commands = _local_commands()
    assert "--bench-update-baseline" in commands
    job = _job_directory(tmp_path, "local", week_two=False)
    runs = [part.strip() for part in re.split(r"^#[^\n]*\n", commands, flags=re.M) if part.strip()]
    assert len(runs) == 3, runs
    assert _bash(job, runs[0]).returncode == 0
    before = json.loads((job / "main.json").read_text())
    result = _bash(job, runs[1])
    assert result.returncode == 0, result.stdout[-3000:]
    (job / "mine").mkdir()  # next week: the team's arm, in a directory of its own as docs/ci.md has it
    (job / "mine" / "conftest.py").write_text(MINE)
    result = _bash(job, runs[2])
    assert result.returncode == 0, result.stdout[-3000:]
    assert re.search(r"baseline updated: \S*main\.json \(added mine; kept ", result.stdout), result.stdout[-3000:]
    after = json.loads((job / "main.json").read_text())
    assert _arms_of(job / "main.json") == _arms_of(job / "pr.json") | {"mine"}
    kept = {entry["id"]: entry["arms"] for entry in before["details"]}
    for entry in after["details"]:  # the kept arms' records are the baseline's own
        assert {arm: record for arm, record in entry["arms"].items() if arm != "mine"} == kept[entry["id"]]
