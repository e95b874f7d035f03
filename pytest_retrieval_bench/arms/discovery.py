"""Every arm a configuration defines, found the same way for a run and for merging reports."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Iterable

from pytest_retrieval_bench.arms.base import Arm, checked_arm_name, checked_timeout
from pytest_retrieval_bench.arms.command import load_command_arms, parse_command_arm_option
from pytest_retrieval_bench.arms.corvint import preset_arms
from pytest_retrieval_bench.arms.registry import AGENT_ARMS, ALIASES, REFERENCE_ARMS, builtin_arms
from pytest_retrieval_bench.errors import BenchError

HOOK = "pytest_retrieval_bench_arms"


def entry_point_arms() -> list[Arm]:
    """Arms from the `pytest_retrieval_bench.arms` entry point group (an arm, or a callable returning arms)."""
    found: list[Arm] = []
    for entry in sorted(entry_points(group="pytest_retrieval_bench.arms"), key=lambda e: e.name):
        loaded = entry.load()
        arms = loaded() if callable(loaded) and not hasattr(loaded, "retrieve") else [loaded]
        found.extend(_checked_arms(arms, f"entry point {entry.name!r} ({entry.value})"))
    return found


def _checked_arms(result: Any, source: str) -> list[Arm]:
    """`result` as a list of arms, each with a usable name and a `retrieve`; else a BenchError naming
    `source` and what it gave, so a slip in a conftest is a usage error, not an internal one."""
    if isinstance(result, (str, bytes, dict)) or hasattr(result, "retrieve") or not hasattr(result, "__iter__"):
        raise BenchError(f"{source} returned {result!r}: expected a list of arms (objects with a `name` and a `retrieve(request)` method)")
    arms = list(result)
    for arm in arms:
        if not callable(getattr(arm, "retrieve", None)) or not isinstance(getattr(arm, "name", None), str):
            raise BenchError(f"{source} returned {arm!r} among its arms: an arm needs a string `name` and a `retrieve(request)` method")
        checked_arm_name(arm.name, source)
    return arms


def refuse_alias_name(name: str, source: str) -> None:
    """An arm named like an alias could never be selected: --bench-arms reads the name as the alias."""
    if name in ALIASES:
        raise BenchError(f"{source}: arm {name!r} has the name of an alias (it selects {', '.join(ALIASES[name])}); give it another name")


def _add(arms: dict[str, Arm], arm: Arm, source: str, replaceable: set[str]) -> None:
    """Add an arm under its name, refusing one that another definition already holds: a built-in is
    frozen, and two arms of one name would leave it to the order of definitions which one runs. A
    corvint preset may be replaced once (`preset_arms(binary)` returned from a hook is how a run
    chooses the corvint executable)."""
    refuse_alias_name(arm.name, source)
    if arm.name in replaceable:
        replaceable.discard(arm.name)
    elif arm.name in arms:
        holder = "a built-in arm" if arm.name in REFERENCE_ARMS or arm.name in AGENT_ARMS else "an arm defined elsewhere"
        raise BenchError(f"{source}: arm {arm.name!r} has the name of {holder}; give it another name")
    arms[arm.name] = arm


def available_arms(pyproject: Path, command_options: Iterable[tuple[str, Path]], hook_results: Iterable[Any]) -> dict[str, Arm]:
    """Built-ins, the corvint presets, declared command arms, arms from hooks, then entry points.

    Raises BenchError for a bad declaration, a hook or entry point that returns something other than
    arms, or an arm whose name another definition (a built-in above all) already holds; a corvint
    preset may be replaced once, by a command arm, a hook or an entry point.
    """
    arms = builtin_arms()
    arms.update({arm.name: arm for arm in preset_arms()})
    replaceable = {name for name in arms if name not in REFERENCE_ARMS and name not in AGENT_ARMS}  # the presets
    declared = load_command_arms(pyproject)
    declared += [parse_command_arm_option(entry, base) for entry, base in command_options]
    for arm in declared:
        if arm.name in REFERENCE_ARMS or arm.name in AGENT_ARMS:
            raise BenchError(f"command arm {arm.name!r} would replace a built-in arm")
        refuse_alias_name(arm.name, f"command arm {arm.name!r}")
        replaceable.discard(arm.name)  # a declared command arm may take a preset's name, as declared
        arms[arm.name] = arm
    for result in hook_results:
        for arm in _checked_arms(result if result is not None else [], f"the {HOOK} hook"):
            _add(arms, arm, f"the {HOOK} hook", replaceable)
    for arm in entry_point_arms():
        _add(arms, arm, "an entry point of pytest_retrieval_bench.arms", replaceable)
    for arm in arms.values():
        if not hasattr(arm, "descriptor"):  # a command arm's timeout is checked with its table
            checked_timeout(getattr(arm, "timeout", None), arm.name)
    return arms
