"""An arm author's everyday loop: an arm's exception is debugged as Python is, item lines say what
they are, misses are counted, the table follows the limit, and outputs never surprise.

Every run is a separate pytest process (pytester) on the pytest this project installs, over a copy
of the bundled bench inside the test's own directory.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / "testdata" / "release"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
ROWS = [json.loads(line) for line in (RELEASE / "benchmark" / "synthetic_v1" / "samples.jsonl").read_text().splitlines() if line.strip()]
FIRST = sorted(row["id"] for row in ROWS)[0]
FIRST_ROW = next(row for row in ROWS if row["id"] == FIRST)

RAISING_ARMS = """
import pytest
import pytest_retrieval_bench


def deep_helper(count):
    secret_number = count * 7
    raise RuntimeError("boom")


class Flaky:
    name = "flaky"

    def retrieve(self, request):
        arm_local = "visible-with-showlocals"
        return deep_helper(3)


@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return [Flaky()]


@pytest_retrieval_bench.arm("fixturearm")
def fixturearm(bench_request):
    raise ValueError("fixture arm broke")
"""

# pdb's own interaction sets up the stack (its arguments and what it prints differ between Pythons);
# where it would read commands, this debugger names the frame it stopped in and continues.
RECORDING_PDB = """
import pdb


class Recorder(pdb.Pdb):
    def cmdloop(self, intro=None):
        print(f"STOPPED-IN {self.curframe.f_code.co_name} {self.curframe.f_code.co_filename}")
"""


@pytest.fixture
def bench(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(RELEASE, pytester.path / "release")
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "-p", "no:cacheprovider", *args, timeout=300)


def item(arm: str) -> str:
    return f"{SAMPLES}::{FIRST}[{arm}]"


@pytest.mark.parametrize("arm, function, line", [("flaky", "deep_helper", 'raise RuntimeError("boom")'),
                                                 ("fixturearm", "fixturearm", 'raise ValueError("fixture arm broke")')])
def test_an_arm_exception_is_shown_from_the_arms_frame(bench: pytest.Pytester, arm: str, function: str, line: str) -> None:
    bench.makeconftest(RAISING_ARMS)
    result = run(bench, item(arm), f"--bench-arms={arm}", "--tb=long")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert line in text and "conftest.py" in text
    assert "pytest_retrieval_bench/" not in text.split("= FAILURES =")[1].split("short test summary")[0]  # cut at the arm's code
    assert f"def {function}(" in text


def test_full_trace_keeps_the_plugin_frames_and_showlocals_shows_the_arms_locals(bench: pytest.Pytester) -> None:
    bench.makeconftest(RAISING_ARMS)
    full = run(bench, item("flaky"), "--bench-arms=flaky", "--full-trace")
    assert "bench/run.py" in full.stdout.str() and 'raise RuntimeError("boom")' in full.stdout.str()
    local = run(bench, item("flaky"), "--bench-arms=flaky", "--showlocals")
    assert re.search(r"arm_local\s+= 'visible-with-showlocals'", local.stdout.str())
    assert re.search(r"secret_number\s+= 21", local.stdout.str())


def test_the_short_summary_carries_the_arms_exception(bench: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    bench.makeconftest(RAISING_ARMS)
    monkeypatch.setenv("COLUMNS", "240")  # pytest cuts the message to the terminal's width
    result = run(bench, item("flaky"), "--bench-arms=flaky", "-rA")
    assert f"FAILED {item('flaky')} - RuntimeError: boom" in result.stdout.lines
    default = run(bench, item("flaky"), "--bench-arms=flaky")  # pytest's default -rfE
    assert f"FAILED {item('flaky')} - RuntimeError: boom" in default.stdout.lines


def test_pdb_stops_in_the_arms_frame(bench: pytest.Pytester) -> None:
    bench.makeconftest(RAISING_ARMS)
    bench.makepyfile(recording_pdb=RECORDING_PDB)
    bench.syspathinsert()
    result = run(bench, item("flaky"), "--bench-arms=flaky", "--pdb", "--pdbcls=recording_pdb:Recorder", "-s")
    stops = [line for line in result.stdout.lines if line.startswith("STOPPED-IN ")]
    assert len(stops) == 1 and stops[0].split()[1] == "deep_helper" and stops[0].endswith("conftest.py"), result.stdout.str()


def test_an_arm_failure_still_scores_zero_and_is_no_abstention(bench: pytest.Pytester) -> None:
    bench.makeconftest(RAISING_ARMS)
    run(bench, item("flaky"), "--bench-arms=flaky", "--bench-report=out.json").assert_outcomes(failed=1)
    record = next(entry for entry in json.loads((bench.path / "out.partial.json").read_text() if (bench.path / "out.partial.json").exists()
                                                else (bench.path / "out.json").read_text())["details"] if entry["id"] == FIRST)["arms"]["flaky"]
    assert record["error"] == "RuntimeError: boom" and record["abstained"] is False
    assert record["metrics"] and set(record["metrics"].values()) == {0.0}


def test_an_arm_calling_sys_exit_fails_its_item_without_an_internal_error(bench: pytest.Pytester) -> None:
    bench.makeconftest("""
