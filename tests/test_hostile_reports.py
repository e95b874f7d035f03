"""Hand-edited, malformed and hostile reports given to a merge, a page or a leaderboard.

A merged report is exactly as trustworthy as a run: every merge input is range-checked and each
record's results are recomputed from its own ranking and the sample's labels, and a refusal names
the file, the sample and the JSON path (exit 2 from `retrieval-bench`, a usage error from
`pytest --bench-summarize`), never a traceback. Readers check the sections they show; names are
escaped on the terminal; paired statistics pair exact values, in a run and a merge alike.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_retrieval_bench.cli import main
from pytest_retrieval_bench.report.build import build_report, canonical_json
from pytest_retrieval_bench.report.merge import merge_reports
from pytest_retrieval_bench.scoring.cce_compare import paired_t, stats_block
from pytest_retrieval_bench.scoring.metrics import positive_metrics, rank_of_first_gold

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"
ARMS = ["grep", "arb-bm25"]
USAGE_ERROR = 4


def _run(tmp: Path, name: str, *args: str) -> Path:
    out = tmp / name
    result = subprocess.run([sys.executable, "-m", "pytest", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep,arb-bm25",
                             f"--bench-report={out}", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q", f"--rootdir={tmp}", *args],
                            cwd=tmp, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("reports")
    paths = {"run": _run(tmp, "run.json"), "shard1": _run(tmp, "shard1.json", "--bench-shard=1/2"),
             "shard2": _run(tmp, "shard2.json", "--bench-shard=2/2")}
    assert main(["summarize", str(paths["shard1"]), str(paths["shard2"]), "--output", str(tmp / "merged.json"), "--baseline-arms", "arb-bm25"]) == 0
    paths["merged"] = tmp / "merged.json"
    assert main(["summarize", str(paths["merged"]), "--output", str(tmp / "gated.json"), "--baseline-arms", "arb-bm25", "--baseline", str(paths["run"]),
                 "--gate", "recall@10>=-0.5", "--gate", "noregression:mrr@k>=-0.5"]) == 0
    paths["gated"] = tmp / "gated.json"
    return paths


def _edited(source: Path, target: Path, edit: Callable[[dict[str, Any]], Any]) -> Path:
    report = json.loads(source.read_text())
    edit(report)
    target.write_text(json.dumps(report))
    return target


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The command's one-line refusal (exit 2, nothing on stdout, no traceback)."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("retrieval-bench: error: ") and "Traceback" not in captured.err
    return captured.err


def _positive(report: dict[str, Any], hit: bool | None = None) -> tuple[int, dict[str, Any]]:
    """(index, entry) of the first positive entry whose grep record is a hit at 10 (True), a miss (False) or either."""
    for number, entry in enumerate(report["details"]):
        record = entry["arms"].get("grep")
        if entry.get("stratum") == "positive" and record and (hit is None or (record["metrics"]["hit@10"] == 1.0) == hit):
            return number, entry
    raise AssertionError("the bench has no such sample")


# -- a merge input is range-checked --------------------------------------------------------------


def _set_metric(name: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    return lambda report: report["details"][_positive(report)[0]]["arms"]["grep"]["metrics"].__setitem__(name, value)


@pytest.mark.parametrize("edit, path, words", [
    (_set_metric("recall@10", 7.0), "metrics['recall@10']", "7.0 is not a rate"),
    (_set_metric("ndcg@5", 1e308), "metrics['ndcg@5']", "is not a rate"),
    (_set_metric("mrr@k", -0.5), "metrics['mrr@k']", "is not a rate"),
    (_set_metric("hard_negative_hits@10", 11.0), "metrics['hard_negative_hits@10']", "from 0 to 10"),
    (_set_metric("hard_negative_hits@5", 1.5), "metrics['hard_negative_hits@5']", "a whole number"),
    (lambda r: r["details"][0]["arms"]["grep"].update(wall_ms=1e308), "wall_ms", "is not a time"),
    (lambda r: r["details"][0]["arms"]["grep"].update(rank_of_first_gold=0), "rank_of_first_gold", "not a rank within the limit"),
    (lambda r: r["details"][0]["arms"]["grep"].update(ranking=[f"f{i}.py" for i in range(21)]), "ranking", "more than the limit (20)"),
])
def test_a_value_outside_its_range_is_refused_with_its_json_path(reports: dict[str, Path], tmp_path: Path, capsys, edit, path: str, words: str) -> None:
    edited = _edited(reports["shard1"], tmp_path / "edited.json", edit)
    number = next(i for i, (a, b) in enumerate(zip(json.loads(edited.read_text())["details"], json.loads(reports["shard1"].read_text())["details"])) if a != b)
    message = _refused(capsys, ["summarize", str(edited), str(reports["shard2"]), "--output", str(tmp_path / "out.json")])
    assert f"{edited}: not a valid report: $.details[{number}].arms['grep'].{path}: " in message and words in message
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("limit", [0, 51, 10**18])
def test_a_limit_no_run_accepts_is_refused(reports: dict[str, Path], tmp_path: Path, capsys, limit: int) -> None:
    edited = _edited(reports["run"], tmp_path / "edited.json", lambda r: r["registration"].update(limit=limit))
    message = _refused(capsys, ["summarize", str(edited), "--output", str(tmp_path / "out.json")])
    assert f"$.registration.limit: {limit} is not a limit a run accepts (1 to 50)" in message


def test_a_shard_without_its_partition_digest_is_refused_naming_the_field(reports: dict[str, Path], tmp_path: Path, capsys) -> None:
    edited = _edited(reports["shard1"], tmp_path / "edited.json", lambda r: r["registration"]["shard"].pop("partition_sha256"))
    message = _refused(capsys, ["summarize", str(edited), str(reports["shard2"]), "--output", str(tmp_path / "out.json")])
    assert f"{edited}: not a valid report: $.registration.shard.partition_sha256: missing" in message


def test_metric_counts_that_contradict_each_other_are_refused(reports: dict[str, Path], tmp_path: Path, capsys) -> None:
    def edit(report: dict[str, Any]) -> None:
        record = report["details"][0]["arms"]["grep"]
        record["metric_counts"] = {"cb_file_coverage": [3, 2]}
    edited = _edited(reports["run"], tmp_path / "edited.json", edit)
    message = _refused(capsys, ["summarize", str(edited), "--output", str(tmp_path / "out.json")])
    assert "$.details[0].arms['grep'].metric_counts['cb_file_coverage']: [3, 2] is not [numerator, denominator]" in message


# -- each record's results are recomputed --------------------------------------------------------


def test_a_miss_edited_into_a_hit_is_refused_naming_file_sample_and_path(reports: dict[str, Path], tmp_path: Path, capsys) -> None:
    report = json.loads(reports["run"].read_text())
    number, entry = _positive(report, hit=False)

    def metrics_of_a_hit(report: dict[str, Any]) -> None:  # every metric edited as a hit's would be: the ranking says otherwise
        record = report["details"][number]["arms"]["grep"]
        record["metrics"].update({"hit@10": 1.0, "recall@10": 1.0, "accuracy@10": 1.0})
        record["rank_of_first_gold"] = 1

    edited = _edited(reports["run"], tmp_path / "edited.json", metrics_of_a_hit)
    message = _refused(capsys, ["summarize", str(edited), "--output", str(tmp_path / "out.json")])
    assert f"{edited}: results that its own records contradict, sample {entry['id']!r}, arm 'grep': $.details[{number}].arms['grep'].metrics[" in message
    assert "is written, but the record's ranking and the sample's labels give" in message

    def ranking_of_a_hit(report: dict[str, Any]) -> None:  # the gold file edited into first place, the metrics left
        record = report["details"][number]["arms"]["grep"]
        record["ranking"] = [entry["gold"][0], *[path for path in record["ranking"] if path != entry["gold"][0]]][:20]
    edited = _edited(reports["run"], tmp_path / "edited.json", ranking_of_a_hit)
    message = _refused(capsys, ["summarize", str(edited), "--output", str(tmp_path / "out.json")])
    assert f"sample {entry['id']!r}, arm 'grep': $.details[{number}].arms['grep']." in message


@pytest.mark.parametrize("field, value", [("recall@10", None), ("rank_of_first_gold", 1), ("selective_success", None), ("hard_negative_hits@20", None)])
def test_every_recomputable_field_is_compared(reports: dict[str, Path], tmp_path: Path, capsys, field: str, value: Any) -> None:
    """Each written field alone, edited to a value within its range that the record contradicts."""
    report = json.loads(reports["run"].read_text())
    number, entry = _positive(report, hit=False)
    record = entry["arms"]["grep"]

    def edit(report: dict[str, Any]) -> None:
        edited = report["details"][number]["arms"]["grep"]
        if field == "rank_of_first_gold":
            edited[field] = value
        elif field == "selective_success":
            edited[field] = not record[field]
        else:
            edited["metrics"][field] = 1.0 if record["metrics"][field] < 1 else 0.0
    edited = _edited(reports["run"], tmp_path / "edited.json", edit)
    message = _refused(capsys, ["summarize", str(edited), "--output", str(tmp_path / "out.json")])
    where = f"$.details[{number}].arms['grep']." + (f"metrics[{field!r}]" if "@" in field else field)
    assert f"sample {entry['id']!r}, arm 'grep': {where}" in message


def test_pytest_bench_summarize_refuses_an_edited_input_as_a_usage_error(reports: dict[str, Path], tmp_path: Path) -> None:
    edited = _edited(reports["shard1"], tmp_path / "edited.json", _set_metric("recall@10", 7.0))
    result = subprocess.run([sys.executable, "-m", "pytest", f"--bench-summarize={edited}", f"--bench-summarize={reports['shard2']}",
                             f"--bench-report={tmp_path / 'out.json'}", "-p", "no:cacheprovider", f"--rootdir={tmp_path}"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == USAGE_ERROR and "INTERNALERROR" not in result.stdout + result.stderr
    assert f"{edited}: not a valid report: $.details[" in result.stderr and "metrics['recall@10']: 7.0 is not a rate" in result.stderr


HOSTILE = ["x", None, [], {}, True, -1, 1e308, 10**18, 0.5, [1, 2]]


def test_no_hand_edit_of_a_detail_crashes_a_merge(reports: dict[str, Path], tmp_path: Path, capsys) -> None:
    """Every field of the registration, its shard, a record and its entry, replaced by each hostile value
    (in every positive entry, so that sums see it more than once): merged or refused, never a traceback."""
    text = reports["shard1"].read_text()
    report = json.loads(text)
    number, entry = _positive(report)
    positives = [i for i, other in enumerate(report["details"]) if other.get("stratum") == "positive" and "grep" in other["arms"]]
    fields = [("entry", name) for name in entry if name != "arms"] + [("record", name) for name in entry["arms"]["grep"]]
    fields += [("metric", name) for name in entry["arms"]["grep"]["metrics"]]
    fields += [("registration", name) for name in report["registration"]] + [("shard", name) for name in report["registration"]["shard"]]
    outcomes = set()
    for kind, name in fields:
        for value in HOSTILE:
            edited = json.loads(text)  # a fresh copy, far quicker than deepcopy for a JSON document
            for at in positives:
                record = edited["details"][at]["arms"]["grep"]
                target = {"entry": edited["details"][at], "record": record, "metric": record["metrics"], "registration": edited["registration"],
                          "shard": edited["registration"]["shard"]}[kind]
                target[name] = value
            path = tmp_path / "edited.json"
            path.write_text(json.dumps(edited))
            status = main(["summarize", str(path), str(reports["shard2"]), "--output", str(tmp_path / "out.json"), "--allow-partial"])
            captured = capsys.readouterr()
            assert status in (0, 2) and "Traceback" not in captured.err, (kind, name, value, captured.err)
            outcomes.add(status)
    assert outcomes == {0, 2}  # some edits are harmless (a query text), most are refused


# -- refusals name the real problem --------------------------------------------------------------


def test_shards_0_of_0_are_refused_as_no_shard(reports: dict[str, Path], tmp_path: Path, capsys) -> None:
    edited = _edited(reports["shard1"], tmp_path / "zero.json", lambda r: r["registration"]["shard"].update(index=0, count=0))
    message = _refused(capsys, ["summarize", str(edited), str(edited), "--output", str(tmp_path / "out.json")])
    assert f"{edited}: not a valid report: $.registration.shard: 0/0 is no shard (I/N needs 1 <= I <= N)" in message
    assert "--allow-partial" not in message


def test_a_merged_report_counts_as_the_shards_it_was_merged_from(reports: dict[str, Path], tmp_path: Path, capsys) -> None:
    """A merge of 1/2 and 2/2, given again with a rerun of shard 2: the shard is held twice, not 1/2 missing."""
    message = _refused(capsys, ["summarize", str(reports["merged"]), str(reports["shard2"]), "--output", str(tmp_path / "out.json")])
    assert f"{reports['shard2']} and {reports['merged']} (merged from {reports['shard2']}) both hold shard 2/2" in message
    assert "missing" not in message
    assert main(["summarize", str(reports["merged"]), str(reports["shard2"]), "--output", str(tmp_path / "out.json"), "--allow-partial",
                 "--baseline-arms", "arb-bm25"]) == 0
    capsys.readouterr()
    again, merged = json.loads((tmp_path / "out.json").read_text()), json.loads(reports["merged"].read_text())
    assert again["partial"] is None and again["details"] == merged["details"] and again["summary"] == merged["summary"]


def test_a_merged_report_alone_is_complete(reports: dict[str, Path], tmp_path: Path, capsys) -> None:
    assert main(["summarize", str(reports["merged"]), "--output", str(tmp_path / "out.json"), "--baseline-arms", "arb-bm25"]) == 0
    capsys.readouterr()
    assert json.loads((tmp_path / "out.json").read_text())["partial"] is None


# -- readers check the sections they show -------------------------------------------------------


def _first_group_arm(report: dict[str, Any]) -> dict[str, Any]:
    return report["summary"]["all"]["grep"]


@pytest.mark.parametrize("edit, path", [
    (lambda r: r.update(summary=[]), "$.summary: expected an object"),
    (lambda r: r.update(summary=None), "$.summary: expected an object"),
    (lambda r: r["summary"].update(all=[1]), "$.summary['all']: expected an object"),
    (lambda r: r["summary"]["all"].update(grep=2), "$.summary['all']['grep']: expected an object"),
    (lambda r: _first_group_arm(r).update(metrics=[]), "$.summary['all']['grep'].metrics: expected an object"),
    (lambda r: _first_group_arm(r)["metrics"].update({"mrr@k": "x"}), "$.summary['all']['grep'].metrics['mrr@k']: 'x' is not a finite number"),
    (lambda r: _first_group_arm(r)["metrics"].update({"recall@20": [0.5, 0.1]}), "$.summary['all']['grep'].metrics['recall@20']"),
    (lambda r: _first_group_arm(r).update(positives=-1), "$.summary['all']['grep'].positives: -1 is not a count"),
    (lambda r: _first_group_arm(r).update(errors=99), "$.summary['all']['grep'].errors: 99 is not a count (a whole number from 0 to 34)"),
    (lambda r: _first_group_arm(r).update(wilson95="x"), "$.summary['all']['grep'].wilson95: expected an object"),
    (lambda r: _first_group_arm(r)["wilson95"].update({"hit@5": [0.5]}), "$.summary['all']['grep'].wilson95['hit@5']: [0.5] is not null or an interval"),
    (lambda r: _first_group_arm(r)["wilson95"].update({"hit@5": [0.9, 0.1]}), "$.summary['all']['grep'].wilson95['hit@5']"),
    (lambda r: _first_group_arm(r).update(selective_success_wilson95=0.5), "$.summary['all']['grep'].selective_success_wilson95: 0.5 is not null"),
])
def test_a_malformed_summary_is_refused_by_html_and_leaderboard(reports: dict[str, Path], tmp_path: Path, capsys, edit, path: str) -> None:
    edited = _edited(reports["merged"], tmp_path / "edited.json", edit)
    for argv in (["html", str(edited), "--output", str(tmp_path / "page.html")], ["leaderboard", str(edited)]):
        message = _refused(capsys, argv)
        assert f"{edited}: not a valid report: {path}" in message
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("edit, path", [
    (lambda r: r.update(latency=[]), "$.latency: expected an object"),
    (lambda r: r["latency"].update(grep="x"), "$.latency['grep']: expected an object"),
    (lambda r: r["latency"]["grep"].update(UNRECORDED={"n": 3, "p50": "x"}), "$.latency['grep']['UNRECORDED'].p50: 'x' is not null or a time"),
    (lambda r: r["latency"]["grep"].update(UNRECORDED={"n": 2.5}), "$.latency['grep']['UNRECORDED'].n: 2.5 is not a count"),
    (lambda r: r["paired"].update(all=[1]), "$.paired['all']: expected an object"),
    (lambda r: r["paired"]["all"]["grep vs arb-bm25"].update({"mrr@k": "x"}), "$.paired['all']['grep vs arb-bm25']['mrr@k']: expected an object"),
    (lambda r: r["paired"]["all"]["grep vs arb-bm25"]["mrr@k"].update(bootstrap95=[]), "$.paired['all']['grep vs arb-bm25']['mrr@k'].bootstrap95"),
    (lambda r: r["paired"]["all"]["grep vs arb-bm25"]["mrr@k"].update(mean_difference=[1]), "['mrr@k'].mean_difference: [1] is not null or a finite"),
    (lambda r: r["paired"]["all"]["grep vs arb-bm25"]["mrr@k"].update(t_test=0.5), "['mrr@k'].t_test: expected an object"),
    (lambda r: r.update(baseline=[]), "$.baseline: expected an object"),
    (lambda r: r["baseline"].update(rules=1e308), "$.baseline.rules: expected a list"),
    (lambda r: r["baseline"]["rules"][0].update(form=[1]), "$.baseline.rules[0].form: [1] is not null or a string"),
    (lambda r: r["baseline"]["rules"][0].pop("threshold"), "$.baseline.rules[0].threshold: None is not a finite number"),
    (lambda r: r["baseline"].update(new_arms=[1]), "$.baseline.new_arms: expected a list of strings"),
    (lambda r: r["baseline"]["arms"]["grep"].update(regressions="x"), "$.baseline.arms['grep'].regressions: expected a list of objects"),
])
def test_a_malformed_latency_paired_or_baseline_section_is_refused_by_html(reports: dict[str, Path], tmp_path: Path, capsys, edit, path: str) -> None:
    edited = _edited(reports["gated"], tmp_path / "edited.json", edit)
    message = _refused(capsys, ["html", str(edited), "--output", str(tmp_path / "page.html")])
    assert f"{edited}: not a valid report: " in message and path in message


def test_no_hand_edit_of_a_section_crashes_html_or_leaderboard(reports: dict[str, Path], tmp_path: Path, capsys) -> None:
    """Every value of the summary's `all` group, one latency row, one paired result and the baseline
    comparison's first rule, replaced by each hostile value."""
    text = reports["gated"].read_text()
    report = json.loads(text)
    targets: list[tuple[str, ...]] = [("summary", "all", "grep", name) for name in report["summary"]["all"]["grep"]]
    targets += [("summary", "all", "grep", "metrics", name) for name in list(report["summary"]["all"]["grep"]["metrics"])[:6]]
    targets += [("summary", "all", "grep", "wilson95", name) for name in report["summary"]["all"]["grep"]["wilson95"]]
    targets += [("latency", "grep", state, name) for state, figures in report["latency"]["grep"].items() for name in figures]
    targets += [("paired", "all", "grep vs arb-bm25", "recall@10", name) for name in report["paired"]["all"]["grep vs arb-bm25"]["recall@10"]]
    targets += [("baseline", name) for name in report["baseline"]] + [("baseline", "rules", 0, name) for name in report["baseline"]["rules"][0]]
    targets += [("baseline", "arms", "grep", name) for name in report["baseline"]["arms"]["grep"]]
    for target in targets:
        for value in HOSTILE:
            edited = json.loads(text)  # a fresh copy, far quicker than deepcopy for a JSON document
            node = edited
            for step in target[:-1]:
                node = node[step]
            node[target[-1]] = value
            path = tmp_path / "edited.json"
            path.write_text(json.dumps(edited))
            for argv in (["html", str(path), "--output", str(tmp_path / "page.html")], ["leaderboard", str(path)]):
                status = main(argv)
                captured = capsys.readouterr()
                assert status in (0, 2) and "Traceback" not in captured.err, (target, value, argv[0], captured.err)


