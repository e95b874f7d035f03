"""`retrieval-bench leaderboard`: the bench's groups, row order and 4-decimal cells, `-` for what the
report lacks, escaped Markdown, and the command's exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.cli import main
from pytest_retrieval_bench.report.leaderboard import leaderboard_markdown, leaderboard_tables, leaderboard_text

from report_helpers import scored_report

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / "testdata" / "release"
PIPE_ARM = "mine|v2"


def _entry(positives: int = 5, wilson95: dict[str, Any] | None = None, **metrics: float) -> dict[str, Any]:
    """A summary arm entry; keyword `recall_20=...` stands for the metric `recall@20`, `mrr` for `mrr@k` (a report
    written before the bench's MRR was recorded), `whole_mrr` for `mrr`, `gold_coverage` for `gold_coverage@8k`."""
    names = {"mrr": "mrr@k", "whole_mrr": "mrr", "gold_coverage": "gold_coverage@8k"}
    named = {names.get(key, key.replace("_", "@", 1)): value for key, value in metrics.items()}
    return {"n": positives + 2, "positives": positives, "errors": 0, "abstentions": 0, "metrics": named,
            "wilson95": wilson95 or {}, "selective_success": 0.5}


def _report(summary: dict[str, Any], limit: int = 20) -> dict[str, Any]:
    return {"registration": {"limit": limit}, "details": [], "summary": summary}


def _arms(report: dict[str, Any], title: str = "overall") -> list[str]:
    return [row[0] for table_title, _, rows in leaderboard_tables(report) if table_title == title for row in rows]


def test_rows_sort_by_mrr_then_r20_then_name_and_missing_ranks_last() -> None:
    arms = {"b": _entry(mrr=0.5, recall_20=0.6), "a": _entry(mrr=0.5, recall_20=0.6), "c": _entry(mrr=0.5, recall_20=0.9),
            "d": _entry(mrr=0.7, recall_20=0.1), "none": _entry(), "zero": _entry(mrr=0.0, recall_20=0.0), "no-r20": _entry(mrr=0.5)}
    assert _arms(_report({"all": arms})) == ["d", "c", "a", "b", "no-r20", "zero", "none"]


def test_mrr_is_the_benchs_whole_ranking_mrr_and_orders_the_rows_and_mrr_at_k_is_shown_when_asked() -> None:
    # "cut" finds its gold within the limit more often (higher MRR@k), "deep" finds it on more samples past the limit
    arms = {"cut": _entry(whole_mrr=0.40, mrr=0.40, recall_20=0.5, precision_20=0.05, f1_20=0.0909, gold_coverage=0.25),
            "deep": _entry(whole_mrr=0.45, mrr=0.30, recall_20=0.5, precision_20=0.05, f1_20=0.0909, gold_coverage=0.5)}
    [(_, headers, rows)] = leaderboard_tables(_report({"all": arms}))
    assert headers == ["arm", "samples", "R@5", "R@10", "R@20", "P@20", "F1@20", "MRR", "Gold@8k", "BCY@8k"]
    assert rows == [["deep", "5", "-", "-", "0.5000", "0.0500", "0.0909", "0.4500", "0.5000", "-"],
                    ["cut", "5", "-", "-", "0.5000", "0.0500", "0.0909", "0.4000", "0.2500", "-"]]
    [(_, headers, rows)] = leaderboard_tables(_report({"all": arms}), mrr_at_k=True)
    assert headers[7:9] == ["MRR", "MRR@20"] and [row[:1] + row[7:9] for row in rows] == [["deep", "0.4500", "0.3000"], ["cut", "0.4000", "0.4000"]]
    text = leaderboard_text(_report({"all": arms}))
    assert "MRR is the bench's: 1 / rank of the first gold file in the arm's whole ranking" in text and "MRR@20 is" not in text
    assert "MRR@20 is MRR cut at the run's limit" in leaderboard_text(_report({"all": arms}), mrr_at_k=True)


def test_groups_are_overall_then_the_bench_tasks_then_others_alphabetically() -> None:
    summary = {group: {"x": _entry(mrr=0.1)} for group in
               ("task:zeta", "task:testlog2code", "task:aardvark", "repo:o/r", "task:trace2code", "stratum:positive", "all",
                "task:comment2context", "task:code2test", "fold:1")}
    summary["task:abstention"] = {"x": _entry(positives=0)}  # no positive item: nothing to rank
    titles = [title for title, _, _ in leaderboard_tables(_report(summary))]
    assert titles == ["overall", "code2test", "comment2context", "trace2code", "testlog2code", "aardvark", "zeta"]


def test_cells_have_four_decimals_samples_are_positives_and_missing_metrics_are_dashes() -> None:
    report = _report({"all": {"x": _entry(positives=7, recall_5=0.47284, recall_10=0.5, mrr=1 / 3, bcy_8000=0.12345)}}, limit=10)
    [(title, headers, rows)] = leaderboard_tables(report)
    assert headers == ["arm", "samples", "R@5", "R@10", "R@20", "P@20", "F1@20", "MRR@10", "Gold@8k", "BCY@8k"]
    assert rows == [["x", "7", "0.4728", "0.5000", "-", "-", "-", "0.3333", "-", "0.1235"]]
    old = _report({"all": {"x": _entry(recall_5=0.1, recall_10=0.2, recall_20=0.3, mrr=0.25)}})  # before bcy
    assert leaderboard_tables(old)[0][2] == [["x", "5", "0.1000", "0.2000", "0.3000", "-", "-", "0.2500", "-", "-"]]


def test_an_interval_follows_a_value_only_for_its_own_metric() -> None:
    entry = _entry(recall_5=0.47284, recall_10=0.6, mrr=0.4, wilson95={"recall@5": [0.41, 0.53], "hit@10": [0.2, 0.9]})
    [(_, _, [row])] = leaderboard_tables(_report({"all": {"x": entry}}))
    assert row[2] == "0.4728 [0.410, 0.530]"
    assert row[3] == "0.6000"  # hit@10's Wilson interval is not recall@10's


def test_text_notes_mrr_at_k_and_aligns_columns() -> None:
    report = _report({"all": {"a-long-arm-name": _entry(mrr=0.5, recall_20=0.5), "b": _entry(mrr=0.25)}}, limit=10)
    text = leaderboard_text(report)
    assert "MRR@10 is MRR cut at the run's limit k=10" in text and "differ when the first gold file ranks below 10" in text
    assert "written before the bench's MRR was recorded, so MRR@10 stands in its place" in text
    header, first, second = text.split("\n\noverall\n", 1)[1].splitlines()[:3]
    assert header.split() == ["arm", "samples", "R@5", "R@10", "R@20", "P@20", "F1@20", "MRR@10", "Gold@8k", "BCY@8k"]
    assert len(header) == len(first) == len(second) and first.startswith("a-long-arm-name ") and second.startswith("b ")


def test_markdown_has_the_bench_headings_right_aligned_numbers_and_escaped_arms() -> None:
    summary = {"all": {PIPE_ARM: _entry(mrr=0.5), "grep": _entry(mrr=0.25)}, "task:code2test": {PIPE_ARM: _entry(mrr=0.5)}}
    lines = leaderboard_markdown(_report(summary)).splitlines()
    assert lines[0] == "# Leaderboard" and "## overall" in lines and "## code2test" in lines
    assert lines.index("## overall") < lines.index("## code2test")
    start = lines.index("## overall") + 2
    assert lines[start] == "| arm | samples | R@5 | R@10 | R@20 | P@20 | F1@20 | MRR@20 | Gold@8k | BCY@8k |"
    assert lines[start + 1] == "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    assert lines[start + 2] == "| mine\\|v2 | 5 | - | - | - | - | - | 0.5000 | - | - |"
    assert lines[start + 2].replace("\\|", "").count("|") == 11  # the escaped pipe does not add a column


# -- the command -----------------------------------------------------------------------------------


def _written(tmp_path: Path, report: dict[str, Any]) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    return path


def test_cli_prints_the_tables_and_writes_the_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _written(tmp_path, scored_report())
    out = tmp_path / "new" / "board.md"
    assert main(["leaderboard", str(path), "--markdown", str(out)]) == 0
    captured = capsys.readouterr()
    assert "\noverall\n" in captured.out and f"retrieval-bench: wrote {out}" in captured.out and captured.err == ""
    assert out.read_text() == leaderboard_markdown(json.loads(path.read_text()))


@pytest.mark.parametrize("content, message", [(None, "cannot read"), ("{not json", "not a JSON report"),
                                              ('{"summary": {}}', "not a retrieval-bench report")])
def test_cli_unreadable_report_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    assert main(["leaderboard", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"retrieval-bench: error: {path}: {message}") and captured.out == ""


def test_cli_report_with_nothing_to_rank_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _written(tmp_path, scored_report(no_gold_only=True))
    assert main(["leaderboard", str(path)]) == 2
    assert capsys.readouterr().err == f"retrieval-bench: error: {path}: no summary group with positive items to rank\n"


def test_cli_unwritable_markdown_exits_2_and_names_the_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _written(tmp_path, scored_report())
    out = path / "board.md"  # under a file: cannot be created, even as root
    assert main(["leaderboard", str(path), "--markdown", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"retrieval-bench: error: cannot write {out}: ") and captured.out == ""


def test_cli_refuses_a_summary_figure_its_details_do_not_give(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = scored_report()
    written = report["summary"]["all"]["mine"]["metrics"]["recall@10"]
    report["summary"]["all"]["mine"]["metrics"]["recall@10"] = 0.99
    path = _written(tmp_path, report)
    assert main(["leaderboard", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (f"retrieval-bench: error: {path}: figures that its own details contradict, "
                                                   f"$.summary['all']['mine']['metrics']['recall@10']: 0.99 is written, but the details give "
                                                   f"{written!r}; a report edited by hand is not used\n")


def test_the_renderer_does_not_import_pytest() -> None:
    code = "import sys, pytest_retrieval_bench.report.leaderboard; sys.exit(1 if 'pytest' in sys.modules or '_pytest' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


# -- end to end ------------------------------------------------------------------------------------


def test_a_real_run_at_limit_10_ranks_as_its_report_says(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(RELEASE, pytester.path / "release")
    result = pytester.runpytest_subprocess("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl",
                                           "--bench-corpus=release/corpus/synthetic_v1", "--bench-arms=grep,bm25:all,arb-lexical",
                                           "--bench-limit=10", "--bench-no-cache", "--bench-report=out.json")
    assert result.ret == 0, result.stdout.str()[-2000:]
    capsys.readouterr()
    board = pytester.path / "board.md"
    assert main(["leaderboard", str(pytester.path / "out.json"), "--markdown", str(board), "--mrr-at-k"]) == 0
    text = capsys.readouterr().out
    summary = json.loads((pytester.path / "out.json").read_text())["summary"]
    overall = sorted(summary["all"], key=lambda arm: (-summary["all"][arm]["metrics"]["mrr"], arm))
    block = text.split("\n\noverall\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert block[0].split() == ["arm", "samples", "R@5", "R@10", "R@20", "P@20", "F1@20", "MRR", "MRR+given", "MRR@10", "Gold@8k", "BCY@8k"]
    assert [line.split()[0] for line in block[1:]] == overall  # no recall@20 under limit 10: MRR, then name
    for line in block[1:]:
        arm, samples, r5, r10, r20, p20, f20, mrr, kept, mrr_k, gold, _ = line.split()
        metrics = summary["all"][arm]["metrics"]
        assert (samples, r5, r20, p20, f20) == (str(summary["all"][arm]["positives"]), f"{metrics['recall@5']:.4f}", "-", "-", "-")
        assert (mrr, kept, mrr_k, gold) == (f"{metrics['mrr']:.4f}", f"{metrics['mrr_given_kept']:.4f}", f"{metrics['mrr@k']:.4f}",
                                            f"{metrics['gold_coverage@8k']:.4f}")
    assert any("MRR+given is the MRR the bench publishes" in line for line in text.splitlines()[:4])
    titles = [line for line in board.read_text().splitlines() if line.startswith("## ")]
    assert titles[:5] == ["## overall", "## code2test", "## comment2context", "## trace2code", "## testlog2code"]
    assert "## edit2ripple" in titles and "## abstention" not in titles  # an unknown task after the bench's; no-gold task left out