import sys
import pytest

class Quitter:
    name = "quitter"
    def retrieve(self, request):
        sys.exit(3)

@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return [Quitter()]
""")
    result = run(bench, item("quitter"), f"{SAMPLES}::{FIRST}[grep]", "--bench-arms=quitter,grep")
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(failed=1, passed=1)
    assert "SystemExit" in result.stdout.str()


def test_verbose_lines_name_the_repository_task_and_outcome(bench: pytest.Pytester) -> None:
    result = run(bench, item("grep"), "-v")
    word = "HIT@20" if "HIT" in result.stdout.str() else "MISS@20"
    line = f"{item('grep')} {word} ({FIRST_ROW['repo']}, {FIRST_ROW['task_type']}) [100%]"
    assert line in result.stdout.lines, result.stdout.str()


def test_misses_are_counted_in_the_final_line_and_in_junit(bench: pytest.Pytester) -> None:
    result = run(bench, "--junitxml=junit.xml")
    outcomes = result.parseoutcomes()
    suite = ET.parse(bench.path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    words = [prop.get("value") for case in suite.iter("testcase") for prop in case.iter("property") if prop.get("name") == "bench.outcome"]
    assert outcomes.get("missed", 0) == words.count("MISS") > 0  # the built-in arms miss some of the bundled bench
    assert outcomes["passed"] == len(words) - words.count("MISS")
    assert result.ret == 0  # a miss is no failure
    properties = suite.find("properties")
    assert properties is not None
    totals = {prop.get("name"): prop.get("value") for prop in properties}
    assert totals["bench.missed"] == str(words.count("MISS")) and totals["bench.hit"] == str(words.count("HIT"))


@pytest.mark.parametrize("limit, hit, recall", [(20, "hit@20", "recall@10"), (5, "hit@5", "recall@5"), (10, "hit@10", "recall@10")])
def test_the_terminal_table_follows_the_limit(bench: pytest.Pytester, limit: int, hit: str, recall: str) -> None:
    result = run(bench, f"--bench-limit={limit}", "--bench-arms=grep,bm25:all")
    lines = result.stdout.lines
    header = lines[lines.index("retrieval-bench summary (group all)") + 1].split()
    assert header[3] == hit and header[6] == recall, header
    rows = [line.split() for line in lines[lines.index("retrieval-bench summary (group all)") + 2:][:2]]
    columns = list(zip(*[re.findall(r"\[[^\]]*\]|\S+", " ".join(row)) for row in rows]))
    assert all(any(cell != "-" for cell in column) for column in columns), rows


def test_below_five_the_table_has_no_column_without_numbers(bench: pytest.Pytester) -> None:
    lines = run(bench, "--bench-limit=3", "--bench-arms=grep").stdout.lines
    header = lines[lines.index("retrieval-bench summary (group all)") + 1].split()
    row = lines[lines.index("retrieval-bench summary (group all)") + 2].split()
    assert not any(name.startswith(("hit@", "recall@")) for name in header) and "-" not in row


def test_a_partial_run_never_replaces_a_complete_report(bench: pytest.Pytester) -> None:
    bench.makeini(f"[pytest]\nbench_samples = {SAMPLES}\nbench_corpus = {CORPUS}\nbench_report = out.json\n")
    bench.runpytest_subprocess("-p", "no:cacheprovider", "--bench-arms=grep", timeout=300)
    complete = (bench.path / "out.json").read_bytes()
    assert json.loads(complete)["partial"] is None
    debug = bench.runpytest_subprocess("-p", "no:cacheprovider", "--bench-arms=grep", "-k", FIRST, timeout=300)
    assert debug.ret == 0
    assert (bench.path / "out.json").read_bytes() == complete
    beside = json.loads((bench.path / "out.partial.json").read_text())
    assert beside["partial"]["not_run"] and [entry["id"] for entry in beside["details"] if entry["arms"]] == [FIRST]
    debug.stdout.fnmatch_lines(["*a partial run does not replace the complete report *out.json: this run's report is *out.partial.json",
                                "report written to *out.partial.json"])
    again = bench.runpytest_subprocess("-p", "no:cacheprovider", "--bench-arms=grep", "-k", FIRST, timeout=300)  # partial over partial
    assert again.ret == 0 and (bench.path / "out.json").read_bytes() == complete


def test_partial_is_said_only_when_a_report_is_written(bench: pytest.Pytester) -> None:
    quiet = run(bench, "--bench-arms=grep", "-k", FIRST)
    assert "PARTIAL report" not in quiet.stdout.str()
    written = run(bench, "--bench-arms=grep", "-k", FIRST, "--bench-report=some.json")
    assert "PARTIAL report" in written.stdout.str()


def _readme_commands() -> list[list[str]]:
    """The README's main command and its archive command, as a user pastes them."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## The two commands"):]
    blocks = re.findall(r"```\n(.*?)```", section, flags=re.S)
    commands = []
    for block in blocks[:2]:
        joined = block.replace("\\\n", " ")
        commands += [shlex.split(line) for line in joined.splitlines() if line.strip().startswith("pytest --bench-samples=testdata/")]
    return commands