# -- names are escaped on the terminal -----------------------------------------------------------

ESCAPED_ARM = "\x1b[2J\x1b[31mmine\u202e"


def test_control_characters_in_an_arm_name_are_escaped_in_every_terminal_output(reports: dict[str, Path], tmp_path: Path, capsys) -> None:
    text = reports["run"].read_text().replace('"grep"', json.dumps(ESCAPED_ARM))
    renamed = tmp_path / "renamed.json"
    renamed.write_text(text)
    assert main(["leaderboard", str(renamed)]) == 0
    board = capsys.readouterr().out
    assert main(["summarize", str(renamed), "--output", str(tmp_path / "out.json"), "--baseline-arms", "arb-bm25"]) == 0
    tables = capsys.readouterr().out
    for out in (board, tables):
        assert "\x1b" not in out and "\u202e" not in out
        assert "\\x1b[2J\\x1b[31mmine\\u202e" in out
    assert ESCAPED_ARM in json.loads((tmp_path / "out.json").read_text())["summary"]["all"]  # the JSON keeps the name as it is
    table = _table_after(board.splitlines(), "overall")
    assert any("mine" in line for line in table) and len({len(line) for line in table}) == 1


def _table_after(lines: list[str], title: str) -> list[str]:
    """The header and rows of the fixed-width table under a title line."""
    start = lines.index(title) + 1
    end = next((i for i in range(start, len(lines)) if not lines[i]), len(lines))
    return lines[start:end]


