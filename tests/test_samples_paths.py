"""Where samples come from does not change what runs: a samples file named through a linked directory
is collected once, and a project's ini `bench_samples` does not stand in the way of merging reports."""

from __future__ import annotations

import json

import pytest

from report_helpers import assert_outcomes

SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
USAGE_ERROR = 4


def test_a_samples_file_named_through_a_linked_directory_is_collected_once(release_bench: pytest.Pytester) -> None:
    bench = release_bench
    (bench.path / "linked").symlink_to(bench.path / "release", target_is_directory=True)
    direct = bench.runpytest_subprocess(SAMPLES, f"--bench-corpus={CORPUS}", "--bench-arms=grep", "-p", "no:cacheprovider", "--co", "-q")
    linked = bench.runpytest_subprocess(SAMPLES.replace("release/", "linked/", 1), f"--bench-corpus={CORPUS}", "--bench-arms=grep",
                                        "-p", "no:cacheprovider", "--co", "-q")
    items = [line for line in direct.stdout.lines if "::" in line]
    linked_items = [line for line in linked.stdout.lines if "::" in line]
    assert direct.ret == linked.ret == 0 and items
    assert len(linked_items) == len(items) and all(line.startswith("linked/") for line in linked_items)


def test_ini_samples_do_not_block_a_merge_but_samples_on_the_command_line_do(release_bench: pytest.Pytester) -> None:
    bench = release_bench
    first = bench.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep", "-p", "no:cacheprovider",
                                       "--bench-report=main.json")
    assert_outcomes(first, passed=34, skipped=1)
    bench.makeini(f"[pytest]\nbench_samples = {SAMPLES}\nbench_corpus = {CORPUS}\n")
    merged = bench.runpytest_subprocess("--bench-summarize=main.json", "--bench-report=merged.json", "-p", "no:cacheprovider")
    assert merged.ret == 0, merged.stderr.str()
    assert json.loads((bench.path / "merged.json").read_text())["summary"] == json.loads((bench.path / "main.json").read_text())["summary"]
    refused = bench.runpytest_subprocess("--bench-summarize=main.json", "--bench-report=again.json", f"--bench-samples={SAMPLES}",
                                         "-p", "no:cacheprovider")
    assert refused.ret == USAGE_ERROR and "--bench-summarize merges written reports: it takes no --bench-samples" in refused.stderr.str()
    unnamed = bench.runpytest_subprocess("--bench-summarize=main.json", "-p", "no:cacheprovider")
    assert unnamed.ret == USAGE_ERROR and "--bench-summarize needs --bench-report OUT" in unnamed.stderr.str()
