"""Results over time: commit and machine recorded in every report, saved runs (--bench-save,
--bench-autosave), a run paired with a saved one (--bench-compare), and `retrieval-bench history`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from browser_helpers import layout_at
from report_helpers import SHIFTED_ARM

RELEASE = Path(__file__).resolve().parent.parent / "testdata" / "release"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
SAVED = re.compile(r"^(\d{4})_(nocommit|[0-9a-f]{7})_\d{8}_\d{6}_([A-Za-z0-9.-]+?)(_partial)?\.json$")
USAGE_ERROR = 4

MINE = SHIFTED_ARM


@pytest.fixture
def bench(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(RELEASE, pytester.path / "release")
    pytester.makeconftest(MINE.format(shift=0))
    return pytester


def run(pytester: pytest.Pytester, *args: str, samples: str = SAMPLES) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--bench-samples={samples}", f"--bench-corpus={CORPUS}", "--bench-arms=grep,mine",
                                         "-p", "no:cacheprovider", *args, timeout=300)


def saved(pytester: pytest.Pytester) -> list[str]:
    storage = pytester.path / ".retrieval-bench"
    return sorted(path.name for path in storage.glob("*.json")) if storage.is_dir() else []  # the natural glob: reports only


def history(pytester: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return cli(pytester, "history", *args)


def cli(pytester: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).with_name("retrieval-bench")), *args], cwd=pytester.path,
                          capture_output=True, text=True, timeout=120)


def test_saved_runs_are_numbered_and_a_later_run_is_compared_with_the_latest(bench: pytest.Pytester) -> None:
    first = run(bench, "--bench-save=first")
    assert first.ret == 0
    assert [SAVED.match(name).groups() for name in saved(bench)] == [("0001", "nocommit", "first", None)]  # type: ignore[union-attr]
    bench.makeconftest(MINE.format(shift=1))
    second = run(bench, "--bench-autosave", "--bench-compare", "--bench-gate=noregression:mrr@k>=-0.5", "--bench-report=pr.json")
    assert second.ret == 0, second.stdout.str()
    second.stdout.fnmatch_lines(["*compared with saved run 0001 first (*0001_nocommit_*_first.json)*", "*saved as *0002_nocommit_*_run.json*"])
    report = json.loads((bench.path / "pr.json").read_text())
    assert report["baseline"]["rules"] and {rule["arm"] for rule in report["baseline"]["rules"]} == {"grep", "mine"}
    assert report["baseline"]["arms"]["mine"]["regressed"] + report["baseline"]["arms"]["mine"]["improved"] > 0
    stored = bench.path / ".retrieval-bench" / saved(bench)[1]
    assert stored.read_bytes() == (bench.path / "pr.json").read_bytes()  # the report as written
    assert json.loads((stored.parent / "registrations" / stored.name).read_text()) == report["registration"]


def test_every_report_records_its_commit_and_machine(bench: pytest.Pytester) -> None:
    run(bench, "--bench-report=outside.json")
    outside = json.loads((bench.path / "outside.json").read_text())
    assert outside["commit_info"] is None  # not a git repository: null, never an error
    assert outside["machine_info"]["python"] == ".".join(map(str, sys.version_info[:3])) and outside["machine_info"]["cpu_count"] >= 1
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    git = lambda *args: subprocess.run(["git", "-C", str(bench.path), *args], check=True, capture_output=True, text=True,
                                       env={**env, "PATH": "/usr/bin:/bin", "HOME": str(bench.path)}).stdout.strip()
    git("init", "-q", "-b", "trunk")
    git("add", "conftest.py")
    git("commit", "-q", "-m", "the arm")
    run(bench, "--bench-report=clean.json", "--bench-autosave")
    clean = json.loads((bench.path / "clean.json").read_text())["commit_info"]
    assert clean["id"] == git("rev-parse", "HEAD") and clean["branch"] == "trunk" and clean["dirty"] is False and clean["time"]
    assert SAVED.match(saved(bench)[0]).groups()[1:3] == (clean["id"][:7], "trunk")  # type: ignore[union-attr]
    bench.makeconftest(MINE.format(shift=2))
    run(bench, "--bench-report=dirty.json")
    assert json.loads((bench.path / "dirty.json").read_text())["commit_info"]["dirty"] is True


def test_a_partial_run_is_saved_only_when_named_and_then_marked(bench: pytest.Pytester) -> None:
    auto = run(bench, "--bench-autosave", "-k", "gin")
    assert auto.ret == 0 and saved(bench) == []
    auto.stdout.fnmatch_lines(["*not saved: a partial run is saved only when named with --bench-save NAME*"])
    run(bench, "--bench-save=debug", "-k", "gin")
    assert [SAVED.match(name).groups()[2:] for name in saved(bench)] == [("debug", "_partial")]  # type: ignore[union-attr]
    refused = run(bench, "--bench-compare=debug")
    assert refused.ret == USAGE_ERROR and "is partial, so it cannot be paired" in refused.stderr.str()


def test_compare_skips_runs_over_other_samples_and_refuses_one_named(bench: pytest.Pytester) -> None:
    rows = (bench.path / SAMPLES).read_text().splitlines()
    (bench.path / "fewer.jsonl").write_text("\n".join(rows[:10]) + "\n")
    assert run(bench, "--bench-save=full").ret == 0
    assert run(bench, "--bench-save=fewer", samples="fewer.jsonl").ret == 0
    latest = run(bench, "--bench-compare")
    assert latest.ret == 0
    latest.stdout.fnmatch_lines(["*compared with saved run 0001 full*", "*skipped saved run 0002_*_fewer.json: over other samples*"])
    named = run(bench, "--bench-compare=fewer")
    assert named.ret == USAGE_ERROR and "_fewer.json is over other samples, so it cannot be paired with this run" in named.stderr.str()
    missing = run(bench, "--bench-compare=7")
    assert missing.ret == USAGE_ERROR and "no saved run numbered or named so" in missing.stderr.str()


def test_history_lists_runs_with_each_arms_change_and_series(bench: pytest.Pytester) -> None:
    assert history(bench).stdout.startswith("retrieval-bench history: no saved run")
    run(bench, "--bench-save=base")
    bench.makeconftest(MINE.format(shift=1))
    run(bench, "--bench-save=shifted")
    rows = (bench.path / SAMPLES).read_text().splitlines()
    (bench.path / "fewer.jsonl").write_text("\n".join(rows[:10]) + "\n")
    run(bench, "--bench-save=fewer", samples="fewer.jsonl")
    result = history(bench, "--metric", "mrr@k")
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in result.stdout.splitlines()]
    by_run = {(line[0], line[7]): line for line in lines if line and line[0].isdigit()}
    assert by_run[("0001", "mine")][-1] == "new" and by_run[("0003", "mine")][-1] == "new"  # another series starts anew
    second = by_run[("0002", "mine")]
    before = json.loads(next((bench.path / ".retrieval-bench").glob("0001_*_base.json")).read_text())
    after = json.loads(next((bench.path / ".retrieval-bench").glob("0002_*_shifted.json")).read_text())
    diffs = [a["arms"]["mine"]["metrics"]["mrr@k"] - b["arms"]["mine"]["metrics"]["mrr@k"]
             for a, b in zip(after["details"], before["details"]) if a["stratum"] == "positive" and "mine" in a["arms"]]
    assert float(second[11]) == pytest.approx(sum(diffs) / len(diffs), abs=5e-4)
    digest = before["registration"]["samples"][0]["sha256"]
    assert second[6] == digest[:12] and by_run[("0003", "mine")][6] != digest[:12]  # each run names its samples
    assert by_run[("0001", "mine")][5] == "S1" and by_run[("0003", "mine")][5] == "S2"
    assert "2 series: runs over other samples or another limit are never paired with each other" in result.stdout
    default = [line.split() for line in history(bench).stdout.splitlines()]
    hit_row = next(line for line in default if line[:1] == ["0002"] and line[7] == "mine")
    low, high = after["summary"]["all"]["mine"]["wilson95"]["hit@20"]
    assert default[1][7] == "hit@20" and " ".join(hit_row[9:11]) == f"[{low:.3f}, {high:.3f}]"  # the run's own Wilson interval


def test_the_store_is_ignored_by_git_globbed_for_reports_only_and_diffed_by_number(bench: pytest.Pytester) -> None:
    run(bench, "--bench-save=base")
    bench.makeconftest(MINE.format(shift=1))
    run(bench, "--bench-save=shifted")
    storage = bench.path / ".retrieval-bench"
    assert (storage / ".gitignore").read_text().splitlines()[-1] == "*"  # as pytest's own cache folder
    reports = sorted(storage.glob("*.json"))
    assert [SAVED.match(path.name).group(3) for path in reports] == ["base", "shifted"]  # type: ignore[union-attr]
    assert all("details" in json.loads(path.read_text()) for path in reports)  # no registration sidecar among them
    by_number = cli(bench, "diff", "1", "2")
    assert by_number.returncode == 0, by_number.stderr
    by_path = cli(bench, "diff", *(str(path.relative_to(bench.path)) for path in reports))
    assert by_number.stdout == by_path.stdout and reports[0].name in by_number.stdout  # the diff names the files it read
    assert "mine" in by_number.stdout and cli(bench, "diff", "base", "latest").stdout == by_number.stdout
    missing = cli(bench, "diff", "1", "9")
    assert missing.returncode == 2 and "9: no such report file, and no saved run numbered or named so" in missing.stderr
    assert "0001 base, 0002 shifted" in missing.stderr

    recall = history(bench, "--metric", "recall@10").stdout.splitlines()
    headers = recall[1].split("  ")
    columns = [column.strip() for column in headers if column.strip()]
    assert columns.count("recall@10") == 1 and "change in recall@10" in columns and "mrr@k" in columns
    assert "change in recall@10:" in recall[0]
    default = history(bench).stdout.splitlines()
    assert "change in hit@20" in default[1] and "change in hit@20:" in default[0]
    mrr_at_k = history(bench, "--metric", "mrr@k").stdout.splitlines()  # the metric the walkthrough saw printed twice
    columns = [column.strip() for column in mrr_at_k[1].split("  ") if column.strip()]
    assert columns.count("mrr@k") == 1 and "change in mrr@k" in columns and "change in mrr@k:" in mrr_at_k[0]


@pytest.mark.parametrize("args, words", [(("--bench-compare", "--bench-baseline=x.json"), "give one"),
                                         (("--bench-save=no/slash",), "a run name is 1 to 64 letters"),
                                         (("--bench-compare", "--bench-update-baseline"), "never rewritten")])
def test_saved_run_options_refuse_what_cannot_work(bench: pytest.Pytester, args: tuple[str, ...], words: str) -> None:
    result = run(bench, *args)
    assert result.ret == USAGE_ERROR and words in result.stderr.str()


def test_history_help_names_the_folder_the_page_writes(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_retrieval_bench.cli import main

    with pytest.raises(SystemExit):
        main(["history", "--help"])
    words = " ".join(capsys.readouterr().out.split())
    assert "PAGE_runs" not in words and "history.html's in history_runs/" in words  # as the page test below finds it


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_the_history_page_is_self_contained_links_each_run_and_flags_changes(bench: pytest.Pytester) -> None:
    run(bench, "--bench-save=base")
    bench.makeconftest(MINE.format(shift=1).replace('name = "mine"', 'name = "mine<script>"'))
    result = bench.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep,mine<script>",
                                        "-p", "no:cacheprovider", "--bench-save=shifted", timeout=300)
    assert result.ret == 0, result.stdout.str()
    page = bench.path / "out" / "history.html"
    written = history(bench, "--html", str(page))
    assert written.returncode == 0, written.stderr
    html = page.read_text()
    assert "Content-Security-Policy" in html and "<script" not in html.replace("&lt;script", "")  # names escaped, no script at all
    assert "http://" not in html and "https://" not in html and " src=" not in html  # nothing loaded from anywhere
    for counter in ("0001", "0002"):
        assert f'href="history_runs/{counter}.html"' in html and (page.parent / "history_runs" / f"{counter}.html").is_file()
    assert html.count("<svg") == 3 and "<polygon class=\"band\"" in html  # hit@20, recall@10, mrr@k; hit@k's Wilson band
    assert 'class="flag">grep' not in html  # grep did not change
    if CHROMIUM is None:
        pytest.skip("no chromium or chromium-browser binary on PATH (apt-get install chromium)")
    shot = bench.path / "history.png"
    taken = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", f"--screenshot={shot}", "--window-size=1000,1400",
                            page.as_uri()], capture_output=True, text=True, timeout=120)
    assert taken.returncode == 0 and shot.stat().st_size > 10_000, taken.stderr[-2000:]
    dom = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    assert dom.count("<polyline") >= 3 and "Retrieval bench history" in dom
    for shown in (page, page.parent / "history_runs" / "0002.html"):  # on a phone, neither page scrolls sideways
        layout = layout_at(shown, 420)
        assert layout.client_width == 420 and layout.scroll_width <= 420 and layout.overflowing == [], (shown.name, layout)