def test_escaped_rows_keep_the_columns_aligned(reports: dict[str, Path], tmp_path: Path, capsys) -> None:
    """A tab and a newline in a name are escaped too: the row stays one line, as wide as the others."""
    text = reports["run"].read_text().replace('"grep"', json.dumps("a\tb\nc"))
    (tmp_path / "tabs.json").write_text(text)
    assert main(["leaderboard", str(tmp_path / "tabs.json")]) == 0
    table = _table_after(capsys.readouterr().out.splitlines(), "overall")
    assert len(table) == 3 and any(line.startswith("a\\tb\\nc ") for line in table)
    assert len({len(line) for line in table}) == 1


# -- paired statistics pair exact values ---------------------------------------------------------

GOLD = ["a.py", "b.py", "c.py"]
FILLER = [f"x{i}.py" for i in range(20)]


def _ranking(found: int) -> list[str]:
    """A ranking with `found` of the three gold files in its top 5."""
    return [*GOLD[:found], *FILLER][:20]


def _record(sample_id: str, arm: str, found: int, rel: tuple[int, int, int] | None = None) -> dict[str, Any]:
    ranking = _ranking(found)
    metrics = positive_metrics(ranking, GOLD, [], 20)
    record = {"sample_id": sample_id, "arm": arm, "ranking": ranking, "abstained": False, "error": None, "selective_success": found > 0,
              "rank_of_first_gold": rank_of_first_gold(ranking, GOLD), "metrics": metrics, "wall_ms": 1.0, "query_chars": 3}
    if rel is not None:  # cce.relevance: relevant of k = 5, matched of 3 anchors, first relevant rank
        relevant, matched, first = rel
        precision, recall = relevant / 5, matched / 3
        metrics.update({"rel_precision@k": precision, "rel_recall": recall, "rel_mrr": 1 / first if first else 0.0,
                        "rel_f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0})
        record["metric_counts"] = {"rel_precision@k": [float(relevant), 5.0], "rel_recall": [float(matched), 3.0]}
    return record


def _labels(sample_id: str) -> dict[str, Any]:
    return {"repo": "o/r", "base_commit": "0" * 40, "task_type": "code2test", "stratum": "positive", "partition": "unassigned",
            "gold": GOLD, "given": [], "hard_negatives": [], "query_text": "q"}


def _built(pairs: list[tuple[int, int]], rel: bool = False) -> dict[str, Any]:
    """A report of two arms over samples whose (baseline, candidate) gold files found are `pairs`."""
    records, labels = [], {}
    for number, (before, after) in enumerate(pairs):
        sample_id = f"s{number:02d}"
        labels[sample_id] = _labels(sample_id)
        records.append(_record(sample_id, "base", before, (before, before, 1 if before else 0) if rel else None))
        records.append(_record(sample_id, "cand", after, (after, after, 1 if after else 0) if rel else None))
    registration = {"arms": ["base", "cand"], "arm_identities": {"base": "python:base", "cand": "python:cand"}, "limit": 20, "samples": []}
    return build_report(registration=registration, samples=[], records=records, baselines=["base"], limit=20, with_folds=False,
                        labels_override=labels)


def test_equal_deltas_of_a_third_have_no_t_in_the_paired_section_and_in_cces_block(tmp_path: Path) -> None:
    """Deltas of exactly 1/3 each (0/3 -> 1/3 and 1/3 -> 2/3: 0.333333 and 0.333334 once rounded): sd is zero, so
    no t, by the report's own rule and by cce's; a merge of the written report gives the same bytes."""
    pairs = [(0, 1), (1, 2)] * 6
    report = _built(pairs, rel=True)
    test = report["paired"]["all"]["cand vs base"]["recall@5"]["t_test"]
    assert test["t"] is None and test["p"] == 0.0 and test["ci95"] == [pytest.approx(1 / 3), pytest.approx(1 / 3)]
    assert report["paired"]["all"]["cand vs base"]["recall@5"]["minimum_detectable_effect"] == 0.0
    block = report["cce_compare"]["cand vs base"]["metrics"]
    assert block["recall"]["t"] is None and block["recall"]["mean_delta"] == "+0.333333" and block["recall"]["p"] == "0.000000"
    assert block["precision_at_k"]["t"] is None  # 0.2 steps: exact too
    written = tmp_path / "run.json"
    written.write_bytes(canonical_json(report))
    merged = merge_reports([written], ["base", "cand"], ["base"])
    assert canonical_json(merged) == canonical_json({**report, "registration": merged["registration"]})


def test_paired_t_matches_scipy_on_the_exact_values(tmp_path: Path) -> None:
    """Deltas of 1/3 and 2/3 in thirds: the t-test and cce's t equal scipy's on the exact fractions."""
    stats_module = pytest.importorskip("scipy.stats")
    pairs = [(0, 1), (1, 2), (0, 2), (1, 3), (2, 3), (0, 1), (1, 1)]
    exact = [float(Fraction(after - before, 3)) for before, after in pairs]
    oracle = stats_module.ttest_1samp(exact, 0.0)
    report = _built(pairs, rel=True)
    test = report["paired"]["all"]["cand vs base"]["recall@5"]["t_test"]
    assert test["t"] == pytest.approx(float(oracle.statistic), rel=1e-12)
    assert test["p"] == pytest.approx(float(oracle.pvalue), rel=1e-9)
    cce = paired_t(exact)
    assert cce["t"] == pytest.approx(float(oracle.statistic), rel=1e-12)
    assert report["cce_compare"]["cand vs base"]["metrics"]["recall"] == stats_block(cce)
    written = tmp_path / "run.json"
    written.write_bytes(canonical_json(report))
    assert canonical_json(merge_reports([written], ["base", "cand"], ["base"])["paired"]) == canonical_json(report["paired"])


def test_a_rank_that_is_no_reciprocal_is_refused(tmp_path: Path, capsys) -> None:
    report = json.loads(canonical_json(_built([(0, 1), (1, 2)], rel=True)))
    report["details"][0]["arms"]["cand"]["metrics"]["rel_mrr"] = 0.3
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(report))
    message = _refused(capsys, ["summarize", str(path), "--output", str(tmp_path / "out.json"), "--arm", "base", "--arm", "cand"])
    assert "sample 's00', arm 'cand': $.details[0].arms['cand'].metrics['rel_mrr']: 0.3 is neither 0 nor 1 / a rank" in message
    report["details"][0]["arms"]["cand"]["metrics"]["rel_mrr"] = 1.0
    report["details"][0]["arms"]["cand"]["metrics"]["rel_recall"] = 0.5
    path.write_text(json.dumps(report))
    message = _refused(capsys, ["summarize", str(path), "--output", str(tmp_path / "out.json"), "--arm", "base", "--arm", "cand"])
    assert "$.details[0].arms['cand'].metrics['rel_recall']: 0.5 is written, but the record's ranking and the sample's labels give 0.333333" in message


def test_the_written_report_of_the_exact_pairing_merges_unchanged(tmp_path: Path) -> None:
    written = tmp_path / "run.json"
    report = _built([(0, 1), (1, 2), (2, 3), (0, 3)], rel=True)
    written.write_bytes(canonical_json(report))
    merged = merge_reports([written], ["base", "cand"], ["base"])
    for section in ("details", "summary", "paired", "cce_compare"):
        assert canonical_json(merged[section]) == canonical_json(report[section]), section
    assert math.isfinite(merged["paired"]["all"]["cand vs base"]["recall@5"]["t_test"]["t"])
