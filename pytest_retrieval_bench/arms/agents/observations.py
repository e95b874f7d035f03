"""What an agent is shown after each call: the bench's `format_*_observation`, character for character."""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from itertools import islice
from typing import Any

_PREFIX_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
"""The bench cuts a read at its closed-tool tokens (identifiers and digit runs), not at the
punctuation-counting tokens it charges the read with: both are reproduced as they are."""

_ATOMIC = sys.version_info >= (3, 11)  # atomic groups and possessive repeats


@lru_cache(maxsize=64)
def _tokens_block(count: int) -> re.Pattern[str]:
    """`count` tokens from the start, each taken whole as `finditer` takes it (atomic: a token is
    never split to make up the count), with what lies before each."""
    return re.compile(r"(?:[^A-Za-z0-9_]*+(?>[A-Za-z_][A-Za-z0-9_]*|[0-9]+)){%d}" % count)


def token_prefix(text: str, max_tokens: int) -> str:
    """The bench's `token_prefix`: the text up to the end of its `max_tokens`-th token, marked
    `[TRUNCATED]`, or the whole text when it has no more tokens than that. One match of a
    counted pattern finds that end without a match object per token."""
    if max_tokens <= 0:
        return ""
    if _ATOMIC:
        block = _tokens_block(max_tokens).match(text)
        if block is None or _PREFIX_TOKEN.search(text, block.end()) is None:
            return text
        return text[: block.end()] + "\n[TRUNCATED]"
    matches = list(islice(_PREFIX_TOKEN.finditer(text), max_tokens + 1))
    if len(matches) <= max_tokens:
        return text
    return text[: matches[max_tokens - 1].end()] + "\n[TRUNCATED]"


def list_dir_observation(path: str, entries: list[str]) -> str:
    shown = entries[:60]
    suffix = "" if len(entries) <= len(shown) else f"\n... {len(entries) - len(shown)} more entries"
    listing = "\n".join(f"- {entry}" for entry in shown) if shown else "(empty)"
    return f"OBS list_dir path={path or '.'}\n{listing}{suffix}"


def grep_observation(pattern: str, hits: list[dict[str, Any]]) -> str:
    if not hits:
        return f"OBS grep pattern={pattern!r}\n(no hits)"
    lines = [f"OBS grep pattern={pattern!r}"]
    for index, hit in enumerate(hits[:10], start=1):
        snippet = str(hit.get("snippet") or "")[:260]
        lines.append(f"{index}. {hit['path']} matches={hit['matches']} snippet={snippet}")
    if len(hits) > 10:
        lines.append(f"... {len(hits) - 10} more hits omitted")
    return "\n".join(lines)


def read_file_observation(path: str, text: str, included_tokens: int) -> str:
    return f"OBS read_file path={path} tokens={included_tokens}\n{token_prefix(text, included_tokens)}"
