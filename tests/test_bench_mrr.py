"""The bench's own per-sample numbers beside the cut ones: `mrr` over the arm's whole ranking (given
files removed) with its uncut rank, and `gold_coverage@8k`; how a report holding them is checked,
paired, gated, diffed and exported, and how a report written before them still reads."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.arms.base import Answer
from pytest_retrieval_bench.bench.run import score
from pytest_retrieval_bench.cli import main
from pytest_retrieval_bench.report.build import build_report, canonical_json
from pytest_retrieval_bench.report.derived_check import derived_problem
from pytest_retrieval_bench.report.export import export, flat_rows
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.gate import check_compatible, compare, parse_rule
from pytest_retrieval_bench.report.recompute import recomputation_problem
from pytest_retrieval_bench.report.schema import report_problem
from pytest_retrieval_bench.samples.arb import parse_arb_row
from pytest_retrieval_bench.scoring.budgets import TokenCounts
from pytest_retrieval_bench.scoring import metrics as scoring

ROOT = Path(__file__).resolve().parent.parent
OLD_REPORT = ROOT / "tests" / "fixtures" / "arb_real" / "report_gin_clap.json"


def _sample(gold: list[str], given: list[str] | None = None, sample_id: str = "s1", task: str = "code2test") -> Any:
    row = {"id": sample_id, "task_type": task, "repo": "o/r", "base_commit": "a" * 40, "query": {"t": sample_id},
           "gold": {"files": gold, **({"given_files": given} if given else {})}}
    return parse_arb_row(row, "samples.jsonl", 1)


def _paths(count: int) -> list[str]:
    return [f"f{index:03d}.py" for index in range(count)]


def test_mrr_reads_the_whole_ranking_where_mrr_at_k_stops_at_the_limit() -> None:
    ranking = _paths(30)
    sample = _sample(gold=["f024.py", "f027.py"])
    scored = score(sample, Answer(ranking=ranking), None, 20)
    assert scored["ranking"] == ranking[:20] and scored["rank_of_first_gold"] is None
    assert scored["rank_of_first_gold_uncut"] == 25 and scored["metrics"]["mrr"] == 1 / 25
    assert scored["metrics"]["mrr@k"] == 0.0 and scored["metrics"]["recall@20"] == 0.0


def test_given_files_are_removed_before_the_whole_rank_and_repeats_count_once() -> None:
    sample = _sample(gold=["f005.py"], given=["f000.py", "f001.py"])
    ranking = ["f000.py", "f002.py", "f002.py", "f001.py", "f003.py", "f005.py"]
    scored = score(sample, Answer(ranking=ranking), None, 2)
    assert scored["ranking"] == ["f002.py", "f003.py"]
    assert scored["rank_of_first_gold_uncut"] == 3 and scored["metrics"]["mrr"] == pytest.approx(1 / 3)


def test_mrr_given_kept_is_the_bench_s_published_mrr_and_is_checked() -> None:
    """The bench's rankings keep given files: a reviewed file that is also gold ranks first there."""
    sample = _sample(gold=["f001.py", "f009.py"], given=["f001.py", "f003.py"], task="comment2context")
    ranking = ["f001.py", "f002.py", "f003.py", "f009.py"]
    scored = score(sample, Answer(ranking=ranking), None, 20)
    assert scored["given_ranks"] == {"f001.py": 1, "f003.py": 3}
    assert scored["metrics"]["mrr"] == 0.5 and scored["metrics"]["mrr_given_kept"] == 1.0  # f009.py second without givens
    moved = score(sample, Answer(ranking=["f002.py", "f003.py", "f009.py", "f001.py"]), None, 20)
    assert moved["metrics"]["mrr"] == 0.5 and moved["metrics"]["mrr_given_kept"] == pytest.approx(1 / 3)  # a given file ahead shifts it
    assert "given_ranks" not in score(_sample(gold=["f001.py"]), Answer(ranking=ranking), None, 20)
    report = json.loads(canonical_json(build_report({"limit": 20, "arms": ["a"]}, [sample], [{"sample_id": sample.id, "arm": "a", "wall_ms": 1.0,
                                                                                              "query_chars": 3, "query_truncated": False, **moved}],
                                                    [], 20, False)))
    assert recomputation_problem(report) is None
    report["details"][0]["arms"]["a"]["given_ranks"]["f003.py"] = 4  # now behind the gold file: the written 1/3 is contradicted
    assert "mrr_given_kept" in recomputation_problem(report)


