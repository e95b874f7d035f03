"""A snapshot's files as the closed-tool protocol shows them, with what every item's calls reuse.

The bench's `grep` lowercases each file's path and text for every pattern of every sample; here
each file is lowercased once per snapshot, on the first grep that needs it, and kept while the
snapshot is. Results are the bench's (`grep_files`, `list_dir`, `first_snippet`) to the character.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from pytest_retrieval_bench.scoring.budgets import count_tokens

if TYPE_CHECKING:
    from pytest_retrieval_bench.corpus.snapshot import Snapshot


class ToolFiles:
    """`texts` (path -> text: every file the agent may see, nothing else) and cached derivations.

    `token_count(path)` gives a file's tokens by the bench's tokenizer (a snapshot's shared
    `TokenCounts.content`, so each file is counted once for all arms); `memo` holds per-snapshot
    values an agent derives from the files (computed once, reused by every item).
    """

    def __init__(self, texts: Mapping[str, str], token_count: Callable[[str], int | None] | None = None):
        self.texts = texts
        self._token_count = token_count
        self._haystacks: dict[str, str] = {}
        self._lowered_texts: dict[str, str] = {}
        self._lowered_paths: dict[str, str] | None = None
        self._found: dict[str, list[tuple[int, int, int, str]]] = {}
        self.memo: dict[str, Any] = {}

    @classmethod
    def of_snapshot(cls, snapshot: "Snapshot") -> "ToolFiles":
        """The text files of a `Snapshot` (the file rows of a release, the text files of a tree)."""
        return cls(snapshot.texts, snapshot.token_counts().content)

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
        around it ignored); a path that names no directory lists nothing."""
        prefix = path.strip("/")
        children: set[str] = set()
        if prefix:
            start = prefix + "/"
            for file_path in self.texts:
                if file_path.startswith(start):
                    rest = file_path[len(start):]
                    if rest:
                        children.add(rest.split("/", 1)[0])
        else:
            for file_path in self.texts:
                if file_path:
                    children.add(file_path.split("/", 1)[0])
        return sorted(children)

    def _haystack(self, path: str) -> str:
        haystack = self._haystacks.get(path)
        if haystack is None:
            haystack = self._haystacks[path] = f"{path}\n{self.texts[path]}".lower()
        return haystack

    def lowered_path(self, path: str) -> str:
        if self._lowered_paths is None:
            self._lowered_paths = {name: name.lower() for name in self.texts}
        return self._lowered_paths[path]

    def grep(self, pattern: str, top_k: int) -> list[dict[str, Any]]:
        """The bench's `grep_files`: case-insensitive substring counts over path and text (not a
        regex), best first: a path match, then more matches, a shorter path, the path's order.
        Each pattern's order is kept for the snapshot (items often grep the same words); every
        call gets hits of its own."""
        if not pattern:
            return []
        needle = pattern.lower()
        found = self._found.get(needle)
        if found is None:
            found = []
            for path in self.texts:
                matches = self._haystack(path).count(needle)
                if matches > 0:
                    found.append((-int(needle in self.lowered_path(path)), -matches, len(path), path))
            found.sort()  # the snippet is no part of the order: it is cut only for the hits kept
            self._found[needle] = found
        return [{"path": path, "matches": -matches, "snippet": self.snippet(path, needle), "path_match": bool(path_match)}
                for path_match, matches, _length, path in found[:top_k]]

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
