"""The bench's skip of ARB rows whose query leaks the answer (`query_has_leakage`), case by case;
checked against the bench's own function when its package is importable."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_retrieval_bench.samples.arb import query_text_for_eval
from pytest_retrieval_bench.samples.arb_leakage import module_variants, query_has_leakage

FIX = "0123456789abcdef0123456789abcdef01234567"


def row(task_type: str, query: dict[str, Any], gold: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": "x", "task_type": task_type, "query": query, "gold": gold or {"files": ["pkg/router/tree.go"]}, "metadata": metadata or {}}


CASES = [
    (row("code2test", {"title": "router panics on empty path"}), False),
    (row("code2test", {"title": "fix", "patch": "diff --git a/x b/x"}), True),
    (row("code2test", {"body": "see\n--- a/x.go\n+++ b/x.go"}), True),
    (row("code2test", {"body": "--- not a patch header"}), False),
    (row("code2test", {"body": f"fixed in {FIX}"}, {"files": ["a.go"], "fix_commit": FIX}), True),
    (row("code2test", {"body": "fixed upstream"}, {"files": ["a.go"], "fix_commit": FIX}), False),
    (row("trace2code", {"body": "in pkg/router/tree.go line 3"}), False),  # naming a gold path leaks only for edit2ripple
    (row("edit2ripple", {"body": "in pkg/router/tree.go line 3"}), True),
    (row("edit2ripple", {"body": "TREE.GO changed"}), True),
    (row("edit2ripple", {"body": "import router.tree please"}), True),
    (row("edit2ripple", {"body": "the tree changed"}), False),
    (row("edit2ripple", {"body": f"commit {FIX}"}, metadata={"fix_commit": FIX}), True),
    (row("edit2ripple", {"body": "nothing here"}, metadata={"fix_commit": FIX}), False),
]


@pytest.mark.parametrize("sample,leaks", CASES, ids=[f"{number}-{case[0]['task_type']}" for number, case in enumerate(CASES)])
def test_query_has_leakage(sample: dict[str, Any], leaks: bool) -> None:
    assert query_has_leakage(sample, query_text_for_eval(sample["query"])) is leaks


def test_module_variants() -> None:
    assert module_variants("pkg/router/tree.go") == ["pkg.router.tree", "pkg/router/tree", "router.tree", "router/tree"]
    assert module_variants("a.py") == []


def test_the_rule_is_the_bench_s_own() -> None:
    baseline = pytest.importorskip("agent_retrieval_bench.baseline", reason="the bench's package is not importable (test-only oracle)")
    for sample, _ in CASES:
        text = query_text_for_eval(sample["query"])
        assert query_has_leakage(sample, text) is baseline.query_has_leakage(json.loads(json.dumps(sample)), text), sample