def test_a_miss_an_error_and_a_no_gold_sample() -> None:
    sample = _sample(gold=["gold.py"])
    miss = score(sample, Answer(ranking=_paths(40)), None, 20)
    assert miss["rank_of_first_gold_uncut"] is None and miss["metrics"]["mrr"] == 0.0  # the bench: 0 without gold in the ranking
    failed = score(sample, None, "arm failed", 20)
    assert failed["rank_of_first_gold_uncut"] is None and failed["metrics"]["mrr"] == 0.0
    no_gold = parse_arb_row({"id": "n", "task_type": "abstention", "repo": "o/r", "base_commit": "a" * 40, "query": {},
                             "gold": {"no_gold": True}}, "samples.jsonl", 1)
    answered = score(no_gold, Answer(ranking=["x.py"]), None, 20)
    assert answered["metrics"] == {} and answered["rank_of_first_gold_uncut"] is None


TEXTS = {"a.py": "x" * 5000, "gold1.py": "y" * 2000, "b.py": "z" * 2000, "gold2.py": "", "gold3.py": "w" * 10}


def test_gold_coverage_packs_file_texts_by_characters_as_the_bench_does() -> None:
    text = TEXTS.get
    # 5000 + 2000 fit 8000; b.py (2000) does not, and packing stops there: gold2.py after it is not reached
    assert scoring.gold_coverage(["a.py", "gold1.py", "b.py", "gold2.py"], ["gold1.py", "gold2.py"], text) == 0.5
    # an empty text weighs as its path (8 characters); the first file goes in even past the budget
    assert scoring.gold_coverage(["a.py", "gold1.py", "gold2.py", "b.py"], ["gold1.py", "gold2.py"], text) == 1.0
    assert scoring.gold_coverage(["huge.py", "gold3.py"], ["gold3.py"], {"huge.py": "q" * 9000, "gold3.py": "w"}.get) == 0.0
    assert scoring.gold_coverage(["gold3.py"], ["gold3.py"], {"gold3.py": "w" * 9000}.get) == 1.0
    assert scoring.gold_coverage([], ["gold3.py"], text) == 0.0


def test_gold_coverage_is_recorded_over_the_whole_ranking_past_the_limit() -> None:
    texts = {path: "t" for path in _paths(30)}
    sample = _sample(gold=["f025.py"])
    scored = score(sample, Answer(ranking=_paths(30)), None, 20, texts.get, TokenCounts(texts.get))
    assert scored["metrics"]["gold_coverage@8k"] == 1.0 and scored["metrics"]["bcy@8000"] == 0.0  # BCY packs R only
    errored = score(sample, None, "boom", 20, texts.get, TokenCounts(texts.get))
    assert errored["metrics"]["gold_coverage@8k"] == 0.0


# -- a report holding them -------------------------------------------------------------------------


RANKS = {"s0": (2, 3), "s1": (3, 6), "s2": (6, None), "s3": (2, 3)}
"""(cut, deep) rank of each sample's gold file at limit 5: every MRR difference cut - deep is 1/6,
computed from a different pair of reciprocals (1/2 - 1/3, 1/3 - 1/6, 1/6 - 0)."""


def _report(limit: int = 5, ranks: dict[str, tuple[int | None, int | None]] = RANKS) -> dict[str, Any]:
    """Two arms over four samples, each ranking its sample's gold file at the rank `ranks` gives (None: nowhere)."""
    samples = [_sample(gold=[f"g{i}.py"], sample_id=f"s{i}") for i in range(4)]
    records = []
    for sample in samples:
        for arm, rank in zip(("cut", "deep"), ranks[sample.id]):
            filler = [f"x{i}.py" for i in range(12)]
            ranking = filler if rank is None else filler[: rank - 1] + [sample.gold_files[0]] + filler[rank - 1:]
            records.append({"sample_id": sample.id, "arm": arm, "wall_ms": 1.0, "query_chars": 3, "query_truncated": False,
                            **score(sample, Answer(ranking=ranking), None, limit)})
    report = build_report({"limit": limit, "arms": ["cut", "deep"]}, samples, records, ["deep"], limit, False)
    return json.loads(canonical_json(report))


def test_the_report_records_mrr_pairs_it_exactly_and_checks_clean() -> None:
    report = _report()
    record = report["details"][2]["arms"]["cut"]
    assert record["rank_of_first_gold"] is None and record["rank_of_first_gold_uncut"] == 6 and record["metrics"]["mrr"] == 0.166667
    assert report["summary"]["all"]["cut"]["metrics"]["mrr"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 6 + 1 / 2) / 4, abs=1e-6)
    paired = report["paired"]["all"]["cut vs deep"]["mrr"]
    assert paired["n"] == 4 and paired["mean_difference"] == pytest.approx(1 / 6, abs=1e-6)
    assert paired["t_test"]["t"] is None and paired["t_test"]["p"] == 0.0  # four deltas of 1/6 from different bases: constant
    assert report_problem(report) is None and recomputation_problem(report) is None
    assert derived_problem(report, ("summary", "paired")) is None


