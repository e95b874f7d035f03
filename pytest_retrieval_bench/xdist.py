"""Controller-side xdist hooks, registered only when xdist distributes this run.

Workers get the controller's temporary base directory (so one rmtree removes every private
copy, whichever worker made it), the samples files the controller chose and whether the bench
runs alone; the controller learns from
each worker's collection which (sample, arm) items to expect, to list the ones that never report.

Under `--dist loadgroup` (also what a bench run uses when `-n` comes without a mode, see
`dist_mode`) the controller schedules bench items by snapshot itself: xdist's
own grouping rewrites node ids, which newer pytest releases no longer allow, so relying on it
would silently scatter one snapshot's items (and its index builds) over every worker.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from pytest_retrieval_bench.bench.session import BenchSession


def snapshot_scheduler(config: Any, log: Any, group_of: Callable[[str], str | None], cost_of: Callable[[str], int]) -> Any:
    """A LoadGroupScheduling whose work unit for a bench item is its snapshot, largest first.

    Handing the costliest snapshots out first (the size of their source, known before any
    indexing) keeps one large snapshot from being the last unit a worker runs while the other
    waits; other tests' units follow in xdist's own order.
    """
    from collections import OrderedDict

    from xdist.scheduler import LoadGroupScheduling

    class SnapshotGroupScheduling(LoadGroupScheduling):  # type: ignore[misc, valid-type]
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            group = group_of(nodeid)
            return f"snapshot:{group}" if group else super()._split_scope(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the queue is complete before the first unit is handed out
                units = list(self.workqueue.items())
                units.sort(key=lambda unit: -cost_of(unit[0].removeprefix("snapshot:")) if unit[0].startswith("snapshot:") else 1)
                self.workqueue = OrderedDict(units)
                self.ordered = True
            super()._assign_work_unit(node)

        def _reschedule(self, node: Any) -> None:
            if node in self.registered_collections:  # a replacement worker that has not collected yet waits
                super()._reschedule(node)

        def remove_node(self, node: Any) -> str | None:
            """Like xdist's, but the item a crashed worker was running is not handed out again.

            xdist's scope scheduler puts the whole unit back, crash item included, so an item that
            kills its worker kills every replacement in turn; xdist's load scheduler reports the crash
            item once and re-queues only the rest, which is what happens here.
            """
            workload = self.assigned_work.pop(node)
            pending = [(scope, nodeid) for scope, unit in workload.items() for nodeid, done in unit.items() if not done]
            if not pending:
                return None
            crash_scope, crash_item = pending[0]
            workload[crash_scope][crash_item] = True
            self.workqueue.update((scope, unit) for scope, unit in workload.items() if not all(unit.values()))
            for other in self.assigned_work:
                self._reschedule(other)
            return crash_item

    return SnapshotGroupScheduling(config, log)


class ControllerHooks:
    def __init__(self, bench: BenchSession, workerinput: dict[str, Any]):
        self.bench = bench
        self.workerinput = workerinput

    def pytest_configure_node(self, node: Any) -> None:
        """Each worker gets the base directory, the samples files and whether the bench runs alone."""
        node.workerinput.update(self.workerinput)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self.bench.expect(ids)

    def pytest_xdist_make_scheduler(self, config: Any, log: Any) -> Any:
        if config.getvalue("dist") != "loadgroup":
            return None
        return snapshot_scheduler(config, log, self.bench.snapshot_of_node, self.bench.snapshot_cost)
