"""The RepoMap's file nodes and their informative symbols, as arrays over the whole snapshot.

The bench makes one node per distinct path in row order, with the text of its first non-empty
`kind: "file"` row and the set of its informative symbols (`normalize_identifier` not empty).
Here each distinct symbol is looked at once: its key (the bench tokens joined, which are its
ASCII letters and digits lowercased, so one `bytes.translate`), its bench tokens and parts (all
symbols together, `bench_tokens_of_words`), and a node's symbols are (node, symbol number)
pairs with symbols numbered in sorted order, which is the order the map iterates them in.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, repeat
from typing import Any, Iterable

import numpy as np

from pytest_retrieval_bench.index.distinct import sorted_distinct
from pytest_retrieval_bench.index.word_tokens import bench_tokens_of_joined

GENERIC_SYMBOLS = frozenset(
    "add app args build call case check class close config context data default delete error event file find get "
    "handle helper init item list load main make mock model name node option options parse path read render request "
    "response result run save server set state string test tests type update value write".split()
)
_GENERIC_BYTES = frozenset(word.encode("ascii") for word in GENERIC_SYMBOLS)
_ALNUM = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_NOT_ALNUM = bytes(byte for byte in range(256) if byte not in _ALNUM)
_NOT_ALNUM_OR_NUL = _NOT_ALNUM.replace(b"\0", b"")
_AS_WORD_RUN = bytes(byte if byte in _ALNUM else 0x5F for byte in range(256))
"""Every byte but an ASCII letter or digit made an underscore: a bench token never crosses one,
so the text's bench tokens are those of the word run it becomes."""
_AS_WORD_RUNS = _AS_WORD_RUN[:1].replace(b"_", b"\0") + _AS_WORD_RUN[1:]
"""The same, NULs (which join symbols) kept."""


def informative_key(value: str) -> str:
    """The bench's `normalize_identifier`: the joined bench tokens, unless short, generic or digits."""
    compact = value.encode("utf-8", errors="surrogatepass").translate(None, _NOT_ALNUM).lower().decode("ascii")
    if len(compact) < 4 or compact in GENERIC_SYMBOLS or compact.isdigit():
        return ""
    return compact


@dataclass
class SymbolTable:
    """A snapshot's distinct informative symbols, in sorted order, and which node holds which."""

    names: list[str]
    key_ids: np.ndarray  # per symbol: its key's number in `keys`
    keys: list[str]  # the distinct keys, sorted
    part_offsets: np.ndarray  # per symbol: its parts are part_ids[part_offsets[s]:part_offsets[s + 1]]
    part_ids: np.ndarray  # numbers in `part_names`
    part_names: list[str]  # the distinct parts, sorted
    node_of_pair: np.ndarray  # (node, symbol) pairs, each once, by node, symbols ascending within one
    symbol_of_pair: np.ndarray

    def scannable(self) -> np.ndarray:
        """Per symbol: whether its parts make a reference (some, and not one short part only)."""
        counts = np.diff(self.part_offsets)
        single = np.flatnonzero(counts == 1)
        long_single = np.zeros(len(self.names), dtype=bool)
        lengths = np.array([len(self.part_names[part]) for part in self.part_ids[self.part_offsets[single]].tolist()], dtype=np.int64)
        long_single[single[lengths >= 8]] = True
        return (counts > 1) | long_single


class NodeReader:
    """The map's nodes, taken a row at a time (a chunk file's read can take them as it goes, so the
    map needs no second pass over the rows): one node per distinct path in row order, the text of
    its first non-empty file row, and the (node, symbol) of each row with a symbol."""

    def __init__(self) -> None:
        self.positions: dict[str, int] = {}
        self.texts: list[str] = []
        self.owners: list[int] = []
        self.symbols: list[str] = []

    def add(self, row: dict[str, Any]) -> None:
        path = str(row.get("path") or "")
        if not path:
            return
        position = self.positions.get(path)
        if position is None:
            position = self.positions[path] = len(self.texts)
            self.texts.append("")
        if not self.texts[position] and row.get("kind") == "file":
            self.texts[position] = str(row.get("text") or "")
        symbol = row.get("symbol")
        if symbol:
            symbol = str(symbol).strip()
            if symbol:
                self.owners.append(position)
                self.symbols.append(symbol)

    def nodes(self) -> tuple[list[str], list[str], SymbolTable]:
        """(paths in row order, the text of each one's first non-empty file row, their symbols)."""
        return list(self.positions), self.texts, _table(self.owners, self.symbols)


def read_nodes(rows: Iterable[dict[str, Any]]) -> tuple[list[str], list[str], SymbolTable]:
    """`NodeReader.nodes` of the rows."""
    reader = NodeReader()
    for row in rows:
        reader.add(row)
    return reader.nodes()


def _table(owners: list[int], symbols: list[str]) -> SymbolTable:
    distinct = list(dict.fromkeys(symbols))
    joined = "\0".join(distinct).encode("utf-8", errors="surrogatepass")
    joinable = joined.count(b"\0") == max(0, len(distinct) - 1)  # no symbol holds a NUL
    if not joinable:
        keys_of = [informative_key(symbol).encode("ascii") for symbol in distinct]
    else:
        keys_of = [key if len(key) >= 4 and key not in _GENERIC_BYTES and not key.isdigit() else b""
                   for key in joined.translate(None, _NOT_ALNUM_OR_NUL).lower().split(b"\0")]
    names = sorted(compress(distinct, keys_of))
    number = {symbol: position for position, symbol in enumerate(names)}
    key_of = dict(zip(distinct, keys_of))
    keys = sorted(set(map(key_of.__getitem__, names)))
    key_number = {key: position for position, key in enumerate(keys)}
    key_ids = np.array([key_number[key_of[symbol]] for symbol in names], dtype=np.int64)

    as_runs = ("\0".join(names).encode("utf-8", errors="surrogatepass").translate(_AS_WORD_RUNS) if joinable else
               b"\0".join(name.encode("utf-8", errors="surrogatepass").translate(_AS_WORD_RUN) for name in names))
    counts, tokens = bench_tokens_of_joined(as_runs, len(names)) if names else (np.zeros(0, dtype=np.int64), [])
    part_names = sorted(token for token in set(tokens) - _GENERIC_BYTES if len(token) >= 3)
    part_number = {part: position for position, part in enumerate(part_names)}
    found = np.fromiter(map(part_number.get, tokens, repeat(-1)), dtype=np.int64, count=len(tokens))
    owner = np.repeat(np.arange(len(names), dtype=np.int64), counts)
    parts = sorted_distinct(owner[found >= 0] * max(1, len(part_names)) + found[found >= 0])  # a symbol's parts once each, ascending
    part_owners, part_ids = np.divmod(parts, max(1, len(part_names)))
    part_offsets = np.zeros(len(names) + 1, dtype=np.int64)
    part_offsets[1:] = np.cumsum(np.bincount(part_owners, minlength=len(names)))

    chosen = np.fromiter(map(number.get, symbols, repeat(-1)), dtype=np.int64, count=len(symbols))
    held = chosen >= 0
    pairs = sorted_distinct(np.asarray(owners, dtype=np.int64)[held] * max(1, len(names)) + chosen[held])
    node_of_pair, symbol_of_pair = np.divmod(pairs, max(1, len(names)))
    return SymbolTable(names=names, key_ids=key_ids, keys=[key.decode("ascii") for key in keys], part_offsets=part_offsets,
                       part_ids=part_ids, part_names=[part.decode("ascii") for part in part_names], node_of_pair=node_of_pair,
                       symbol_of_pair=symbol_of_pair)
