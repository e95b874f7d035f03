"""docs/ci.md's shard-and-merge jobs, run as written: the command lines are read out of the document
(so a drift of the document fails here), the shards run by pytest on the bundled bench with a user
fixture arm, and the merge job's script through a shell, glob and all, with main's merge where the
job's own download step puts it (a path the job reads and nothing fetches fails here)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ci_doc_helpers import github_run, gitlab_script, yaml_block
from report_helpers import zero_wall

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / "testdata" / "release"

FIXTURE_ARM = '''
import pytest
import pytest_retrieval_bench
from pytest_retrieval_bench.arms.lexical import GrepArm


@pytest_retrieval_bench.arm("fx")
@pytest.mark.parametrize("cut", [1, 2])
def fx(bench_request, cut):
    return GrepArm().retrieve(bench_request).ranking[cut:]
'''
ARMS = ("grep", "bm25:all", "fx[1]", "fx[2]")


def _commands(block: str) -> list[str]:
    """The `pytest` and `retrieval-bench` lines of a job, each folded as YAML folds it (a `run: >` or a
    plain multi-line scalar: its more indented lines joined with spaces)."""
    lines = block.splitlines()
    commands: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        indent = len(line) - len(line.lstrip())
        text = line.strip().removeprefix("- ")
        index += 1
        if text == "run: >":
            parts: list[str] = []
        elif text.startswith(("pytest ", "retrieval-bench ")):
            parts = [text]
        else:
            continue
        while index < len(lines) and lines[index].strip() and len(lines[index]) - len(lines[index].lstrip()) > indent:
            parts.append(lines[index].strip())
            index += 1
        command = " ".join(parts)
        if command.startswith(("pytest ", "retrieval-bench ")):
            commands.append(command)
    return commands


def _github_matrix(block: str, command: str) -> list[str]:
    shards = [int(value) for value in re.search(r"shard: \[([\d, ]+)\]", block).group(1).split(",")]
    return [command.replace("${{ matrix.shard }}", str(shard)) for shard in shards]


def _gitlab_parallel(block: str, command: str) -> list[str]:
    total = int(re.search(r"parallel: (\d+)", block).group(1))
    return [command.replace("${CI_NODE_INDEX}", str(index)).replace("${CI_NODE_TOTAL}", str(total)) for index in range(1, total + 1)]


def _github_merge(block: str) -> tuple[str, str]:
    """The merge step's `run: |` script, and the folder the job's download of main's merge writes."""
    merge_job = block[block.index("\n  merge:\n"):]
    download = re.search(r"uses: dawidd6/action-download-artifact@\S+\n\s+with: \{[^}]*path: ([^,}\s]+)", merge_job)
    assert download, "the merge job downloads no baseline"
    return github_run(block, "Merge the shards"), download.group(1)


def _gitlab_merge(block: str) -> tuple[str, str]:
    """The merge job's script (its install and its network download left out), and the folder that download unpacks to."""
    items = gitlab_script(block[block.index("\nmerge:\n"):])
    download = next((item for item in items if item.startswith("curl ")), "")
    unpacked = re.search(r"unzip \S+ \S+ -d (\S+)", download)
    assert unpacked, "the merge job downloads no baseline"
    return "\n".join(item for item in items if not item.startswith(("pip install", "curl "))) + "\n", unpacked.group(1)


JOBS = {"GitHub Actions matrix": ("### GitHub Actions matrix", _github_matrix, _github_merge),
        "GitLab CI parallel": ("### GitLab CI `parallel:`", _gitlab_parallel, _gitlab_merge)}


@pytest.mark.parametrize("job", sorted(JOBS))
def test_the_documented_shard_and_merge_jobs_work_with_a_fixture_arm(pytester: pytest.Pytester, job: str) -> None:
    heading, expand, merge_script = JOBS[job]
    block = yaml_block(heading)
    shard_lines = [command for command in _commands(block) if command.startswith("pytest ")]
    merge, downloaded_to = merge_script(block)
    assert len(shard_lines) == 1 and "retrieval-bench summarize " in merge, merge
    baselines = re.findall(r"--baseline (\S+)", merge)
    # the baseline the merge reads is the one its own job downloads (a job reads no file nothing fetched)
    assert baselines and all(Path(path).parts[0] == downloaded_to for path in baselines), (baselines, downloaded_to)
    # the bench the jobs name: benchmark/samples.jsonl and corpus/, here the bundled one, with a user fixture arm
    (pytester.path / "benchmark").mkdir()
    shutil.copy(RELEASE / "benchmark" / "synthetic_v1" / "samples.jsonl", pytester.path / "benchmark" / "samples.jsonl")
    shutil.copytree(RELEASE / "corpus" / "synthetic_v1", pytester.path / "corpus")
    pytester.makeconftest(FIXTURE_ARM)
    pytester.makeini("[pytest]\nbench_arms =\n    grep\n    bm25:all\n    fx\n")
    baseline = pytester.path / baselines[0]
    baseline.parent.mkdir()
    main = pytester.runpytest_subprocess("--bench-samples=benchmark/samples.jsonl", "--bench-corpus=corpus", f"--bench-report={baseline}",
                                         "-p", "no:cacheprovider", timeout=300)
    assert main.ret == 0, main.stdout.str()

    shards = expand(block, shard_lines[0])
    assert len(shards) > 1 and not any("$" in line for line in shards), shards
    for line in shards:
        result = pytester.runpytest_subprocess(*shlex.split(line)[1:], timeout=300)
        assert result.ret == 0, line + "\n" + result.stdout.str() + result.stderr.str()

    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    merged = subprocess.run(["bash", "-e", "-c", merge], cwd=pytester.path, env=env, capture_output=True, text=True, timeout=300)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    merge_args = shlex.split(merge.replace('"${gate[@]}"', "").replace("$GATE", ""))
    output = pytester.path / merge_args[merge_args.index("--output") + 1]
    markdown = pytester.path / merge_args[merge_args.index("--markdown") + 1]
    report, single = json.loads(output.read_text()), json.loads(baseline.read_text())
    assert report["partial"] is None and set(report["summary"]["all"]) == set(ARMS)
    assert zero_wall(report["details"]) == zero_wall(single["details"]) and report["summary"] == single["summary"]
    gated = {rule["arm"] for rule in report["baseline"]["rules"] if rule["verdict"] == "pass"}
    assert gated == set(ARMS) and not report["baseline"]["failed"]
    assert "fx[1]" in markdown.read_text()
