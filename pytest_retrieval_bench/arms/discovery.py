"""Every arm a configuration defines, found the same way for a run and for merging reports."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Iterable

from pytest_retrieval_bench.arms.base import Arm
from pytest_retrieval_bench.arms.command import load_command_arms, parse_command_arm_option
from pytest_retrieval_bench.arms.corvint import preset_arms
from pytest_retrieval_bench.arms.registry import REFERENCE_ARMS, builtin_arms
from pytest_retrieval_bench.arms.base import checked_timeout
from pytest_retrieval_bench.errors import BenchError


def entry_point_arms() -> list[Arm]:
    """Arms from the `pytest_retrieval_bench.arms` entry point group (an arm, or a callable returning arms)."""
    found: list[Arm] = []
    for entry in sorted(entry_points(group="pytest_retrieval_bench.arms"), key=lambda e: e.name):
        loaded = entry.load()
        found.extend(loaded() if callable(loaded) and not hasattr(loaded, "retrieve") else [loaded])
    return found


def available_arms(pyproject: Path, command_options: Iterable[tuple[str, Path]], hook_results: Iterable[Any]) -> dict[str, Arm]:
    """Built-ins, the corvint presets, declared command arms, arms from hooks, then entry points.

    Raises BenchError for a bad declaration or a command arm that would shadow a built-in.
    """
    arms = builtin_arms()
    arms.update({arm.name: arm for arm in preset_arms()})
    declared = load_command_arms(pyproject)
    declared += [parse_command_arm_option(entry, base) for entry, base in command_options]
    for arm in declared:
        if arm.name in REFERENCE_ARMS:
            raise BenchError(f"command arm {arm.name!r} would replace a built-in arm")
        arms[arm.name] = arm
    for result in hook_results:
        for arm in result or ():
            arms[arm.name] = arm
    for arm in entry_point_arms():
        arms.setdefault(arm.name, arm)
    for arm in arms.values():
        if not hasattr(arm, "descriptor"):  # a command arm's timeout is checked with its table
            checked_timeout(getattr(arm, "timeout", None), arm.name)
    return arms
