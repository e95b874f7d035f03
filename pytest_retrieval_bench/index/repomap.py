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
from itertools import chain
from typing import Any, Callable, Iterable

import numpy as np

from pytest_retrieval_bench.index.distinct import run_starts
from pytest_retrieval_bench.index.pair_counts import BATCH_TOKENS, Batch, postings_of_batches
from pytest_retrieval_bench.index.path_kinds import file_kind
from pytest_retrieval_bench.index.postings import Postings
from pytest_retrieval_bench.index.repomap_content import CONTENT_CHARS, MapContent
from pytest_retrieval_bench.index.repomap_edges import EdgeCalls, source_test_keys, source_test_pairs
from pytest_retrieval_bench.index.repomap_imports import import_pairs, import_specs, resolve_import
from pytest_retrieval_bench.index.repomap_nodes import GENERIC_SYMBOLS, NodeReader, SymbolTable, informative_key, read_nodes
from pytest_retrieval_bench.index.repomap_symbols import expand_ragged, symbol_pairs
from pytest_retrieval_bench.index.term_ids import TermIds
from pytest_retrieval_bench.index.tokens import word_run_bytes
from pytest_retrieval_bench.index.word_tokens import WordTokens

__all__ = ["REPOMAP_VERSION", "KIND_CODES", "GENERIC_SYMBOLS", "RepoMapIndex", "build_repomap", "idf", "import_specs", "informative_key",
           "resolve_import", "source_test_keys"]

REPOMAP_VERSION = "arb-repomap-1"
KIND_CODES = {"other": 0, "source": 1, "test": 2}
IMPORT_WEIGHT, SYMBOL_WEIGHT, TEST_PAIR_WEIGHT = 1.5, 1.0, 2.0
PATH_CLASS, SYMBOL_CLASS, CONTENT_CLASS = 3, 2, 1
"""A node's token postings count its token's class: path tokens weigh 3x, symbol tokens 2x."""

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


# -- node tokens -------------------------------------------------------------------------------


GROUP_RUNS = 1 << 16
"""Word runs numbered per `TermIds.of` call (nodes whole): bounds the run strings held at once."""


