"""Which of many short strings (a snapshot's paths or symbols) occur in one text (a query).

`arb-lexical` adds a bonus to every chunk whose path, basename or symbol is a substring of the
query; a release has tens of thousands of distinct symbols, and a Python-level `in` test of
each against the query cost more than the rest of the query. A string can occur only where
its first `KEY_CHARS` characters do, so a query first looks each string's first characters up
in the set of its own `KEY_CHARS`-character pieces (a C-level pass), and runs the `in` test only
on those found and on the strings shorter than that. Building costs one C-level pass too, so
a snapshot asked once costs about what the plain tests cost, and one asked often much less.
"""

from __future__ import annotations

from itertools import chain, compress
from operator import itemgetter

import numpy as np

KEY_CHARS = 4


class Substrings:
    """The strings `values`, ready to be tested against any number of texts."""

    def __init__(self, values: list[str]):
        self.values = values
        self._keys = list(map(itemgetter(slice(0, KEY_CHARS)), values))
        lengths = list(map(len, values))
        self._short = [position for position in compress(range(len(values)), map(KEY_CHARS.__gt__, lengths)) if lengths[position]]

    def found_in(self, text: str) -> np.ndarray:
        """For each value: non-empty and a substring of `text` (a boolean array)."""
        found = np.zeros(len(self.values), dtype=bool)
        values = self.values
        pieces = {text[at : at + KEY_CHARS] for at in range(len(text) - KEY_CHARS + 1)}
        for position in chain(compress(range(len(values)), map(pieces.__contains__, self._keys)), self._short):
            if values[position] in text:
                found[position] = True
        return found
