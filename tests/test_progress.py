"""A long snapshot set-up shows its progress, and pytest's dots and percentage stay as they were.

The bundled snapshots set up in milliseconds, so a conftest makes the set-up slow to the
display: every look at its clock is half a second later than the one before.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
ROWS = [json.loads(line) for line in (TESTDATA / SAMPLES).read_text(encoding="utf-8").splitlines() if line.strip()]
SNAPSHOTS = {f"{row['repo']}@{row['base_commit'][:7]}" for row in ROWS}

SLOW_CLOCK = """
import itertools
import types

import pytest_retrieval_bench.progress as progress

_ticks = itertools.count()
progress.time = types.SimpleNamespace(monotonic=lambda: next(_ticks) * 0.5)
"""
AS_TERMINAL = """

def pytest_collection_finish(session):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    reporter.isatty = type(reporter.isatty)(True)  # as when pytest writes to a terminal
"""
UPDATE = re.compile(r"^retrieval-bench: setting up (\S+): .*, (\d+\.\d) s(, about \d+ s left)?$")
DONE = re.compile(r"^retrieval-bench: set-up of (\S+) done after \d+\.\d s: (\d+) files? read, (\d+)/(\d+) indexes$")


def file_count(key: str) -> int:
    """The files of a bundled snapshot, as its corpus manifest gives them."""
    manifest = (TESTDATA / CORPUS / "corpus_manifest.jsonl").read_text(encoding="utf-8")
    return next(row["file_count"] for row in map(json.loads, filter(str.strip, manifest.splitlines()))
                if f"{row['repo']}@{row['base_commit'][:7]}" == key)


def run(pytester: pytest.Pytester, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}",
                                         "--bench-arms=grep,bm25:all,arb-repomap", *extra)


def pytest_lines(lines: list[str]) -> list[str]:
    """pytest's progress lines: the dots and the percentage that ends each."""
    return [line for line in lines if re.search(r"\[ *\d+%\]$", line)]


def as_shown(text: str) -> list[str]:
    """The lines a terminal shows for `text`: a backspace moves the cursor back one column, what
    follows overwrites."""
    shown = []
    for raw in text.split("\n"):
        cells: list[str] = []
        cursor = 0
        for char in raw:
            if char == "\b":
                cursor = max(0, cursor - 1)
                continue
            if cursor == len(cells):
                cells.append(char)
            else:
                cells[cursor] = char
            cursor += 1
        shown.append("".join(cells).rstrip())
    return shown


def test_a_slow_set_up_prints_plain_lines_when_not_on_a_terminal(release_bench: pytest.Pytester) -> None:
    release_bench.makeconftest(SLOW_CLOCK)
    quiet = run(release_bench, "-o", "bench_progress_after=100000")  # the same run, its set-ups never long enough
    assert quiet.ret == 0, quiet.stdout.str()[-2000:]
    assert not [line for line in quiet.outlines if UPDATE.match(line) or DONE.match(line)]
    result = run(release_bench)
    assert result.ret == 0, result.stdout.str()[-2000:]
    updates: dict[str, list[float]] = {}
    for line in result.outlines:
        match = UPDATE.match(line)
        if match:
            updates.setdefault(match[1], []).append(float(match[2]))
    assert set(updates) == SNAPSHOTS
    for key, seconds in updates.items():
        assert seconds[0] >= 2.0, (key, seconds)  # silent for the first 2 s (bench_progress_after's default)
        assert all(later - earlier >= 5.0 for earlier, later in zip(seconds, seconds[1:])), (key, seconds)  # then every 5 s at most
    done = {match[1]: match.groups()[1:] for line in result.outlines if (match := DONE.match(line))}
    assert set(done) == SNAPSHOTS
    for key, (files, built, total) in done.items():
        assert int(files) == file_count(key) and built == total
    assert pytest_lines(result.outlines) == pytest_lines(quiet.outlines)  # every dot and percentage as without progress
    assert pytest_lines(result.outlines)[-1].endswith("[100%]")
    assert result.parseoutcomes() == quiet.parseoutcomes()


