"""`retrieval-bench diff` (read-only, every arm both reports hold) and `retrieval-bench export`
(TREC run, qrels, CSV, JSONL), the exports checked against ranx as an independent oracle."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from report_helpers import SHIFTED_ARM

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / "testdata" / "release"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"

ARMS = SHIFTED_ARM + """

import pytest
import pytest_retrieval_bench


@pytest_retrieval_bench.arm("cut")
@pytest.mark.parametrize("size", [3, 8])
def cut(bench_request, size):
    return list(BM25Arm("all").retrieve(bench_request).ranking)[:size]
"""


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("retrieval-bench")
    return subprocess.run([str(script), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """before.json (mine = bm25) and after.json (mine with its first answer moved last), both with grep and cut's variants."""
    directory = tmp_path_factory.mktemp("diff")
    shutil.copytree(RELEASE, directory / "release")
    for name, shift in (("before", 0), ("after", 1)):
        (directory / "conftest.py").write_text(ARMS.format(shift=shift))
        pages = [f"--bench-html=pages/{name}.html", f"--bench-markdown=pages/{name}.md"] if name == "after" else []
        run = subprocess.run([sys.executable, "-m", "pytest", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep,mine,cut",
                              f"--bench-report={name}.json", "-q", "-p", "no:cacheprovider", *pages], cwd=directory, check=True, capture_output=True,
                             text=True, timeout=300)
        (directory / f"{name}.out").write_text(run.stdout)
    return directory


def _records(report: dict, arm: str) -> dict[str, dict]:
    return {entry["id"]: entry["arms"][arm] for entry in report["details"] if arm in entry["arms"] and entry["stratum"] == "positive"}


def test_diff_prints_every_shared_arm_and_writes_nothing(reports: Path) -> None:
    before_listing = sorted(path.name for path in reports.iterdir())
    result = _cli("diff", "before.json", "after.json", cwd=reports)
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in reports.iterdir()) == before_listing  # nothing written
    rows = [line.split() for line in result.stdout.splitlines()[1:] if line.split()[:1] and line.split()[0] in ("grep", "mine", "cut[3]", "cut[8]")]
    assert {row[0] for row in rows} == {"grep", "mine", "cut[3]", "cut[8]"}  # fixture-arm variants without --arm
    before, after = (json.loads((reports / f"{name}.json").read_text()) for name in ("before", "after"))
    old, new = _records(before, "mine"), _records(after, "mine")
    diffs = [new[i]["metrics"]["recall@10"] - old[i]["metrics"]["recall@10"] for i in sorted(old)]
    row = next(row for row in rows if row[:2] == ["mine", "recall@10"])
    assert int(row[2]) == len(diffs) and float(row[3]) == pytest.approx(sum(diffs) / len(diffs), abs=5e-4)
    wins, losses, ties = (int(part) for part in row[-1].split("/"))
    assert (wins, losses, ties) == (sum(d > 0 for d in diffs), sum(d < 0 for d in diffs), sum(d == 0 for d in diffs))
    grep = next(row for row in rows if row[:2] == ["grep", "recall@10"])
    assert grep[3] == "+0.000" and grep[-1] == f"0/0/{len(diffs)}"  # an unchanged arm
    regressions = [line for line in result.stdout.splitlines() if line.startswith("  regressed ")]
    assert regressions and regressions[0].endswith("is now a miss")  # worst first: a hit that became a miss


def test_diff_selects_an_arm_a_group_and_prints_markdown(reports: Path) -> None:
    only = _cli("diff", "before.json", "after.json", "--arm", "cut", "--group", "task:code2test", cwd=reports)
    assert only.returncode == 0, only.stderr
    arms = {line.split()[0] for line in only.stdout.splitlines()[2:] if line.split() and "@" in line}
    assert arms == {"cut[3]", "cut[8]"} and "group task:code2test" in only.stdout.splitlines()[0]
    markdown = _cli("diff", "before.json", "after.json", "--markdown", cwd=reports)
    assert markdown.returncode == 0 and "| arm | metric | n | mean | bootstrap 95% | verdict | wins/losses/ties |" in markdown.stdout
    assert "| mine | recall@10 |" in markdown.stdout and "<details><summary>per-sample changes, worst first</summary>" in markdown.stdout
    unknown = _cli("diff", "before.json", "after.json", "--arm", "nowhere", cwd=reports)
    assert unknown.returncode == 2 and "neither report holds it" in unknown.stderr


