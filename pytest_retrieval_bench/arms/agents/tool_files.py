"""A snapshot's files as the closed-tool protocol shows them, with what every item's calls reuse.

The bench's `grep` lowercases each file's path and text for every pattern of every sample; here
each file is lowercased once per snapshot, on the first grep that needs it, and a snapshot grepped
often gets a `GrepIndex` instead (see `grep`); with the run's index cache, a snapshot's index is
loaded before its first grep, or built at it and stored (`grep_cache.py`). Every pattern's hits, every listing, each
lowercased path are kept while the snapshot is. Results are the bench's (`grep_files`,
`list_dir`, `first_snippet`) to the character.
"""

from __future__ import annotations

from operator import methodcaller
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

import time

import numpy as np

from pytest_retrieval_bench.arms.agents.grep_cache import GrepIndexCache
from pytest_retrieval_bench.arms.agents.grep_index import GrepIndex, PathOrder, is_piece
from pytest_retrieval_bench.scoring.budgets import count_tokens

if TYPE_CHECKING:
    from pytest_retrieval_bench.corpus.snapshot import Snapshot

INDEX_AFTER_SCANS = 24
"""Plain scans of a snapshot before its `GrepIndex` is built: building costs about as much as
that many scans (the index then answers a pattern in a few percent of a scan's time), so a
snapshot grepped a few times is never indexed and one grepped often pays at most about twice."""


