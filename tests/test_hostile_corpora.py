"""Corpora that lie: a chunk file cut short or emptied, a manifest pointing outside its corpus or at
nothing, a symbol row without its file. Each is one snapshot error naming the file and line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

RELEASE = Path(__file__).resolve().parent.parent / "testdata" / "release"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
GIN = "release/corpus/synthetic_v1/acme__gin-lite/5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5.chunks.jsonl"


@pytest.fixture
def bench(release_bench: pytest.Pytester) -> pytest.Pytester:
    return release_bench


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep",
                                         "-p", "no:cacheprovider", "--bench-no-cache", *args, timeout=300)


def gin_errors(result: pytest.RunResult, words: list[str]) -> None:
    text = result.stdout.str()
    assert result.ret == 1, text
    assert all(word in text for word in words), (words, text[-3000:])
    assert "pyquery-tools" not in [line for line in text.splitlines() if line.startswith("ERROR")]  # other snapshots still run


def test_a_chunk_file_cut_at_a_line_boundary(bench: pytest.Pytester) -> None:
    path = bench.path / GIN
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[: len(lines) // 2]))
    gin_errors(run(bench), ["snapshot acme/gin-lite@5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5 is incomplete",
                            f"has {len(lines) // 2} rows", "promises chunk_count 184", "corpus_manifest.jsonl:1"])


def test_an_emptied_chunk_file(bench: pytest.Pytester) -> None:
    (bench.path / GIN).write_text("")
    gin_errors(run(bench), ["the chunk file has no rows"])


def test_a_manifest_pointing_outside_its_corpus(bench: pytest.Pytester) -> None:
    outside = bench.path / "outside.chunks.jsonl"
    shutil.move(bench.path / GIN, outside)
    manifest = bench.path / CORPUS / "corpus_manifest.jsonl"
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    rows[0]["chunks_path"] = str(outside)
    manifest.write_text("".join(json.dumps(row) + "\n" for row in rows))
    gin_errors(run(bench), ["corpus_manifest.jsonl:1: chunks_path", "outside the corpus directory"])


def test_a_manifest_naming_a_missing_file_and_a_malformed_line(bench: pytest.Pytester) -> None:
    (bench.path / GIN).unlink()
    manifest = bench.path / CORPUS / "corpus_manifest.jsonl"
    manifest.write_text(manifest.read_text() + "{not json\n")
    gin_errors(run(bench), ["no snapshot for acme/gin-lite", "corpus_manifest.jsonl:1 names chunks_path", "which does not exist"])


def test_a_symbol_row_without_its_file_row(bench: pytest.Pytester) -> None:
    path = bench.path / GIN
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    victim = next(row["path"] for row in rows if row.get("kind") != "file")
    kept = [row for row in rows if not (row["path"] == victim and row.get("kind") == "file")]
    path.write_text("".join(json.dumps(row) + "\n" for row in kept))
    manifest = bench.path / CORPUS / "corpus_manifest.jsonl"  # the manifest's counts would catch it first; drop them
    entries = [json.loads(line) for line in manifest.read_text().splitlines()]
    for entry in entries:
        entry.pop("chunk_count", None), entry.pop("file_count", None)
    manifest.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    line = next(number for number, row in enumerate(kept, start=1) if row["path"] == victim)
    gin_errors(run(bench), [f"chunks.jsonl:{line}", f"row of {victim!r}, which has no file row", "corpus error"])


ARCHIVE = RELEASE.parent / "agent_retrieval_bench_synthetic_v1.tar.zst"


def test_a_release_archive_is_checked_against_its_published_sha256(pytester: pytest.Pytester) -> None:
    """The bench publishes `<archive>.sha256` beside the archive: a mismatch is one usage error
    naming the checksum file, before anything runs; a matching one runs as without it."""
    import hashlib

    archive = pytester.path / ARCHIVE.name
    shutil.copy(ARCHIVE, archive)
    sidecar = archive.with_name(archive.name + ".sha256")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    sidecar.write_text(f"{digest}  releases/synthetic_v1/{archive.name}\n")
    args = (f"--bench-samples={archive}", "--bench-arms=grep", "-p", "no:cacheprovider", "--bench-report=out.json")
    good = pytester.runpytest_subprocess(*args, timeout=300)
    assert good.ret == 0, good.stdout.str()[-2000:]
    sidecar.write_text(f"{'0' * 64}  releases/synthetic_v1/{archive.name}\n")
    (pytester.path / "out.json").unlink()
    bad = pytester.runpytest_subprocess(*args, timeout=300)
    assert bad.ret == 4
    assert f"{sidecar}:1" in bad.stderr.str() and f"has sha256 {digest}, the checksum file says {'0' * 64}" in bad.stderr.str()
    assert not (pytester.path / "out.json").exists()
    sidecar.write_text("not a checksum\n")
    assert "line 1 is not a sha256 checksum line" in pytester.runpytest_subprocess(*args, timeout=300).stderr.str()
