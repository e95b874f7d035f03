"""Arms written as functions whose parameters are pytest fixtures.

    @pytest_retrieval_bench.arm("dense")
    def dense(bench_request, model):          # model: any fixture, of any scope
        return model.rank(bench_request.query_text)

The function is the bench item's test function: pytest sets its fixtures up (a session-scoped
model once), honours its marks (`skipif` skips the arm's items) and expands its
`@pytest.mark.parametrize` into named variants, each an arm of its own (`dense[small]`).
Arms are found in the modules pytest has registered as plugins by configure time: the
rootdir's and the initial conftest files, `-p` plugins, `pytest_plugins` modules.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from pytest_retrieval_bench.arms.base import checked_arm_name, checked_timeout
from pytest_retrieval_bench.arms.embedding import EmbeddingArm
from pytest_retrieval_bench.arms.fixture_embedders import REQUEST_FIXTURE as REQUEST_FIXTURE
from pytest_retrieval_bench.arms.fixture_embedders import checked_options, dense_arm_of, fixture_names, ranking_function
from pytest_retrieval_bench.errors import BenchError

ARM_ATTRIBUTE = "__retrieval_bench_arm__"


@dataclass(frozen=True)
class ArmDeclaration:
    """What `@arm(...)` stores on the function."""

    name: str
    max_query_chars: int | None = None
    identity: str | None = None
    timeout: float | None = None
    #: set by `@embedder(...)`: the function returns an embedder, these are its `EmbedOptions`
    embed_options: dict[str, Any] | None = None


def arm(name: str, *, max_query_chars: int | None = None, identity: str | None = None,
        timeout: float | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a function as an arm named `name`; its parameters are fixtures (`bench_request` among them).

    It returns an `Answer` or a ranking (a list of paths, best first; `[]` abstains).
    `identity` (optional) names the arm's version in the registration; by default it is the
    function's qualified name and a digest of its source. `timeout` (seconds, optional) replaces
    `--bench-arm-timeout` for this arm.
    """
    checked_arm_name(name, "pytest_retrieval_bench.arm")
    own_timeout = checked_timeout(timeout, name)

    def declare(function: Callable[..., Any]) -> Callable[..., Any]:
        setattr(function, ARM_ATTRIBUTE, ArmDeclaration(name, max_query_chars, identity, own_timeout))
        return function

    return declare