@pytest.mark.parametrize("arm", ["mine", "grep", "cut[3]"])
def test_the_trec_export_and_qrels_give_the_reports_metrics_back_through_ranx(reports: Path, arm: str) -> None:
    ranx = pytest.importorskip("ranx")
    assert _cli("export", "after.json", "--format", "trec", "--arm", arm, "-o", "run.trec", cwd=reports).returncode == 0
    assert _cli("export", "after.json", "--format", "qrels", "-o", "qrels.trec", cwd=reports).returncode == 0
    qrels = ranx.Qrels.from_file(str(reports / "qrels.trec"), kind="trec")
    run = ranx.Run.from_file(str(reports / "run.trec"), kind="trec")
    ranx.evaluate(qrels, run, ["recall@10", "hit_rate@10", "mrr@20", "recall@5"], make_comparable=True)
    records = _records(json.loads((reports / "after.json").read_text()), arm)
    assert set(run.scores["recall@10"]) == set(records)  # every positive sample, abstentions as empty results
    for sample_id, record in records.items():
        metrics = record["metrics"]
        assert run.scores["recall@10"][sample_id] == pytest.approx(metrics["recall@10"], abs=1e-6), sample_id
        assert run.scores["recall@5"][sample_id] == pytest.approx(metrics["recall@5"], abs=1e-6), sample_id
        assert run.scores["hit_rate@10"][sample_id] == metrics["hit@10"], sample_id
        assert run.scores["mrr@20"][sample_id] == pytest.approx(metrics["mrr@k"], abs=1e-6), sample_id


@pytest.mark.parametrize("arm", ["grep", "mine"])
def test_ranx_reads_the_exports_as_they_are_and_gives_the_reports_means(reports: Path, arm: str) -> None:
    ranx = pytest.importorskip("ranx")
    for form, name in (("trec", "plain.trec"), ("qrels", "plain-qrels.trec")):
        assert _cli("export", "after.json", "--format", form, "--arm", arm, "-o", name, cwd=reports).returncode == 0
    qrels, run = ranx.Qrels.from_file(str(reports / "plain-qrels.trec")), ranx.Run.from_file(str(reports / "plain.trec"))
    names = ["recall@5", "recall@10", "hit_rate@10", "mrr@20", "ndcg@10"]
    means = ranx.evaluate(qrels, run, names)  # no make_comparable: the files hold the same samples
    report = json.loads((reports / "after.json").read_text())
    summary = report["summary"]["all"][arm]["metrics"]
    for ours, theirs in (("recall@5", "recall@5"), ("recall@10", "recall@10"), ("hit@10", "hit_rate@10"), ("mrr@k", "mrr@20"),
                         ("ndcg@10", "ndcg@10")):
        assert means[theirs] == pytest.approx(summary[ours], abs=1e-6), ours
    no_gold = {entry["id"] for entry in report["details"] if entry["stratum"] != "positive"}
    assert no_gold and not no_gold & set(run.run)
    unranked = [entry["id"] for entry in report["details"] if entry["stratum"] == "positive" and arm in entry["arms"]
                and not entry["arms"][arm]["ranking"]]
    assert sorted(qid for qid, docs in run.run.items() if "/NO_RANKING" in docs) == sorted(unranked)


