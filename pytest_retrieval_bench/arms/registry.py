"""Which arms exist and which a run selects: built-ins plus arms registered by the user's plugins."""

from __future__ import annotations

import difflib
from typing import Iterable

from pytest_retrieval_bench.arms.agents.arm import ScriptedAgentArm
from pytest_retrieval_bench.arms.arb_reference import ArbReferenceArm
from pytest_retrieval_bench.arms.base import Arm
from pytest_retrieval_bench.arms.lexical import BM25Arm, GrepArm, GrepIdentArm
from pytest_retrieval_bench.arms.repomap import RepoMapArm
from pytest_retrieval_bench.errors import BenchError

BUILTIN_ARMS = ("grep", "grep-ident", "bm25:all", "bm25:ident", "arb-lexical", "arb-bm25")
"""The arms a run selects when --bench-arms is not given."""
REFERENCE_ARMS = (*BUILTIN_ARMS, "arb-repomap")
"""Every frozen built-in arm; the default baselines that other arms are paired against."""
AGENT_ARMS = ("arb-closed-tool",)
"""Built-in agents: selected by name only, never by default, never a default baseline."""
CORVINT_ARMS = ("corvint-query", "corvint-context", "corvint-impact", "corvint-affected")
ALIASES = {"bm25": ("bm25:all", "bm25:ident"), "lexical": BUILTIN_ARMS, "arb": ("arb-lexical", "arb-bm25", "arb-repomap"), "corvint": CORVINT_ARMS}


def builtin_arms() -> dict[str, Arm]:
    arms: list[Arm] = [GrepArm(), GrepIdentArm(), BM25Arm("bm25:all"), BM25Arm("bm25:ident"), ArbReferenceArm("arb-lexical"), ArbReferenceArm("arb-bm25"), RepoMapArm()]
    arms.append(ScriptedAgentArm())  # type: ignore[arg-type]
    return {arm.name: arm for arm in arms}


class UnknownArm(BenchError):
    """A selected name that is neither an arm nor an alias."""

    def __init__(self, message: str, name: str):
        super().__init__(message)
        self.name = name


def select_arms(requested: Iterable[str], available: dict[str, Arm], option: str = "--bench-arms",
                extra_aliases: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """Expand aliases, keep first-mention order, refuse unknown names with the known ones listed.

    `extra_aliases` maps a parametrized fixture arm's name to its variants (`dense` selects them all).
    """
    aliases = {**(extra_aliases or {}), **ALIASES}
    names: list[str] = []
    for entry in requested:
        for name in aliases.get(entry, (entry,)):
            if name not in available:
                names_known = sorted([*available, *aliases])
                close = difflib.get_close_matches(name, names_known, n=3)
                guess = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
                raise UnknownArm(f"unknown arm {name!r} in {option}{guess} (known: {', '.join(names_known)})", name)
            if name not in names:
                names.append(name)
    return names
