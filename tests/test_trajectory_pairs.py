"""Paired statistics and gates on trajectory metrics: the trajectory section's pairs (agent against
agent, agent against a ranker's same-budget figures), gate rules naming a trajectory metric, and
`diff` and `history` showing trajectory metrics. Two runs of a Python agent that reads fewer files
in the second, beside the built-in agent and grep, checked against scipy and the records' own
detail metrics."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.history.store import SavedRun
from pytest_retrieval_bench.history.table import history_lines
from pytest_retrieval_bench.report.build import rounded
from pytest_retrieval_bench.report.diff import diff_reports
from pytest_retrieval_bench.report.diff_text import diff_lines, diff_markdown
from pytest_retrieval_bench.report.export_trajectory import trajectory_columns
from pytest_retrieval_bench.report.gate import check_compatible, compare, parse_rule
from pytest_retrieval_bench.report.trajectory_section import trajectory_section
from pytest_retrieval_bench.report.trajectory_values import TRAJECTORY_METRICS
from pytest_retrieval_bench.scoring import stats

RELEASE = Path(__file__).resolve().parent.parent / "testdata" / "release"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
GATE = "noninferior:final_file_f1>=-0.02:arm=reader"

CONFTEST = """
import re

import pytest_retrieval_bench

@pytest_retrieval_bench.agent("reader", final_k=2)
def reader(bench_request, bench_tools):
    word = max(re.findall(r"[A-Za-z_]{{4,}}", bench_request.query_text), key=len, default="main")
    hits = bench_tools.grep(word).hits
    for hit in hits[:{reads}]:
        bench_tools.read_file(hit["path"])
    bench_tools.submit([hit["path"] for hit in hits[:{reads}]])
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any], subprocess.CompletedProcess[str]]:
    """before.json (reader reads 2 files) and after.json (reader reads 1, gated against before)."""
    directory = tmp_path_factory.mktemp("trajectory_pairs")
    shutil.copytree(RELEASE, directory / "release")
    gated = None
    for name, reads in (("before", 2), ("after", 1)):
        (directory / "conftest.py").write_text(CONFTEST.format(reads=reads), encoding="utf-8")
        extra = ["--bench-baseline=before.json", f"--bench-gate={GATE}"] if name == "after" else []
        gated = subprocess.run([sys.executable, "-m", "pytest", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "-p", "no:cacheprovider",
                                "--bench-arms=reader,arb-closed-tool,grep", f"--bench-report={name}.json", "-q", *extra],
                               cwd=directory, capture_output=True, text=True, timeout=300)
    reports = [json.loads((directory / f"{name}.json").read_text(encoding="utf-8")) for name in ("before", "after")]
    return directory, reports[0], reports[1], gated


def detail_metrics(report: dict[str, Any], arm: str) -> dict[str, dict[str, float]]:
    """sample id -> the written detail metrics of the arm's agent records, with final_any_gold."""
    found = {}
    for entry in report["details"]:
        record = entry["arms"].get(arm)
        if record and "detail" in record["trajectory"]:
            detail = record["trajectory"]["detail"]
            hit = bool(set(detail["closed_tool"]["final_files"]) & set(detail["gold_files"]))
            found[entry["id"]] = {**detail["metrics"], "final_any_gold": 1.0 if hit else 0.0}
    return found


