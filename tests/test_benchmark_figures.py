"""The benchmark scripts' figures count what they say: a known disagreement is counted as one.

The scripts under benchmarks/ are not part of the package; they are loaded here by path. Each figure
is fed a case its old form counted wrongly: an empty ranking, one differing in its last entry, one
holding only some of the bench's files, an errored record, a missing record, rounds whose least CPU
and least wall fall in different rounds, and a plugin run of more arms than the evaluator ranks.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
ARM = "arb-lexical"
BENCH_TOP = [f"src/file_{index:02d}.py" for index in range(25)]  # the bench's ranking; its top 20 is what it writes


def load(name: str) -> ModuleType:
    """A benchmark script as a module. `release_runs` is registered under its own name, as the other
    scripts import it by that name; a script is registered under a prefixed one, to shadow nothing."""
    module_name = name if name == "release_runs" else f"benchmark_script_{name}"
    path = BENCHMARKS / f"{name}.py"
    loaded = sys.modules.get(module_name)
    if loaded is not None and Path(loaded.__file__ or "").resolve() == path:
        return loaded
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def runs() -> ModuleType:
    return load("release_runs")


def report_of(records: dict[str, dict[str, Any]], given: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """A plugin report holding one `ARM` record per sample: {sample id: {"ranking": ..., "error": ...}}."""
    given = given or {}
    return {"details": [{"id": sample, "given": given.get(sample, []), "arms": {ARM: {"ranking": record["ranking"], "error": record.get("error")}}}
                        for sample, record in records.items()]}


def detail(sample: str, top: list[str]) -> dict[str, Any]:
    return {"sample_id": sample, "top_files": top}


# -- the top-20 agreement (release.py and leaderboard.py) -------------------------------------------


@pytest.mark.parametrize("ranking", [
    pytest.param([], id="empty-ranking"),
    pytest.param(BENCH_TOP[:19] + ["src/elsewhere.py"], id="last-entry-differs"),
    pytest.param(BENCH_TOP[:10], id="ten-of-twenty"),
    pytest.param(BENCH_TOP[:10] + BENCH_TOP[11:21], id="one-file-left-out"),
    pytest.param(BENCH_TOP[1::-1] + BENCH_TOP[2:20], id="first-two-swapped"),
])
def test_a_ranking_that_is_not_the_benchs_top_20_differs(runs: ModuleType, ranking: list[str]) -> None:
    records = runs.plugin_records(report_of({"s1": {"ranking": ranking}}))
    assert runs.top_agreement([detail("s1", BENCH_TOP[:20])], records, ARM) == runs.Agreement(differ=1)


def test_an_errored_and_a_missing_record_are_disagreements_counted_apart(runs: ModuleType) -> None:
    records = runs.plugin_records(report_of({"equal": {"ranking": BENCH_TOP[:20]}, "errored": {"ranking": [], "error": "boom: the arm raised"}}))
    details = [detail("equal", BENCH_TOP[:20]), detail("errored", BENCH_TOP[:20]), detail("missing", BENCH_TOP[:20])]
    agreement = runs.top_agreement(details, records, ARM)
    assert agreement == runs.Agreement(agree=1, errored=1, missing=1)
    assert agreement.compared == 3
    assert str(agreement) == "1/3 (differ 0, errored 1, missing 1)"


def test_an_errored_record_with_the_bench_listing_nothing_is_still_a_disagreement(runs: ModuleType) -> None:
    records = runs.plugin_records(report_of({"s1": {"ranking": [], "error": "timeout"}}))
    assert runs.top_agreement([detail("s1", [])], records, ARM) == runs.Agreement(errored=1)


def test_only_the_given_files_leave_the_benchs_list(runs: ModuleType) -> None:
    """The bench keeps a given file in its top 20, the plugin ranks the bench's 21st file instead."""
    given = {"given": [BENCH_TOP[3]], "given-but-one-more-left-out": [BENCH_TOP[3]]}
    without_given = [path for path in BENCH_TOP[:21] if path != BENCH_TOP[3]]
    records = runs.plugin_records(report_of({
        "given": {"ranking": without_given},
        "given-but-one-more-left-out": {"ranking": [path for path in without_given if path != BENCH_TOP[7]]},
        "given-kept-by-the-plugin": {"ranking": BENCH_TOP[:20]},
    }, given))
    details = [detail(sample, BENCH_TOP[:20]) for sample in ("given", "given-but-one-more-left-out", "given-kept-by-the-plugin")]
    assert runs.top_agreement(details, records, ARM) == runs.Agreement(agree=2, differ=1)
    assert not runs.same_top(BENCH_TOP[:20], [path for path in without_given if path != BENCH_TOP[7]], {BENCH_TOP[3]})


