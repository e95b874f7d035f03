"""A fixture arm whose function returns an embedder: the dense arm runs that embedder.

    @pytest_retrieval_bench.embedder("voyage", query_prefix="query: ")
    def voyage(voyage_client):              # any fixtures, of any scope
        return voyage_client.embedder("voyage-code-3")

At an item's set-up (after its fixtures, before its timed call) the function is called and what
it returns, an object with `encode(texts, batch_size) -> 2-D array`, becomes the embedder of the
variant's `EmbeddingArm`: the same chunk texts, vector cache, windows, progress and ranking as
`embed:<model>`. The item's timed call encodes the query and ranks.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from pytest_retrieval_bench.arms.embedders import EmbedOptions
from pytest_retrieval_bench.arms.embedding import EmbeddingArm
from pytest_retrieval_bench.errors import ArmError, BenchError

REQUEST_FIXTURE = "bench_request"


def checked_options(name: str, options: dict[str, Any]) -> EmbedOptions:
    """The declaration's options as `EmbedOptions`; BenchError naming the arm for an unknown one."""
    try:
        return EmbedOptions(**options)
    except TypeError:
        known = ", ".join(EmbedOptions.__dataclass_fields__)
        raise BenchError(f"embedder arm {name!r}: unknown option among {', '.join(sorted(options))} (known: {known})") from None


def dense_arm_of(name: str, options: dict[str, Any], function: Callable[..., Any]) -> EmbeddingArm:
    return EmbeddingArm(name=name, model=name, options=checked_options(name, options), fixture=f"{function.__module__}.{function.__qualname__}")


def fixture_names(function: Callable[..., Any]) -> list[str]:
    """The function's fixture names: its parameters without a default, as pytest counts them."""
    return [name for name, parameter in inspect.signature(function).parameters.items()
            if parameter.default is inspect.Parameter.empty
            and parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]


def bind_embedder(function: Callable[..., Any], embedding: EmbeddingArm, fixtures: dict[str, Any]) -> None:
    """Call the declared function with its fixtures and make what it returns the arm's embedder."""
    embedder = function(**{name: fixtures[name] for name in fixture_names(function)})
    if isinstance(embedder, (str, bytes)) or not callable(getattr(embedder, "encode", None)):
        raise ArmError(f"arm {embedding.name!r}: its function returned {type(embedder).__name__}, "
                       f"not an embedder (an object with encode(texts, batch_size))")
    embedding.embedder = embedder


def ranking_function(function: Callable[..., Any], embedding: EmbeddingArm) -> Callable[..., Any]:
    """The item function: `bench_request` and the declared function's fixtures; it ranks with the
    embedder bound at set-up (or binds it now, when called outside a set-up)."""
    names = [REQUEST_FIXTURE, *[name for name in fixture_names(function) if name != REQUEST_FIXTURE]]

    def rank(**fixtures: Any) -> Any:
        if embedding.embedder is None:
            bind_embedder(function, embedding, fixtures)
        return embedding.retrieve(fixtures[REQUEST_FIXTURE])

    rank.__name__, rank.__qualname__, rank.__module__ = function.__name__, function.__qualname__, function.__module__
    rank.__wrapped__ = function  # type: ignore[attr-defined]  # pytest's messages (a fixture not found) point at the declaration
    if hasattr(function, "pytestmark"):  # `skipif` and `parametrize` marks stay the arm's
        rank.pytestmark = function.pytestmark  # type: ignore[attr-defined]
    rank.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in names])
    return rank


def bind_embedders(arm: Any, arms: dict[str, Any], fixtures: dict[str, Any]) -> None:
    """At an item's set-up: the embedder of its `@embedder(...)` arm, or of a fusion's such components."""
    for part in [arm, *(arms[name] for name in getattr(arm, "component_names", ()))]:
        embedding, source = getattr(part, "embedding", None), getattr(part, "source", None)
        if isinstance(embedding, EmbeddingArm) and source is not None:
            bind_embedder(source, embedding, fixtures)
