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

# Texts are counted on a copy with one byte per character, its class: " " for what `\s` matches
# in a str pattern, "0" for digits, "a" for letters and `_`, "." for every other character. A
# non-ASCII character is its UTF-8 lead byte ("."); its continuation bytes are deleted.
_CLASSES = bytearray(b"." * 128)
_CLASSES[0x09:0x0E] = b" " * 5
_CLASSES[0x1C:0x21] = b" " * 5
_CLASSES[ord("0") : ord("9") + 1] = b"0" * 10
for _letter in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_":
    _CLASSES[_letter] = ord("a")
_CLASSES_TABLE = bytes(_CLASSES) + b"." * 128
_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))
_WORDS_TABLE = bytes.maketrans(b".0", b" a")  # a word run starts wherever " a" is (or at an "a" first)
_NON_ASCII_SPACE = re.compile("[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
"""The characters beyond ASCII that `\\s` matches in a str pattern (a test checks every code point)."""
_BYTES_FROM = 256  # below this many characters the regex is as fast


def count_tokens(text: str) -> int:
    """Number of `regex_code_tokenizer_v1` tokens in `text`.

    Scoring counts every ranked file of a snapshot. A text of some size is counted from its
    character classes with C-speed byte counts, instead of materialising each token as a string
    (the regex's own result): every `.` is a token; every run of word characters is one
    (`[A-Za-z_][A-Za-z0-9_]*` takes a run that starts with a letter or `_`), or two when it starts
    with digits and goes on into a letter or `_` (`[0-9]+`, then an identifier for the rest).
    A text with a non-ASCII space (rare in code) is left to the regex."""
    if not text:
        return 0
    if len(text) < _BYTES_FROM:
        return len(_TOKEN.findall(text))
    if text.isascii():
        classes = text.encode("ascii").translate(_CLASSES_TABLE)
    elif _NON_ASCII_SPACE.search(text) is None:
        classes = text.encode("utf-8", errors="surrogatepass").translate(_CLASSES_TABLE, _CONTINUATION_BYTES)
    else:
        return len(_TOKEN.findall(text))
    words = classes.translate(_WORDS_TABLE)
    runs = words.count(b" a") + (words[0] == 0x61)
    return classes.count(b".") + runs + _digit_led_runs(classes)


def _digit_led_runs(classes: bytes) -> int:
    """Word runs that start with digits and go on into a letter: each ends its digits with the
    one `0a` of the run; a `0a` whose digits follow a letter is inside an identifier instead."""
    count = 0
    at = classes.find(b"0a")
    while at != -1:
        start = at
        while start and classes[start - 1] == 0x30:
            start -= 1
        if not start or classes[start - 1] != 0x61:
            count += 1
        at = classes.find(b"0a", at + 2)
    return count


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