def test_ranx_counts_an_abstention_and_an_error_as_the_report_does(tmp_path: Path) -> None:
    """A positive sample the arm ranked nothing for scores zero in the report: its one `/NO_RANKING` line keeps it in ranx's mean."""
    ranx = pytest.importorskip("ranx")
    from pytest_retrieval_bench.arms.base import Answer
    from pytest_retrieval_bench.bench.run import score
    from pytest_retrieval_bench.report.build import build_report, canonical_json
    from pytest_retrieval_bench.report.export import export
    from pytest_retrieval_bench.samples.arb import parse_arb_row

    rows = [{"id": f"p{i}", "task_type": "code2test", "repo": "o/r", "base_commit": "a" * 40, "query": {"q": i}, "gold": {"files": [f"g{i}.py"]}}
            for i in range(4)]
    rows.append({"id": "n0", "task_type": "abstention", "repo": "o/r", "base_commit": "a" * 40, "query": {}, "gold": {"no_gold": True}})
    samples = [parse_arb_row(row, "samples.jsonl", number) for number, row in enumerate(rows, start=1)]
    answers = {"p0": (Answer(ranking=["x.py", "g0.py"]), None), "p1": (Answer(ranking=["g1.py"]), None), "p2": (Answer(ranking=[]), None),
               "p3": (None, "arm failed"), "n0": (Answer(ranking=["x.py"]), None)}
    records = [{"sample_id": sample.id, "arm": "a", "wall_ms": 1.0, **score(sample, *answers[sample.id], 20)} for sample in samples]
    report = json.loads(canonical_json(build_report({"limit": 20, "arms": ["a"]}, samples, records, [], 20, False)))
    (tmp_path / "run.trec").write_text(export(report, "trec"))
    (tmp_path / "qrels.trec").write_text(export(report, "qrels"))
    assert [line.split()[:3] for line in (tmp_path / "run.trec").read_text().splitlines()] == [
        ["p0", "Q0", "x.py"], ["p0", "Q0", "g0.py"], ["p1", "Q0", "g1.py"], ["p2", "Q0", "/NO_RANKING"], ["p3", "Q0", "/NO_RANKING"]]
    means = ranx.evaluate(ranx.Qrels.from_file(str(tmp_path / "qrels.trec")), ranx.Run.from_file(str(tmp_path / "run.trec")),
                          ["recall@10", "mrr@20"])
    summary = report["summary"]["all"]["a"]["metrics"]
    assert means == pytest.approx({"recall@10": summary["recall@10"], "mrr@20": summary["mrr@k"]}, abs=1e-6)
    assert summary["recall@10"] == 0.5 and summary["mrr@k"] == 0.375  # (1/2 + 1) / 4: the abstention and the error count


def test_a_trec_run_holds_one_arm_and_all_samples_adds_the_no_gold_ones(reports: Path) -> None:
    several = _cli("export", "after.json", "--format", "trec", "-o", "all.trec", cwd=reports)
    assert several.returncode == 2 and "holds one arm's rankings" in several.stderr and "grep, mine" in several.stderr
    variants = _cli("export", "after.json", "--format", "trec", "--arm", "cut", "-o", "all.trec", cwd=reports)
    assert variants.returncode == 2 and "cut[3], cut[8]" in variants.stderr
    assert _cli("export", "after.json", "--format", "trec", "--arm", "mine", "--all-samples", "-o", "all.trec", cwd=reports).returncode == 0
    report = json.loads((reports / "after.json").read_text())
    ranked = {entry["id"] for entry in report["details"] if "mine" in entry["arms"] and entry["arms"]["mine"]["ranking"]
              and not entry["arms"]["mine"]["error"]}
    written = {line.split()[0] for line in (reports / "all.trec").read_text().splitlines()}
    assert written == ranked and any(entry["stratum"] != "positive" for entry in report["details"] if entry["id"] in written)


REAL_REPORT = ROOT / "tests" / "fixtures" / "arb_real" / "report_gin_clap.json"


@pytest.mark.parametrize("arm", ["bm25:all", "mine"])
def test_the_export_of_a_real_arb_report_gives_its_metrics_back_through_ranx(tmp_path: Path, arm: str) -> None:
    ranx = pytest.importorskip("ranx")
    assert _cli("export", str(REAL_REPORT), "--format", "trec", "--arm", arm, "-o", "run.trec", cwd=tmp_path).returncode == 0
    assert _cli("export", str(REAL_REPORT), "--format", "qrels", "-o", "qrels.trec", cwd=tmp_path).returncode == 0
    qrels = ranx.Qrels.from_file(str(tmp_path / "qrels.trec"), kind="trec")
    run = ranx.Run.from_file(str(tmp_path / "run.trec"), kind="trec")
    ranx.evaluate(qrels, run, ["recall@10", "recall@5", "hit_rate@10", "mrr@20"], make_comparable=True)
    records = _records(json.loads(REAL_REPORT.read_text()), arm)
    assert len(records) == 7
    for sample_id, record in records.items():
        metrics = record["metrics"]
        for ours, theirs in (("recall@10", "recall@10"), ("recall@5", "recall@5"), ("hit@10", "hit_rate@10"), ("mrr@k", "mrr@20")):
            assert run.scores[theirs][sample_id] == pytest.approx(metrics[ours], abs=1e-6), (sample_id, ours)


