"""pytest-retrieval-bench: benchmark code-retrieval rankers as pytest items.

The public names are imported when first used (PEP 562), so loading the plugin into a pytest
run that uses no bench costs no import of the arms (or numpy)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_retrieval_bench.arms.agents.python_agent import agent
    from pytest_retrieval_bench.arms.base import Answer, Arm, Request, SnapshotHandle
    from pytest_retrieval_bench.arms.embedding import embedding_arm
    from pytest_retrieval_bench.arms.fixture_arms import arm, embedder

__version__ = "0.1.0"

_HOMES = {"Answer": "arms.base", "Arm": "arms.base", "Request": "arms.base", "SnapshotHandle": "arms.base",
          "embedding_arm": "arms.embedding", "agent": "arms.agents.python_agent", "arm": "arms.fixture_arms", "embedder": "arms.fixture_arms"}

__all__ = ["Answer", "Arm", "Request", "SnapshotHandle", "__version__", "agent", "arm", "embedder", "embedding_arm"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # not cached here: the defining module's current object is the one `sys.modules` holds (a
    # test harness that drops modules between in-process runs gets the re-imported one's)
    return getattr(import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