def test_the_section_pairs_agents_and_same_budget_rankers(runs) -> None:
    _, before, _, _ = runs
    section = before["trajectory"]
    assert set(section["reader"]["paired"]) == {"arb-closed-tool", "grep top_2"}  # an agent sorted before it; grep at its final_k
    assert set(section["arb-closed-tool"]["paired"]) == {"grep top_3"} and "paired" not in section["grep"]
    reader, scripted = detail_metrics(before, "reader"), detail_metrics(before, "arb-closed-tool")
    ids = sorted(reader)
    assert len(ids) == 28 and sorted(scripted) == ids
    for metric in ("final_file_f1", "final_any_gold", "retrieved_file_recall"):
        result = section["reader"]["paired"]["arb-closed-tool"][metric]
        diffs = [reader[i][metric] - scripted[i][metric] for i in ids]
        scipy_stats = pytest.importorskip("scipy.stats")
        oracle = scipy_stats.ttest_rel([reader[i][metric] for i in ids], [scripted[i][metric] for i in ids])
        assert result["n"] == 28 and result["mean_difference"] == pytest.approx(sum(diffs) / 28, abs=2e-6)
        if result["t_test"]["t"] is not None:
            assert result["t_test"]["t"] == pytest.approx(float(oracle.statistic), rel=1e-4) and result["t_test"]["p"] == pytest.approx(float(oracle.pvalue), abs=2e-6)
        assert (result["wins"], result["losses"], result["ties"]) == (sum(d > 0 for d in diffs), sum(d < 0 for d in diffs), sum(d == 0 for d in diffs))
        interval = stats.bootstrap_interval(diffs, f"trajectory|reader|arb-closed-tool|{metric}")
        assert result["bootstrap95"] == pytest.approx(list(interval), abs=2e-6)
    overall = section["reader"]["metrics"]["overall"]["final_file_f1"] - section["grep"]["same_budget"]["top_2"]["metrics"]["overall"]["final_file_f1"]
    assert section["reader"]["paired"]["grep top_2"]["final_file_f1"]["mean_difference"] == pytest.approx(overall, abs=2e-6)
    rate = section["reader"]["final_any_gold"]["rate"] - section["arb-closed-tool"]["final_any_gold"]["rate"]
    assert section["reader"]["paired"]["arb-closed-tool"]["final_any_gold"]["mean_difference"] == pytest.approx(rate, abs=2e-6)
    assert rounded(trajectory_section(before["details"])) == section  # deterministic: rebuilt from the details, the same figures
    columns = trajectory_columns(before)  # the export's rows carry the per-sample value a gate pairs
    assert [columns[(i, "reader")]["final_any_gold"] for i in ids] == [reader[i]["final_any_gold"] for i in ids]


def test_a_gate_rule_on_a_trajectory_metric(runs) -> None:
    directory, before, after, gated = runs
    old, new = detail_metrics(before, "reader"), detail_metrics(after, "reader")
    diffs = [new[i]["final_file_f1"] - old[i]["final_file_f1"] for i in sorted(old)]
    assert any(diffs)
    [written] = after["baseline"]["rules"]
    assert written["arm"] == "reader" and written["n"] == 28 and written["mean_difference"] == pytest.approx(sum(diffs) / 28, abs=2e-6)
    assert written["verdict"] == ("pass" if written["bootstrap95"][0] >= -0.02 else "fail")
    assert gated.returncode == (1 if written["verdict"] == "fail" else 0), gated.stdout[-2000:]
    section = compare(after, before, [parse_rule("noregression:final_any_gold>=-0.5"), parse_rule("final_file_recall>=-0.02")])
    assert [(rule["arm"], rule["metric"]) for rule in section["rules"]] == [
        (arm, metric) for metric in ("final_any_gold", "final_file_recall") for arm in ("arb-closed-tool", "grep", "reader")]
    unchanged = [rule for rule in section["rules"] if rule["arm"] != "reader"]  # the built-in agent and grep's same-budget figures
    assert all(rule["bootstrap95"] == [0.0, 0.0] and rule["verdict"] == "pass" and rule["n"] == 28 for rule in unchanged)
    diffed = diff_reports(before, after, ["reader"])["trajectory"]["paired"]["reader"]["final_file_f1"]
    assert diffed["bootstrap95"] == pytest.approx(written["bootstrap95"], abs=2e-6)  # one seed name: diff shows the gate's interval


