"""The public arm API: what an arm receives, what it returns, and the protocol it implements.

An arm never sees the gold: a `Request` carries only what an agent would have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Protocol, runtime_checkable

from pytest_retrieval_bench.errors import BenchError


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

    def directory(self, fresh: bool = False) -> Path:
        """A private real directory holding the snapshot, committed once into a fresh git repo.

        Built on first use, shared by the snapshot's samples, removed at session end. With
        `fresh`, it is first put back to the committed tree (`git reset --hard`, `git clean -ffdx`:
        what an earlier call wrote or changed is gone; `.git/`, and a cache kept there, stays).
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
    #: files the agent is given with the query (never a success, removed before scoring)
    given_files: tuple[str, ...] = ()


#: the most entries a ranking (or a spans list) may hold: far above any repository's file count, and
#: low enough that a runaway answer is refused at once rather than held and checked entry by entry
MAX_RANKING_ENTRIES = 1_000_000


@dataclass
class Answer:
    """An arm's answer. An empty ranking is an abstention; raise an exception for an error.

    `ranking` holds distinct repo-relative POSIX paths, best first.

    `spans` (optional) is the answer at result granularity, for formats that score line spans
    and chunk kinds: dicts `{path, kind?, start_line?, end_line?}`, best first, a path may
    repeat. Given alone, the ranking is derived from it (distinct paths, first occurrence
    first); given beside a ranking, every span's path must be in the ranking. A span without
    lines stands for the whole file. Checked here, so a malformed span is the arm's error.
    """

    ranking: list[str]
    state: str | None = None
    packet_bytes: int | None = None
    cache_state: str | None = None
    abstained: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    spans: list[dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.ranking, (str, bytes)):  # would be read character by character
            raise ValueError(f"ranking is a single {type(self.ranking).__name__} ({self.ranking[:60]!r}); expected a list of paths")
        if not isinstance(self.ranking, list):
            try:  # any iterable (a generator, a tuple, a numpy array of str) is read once, here
                self.ranking = list(self.ranking)
            except TypeError:
                raise ValueError(f"ranking is {type(self.ranking).__name__}; expected a list of paths") from None
        check_entry_count(len(self.ranking), "ranking")
        if self.spans is None:
            return
        check_entry_count(len(self.spans), "spans")
        self.spans = [_checked_span(span, index) for index, span in enumerate(self.spans)]
        if not self.ranking:
            self.ranking = list(dict.fromkeys(span["path"] for span in self.spans))
            return
        listed = set(self.ranking)
        for index, span in enumerate(self.spans):
            if span["path"] not in listed:
                raise ValueError(f"spans[{index}]: path {span['path']!r} is not in the ranking")

    @property
    def is_abstention(self) -> bool:
        return bool(self.abstained) if self.abstained is not None else not self.ranking


def check_entry_count(count: int, what: str) -> None:
    if count > MAX_RANKING_ENTRIES:
        raise ValueError(f"{what} has {count:,} entries, above the limit of {MAX_RANKING_ENTRIES:,}")


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


def _checked_span(span: Any, index: int) -> dict[str, Any]:
    """One span in canonical form: 1-based inclusive lines, `end_line` defaulting to `start_line`."""
    if not isinstance(span, dict):
        raise ValueError(f"spans[{index}]: expected an object, got {type(span).__name__}")
    path = span.get("path")
    if not isinstance(path, str) or not path:
        raise ValueError(f"spans[{index}]: 'path' must be a non-empty string")
    out: dict[str, Any] = {"path": path}
    kind = span.get("kind")
    if kind is not None:
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"spans[{index}]: 'kind' must be a non-empty string")
        out["kind"] = kind
    start, end = span.get("start_line"), span.get("end_line")
    if start is None and end is not None:
        raise ValueError(f"spans[{index}]: 'end_line' without 'start_line'")
    if start is not None:
        end = start if end is None else end
        for name, value in (("start_line", start), ("end_line", end)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"spans[{index}]: {name!r} must be a positive integer, got {value!r}")
        if end < start:
            raise ValueError(f"spans[{index}]: end_line {end} is before start_line {start}")
        out["start_line"], out["end_line"] = start, end
    return out


ARM_NAME_FORBIDDEN = "[],= \t\n"
"""Characters an arm name may not hold: brackets mark a fixture arm's variant, commas and '=' split
--bench-arms and --bench-fuse, white space splits command lines."""


def checked_arm_name(name: Any, source: str) -> str:
    """`name` if it can be selected with --bench-arms, else a BenchError naming `source`."""
    if not isinstance(name, str) or not name or any(char in name for char in ARM_NAME_FORBIDDEN):
        raise BenchError(f"{source}: arm name {name!r}: expected a non-empty name without brackets, commas, '=' or white space")
    return name


def checked_timeout(value: Any, arm_name: str) -> float | None:
    """An arm's own declared `timeout`: None (the run's applies) or a positive number of seconds."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value != value:
        raise BenchError(f"arm {arm_name!r}: timeout must be a positive number of seconds, got {value!r}")
    return float(value)
