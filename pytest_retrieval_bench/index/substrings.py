"""Which of many short strings (a snapshot's paths or symbols) occur in one text (a query).

`arb-lexical` adds a bonus to every chunk whose path, basename or symbol is a substring of the
query; a release has tens of thousands of distinct symbols, and a Python-level `in` test for
each cost more than the rest of the query. A string can occur only where its first characters
do, so the strings are filed once by their first `KEY_CHARS` characters, and a query tests only
those filed under one of its own `KEY_CHARS`-character pieces (shorter strings are always tested).
"""

from __future__ import annotations

import numpy as np

KEY_CHARS = 4


class Substrings:
    """The strings `values`, ready to be tested against any number of texts."""

    def __init__(self, values: list[str]):
        self.values = values
        self._by_key: dict[str, list[int]] = {}
        short: list[int] = []
        for position, value in enumerate(values):
            if len(value) >= KEY_CHARS:
                self._by_key.setdefault(value[:KEY_CHARS], []).append(position)
            elif value:
                short.append(position)
        self._short = short

    def found_in(self, text: str) -> np.ndarray:
        """For each value: non-empty and a substring of `text` (a boolean array)."""
        found = np.zeros(len(self.values), dtype=bool)
        values, by_key = self.values, self._by_key
        pieces = {text[at : at + KEY_CHARS] for at in range(len(text) - KEY_CHARS + 1)}
        for piece in pieces & by_key.keys():
            for position in by_key[piece]:
                if values[position] in text:
                    found[position] = True
        for position in self._short:
            if values[position] in text:
                found[position] = True
        return found