def test_gate_rules_naming_unknown_or_unheld_trajectory_metrics_are_refused(runs) -> None:
    _, before, _, _ = runs
    registration = before["registration"]
    held = {name for row in detail_metrics(before, "reader").values() for name in row}
    absent = next(name for name in TRAJECTORY_METRICS if name not in held)  # a trajectory metric's name, no record of it here
    with pytest.raises(BenchError, match=rf"no baseline record has the metric '{re.escape(absent)}' \(known: .*recall@10.*; trajectory: .*final_any_gold.*final_file_f1"):
        check_compatible(registration, before, ["reader"], [parse_rule(f"{absent}>=0")])
    for typo in ("recall>=0", "final_fil_f1>=0"):
        with pytest.raises(BenchError, match=r"unknown metric '\w+'.*trajectory metric is one of final_any_gold, retrieved_file_recall"):
            parse_rule(typo)
    without_agents = {**before, "details": [{**entry, "arms": {"grep": entry["arms"]["grep"]}} if "grep" in entry["arms"] else entry
                                            for entry in before["details"]]}
    with pytest.raises(BenchError, match=r"no baseline record has the metric 'final_file_f1' \(known: [^;]*\)$"):
        check_compatible(registration, without_agents, ["grep"], [parse_rule("final_file_f1>=0")])
    check_compatible(registration, before, ["reader", "grep"], [parse_rule("final_file_f1>=-0.02"), parse_rule("line_f1@trajectory>=0:arm=reader")]
                     if any("line_f1@trajectory" in row for row in detail_metrics(before, "reader").values()) else [parse_rule("final_file_f1>=-0.02")])


def test_diff_shows_trajectory_metrics_and_changes(runs) -> None:
    _, before, after, _ = runs
    result = diff_reports(before, after)
    trajectory = result["trajectory"]
    assert trajectory["sources"] == {"arb-closed-tool": "agent", "grep": "ranked_top_2", "reader": "agent"}
    old, new = detail_metrics(before, "reader"), detail_metrics(after, "reader")
    changed = {i for i in old if (old[i]["final_file_f1"], old[i]["final_any_gold"]) != (new[i]["final_file_f1"], new[i]["final_any_gold"])}
    changes = trajectory["changes"]["reader"]
    assert {change["id"] for change in changes["regressions"] + changes["improvements"]} == changed and changes["unchanged"] == 28 - len(changed)
    lost = [change for change in changes["regressions"] if "no gold file is final any more" in change["why"]]
    assert lost == changes["regressions"][:len(lost)]  # a lost gold file is listed before a lower F1
    lines = diff_lines(result, "before.json", "after.json")
    assert any(line.startswith("trajectory (agents' final context") for line in lines)
    assert any(line.split()[:2] == ["grep", "(ranked_top_2)"] for line in lines) and "reader (final context):" in "\n".join(lines)
    assert "| reader | final\\_file\\_f1 |" in diff_markdown(result, "before.json", "after.json")
    without_agents = {**before, "details": [{**entry, "arms": {"grep": entry["arms"]["grep"]}} if "grep" in entry["arms"] else entry
                                            for entry in before["details"]]}
    plain = diff_reports(without_agents, without_agents)
    assert "trajectory" not in plain and not any("trajectory" in line for line in diff_lines(plain, "a", "b"))


def test_history_shows_trajectory_metrics(runs, tmp_path: Path) -> None:
    _, before, after, _ = runs
    loaded = [(SavedRun(tmp_path / f"{number:04d}.json", number, "nocommit", "20261206_000000", name, False), report)
              for number, name, report in ((1, "before", before), (2, "after", after))]
    lines = history_lines(loaded, [], "store")
    at = next(index for index, line in enumerate(lines) if line.startswith("trajectory ("))
    header, rows = lines[at + 1].split(), [line.split() for line in lines[at + 2:at + 8]]
    assert header[:7] == ["run", "series", "arm", "source", "n", "final-any-gold", "95%"] and "final_file_f1" in header
    reader = [row for row in rows if row[2] == "reader"]
    assert [row[0] for row in reader] == ["0001", "0002"] and reader[0][-1] == "new"
    old, new = detail_metrics(before, "reader"), detail_metrics(after, "reader")
    mean = sum(new[i]["final_file_f1"] - old[i]["final_file_f1"] for i in old) / len(old)
    assert reader[1][9] == f"{mean:+.3f}"
    hits = sum(row["final_any_gold"] for row in new.values())
    assert reader[1][5] == f"{hits / 28:.3f}"
    assert any("final_any_gold" in line for line in history_lines(loaded, [], "store", "final_any_gold"))
    without_agents = {**before, "details": [{**entry, "arms": {"grep": entry["arms"]["grep"]}} if "grep" in entry["arms"] else entry
                                            for entry in before["details"]]}
    assert not any(line.startswith("trajectory") for line in history_lines([(loaded[0][0], without_agents)], [], "store"))


