"""Controller-side xdist hooks, registered only when xdist distributes this run.

Workers get the controller's temporary base directory (so one rmtree removes every private
copy, whichever worker made it), the samples files the controller chose and whether the bench
runs alone; the controller learns from
each worker's collection which (sample, arm) items to expect, to list the ones that never report.

Under `--dist loadgroup` (also what a bench run uses when `-n` comes without a mode, see
`dist_mode`) the controller schedules bench items by snapshot itself: xdist's
own grouping rewrites node ids, which newer pytest releases no longer allow, so relying on it
would silently scatter one snapshot's items (and its index builds) over every worker.

Agent items are the exception: an agent that waits on a model is I/O bound, so each of its items
is a unit of its own, and `-n N` spreads one snapshot's agent items over the workers (each worker
reads the snapshot it is handed; the report is the same). Replayed trajectories run nothing and
stay with their snapshot, as ranking items do.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from pytest_retrieval_bench.bench.session import BenchSession


SNAPSHOT, AGENT = "snapshot:", "agent:"


def snapshot_scheduler(config: Any, log: Any, group_of: Callable[[str], str | None], cost_of: Callable[[str], int],
                       spread: Callable[[str], bool] = lambda nodeid: False) -> Any:
    """A LoadGroupScheduling whose work unit for a bench item is its snapshot, largest first, and
    for an item `spread` names (an agent's) the item alone.

    Handing the costliest snapshots out first (the size of their source, known before any
    indexing) keeps one large snapshot from being the last unit a worker runs while the other
    waits; a snapshot's agent items follow its ranking unit; other tests' units follow in xdist's
    own order.
    """
    from collections import OrderedDict

    from xdist.scheduler import LoadGroupScheduling

    class SnapshotGroupScheduling(LoadGroupScheduling):  # type: ignore[misc, valid-type]
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            group = group_of(nodeid)
            if not group:
                return super()._split_scope(nodeid)
            return f"{AGENT}{group}|{nodeid}" if spread(nodeid) else f"{SNAPSHOT}{group}"

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the queue is complete before the first unit is handed out
                units = list(self.workqueue.items())
                units.sort(key=lambda unit: unit_order(unit[0], cost_of))
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


def unit_order(scope: str, cost_of: Callable[[str], int]) -> tuple[int, str, int]:
    """Snapshots by cost (largest first), a snapshot's ranking unit before its agent items, other
    tests last (the sort is stable: items keep their collection order)."""
    for prefix, rank in ((SNAPSHOT, 0), (AGENT, 1)):
        if scope.startswith(prefix):
            key = scope[len(prefix):].partition("|")[0]
            return (-cost_of(key), key, rank)
    return (1, "", 0)


def spreads_agent(arms: dict[str, Any]) -> Callable[[str], bool]:
    """Whether a node id is an agent item that runs something (a replay runs nothing)."""
    from pytest_retrieval_bench.arms.agents.arm import AgentArm
    from pytest_retrieval_bench.arms.agents.replay import ReplayArm
    from pytest_retrieval_bench.bench.node_ids import parse_node_id

    def spread(nodeid: str) -> bool:
        parsed = parse_node_id(nodeid)
        arm = arms.get(parsed[1]) if parsed else None
        return isinstance(arm, AgentArm) and not isinstance(arm, ReplayArm)

    return spread


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
        return snapshot_scheduler(config, log, self.bench.snapshot_of_node, self.bench.snapshot_cost, spreads_agent(self.bench.arms))