class ToolFiles:
    """`texts` (path -> text: every file the agent may see, nothing else) and cached derivations.

    `token_count(path)` gives a file's tokens by the bench's tokenizer (a snapshot's shared
    `TokenCounts.content`, so each file is counted once for all arms); `memo` holds per-snapshot
    values an agent derives from the files (computed once, reused by every item). `grep_index`
    is a `GrepIndex` already built over these very texts (`prepare_grep` of another `ToolFiles`,
    or the index cache's). `when_built` is told of an index built here (and how many seconds that
    took); with it, the index is built at the first grep rather than after `INDEX_AFTER_SCANS`
    scans (someone keeps it for later runs).
    """

    def __init__(self, texts: Mapping[str, str], token_count: Callable[[str], int | None] | None = None, grep_index: GrepIndex | None = None,
                 when_built: Callable[[GrepIndex, float], None] | None = None):
        self.texts = texts
        self._token_count = token_count
        self._lowered_texts: dict[str, str] = {}
        self._path_order: PathOrder | None = None
        self._all_haystacks: list[str] | None = None
        self._some_haystacks: dict[int, str] = {}
        self._index = grep_index
        self._scans = 0
        self._when_built = when_built
        self._found: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._listings: dict[str, list[str]] = {}
        self.memo: dict[str, Any] = {}

    @classmethod
    def of_snapshot(cls, snapshot: "Snapshot", grep_cache: GrepIndexCache | None = None) -> "ToolFiles":
        """The text files of a `Snapshot` (the file rows of a release, the text files of a tree);
        with `grep_cache`, its `GrepIndex` from the cache, or built at the first grep and stored."""
        if grep_cache is None:
            return cls(snapshot.texts, snapshot.token_counts().content)
        digest = snapshot.files_digest()
        index = grep_cache.load(digest, list(snapshot.texts), snapshot.key)
        return cls(snapshot.texts, snapshot.token_counts().content, grep_index=index,
                   when_built=None if index is not None else grep_cache.built_hook(digest, snapshot.key))

    def __contains__(self, path: object) -> bool:
        return path in self.texts

    def paths(self) -> Iterator[str]:
        return iter(self.texts)

    def text(self, path: str) -> str | None:
        return self.texts.get(path)

    def tokens(self, path: str) -> int:
        """The file's tokens by the bench's `count_tokens`."""
        if self._token_count is not None:
            counted = self._token_count(path)
            if counted is not None:
                return counted
        return count_tokens(self.texts.get(path) or "")

    def list_dir(self, path: str) -> list[str]:
        """The bench's `list_dir`: the sorted distinct first components under `path` (slashes
        around it ignored); a path that names no directory lists nothing. Kept per path."""
        prefix = path.strip("/")
        listing = self._listings.get(prefix)
        if listing is None:
            listing = self._listings[prefix] = self._list(prefix)
        return list(listing)

    def _list(self, prefix: str) -> list[str]:
        children: set[str] = set()
        if prefix:
            start = prefix + "/"
            for file_path in self.texts:
                if file_path.startswith(start):
                    rest = file_path[len(start):]
                    if rest:
                        children.add(rest.split("/", 1)[0])
        else:
            children = {file_path.partition("/")[0] for file_path in self.texts if file_path}
        return sorted(children)

    def ordered_paths(self) -> tuple[list[str], list[str]]:
        """Every path in one fixed order (the texts' order), and each lowercased, once per snapshot."""
        order = self._order()
        return order.paths, order.lowered

    # -- grep --------------------------------------------------------------------------------------

    def _order(self) -> PathOrder:
        """The paths in one fixed order, with what ranking hits needs of them (the index's, if any)."""
        if self._path_order is None:
            self._path_order = self._index.paths if self._index is not None else PathOrder(list(self.texts))
        return self._path_order

    def _made_haystack(self, path: str) -> str:
        """A file's lowercased `path\\ntext`: the bench's haystack."""
        return f"{path}\n{self.texts[path]}".lower()

    def _haystacks(self) -> list[str]:
        """Every file's haystack, in path order."""
        if self._all_haystacks is None:
            self._all_haystacks = [self._made_haystack(path) for path in self._order().paths]
        return self._all_haystacks

    def _haystack(self, position: int, keep: bool = True) -> str:
        """One file's haystack; kept when `keep` (a pattern's candidates: a few files)."""
        if self._all_haystacks is not None:
            return self._all_haystacks[position]
        haystack = self._some_haystacks.get(position)
        if haystack is None:
            haystack = self._made_haystack(self._order().paths[position])
            if keep:
                self._some_haystacks[position] = haystack
        return haystack

    def prepare_grep(self) -> GrepIndex:
        """The snapshot's `GrepIndex`, built now if it is not yet; the lowercased copies of every
        file that plain scans kept are dropped (the index answers from far less)."""
        if self._index is None:
            self._all_haystacks = None  # before the build: its peak and the copies never add up
            started = time.perf_counter()
            order = self._order()
            self._index = GrepIndex(order, [self.texts[path] for path in order.paths])
            if self._when_built is not None:
                self._when_built(self._index, time.perf_counter() - started)
        return self._index

    def _counts(self, needle: str) -> tuple[np.ndarray, np.ndarray]:
        """The files holding `needle` (positions in path order) and the bench's count in each."""
        index = self._index
        if index is None:
            self._scans += 1
            if self._scans > INDEX_AFTER_SCANS or self._when_built is not None:
                index = self.prepare_grep()
        if index is None:
            counts = np.fromiter(map(methodcaller("count", needle), self._haystacks()), dtype=np.int64, count=len(self.texts))
            held = np.flatnonzero(counts)
            return held, counts[held]
        if is_piece(needle):
            counts = index.run_counts(needle)
            held = np.flatnonzero(counts)
            return held, counts[held]
        candidates = index.candidates(needle)
        positions = range(len(self.texts)) if candidates is None else candidates.tolist()
        keep = candidates is not None
        counts = np.fromiter((self._haystack(position, keep).count(needle) for position in positions), dtype=np.int64, count=len(positions))
        held = np.flatnonzero(counts)
        return np.asarray(positions, dtype=np.int64)[held], counts[held]

    def grep(self, pattern: str, top_k: int) -> list[dict[str, Any]]:
        """The bench's `grep_files`: case-insensitive substring counts over path and text (not a
        regex), best first: a path match, then more matches, a shorter path, the path's order.

        Each pattern's order is kept for the snapshot (items often grep the same words); every
        call gets hits of its own. Files are counted by plain scans of their lowercased text
        until the snapshot has been scanned `INDEX_AFTER_SCANS` times, about what building its
        `GrepIndex` costs; from then on the index answers (`prepare_grep` builds it at once; with
        `when_built`, the first grep does: the index is kept for later runs)."""
        if not pattern:
            return []
        needle = pattern.lower()
        found = self._found.get(needle)
        if found is None:
            order = self._order()
            held, counts = self._counts(needle)
            lowered, lengths, rank = order.lowered, order.lengths, order.rank
            path_match = np.fromiter((needle in lowered[position] for position in held.tolist()), dtype=bool, count=held.size)
            ranked = np.lexsort((rank[held], lengths[held], -counts, ~path_match))  # the last key sorts first
            found = self._found[needle] = (held[ranked], counts[ranked], path_match[ranked])
        paths = self._order().paths
        held, counts, path_match = found
        return [{"path": paths[position], "matches": int(matches), "snippet": self.snippet(paths[position], needle), "path_match": bool(matched)}
                for position, matches, matched in zip(held[:top_k].tolist(), counts[:top_k].tolist(), path_match[:top_k].tolist())]

    def snippet(self, path: str, needle: str) -> str:
        """The bench's `first_snippet`: 80 characters before the first match in the text (not
        the path) to 160 after it, newlines shown as `\\n`; the offset found in the lowercased
        text is applied to the text as it is, as the bench does."""
        lowered = self._lowered_texts.get(path)
        text = self.texts[path]
        if lowered is None:
            lowered = self._lowered_texts[path] = text.lower()
        index = lowered.find(needle)
        if index < 0:
            return ""
        start = max(0, index - 80)
        end = min(len(text), index + len(needle) + 160)
        return text[start:end].replace("\n", "\\n")