def test_the_history_page_plots_trajectory_metrics(runs, tmp_path: Path) -> None:
    """`history --html` adds final-any-gold (with its Wilson band) and a trajectory metric when a run has agents."""
    from pytest_retrieval_bench.history.page import render_history

    _, before, after, _ = runs
    loaded = [(SavedRun(tmp_path / f"{number:04d}.json", number, "nocommit", "20261206_000000", name, False), report)
              for number, name, report in ((1, "before", before), (2, "after", after))]
    html, _ = render_history(loaded, None, "runs")
    plots = [part for part in html.split("<h2>")[1:] if "<svg" in part]
    titles = [plot.split("</h2>")[0] for plot in plots]
    assert [title.split(" (")[0] for title in titles[-2:]] == ["final_any_gold", "final_file_f1"] and len(titles) == 5, titles
    hits = sum(row["final_any_gold"] for row in detail_metrics(after, "reader").values())
    wilson, f1 = plots[-2], plots[-1]
    assert wilson.count('class="band"') >= 1 and f"reader [agent] (S1): {hits / 28:.3f}</title>" in wilson, wilson[:400]
    mean = sum(row["final_file_f1"] for row in detail_metrics(after, "reader").values()) / 28
    assert f"reader [agent] (S1): {mean:.3f}</title>" in f1 and 'class="band"' not in f1
    assert "grep [ranked_top_2] (S1)" in f1
    supporting, _ = render_history(loaded, "final_supporting_file_f1", "runs")  # a metric only agents have: rankers draw no line at 0
    plot = [part for part in supporting.split("<h2>") if part.startswith("final_supporting_file_f1")][0]
    assert "reader [agent] (S1)" in plot and "[ranked_top_2]" not in plot
    chosen, _ = render_history(loaded, "final_any_gold", "runs")  # a trajectory metric asked for: the ranking plots keep hit@k
    assert [part.split("</h2>")[0].split(" (")[0] for part in chosen.split("<h2>")[1:] if "<svg" in part] == ["hit@20", "recall@10", "mrr@k", "final_any_gold"]
    without_agents = {**before, "details": [{**entry, "arms": {"grep": entry["arms"]["grep"]}} if "grep" in entry["arms"] else entry
                                            for entry in before["details"]]}
    plain, _ = render_history([(loaded[0][0], without_agents)], None, "runs")
    assert plain.count("<svg") == 3


def test_the_leaderboard_and_page_print_the_pairs(runs) -> None:
    """The section's pairs as a table of the leaderboard (text and Markdown) and of the page."""
    from pytest_retrieval_bench.report.html import render_html
    from pytest_retrieval_bench.report.trajectory_tables import trajectory_markdown, trajectory_text

    _, before, _, _ = runs
    lines = trajectory_text(before).splitlines()
    start = lines.index("Paired differences (agent minus the other, per sample with gold both scored)")
    rows = [line.split() for line in lines[start + 2:] if line.strip()]
    figures = before["trajectory"]["reader"]["paired"]["arb-closed-tool"]["final_file_f1"]
    row = next(row for row in rows if row[:3] == ["reader", "arb-closed-tool", "final_file_f1"])
    assert row[3:5] == [str(figures["n"]), f"{figures['mean_difference']:+.4f}"]
    assert sum(len(metrics) for block in before["trajectory"].values() for metrics in (block.get("paired") or {}).values()) == len(rows)
    assert "## Paired differences" in trajectory_markdown(before)
    assert "Paired differences (agent minus the other" in render_html(before)
