"""Report sections built from real runs: folds, paired statistics, latency, and merging."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from report_helpers import without_provenance

from pytest_retrieval_bench.scoring import stats
from pytest_retrieval_bench.cli import main as cli_main
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.build import canonical_json
from pytest_retrieval_bench.report.merge import merge_reports
from pytest_retrieval_bench.scoring.metrics import positive_metrics

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"


def _run(tmp: Path, name: str, *args: str) -> dict:
    out = tmp / name
    result = subprocess.run([sys.executable, "-m", "pytest", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}",
                             f"--bench-report={out}", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q", f"--rootdir={tmp}", *args],
                            cwd=tmp, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, dict, dict]:
    tmp = tmp_path_factory.mktemp("runs")
    fold_map = tmp / "folds.json"
    fold_map.write_text(json.dumps({"acme/gin-lite": "A", "acme/pyquery-tools": "B"}))
    lexical = _run(tmp, "lexical.json", "--bench-arms=grep,bm25:all", f"--bench-fold-map={fold_map}")
    reference = _run(tmp, "reference.json", "--bench-arms=arb-bm25", f"--bench-fold-map={fold_map}")
    return tmp, lexical, reference


def test_fold_groups_and_repository_macro(runs):
    _, lexical, _ = runs
    summary = lexical["summary"]
    assert {"fold:A", "fold:B", "fold:unassigned", "task:code2test/fold:A"} <= set(summary)
    assert summary["fold:A"]["grep"]["n"] == 11 and summary["fold:unassigned"]["grep"]["n"] == 11
    details = {entry["id"]: entry for entry in lexical["details"]}
    by_repo: dict[str, list[float]] = {}
    for entry in details.values():
        if entry["stratum"] == "positive" and "grep" in entry["arms"]:
            by_repo.setdefault(entry["repo"], []).append(entry["arms"]["grep"]["metrics"]["recall@10"])
    expected = stats.mean([stats.mean(values) for _, values in sorted(by_repo.items())])
    assert summary["all"]["grep"]["repository_macro"]["recall@10"] == pytest.approx(expected, abs=1e-6)
    assert lexical["paired"] == {}  # only baselines in this run: nothing to pair


def test_merge_pairs_a_candidate_with_earlier_baselines(runs):
    tmp, lexical, reference = runs
    merged = merge_reports([tmp / "lexical.json", tmp / "reference.json"], ["grep", "bm25:all", "arb-bm25"], ["grep", "bm25:all"])
    assert set(merged["summary"]["all"]) == {"grep", "bm25:all", "arb-bm25"}
    comparison = merged["paired"]["all"]["arb-bm25 vs grep"]["recall@10"]
    details = {entry["id"]: entry for entry in merged["details"]}
    diffs = [details[i]["arms"]["arb-bm25"]["metrics"]["recall@10"] - details[i]["arms"]["grep"]["metrics"]["recall@10"]
             for i in sorted(details) if details[i].get("stratum") == "positive" and details[i]["arms"]]
    assert comparison["n"] == len(diffs) == 28
    assert comparison["mean_difference"] == pytest.approx(stats.mean(diffs), abs=1e-6)
    assert comparison["wins"] + comparison["losses"] + comparison["ties"] == 28
    assert comparison["bootstrap95"] == pytest.approx(list(stats.bootstrap_interval(diffs, "all|arb-bm25|grep|recall@10")), abs=1e-6)
    assert set(comparison["per_repository"]) == {"acme/gin-lite", "acme/pyquery-tools", "nimbus/rusty-cache"}
    assert {"task:code2test", "fold:A", "task:code2test/fold:A"} <= set(merged["paired"])
    # details keep no cache-state label (it may differ between runs), so a merged report's latency is UNRECORDED
    assert set(merged["latency"]["grep"]) == {"UNRECORDED"} and merged["latency"]["grep"]["UNRECORDED"]["n"] == 34


def test_a_later_report_replaces_an_arm(runs, tmp_path):
    tmp, lexical, _ = runs
    edited = json.loads((tmp / "lexical.json").read_text())
    first = edited["details"][0]
    record = first["arms"]["grep"]  # a changed ranking, with the results it gives (a merge recomputes them)
    record["ranking"] = ["changed.py"]
    record["metrics"].update(positive_metrics(["changed.py"], first["gold"], first["hard_negatives"], 20), mrr=0.0, mrr_given_kept=0.0)
    record.update(rank_of_first_gold=None, rank_of_first_gold_uncut=None, selective_success=False)
    later = tmp_path / "later.json"
    later.write_text(json.dumps(edited))
    merged = merge_reports([tmp / "lexical.json", later], ["grep", "bm25:all"], ["grep"])
    assert [e for e in merged["details"] if e["id"] == first["id"]][0]["arms"]["grep"]["ranking"] == ["changed.py"]


def test_merge_refusals(runs, tmp_path):
    tmp, _, _ = runs
    unrecorded = json.loads((tmp / "reference.json").read_text())
    unrecorded["registration"]["arm_identities"] = {}
    (tmp_path / "unrecorded.json").write_text(json.dumps(unrecorded))
    with pytest.raises(BenchError, match="arm 'arb-bm25' is not one this bench defines .* does not record its identity"):
        merge_reports([tmp / "lexical.json", tmp_path / "unrecorded.json"], ["grep", "bm25:all"], ["grep"])
    other = json.loads((tmp / "lexical.json").read_text())
    other["registration"]["samples"][0]["sha256"] = "0" * 64
    path = tmp_path / "other.json"
    path.write_text(json.dumps(other))
    with pytest.raises(BenchError, match="field .samples sha256. differs"):
        merge_reports([tmp / "lexical.json", path], ["grep", "bm25:all"], ["grep"])
    (tmp_path / "junk.json").write_text("[]")
    with pytest.raises(BenchError, match="not a retrieval-bench report"):
        merge_reports([tmp_path / "junk.json"], ["grep"], ["grep"])


def test_console_script_and_pytest_option_agree(runs, tmp_path):
    tmp, _, _ = runs
    assert cli_main(["summarize", str(tmp / "lexical.json"), str(tmp / "reference.json"), "--output", str(tmp_path / "cli.json"),
                     "--baseline-arms", "grep,bm25:all"]) == 0
    result = subprocess.run([sys.executable, "-m", "pytest", f"--bench-summarize={tmp / 'lexical.json'}", f"--bench-summarize={tmp / 'reference.json'}",
                             f"--bench-report={tmp_path / 'plugin.json'}", "--bench-baseline-arms=grep,bm25:all", "-p", "no:cacheprovider",
                             f"--rootdir={tmp_path}"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert without_provenance((tmp_path / "cli.json").read_bytes()) == without_provenance((tmp_path / "plugin.json").read_bytes())
    renamed = json.loads((tmp / "reference.json").read_text().replace('"arb-bm25"', '"mine"'))
    (tmp_path / "mine.json").write_text(json.dumps(renamed))
    assert cli_main(["summarize", str(tmp_path / "mine.json"), "--output", str(tmp_path / "x.json")]) == 0  # its identity is recorded
    renamed["registration"]["arm_identities"] = {}
    (tmp_path / "mine.json").write_text(json.dumps(renamed))
    assert cli_main(["summarize", str(tmp_path / "mine.json"), "--output", str(tmp_path / "x.json")]) == 2
    assert cli_main(["summarize", str(tmp_path / "mine.json"), "--output", str(tmp_path / "x.json"), "--arm", "mine"]) == 0


def _without_volatile(report: dict) -> dict:
    """A report with what may differ between a run and a merge of its parts removed: timings, the
    latency section, the registration (a merge records its inputs there), and where it ran (commit, machine)."""
    kept = {key: value for key, value in report.items() if key not in ("latency", "registration", "commit_info", "machine_info")}
    for entry in kept["details"]:
        for record in entry["arms"].values():
            record.pop("wall_ms")
    return kept


@pytest.mark.parametrize("split", ["by arm", "by repository", "three ways"])
def test_a_merge_of_a_split_run_equals_the_run(tmp_path: Path, split: str) -> None:
    """Summaries are computed from the details as written (rounded), in a run and in a merge alike."""
    arms = "--bench-arms=grep,grep-ident,bm25:all,bm25:ident"
    common = (arms, "--bench-baseline-arms=grep")
    whole = _run(tmp_path, "whole.json", *common)
    parts = {
        "by arm": [("--bench-arms=grep,grep-ident", "--bench-baseline-arms=grep"), ("--bench-arms=bm25:all,bm25:ident", "--bench-baseline-arms=grep")],
        "by repository": [(*common, "-k", "gin"), (*common, "-k", "not gin")],
        "three ways": [(*common, "-k", "gin"), (*common, "-k", "pyquery"), (*common, "-k", "rusty")],
    }[split]
    paths = []
    for number, args in enumerate(parts):
        _run(tmp_path, f"part{number}.json", *args)
        paths.append(tmp_path / f"part{number}.json")
    merged = merge_reports(paths, ["grep", "grep-ident", "bm25:all", "bm25:ident"], ["grep"])
    assert merged["partial"] is None
    assert _without_volatile(json.loads(canonical_json(merged))) == _without_volatile(whole)


def test_a_shell_glob_that_also_matches_the_sidecars_merges_the_reports(runs, tmp_path, capsys):
    """`retrieval-bench summarize shard-*.json` (the documented command) also matches each report's
    `shard-N.json.registration.json`: those are dropped beside their report, and a sidecar given
    alone names the report to give instead."""
    tmp, _, _ = runs
    reports = [tmp / "lexical.json", tmp / "reference.json"]
    assert all((path.parent / (path.name + ".registration.json")).is_file() for path in reports)
    with_sidecars = sorted(str(p) for path in reports for p in (path, path.parent / (path.name + ".registration.json")))
    assert cli_main(["summarize", *with_sidecars, "--output", str(tmp_path / "glob.json"), "--baseline-arms", "grep,bm25:all"]) == 0
    assert cli_main(["summarize", *map(str, reports), "--output", str(tmp_path / "plain.json"), "--baseline-arms", "grep,bm25:all"]) == 0
    assert (tmp_path / "glob.json").read_bytes() == (tmp_path / "plain.json").read_bytes()
    assert "merged 2 reports" in capsys.readouterr().out
    alone = str(tmp / "lexical.json.registration.json")
    assert cli_main(["summarize", alone, "--output", str(tmp_path / "x.json")]) == 2
    assert f"is the registration sidecar of {tmp / 'lexical.json'}, not a report" in capsys.readouterr().err