def _best_class(nodes: np.ndarray, ids: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (node, id) pairs, nodes ascending, ids ascending within one, each with its highest class."""
    keys = (nodes.astype(np.int64) << 33) | (ids.astype(np.int64) << 2) | (PATH_CLASS - classes.astype(np.int64))
    keys.sort()  # a pair's highest class first
    pairs = keys >> 2
    first = run_starts(pairs)
    pairs = pairs[first]
    return (pairs >> 31).astype(np.int32), (pairs & ((1 << 31) - 1)).astype(np.int32), (PATH_CLASS - (keys[first] & 3)).astype(np.int8)


def _node_tokens(paths: list[str], texts: list[str], table: SymbolTable, progress: Callable[[int, int | None], None] | None,
                 keep: MapContent | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, TermIds]:
    """Every node's distinct bench tokens with their class (path 3, else symbol 2, else content 1),
    as (nodes ascending, token ids, classes), and the token numbering.

    A bench token never crosses a character outside `[A-Za-z0-9_]`, so a text's bench tokens are
    those of its word runs: each node's path and first `CONTENT_CHARS` characters, and each
    distinct symbol, are read once into word-run ids (a group of nodes per lookup), a node's
    distinct runs kept with their highest class, and each distinct run split into bench tokens once."""
    words, bench = TermIds(), TermIds()
    to_bench = WordTokens(words, bench)
    symbol_runs = [word_run_bytes(name) for name in table.names]
    run_offsets = np.zeros(len(symbol_runs) + 1, dtype=np.int64)
    run_offsets[1:] = np.cumsum([len(runs) for runs in symbol_runs])
    run_ids = words.of(list(chain.from_iterable(symbol_runs)))
    symbol_nodes, symbol_words = expand_ragged(run_offsets, run_ids, table.node_of_pair, table.symbol_of_pair)
    found = [_best_class(symbol_nodes, symbol_words, np.full(len(symbol_words), SYMBOL_CLASS, dtype=np.int8))]
    runs: list[bytes] = []
    owners: list[int] = []
    sizes: list[int] = []
    classes: list[int] = []
    whole: list[tuple[str, str, int, int]] = []  # (path, text, first run, runs) of each text read whole, for `keep`

    def flush() -> None:
        ids = words.of(runs)
        counts = np.asarray(sizes, dtype=np.int64)
        found.append(_best_class(np.repeat(np.asarray(owners, dtype=np.int32), counts), ids,
                                 np.repeat(np.asarray(classes, dtype=np.int8), counts)))
        if keep is not None:
            keep.read.update((path, (text, ids[first : first + size])) for path, text, first, size in whole)
        runs.clear(), owners.clear(), sizes.clear(), classes.clear(), whole.clear()

    for node, (path, text) in enumerate(zip(paths, texts)):
        if progress is not None:
            progress(node + 1, len(paths))
        for part, weight in ((word_run_bytes(path), PATH_CLASS), (word_run_bytes(text[:CONTENT_CHARS]), CONTENT_CLASS)):
            if keep is not None and weight == CONTENT_CLASS and len(text) <= CONTENT_CHARS:
                whole.append((path, text, len(runs), len(part)))
            runs.extend(part)
            owners.append(node)
            sizes.append(len(part))
            classes.append(weight)
        if len(runs) >= GROUP_RUNS:
            flush()
    flush()
    if keep is not None:
        keep.terms = words.terms
    return (*_bench_classes(to_bench, found, len(paths)), bench)


EXPAND_PAIRS = 1 << 18
"""(node, word run) pairs split into bench tokens at once: bounds the split's temporaries (a
large snapshot's pairs, split whole and sorted as int64 keys, took over 100 MB)."""
PAIR_TYPES = (np.int32, np.int32, np.int8)


def _joined(parts: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """(nodes, ids, classes) triples joined column by column (three empty columns when there are none)."""
    columns = list(zip(*parts)) or [(), (), ()]
    return [np.concatenate([np.zeros(0, dtype=dtype), *column]) for dtype, column in zip(PAIR_TYPES, columns)]


def _bench_classes(to_bench: WordTokens, found: list[tuple[np.ndarray, np.ndarray, np.ndarray]], node_count: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_best_class` of the bench tokens of every (node, word run, class) triple of `found` (whose
    parts each hold nodes ascending), a range of nodes of about `EXPAND_PAIRS` triples at a time:
    ranges in node order, so the result is that of the whole at once."""
    reach = np.zeros(node_count + 1, dtype=np.int64)  # triples of the nodes before each node
    for nodes, _, _ in found:
        reach[1:] += np.bincount(nodes, minlength=node_count)
    np.cumsum(reach, out=reach)
    cuts = [0]
    while cuts[-1] < node_count:
        reached = int(np.searchsorted(reach, int(reach[cuts[-1]]) + EXPAND_PAIRS, side="right")) - 1
        cuts.append(min(node_count, max(reached, cuts[-1] + 1)))
    ranges: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for first, end in zip(cuts, cuts[1:]):
        pieces = []
        for nodes, ids, classes in found:
            low, high = np.searchsorted(nodes, (first, end)).tolist()
            pieces.append((nodes[low:high], ids[low:high], classes[low:high]))
        docs, tokens, weights = to_bench.expand_pairs(*_joined(pieces))
        assert weights is not None
        ranges.append(_best_class(docs, tokens, weights))
    return tuple(_joined(ranges))  # type: ignore[return-value]


def _node_batches(node_of: np.ndarray, token_of: np.ndarray, classes: np.ndarray) -> list[Batch]:
    """The distinct (node, token, class) triples, nodes ascending, as batches of `BATCH_TOKENS`
    (one batch of a large snapshot's took tens of MB to count); the pairs being distinct, a node's
    may span two batches."""
    return [Batch.count(node_of[start : start + BATCH_TOKENS], token_of[start : start + BATCH_TOKENS], classes[start : start + BATCH_TOKENS])
            for start in range(0, max(len(node_of), 1), BATCH_TOKENS)]


# -- the index ---------------------------------------------------------------------------------


def build_repomap(rows: Iterable[dict[str, Any]] | NodeReader, progress: Callable[[int, int | None], None] | None = None,
                  keep: MapContent | None = None) -> RepoMapIndex:
    """The map of a snapshot's chunk rows (or of `file_chunks(...)` for a tree), or of the nodes
    a read took from them as it went; `progress` hears each file's tokens counted, the file
    graph's edges come after. `keep` receives the word runs of each text it read whole."""
    paths, texts, table = rows.nodes() if isinstance(rows, NodeReader) else read_nodes(rows)
    node_of, token_of, classes, bench = _node_tokens(paths, texts, table, progress, keep)
    postings, distinct = postings_of_batches(_node_batches(node_of, token_of, classes), len(paths), bench)
    kind_names = [file_kind(path) for path in paths]
    kinds = np.array([KIND_CODES[kind] for kind in kind_names], dtype=np.uint8)
    calls = EdgeCalls()
    calls.add(*import_pairs(paths, texts), IMPORT_WEIGHT)
    searchable = kinds != KIND_CODES["other"]
    found = symbol_pairs(paths, searchable, table, lambda tokens: bench.of([token.encode("ascii") for token in tokens]), node_of, token_of,
                         len(bench))
    if found is not None:
        calls.add(*found, SYMBOL_WEIGHT)
    calls.add(*source_test_pairs(paths, kind_names), TEST_PAIR_WEIGHT)
    offsets, targets, weights = calls.csr(len(paths))
    stats = {
        "file_count": len(paths),
        "symbol_count": len(table.node_of_pair),
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
