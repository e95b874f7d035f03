"""The arms a configuration defines: built-ins, hook and entry-point arms, command arms from the
ini, fixture arms from loaded plugins and conftests, and fusions of them (declared last)."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.arms.base import Arm
from pytest_retrieval_bench.arms.agents.python_agent import as_agent
from pytest_retrieval_bench.arms.discovery import available_arms, refuse_alias_name
from pytest_retrieval_bench.arms.embedding import EmbeddingArm, named_embedding_arms
from pytest_retrieval_bench.arms.fixture_arms import FixtureArm, find_fixture_arms
from pytest_retrieval_bench.arms.fusion import declare_fusions
from pytest_retrieval_bench.arms.registry import ALIASES
from pytest_retrieval_bench.arms.snapshot_latency import MatchedLatency
from pytest_retrieval_bench.bench.snapshot_checks import snapshot_checks
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.index.cache_writes import CacheWrites
from pytest_retrieval_bench.index.tokens import TOKENIZER_VERSION
from pytest_retrieval_bench.index.vectors import VectorStore
from pytest_retrieval_bench.options import Settings
from pytest_retrieval_bench.progress import showing_encoding
from pytest_retrieval_bench.report.registration import arm_identity


def configured_arms(config: pytest.Config, settings: Settings) -> dict[str, Arm]:
    """Every arm this configuration defines, fusions last (raises BenchError for a bad declaration)."""
    pyproject = config.inipath if config.inipath and config.inipath.name == "pyproject.toml" else config.rootpath / "pyproject.toml"
    arms = available_arms(pyproject, settings.command_arms, config.hook.pytest_retrieval_bench_arms(config=config))
    for arm in named_embedding_arms([*settings.arms, *settings.fuse], settings.embed):
        arms.setdefault(arm.name, arm)
    for arm in map(as_agent, find_fixture_arms(config.pluginmanager.get_plugins())):  # `@agent(...)` functions are agents
        base = arm.name.partition("[")[0]  # a variant's base name selects all its variants: it is taken too
        refuse_alias_name(base, f"fixture arm {base!r}")
        if arm.name in arms or (base != arm.name and base in arms):
            raise BenchError(f"fixture arm {base!r} has the name of an arm defined elsewhere")
        arms[arm.name] = arm  # type: ignore[assignment]
    reserved = {**variant_aliases(arms), **ALIASES}
    for fusion in declare_fusions(settings.fuse, arms, lambda arm: arm_identity(arm, TOKENIZER_VERSION), reserved=reserved):
        arms[fusion.name] = fusion  # type: ignore[assignment]
    return arms


def variant_aliases(arms: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """A parametrized fixture arm's name selects all of its variants."""
    aliases: dict[str, list[str]] = {}
    for name, arm in arms.items():
        if isinstance(arm, FixtureArm) and arm.variant_id is not None:
            aliases.setdefault(arm.base_name, []).append(name)
    return {base: tuple(names) for base, names in aliases.items()}


def matched_arms(snapshot_latency: bool, role: str, arm_names: list[str], arms: dict[str, Any]) -> dict[str, MatchedLatency]:
    """With --bench-snapshot-latency: the selected arms (fusion components too) measured cold and hit."""
    if not snapshot_latency:
        return {}
    if role != "local":
        raise pytest.UsageError("--bench-snapshot-latency measures one call at a time: run it without xdist workers (-p no:xdist or -n 0)")
    names = list(arm_names) + [part for name in arm_names for part in getattr(arms[name], "component_names", ())]
    matched = {name: MatchedLatency(arms[name]) for name in dict.fromkeys(names)
               if getattr(arms[name], "snapshot_latency", None) is not None and hasattr(arms[name], "call_in")}
    if not matched:
        raise pytest.UsageError(f"--bench-snapshot-latency needs a selected arm that declares an index step and a snapshot store "
                                f"(corvint-context, or a command arm with index, snapshot_store and snapshot_trace); "
                                f"selected: {', '.join(arm_names)}")
    return matched


def bind_embedding_arms(config: pytest.Config, arms: dict[str, Any], directory: Path | None, writes: CacheWrites,
                        memory_budget: int | None = None, events: list[dict[str, Any]] | None = None) -> None:
    """Every embedding arm (built-in or a user's) keeps its vectors in the run's vector cache (none:
    `--bench-no-cache`), shows its encoding on this process's progress display, if any, keeps
    to the run's encoder memory budget unless it was declared with one of its own, and adds a
    set-up event per snapshot to `events` (the snapshot store's, which item reports carry to the
    terminal), so a run says how many vectors came from the cache."""
    store = VectorStore(directory, writes) if directory is not None else None
    checks = snapshot_checks(config)
    for arm in filter(None, map(dense_arm, arms.values())):
        arm.vector_store = store
        if arm.options.memory_budget is None and memory_budget is not None:
            arm.options = dataclasses.replace(arm.options, memory_budget=memory_budget)
        arm.show_encoding = functools.partial(showing_encoding, config)
        arm.on_split = checks.split
        if events is not None:
            arm.on_encoded = functools.partial(_encoding_event, events)


def _encoding_event(events: list[dict[str, Any]], arm: str, snapshot: str, texts: int, encoded: int, seconds: float) -> None:
    events.append({"snapshot": snapshot, "kind": VECTORS_EVENT, "arm": arm, "texts": texts, "encoded": encoded, "seconds": round(seconds, 3),
                   "source": "built" if encoded else "cache"})


VECTORS_EVENT = "vectors"
"""The set-up event kind of an embedding arm's chunk vectors (the others are the snapshot's indexes)."""


def dense_arm(arm: Any) -> EmbeddingArm | None:
    """The embedding arm an arm is (`embed:...`, a user's) or runs (an `@embedder(...)` fixture arm)."""
    return arm if isinstance(arm, EmbeddingArm) else arm.embedding if isinstance(arm, FixtureArm) else None


def embedding_models(arms: dict[str, Any], selected: list[str], splits: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """The selected embedding arms' (fusion components too) model identity, library versions, device
    and memory budget, with the snapshots whose batches were split to fit it (`batches_split`)."""
    names = list(selected) + [part for name in selected for part in getattr(arms[name], "component_names", ())]
    dense = {name: dense_arm(arms[name]) for name in dict.fromkeys(names)}
    return {name: {**arm.description(), "batches_split": splits.get(arm.name, [])} for name, arm in dense.items() if arm is not None}


def dense_device(models: dict[str, dict[str, Any]]) -> str | None:
    devices = sorted({str(model["device"]) for model in models.values() if model.get("device")})
    return ",".join(devices) or None
