"""Every reader of a report believes only what its details give: a baseline, a saved run, a merge
input or a page's report with a number edited by hand is refused, naming the file and the JSON path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.derived_check import derived_problem
from pytest_retrieval_bench.report.merge import read_report

from report_helpers import SHIFTED_ARM, scored_report

SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
SECTIONS = ("summary", "paired", "latency", "baseline")
USAGE_ERROR = 4


def test_a_report_as_built_gives_every_figure_it_holds() -> None:
    assert derived_problem(scored_report(("grep", "mine", "other")), SECTIONS) is None


@pytest.mark.parametrize("path, value", [
    (("summary", "all", "mine", "metrics", "mrr@k"), 0.123456),
    (("summary", "task:code2test", "grep", "positives"), 99),
    (("summary", "all", "mine", "wilson95", "hit@20"), [0.0, 1.0]),
    (("paired", "all", "mine vs grep", "recall@10", "mean_difference"), 0.5),
    (("paired", "all", "mine vs grep", "mrr@k", "t_test", "p_holm"), 0.001),
    (("paired", "all", "mine vs grep", "recall@10", "verdict"), "better"),
])
def test_a_summary_or_paired_figure_edited_by_hand_is_named_by_its_path(path: tuple[str, ...], value: Any) -> None:
    report = scored_report()
    target = report
    for step in path[:-1]:
        target = target[step]
    assert target[path[-1]] != value
    target[path[-1]] = value
    problem = derived_problem(report, SECTIONS)
    assert problem is not None and problem.startswith(f"$.{path[0]}" + "".join(f"[{step!r}]" for step in path[1:])), problem
    assert derived_problem(report, ("latency",)) is None  # only a reader that shows those sections rebuilds them


def test_a_summary_group_or_comparison_added_by_hand_is_refused() -> None:
    report = scored_report()
    report["summary"]["all"]["ghost"] = report["summary"]["all"]["mine"]
    assert derived_problem(report, SECTIONS) == "$.summary['all']['ghost'] is written, but the details give no such entry"
    report = scored_report()
    report["paired"]["all"]["grep vs mine"] = report["paired"]["all"]["mine vs grep"]
    assert "no such comparison" in (derived_problem(report, SECTIONS) or "")


def written(tmp_path: Path, report: dict[str, Any], name: str = "report.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(report))
    return path


def test_read_report_refuses_an_edited_record_for_every_reader(tmp_path: Path) -> None:
    report = scored_report()
    record = report["details"][0]["arms"]["mine"]
    record["metrics"]["recall@10"] = 1.0 if record["metrics"]["recall@10"] != 1.0 else 0.0
    path = written(tmp_path, report)
    with pytest.raises(BenchError, match=r"results that its own records contradict, sample 's00', arm 'mine': .*recall@10.*a report edited by hand is not used"):
        read_report(path)


# -- end to end ------------------------------------------------------------------------------------


@pytest.fixture
def bench(release_bench: pytest.Pytester) -> pytest.Pytester:
    release_bench.makeconftest(SHIFTED_ARM.format(shift=0))
    return release_bench


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep,mine",
                                         "-p", "no:cacheprovider", *args, timeout=300)


def cli(pytester: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).with_name("retrieval-bench")), *args], cwd=pytester.path,
                          capture_output=True, text=True, timeout=120)


def edit_first_positive_record(path: Path, arm: str) -> None:
    """Mark the arm's first positive record a full hit, its ranking untouched."""
    report = json.loads(path.read_text())
    entry = next(entry for entry in report["details"] if entry.get("stratum") == "positive" and arm in entry.get("arms", {})
                 and entry["arms"][arm]["metrics"].get("recall@10") != 1.0)
    entry["arms"][arm]["metrics"]["recall@10"] = 1.0
    path.write_text(json.dumps(report))


def test_a_real_runs_report_is_read_back_whole_and_an_edited_one_is_not_gated_against(bench: pytest.Pytester) -> None:
    assert run(bench, "--bench-report=main.json").ret == 0
    main = bench.path / "main.json"
    report = read_report(main, SECTIONS)  # a genuine report: nothing refused, its paired section rebuilt too
    assert report["paired"] and report["summary"]["all"]
    page = cli(bench, "html", "main.json", "-o", "page.html")
    assert page.returncode == 0, page.stderr
    edit_first_positive_record(main, "grep")
    gated = run(bench, "--bench-baseline=main.json", "--bench-gate=recall@10>=-0.02", "--bench-report=pr.json")
    assert gated.ret == USAGE_ERROR
    assert "main.json: results that its own records contradict" in gated.stderr.str()
    assert gated.stderr.str().count("main.json:") == 1  # the file is named once
    assert "a report edited by hand is not used" in gated.stderr.str()
    assert not (bench.path / "pr.json").exists()
    updated = run(bench, "--bench-baseline=main.json", "--bench-update-baseline")
    assert updated.ret == USAGE_ERROR and "results that its own records contradict" in updated.stderr.str()
    for args in (("html", "main.json", "-o", "edited.html"), ("leaderboard", "main.json"), ("export", "main.json", "--format", "csv", "-o", "edited.csv"),
                 ("diff", "main.json", "main.json")):
        refused = cli(bench, *args)
        assert refused.returncode == 2 and "a report edited by hand is not used" in refused.stderr, (args, refused.stderr)
    assert not (bench.path / "edited.html").exists() and not (bench.path / "edited.csv").exists()


