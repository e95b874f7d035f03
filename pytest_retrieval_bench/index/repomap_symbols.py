"""The RepoMap's symbol-reference edges, counted for the whole snapshot at once.

The bench scans each source or test file: every informative multi-part symbol key (defined by
at most `SYMBOL_KEY_FILES` files) is counted once per token of the file that is one of its parts,
the keys are ranked by that count (`Counter.most_common`: count descending, ties in the order
they were first counted), the first `4 * SYMBOL_REFS_PER_FILE` are kept, and a key all of whose
parts the file holds joins the file to the files defining it, at most `SYMBOL_REFS_PER_FILE` a
file. The bench iterates sets there; this module takes tokens and keys in sorted order, so
"first counted" is (the key's first token of the file in sorted order, then the key), and
every file's counts are one `np.unique` over (file, key) for all files together.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from pytest_retrieval_bench.index.repomap_nodes import SymbolTable

SYMBOL_SCAN_MAX_FILES = 3_000
SYMBOL_REFS_PER_FILE = 80
SYMBOL_KEY_FILES = 8
PACKED_BITS = 62
"""The widest (file, count, token, key) key packed into one int64 to sort; wider ones are lexsorted."""
SCAN_PAIRS = 1 << 18
"""(file, key) occurrences counted per step: bounds the scan's temporaries (a few MB, reused, where
fresh pages for larger ones cost more than the sorting)."""


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
    starts = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1])))
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
    definer_pairs = np.unique(keys * node_count + nodes)
    definer_keys, definers = np.divmod(definer_pairs, node_count)
    per_key = np.bincount(definer_keys, minlength=key_count)
    usable = table.scannable()[symbols] & (per_key[keys] <= SYMBOL_KEY_FILES)
    symbols, keys = symbols[usable], keys[usable]
    if not len(symbols):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # a key's parts are those of the last symbol naming it (a later one replaces an earlier one's)
    _, last = np.unique(keys[::-1], return_index=True)
    last_symbols = symbols[::-1][last]
    part_counts = np.zeros(key_count, dtype=np.int64)
    part_counts[keys[::-1][last]] = table.part_offsets[last_symbols + 1] - table.part_offsets[last_symbols]
    # a token names every key any of whose symbols has it as a part
    part_keys, parts = expand_ragged(table.part_offsets, table.part_ids, keys, symbols)
    token_pairs = np.unique(parts * key_count + part_keys)
    present, token_ranks = np.unique(token_pairs // key_count, return_inverse=True)  # part tokens in sorted order
    token_keys = token_pairs % key_count
    key_offsets = np.zeros(len(present) + 1, dtype=np.int64)
    key_offsets[1:] = np.cumsum(np.bincount(token_ranks, minlength=len(present)))
    path_rank = np.empty(node_count, dtype=np.int64)
    path_rank[np.asarray(sorted(range(node_count), key=paths.__getitem__), dtype=np.int64)] = np.arange(node_count, dtype=np.int64)
    by_path = np.lexsort((path_rank[definers], definer_keys))
    definer_nodes = definers[by_path]
    definer_offsets = np.zeros(key_count + 1, dtype=np.int64)
    definer_offsets[1:] = np.cumsum(per_key)
    rank = np.full(vocabulary, -1, dtype=np.int64)  # token id -> its place among the part tokens, sorted
    rank[token_id([table.part_names[part] for part in present.tolist()])] = np.arange(len(present), dtype=np.int64)

    ranks = rank[file_tokens]
    keep = (ranks >= 0) & searchable[file_docs]
    docs, ranks = file_docs[keep].astype(np.int64), ranks[keep]
    order = np.lexsort((ranks, docs))  # each file's tokens in sorted order
    docs, ranks = docs[order], ranks[order]
    per_pair = key_offsets[ranks + 1] - key_offsets[ranks]
    left: list[np.ndarray] = []
    right: list[np.ndarray] = []
    reach = np.cumsum(per_pair)
    start = 0
    while start < len(docs):  # whole files at a time, about SCAN_PAIRS (file, key) occurrences each
        stop = int(np.searchsorted(reach, (int(reach[start - 1]) if start else 0) + SCAN_PAIRS, side="right"))
        stop = max(stop, start + 1)
        stop = int(np.searchsorted(docs, docs[stop - 1], side="right"))
        referring, defining = _scan(docs[start:stop], ranks[start:stop], key_offsets, token_keys, part_counts,
                                    definer_offsets, definer_nodes, key_count, node_count)
        left.append(referring)
        right.append(defining)
        start = stop
    return np.concatenate([np.zeros(0, dtype=np.int64), *left]), np.concatenate([np.zeros(0, dtype=np.int64), *right])


def _scan(docs: np.ndarray, ranks: np.ndarray, key_offsets: np.ndarray, token_keys: np.ndarray, part_counts: np.ndarray,
          definer_offsets: np.ndarray, definer_nodes: np.ndarray, key_count: int, node_count: int) -> tuple[np.ndarray, np.ndarray]:
    """The edges of whole files' (file, part token) pairs, files ascending, tokens sorted within one."""
    files, keys = expand_ragged(key_offsets, token_keys, docs, ranks)  # in counting order: tokens, then keys
    token_ranks = np.repeat(ranks, key_offsets[ranks + 1] - key_offsets[ranks])
    # a file holds a token once and a token lists a key once, so (file, key, token) is unique:
    # sorted, each (file, key) is a run whose length is its count and whose first token is the
    # one it was first counted at; its place in counting order is (that token, the key)
    span = len(key_offsets) - 1
    local = files - int(docs[0])
    key_bits, token_bits, count_bits = _bits(key_count), _bits(span), _bits(span + 1)
    file_bits = _bits(int(local[-1]) + 1)
    if file_bits + count_bits + token_bits + key_bits > PACKED_BITS:
        return _scan_wide(local, keys, token_ranks, span, key_count, int(docs[0]), part_counts, definer_offsets, definer_nodes, node_count)
    codes = np.sort((local << (key_bits + token_bits)) | (keys << token_bits) | token_ranks)
    pairs = codes >> token_bits
    starts = np.flatnonzero(np.concatenate(([True], pairs[1:] != pairs[:-1])))
    counts = np.diff(np.append(starts, len(pairs)))
    first_token = codes[starts] & ((1 << token_bits) - 1)
    pairs = pairs[starts]
    # most_common: count descending, first counted first: one sort of (file, -count, first token, key) packed
    packed = np.sort(((pairs >> key_bits) << (count_bits + token_bits + key_bits)) | ((span - counts) << (token_bits + key_bits))
                     | (first_token << key_bits) | (pairs & ((1 << key_bits) - 1)))
    local, keys = packed >> (count_bits + token_bits + key_bits), packed & ((1 << key_bits) - 1)
    counts = span - ((packed >> (token_bits + key_bits)) & ((1 << count_bits) - 1))
    return _edges(local + int(docs[0]), keys, counts, part_counts, definer_offsets, definer_nodes, node_count)


