"""The bench's aider-style repository map as arrays: file nodes, their tokens, and the file graph.

Built once per snapshot (and cached on disk) from the chunk rows exactly as the bench's
`repomap_eval.build_repomap_index` builds it: one node per distinct path in row order, the text
of its first non-empty `kind: "file"` row, its informative symbols, and weighted undirected
edges for imports (1.5), symbol references (1.0) and source-test name pairs (2.0). A tree has
no chunk rows; it stands for one `file` row per text file in path order, without symbols, so
it has no symbol-reference edges.

Where the bench iterates a Python `set` (token and symbol-key order in the symbol-reference
scan, whose caps then keep the first keys), this module iterates in sorted order instead, so
the map does not depend on the interpreter's string-hash seed. `REPOMAP_VERSION` keys the cache.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

from pytest_retrieval_bench.index.pair_counts import Batch, postings_of_batches
from pytest_retrieval_bench.index.path_kinds import file_kind
from pytest_retrieval_bench.index.postings import Postings
from pytest_retrieval_bench.index.repomap_edges import EdgeCalls, source_test_keys, source_test_pairs
from pytest_retrieval_bench.index.repomap_imports import import_pairs, import_specs, resolve_import
from pytest_retrieval_bench.index.repomap_symbols import symbol_pairs
from pytest_retrieval_bench.index.term_ids import TermIds
from pytest_retrieval_bench.index.tokens import bench_tokens, word_run_bytes
from pytest_retrieval_bench.index.word_tokens import WordTokens

__all__ = ["REPOMAP_VERSION", "KIND_CODES", "RepoMapIndex", "build_repomap", "idf", "import_specs", "informative_key",
           "resolve_import", "source_test_keys"]

REPOMAP_VERSION = "arb-repomap-1"
KIND_CODES = {"other": 0, "source": 1, "test": 2}
CONTENT_CHARS = 20_000
IMPORT_WEIGHT, SYMBOL_WEIGHT, TEST_PAIR_WEIGHT = 1.5, 1.0, 2.0
PATH_CLASS, SYMBOL_CLASS, CONTENT_CLASS = 3, 2, 1
"""A node's token postings count its token's class: path tokens weigh 3x, symbol tokens 2x."""

GENERIC_SYMBOLS = frozenset(
    "add app args build call case check class close config context data default delete error event file find get "
    "handle helper init item list load main make mock model name node option options parse path read render request "
    "response result run save server set state string test tests type update value write".split()
)


@dataclass
class RepoMapIndex:
    """Everything a RepoMap query reads, as arrays (see `arms/repomap.py` for the query)."""

    paths: list[str]
    kinds: np.ndarray  # KIND_CODES per node
    token_sizes: np.ndarray  # distinct tokens per node (path, symbol and content tokens)
    postings: Postings  # token -> nodes holding it, counts = the token's class in that node
    edge_offsets: np.ndarray  # CSR over nodes in order: node i's edges are [offsets[i], offsets[i+1])
    edge_targets: np.ndarray
    edge_weights: np.ndarray
    stats: dict[str, int]

    def neighbors(self, node: int) -> np.ndarray:
        return self.edge_targets[self.edge_offsets[node] : self.edge_offsets[node + 1]]


# -- nodes -------------------------------------------------------------------------------------


def informative_key(value: str) -> str:
    """The bench's `normalize_identifier`: the joined bench tokens, unless short, generic or digits."""
    return _key_of_tokens(bench_tokens(value))


def _key_of_tokens(tokens: list[str]) -> str:
    compact = "".join(tokens)
    if len(compact) < 4 or compact in GENERIC_SYMBOLS or compact.isdigit():
        return ""
    return compact


class _Symbols:
    """Each distinct symbol's bench tokens, key and parts, computed once (symbols repeat across rows and files)."""

    def __init__(self) -> None:
        self._tokens: dict[str, list[str]] = {}
        self._keys: dict[str, str] = {}
        self._parts: dict[str, set[str]] = {}

    def tokens(self, symbol: str) -> list[str]:
        found = self._tokens.get(symbol)
        if found is None:
            found = self._tokens[symbol] = bench_tokens(symbol)
        return found

    def key(self, symbol: str) -> str:
        found = self._keys.get(symbol)
        if found is None:
            found = self._keys[symbol] = _key_of_tokens(self.tokens(symbol))
        return found

    def parts(self, symbol: str) -> set[str]:
        """The bench's symbol parts: its tokens of three characters or more that are not generic."""
        found = self._parts.get(symbol)
        if found is None:
            found = self._parts[symbol] = {token for token in self.tokens(symbol) if len(token) >= 3 and token not in GENERIC_SYMBOLS}
        return found


def _nodes(rows: Iterable[dict[str, Any]], symbols: _Symbols) -> tuple[list[str], list[str], list[set[str]]]:
    """(paths in row order, the text of each one's first non-empty file row, its informative symbols)."""
    positions: dict[str, int] = {}
    texts: list[str] = []
    symbol_sets: list[set[str]] = []
    for row in rows:
        path = str(row.get("path") or "")
        if not path:
            continue
        position = positions.get(path)
        if position is None:
            position = positions[path] = len(texts)
            texts.append("")
            symbol_sets.append(set())
        if not texts[position] and row.get("kind") == "file":
            texts[position] = str(row.get("text") or "")
        symbol = str(row.get("symbol") or "").strip()
        if symbol and symbols.key(symbol):
            symbol_sets[position].add(symbol)
    return list(positions), texts, symbol_sets


