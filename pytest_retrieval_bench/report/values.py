"""Value ranges of a report read back: what the shape check (`schema`) cannot see.

A number of the right type can still be no number this package writes: a recall of 7.0, a
metric of 1e308 (whose sums overflow), a limit of 0 or 10^18, a shard 0/0. Each is refused with
the JSON path of the value, so a merge, a page or a leaderboard never computes from it.

Every metric is a rate in [0, 1] except the hard-negative counts (`hard_negative_hits@k`, a
whole number from 0 to k). Recorded counts are `[numerator, denominator]` with
0 <= numerator <= denominator. Times are milliseconds from 0 to `MAX_MS`, counts at most
`MAX_COUNT`: bounds far above any real run that keep every sum finite.
"""

from __future__ import annotations

import math
import re
from typing import Any

#: the largest limit a run accepts (`--bench-limit`)
LIMIT_MAX = 50
#: the largest wall time in milliseconds (about 30 years)
MAX_MS = 1e12
#: the largest recorded count: far above any real one (a line number may be up to 2^64), far below overflow
MAX_COUNT = 1e30
#: metrics that are counts, not rates, and their bound (the k of the name)
COUNT_METRICS = re.compile(r"^hard_negative_hits@(\d+)$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def key(name: Any) -> str:
    """A JSON path step for an object key of any text."""
    return f"[{str(name)!r}]"


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _between(value: Any, low: float, high: float, whole: bool = False) -> bool:
    return is_number(value) and low <= value <= high and (not whole or float(value).is_integer())


def metric_problem(name: str, value: Any, whole: bool = True) -> str | None:
    """Why a metric's value is none this package writes (None: it could be); `whole` False for a
    mean, whose count metrics need not be whole numbers."""
    if not is_number(value):
        return f"{value!r} is not a finite number"
    count = COUNT_METRICS.match(name)
    if count:
        k = int(count[1])
        what = "a whole number" if whole else "a mean count"
        return None if _between(value, 0, k, whole=whole) else f"{value!r} is not a count of hard negatives ({what} from 0 to {k})"
    return None if 0 <= value <= 1 else f"{value!r} is not a rate (a number from 0 to 1)"


def record_problem(record: dict[str, Any], where: str, limit: int) -> str | None:
    """The first out-of-range value of one record, with its JSON path."""
    for name, value in record["metrics"].items():
        problem = metric_problem(name, value)
        if problem:
            return f"{where}.metrics{key(name)}: {problem}"
    counts = record.get("metric_counts")
    if counts is not None:
        if not isinstance(counts, dict):
            return f"{where}.metric_counts: expected an object of metric names to [numerator, denominator]"
        for name, pair in counts.items():
            if not (isinstance(pair, list) and len(pair) == 2 and all(_between(c, 0, MAX_COUNT, whole=True) for c in pair) and pair[0] <= pair[1]):
                return (f"{where}.metric_counts{key(name)}: {pair!r} is not [numerator, denominator] "
                        f"(whole numbers, 0 <= numerator <= denominator <= {MAX_COUNT:.0e})")
    for name in ("wall_ms", "cold_wall_ms"):
        if record.get(name) is not None and not _between(record[name], 0, MAX_MS):
            return f"{where}.{name}: {record[name]!r} is not a time in milliseconds (0 to {MAX_MS:.0e})"
    for name in ("query_chars", "packet_bytes"):
        if record.get(name) is not None and not _between(record[name], 0, MAX_COUNT, whole=True):
            return f"{where}.{name}: {record[name]!r} is not a count (0 to {MAX_COUNT:.0e})"
    rank = record.get("rank_of_first_gold")
    if rank is not None and not 1 <= rank <= limit:
        return f"{where}.rank_of_first_gold: {rank!r} is not a rank within the limit (1 to {limit})"
    uncut = record.get("rank_of_first_gold_uncut")
    if uncut is not None and not 1 <= uncut <= MAX_COUNT:
        return f"{where}.rank_of_first_gold_uncut: {uncut!r} is not a rank (1 to {MAX_COUNT:.0e})"
    if len(record["ranking"]) > limit:
        return f"{where}.ranking: {len(record['ranking'])} paths, more than the limit ({limit}) a record is cut to"
    return None


def registration_problem(registration: dict[str, Any], where: str = "$.registration") -> str | None:
    limit = registration.get("limit")
    if limit is not None and not 1 <= limit <= LIMIT_MAX:
        return f"{where}.limit: {limit!r} is not a limit a run accepts (1 to {LIMIT_MAX})"
    shard = registration.get("shard")
    if shard is not None:
        if shard["count"] < 1 or not 1 <= shard["index"] <= shard["count"]:
            return f"{where}.shard: {shard['index']}/{shard['count']} is no shard (I/N needs 1 <= I <= N)"
        if not (isinstance(shard.get("partition_sha256"), str) and _SHA256.match(shard["partition_sha256"])):
            return (f"{where}.shard.partition_sha256: {'missing' if 'partition_sha256' not in shard else repr(shard['partition_sha256'])}"
                    " (expected the partition's sha256, 64 hex digits, that every shard of one run records)")
    for number, source in enumerate(registration.get("merged_from") or []):
        if isinstance(source.get("registration"), dict):
            problem = registration_problem(source["registration"], f"{where}.merged_from[{number}].registration")
            if problem:
                return problem
    return None


def value_problem(report: dict[str, Any]) -> str | None:
    """The first value of a report (of a sound shape) outside what this package writes."""
    registration = report["registration"]
    problem = registration_problem(registration)
    if problem:
        return problem
    limit = registration.get("limit") or 20
    for number, entry in enumerate(report["details"]):
        for arm, record in (entry.get("arms") or {}).items():
            problem = record_problem(record, f"$.details[{number}].arms{key(arm)}", limit)
            if problem:
                return problem
    return None
