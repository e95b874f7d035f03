"""pytest-retrieval-bench: benchmark code-retrieval rankers as pytest items."""

from pytest_retrieval_bench.arms.base import Answer, Arm, Request, SnapshotHandle
from pytest_retrieval_bench.arms.embedding import embedding_arm
from pytest_retrieval_bench.arms.fixture_arms import arm, embedder

__version__ = "0.1.0"

__all__ = ["Answer", "Arm", "Request", "SnapshotHandle", "__version__", "arm", "embedder", "embedding_arm"]