GROUP_RUNS = 1 << 16
"""Word runs numbered per `TermIds.of` call (nodes whole): bounds the run strings held at once."""


def _best_class(nodes: np.ndarray, ids: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (node, id) pairs, nodes ascending, ids ascending within one, each with its highest class."""
    keys = (nodes.astype(np.int64) << 33) | (ids.astype(np.int64) << 2) | (PATH_CLASS - classes.astype(np.int64))
    keys.sort()  # a pair's highest class first
    pairs = keys >> 2
    first = np.concatenate(([True], pairs[1:] != pairs[:-1])) if len(pairs) else np.zeros(0, dtype=bool)
    pairs = pairs[first]
    return (pairs >> 31).astype(np.int32), (pairs & ((1 << 31) - 1)).astype(np.int32), (PATH_CLASS - (keys[first] & 3)).astype(np.int8)


def _node_tokens(paths: list[str], texts: list[str], symbols: list[list[str]], progress: Callable[[int, int | None], None] | None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, TermIds]:
    """Every node's distinct bench tokens with their class (path 3, else symbol 2, else content 1),
    as (nodes ascending, token ids, classes), and the token numbering.

    A bench token never crosses a character outside `[A-Za-z0-9_]`, so a text's bench tokens are
    those of its word runs: each node's path, symbols and first `CONTENT_CHARS` characters are
    read once into word-run ids (a group of nodes per lookup), a node's distinct runs kept with
    their highest class, and each distinct run split into bench tokens once."""
    words, bench = TermIds(), TermIds()
    to_bench = WordTokens(words, bench)
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    runs: list[bytes] = []
    owners: list[int] = []
    sizes: list[int] = []
    classes: list[int] = []

    def flush() -> None:
        ids = words.of(runs)
        counts = np.asarray(sizes, dtype=np.int64)
        found.append(_best_class(np.repeat(np.asarray(owners, dtype=np.int32), counts), ids,
                                 np.repeat(np.asarray(classes, dtype=np.int8), counts)))
        runs.clear(), owners.clear(), sizes.clear(), classes.clear()

    for node, (path, text, node_symbols) in enumerate(zip(paths, texts, symbols)):
        if progress is not None:
            progress(node + 1, len(paths))
        parts = (word_run_bytes(path), [run for symbol in node_symbols for run in word_run_bytes(symbol)],
                 word_run_bytes(text[:CONTENT_CHARS]))
        for part, weight in zip(parts, (PATH_CLASS, SYMBOL_CLASS, CONTENT_CLASS)):
            runs.extend(part)
            owners.append(node)
            sizes.append(len(part))
            classes.append(weight)
        if len(runs) >= GROUP_RUNS:
            flush()
    flush()
    node_words = [np.concatenate([np.zeros(0, dtype=dtype), *column]) for dtype, column in zip((np.int32, np.int32, np.int8), zip(*found))]
    node_docs, tokens, weights = to_bench.expand_pairs(*node_words)
    assert weights is not None
    return (*_best_class(node_docs, tokens, weights), bench)


# -- the index ---------------------------------------------------------------------------------


def build_repomap(rows: Iterable[dict[str, Any]], progress: Callable[[int, int | None], None] | None = None) -> RepoMapIndex:
    """The map of a snapshot's chunk rows (or of `file_chunks(...)` for a tree); `progress`
    hears each file's tokens counted, the file graph's edges come after."""
    symbols = _Symbols()
    paths, texts, symbol_sets = _nodes(rows, symbols)
    sorted_symbols = [sorted(found) for found in symbol_sets]
    node_of, token_of, classes, bench = _node_tokens(paths, texts, sorted_symbols, progress)
    postings, distinct = postings_of_batches([Batch.count(node_of, token_of, classes)], len(paths), bench)
    kind_names = [file_kind(path) for path in paths]
    kinds = np.array([KIND_CODES[kind] for kind in kind_names], dtype=np.uint8)
    calls = EdgeCalls()
    calls.add(*import_pairs(paths, texts), IMPORT_WEIGHT)
    searchable = [node for node, kind in enumerate(kind_names) if kind != "other"]
    found = symbol_pairs(paths, searchable, sorted_symbols, symbols.key, symbols.parts,
                         lambda tokens: bench.of([token.encode("ascii") for token in tokens]), node_of, token_of, len(bench))
    if found is not None:
        calls.add(*found, SYMBOL_WEIGHT)
    calls.add(*source_test_pairs(paths, kind_names), TEST_PAIR_WEIGHT)
    offsets, targets, weights = calls.csr(len(paths))
    stats = {
        "file_count": len(paths),
        "symbol_count": sum(map(len, symbol_sets)),
        "edge_count": int(offsets[-1]),
        "source_count": int((kinds == KIND_CODES["source"]).sum()),
        "test_count": int((kinds == KIND_CODES["test"]).sum()),
        "symbol_reference_scan_skipped": int(found is None),
    }
    return RepoMapIndex(paths=paths, kinds=kinds, token_sizes=distinct.astype(np.int64), postings=postings, edge_offsets=offsets,
                        edge_targets=targets, edge_weights=weights, stats=stats)


def idf(total_nodes: int, frequency: int) -> float:
    """The bench's smoothed idf over nodes' token sets."""
    total = max(1, total_nodes)
    return math.log((total + 1) / (frequency + 1)) + 1.0
