"""Controller-side xdist hooks, registered only when xdist distributes this run.

Workers get the controller's temporary base directory (so one rmtree removes every private
copy, whichever worker made it) and whether the bench runs alone; the controller learns from
each worker's collection which (sample, arm) items to expect, to list the ones that never report.
"""

from __future__ import annotations

from typing import Any, Sequence

from pytest_retrieval_bench.session import BenchSession


class ControllerHooks:
    def __init__(self, bench: BenchSession, base_key: str, bench_only_key: str):
        self.bench = bench
        self.base_key = base_key
        self.bench_only_key = bench_only_key

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[self.base_key] = str(self.bench.base_dir)
        node.workerinput[self.bench_only_key] = bool(getattr(self.bench, "bench_only", False))

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self.bench.expect(ids)
