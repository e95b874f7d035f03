"""How the bench's scripted closed-tool policy reads a query: its grep patterns, anchors and scores.

Rule for rule the helpers of the bench's `closed_tool_eval` (`choose_grep_patterns`,
`quoted_phrases`, `query_anchor_paths`, `tokenize`, `pattern_score`, `path_token_score`): the
built-in `arb-closed-tool` agent must choose the same patterns and read the same files.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import Counter
from itertools import accumulate
from typing import Any

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
_CAMEL_GAP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_QUOTED = re.compile(r"`([^`]{3,80})`|\"([^\"]{3,80})\"|'([^']{3,80})'")
STOP_WORDS = frozenset({
    "about", "actual", "after", "also", "before", "being", "build", "case", "change", "changed", "class", "code", "could",
    "error", "expected", "failed", "file", "files", "from", "function", "have", "here", "into", "make", "method", "module",
    "only", "path", "should", "source", "test", "tests", "that", "this", "using", "value", "when", "with",
})
_HEAVY_KEYS = frozenset({"pr_title", "review_comment", "failure_excerpt", "command"})
_PATH_KEYS = frozenset({"changed_file", "given_file", "path", "implementation_files"})


def parse_query(query_text: str) -> dict[str, Any]:
    """The query as an object: its JSON when that is an object, `{}` for other JSON, else the text."""
    try:
        value = json.loads(query_text)
    except json.JSONDecodeError:
        return {"query": query_text}
    return value if isinstance(value, dict) else {}


def flatten_text(value: Any) -> list[str]:
    """Every leaf of a JSON value as text, in order (numbers and booleans `str()`ed, keys left out)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in flatten_text(item)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in flatten_text(item)]
    return [str(value)]


def tokenize(text: str) -> set[str]:
    """Lowercased words of three or more characters (camelCase, `_`, `-`, `/`, `.` split), stop words out.

    The bench splits camelCase with `sub(r"([a-z0-9])([A-Z])", r"\1 \2")`; a space put into the gap
    between the two characters is the same text (two such pairs never overlap: the upper-case
    letter that ends one cannot start the next), without expanding a template per match.
    """
    normalized = _CAMEL_GAP.sub(" ", text)
    normalized = normalized.replace("_", " ").replace("-", " ").replace("/", " ").replace(".", " ")
    return {token for token in map(str.lower, set(_WORD.findall(normalized))) if token not in STOP_WORDS}


def quoted_phrases(query: dict[str, Any]) -> list[str]:
    text = "\n".join(flatten_text(query))
    phrases = []
    for groups in _QUOTED.findall(text):
        phrase = next((value for value in groups if value), "")
        if phrase:
            phrases.append(phrase.strip())
    return phrases


def choose_grep_patterns(query: dict[str, Any], max_patterns: int) -> list[str]:
    """Query words weighted by the field they come from (titles, comments, failures and commands 3,
    paths 2, the rest 1) plus quoted phrases (4 each), heaviest first, then longest, then by text."""
    weighted: Counter[str] = Counter()
    for key, value in query.items():
        weight = 3 if key in _HEAVY_KEYS else 2 if key in _PATH_KEYS else 1
        for token in tokenize(" ".join(flatten_text(value))):
            if token not in STOP_WORDS and len(token) >= 3:
                weighted[token] += weight
    for phrase in quoted_phrases(query):
        if 3 <= len(phrase) <= 64:
            weighted[phrase.lower()] += 4
    ordered = sorted(weighted.items(), key=lambda item: (-item[1], -len(item[0]), item[0]))
    return [pattern for pattern, _count in ordered][:max_patterns]


def query_anchor_paths(query: dict[str, Any]) -> list[str]:
    """Paths the query names (its changed, given or reviewed file, implementation files), distinct."""
    anchors = []
    for key in ("changed_file", "given_file", "path"):
        value = query.get(key)
        if isinstance(value, str) and "/" in value:
            anchors.append(value)
    for value in query.get("implementation_files") or []:
        if isinstance(value, str) and "/" in value:
            anchors.append(value)
    return list(dict.fromkeys(anchor for anchor in anchors if anchor))


def query_tokens(query: dict[str, Any]) -> set[str]:
    return tokenize(" ".join(flatten_text(query)))


def pattern_score(pattern: str) -> float:
    return 1.0 + min(2.0, len(pattern) / 20)


class PathPatterns:
    """For the bench's `path_token_score` (0.25 for each pattern that is one of the path's words or
    in its lowercased text): how many patterns each path holds, by index, paths holding none left out.

    A path's words are runs of its ASCII characters, lowercased, so each is in the lowercased path
    too: holding the pattern as a substring is the whole test. The paths are searched as one text
    (NUL-separated: no path holds a NUL, or they are searched one by one), joined once per
    snapshot, one hit per path and pattern, so the cost follows the hits rather than the paths.
    """

    def __init__(self, lowered_paths: list[str]):
        self.lowered_paths = lowered_paths
        self._joined: str | None = None
        self._starts: list[int] = []
        if not any("\0" in path for path in lowered_paths):
            self._joined = "\0".join(lowered_paths)
            self._starts = list(accumulate((len(path) + 1 for path in lowered_paths[:-1]), initial=0))

    def counts(self, patterns: list[str]) -> dict[int, int]:
        counts: dict[int, int] = {}
        joined, starts = self._joined, self._starts
        if joined is None:
            for index, path in enumerate(self.lowered_paths):
                found = sum(1 for pattern in patterns if pattern in path)
                if found:
                    counts[index] = found
            return counts
        for pattern in patterns:
            if not pattern or "\0" in pattern:
                continue
            at = joined.find(pattern)
            while at >= 0:
                index = bisect_right(starts, at) - 1
                counts[index] = counts.get(index, 0) + 1
                if index + 1 >= len(starts):
                    break
                at = joined.find(pattern, starts[index + 1])
        return counts


def path_pattern_counts(lowered_paths: list[str], patterns: list[str]) -> dict[int, int]:
    """`PathPatterns(lowered_paths).counts(patterns)`, for one set of patterns."""
    return PathPatterns(lowered_paths).counts(patterns)