def embedder(name: str, *, identity: str | None = None, timeout: float | None = None, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a function that returns an embedder as the dense arm `name`; its parameters are fixtures.

    `options` are `EmbedOptions` (`batch_size`, `query_prefix`, `passage_prefix`); the embedder's
    vectors are used as it returns them. `identity` and `timeout` are as for `arm`.
    """
    declare = arm(name, identity=identity, timeout=timeout)
    checked_options(name, options)

    def declare_embedder(function: Callable[..., Any]) -> Callable[..., Any]:
        declare(function)
        setattr(function, ARM_ATTRIBUTE, dataclasses.replace(getattr(function, ARM_ATTRIBUTE), embed_options=dict(options)))
        return function

    return declare_embedder


@dataclass
class FixtureArm:
    """One variant of a fixture arm: the function, and the parameter values of this variant."""

    name: str
    base_name: str
    function: Callable[..., Any]
    variant_id: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    max_query_chars: int | None = None
    declared_identity: str | None = None
    timeout: float | None = None
    #: an `@embedder(...)` variant: the dense arm its function's embedder runs in (`function` runs it)
    embedding: EmbeddingArm | None = None
    #: the declared function (`function` itself, but for an `@embedder(...)` variant)
    source: Callable[..., Any] | None = None

    @property
    def declared(self) -> Callable[..., Any]:
        """The function the user declared."""
        return self.source or self.function

    @property
    def uses_index(self) -> str | None:
        return self.embedding.uses_index if self.embedding is not None else None

    def identity(self) -> str:
        variant = f"[{self.variant_id}]" if self.variant_id else ""
        declared = self.declared
        if self.declared_identity:
            return self.declared_identity + variant
        try:
            source = hashlib.sha256(inspect.getsource(declared).encode()).hexdigest()[:16]
        except (OSError, TypeError):
            source = "nosource"
        where = f"{declared.__module__}.{declared.__qualname__}"
        if self.embedding is not None:  # another prefix or batch size is another arm
            return f"fixture-embedder:{where}:{source}:{self.embedding.identity_digest()}{variant}"
        return f"fixture:{where}:{source}{variant}"

    def prepare(self, snapshot: Any) -> None:
        """An `@embedder(...)` variant encodes the snapshot's chunks at set-up (its embedder bound by then)."""
        if self.embedding is not None:
            self.embedding.prepare(snapshot)

    def retrieve(self, request: Any) -> Any:
        raise BenchError(f"arm {self.name!r} takes fixtures: it runs only as a bench item")

    def parameters(self) -> list[str]:
        """The function's fixture names: its parameters without a default, as pytest counts them."""
        return fixture_names(self.function)


def _value_id(value: Any, argname: str, index: int) -> str:
    """pytest's id for a simple value; `<argname><index>` otherwise, as pytest does."""
    if isinstance(value, (str, int, float, bool, complex)) or value is None:
        return str(value)
    return f"{argname}{index}"


def _argnames(spec: Any) -> list[str]:
    if isinstance(spec, str):
        return [part.strip() for part in spec.split(",") if part.strip()]
    return list(spec)


def _mark_ids(mark: Any, arm_name: str) -> list[tuple[str, dict[str, Any]]]:
    """(id, {argname: value}) for each parameter set of one `parametrize` mark."""
    args = list(mark.args) + [None] * 2
    names = _argnames(mark.kwargs.get("argnames", args[0]))
    values = list(mark.kwargs.get("argvalues", args[1]) or [])
    ids = mark.kwargs.get("ids")
    if mark.kwargs.get("indirect"):
        raise BenchError(f"arm {arm_name!r}: indirect parametrization is not supported for arm variants")
    out = []
    for index, value in enumerate(values):
        explicit = getattr(value, "id", None) if hasattr(value, "marks") and hasattr(value, "values") else None
        parts = list(value.values) if hasattr(value, "marks") and hasattr(value, "values") else ([value] if len(names) == 1 else list(value))
        if explicit is None and isinstance(ids, (list, tuple)) and index < len(ids) and ids[index] is not None:
            explicit = ids[index]
        elif explicit is None and callable(ids):
            made = [ids(part) for part in parts]
            explicit = "-".join(str(item) if item is not None else _value_id(part, name, index) for item, part, name in zip(made, parts, names))
        if explicit is None:
            explicit = "-".join(_value_id(part, name, index) for part, name in zip(parts, names))
        out.append((str(explicit), dict(zip(names, parts))))
    return out


def variants_of(function: Callable[..., Any], declaration: ArmDeclaration) -> list[FixtureArm]:
    """One FixtureArm per combination of the function's `parametrize` marks (just one without)."""
    marks = [mark for mark in getattr(function, "pytestmark", []) if getattr(mark, "name", None) == "parametrize"]
    per_mark = [_mark_ids(mark, declaration.name) for mark in marks]
    variants = []
    for combination in itertools.product(*per_mark):
        variant_id = "-".join(part for part, _ in combination) or None
        params = {name: value for _, values in combination for name, value in values.items()}
        name = f"{declaration.name}[{variant_id}]" if variant_id else declaration.name
        variant = FixtureArm(name, declaration.name, function, variant_id, params, declaration.max_query_chars, declaration.identity,
                             declaration.timeout)
        variants.append(embedder_variant(variant, declaration.embed_options) if declaration.embed_options is not None else variant)
    names = [variant.name for variant in variants]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise BenchError(f"arm {declaration.name!r}: variants with the same id: {', '.join(duplicates)} (give distinct ids=)")
    return variants


def find_fixture_arms(plugins: Iterable[Any]) -> list[FixtureArm]:
    """Every declared arm variant in the given plugin modules (and objects), in a stable order."""
    found: dict[str, FixtureArm] = {}
    for plugin in plugins:
        namespace = getattr(plugin, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for value in list(namespace.values()):
            declaration = getattr(value, ARM_ATTRIBUTE, None) if callable(value) else None
            if not isinstance(declaration, ArmDeclaration):
                continue
            for variant in variants_of(value, declaration):
                earlier = found.get(variant.name)
                if earlier is not None and earlier.declared is not variant.declared:
                    raise BenchError(f"arm {variant.name!r} is declared twice: {_where(earlier.declared)} and {_where(variant.declared)}")
                found[variant.name] = variant
    return sorted(found.values(), key=lambda variant: variant.base_name)  # variants keep their declared order


def embedder_variant(variant: FixtureArm, options: dict[str, Any]) -> FixtureArm:
    """An `@embedder(...)` variant: its item function takes `bench_request` and the declared
    function's fixtures, and ranks with the embedder that function returned at set-up."""
    embedding = dense_arm_of(variant.name, options, variant.function)
    return dataclasses.replace(variant, function=ranking_function(variant.function, embedding), embedding=embedding, source=variant.function)


def _where(function: Callable[..., Any]) -> str:
    try:
        return f"{inspect.getsourcefile(function)}:{inspect.getsourcelines(function)[1]}"
    except (OSError, TypeError):
        return f"{function.__module__}.{function.__qualname__}"
