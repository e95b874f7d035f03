"""The public arm API: what an arm receives, what it returns, and the protocol it implements.

An arm never sees the gold: a `Request` carries only what an agent would have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Protocol, runtime_checkable


class SnapshotHandle(Protocol):
    """Read access to the file tree a query runs against (never modified)."""

    repo: str
    commit: str

    def paths(self) -> list[str]:
        """Every file path in the snapshot, repo-relative POSIX, sorted."""

    def read_text(self, path: str) -> str | None:
        """The file's text (UTF-8, replacement characters), or None if not a text file."""

    def text_files(self) -> Iterator[tuple[str, str]]:
        """(path, text) for every text file: under 1 MiB and without a NUL byte, sorted."""

    def directory(self) -> Path:
        """A private real directory holding the snapshot, committed once into a fresh git repo.

        Built on first use, shared by the snapshot's samples, removed at session end.
        """


@dataclass(frozen=True)
class Request:
    """One retrieval request: a sample's query, without its gold."""

    sample_id: str
    task_type: str
    repo: str
    base_commit: str
    query: Any
    query_text: str
    changed_file: str | None
    k: int
    snapshot: SnapshotHandle


@dataclass
class Answer:
    """An arm's answer. An empty ranking is an abstention; raise an exception for an error.

    `ranking` holds distinct repo-relative POSIX paths, best first.
    """

    ranking: list[str]
    state: str | None = None
    packet_bytes: int | None = None
    cache_state: str | None = None
    abstained: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_abstention(self) -> bool:
        return bool(self.abstained) if self.abstained is not None else not self.ranking


@runtime_checkable
class Arm(Protocol):
    """A retriever under test.

    `name` selects it with --bench-arms. `max_query_chars` (optional attribute) bounds the query
    text the arm sees; the item then records the full length and whether it was truncated.
    `prepare(snapshot)` (optional) runs once per snapshot before its first request.
    """

    name: str

    def retrieve(self, request: Request) -> Answer:
        """Rank files for the request."""
