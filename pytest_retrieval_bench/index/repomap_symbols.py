"""The RepoMap's symbol-reference edges, counted for the whole snapshot at once.

The bench scans each source or test file: every informative multi-part symbol key (defined by
at most `SYMBOL_KEY_FILES` files) is counted once per token of the file that is one of its parts,
the keys are ranked by that count (`Counter.most_common`: count descending, ties in the order
they were first counted), the first `4 * SYMBOL_REFS_PER_FILE` are kept, and a key all of whose
parts the file holds joins the file to the files defining it, at most `SYMBOL_REFS_PER_FILE` a
file. The bench iterates sets there; this module takes tokens and keys in sorted order, so
"first counted" is (the key's first token of the file in sorted order, then the key). The
counts of many files are taken at once on a (file, key) grid, with no sort of the occurrences
(see `_scan`).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from pytest_retrieval_bench.index.distinct import first_positions, lex_order, run_starts, sorted_distinct
from pytest_retrieval_bench.index.repomap_nodes import SymbolTable

SYMBOL_SCAN_MAX_FILES = 3_000
SYMBOL_REFS_PER_FILE = 80
SYMBOL_KEY_FILES = 8
KEPT_KEYS = 4 * SYMBOL_REFS_PER_FILE
"""Keys a file keeps of its ranked ones (`most_common(4 * max_symbol_refs_per_file)`)."""
SCAN_PAIRS = 1 << 16
"""(file, key) occurrences counted per step: bounds the scan's temporaries (a few MB, reused, where
fresh pages for larger ones cost more than the counting)."""
SCAN_CELLS = 1 << 18
"""(file, key) cells of the per-step count grid, likewise."""


def expand_ragged(offsets: np.ndarray, flat: np.ndarray, owners: np.ndarray, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, value) for every value of each item's list, items in order, values in list order."""
    lengths = offsets[items + 1] - offsets[items]
    total = int(lengths.sum())
    gather = np.repeat(offsets[items] - (np.cumsum(lengths) - lengths), lengths) + np.arange(total, dtype=np.int64)
    return np.repeat(owners, lengths), flat[gather]


def _within(groups: np.ndarray) -> np.ndarray:
    """Each element's position within its run of equal `groups` values (runs contiguous)."""
    if not len(groups):
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(run_starts(groups))
    return np.arange(len(groups), dtype=np.int64) - np.repeat(starts, np.diff(np.append(starts, len(groups))))


