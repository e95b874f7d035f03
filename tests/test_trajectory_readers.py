"""The readers of the `trajectory` section: `retrieval-bench leaderboard` prints it in the bench's
V1.4 layout (and refuses a figure the details contradict), `retrieval-bench export` carries the
trajectory metrics; reports without agent arms read as before. The report is the bundled release
run in this process (`test_same_budget.run`): the built-in agent beside `arb-bm25` and `arb-lexical`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import CHROMIUM, layout_at

from pytest_retrieval_bench.cli import main as cli_main
from pytest_retrieval_bench.report.build import build_report, canonical_json
from test_same_budget import AGENT, EXPECTED, RANKERS, registration, run  # noqa: F401  (run: the shared module fixture)


@pytest.fixture(scope="module")
def written(run: tuple[list[Any], list[dict[str, Any]]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    samples, records = run
    folder = tmp_path_factory.mktemp("reports")
    paths = {}
    for name, arms in (("agents", [AGENT, *RANKERS]), ("plain", list(RANKERS))):
        report = build_report(registration=registration(arms), samples=samples, records=[r for r in records if r["arm"] in arms], baselines=[],
                              limit=20, with_folds=False)
        paths[name] = folder / f"{name}.json"
        paths[name].write_bytes(canonical_json(report))
    return paths


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_leaderboard_prints_the_trajectory_tables_in_the_bench_s_layout(written: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                                                              tmp_path: Path) -> None:
    assert cli_main(["leaderboard", str(written["agents"]), "--markdown", str(tmp_path / "board.md")]) == 0
    out = capsys.readouterr().out
    section = _read(written["agents"])["trajectory"]
    overall = section[AGENT]["metrics"]["overall"]
    track = next(line for line in out.splitlines() if line.split()[:2] == ["overall", AGENT])
    assert track.split()[2:] == [str(overall["samples"]), *(f"{overall[name]:.4f}" for name in
                                 ("final_file_recall", "final_file_precision", "final_file_f1")), "-", f"{overall['trajectory_redundancy']:.4f}",
                                 f"{section[AGENT]['closed_tool_metrics']['overall']['mean_read_calls']:.3f}",
                                 f"{section[AGENT]['average_final_files']['overall']:.3f}"]
    for ranker in RANKERS:
        expected = EXPECTED[ranker]["as_bench"]
        row = next(line for line in out.splitlines() if line.startswith(f"{ranker}@3 final context")).split()[3:]
        tasks = ["code2test", "comment2context", "trace2code", "testlog2code", "edit2ripple"]  # the bench's order, then the rest
        assert sorted(tasks) == sorted(task for task in expected["metrics"] if task != "overall")
        assert row == ["3.00", f"{expected['metrics']['overall']['final_file_f1']:.4f}",
                       *(f"{expected['metrics'][task]['final_file_f1']:.4f}" for task in tasks), "-"]
    curve = section[AGENT]["budget_curve"][-1]
    assert next(line for line in out.splitlines() if line.split()[:2] == [AGENT, "8"]).split()[2:5] == [
        str(curve["evaluated"]), f"{curve['metrics']['overall']['final_file_f1']:.4f}", f"{curve['metrics']['overall']['final_file_recall']:.4f}"]
    markdown = (tmp_path / "board.md").read_text(encoding="utf-8")
    assert "## Same-budget final-context contrast" in markdown
    assert "| Method | Avg final files | Overall F1 |" in markdown and f"| {RANKERS[0]}@3 final context | 3.00 |" in markdown


def test_a_report_without_agents_prints_the_leaderboard_alone(written: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["leaderboard", str(written["plain"])]) == 0
    out = capsys.readouterr().out
    assert "trajectory" not in out.lower() and "arb-bm25" in out


def test_the_leaderboard_refuses_an_edited_trajectory_figure(written: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = _read(written["agents"])
    report["trajectory"][AGENT]["average_final_files"]["overall"] += 0.5
    (tmp_path / "edited.json").write_bytes(canonical_json(report))
    assert cli_main(["leaderboard", str(tmp_path / "edited.json")]) == 2
    assert "$.trajectory['arb-closed-tool']['average_final_files']['overall']" in capsys.readouterr().err


@pytest.mark.parametrize("form", ["csv", "jsonl"])
def test_export_rows_carry_the_trajectory_metrics(written: dict[str, Path], tmp_path: Path, form: str) -> None:
    out = tmp_path / f"rows.{form}"
    assert cli_main(["export", str(written["agents"]), "--format", form, "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text))) if form == "csv" else [json.loads(line) for line in text.splitlines()]
    by_key = {(row["sample_id"], row["arm"]): row for row in rows}
    entries = {entry["id"]: entry for entry in _read(written["agents"])["details"]}
    agent_rows = [(sample, entry["arms"][AGENT]) for sample, entry in entries.items() if "detail" in entry["arms"][AGENT]["trajectory"]]
    assert len(agent_rows) == 28
    for sample, record in agent_rows:
        row, detail = by_key[(sample, AGENT)], record["trajectory"]["detail"]
        assert row["trajectory_source"] == "agent"
        assert float(row["final_file_f1"]) == pytest.approx(detail["metrics"]["final_file_f1"], abs=1e-6)
        assert int(row["read_calls"]) == detail["closed_tool"]["read_calls"]
    for ranker in RANKERS:
        expected = EXPECTED[ranker]["as_bench"]["details"]
        assert len(expected) == 28
        for detail in expected:
            row = by_key[(detail["sample_id"], ranker)]
            assert row["trajectory_source"] == "ranked_top_3" and int(row["final_files"]) == len(detail["steps"])
            assert float(row["final_file_f1"]) == pytest.approx(detail["metrics"]["final_file_f1"], abs=1e-9)
    no_gold = [sample for sample, entry in entries.items() if "detail" not in entry["arms"][AGENT]["trajectory"]]
    assert no_gold and all(by_key[(sample, AGENT)].get("trajectory_source") in (None, "") for sample in no_gold)


def test_export_of_a_report_without_agents_has_no_trajectory_columns(written: dict[str, Path], tmp_path: Path) -> None:
    assert cli_main(["export", str(written["plain"]), "--format", "csv", "-o", str(tmp_path / "rows.csv")]) == 0
    header = (tmp_path / "rows.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert "trajectory_source" not in header and "final_file_f1" not in header and "recall@5" in header


def test_the_page_shows_the_tables_and_each_agent_trajectory(written: dict[str, Path], tmp_path: Path) -> None:
    assert cli_main(["html", str(written["agents"]), "-o", str(tmp_path / "agents.html")]) == 0
    page = (tmp_path / "agents.html").read_text(encoding="utf-8")
    report = _read(written["agents"])
    assert '<a href="#trajectory">Trajectory</a>' in page and page.index('id="trajectory"') < page.index('id="paired"')
    overall = report["trajectory"][AGENT]["metrics"]["overall"]
    assert f'<td class="arm">{AGENT}</td>' in page and f'>{overall["final_file_f1"]:.4f}<' in page
    assert "arb-bm25@3 final context" in page
    entry = next(entry for entry in report["details"] if entry["arms"][AGENT]["trajectory"].get("final_gold"))
    trajectory = entry["arms"][AGENT]["trajectory"]
    sample = page[page.index(f"<code>{entry['id']}</code>"):]
    block = sample[sample.index('<details class="traj">'):sample.index("</details>", sample.index('<details class="traj">'))]
    assert block.count("<li") == len(trajectory["calls"])
    reads = [call["path"] for call in trajectory["calls"] if call["tool"] == "read_file" and not call["refusal"]]
    assert [call["tool"] for call in trajectory["calls"]][-1] == "submit"
    positions = [block.index(f"read_file {path} ") for path in reads]
    assert positions == sorted(positions)  # in order
    for path in reads:
        marked = '<li class="gold">' in block and f"★ read_file {path} " in block
        assert marked == (path in entry["gold"] or path in trajectory["detail"]["gold_files"])
    assert cli_main(["html", str(written["plain"]), "-o", str(tmp_path / "plain.html")]) == 0
    plain = (tmp_path / "plain.html").read_text(encoding="utf-8")
    assert 'id="trajectory"' not in plain and 'class="traj"' not in plain


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium or chromium-browser binary on PATH (apt-get install chromium)")
def test_the_page_with_trajectories_open_fits_a_420_px_screen(written: dict[str, Path], tmp_path: Path) -> None:
    assert cli_main(["html", str(written["agents"]), "-o", str(tmp_path / "agents.html")]) == 0
    page = (tmp_path / "agents.html").read_text(encoding="utf-8")
    opened = page.replace('<details class="sample"', '<details open class="sample"').replace('<details class="traj">', '<details open class="traj">')
    assert opened.count('<details open class="traj">') == 34
    (tmp_path / "open.html").write_text(opened, encoding="utf-8")
    layout = layout_at(tmp_path / "open.html", 420)
    assert layout.client_width == 420 and layout.scroll_width <= 420, layout
    assert layout.overflowing == [], layout
