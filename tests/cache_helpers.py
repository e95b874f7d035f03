"""Shared by the hostile cache tests: the bundled bench, a run that must pass without a traceback,
what a cache may never change, and small indexes of each kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.index.chunk_index import ChunkIndex, file_chunks

from pytest_retrieval_bench.index.postings import LexicalIndex
from pytest_retrieval_bench.index.repomap import build_repomap
from report_helpers import zero_wall

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"
ARCHIVE = TESTDATA / "agent_retrieval_bench_synthetic_v1.tar.zst"
GIN_CHUNKS = "acme__gin-lite/5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5.chunks.jsonl"
ARMS = "--bench-arms=grep,bm25:all,arb-bm25"


def run(pytester: pytest.Pytester, report: str, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", ARMS, f"--bench-report={report}", "-rw", *args, timeout=300)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == 0, text[-4000:]
    assert "Traceback" not in text and "IndexError" not in text, text[-4000:]
    return result, json.loads((pytester.path / report).read_bytes())


def results(report: dict[str, Any]) -> str:
    """What a cache may never change: every item's ranking and metrics (walls zeroed, latency dropped)."""
    return json.dumps(zero_wall(report["details"]), sort_keys=True)


def warnings_saying(result: pytest.RunResult, words: str) -> int:
    return sum(line.count(words) for line in (result.stdout.str() + result.stderr.str()).splitlines())


FILES = {"src/app.py": "def parse_request(raw):\n    return handle(raw)\n", "src/handle.py": "def handle(raw):\n    return raw.strip()\n",
         "tests/test_app.py": "from src.app import parse_request\n\ndef test_parse():\n    assert parse_request(' a ') == 'a'\n",
         "README.md": "parse requests and handle them\n"}


def build(kind: str) -> Any:
    files = sorted(FILES.items())
    if kind == "lexical":
        return LexicalIndex.build(files)
    return ChunkIndex.build(file_chunks(files)) if kind == "chunks" else build_repomap(file_chunks(files))
