"""Term ids for one snapshot's build: every token becomes an int32 at C speed.

A `Counter` per document costs a Python object per distinct term per document; an id per token,
assigned by a dictionary whose missing-key factory is a counter, costs one C-level lookup, so a
whole text turns into a numpy array with no Python loop. Ids are in first-seen order; postings
need byte order, which `byte_order` gives once per vocabulary.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import count, islice

import numpy as np

NO_IDS = np.zeros(0, dtype=np.int32)
NO_IDS.flags.writeable = False


def _no_new_terms() -> int:
    raise RuntimeError("this vocabulary no longer numbers new terms")


class TermIds:
    """term -> id, ids 0, 1, 2, ... in the order terms are first met; `terms[id]` is the term.

    Tokens arrive as ASCII bytes (`word_run_bytes`, `bench_tokens_of_words`) and are looked up as
    they are. A dictionary keeps its keys in insertion order, which is id order, so `terms` is
    read off the keys when asked for, all new ones decoded by one join, rather than after each lookup."""

    def __init__(self) -> None:
        self._ids: defaultdict[bytes, int] = defaultdict(count().__next__)
        self._terms: list[str] = []
        self._byte_order: tuple[list[str], np.ndarray] | None = None

    def __len__(self) -> int:
        return max(len(self._ids), len(self._terms))

    @property
    def terms(self) -> list[str]:
        """Every term, by id, decoded from the dictionary's keys once each."""
        self._decode_new_keys()
        return self._terms

    def _decode_new_keys(self) -> None:
        missing = len(self._ids) - len(self._terms)
        if missing > 0:  # the newest keys, read from the end (skipping the older ones would cost a step each)
            newest = list(islice(reversed(self._ids), missing))
            newest.reverse()
            self._terms.extend(b"\0".join(newest).decode("ascii").split("\0"))

    def of(self, tokens: list[bytes]) -> np.ndarray:
        """The ids of `tokens`, new terms numbered as they come."""
        if not tokens:
            return NO_IDS
        known = len(self._ids)
        ids = np.fromiter(map(self._ids.__getitem__, tokens), dtype=np.int32, count=len(tokens))
        if len(self._ids) > known:
            self._byte_order = None
        return ids

    def forget_ids(self) -> None:
        """Drop the term -> id dictionary once no new text will be numbered (it costs more than the terms)."""
        self._decode_new_keys()  # every term decoded while the keys are still there
        self._ids = defaultdict(_no_new_terms)

    def byte_order(self) -> tuple[list[str], np.ndarray]:
        """The terms in UTF-8 byte order (code point order is the same order) and each id's rank in it."""
        if self._byte_order is None:
            terms = self.terms
            order = sorted(range(len(terms)), key=terms.__getitem__)
            rank = np.empty(len(terms), dtype=np.int64)
            rank[np.asarray(order, dtype=np.int64)] = np.arange(len(terms), dtype=np.int64)
            self._byte_order = [terms[position] for position in order], rank
        return self._byte_order
