"""Helpers shared by the end-to-end tests: comparing reports across runs."""

from __future__ import annotations

import json
from typing import Any, Iterator


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


def scored_report(arms: tuple[str, ...] = ("grep", "mine"), no_gold_only: bool = False, limit: int = 20) -> dict[str, Any]:
    """A small report as a run writes it (every figure a function of its details): six ARB samples
    over two repositories (all no-gold with `no_gold_only`), each arm ranking some gold files, the
    first arm the baseline; read back from its canonical JSON."""
    import random

    from pytest_retrieval_bench.arms.base import Answer
    from pytest_retrieval_bench.bench.run import score
    from pytest_retrieval_bench.report.build import build_report, canonical_json
    from pytest_retrieval_bench.samples.arb import parse_arb_row

    samples = [parse_arb_row({"id": f"s{i:02d}", "task_type": "code2test" if i % 2 else "trace2code", "repo": f"o/r{i % 2}",
                              "base_commit": "a" * 40, "query": {"t": str(i)},
                              "gold": {"files": [], "no_gold": True} if no_gold_only else {"files": [f"g{i}", f"h{i}"]},
                              "metadata": {"organic": True}}, "samples.jsonl", i + 1) for i in range(6)]
    rng = random.Random(11)
    records = []
    for sample in samples:
        for arm in arms:
            ranking = rng.sample([f"g{i}" for i in range(6)] + [f"h{i}" for i in range(6)] + ["x", "y"], rng.randint(1, 8))
            records.append({"sample_id": sample.id, "arm": arm, "wall_ms": 1.0, "query_chars": 3, "query_truncated": False,
                            **score(sample, Answer(ranking=ranking), None, limit)})
    report = build_report({"limit": limit, "arms": list(arms)}, samples, records, list(arms[:1]), limit, False)
    return json.loads(canonical_json(report))


def scripted_agent_records(samples: list[Any], corpus: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    """(sample, record) of the built-in `arb-closed-tool` agent on each sample, in order, each
    snapshot read once from the release `corpus` and its files shared by its items, as a run does."""
    from pytest_retrieval_bench.arms.agents.arm import ScriptedAgentArm
    from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles
    from pytest_retrieval_bench.bench.agent_run import run_agent_item
    from pytest_retrieval_bench.bench.run import make_request
    from pytest_retrieval_bench.corpus.chunks import find_chunk_file, read_chunk_file

    agent, snapshots = ScriptedAgentArm(), {}
    for sample in samples:
        if sample.snapshot_key not in snapshots:
            snapshot = read_chunk_file(find_chunk_file(corpus, sample.repo, sample.base_commit), sample.repo, sample.base_commit)
            snapshots[sample.snapshot_key] = (snapshot, ToolFiles.of_snapshot(snapshot))
        snapshot, files = snapshots[sample.snapshot_key]
        yield sample, run_agent_item(sample, agent, make_request(sample, snapshot, 20, None), snapshot, agent.environment(files), 20)
