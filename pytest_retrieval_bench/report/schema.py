"""The shape of a written report, checked whenever one is read back (baseline, merge, page, leaderboard).

A report edited by hand, cut short or made by another tool must fail with the file and the JSON
path of its first problem, never deep inside a merge with a traceback. Only what this package
reads is checked; unknown keys are allowed, so later versions can add fields. Values of the
right type are then range-checked (`values`).
"""

from __future__ import annotations

from typing import Any, Callable

from pytest_retrieval_bench.report.trajectory_section import is_trajectory
from pytest_retrieval_bench.report.values import value_problem

Check = Callable[[Any], bool]
NOT_A_REPORT = "not a retrieval-bench report (no registration or details)"
STRATA = ("positive", "natural_no_gold", "counterfactual_no_gold")


def _string(value: Any) -> bool:
    return isinstance(value, str)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _optional(check: Check) -> Check:
    return lambda value: value is None or check(value)


RECORD_FIELDS: dict[str, tuple[Check, str, bool]] = {
    # name: (check, what it must be, required)
    "ranking": (_strings, "a list of path strings", True),
    "metrics": (lambda value: isinstance(value, dict) and all(_string(k) and _number(v) for k, v in value.items()),
                "an object of metric names to numbers", True),
    "abstained": (lambda value: isinstance(value, bool), "true or false", True),
    "error": (_optional(_string), "null or a string", True),
    "selective_success": (lambda value: isinstance(value, bool), "true or false", True),
    "rank_of_first_gold": (_optional(_integer), "null or a whole number", False),
    "rank_of_first_gold_uncut": (_optional(_integer), "null or a whole number", False),
    "given_ranks": (lambda value: isinstance(value, dict) and all(_string(k) and _integer(v) and v >= 1 for k, v in value.items()),
                    "an object of given file paths to their ranks (1 or more)", False),
    "query_chars": (_integer, "a whole number", False),
    "query_truncated": (lambda value: isinstance(value, bool), "true or false", False),
    "wall_ms": (_number, "a number", False),
    "cold_wall_ms": (_optional(_number), "null or a number", False),
    "state": (_optional(_string), "null or a string", False),
    "packet_bytes": (_optional(_integer), "null or a whole number", False),
    "trajectory": (is_trajectory, "an agent's trajectory (steps, final files and, with gold, its detail row)", False),
}
ENTRY_FIELDS: dict[str, tuple[Check, str, bool]] = {
    "id": (lambda value: isinstance(value, str) and bool(value), "a non-empty string", True),
    "repo": (_string, "a string", False),
    "base_commit": (_string, "a string", False),
    "task_type": (_string, "a string", False),
    "stratum": (lambda value: value in STRATA, f"one of {', '.join(STRATA)}", False),
    "partition": (_string, "a string", False),
    "gold": (_strings, "a list of path strings", False),
    "given": (_strings, "a list of path strings", False),
    "hard_negatives": (_strings, "a list of path strings", False),
    "query_text": (_string, "a string", False),
    "arms": (lambda value: isinstance(value, dict), "an object of arm names to records", False),
}
REGISTRATION_FIELDS: dict[str, tuple[Check, str, bool]] = {
    "arms": (_strings, "a list of arm names", False),
    "arm_identities": (lambda value: isinstance(value, dict) and all(_string(v) for v in value.values()), "an object of arm names to strings", False),
    "limit": (_optional(_integer), "null or a whole number", False),
    "samples": (lambda value: isinstance(value, list) and all(isinstance(item, dict) and _string(item.get("sha256")) for item in value),
                "a list of objects with a sha256", False),
    "corpus": (lambda value: isinstance(value, list) and all(isinstance(item, dict) for item in value), "a list of objects", False),
    "shard": (_optional(lambda value: isinstance(value, dict) and _integer(value.get("index")) and _integer(value.get("count"))),
              "null or an object with whole-number index and count", False),
    "merged_from": (lambda value: isinstance(value, list) and all(isinstance(item, dict) for item in value), "a list of objects", False),
    "snapshots": (_optional(lambda value: isinstance(value, dict)), "null or an object", False),
}


def _fields(value: Any, fields: dict[str, tuple[Check, str, bool]], where: str) -> str | None:
    if not isinstance(value, dict):
        return f"{where}: expected an object, got {_kind(value)}"
    for name, (check, what, required) in fields.items():
        if name not in value:
            if required:
                return f"{where}.{name}: missing (expected {what})"
            continue
        if not check(value[name]):
            bad = _bad_item(value[name], check) if name in PER_ENTRY else None
            if bad is not None:
                return f"{where}.{name}{bad[0]}: got {_kind(bad[1])}; {name} must be {what}"
            return f"{where}.{name}: expected {what}, got {_kind(value[name])}"
    return None


PER_ENTRY = frozenset({"ranking", "metrics", "gold", "given", "hard_negatives", "arms", "arm_identities", "samples", "corpus", "merged_from"})
"""Fields whose check holds of each entry on its own, so the first failing entry is the one to name
(not `shard`, whose index and count are checked together)."""


def _bad_item(value: Any, check: Check) -> tuple[str, Any] | None:
    """The JSON path step (`['recall@10']`, `[3]`) and the value of the first entry of an object or
    list that fails `check` on its own, so a refusal names the entry, not only its container."""
    if isinstance(value, dict):
        return next(((f"[{name!r}]", item) for name, item in value.items() if not check({name: item})), None)
    if isinstance(value, list):
        return next(((f"[{index}]", item) for index, item in enumerate(value) if not check([item])), None)
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    names = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


def report_problem(report: Any) -> str | None:
    """The JSON path and reason of the first problem of a report read back, or None when it is sound."""
    if not isinstance(report, dict) or "registration" not in report or "details" not in report:
        return NOT_A_REPORT
    problem = _fields(report["registration"], REGISTRATION_FIELDS, "$.registration")
    for number, source in enumerate(report["registration"].get("merged_from") or []):  # a merge's inputs: their shards are counted
        if problem is None and "registration" in source:
            problem = _fields(source["registration"], REGISTRATION_FIELDS, f"$.registration.merged_from[{number}].registration")
    if problem:
        return problem
    details = report["details"]
    if not isinstance(details, list):
        return f"$.details: expected a list, got {_kind(details)}"
    for number, entry in enumerate(details):
        where = f"$.details[{number}]"
        problem = _fields(entry, ENTRY_FIELDS, where)
        if problem:
            return problem
        for arm, record in (entry.get("arms") or {}).items():
            problem = _fields(record, RECORD_FIELDS, f"{where}.arms[{arm!r}]")
            if problem:
                return problem
    for name, check, what in (("snapshots", lambda v: isinstance(v, dict), "an object"), ("missing", _strings, "a list of strings"),
                              ("problems", _strings, "a list of strings"),
                              ("snapshot_problems", lambda v: isinstance(v, list) and all(isinstance(p, dict) and _string(p.get("kind"))
                                                                                           and _string(p.get("snapshot")) for p in v),
                               "a list of objects with a kind and a snapshot"),
                              ("partial", _optional(lambda v: isinstance(v, dict) and _strings(v.get("not_run", []))), "null or an object"),
                              ("trajectory", lambda v: isinstance(v, dict) and all(isinstance(s, dict) for s in v.values()), "an object of arm names to objects")):
        if name in report and not check(report[name]):
            return f"$.{name}: expected {what}, got {_kind(report[name])}"
    return value_problem(report)
