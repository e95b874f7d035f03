"""How bench items are named: `<sample id>[<arm>]` under the samples file, and the snapshot
parameter `--setup-show` prints. Records are keyed by (sample id, arm), never by node id."""

from __future__ import annotations

import re


_NODE_NAME = re.compile(r"::(?P<id>[^:\[\]]+)\[(?P<arm>.+)\](?:@[^\]]*)?$")


class SnapshotKey(str):
    """A snapshot key as `bench_snapshot`'s parameter: `--setup-show` prints it short (commit to 7)."""

    def __repr__(self) -> str:
        repo, _, commit = self.rpartition("@")
        return f"{repo}@{commit[:7]}"


def parse_node_id(nodeid: str) -> tuple[str, str] | None:
    """(sample id, arm) of a bench item's nodeid, tolerating xdist's `@group` suffix."""
    match = _NODE_NAME.search(nodeid)
    return (match["id"], match["arm"]) if match else None