def test_an_edited_saved_run_is_skipped_by_compare_and_noted_by_history(bench: pytest.Pytester) -> None:
    assert run(bench, "--bench-save=first").ret == 0
    assert run(bench, "--bench-save=second").ret == 0
    storage = bench.path / ".retrieval-bench"
    second = sorted(path for path in storage.glob("0002_*.json") if not path.name.endswith(".registration.json"))[0]
    edit_first_positive_record(second, "mine")
    compared = run(bench, "--bench-compare", "--bench-report=pr.json")
    assert compared.ret == 0, compared.stdout.str()
    compared.stdout.fnmatch_lines(["*compared with saved run 0001 first*", f"*skipped saved run {second.name}: unreadable (results that its own records contradict*"])
    named = run(bench, "--bench-compare=second")
    assert named.ret == USAGE_ERROR and f"{second.name} is unreadable (results that its own records contradict" in named.stderr.str()
    shown = cli(bench, "history")
    assert shown.returncode == 0, shown.stderr
    assert f"{second.name}: unreadable (results that its own records contradict" in shown.stdout + shown.stderr
    first = sorted(path for path in storage.glob("0001_*.json") if not path.name.endswith(".registration.json"))[0]
    report = json.loads(first.read_text())
    comparison = report["paired"]["all"]["mine vs grep"]["recall@10"]
    comparison["mean_difference"], comparison["verdict"] = 0.5, "better"
    first.write_text(json.dumps(report))
    table = cli(bench, "history")
    assert "0001" in table.stdout and f"{first.name}: unreadable" not in table.stdout + table.stderr  # the table shows no paired figure
    page = cli(bench, "history", "--html", "history.html")
    assert page.returncode == 0, page.stderr
    assert f"{first.name}: unreadable (figures that its own details contradict, $.paired['all']['mine vs grep']['recall@10']" in page.stdout
    assert not (bench.path / "history_runs" / "0001.html").exists()


def test_a_value_of_the_wrong_type_is_named_by_its_entry(tmp_path: Path) -> None:
    report = scored_report()
    report["details"][1]["arms"]["grep"]["metrics"]["recall@10"] = "high"
    with pytest.raises(BenchError) as caught:
        read_report(written(tmp_path, report))
    assert str(caught.value) == (f"{tmp_path / 'report.json'}: not a valid report: $.details[1].arms['grep'].metrics['recall@10']: got a string; "
                                 "metrics must be an object of metric names to numbers")


def test_an_output_under_a_file_names_the_file_in_the_way(tmp_path: Path) -> None:
    from pytest_retrieval_bench.report.build import write_atomically

    (tmp_path / "afile").write_text("")
    for target in (tmp_path / "afile" / "x.json", tmp_path / "afile" / "deeper" / "x.json"):
        with pytest.raises(NotADirectoryError) as caught:
            write_atomically(target, b"{}")
        assert caught.value.strerror == f"{tmp_path / 'afile'} is a file, not a directory"  # what the writers' messages show


@pytest.mark.parametrize("folds", [{"acme/gin-lite": "A", "nimbus/rusty-cache": "B"}, {"nobody/elsewhere": "A"}])
def test_a_fold_map_runs_report_is_read_back_whole_even_when_no_sample_is_in_the_map(bench: pytest.Pytester, folds: dict[str, str]) -> None:
    (bench.path / "folds.json").write_text(json.dumps(folds))
    assert run(bench, "--bench-fold-map=folds.json", "--bench-report=main.json").ret == 0
    report = read_report(bench.path / "main.json", SECTIONS)
    assert any(group.startswith("fold:") for group in report["summary"])  # a fold map gives fold groups, assigned or not
    for args in (("html", "main.json", "-o", "page.html"), ("leaderboard", "main.json")):
        shown = cli(bench, *args)
        assert shown.returncode == 0, (args, shown.stderr)


def test_a_field_checked_as_a_whole_is_not_named_by_one_of_its_entries() -> None:
    from pytest_retrieval_bench.report.schema import report_problem

    assert report_problem({"registration": {"shard": {"index": 1, "count": "3"}}, "details": []}) == (
        "$.registration.shard: expected null or an object with whole-number index and count, got an object")
    assert report_problem({"registration": {"samples": [{"sha256": "a"}, {"path": "b"}]}, "details": []}) == (
        "$.registration.samples[1]: got an object; samples must be a list of objects with a sha256")
