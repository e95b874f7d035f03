"""A small path syntax that reads a ranking or a state out of a program's JSON output.

Command arms are declared in TOML, so the way to reach into a packet has to be a short string,
and a packet that does not have the declared shape has to fail loudly (a typo must never turn
answers into silent abstentions). Grammar:

    path    := segment ("." segment)*
    segment := key? selector*          (the key may be omitted only in the first segment)
    selector:= "[]"  (every element of an array)  |  "[N]"  (element N, zero-based)

Examples: ``results[].path``, ``plan.selected[].tests[]``, ``ids[]``, ``[]``, ``hits[0].file``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_SEGMENT = re.compile(r"^(?P<key>[^.\[\]]*)(?P<selectors>(?:\[\d*\])*)$")
_SELECTOR = re.compile(r"\[(\d*)\]")


class PathSyntaxError(ValueError):
    """The path string itself is malformed."""


class PathMissError(LookupError):
    """The path does not resolve in this document (missing key, wrong type, index out of range)."""


@dataclass(frozen=True)
class Step:
    kind: str  # "key", "all" or "index"
    key: str = ""
    index: int = 0


def parse(path: str) -> tuple[Step, ...]:
    """The steps of `path`; raises PathSyntaxError naming the offending segment."""
    if not isinstance(path, str) or not path:
        raise PathSyntaxError("empty path")
    steps: list[Step] = []
    for number, segment in enumerate(path.split(".")):
        match = _SEGMENT.match(segment)
        if match is None:
            raise PathSyntaxError(f"bad segment {segment!r} in {path!r}")
        key, selectors = match["key"], match["selectors"]
        if key:
            steps.append(Step("key", key=key))
        elif number > 0 or not selectors:
            raise PathSyntaxError(f"empty key in {path!r}")
        for selector in _SELECTOR.findall(selectors):
            steps.append(Step("all") if selector == "" else Step("index", index=int(selector)))
    return tuple(steps)


def extract(document: Any, path: str) -> list[Any]:
    """Every value `path` reaches, in document order.

    An array selected with ``[]`` may be empty (then nothing is reached); anything else that
    does not fit - a missing key, a non-object, a non-array - raises PathMissError.
    """
    current: list[tuple[Any, str]] = [(document, "")]
    for step in parse(path):
        following: list[tuple[Any, str]] = []
        for value, where in current:
            if step.kind == "key":
                if not isinstance(value, dict):
                    raise PathMissError(f"{where or 'the document'} is {_kind(value)}, not an object with key {step.key!r}")
                if step.key not in value:
                    raise PathMissError(f"{where or 'the document'} has no key {step.key!r}")
                following.append((value[step.key], f"{where}.{step.key}" if where else step.key))
            elif not isinstance(value, list):
                raise PathMissError(f"{where or 'the document'} is {_kind(value)}, not an array")
            elif step.kind == "all":
                following.extend((item, f"{where}[{number}]") for number, item in enumerate(value))
            elif step.index < len(value):
                following.append((value[step.index], f"{where}[{step.index}]"))
            else:
                raise PathMissError(f"{where or 'the document'} has {len(value)} elements, no [{step.index}]")
        current = following
    return [value for value, _ in current]


def extract_scalar(document: Any, path: str) -> str | None:
    """The one string, number or boolean `path` reaches, as a string (JSON null gives None)."""
    values = extract(document, path)
    if len(values) != 1:
        raise PathMissError(f"{path!r} reaches {len(values)} values, expected one")
    value = values[0]
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    raise PathMissError(f"{path!r} reaches {_kind(value)}, expected a string, number or boolean")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(type(value), "a number")
