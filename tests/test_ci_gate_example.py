"""docs/ci.md's worked example of the two gate forms: its commands run as written, its numbers are the run's."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "ci.md").read_text()
GATE_LINE = re.compile(r"gate (?P<rule>\S+) arm (?P<arm>\S+) \[(?P<form>[^:\]]+): (?P<bound>lower|upper) bound >= (?P<threshold>\S+)\]: "
                       r"mean (?P<mean>\S+) \[(?P<low>\S+), (?P<high>\S+)\] \(n=(?P<n>\d+)(?P<ns>, not significant)?\) -> (?P<verdict>PASS|FAIL)")
FORM_WORDS = {"noninferior": "non-inferiority", "noregression": "no confident regression"}


def _block(name: str) -> str:
    """The fenced block after the doc's `<!-- worked-example: NAME -->` marker."""
    after = DOC.split(f"<!-- worked-example: {name} -->\n", 1)[1]
    assert after.startswith("```")
    return after.split("\n", 1)[1].split("\n```", 1)[0]


def _commands() -> list[list[str]]:
    joined = _block("commands").replace("\\\n", " ")
    commands = [shlex.split(line) for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert [command[0] for command in commands] == ["pytest", "pytest"]
    return [command[1:] for command in commands]


def _assert_lines_in_order(expected: list[str], printed: list[str]) -> None:
    """Each doc line in the printed output, in order; `...` skips lines, `.../` stands for a directory."""
    position = 0
    for line in expected:
        if line == "...":
            continue
        pattern = re.compile(re.escape(line).replace(re.escape(".../"), r"\S*/"))
        found = next((i for i in range(position, len(printed)) if pattern.fullmatch(printed[i].rstrip())), None)
        assert found is not None, f"docs/ci.md prints {line!r}, the run did not (after line {position}):\n" + "\n".join(printed)
        position = found + 1


@pytest.fixture
def checkout(pytester: pytest.Pytester) -> pytest.Pytester:
    """A directory laid out like the checkout the doc's commands run in: `testdata/` and `mine/`."""
    (pytester.path / "testdata").symlink_to(ROOT / "testdata", target_is_directory=True)
    (pytester.path / "mine").mkdir()
    return pytester


def test_the_worked_example_of_both_forms_prints_what_the_doc_says(checkout: pytest.Pytester):
    main, pull_request = _commands()
    (checkout.path / "mine" / "conftest.py").write_text(_block("main conftest"))
    assert checkout.runpytest_subprocess(*main).ret == 0
    (checkout.path / "mine" / "conftest.py").write_text(_block("pull request conftest"))
    result = checkout.runpytest_subprocess(*pull_request)
    assert result.ret == 1  # "The run exits 1, because one rule failed."
    expected = _block("output").splitlines()
    _assert_lines_in_order(expected, result.stdout.lines)

    # the doc's numbers, parsed from its printed lines, are the report's own
    rules = json.loads((checkout.path / "pr.json").read_text())["baseline"]["rules"]
    documented = [GATE_LINE.search(line) for line in expected if GATE_LINE.search(line)]
    assert [m["rule"] for m in documented] == [rule["rule"] for rule in rules] and len(rules) == 2
    for match, rule in zip(documented, rules):
        assert match["form"] == FORM_WORDS[rule["form"]] and match["bound"] == ("lower" if rule["form"] == "noninferior" else "upper")
        assert (int(match["n"]), match["mean"], match["low"], match["high"]) == (
            rule["n"], f"{rule['mean_difference']:+.3f}", f"{rule['bootstrap95'][0]:+.3f}", f"{rule['bootstrap95'][1]:+.3f}")
        assert match["verdict"] == rule["verdict"].upper() and float(match["threshold"]) == rule["threshold"]
        assert bool(match["ns"]) == (not rule["significant"])
    inferior, regression = rules
    assert (inferior["verdict"], regression["verdict"]) == ("fail", "pass")  # the example shows the two readings disagree

    # and so are the numbers its prose repeats
    prose = " ".join(DOC.split(_block("output"), 1)[1].split("\n\n")[1].split())
    low, high = (f"{bound:+.3f}" for bound in inferior["bootstrap95"])
    for words in (f"n = {inferior['n']}", f"by {inferior['mean_difference']:+.3f} on average", f"[{low}, {high}]",
                  f"lower bound {low} is below", f"about {inferior['positives_needed']} positive samples", f"upper bound {high} is above"):
        assert words in prose, words


def test_the_worked_example_next_week_runs_the_new_arm_unpaired(checkout: pytest.Pytester):
    main, pull_request = _commands()
    (checkout.path / "mine" / "conftest.py").write_text(_block("main conftest"))
    assert checkout.runpytest_subprocess(*main).ret == 0
    paragraph = " ".join(DOC.split("Next week,", 1)[1].split("\n\n")[0].split())
    arms = re.search(r"`(--bench-arms=\S+)`", paragraph)[1]
    printed = re.search(r"`(new arm\(s\)[^`]*)`", paragraph)[1]
    result = checkout.runpytest_subprocess(*[arms if word.startswith("--bench-arms=") else word for word in pull_request])
    assert result.ret == 0, result.stderr.str()  # the main conftest's arm is unchanged: both rules pass
    _assert_lines_in_order([f"  {printed}"], result.stdout.lines)
    section = json.loads((checkout.path / "pr.json").read_text())["baseline"]
    assert section["new_arms"] == ["grep"] and {rule["arm"] for rule in section["rules"]} == {"mine"}
