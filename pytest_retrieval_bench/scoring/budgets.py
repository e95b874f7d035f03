"""Budgeted Context Yield (BCY): the Agent Retrieval Bench's context-budget metric, reproduced exactly.

The bench publishes BCY@4k/8k/16k/32k next to its recall figures. So that a leaderboard column of
ours reproduces theirs, this module follows the bench's packing protocol (`bcy_curve.pack_files`)
rule for rule:

* tokens are the matches of the bench's `regex_code_tokenizer_v1`
  (`[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^A-Za-z0-9_\\s]`);
* a file is rendered as the header `### {path}\\n`, its text, and one separator token when the text
  is non-empty;
* the ranked files (deduplicated, empty paths dropped, first occurrence kept) are packed greedily
  by rank; a file with no text in the snapshot is skipped and counted as missing; the first file
  that does not fit the remaining budget goes in as a token-boundary prefix (header first) and
  packing stops; packing also stops when the budget is used up exactly;
* a gold file is covered when at least min(tau, L) of its L content tokens are packed, tau = 1
  (so a gold file with no content tokens is never covered);
* BCY = covered gold files / distinct gold files (0.0 without gold).

Only the standard library is used, so the module can run next to the bench's own package.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Sequence

BCY_BUDGETS = (4000, 8000, 16000, 32000)
BCY_TOKENIZER = "regex_code_tokenizer_v1"
BCY_NAMES = tuple(f"bcy@{budget}" for budget in BCY_BUDGETS)

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^A-Za-z0-9_\s]")

# ASCII texts are counted on a copy with one byte per character class: " " for what `\s` matches
# in a str pattern, "0" for digits, "a" for letters and `_`, "." for every other character
_CLASSES = bytearray(b"." * 128)
_CLASSES[0x09:0x0E] = b" " * 5
_CLASSES[0x1C:0x21] = b" " * 5
_CLASSES[ord("0") : ord("9") + 1] = b"0" * 10
for _letter in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_":
    _CLASSES[_letter] = ord("a")
_CLASSES_TABLE = bytes(_CLASSES) + b"." * 128
_DIGIT_LED = re.compile(rb"[ .]0+a")
_BYTES_FROM = 256  # below this many characters the regex is as fast


def count_tokens(text: str) -> int:
    """Number of `regex_code_tokenizer_v1` tokens in `text`.

    Scoring counts every ranked file of a snapshot. An ASCII text of some size is counted from its
    character classes with C-speed byte counts, instead of materialising each token as a string
    (the regex's own result): every `.` is a token; every run of word characters is one
    (`[A-Za-z_][A-Za-z0-9_]*` takes a run that starts with a letter or `_`), or two when it starts
    with digits and goes on into a letter or `_` (`[0-9]+`, then an identifier for the rest)."""
    if not text:
        return 0
    if len(text) < _BYTES_FROM or not text.isascii():
        return len(_TOKEN.findall(text))
    classes = (" " + text).encode("ascii").translate(_CLASSES_TABLE)  # a space first: every run has a character before it
    runs = classes.count(b" a") + classes.count(b" 0") + classes.count(b".a") + classes.count(b".0")
    return classes.count(b".") + runs + len(_DIGIT_LED.findall(classes))


def header_tokens(path: str) -> int:
    """Tokens of the path header `### {path}\\n` that precedes every packed file."""
    return count_tokens(f"### {path}\n")


class TokenCounts:
    """Token counts of one snapshot's files, each file counted at most once.

    `text_of(path)` gives a file's text, or None when the snapshot has no text for it. Only ints
    are kept: per path (header tokens, content tokens, rendered total), or None for no text.
    """

    __slots__ = ("_text_of", "_files")

    def __init__(self, text_of: Callable[[str], str | None]) -> None:
        self._text_of = text_of
        self._files: dict[str, tuple[int, int, int] | None] = {}

    def file(self, path: str) -> tuple[int, int, int] | None:
        """(header tokens, content tokens, header + content + separator), or None for no text."""
        try:
            return self._files[path]
        except KeyError:
            pass
        text = self._text_of(path)
        if text is None:
            entry = None
        else:
            header, content = header_tokens(path), count_tokens(text)
            entry = (header, content, header + content + (1 if text else 0))
        self._files[path] = entry
        return entry

    def content(self, path: str) -> int | None:
        """Content tokens of the file's text, None when it has no text."""
        entry = self.file(path)
        return None if entry is None else entry[1]

    def __len__(self) -> int:
        return len(self._files)


@dataclass(frozen=True)
class Packing:
    """The outcome of packing one ranking into one budget (the bench's `pack_files` counters)."""

    budget: int
    used_tokens: int
    covered_gold_count: int
    gold_count: int
    packed_files: int
    partial_files: int
    missing_ranked_files: int

    @property
    def bcy(self) -> float:
        """Covered gold files over distinct gold files; 0.0 without gold."""
        return self.covered_gold_count / self.gold_count if self.gold_count else 0.0


def dedupe_ranking(paths: Iterable[str]) -> Iterator[str]:
    """Paths in rank order, each once, empty paths dropped (the bench's `dedupe_paths`)."""
    seen: set[str] = set()
    for path in paths:
        if path and path not in seen:
            seen.add(path)
            yield path


def pack(ranking: Sequence[str], gold: Iterable[str], counts: TokenCounts, budgets: Iterable[int] = BCY_BUDGETS) -> list[Packing]:
    """Pack `ranking` into every budget in one pass; one `Packing` per distinct budget, ascending.

    All budgets see the same greedy prefix of the ranking: a budget stops at the first file that
    overflows it (packed as a prefix) or right after the file that fills it exactly, so the
    running totals at that point are its counters.
    """
    targets = {path for path in gold if path}
    order = sorted({int(budget) for budget in budgets})
    results: list[Packing] = []
    n = len(order)
    i = used = covered = packed = missing = 0

    def finish(budget: int, used_tokens: int, covered_count: int, packed_count: int, partial: int) -> None:
        results.append(Packing(budget, used_tokens, covered_count, len(targets), packed_count, partial, missing))

    for path in dedupe_ranking(ranking):
        if i == n:
            break
        entry = counts.file(path)
        if entry is None:
            missing += 1
            continue
        header, content, total = entry
        if total <= 0:  # never: a header has at least three tokens; kept as the bench has it
            continue
        while i < n and order[i] <= used:  # only budgets <= 0, before the first file
            finish(order[i], used, covered, packed, 0)
            i += 1
        if i == n:
            break
        packed += 1
        gold_hit = 1 if content > 0 and path in targets else 0
        while i < n and total > order[i] - used:  # overflows: a token-boundary prefix, then stop
            included = min(content, max(0, order[i] - used - header))
            finish(order[i], order[i], covered + (gold_hit if included >= 1 else 0), packed, 1)
            i += 1
        used += total
        covered += gold_hit
        while i < n and order[i] <= used:  # filled exactly: stop
            finish(order[i], used, covered, packed, 0)
            i += 1
    while i < n:
        finish(order[i], used, covered, packed, 0)
        i += 1
    return results


def bcy_metrics(ranking: Sequence[str], gold: Sequence[str], counts: TokenCounts, budgets: Iterable[int] = BCY_BUDGETS) -> dict[str, float]:
    """`{"bcy@<budget>": BCY}` for each distinct budget, ascending; equal to the bench's `bcy`."""
    return {f"bcy@{packing.budget}": packing.bcy for packing in pack(ranking, gold, counts, budgets)}
