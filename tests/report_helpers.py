"""Helpers shared by the end-to-end tests: comparing reports across runs."""

from __future__ import annotations

import json
from typing import Any


def zero_wall(value: Any) -> Any:
    """The report with every wall_ms value set to 0 (the one per-item figure allowed to differ)."""
    if isinstance(value, dict):
        return {k: (0 if k == "wall_ms" else zero_wall(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [zero_wall(v) for v in value]
    return value


def assert_canonical(data: bytes) -> None:
    """SPEC 5: sorted keys, compact orjson form, exactly one trailing newline."""
    assert data.endswith(b"\n") and not data.endswith(b"\n\n")
    again = json.dumps(json.loads(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"
    assert again == data


def assert_outcomes(result: Any, passed: int = 0, **others: int) -> None:
    """`RunResult.assert_outcomes` with a bench's misses counted as the passed tests they are
    (pytest's final line counts them apart: `196 passed, 8 missed`)."""
    result.assert_outcomes(passed=passed - result.parseoutcomes().get("missed", 0), **others)


def without_provenance(data: bytes) -> bytes:
    """A written report without `commit_info` and `machine_info`: where it ran, which may differ between
    two reports over the same inputs, as `wall_ms` may."""
    report = json.loads(data)
    report.pop("commit_info", None)
    report.pop("machine_info", None)
    return json.dumps(report, sort_keys=True).encode()


SHIFTED_ARM = """
from pytest_retrieval_bench.arms.lexical import BM25Arm

SHIFT = {shift}


class Mine:
    \"\"\"The team's own arm: bm25 over the bench tokens, its first SHIFT answers moved last.\"\"\"

    name = "mine"
    uses_index = "lexical"

    def retrieve(self, request):
        ranking = list(BM25Arm("all").retrieve(request).ranking)
        return ranking[SHIFT:] + ranking[:SHIFT]


def pytest_retrieval_bench_arms(config):
    return [Mine()]
"""
"""A conftest declaring the arm `mine`, a changed bm25 (`SHIFTED_ARM.format(shift=N)`; 0 is bm25 itself)."""
