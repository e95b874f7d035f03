"""The report's `trajectory` section and agent records: built from the details alone, equal to the
bench's summaries on the bundled release, checked when read back, kept by a merge.

Records are made in this process (the agent item's own `run_agent_item` over each bundled snapshot),
so the report can be built, edited and merged without a pytest run.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from report_helpers import scripted_agent_records

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.build import build_report, canonical_json, rounded
from pytest_retrieval_bench.report.merge import merge_reports, read_report
from pytest_retrieval_bench.samples.load import load_samples

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "testdata" / "release"
SAMPLES = RELEASE / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = RELEASE / "corpus" / "synthetic_v1"
EXPECTED = json.loads((ROOT / "tests" / "fixtures" / "arb_closed_tool" / "closed_tool.json").read_text(encoding="utf-8"))["runs"]["default"]
AGENT = "arb-closed-tool"
REGISTRATION = {"limit": 20, "arms": [AGENT], "arm_identities": {AGENT: "builtin:arb-closed-tool:test"}}


@pytest.fixture(scope="module")
def samples() -> list[Any]:
    return [sample for sample in load_samples(SAMPLES).samples if not sample.skip_reason]


@pytest.fixture(scope="module")
def records(samples: list[Any]) -> list[dict[str, Any]]:
    return [record for _, record in scripted_agent_records(samples, CORPUS)]


def report_of(samples: list[Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    return build_report(registration=REGISTRATION, samples=samples, records=records, baselines=[], limit=20, with_folds=False)


def write(path: Path, report: dict[str, Any]) -> Path:
    path.write_bytes(canonical_json(report))
    return path


@pytest.fixture(scope="module")
def report(samples: list[Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    return report_of(samples, records)


def test_the_section_is_the_bench_s_summaries(report: dict[str, Any]) -> None:
    section = report["trajectory"][AGENT]
    assert rounded(section["metrics"]) == rounded(EXPECTED["metrics"])
    assert rounded(section["closed_tool_metrics"]) == rounded(EXPECTED["closed_tool_metrics"])
    assert section["evaluated"] == EXPECTED["evaluated"] == 28 and section["errors"] == 0
    assert section["no_gold"] == {"samples": 6, "abstentions": sum(1 for entry in report["details"] if entry["stratum"] != "positive"
                                                                   and entry["arms"][AGENT]["abstained"])}
    rate = EXPECTED["closed_tool_metrics"]["overall"]["final_any_gold_rate"]
    wilson = section["final_any_gold"]["wilson95"]
    assert section["final_any_gold"]["hits"] == round(rate * 28) and wilson[0] < rate < wilson[1]
    assert {key: section["budget"][key] for key in EXPECTED["budget"] if key in section["budget"]} == {
        key: value for key, value in EXPECTED["budget"].items() if key in section["budget"]}


def test_a_report_without_agent_records_has_no_section(samples: list[Any], records: list[dict[str, Any]]) -> None:
    plain = [{key: value for key, value in record.items() if key != "trajectory"} for record in records]
    assert "trajectory" not in report_of(samples, plain)


def test_the_written_report_reads_back_and_its_section_is_rebuilt_alike(report: dict[str, Any], tmp_path: Path) -> None:
    written = read_report(write(tmp_path / "r.json", report), sections=("summary", "paired", "trajectory"))
    assert written["trajectory"] == json.loads(canonical_json(report))["trajectory"]


def test_edited_trajectory_figures_are_refused(report: dict[str, Any], tmp_path: Path) -> None:
    edited = json.loads(canonical_json(report))
    entry = next(entry for entry in edited["details"] if "detail" in entry["arms"][AGENT]["trajectory"])
    entry["arms"][AGENT]["trajectory"]["detail"]["metrics"]["final_file_recall"] = 1.0 - entry["arms"][AGENT]["trajectory"]["detail"]["metrics"]["final_file_recall"]
    with pytest.raises(BenchError, match=r"trajectory\.detail\.metrics\['final_file_recall'\]: .* the record's steps and labels give"):
        read_report(write(tmp_path / "record.json", edited))
    section = json.loads(canonical_json(report))
    section["trajectory"][AGENT]["closed_tool_metrics"]["overall"]["mean_read_calls"] += 1
    write(tmp_path / "section.json", section)
    read_report(tmp_path / "section.json")  # a reader that does not show the section does not rebuild it
    with pytest.raises(BenchError, match=r"\$\.trajectory\['arb-closed-tool'\]\['closed_tool_metrics'\]\['overall'\]\['mean_read_calls'\]"):
        read_report(tmp_path / "section.json", sections=("trajectory",))
    shape = copy.deepcopy(json.loads(canonical_json(report)))
    shape["details"][0]["arms"][AGENT]["trajectory"]["steps"] = "none"
    with pytest.raises(BenchError, match=r"\.trajectory: expected an agent's trajectory"):
        read_report(write(tmp_path / "shape.json", shape))


def test_a_merge_of_two_parts_keeps_the_section(samples: list[Any], records: list[dict[str, Any]], report: dict[str, Any], tmp_path: Path) -> None:
    ids = sorted(record["sample_id"] for record in records)
    half = set(ids[: len(ids) // 2])
    first = write(tmp_path / "a.json", report_of([s for s in samples if s.id in half], [r for r in records if r["sample_id"] in half]))
    second = write(tmp_path / "b.json", report_of([s for s in samples if s.id not in half], [r for r in records if r["sample_id"] not in half]))
    merged = merge_reports([first, second], known_arms=[AGENT], baselines=[])
    assert rounded(merged["trajectory"]) == json.loads(canonical_json(report))["trajectory"]
