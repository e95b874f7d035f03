"""Gating a ranking change: rule grammar, verdicts from the interval's bound, regressions, updates."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from report_helpers import assert_outcomes

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.gate import GateRule, parse_rule, sample_change

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"

# A conftest arm "mine": grep with its ranking changed by MODE (env var), to make a change on purpose.
CONFTEST = '''
import os
from pytest_retrieval_bench import Answer
from pytest_retrieval_bench.arms.lexical import GrepArm


class Mine:
    name = "mine"

    def retrieve(self, request):
        ranking = GrepArm().retrieve(request).ranking
        mode = os.environ.get("MODE", "same")
        if mode == "worse":
            ranking = ranking[4:]
        elif mode == "better":
            gold = os.environ.get("GOLD_" + request.sample_id)
            ranking = ([gold] if gold else []) + [p for p in ranking if p != gold]
        elif mode == "noisy" and int(request.sample_id[-1], 16) % 5 == 0:
            ranking = ranking[1:]
        return Answer(ranking=ranking)


def pytest_retrieval_bench_arms(config):
    return [Mine()]
'''


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("recall@10>=-0.02", GateRule("recall@10>=-0.02", "recall@10", -0.02)),
        ("mrr@k>=-0.01:arm=mine", GateRule("mrr@k>=-0.01:arm=mine", "mrr@k", -0.01, arm="mine")),
        ("hit@10>=0:group=task:code2test", GateRule("hit@10>=0:group=task:code2test", "hit@10", 0.0, group="task:code2test")),
    ],
)
def test_rule_grammar(text, expected):
    rule = parse_rule(text)
    assert rule == expected


def test_group_with_a_colon_is_kept_whole():
    assert parse_rule("hit@10>=0:group=task:code2test").group == "task:code2test"


@pytest.mark.parametrize("text", ["recall@10>-0.02", "recall>=0", "recall@10>=x", "recall@10>=0:colour=red", "recall@10>=0:arm=a:arm=b", "recall@10>=0:arm=", "recall@10>=0x"])
def test_bad_rules_are_refused(text):
    with pytest.raises(BenchError, match="--bench-gate"):
        parse_rule(text)


@pytest.mark.parametrize(
    ("before", "after", "change"),
    [(2, None, "regressed"), (None, 3, "improved"), (2, 5, "regressed"), (5, 2, "improved"), (3, 3, "unchanged")],
)
def test_sample_change(before, after, change):
    assert sample_change({"rank_of_first_gold": before, "metrics": {"x": 1}}, {"rank_of_first_gold": after, "metrics": {"x": 1}})[0] == change


def _gold_env() -> dict[str, str]:
    from pytest_retrieval_bench.samples import load_samples

    return {f"GOLD_{s.id}": s.gold_files[0] for s in load_samples(SAMPLES).samples if s.gold_files}


def _run(pytester, monkeypatch, mode: str, *extra: str):
    monkeypatch.setenv("MODE", mode)
    for key, value in _gold_env().items():
        monkeypatch.setenv(key, value)
    return pytester.runpytest_subprocess(
        f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=mine", "-p", "no:cacheprovider", *extra)


@pytest.fixture(scope="module")
def baseline_written(tmp_path_factory) -> Path:
    """The unchanged arm's baseline, written once for the module by a run of its own (each test gets a copy)."""
    directory = tmp_path_factory.mktemp("baseline")
    (directory / "conftest.py").write_text(CONFTEST)
    path = directory / "baseline.json"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    result = subprocess.run([sys.executable, "-m", "pytest", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=mine",
                             "-p", "no:cacheprovider", "-p", "no:hypothesispytest", f"--bench-baseline={path}", "--bench-update-baseline"],
                            cwd=directory, env={**env, "MODE": "same"}, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and path.is_file(), result.stdout[-3000:] + result.stderr[-3000:]
    return path


@pytest.fixture
def baseline(pytester, baseline_written) -> Path:
    pytester.makeconftest(CONFTEST)
    path = pytester.path / "baseline.json"
    shutil.copyfile(baseline_written, path)
    return path


def _section(pytester) -> dict:
    return json.loads((pytester.path / "out.json").read_text())["baseline"]


def test_a_worse_change_fails_the_gate_and_lists_regressions(pytester, monkeypatch, baseline):
    result = _run(pytester, monkeypatch, "worse", f"--bench-baseline={baseline}", "--bench-gate=recall@10>=-0.02",
                  "--bench-report=out.json", "--bench-markdown=summary.md")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*gate recall@10>=-0.02 arm mine*-> FAIL*", "*REGRESSED * (acme/*): *", "*gate failed against*"])
    section = _section(pytester)
    assert section["failed"] and section["rules"][0]["bootstrap95"][0] < -0.02
    regressions = section["arms"]["mine"]["regressions"]
    assert regressions and section["arms"]["mine"]["regressed"] == len(regressions)
    assert all(r["change"] == "regressed" and r["repo"] for r in regressions)
    hit_to_miss = [r for r in regressions if r["rank"] is None]
    assert regressions[: len(hit_to_miss)] == hit_to_miss  # worst (a hit lost) first
    assert "FAILED" in (pytester.path / "summary.md").read_text()


def test_fail_regressed_fails_each_regressed_item(pytester, monkeypatch, baseline):
    result = _run(pytester, monkeypatch, "worse", f"--bench-baseline={baseline}", "--bench-fail-regressed", "--bench-report=out.json")
    regressed = _section(pytester)["arms"]["mine"]["regressed"]
    assert result.ret == 1
    assert_outcomes(result, failed=regressed, passed=34 - regressed, skipped=1)
    result.stdout.fnmatch_lines(["*regressed against the baseline with arm mine*"])


def test_a_better_change_passes(pytester, monkeypatch, baseline):
    result = _run(pytester, monkeypatch, "better", f"--bench-baseline={baseline}", "--bench-gate=recall@10>=-0.02",
                  "--bench-gate=mrr@k>=0:arm=mine", "--bench-report=out.json")
    assert result.ret == 0
    section = _section(pytester)
    assert not section["failed"] and section["arms"]["mine"]["improved"] > 0 and section["arms"]["mine"]["regressed"] == 0, section["arms"]
    mrr = [r for r in section["rules"] if r["metric"] == "mrr@k"][0]
    assert mrr["significant"] and mrr["bootstrap95"][0] > 0


def test_an_unchanged_run_passes(pytester, monkeypatch, baseline):
    result = _run(pytester, monkeypatch, "same", f"--bench-baseline={baseline}", "--bench-gate=recall@10>=0", "--bench-report=out.json")
    assert result.ret == 0
    section = _section(pytester)
    assert section["arms"]["mine"] == {**section["arms"]["mine"], "improved": 0, "regressed": 0, "unchanged": 34}
    assert section["rules"][0]["bootstrap95"] == [0.0, 0.0]


def test_a_noisy_small_change_passes_a_tolerance_and_is_not_significant(pytester, monkeypatch, baseline):
    result = _run(pytester, monkeypatch, "noisy", f"--bench-baseline={baseline}", "--bench-gate=mrr@k>=-0.2", "--bench-report=out.json")
    rule = _section(pytester)["rules"][0]
    assert result.ret == 0, result.stdout.str()
    assert rule["verdict"] == "pass" and not rule["significant"]
    assert rule["bootstrap95"][0] < 0 <= rule["bootstrap95"][1] or rule["bootstrap95"][0] <= 0 < rule["bootstrap95"][1]
    result.stdout.fnmatch_lines(["*not significant*-> PASS*"])


def test_baseline_mismatches_are_usage_errors(pytester, monkeypatch, baseline):
    other_limit = _run(pytester, monkeypatch, "same", f"--bench-baseline={baseline}", "--bench-limit=10")
    assert other_limit.ret == 4
    other_limit.stderr.fnmatch_lines(["*baseline limit 20 differs from this run's 10*"])
    bad_rule = _run(pytester, monkeypatch, "same", f"--bench-baseline={baseline}", "--bench-gate=recall@10 > 0")
    assert bad_rule.ret == 4
    no_baseline = _run(pytester, monkeypatch, "same", "--bench-gate=recall@10>=0")
    assert no_baseline.ret == 4


def test_update_baseline_is_refused_after_an_arm_error(pytester, monkeypatch, baseline):
    pytester.makeconftest(CONFTEST.replace("return Answer(ranking=ranking)", "if request.sample_id.startswith('1'):\n            raise RuntimeError('boom')\n        return Answer(ranking=ranking)"))
    before = baseline.read_bytes()
    result = _run(pytester, monkeypatch, "same", f"--bench-baseline={baseline}", "--bench-update-baseline")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*--bench-update-baseline refused*"])
    assert baseline.read_bytes() == before


@pytest.mark.parametrize("rule", ["recal@10>=-0.02", "recall@10>=-0.02:group=task:code2tset", "recall@50>=0"])
def test_a_gate_rule_that_matches_nothing_is_refused(pytester, monkeypatch, baseline, rule):
    result = _run(pytester, monkeypatch, "same", f"--bench-baseline={baseline}", f"--bench-gate={rule}")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--bench-gate*" + rule.split(">=")[0] + "*"])


def test_update_baseline_is_refused_for_a_partial_run(pytester, monkeypatch, baseline):
    before = baseline.read_bytes()
    result = _run(pytester, monkeypatch, "same", f"--bench-baseline={baseline}", "--bench-update-baseline", "-k", "gin")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*--bench-update-baseline refused*did not run*"])
    assert baseline.read_bytes() == before


def test_samples_on_one_side_only_are_listed(pytester, monkeypatch, baseline):
    edited = json.loads(baseline.read_text())
    edited["details"] = [entry for entry in edited["details"] if entry["id"] != "1df231325202ad18974fccf0"]
    smaller = pytester.path / "smaller.json"
    smaller.write_text(json.dumps(edited))
    result = _run(pytester, monkeypatch, "same", f"--bench-baseline={smaller}", "--bench-report=out.json", "--bench-markdown=summary.md")
    assert result.ret == 0
    assert _section(pytester)["only_in_run"] == ["1df231325202ad18974fccf0"]
    result.stdout.fnmatch_lines(["*samples only in this run: 1df231325202ad18974fccf0*"])
    assert "Samples only in this run: 1df231325202ad18974fccf0" in (pytester.path / "summary.md").read_text()


# -- the two forms of a rule ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "form"),
    [("recall@10>=-0.02", "noninferior"), ("noninferior:recall@10>=-0.02", "noninferior"), ("noregression:recall@10>=-0.02", "noregression")],
)
def test_a_rule_names_its_form_before_the_metric(text, form):
    rule = parse_rule(text)
    assert (rule.form, rule.metric, rule.threshold) == (form, "recall@10", -0.02)


def test_a_form_prefix_keeps_the_options():
    rule = parse_rule("noregression:mrr@k>=-0.01:arm=fx[1]:group=task:code2test")
    assert (rule.form, rule.metric, rule.arm, rule.group) == ("noregression", "mrr@k", "fx[1]", "task:code2test")


@pytest.mark.parametrize("text", ["noninferiority:recall@10>=0", "regression:recall@10>=0", ":recall@10>=0"])
def test_an_unknown_form_is_refused(text):
    with pytest.raises(BenchError, match="--bench-gate"):
        parse_rule(text)


def test_positives_needed_follows_the_standard_error_of_the_interval():
    from pytest_retrieval_bench.report.gate import positives_needed

    # SE = width / (2 * 1.96); the lower bound mean - 1.96 * SE * sqrt(n / m) reaches T at m = n * (half width / (mean - T))^2
    assert positives_needed(28, 0.0, (-0.1, 0.1), -0.02) == math.ceil(28 * (0.1 / 0.02) ** 2)
    assert positives_needed(28, -0.02, (-0.1, 0.1), -0.02) is None  # the mean is the threshold: no count will do
    assert positives_needed(28, -0.05, (-0.1, 0.0), -0.02) is None
    assert positives_needed(28, 0.5, (-0.01, 0.011), -0.02) == 29  # never fewer than one more than the run had


def test_positives_needed_lifts_the_bootstrap_lower_bound_to_the_threshold():
    """The same spread over the advised number of samples (the differences repeated) meets the threshold; half as many does not."""
    from pytest_retrieval_bench.report.gate import positives_needed
    from pytest_retrieval_bench.scoring import stats

    diffs = [0.5, -0.5, 0.25, 0.0, -0.25, 0.0, 1.0, -1.0, 0.0, 0.1] * 3
    threshold = -0.05
    low, high = stats.bootstrap_interval(diffs, "advice")
    assert low < threshold
    needed = positives_needed(len(diffs), stats.mean(diffs), (low, high), threshold)
    enough = diffs * math.ceil(needed / len(diffs))
    too_few = diffs * max(1, math.floor(needed / len(diffs) / 2))
    assert stats.bootstrap_interval(enough, "advice")[0] >= threshold - 0.005
    assert stats.bootstrap_interval(too_few, "advice")[0] < threshold


def _needed(rule: dict) -> int | None:
    """The advice derived from the rule's own printed numbers, as docs/ci.md states the formula."""
    low, high = rule["bootstrap95"]
    if rule["mean_difference"] <= rule["threshold"]:
        return None
    return max(math.ceil(rule["n"] * ((high - low) / 2 / (rule["mean_difference"] - rule["threshold"])) ** 2), rule["n"] + 1)


def test_each_form_decides_from_its_own_bound_and_every_output_names_it(pytester, monkeypatch, baseline):
    result = _run(pytester, monkeypatch, "noisy", f"--bench-baseline={baseline}", "--bench-gate=mrr@k>=-0.02",
                  "--bench-gate=noregression:mrr@k>=-0.02", "--bench-report=out.json", "--bench-markdown=summary.md", "--bench-html=page.html")
    section = _section(pytester)
    inferior, regression = section["rules"]
    low, high = inferior["bootstrap95"]
    assert low < -0.02 <= high  # the change is noisy: the two readings disagree on it
    assert (inferior["form"], inferior["verdict"]) == ("noninferior", "fail")
    assert (regression["form"], regression["verdict"]) == ("noregression", "pass")
    assert "positives_needed" not in regression and inferior["positives_needed"] == _needed(inferior) > inferior["n"]
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        "*gate mrr@k>=-0.02 arm mine [[]non-inferiority: lower bound >= -0.02[]]: *-> FAIL",
        f"*lower bound would reach -0.02 with about {inferior['positives_needed']} positive samples (this run paired {inferior['n']})",
        "*gate noregression:mrr@k>=-0.02 arm mine [[]no confident regression: upper bound >= -0.02[]]: *-> PASS",
        f"*gate failed against*mrr@k>=-0.02 (mine; non-inferiority; needs about {inferior['positives_needed']} positives, has {inferior['n']})",
    ])
    markdown = (pytester.path / "summary.md").read_text()
    assert "| form |" in markdown and "non-inferiority: lower bound &gt;= -0.02" in markdown
    assert "no confident regression: upper bound &gt;= -0.02" in markdown and f"about {inferior['positives_needed']} positive samples" in markdown
    page = (pytester.path / "page.html").read_text()
    assert "<th>form</th>" in page and "non-inferiority: lower bound &gt;= -0.02" in page and "no confident regression: upper bound &gt;= -0.02" in page
    assert f"about {inferior['positives_needed']} positive samples" in page


def test_a_change_shown_worse_fails_both_forms_and_no_sample_count_is_advised(pytester, monkeypatch, baseline):
    result = _run(pytester, monkeypatch, "worse", f"--bench-baseline={baseline}", "--bench-gate=recall@10>=-0.02",
                  "--bench-gate=noregression:recall@10>=-0.02", "--bench-report=out.json")
    inferior, regression = _section(pytester)["rules"]
    assert regression["bootstrap95"][1] < -0.02 and inferior["mean_difference"] <= -0.02
    assert [inferior["verdict"], regression["verdict"]] == ["fail", "fail"] and inferior["positives_needed"] is None
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*no number of samples would lift the lower bound to the threshold",
                                 "*gate noregression:recall@10>=-0.02 arm mine [[]no confident regression*-> FAIL",
                                 "*gate failed against*(mine; non-inferiority; no sample count would pass it), noregression:recall@10>=-0.02 (mine; no confident regression)"])


def test_the_help_and_the_options_page_name_both_forms(pytester):
    options = (Path(__file__).resolve().parent.parent / "docs" / "options.md").read_text()
    row = next(line for line in options.splitlines() if line.startswith("| `--bench-gate"))
    help_text = " ".join(pytester.runpytest_subprocess("--help").stdout.str().split())
    for words in ("noninferior:", "noregression:", "lower bound", "upper bound"):
        assert words in row and words in help_text, words


# -- arms the baseline has no records of -------------------------------------------------------------


def _run_arms(pytester, monkeypatch, arms: str, *extra: str):
    monkeypatch.setenv("MODE", "same")
    return pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", f"--bench-arms={arms}",
                                         "-p", "no:cacheprovider", *extra)


def test_an_arm_without_baseline_records_runs_as_new_and_unpaired(pytester, monkeypatch, baseline):
    result = _run_arms(pytester, monkeypatch, "mine,grep", f"--bench-baseline={baseline}", "--bench-gate=recall@10>=0",
                       "--bench-report=out.json", "--bench-markdown=summary.md", "--bench-html=page.html")
    assert result.ret == 0, result.stderr.str()
    section = _section(pytester)
    assert section["new_arms"] == ["grep"] and list(section["arms"]) == ["mine"]
    assert [rule["arm"] for rule in section["rules"]] == ["mine"]  # an unqualified rule: the arms both reports hold
    result.assert_outcomes(passed=68, skipped=2)
    result.stdout.fnmatch_lines(["*new arm(s), no baseline records, unpaired: grep"])
    assert "new arm(s), no baseline records, unpaired: grep" in (pytester.path / "summary.md").read_text()
    assert '<p id="new-arms">new arm(s), no baseline records, unpaired: grep</p>' in (pytester.path / "page.html").read_text()
    # a merge of that report is gated the same way, with a form named
    from pytest_retrieval_bench.cli import main as cli_main

    merged = pytester.path / "merged.json"
    assert cli_main(["summarize", str(pytester.path / "out.json"), "--output", str(merged), "--arm", "mine", "--baseline", str(baseline),
                     "--gate", "noregression:recall@10>=0"]) == 0
    merged_section = json.loads(merged.read_text())["baseline"]
    assert merged_section["new_arms"] == ["grep"] and [(r["arm"], r["form"]) for r in merged_section["rules"]] == [("mine", "noregression")]


def test_only_a_rule_that_reads_a_new_arm_refuses(pytester, monkeypatch, baseline):
    named = _run_arms(pytester, monkeypatch, "mine,grep", f"--bench-baseline={baseline}", "--bench-gate=recall@10>=0:arm=grep")
    assert named.ret == 4
    named.stderr.fnmatch_lines(["*--bench-gate names arm(s) grep that the baseline has no results for*"])
    nothing_shared = _run_arms(pytester, monkeypatch, "grep", f"--bench-baseline={baseline}", "--bench-gate=recall@10>=0")
    assert nothing_shared.ret == 4
    nothing_shared.stderr.fnmatch_lines(["*--bench-gate recall@10>=0 applies to the arms both reports hold, and none is*"])
    no_rule = _run_arms(pytester, monkeypatch, "grep", f"--bench-baseline={baseline}", "--bench-report=out.json")
    assert no_rule.ret == 0
    assert _section(pytester)["new_arms"] == ["grep"]


def test_a_rule_of_a_report_written_before_forms_reads_as_non_inferiority():
    from pytest_retrieval_bench.report.gate_text import form_words
    from pytest_retrieval_bench.report.markdown import _baseline_lines

    old = {"rule": "recall@10>=-0.02", "arm": "mine", "group": "all", "metric": "recall@10", "threshold": -0.02, "n": 3,
           "mean_difference": 0.0, "bootstrap95": [0.0, 0.0], "significant": False, "verdict": "pass"}
    assert form_words(old) == "non-inferiority: lower bound >= -0.02"
    assert any("non-inferiority" in line for line in _baseline_lines({"failed": False, "rules": [old], "arms": {}}))