@pytest.mark.parametrize("edit, message", [
    (lambda record: record["metrics"].update(mrr=0.5), "metrics['mrr']: 0.5 is written, but the record's rank_of_first_gold_uncut (6) gives 0.166667"),
    (lambda record: record.update(rank_of_first_gold_uncut=4), "rank_of_first_gold_uncut: 4 is written, but the record's ranking (5 of at most 5"),
    (lambda record: record.update(rank_of_first_gold_uncut=0), "rank_of_first_gold_uncut: 0 is not a rank"),
    (lambda record: record.update(rank_of_first_gold_uncut="6"), "rank_of_first_gold_uncut: expected null or a whole number"),
])
def test_an_edited_whole_rank_or_mrr_is_refused_with_its_json_path(edit: Any, message: str) -> None:
    report = _report()
    edit(report["details"][2]["arms"]["cut"])
    problem = report_problem(report) or recomputation_problem(report)
    assert problem is not None and message in problem and "$.details[2].arms['cut']" in problem


def test_a_whole_rank_that_contradicts_the_cut_ranking_is_refused() -> None:
    report = _report()
    report["details"][0]["arms"]["cut"]["rank_of_first_gold_uncut"] = 3  # its ranking has the gold file at 2
    assert "the record's ranking puts the first gold file at 2" in recomputation_problem(report)


def test_a_report_written_before_mrr_still_reads_and_diffs_against_a_new_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = json.loads(OLD_REPORT.read_text())
    assert not any("mrr" in record["metrics"] for entry in old["details"] for record in entry["arms"].values())
    assert report_problem(old) is None and recomputation_problem(old) is None and derived_problem(old, ("summary", "paired")) is None
    new = copy.deepcopy(old)  # the same report as this version writes it: the whole rank is R's where R has gold, else past the limit
    for entry in new["details"]:
        for record in entry["arms"].values():
            if entry["stratum"] == "positive":
                rank = record["rank_of_first_gold"]
                record["rank_of_first_gold_uncut"] = rank
                record["metrics"]["mrr"] = record["metrics"]["mrr@k"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(canonical_json(new).decode())
    assert main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0
    out = capsys.readouterr().out
    assert " mrr@k " in out and " mrr " not in out  # mrr pairs only where both reports carry it
    assert main(["leaderboard", str(tmp_path / "old.json")]) == 0
    assert "MRR@20 stands in its place" in capsys.readouterr().out


LOST_PAST_THE_LIMIT = {**RANKS, "s2": (None, None)}
"""cut loses the gold file it ranked past the limit: its MRR falls, its MRR@k does not."""


def test_history_follows_mrr_where_mrr_at_k_stays_flat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from datetime import datetime

    from pytest_retrieval_bench.history.store import save_run

    for day, report in ((1, _report()), (2, _report(ranks=LOST_PAST_THE_LIMIT))):
        save_run(tmp_path, canonical_json(report), f"day{day}", None, datetime(2026, 1, day))
    for metric, change in (("mrr", "-0.042"), ("mrr@k", "+0.000")):
        assert main(["history", "--storage", str(tmp_path), "--metric", metric]) == 0
        rows = [line.split() for line in capsys.readouterr().out.splitlines() if " cut " in line]
        assert len(rows) == 2 and change in rows[1], rows


def test_the_gate_reads_mrr_and_refuses_it_against_a_baseline_without_it() -> None:
    rule = parse_rule("mrr>=-0.01:arm=cut")
    assert rule.metric == "mrr" and parse_rule("noregression:gold_coverage@8k>=-0.1").metric == "gold_coverage@8k"
    before, after = _report(), _report(ranks=LOST_PAST_THE_LIMIT)
    section = compare(after, before, [rule, parse_rule("mrr@k>=-0.01:arm=cut")])
    by_metric = {result["metric"]: result for result in section["rules"]}
    assert by_metric["mrr"]["mean_difference"] == pytest.approx(-0.166667 / 4, abs=1e-6)
    assert by_metric["mrr@k"]["mean_difference"] == 0.0
    old = json.loads(OLD_REPORT.read_text())
    with pytest.raises(BenchError, match="no baseline record has the metric 'mrr'"):
        check_compatible(old["registration"], old, ["bm25:all"], [parse_rule("mrr>=-0.01")])


def test_csv_and_jsonl_exports_carry_mrr_and_the_whole_rank() -> None:
    rows = flat_rows(_report(), ["cut"])
    assert [(row["sample_id"], row["rank_of_first_gold_uncut"], row["mrr"]) for row in rows][:3] == [("s0", 2, 0.5), ("s1", 3, 0.333333),
                                                                                                   ("s2", 6, 0.166667)]
    header = export(_report(), "csv", ["cut"]).splitlines()[0].split(",")
    assert header[:7] == ["sample_id", "arm", "repo", "task_type", "stratum", "rank_of_first_gold", "rank_of_first_gold_uncut"]
    assert "mrr" in header and "gold_coverage@8k" not in header  # no snapshot text here: no coverage
