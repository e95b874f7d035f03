"""The plugin under pytest-xdist: same report whatever the workers, snapshots kept together, lost workers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from report_helpers import assert_outcomes, zero_wall

pytest.importorskip("xdist")

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"
BUILTIN_ARMS = ("grep", "grep-ident", "bm25:all", "bm25:ident", "arb-lexical", "arb-bm25")
CRASH_SAMPLE = "402beedd849ff8293b36f091"  # acme/gin-lite, code2test, positive

ROWS = {row["id"]: row for row in map(json.loads, filter(str.strip, SAMPLES.read_text(encoding="utf-8").splitlines()))}


def bench_args(*extra: str) -> list[str]:
    return ["-p", "no:cacheprovider", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", *extra]


def comparable(data: bytes) -> bytes:
    """The report's bytes (checked canonical) with wall_ms values zeroed and the latency section removed."""
    assert data.endswith(b"\n") and not data.endswith(b"\n\n")
    report = json.loads(data)
    assert json.dumps(report, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n" == data
    report.pop("latency")
    return json.dumps(zero_wall(report), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


MODES = {
    "no-xdist": ("-p", "no:xdist"),
    "n0": ("-n", "0"),
    "n2-loadgroup": ("-n", "2", "--dist", "loadgroup"),
    "n3-load": ("-n", "3", "--dist", "load"),
}


def test_report_is_the_same_whatever_the_workers(pytester: pytest.Pytester) -> None:
    reports: dict[str, bytes] = {}
    for name, mode in MODES.items():
        result = pytester.runpytest_subprocess(*mode, *bench_args("-q", f"--bench-report={name}.json"))
        assert result.ret == 0, (name, result.stdout.str()[-3000:])
        assert_outcomes(result, passed=34 * len(BUILTIN_ARMS), skipped=len(BUILTIN_ARMS))
        reports[name] = (pytester.path / f"{name}.json").read_bytes()
    report = json.loads(reports["no-xdist"])
    assert report["missing"] == [] and report["problems"] == []
    assert report["registration"]["arms"] == list(BUILTIN_ARMS)
    assert len(report["details"]) == len(ROWS)
    assert all(record["error"] is None for entry in report["details"] for record in entry["arms"].values())
    reference = comparable(reports["no-xdist"])
    for name, data in reports.items():
        assert comparable(data) == reference, f"{name} differs from the run without xdist"


def test_one_worker_per_snapshot_under_loadgroup(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", *bench_args("-v"))
    assert result.ret == 0, result.stdout.str()[-3000:]
    workers: dict[str, set[str]] = {}
    items = 0
    for line in result.outlines:
        match = re.match(r"^\[(gw\d+)\] .*samples\.jsonl::(\w+)\[([^\]]+)\]", line)
        if match:
            items += 1
            workers.setdefault(ROWS[match[2]]["repo"], set()).add(match[1])
    assert items == len(ROWS) * len(BUILTIN_ARMS)
    assert set(workers) == {"acme/gin-lite", "acme/pyquery-tools", "nimbus/rusty-cache"}
    for repo, names in workers.items():
        assert len(names) == 1, f"{repo} ran on {sorted(names)}"


SNAPSHOTS = {(row["repo"], row["base_commit"]) for row in ROWS.values()}
LOADS_LINE = re.compile(r"retrieval-bench: (\d+) snapshots? set up: .*\((\d+) snapshot loads? in (\d+) workers?\)$")
CHOSEN_LINE = "retrieval-bench: xdist --dist loadgroup (each snapshot's items on one worker, agent items spread over the workers; give --dist load for xdist's default)"


def workers_by_repo(lines: list[str]) -> dict[str, set[str]]:
    """Which workers ran each repository's items, from `-v` lines (`[gw0] ... samples.jsonl::<id>[<arm>]`)."""
    workers: dict[str, set[str]] = {}
    for line in lines:
        match = re.match(r"^\[(gw\d+)\] .*samples\.jsonl::(\w+)\[([^\]]+)\]", line)
        if match:
            workers.setdefault(ROWS[match[2]]["repo"], set()).add(match[1])
    return workers


def snapshot_loads(lines: list[str]) -> tuple[int, int, int]:
    """(snapshots, snapshot loads, workers) of the summary's set-up line."""
    found = [match for line in lines if (match := LOADS_LINE.search(line))]
    assert len(found) == 1, lines[-20:]
    return int(found[0][1]), int(found[0][2]), int(found[0][3])


def test_plain_n_sets_each_snapshot_up_once(pytester: pytest.Pytester) -> None:
    """`-n 2` with no `--dist`: the bench picks its snapshot-grouped scheduling, says so in the
    header, and the summary counts one snapshot load per snapshot."""
    result = pytester.runpytest_subprocess("-n", "2", *bench_args("-v"))
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert CHOSEN_LINE in result.outlines
    workers = workers_by_repo(result.outlines)
    assert set(workers) == {repo for repo, _ in SNAPSHOTS}
    for repo, names in workers.items():
        assert len(names) == 1, f"{repo} ran on {sorted(names)}"
    assert snapshot_loads(result.outlines) == (len(SNAPSHOTS), len(SNAPSHOTS), 2)


@pytest.mark.parametrize("given", ["--dist=load", "-d", "addopts"])
def test_an_explicit_dist_load_is_kept(pytester: pytest.Pytester, given: str) -> None:
    """`--dist load` (or `-d`, or either in addopts) keeps xdist's own load scheduling: its first
    round hands items out in turn, so a snapshot is set up on both workers, and the loads say so."""
    if given == "addopts":
        pytester.makeini("[pytest]\naddopts = --dist load\n")
    result = pytester.runpytest_subprocess("-n", "2", *([given] if given != "addopts" else []), *bench_args("-v"))
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert CHOSEN_LINE not in result.outlines
    workers = workers_by_repo(result.outlines)
    pairs = sum(len(names) for names in workers.values())
    snapshots, loads, worker_count = snapshot_loads(result.outlines)
    assert (snapshots, worker_count) == (len(SNAPSHOTS), 2)
    assert pairs > len(SNAPSHOTS) and loads >= pairs


CRASH_CONFTEST = f"""
import os
import signal
from pytest_retrieval_bench import Answer

class Crash:
    name = "crash"

    def retrieve(self, request):
        if request.sample_id == {CRASH_SAMPLE!r}:
            os.kill(os.getpid(), signal.SIGKILL)  # as `kill -9` of the worker from outside
        return Answer(ranking=[])

def pytest_retrieval_bench_arms(config):
    return [Crash()]
"""


@pytest.mark.parametrize("dist", ["load", "loadgroup"])
def test_lost_worker(pytester: pytest.Pytester, dist: str) -> None:
    """A worker killed mid-item: the report is still written and names the lost item.

    Observed on pytest 8.4 and 9.2: xdist reports the item failed ("worker 'gwN' crashed while running
    ..."), a new worker takes over, and the report's record for it has error "lost: worker 'gwN' crashed
    while running '<nodeid>'", an empty ranking and zero metrics; it is the run's only error and `missing`
    stays empty. The node id is xdist's: under loadgroup on pytest 8 xdist renames a grouped item to
    `<nodeid>@<group>` (it sets `_nodeid`, which pytest 9's `nodeid` no longer reads). Under loadgroup
    xdist's own scope scheduler handed the crash item to every replacement worker in turn and ended in an
    internal error; the plugin's scheduler runs it once, like the load scheduler.
    """
    pytester.makeconftest(CRASH_CONFTEST)
    result = pytester.runpytest_subprocess("-n", "2", "--dist", dist, *bench_args("-rf", "--bench-arms=grep,crash", "--bench-report=out.json"),
                                           timeout=120)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert result.ret == 1
    assert_outcomes(result, failed=1, passed=2 * 34 - 1, skipped=2)
    assert result.stdout.str().count("node down") == 1
    result.stdout.fnmatch_lines([f"FAILED *{CRASH_SAMPLE}[[]crash[]]*"])
    report = json.loads((pytester.path / "out.json").read_bytes())
    assert report["missing"] == []
    entry = next(e for e in report["details"] if e["id"] == CRASH_SAMPLE)
    crashed = entry["arms"]["crash"]
    row = ROWS[CRASH_SAMPLE]
    renamed = dist == "loadgroup" and int(pytest.__version__.split(".")[0]) < 9
    nodeid = re.escape(f"samples.jsonl::{CRASH_SAMPLE}[crash]" + (f"@{row['repo']}@{row['base_commit']}" if renamed else ""))
    assert re.fullmatch(rf"lost: worker 'gw\d+' crashed while running '[^']*{nodeid}'", crashed["error"]), crashed["error"]
    errors = [(e["id"], arm) for e in report["details"] for arm, record in e["arms"].items() if record["error"]]
    assert errors == [(CRASH_SAMPLE, "crash")]
    assert crashed["ranking"] == [] and not crashed["abstained"] and not crashed["selective_success"]
    assert set(crashed["metrics"].values()) == {0.0}
    assert report["summary"]["all"]["crash"]["errors"] == 1


@pytest.mark.parametrize("dist", ["load", "loadgroup"])
def test_lost_worker_without_replacement(pytester: pytest.Pytester, dist: str) -> None:
    """No replacement worker (`--max-worker-restart=0`): xdist stops the run; every item that never
    reported is named in the report (an error record, or `partial.not_run`), and the exit code is 1."""
    pytester.makeconftest(CRASH_CONFTEST)
    result = pytester.runpytest_subprocess("-n", "2", "--dist", dist, "--max-worker-restart=0",
                                           *bench_args("--bench-arms=grep,crash", "--bench-report=out.json"), timeout=120)
    assert result.ret == 1
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    report = json.loads((pytester.path / "out.json").read_bytes())
    reported = {f"{entry['id']}[{arm}]" for entry in report["details"] for arm in entry["arms"]}
    not_run = set(report["partial"]["not_run"])
    assert not reported & not_run and not_run
    unlabelled = {sample for sample, row in ROWS.items() if "UNLABELED" in str(row["metadata"]["exercises"])}  # skipped at load
    expected = {f"{sample}[{arm}]" for sample in set(ROWS) - unlabelled - set(report["skipped"]) for arm in ("grep", "crash")}
    assert len(unlabelled) == 1 and reported | not_run == expected
    assert set(report["missing"]) - unlabelled == {name.split("[")[0] for name in not_run}


SPREAD_CONFTEST = """
import os
import time
from pathlib import Path
from typing import Any

import pytest_retrieval_bench

@pytest_retrieval_bench.agent("waiter", final_k=2)
def waiter(bench_request, bench_tools):
    seen = Path(os.environ["WORKER_LOG"]) / bench_request.sample_id
    seen.write_text(os.environ.get("PYTEST_XDIST_WORKER", "main"), encoding="utf-8")
    time.sleep(0.05)  # the model's answer: what makes an agent item I/O bound
    hits = bench_tools.grep("test").hits
    for hit in hits[:2]:
        bench_tools.read_file(hit["path"])
    bench_tools.submit([hit["path"] for hit in hits[:2]])
"""


def without_times(data: bytes) -> Any:
    """The report without what may differ between runs of the same inputs: wall times and latency."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: (0 if key in ("wall_ms", "wall_seconds") else strip(item)) for key, item in value.items()}
        return [strip(item) for item in value] if isinstance(value, list) else value

    report = json.loads(data)
    report.pop("latency")
    return strip(report)


def test_agent_items_of_one_snapshot_spread_over_workers(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Agents that wait on a model are I/O bound: `-n 4` spreads each snapshot's agent items over
    the workers (a ranking arm's stay on one), and the report is the one `-n 0` writes."""
    pytester.makeconftest(SPREAD_CONFTEST)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test's own worker, when the suite runs under xdist
    reports = {}
    for mode in ("0", "4"):
        log = pytester.path / f"workers-{mode}"
        log.mkdir()
        monkeypatch.setenv("WORKER_LOG", str(log))
        result = pytester.runpytest_subprocess("-n", mode, *bench_args("-v", "--bench-arms=waiter,grep", f"--bench-report=n{mode}.json"))
        assert result.ret == 0, result.stdout.str()[-3000:]
        reports[mode] = (pytester.path / f"n{mode}.json").read_bytes()
    ran = {path.name: path.read_text(encoding="utf-8") for path in (pytester.path / "workers-4").iterdir()}
    by_snapshot: dict[tuple[str, str], set[str]] = {}
    for sample_id, worker in ran.items():
        by_snapshot.setdefault((ROWS[sample_id]["repo"], ROWS[sample_id]["base_commit"]), set()).add(worker)
    assert len(by_snapshot) == 3 and all(len(workers) >= 2 for workers in by_snapshot.values()), by_snapshot
    # xdist hands each worker a unit, then a second to each worker with two items or fewer pending: the
    # worker holding the first snapshot's ranking unit may see no agent item, the other three always do
    assert len(set().union(*by_snapshot.values())) >= 3, by_snapshot
    grep_workers: dict[str, set[str]] = {}
    for line in result.outlines:  # the ranking arm's items: still one worker per snapshot
        match = re.match(r"^\[(gw\d+)\] .*samples\.jsonl::(\w+)\[grep\]", line)
        if match:
            grep_workers.setdefault(ROWS[match[2]]["repo"], set()).add(match[1])
    assert grep_workers and all(len(names) == 1 for names in grep_workers.values()), grep_workers
    assert set((pytester.path / "workers-0").iterdir()) and set(p.read_text() for p in (pytester.path / "workers-0").iterdir()) == {"main"}
    assert without_times(reports["4"]) == without_times(reports["0"])
    assert "waiter" in json.loads(reports["4"])["trajectory"]