def test_csv_and_jsonl_have_one_row_per_sample_and_arm(reports: Path) -> None:
    report = json.loads((reports / "after.json").read_text())
    expected = {(entry["id"], arm) for entry in report["details"] for arm in entry["arms"]}
    assert _cli("export", "after.json", "--format", "csv", "-o", "rows.csv", cwd=reports).returncode == 0
    assert _cli("export", "after.json", "--format", "jsonl", "--arm", "cut", "-o", "rows.jsonl", cwd=reports).returncode == 0
    with (reports / "rows.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {(row["sample_id"], row["arm"]) for row in rows} == expected and len(rows) == len(expected)
    some = next(row for row in rows if row["arm"] == "mine" and row["stratum"] == "positive")
    record = next(entry for entry in report["details"] if entry["id"] == some["sample_id"])["arms"]["mine"]
    assert float(some["recall@10"]) == record["metrics"]["recall@10"] and some["repo"]
    lines = [json.loads(line) for line in (reports / "rows.jsonl").read_text().splitlines()]
    assert {line["arm"] for line in lines} == {"cut[3]", "cut[8]"}


def test_an_export_to_dash_goes_to_standard_output(reports: Path) -> None:
    assert _cli("export", "after.json", "--format", "trec", "--arm", "grep", "-o", "run.trec", cwd=reports).returncode == 0
    piped = _cli("export", "after.json", "--format", "trec", "--arm", "grep", "-o", "-", cwd=reports)  # a trec run holds one arm
    assert piped.returncode == 0 and piped.stdout == (reports / "run.trec").read_text() and piped.stdout
    assert not (reports / "-").exists()


def test_a_run_says_where_it_wrote_its_html_page_and_markdown(reports: Path) -> None:
    lines = (reports / "after.out").read_text().splitlines()
    assert f"HTML page written to {reports / 'pages' / 'after.html'}" in lines and (reports / "pages" / "after.html").is_file()
    assert f"Markdown summary written to {reports / 'pages' / 'after.md'}" in lines and (reports / "pages" / "after.md").is_file()


def test_an_export_never_replaces_its_report(reports: Path) -> None:
    data = (reports / "after.json").read_bytes()
    result = _cli("export", "after.json", "--format", "csv", "-o", "after.json", cwd=reports)
    assert result.returncode == 2 and (reports / "after.json").read_bytes() == data


def test_the_gate_diff_and_history_show_one_interval_for_one_comparison(reports: Path, tmp_path: Path) -> None:
    """The same arm's metric in the same two reports is resampled alike by the gate, `diff` and
    `history` (one seed name), so re-checking a CI gate with `diff` shows the gate's bounds."""
    from pytest_retrieval_bench.history.store import SavedRun
    from pytest_retrieval_bench.history.table import history_rows
    from pytest_retrieval_bench.report.diff import diff_reports
    from pytest_retrieval_bench.report.gate import compare, parse_rule
    from pytest_retrieval_bench.report.tables import interval

    before, after = (json.loads((reports / f"{name}.json").read_text()) for name in ("before", "after"))
    gated = compare(after, before, [parse_rule("mrr@k>=-0.5:arm=mine")])["rules"][0]
    diffed = diff_reports(before, after, ["mine"])["paired"]["mine"]["mrr@k"]
    assert gated["n"] == diffed["n"] and gated["mean_difference"] == pytest.approx(diffed["mean_difference"], abs=1e-6)
    assert gated["bootstrap95"] == pytest.approx(diffed["bootstrap95"], abs=1e-6) and gated["bootstrap95"][0] < gated["bootstrap95"][1]
    runs = [(SavedRun(tmp_path / f"{number:04d}.json", number, "nocommit", "20261205_000000", name, False), report)
            for number, (name, report) in enumerate((("before", before), ("after", after)), start=1)]
    headers, rows, _ = history_rows(runs, "mrr@k")
    shown = next(row for row in rows if row[0] == "0002" and row[headers.index("arm")] == "mine")
    assert interval(tuple(diffed["bootstrap95"]), sign=True) in shown