def _bits(limit: int) -> int:
    """Bits that hold every value below `limit`."""
    return max(1, (limit - 1).bit_length())


def _scan_wide(local: np.ndarray, keys: np.ndarray, token_ranks: np.ndarray, span: int, key_count: int, first_doc: int,
               part_counts: np.ndarray, definer_offsets: np.ndarray, definer_nodes: np.ndarray, node_count: int) -> tuple[np.ndarray, np.ndarray]:
    """`_scan` with lexsorts, where the packed keys would not fit in an int64."""
    order = np.lexsort((token_ranks, keys, local))
    local, keys, token_ranks = local[order], keys[order], token_ranks[order]
    starts = np.flatnonzero(np.concatenate(([True], (local[1:] != local[:-1]) | (keys[1:] != keys[:-1]))))
    counts = np.diff(np.append(starts, len(local)))
    local, keys, first_token = local[starts], keys[starts], token_ranks[starts]
    ranked = np.lexsort((keys, first_token, -counts, local))
    return _edges(local[ranked] + first_doc, keys[ranked], counts[ranked], part_counts, definer_offsets, definer_nodes, node_count)


def _edges(files: np.ndarray, keys: np.ndarray, counts: np.ndarray, part_counts: np.ndarray, definer_offsets: np.ndarray,
           definer_nodes: np.ndarray, node_count: int) -> tuple[np.ndarray, np.ndarray]:
    """The edges of each file's ranked keys: the first `4 * SYMBOL_REFS_PER_FILE`, those all of
    whose parts the file holds, their defining files in path order, each once, at most
    `SYMBOL_REFS_PER_FILE` a file."""
    kept = (_within(files) < SYMBOL_REFS_PER_FILE * 4) & (counts >= part_counts[keys])
    files, keys = files[kept], keys[kept]
    referring, defining = expand_ragged(definer_offsets, definer_nodes, files, keys)  # each key's files in path order
    keep = referring != defining
    referring, defining = referring[keep], defining[keep]
    _, firsts = np.unique(referring * node_count + defining, return_index=True)  # a file joined once to each
    seen_first = np.zeros(len(referring), dtype=bool)
    seen_first[firsts] = True
    referring, defining = referring[seen_first], defining[seen_first]
    capped = _within(referring) < SYMBOL_REFS_PER_FILE
    return referring[capped], defining[capped]
