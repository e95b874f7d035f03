"""The same-budget contrast of the report's `trajectory` section against the bench's
`evaluate_ranked_context_as_trajectory` on the bundled release (`tests/fixtures/arb_closed_tool/
same_budget.json`): the plugin's `arb-lexical` and `arb-bm25` records, run in this process next to
the built-in agent, give the bench's own figures: its rankers keep given files, and so does the
contrast (R with the record's `given_ranks` put back), where R alone would differ exactly on the rows
whose top three held a given file. The agent's budget
curve is the bench's `report_closed_tool_budget_curve` (`budget_curve.json`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from report_helpers import scripted_agent_records

from pytest_retrieval_bench.arms.arb_reference import ArbReferenceArm
from pytest_retrieval_bench.bench.run import run_arm
from pytest_retrieval_bench.corpus.copies import PrivateCopies
from pytest_retrieval_bench.corpus.resolve import SnapshotResolver
from pytest_retrieval_bench.corpus.store import SnapshotStore
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.build import build_report, canonical_json, rounded
from pytest_retrieval_bench.report.merge import merge_reports, read_report
from pytest_retrieval_bench.report.same_budget import same_budget_sections
from pytest_retrieval_bench.report.trajectory_section import detail_row
from pytest_retrieval_bench.samples.load import load_samples
from pytest_retrieval_bench.scoring.trajectory_budget import budget_curve

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "testdata" / "release"
SAMPLES = RELEASE / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = RELEASE / "corpus" / "synthetic_v1"
EXPECTED = json.loads((ROOT / "tests" / "fixtures" / "arb_closed_tool" / "same_budget.json").read_text(encoding="utf-8"))["runs"]
AGENT = "arb-closed-tool"
RANKERS = ("arb-bm25", "arb-lexical")


def registration(arms: list[str]) -> dict[str, Any]:
    return {"limit": 20, "arms": arms, "arm_identities": {arm: f"builtin:{arm}:test" for arm in arms}}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[Any], list[dict[str, Any]]]]:
    base = tmp_path_factory.mktemp("copies")
    copies = PrivateCopies(base / "copies", owned_root=base / "copies")
    store = SnapshotStore(SnapshotResolver(corpus_dirs=[CORPUS]), copies, None)
    samples = [sample for sample in load_samples(SAMPLES).samples if not sample.skip_reason]
    records: list[dict[str, Any]] = []
    for sample, record in scripted_agent_records(samples, CORPUS):
        records += [record, *(run_arm(sample, ArbReferenceArm(name), store, 20) for name in RANKERS)]
    yield samples, records
    copies.cleanup()


@pytest.fixture(scope="module")
def report(run: tuple[list[Any], list[dict[str, Any]]]) -> dict[str, Any]:
    samples, records = run
    return build_report(registration=registration([AGENT, *RANKERS]), samples=samples, records=records, baselines=[], limit=20, with_folds=False)


@pytest.mark.parametrize("ranker", RANKERS)
def test_each_ranker_gets_the_bench_s_own_contrast(report: dict[str, Any], ranker: str) -> None:
    written = rounded(report["trajectory"][ranker]["same_budget"]["top_3"])
    expected = EXPECTED[ranker]["as_bench"]
    assert written == rounded({key: expected[key] for key in ("top_k", "evaluated", "skipped", "context", "metrics")})
    assert written["evaluated"] == 28 == report["trajectory"][AGENT]["evaluated"]


@pytest.mark.parametrize("ranker", RANKERS)
def test_given_files_come_back_where_the_ranker_put_them(report: dict[str, Any], ranker: str) -> None:
    removed = {row["sample_id"]: row for row in EXPECTED[ranker]["given_removed"]["details"]}
    kept = {row["sample_id"]: row for row in EXPECTED[ranker]["as_bench"]["details"]}
    differing = sorted(sample for sample in kept if kept[sample]["steps"] != removed[sample]["steps"])
    assert differing == EXPECTED[ranker]["given_in_top"] and differing  # the bundled release has such rows
    entries = {entry["id"]: entry for entry in report["details"]}
    for sample in differing:  # R is the bench's top files without the given ones; the contrast puts them back
        record = entries[sample]["arms"][ranker]
        assert [step["path"] for step in removed[sample]["steps"]] == record["ranking"][:3]
        assert set(record["given_ranks"]) & {step["path"] for step in kept[sample]["steps"]}


def test_a_run_without_agents_has_no_contrast(run: tuple[list[Any], list[dict[str, Any]]]) -> None:
    samples, records = run
    plain = [record for record in records if record["arm"] in RANKERS]
    assert "trajectory" not in build_report(registration=registration(list(RANKERS)), samples=samples, records=plain, baselines=[], limit=20,
                                            with_folds=False)
    assert same_budget_sections([], {}) == {}


def test_an_edited_contrast_figure_is_refused(report: dict[str, Any], tmp_path: Path) -> None:
    edited = json.loads(canonical_json(report))
    edited["trajectory"]["arb-bm25"]["same_budget"]["top_3"]["metrics"]["overall"]["final_file_f1"] += 0.1
    (tmp_path / "r.json").write_bytes(canonical_json(edited))
    with pytest.raises(BenchError, match=r"\$\.trajectory\['arb-bm25'\]\['same_budget'\]\['top_3'\]\['metrics'\]\['overall'\]\['final_file_f1'\]"):
        read_report(tmp_path / "r.json", sections=("trajectory",))


CURVE = json.loads((ROOT / "tests" / "fixtures" / "arb_closed_tool" / "budget_curve.json").read_text(encoding="utf-8"))["rows"]


def test_the_budget_curve_is_the_bench_s(report: dict[str, Any]) -> None:
    rows = [detail_row(entry, entry["arms"][AGENT]) for entry in sorted(report["details"], key=lambda entry: entry["id"])
            if AGENT in entry["arms"] and "detail" in entry["arms"][AGENT]["trajectory"]]
    # 2 to 16: the bench's scripted agent reads from its 10th call; means summed in sample-id order, the bench's in file order
    assert rounded(budget_curve(rows, [row["budget"] for row in CURVE])) == rounded(CURVE)
    assert rounded(report["trajectory"][AGENT]["budget_curve"]) == rounded(CURVE[:4])  # the bench's default budgets 2, 4, 6, 8
    with pytest.raises(ValueError, match="positive budget"):
        budget_curve(rows, [0])


def test_a_merge_of_two_parts_rebuilds_the_contrast(run: tuple[list[Any], list[dict[str, Any]]], report: dict[str, Any], tmp_path: Path) -> None:
    samples, records = run
    half = set(sorted(sample.id for sample in samples)[: len(samples) // 2])
    parts = []
    for name, keep in (("a", lambda sample_id: sample_id in half), ("b", lambda sample_id: sample_id not in half)):
        part = build_report(registration=registration([AGENT, *RANKERS]), samples=[s for s in samples if keep(s.id)],
                            records=[r for r in records if keep(r["sample_id"])], baselines=[], limit=20, with_folds=False)
        assert part["trajectory"]["arb-bm25"]["same_budget"]["top_3"]["evaluated"] < 28
        parts.append(tmp_path / f"{name}.json")
        parts[-1].write_bytes(canonical_json(part))
    merged = merge_reports(parts, known_arms=[AGENT, *RANKERS], baselines=[])
    assert rounded(merged["trajectory"]) == json.loads(canonical_json(report))["trajectory"]


def test_the_run_tables_show_each_agent_and_ranker_at_the_same_budget(run: tuple[list[Any], list[dict[str, Any]]]) -> None:
    """The trajectory overview a run prints: rebuilt from the records, it equals the section's figures
    (final-any-gold and its Wilson interval for the agent, the final files' F1 for every arm)."""
    from pytest_retrieval_bench.report.markdown import render as render_markdown
    from pytest_retrieval_bench.report.run_tables import report_lines

    samples, records = run
    report = build_report(registration=registration([AGENT, *RANKERS]), samples=samples, records=records, baselines=[], limit=20,
                          with_folds=False)
    lines = report_lines(report, 20, ["all"], None)
    start = next(index for index, line in enumerate(lines) if line.startswith("trajectory (group all; agents' final context"))
    header, rows = lines[start + 1].split(), {line.split()[0]: line.split() for line in lines[start + 2:start + 2 + 1 + len(RANKERS)]}
    assert header[:4] == ["arm", "source", "n", "final-any-gold"] and set(rows) == {AGENT, *RANKERS}
    section = report["trajectory"]
    agent = section[AGENT]
    wilson = agent["final_any_gold"]["wilson95"]
    assert rows[AGENT][1:6] == ["agent", str(agent["evaluated"]), f"{agent['final_any_gold']['rate']:.3f}", f"[{wilson[0]:.3f},", f"{wilson[1]:.3f}]"]
    for arm, row in rows.items():
        overall = agent["metrics"]["overall"] if arm == AGENT else section[arm]["same_budget"]["top_3"]["metrics"]["overall"]
        assert row[-3:] == [f"{overall[name]:.3f}" for name in ("final_file_recall", "final_file_precision", "final_file_f1")], arm
        assert arm == AGENT or row[1:3] == ["ranked_top_3", str(section[arm]["same_budget"]["top_3"]["evaluated"])]
    plain = build_report(registration=registration(list(RANKERS)), samples=samples, records=[r for r in records if r["arm"] in RANKERS],
                         baselines=[], limit=20, with_folds=False)
    assert not any(line.startswith("trajectory (") for line in report_lines(plain, 20, ["all"], None))
    # a ranker's errored sample: no context here (as the paired figures count it), left out of the section (as the bench leaves it)
    positive = {sample.id for sample in samples if sample.gold_files}
    errored = [r["sample_id"] for r in records if r["arm"] == RANKERS[0] and r["sample_id"] in positive][:5]
    broken = [{**r, "error": "boom", "ranking": []} if r["arm"] == RANKERS[0] and r["sample_id"] in errored else r for r in records]
    with_errors = build_report(registration=registration([AGENT, *RANKERS]), samples=samples, records=broken, baselines=[], limit=20,
                               with_folds=False)
    contrast = with_errors["trajectory"][RANKERS[0]]["same_budget"]["top_3"]
    lines = report_lines(with_errors, 20, ["all"], None)
    start = next(index for index, line in enumerate(lines) if line.startswith("trajectory (group all;"))
    row = next(line.split() for line in lines[start + 2:] if line.startswith(RANKERS[0] + " "))
    assert contrast["evaluated"] == agent["evaluated"] - 5 and row[2] == str(agent["evaluated"])
    assert row[-1] == f"{contrast['metrics']['overall']['final_file_f1'] * contrast['evaluated'] / agent['evaluated']:.3f}"
    no_gold = {sample.id for sample in samples if not sample.gold_files}
    only_no_gold = build_report(registration=registration([AGENT]), samples=[sample for sample in samples if sample.id in no_gold],
                                records=[r for r in records if r["arm"] == AGENT and r["sample_id"] in no_gold], baselines=[], limit=20,
                                with_folds=False)
    lines = report_lines(only_no_gold, 20, ["all"], None)
    start = next(index for index, line in enumerate(lines) if line.startswith("trajectory (group all;"))
    assert lines[start + 2].split() == [AGENT, "agent", "0", "-", "-", "-", "-", "-"]  # an agent with no sample with gold: n 0, nothing scored
    markdown = render_markdown(report, 20)  # the PR comment's summary has the same rows
    assert "Trajectory (agents' final context" in markdown and f"| arb-closed-tool | agent | {agent['evaluated']} | {rows[AGENT][3]} |" in markdown
    assert "Trajectory (" not in render_markdown(plain, 20)
