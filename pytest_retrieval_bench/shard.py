"""`--bench-shard=I/N`: a deterministic partition of the snapshots over N CI jobs.

A snapshot is the unit (all arms of a sample, and all samples of a snapshot, in one shard), so
each shard indexes a snapshot once and a merge of the shards has every paired sample whole.
Shards are balanced by a cost known before any indexing (the bytes of the snapshot's source:
its chunk file, directory or git tree), greedily, largest first, ties by key: every job computes
the same partition from the same inputs, and its digest is recorded in each shard's registration
so that a merge can check its inputs came from one partition.
"""

from __future__ import annotations

import hashlib
import re

import orjson

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` with 1 <= I <= N; raises ValueError with the reason."""
    match = _SHARD.match(text)
    if not match:
        raise ValueError(f"expected I/N (shard I of N, counted from 1), got {text!r}")
    index, count = int(match[1]), int(match[2])
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"shard {index}/{count}: I must be between 1 and N, and N at least 1")
    return index, count


def partition(costs: dict[str, int], count: int) -> dict[str, int]:
    """Snapshot key -> shard (1-based): largest cost first onto the least loaded shard."""
    loads = [0] * count
    assignment: dict[str, int] = {}
    for key in sorted(costs, key=lambda key: (-costs[key], key)):
        shard = min(range(count), key=lambda index: (loads[index], index))
        assignment[key] = shard + 1
        loads[shard] += max(costs[key], 1)
    return dict(sorted(assignment.items()))


def partition_digest(assignment: dict[str, int], count: int) -> str:
    return hashlib.sha256(orjson.dumps({"count": count, "snapshots": assignment}, option=orjson.OPT_SORT_KEYS)).hexdigest()