def symbol_pairs(paths: list[str], searchable: np.ndarray, table: SymbolTable, token_id: Callable[[list[str]], np.ndarray],
                 file_docs: np.ndarray, file_tokens: np.ndarray, vocabulary: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(referring node, defining node) for each symbol-reference edge in the bench's order, or None
    (no scan) past `SYMBOL_SCAN_MAX_FILES` source and test files.

    `searchable[node]`: a source or test node; `table` every node's informative symbols; `token_id`
    numbers tokens as `file_tokens` does; (`file_docs`, `file_tokens`) every node's distinct
    tokens, by node. Keys are numbered in sorted order (`table.keys`), so a key's number orders
    ties as its name would."""
    if int(searchable.sum()) > SYMBOL_SCAN_MAX_FILES:
        return None
    held = searchable[table.node_of_pair]
    nodes, symbols = table.node_of_pair[held], table.symbol_of_pair[held]  # by node, symbols ascending
    keys = table.key_ids[symbols]
    key_count, node_count = len(table.keys), len(paths)
    definer_pairs = sorted_distinct(keys * node_count + nodes)
    definer_keys, definers = np.divmod(definer_pairs, node_count)
    per_key = np.bincount(definer_keys, minlength=key_count)
    usable = table.scannable()[symbols] & (per_key[keys] <= SYMBOL_KEY_FILES)
    symbols, keys = symbols[usable], keys[usable]
    if not len(symbols):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # a key's parts are those of the last symbol naming it (a later one replaces an earlier one's)
    last = first_positions(keys[::-1])
    last_symbols = symbols[::-1][last]
    part_counts = np.zeros(key_count, dtype=np.int64)
    part_counts[keys[::-1][last]] = table.part_offsets[last_symbols + 1] - table.part_offsets[last_symbols]
    # a token names every key any of whose symbols has it as a part
    part_keys, parts = expand_ragged(table.part_offsets, table.part_ids, keys, symbols)
    token_pairs = sorted_distinct(parts * key_count + part_keys)
    present, token_ranks = np.unique(token_pairs // key_count, return_inverse=True)  # part tokens in sorted order
    token_keys = (token_pairs % key_count).astype(np.int32)
    key_offsets = np.zeros(len(present) + 1, dtype=np.int64)
    key_offsets[1:] = np.cumsum(np.bincount(token_ranks, minlength=len(present)))
    by_path = np.asarray(sorted(range(node_count), key=paths.__getitem__), dtype=np.int64)  # nodes in path order
    path_rank = np.empty(node_count, dtype=np.int64)
    path_rank[by_path] = np.arange(node_count, dtype=np.int64)
    definer_nodes = by_path[np.sort(definer_keys * node_count + path_rank[definers]) % node_count]  # by key, then path
    definer_offsets = np.zeros(key_count + 1, dtype=np.int64)
    definer_offsets[1:] = np.cumsum(per_key)
    rank = np.full(vocabulary, -1, dtype=np.int64)  # token id -> its place among the part tokens, sorted
    rank[token_id([table.part_names[part] for part in present.tolist()])] = np.arange(len(present), dtype=np.int64)

    ranks = rank[file_tokens]
    keep = (ranks >= 0) & searchable[file_docs]
    # each file's tokens in sorted order: (file, rank) pairs are distinct, so sorted as one key each
    docs, ranks = np.divmod(np.sort(file_docs[keep].astype(np.int64) * len(present) + ranks[keep]), len(present))
    per_pair = key_offsets[ranks + 1] - key_offsets[ranks]
    bounds = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1], [True])))  # where each file's pairs start, and the end
    reach = np.concatenate(([0], np.cumsum(per_pair)))[bounds]  # (file, key) occurrences before each file
    most = max(1, SCAN_CELLS // max(1, key_count))
    left: list[np.ndarray] = []
    right: list[np.ndarray] = []
    start = 0
    while start < len(bounds) - 1:  # whole files at a time, about SCAN_PAIRS occurrences and SCAN_CELLS cells each
        stop = int(np.searchsorted(reach, int(reach[start]) + SCAN_PAIRS, side="right")) - 1
        stop = min(max(stop, start + 1), start + most)
        referring, defining = _scan(docs[bounds[start] : bounds[stop]], ranks[bounds[start] : bounds[stop]], key_offsets, token_keys,
                                    part_counts, definer_offsets, definer_nodes, key_count, node_count)
        left.append(referring)
        right.append(defining)
        start = stop
    return np.concatenate([np.zeros(0, dtype=np.int64), *left]), np.concatenate([np.zeros(0, dtype=np.int64), *right])


def _scan(docs: np.ndarray, ranks: np.ndarray, key_offsets: np.ndarray, token_keys: np.ndarray, part_counts: np.ndarray,
          definer_offsets: np.ndarray, definer_nodes: np.ndarray, key_count: int, node_count: int) -> tuple[np.ndarray, np.ndarray]:
    """The edges of whole files' (file, part token) pairs, files ascending, tokens sorted within one.

    No sort of the occurrences: they come in counting order (file, token, key), so a (file, key)
    pair's first occurrence is where it was first counted, and its first occurrences, in order,
    are the pairs in `most_common`'s tie order. A pair is among a file's first `KEPT_KEYS` when
    its count is above the file's cut-off count, or equal to it and among the first few of that
    count; only the kept pairs of complete keys are then sorted, by (count descending, that order)."""
    starts = run_starts(docs)
    file_ids = docs[starts]
    per_pair = key_offsets[ranks + 1] - key_offsets[ranks]
    # each occurrence's cell (file in the step, key) in counting order: a file's tokens in order, a
    # token's keys in order; int32 throughout (a step's grid is below SCAN_CELLS cells or one file's keys)
    bases, cells = expand_ragged(key_offsets, token_keys, ((np.cumsum(starts) - 1) * key_count).astype(np.int32), ranks)
    cells += bases
    token_ranks = np.repeat(ranks.astype(np.int32), per_pair)
    grid = len(file_ids) * key_count
    counts = np.bincount(cells, minlength=grid)
    first = np.full(grid, len(key_offsets), dtype=np.int32)
    np.minimum.at(first, cells, token_ranks)
    firsts = np.flatnonzero(first[cells] == token_ranks)  # each pair once, in counting order
    cells = cells[firsts]
    counts, first = counts[cells], token_ranks[firsts]
    local, keys = np.divmod(cells, np.int32(key_count))
    levels = int(counts.max()) + 1
    at_least = np.cumsum(np.bincount(local * levels + counts, minlength=len(file_ids) * levels).reshape(-1, levels)[:, ::-1], axis=1)[:, ::-1]
    cut = (at_least >= KEPT_KEYS).sum(axis=1) - 1  # the count of a file's last kept pair (-1: it has fewer pairs, all kept)
    above = np.where(cut >= 0, at_least[np.arange(len(file_ids)), np.minimum(cut + 1, levels - 1)], 0)
    above[cut + 1 >= levels] = 0
    cut_of_pair = cut[local]
    places = np.cumsum(counts == cut_of_pair)  # pairs at their file's cut-off count so far
    before = np.concatenate(([0], places))[np.searchsorted(local, np.arange(len(file_ids)))]  # such pairs before each file's first
    # only complete keys make edges: of those at or above the cut-off count (all, where there is none), those
    # above it, and those at it among the first `KEPT_KEYS - above` of their file at that count
    held = np.flatnonzero((counts >= cut_of_pair) & (counts >= part_counts[keys]))
    local, keys, counts, first = local[held], keys[held], counts[held], first[held]
    kept = (counts > cut_of_pair[held]) | (places[held] - before[local] <= KEPT_KEYS - above[local])
    local, keys, counts, first = local[kept], keys[kept], counts[kept], first[kept]
    ranked = lex_order((local, len(file_ids)), (levels - 1 - counts, levels), (first, len(key_offsets)), (keys, key_count))  # (file, key) pairs are distinct
    return _references(file_ids[local[ranked]], keys[ranked], definer_offsets, definer_nodes, node_count)


def _references(files: np.ndarray, keys: np.ndarray, definer_offsets: np.ndarray, definer_nodes: np.ndarray,
                node_count: int) -> tuple[np.ndarray, np.ndarray]:
    """The edges of each file's kept keys, in rank order: their defining files in path order, each
    once, at most `SYMBOL_REFS_PER_FILE` a file."""
    referring, defining = expand_ragged(definer_offsets, definer_nodes, files, keys)  # each key's files in path order
    keep = referring != defining
    referring, defining = referring[keep], defining[keep]
    firsts = first_positions(referring * node_count + defining)  # a file joined once to each
    seen_first = np.zeros(len(referring), dtype=bool)
    seen_first[firsts] = True
    referring, defining = referring[seen_first], defining[seen_first]
    capped = _within(referring) < SYMBOL_REFS_PER_FILE
    return referring[capped], defining[capped]
