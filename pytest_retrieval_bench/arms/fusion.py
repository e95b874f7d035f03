"""Fusion arms: reciprocal rank fusion of other arms' rankings for the same sample.

`--bench-fuse 'NAME=ARM[*WEIGHT],ARM[*WEIGHT]...[:k=K]'` declares an arm NAME whose ranking is
the bench's `rank_fusion.reciprocal_rank_fusion` over each component's ranking *as the report
records it* (given files removed, cut to the limit), the way the bench fuses its stored top
files: a path scores sum(weight / (k + rank)) over the components that rank it (its first
occurrence in each), ties broken by path. k defaults to 60 and weights to 1.

A component that errored makes the fused item an error; one that abstained contributes nothing.
Because fusion reads records, the same function fuses arms that ran in this process and arms
read back from written reports (`retrieval-bench summarize --fuse`).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from pytest_retrieval_bench.errors import ArmError, BenchError

RRF_K = 60
MAX_K = 1_000_000
"""The largest k a fusion may declare: far past any useful value, and every score stays a float."""
FUSION_RULES = "rrf-1"
_NAME = re.compile(r"^[^\[\],=\s*]+$")


@dataclass(frozen=True)
class FusionArm:
    """A declared fusion: its name, components (arm, weight) in order, and k."""

    name: str
    components: tuple[tuple[str, float], ...]
    k: int = RRF_K
    identity: str = ""  # set once the components' identities are known (`with_identity`)

    @property
    def component_names(self) -> list[str]:
        return [arm for arm, _ in self.components]

    def describe(self) -> str:
        parts = ",".join(arm if weight == 1.0 else f"{arm}*{weight:g}" for arm, weight in self.components)
        return f"{self.name}={parts}:k={self.k}"

    def retrieve(self, request: Any) -> Any:
        raise BenchError(f"arm {self.name!r} fuses other arms' records: it runs only as a bench item or in a merge")


def parse_fusion(entry: str, option: str = "--bench-fuse") -> FusionArm:
    """`NAME=ARM[*W],ARM[*W]...[:k=K]` -> FusionArm; a malformed entry is a BenchError naming it."""
    def bad(why: str) -> BenchError:
        return BenchError(f"{option} {entry!r}: {why} (expected NAME=ARM[*WEIGHT],ARM[*WEIGHT]...[:k=K])")

    name, equals, rest = entry.strip().partition("=")
    name = name.strip()
    if not equals or not name or not _NAME.match(name):
        raise bad("the fused arm needs a name without brackets, commas, '*', '=' or white space")
    k = RRF_K
    match = re.search(r":k=([^,:]*)$", rest)
    if match:
        try:
            k = int(match.group(1))
        except ValueError:
            raise bad(f"k must be a whole number, got {match.group(1)!r}") from None
        if not 1 <= k <= MAX_K:
            shown = match.group(1) if len(match.group(1)) <= 20 else f"{match.group(1)[:20]}... ({len(match.group(1))} digits)"
            raise bad(f"k must be a whole number from 1 to {MAX_K:,}, got {shown}")
        rest = rest[: match.start()]
    components: list[tuple[str, float]] = []
    for part in rest.split(","):
        arm, star, weight_text = part.strip().partition("*")
        arm = arm.strip()
        if not arm:
            raise bad("an empty component")
        weight = 1.0
        if star:
            try:
                weight = float(weight_text)
            except ValueError:
                raise bad(f"weight of {arm!r} must be a number, got {weight_text!r}") from None
            if not math.isfinite(weight) or weight <= 0:
                raise bad(f"weight of {arm!r} must be a positive number, got {weight_text!r}")
        if arm in (known for known, _ in components):
            raise bad(f"component {arm!r} is named twice")
        if arm == name:
            raise bad("an arm cannot fuse itself")
        components.append((arm, weight))
    if len(components) < 2:
        raise bad("fusion needs at least two component arms")
    return FusionArm(name, tuple(components), k)


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], weights: Sequence[float], k: int = RRF_K) -> list[str]:
    """The bench's RRF: weight / (k + rank) summed per path in component order, ties by path."""
    scores: dict[str, float] = defaultdict(float)
    for ranking, weight in zip(rankings, weights):
        seen: set[str] = set()
        for rank, path in enumerate(ranking, start=1):
            if not path or path in seen:
                continue
            scores[path] += weight / float(k + rank)
            seen.add(path)
    return sorted(scores, key=lambda path: (-scores[path], path))


class ComponentFailed(ArmError):
    """A component errored, so the fused item is an error too."""


def fuse_records(fusion: FusionArm, records: Mapping[str, Mapping[str, Any] | None]) -> list[str]:
    """The fused ranking from the components' records of one sample (abstentions contribute nothing).

    Raises ComponentFailed for a component that errored or has no record.
    """
    rankings: list[Sequence[str]] = []
    weights: list[float] = []
    for arm, weight in fusion.components:
        record = records.get(arm)
        if record is None:
            raise ComponentFailed(f"component {arm!r} has no record for this sample")
        if record.get("error"):
            raise ComponentFailed(f"component {arm!r} failed: {record['error']}")
        if record.get("skipped"):
            raise ComponentFailed(f"component {arm!r} was skipped: {record.get('skip_reason') or 'no reason given'}")
        if record.get("abstained"):
            continue
        rankings.append(record.get("ranking") or [])
        weights.append(weight)
    return reciprocal_rank_fusion(rankings, weights, fusion.k)


def with_identity(fusion: FusionArm, identities: Mapping[str, str]) -> FusionArm:
    """The fusion with its registration identity: the rule, k, each component's identity and weight."""
    parts = ",".join(f"{arm}*{weight:g}<{identities.get(arm, 'unknown')}>" for arm, weight in fusion.components)
    return replace(fusion, identity=f"fusion:{FUSION_RULES}:k={fusion.k}:{parts}")


def declare_fusions(entries: Sequence[str], arms: Mapping[str, Any], identity_of: Callable[[Any], str],
                    option: str = "--bench-fuse", reserved: Mapping[str, Sequence[str]] | None = None) -> list[FusionArm]:
    """Parse every `--bench-fuse` entry against the arms that exist; refuse unknown or fused components,
    and a name that is an alias (`reserved`: alias -> the arms it selects), which the fusion would shadow."""
    reserved = reserved or {}
    fusions: list[FusionArm] = []
    for entry in entries:
        fusion = parse_fusion(entry, option)
        if fusion.name in arms or fusion.name in (known.name for known in fusions):
            raise BenchError(f"{option} {entry!r}: an arm named {fusion.name!r} already exists")
        if fusion.name in reserved:
            raise BenchError(f"{option} {entry!r}: {fusion.name!r} already names a group of arms ({', '.join(reserved[fusion.name])}); "
                             "choose another name for the fusion")
        for component in fusion.component_names:
            if component in (known.name for known in fusions):
                raise BenchError(f"{option} {entry!r}: component {component!r} is itself a fusion; fuse its components instead")
            if component not in arms:
                raise BenchError(f"{option} {entry!r}: unknown component arm {component!r} (known: {', '.join(sorted(arms))})")
            if isinstance(arms[component], FusionArm):
                raise BenchError(f"{option} {entry!r}: component {component!r} is itself a fusion; fuse its components instead")
        fusions.append(with_identity(fusion, {name: identity_of(arms[name]) for name in fusion.component_names}))
    return fusions