def test_q_shows_no_progress(release_bench: pytest.Pytester) -> None:
    release_bench.makeconftest(SLOW_CLOCK)
    result = run(release_bench, "-q", "-o", "bench_progress_after=0")
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert "retrieval-bench: setting up" not in result.stdout.str()
    assert "retrieval-bench: set-up of" not in result.stdout.str()


def test_xdist_workers_show_no_progress(release_bench: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    release_bench.makeconftest(SLOW_CLOCK)
    result = run(release_bench, "-n", "2", "-o", "bench_progress_after=0")
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert "retrieval-bench: setting up" not in result.stdout.str() + result.stderr.str()


def test_on_a_terminal_one_line_is_rewritten_in_place_then_erased(release_bench: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    release_bench.makeconftest(SLOW_CLOCK + AS_TERMINAL)
    plain = run(release_bench, "-o", "bench_progress_after=100000")
    result = run(release_bench)
    assert plain.ret == result.ret == 0, result.stdout.str()[-2000:]
    text = result.stdout.str()
    assert "\b" in text and " [0/" not in text  # written in place: counts known once read, as "N files read"
    assert re.search(r" \[\d+(/\d+)? files read, \d/\d indexes, \d+\.\d s", text)
    assert not [line for line in result.outlines if UPDATE.match(line) or DONE.match(line)]  # no plain lines
    shown = as_shown(text)
    assert pytest_lines(shown) == pytest_lines(plain.outlines)  # once erased, the terminal shows pytest's lines only
    assert pytest_lines(shown)[-1].endswith("[100%]")


def test_a_bad_threshold_is_a_usage_error(release_bench: pytest.Pytester) -> None:
    result = run(release_bench, "-o", "bench_progress_after=soon")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bench_progress_after = 'soon': expected a number of seconds, 0 or more*"])


def test_the_store_counts_a_directory_snapshot_as_it_sets_it_up(tmp_path: Path, copies) -> None:
    """The counts the display sees: every file read (the total known from the listing), then each
    index the arms use, the share done never falling and complete at the end."""
    from pytest_retrieval_bench.corpus.progress import SetupCounts
    from pytest_retrieval_bench.corpus.resolve import SnapshotResolver
    from pytest_retrieval_bench.corpus.store import SnapshotStore

    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    files = {f"src/m{number}.py": f"def handler_{number}():\n    return {number}\n" for number in range(5)}
    for path, text in files.items():
        (tree / path).write_text(text)
    (tree / "logo.bin").write_bytes(b"\x00\x01")
    key = f"acme/tree@{'c' * 40}"
    kinds = ["lexical", "chunks", "repomap"]
    seen: list[tuple[int, int | None, int, float | None]] = []
    counts = SetupCounts(key, len(kinds), lambda c: seen.append((c.files_read, c.files_total, c.indexes_done, c.fraction())))
    store = SnapshotStore(SnapshotResolver(explicit={key: tree}), copies, None)
    store.open("acme/tree", "c" * 40, kinds, counts)
    everything = len(files) + 1
    assert [read for read, _, done, _ in seen if done == 0][: everything] == list(range(1, everything + 1))
    assert all(total == everything for _, total, _, _ in seen)
    assert seen[-1][2] == len(kinds) and seen[-1][3] == 1.0
    shares = [share for *_, share in seen if share is not None]
    assert shares == sorted(shares)


ENCODING = re.compile(r"^retrieval-bench: encoding (\S+) for dense: (\d+)/(\d+) chunk texts encoded, \d+/s, \d+\.\d s$")
ENCODED = re.compile(r"^retrieval-bench: encoding of (\S+) for dense done after \d+\.\d s: (\d+)/(\d+) chunk texts encoded$")
DENSE_ARM = """

from pytest_retrieval_bench import embedding_arm
from pytest_retrieval_bench.arms.hashing_embedder import HashingEmbedder

def pytest_retrieval_bench_arms(config):
    return [embedding_arm("dense", HashingEmbedder())]
"""


def test_an_embedding_arm_shows_its_encoding_and_a_warm_run_has_nothing_to_show(release_bench: pytest.Pytester) -> None:
    release_bench.makeconftest(SLOW_CLOCK + DENSE_ARM)
    args = ("--bench-arms=dense", "-o", "bench_progress_after=0", "--bench-cache-dir=cache")
    quiet = run(release_bench, "--bench-arms=dense", "-o", "bench_progress_after=100000", "--bench-no-cache")
    cold = run(release_bench, *args)
    assert quiet.ret == cold.ret == 0, cold.stdout.str()[-2000:]
    assert not [line for line in quiet.outlines if ENCODING.match(line) or ENCODED.match(line)]
    encoding = {match[1]: (int(match[2]), int(match[3])) for line in cold.outlines if (match := ENCODING.match(line))}
    done = {match[1]: (int(match[2]), int(match[3])) for line in cold.outlines if (match := ENCODED.match(line))}
    assert set(encoding) == set(done) == SNAPSHOTS
    for key, (encoded, total) in done.items():
        assert encoded == total == encoding[key][1] > 0, key  # every distinct chunk text of the snapshot, then done
    assert pytest_lines(cold.outlines) == pytest_lines(quiet.outlines)  # the dots and percentages stay as they were
    warm = run(release_bench, *args)
    assert warm.ret == 0
    assert not [line for line in warm.outlines if ENCODING.match(line) or ENCODED.match(line)]  # every vector from the cache


def test_counts_of_one_read_in_the_singular() -> None:
    """`1 file read`, `1 snapshot load in 1 worker`, `1 entry`: never "1 files read"."""
    from pytest_retrieval_bench.corpus.progress import SetupCounts
    from pytest_retrieval_bench.progress import describe, describe_final
    from pytest_retrieval_bench.report.html_samples import value_html
    from pytest_retrieval_bench.terminal import load_count

    counts = SetupCounts("o/r@abc", 0, lambda counts: None)
    counts.read(1)
    assert describe_final(counts) == "1 file read" and describe(counts, 0.5).startswith("1 file read,")
    counts.read(1, 1)
    assert describe(counts, 0.5).startswith("1/1 file read,")
    counts.read(2)
    assert describe_final(counts) == "2 files read"
    assert load_count([("o/r@abc", "gw0")]) == "1 snapshot load in 1 worker"
    assert load_count([("o/r@abc", "gw0"), ("o/r@abd", "gw1")]) == "2 snapshot loads in 2 workers"
    assert "<summary>1 entry</summary>" in value_html(["x" * 200]) and "<summary>2 entries</summary>" in value_html(["x" * 200, "y"])


def test_the_header_and_set_up_lines_say_one_snapshot_in_the_singular() -> None:
    from types import SimpleNamespace

    from pytest_retrieval_bench.terminal import header_lines, summary_lines

    sample = SimpleNamespace(snapshot_key="o/r@abc")
    bench = SimpleNamespace(loaded=[SimpleNamespace(samples=[sample], path="s.jsonl")], registration={}, arm_names=["grep"], arms={"grep": SimpleNamespace()},
                            settings=SimpleNamespace(limit=20, table_groups=["all"], baseline=None, report=None, markdown=None, html=None),
                            shard_keys=None, report={}, snapshot_setups=[{"snapshot": "o/r@abc", "kind": "lexical", "source": "built", "seconds": 0.1}],
                            snapshot_loads=[("o/r@abc", None)], failures=[], updated_baseline="", report_notes=[], report_path=None,
                            report_bytes=None, written=[])
    assert header_lines(bench) == ["retrieval-bench: samples s.jsonl (1 sample, 1 snapshot); arms grep; limit 20"]
    assert [line for line, _ in summary_lines(bench)][-1] == \
        "retrieval-bench: 1 snapshot set up: 1 index built (0.10 s), 0 loaded from cache (1 snapshot load)"