def test_a_bench_list_shorter_than_20_must_be_the_plugins_whole_ranking(runs: ModuleType) -> None:
    """The bench listed every file it had: a plugin ranking going on past it is another ranking."""
    assert runs.same_top(BENCH_TOP[:5], BENCH_TOP[:5], set())
    assert not runs.same_top(BENCH_TOP[:5], BENCH_TOP[:6], set())
    assert not runs.same_top(BENCH_TOP[:5], BENCH_TOP[:4], set())
    assert runs.same_top(BENCH_TOP[:5], BENCH_TOP[:2] + BENCH_TOP[3:5], {BENCH_TOP[2]})
    assert not runs.same_top(BENCH_TOP[:5], BENCH_TOP[:2] + BENCH_TOP[3:6], {BENCH_TOP[2]})


def test_every_bench_list_is_counted_once_and_only_for_its_arm(runs: ModuleType) -> None:
    report = report_of({"s1": {"ranking": BENCH_TOP[:20]}, "s2": {"ranking": BENCH_TOP[:20]}})
    report["details"][1]["arms"] = {"arb-bm25": report["details"][1]["arms"][ARM]}  # s2 ranked by another arm only
    agreement = runs.top_agreement([detail("s1", BENCH_TOP[:20]), detail("s2", BENCH_TOP[:20])], runs.plugin_records(report), ARM)
    assert agreement == runs.Agreement(agree=1, missing=1)


# -- rounds: CPU and wall from one round -------------------------------------------------------------


def test_fastest_takes_cpu_and_wall_from_the_same_round(runs: ModuleType) -> None:
    rounds = [runs.Child(cpu=3.0, wall=2.0, rss_mb=80.0, stdout="first"), runs.Child(cpu=1.0, wall=5.0, rss_mb=60.0, stdout="second"),
              runs.Child(cpu=2.0, wall=1.0, rss_mb=70.0, stdout="third")]
    best = runs.fastest(rounds)
    assert (best.cpu, best.wall, best.stdout) == (1.0, 5.0, "second")
    assert best.rss_mb == 80.0 and best.all_cpu == (3.0, 1.0, 2.0)


# -- release.py: the evaluator against the plugin over the same rankers ------------------------------


def test_the_evaluators_ratio_is_over_a_plugin_run_of_the_same_rankers(runs: ModuleType) -> None:
    release = load("release")
    evaluator = {"lexical": runs.Child(6.0, 6.0, 50.0, ""), "bm25": runs.Child(4.0, 4.0, 50.0, "")}  # 10 s over 20 arm-samples: 500 ms
    same_rankers = runs.Child(2.5, 2.5, 90.0, "")  # 20 arm-samples: 125 ms
    all_arms = runs.Child(3.0, 3.0, 120.0, "")  # 60 arm-samples: 50 ms, start-up and reading shared by six arms
    rows = dict(release.evaluator_rows(evaluator, {"lexical": 10, "bm25": 10}, same_rankers, 20, all_arms, 60, 6))
    assert rows["evaluator/plugin cpu, same 2 rankers"] == "4.00x"
    assert rows["evaluator/plugin per arm-sample, same 2 rankers"] == "4.00x"
    assert rows["evaluator (2 rankers) per arm-sample / the 6-arm cold run's"] == "500.0 ms / 50.0 ms = 10.00x"
    assert [name for name in rows if "evaluator/plugin" in name and "same 2 rankers" not in name] == []


def test_the_other_scripts_load_with_the_shared_helpers(runs: ModuleType) -> None:
    leaderboard = load("leaderboard")
    assert leaderboard.top_agreement is runs.top_agreement and leaderboard.fastest is runs.fastest


# -- embedding.py: parity over every sample the bench ranked -----------------------------------------


def test_embedding_parity_counts_an_errored_and_a_missing_record_as_disagreements() -> None:
    embedding = load("embedding")
    metrics_ours = {f"{name}@{k}": 0.5 for name in ("recall", "precision") for k in (5, 10, 20)} | {"mrr@k": 1.0}
    metrics_theirs = {f"{name}@{k}": 0.5 for name in ("Recall", "Precision") for k in (5, 10, 20)} | {"MRR": 1.0}
    found = {
        "equal": {"ranking": BENCH_TOP[:20], "error": None, "given": [], "metrics": metrics_ours, "rank_of_first_gold": 1},
        "last-differs": {"ranking": BENCH_TOP[:19] + ["src/elsewhere.py"], "error": None, "given": [], "metrics": metrics_ours,
                         "rank_of_first_gold": 1},
        "errored": {"ranking": [], "error": "the embedder failed", "given": [], "metrics": {}, "rank_of_first_gold": None},
    }
    details = [{"sample_id": sample, "top_files": BENCH_TOP[:20], "metrics": metrics_theirs} for sample in ("equal", "last-differs", "errored", "missing")]
    assert embedding.parity(found, details) == (1, 4, 2, 4)