def test_the_readme_commands_run_in_sequence(pytester: pytest.Pytester) -> None:
    shutil.copytree(ROOT / "testdata", pytester.path / "testdata")
    commands = _readme_commands()
    assert len(commands) == 2 and any(".tar.zst" in " ".join(command) for command in commands), commands
    for command in commands:
        result = pytester.runpytest_subprocess(*command[1:], "-p", "no:cacheprovider", timeout=300)
        assert result.ret == 0, result.stdout.str()[-2000:]


def test_a_differing_registration_names_both_ways_out_in_one_line(bench: pytest.Pytester) -> None:
    assert run(bench, "--bench-arms=grep", "--bench-report=out.json").ret == 0
    result = run(bench, "--bench-arms=grep,bm25:all", "--bench-report=out.json", "-k", "gin")  # a part: a whole run replaces it
    assert result.ret == 4
    line = next(line for line in result.stderr.lines if "registration differs" in line)
    assert "another --bench-report" in line and "--bench-replace-registration" in line


def test_one_item_per_snapshot_prints_no_empty_percentage_line(bench: pytest.Pytester) -> None:
    """A snapshot line that reaches the terminal's edge after one item is ended by pytest's own
    percentage; the next snapshot's line must start there, not after an empty `[ 50%]` line."""
    firsts = {}
    for row in sorted(ROWS, key=lambda row: row["id"]):
        firsts.setdefault(row["repo"], row["id"])
    result = run(bench, "--bench-arms=grep", "-k", " or ".join(firsts.values()))
    lines = [line for line in result.stdout.lines if re.search(r"\[\s*\d+%\]$", line)]
    assert len(lines) == len(firsts), result.stdout.str()
    assert not any(re.fullmatch(r"\s*\[\s*\d+%\]", line) for line in lines), lines
    assert all(" snapshot " in line for line in lines)
