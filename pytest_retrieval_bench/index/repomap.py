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
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Callable, Iterable

import numpy as np

from pytest_retrieval_bench.index.path_kinds import file_kind
from pytest_retrieval_bench.index.postings import Postings, PostingsBuilder
from pytest_retrieval_bench.index.tokens import bench_tokens

REPOMAP_VERSION = "arb-repomap-1"
KIND_CODES = {"other": 0, "source": 1, "test": 2}
CONTENT_CHARS = 20_000
IMPORT_LINES = 2_000
IMPORT_SPECS = 200
IMPORT_TARGETS = 8
SYMBOL_SCAN_MAX_FILES = 3_000
SYMBOL_REFS_PER_FILE = 80
SYMBOL_KEY_FILES = 8
PAIRED_FILES = 20
IMPORT_WEIGHT, SYMBOL_WEIGHT, TEST_PAIR_WEIGHT = 1.5, 1.0, 2.0
PATH_CLASS, SYMBOL_CLASS, CONTENT_CLASS = 3, 2, 1
"""A node's token postings count its token's class: path tokens weigh 3x, symbol tokens 2x."""

IMPORT_PATTERN = re.compile(
    r"(?:^|\s)(?:from\s+([A-Za-z0-9_\.]+)\s+import|import\s+([A-Za-z0-9_\./:-]+)|"
    r"require\(\s*['\"]([^'\"]+)['\"]\s*\)|from\s+['\"]([^'\"]+)['\"]|"
    r"import\s+['\"]([^'\"]+)['\"]|#include\s+[<\"]([^>\"]+)[>\"]|"
    r"use\s+(?:crate::|super::)?([A-Za-z0-9_:]+))"
)
GENERIC_SYMBOLS = frozenset(
    "add app args build call case check class close config context data default delete error event file find get "
    "handle helper init item list load main make mock model name node option options parse path read render request "
    "response result run save server set state string test tests type update value write".split()
)
TEST_MARKERS = frozenset({"test", "tests", "testing", "__tests__", "testsuite", "testsuites"})


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
    compact = "".join(bench_tokens(value))
    if len(compact) < 4 or compact in GENERIC_SYMBOLS or compact.isdigit():
        return ""
    return compact


@dataclass
class _Node:
    path: str
    kind: str
    text: str = ""
    symbols: set[str] | None = None


def _nodes(rows: Iterable[dict[str, Any]], key_of: Callable[[str], str]) -> dict[str, _Node]:
    nodes: dict[str, _Node] = {}
    for row in rows:
        path = str(row.get("path") or "")
        if not path:
            continue
        node = nodes.get(path)
        if node is None:
            node = nodes[path] = _Node(path, file_kind(path), symbols=set())
        if row.get("kind") == "file" and not node.text:
            node.text = str(row.get("text") or "")
        symbol = str(row.get("symbol") or "").strip()
        if symbol and key_of(symbol):
            node.symbols.add(symbol)  # type: ignore[union-attr]
    return nodes


def _token_sets(node: _Node) -> tuple[set[str], set[str], set[str]]:
    path_tokens = set(bench_tokens(node.path.replace("/", " ").replace(".", " ").replace("_", " ")))
    symbol_tokens = set(bench_tokens(" ".join(sorted(node.symbols or ()))))
    everything = path_tokens | symbol_tokens | set(bench_tokens(node.text[:CONTENT_CHARS]))
    return path_tokens, symbol_tokens, everything


# -- edges -------------------------------------------------------------------------------------


def import_specs(text: str) -> list[str]:
    specs: list[str] = []
    for line in text.splitlines()[:IMPORT_LINES]:
        stripped = line.strip()
        if not stripped or stripped.startswith(("//", "# ", "*")):
            continue
        for match in IMPORT_PATTERN.finditer(stripped):
            spec = next((group for group in match.groups() if group), None)
            if spec:
                specs.append(spec)
    return specs[:IMPORT_SPECS]


def _module_names(paths: Iterable[str]) -> dict[str, set[str]]:
    """Every lowercase name an import may use for a file: dotted and slashed, 2..5 trailing parts, stem."""
    names: dict[str, set[str]] = defaultdict(set)
    for path in paths:
        pure = PurePosixPath(path)
        no_suffix = str(pure.with_suffix(""))
        parts = no_suffix.split("/")
        variants = {no_suffix, no_suffix.replace("/", "."), pure.name, pure.stem}
        for width in range(2, min(5, len(parts)) + 1):
            variants.add("/".join(parts[-width:]))
            variants.add(".".join(parts[-width:]))
        for variant in variants:
            if variant:
                names[variant.lower()].add(path)
    return names


def _collapse(path: PurePosixPath) -> str:
    parts: list[str] = []
    for part in path.parts:
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def _without_suffix(path: PurePosixPath) -> PurePosixPath:
    if path.name in ("", ".", ".."):
        return path
    try:
        return path.with_suffix("")
    except ValueError:
        return path


def resolve_import(spec: str, from_path: str, names: dict[str, set[str]]) -> list[str]:
    """The files an import spec may name: relative specs from the importing file's directory."""
    cleaned = spec.strip().strip(";,")
    if cleaned.startswith("."):
        base = PurePosixPath(from_path).parent
        if "/" in cleaned:
            relative = _without_suffix(base / cleaned)
        else:
            level = len(cleaned) - len(cleaned.lstrip("."))
            for _ in range(max(0, level - 1)):
                base = base.parent
            relative = base.joinpath(*[part for part in cleaned[level:].split(".") if part])
        collapsed = _collapse(relative)
        keys = [collapsed.lower(), f"{collapsed}/index".lower(), f"{collapsed}/mod".lower(), f"{collapsed}/__init__".lower()] if collapsed else []
    else:
        slashed = cleaned.replace("::", "/").replace(".", "/").strip("/")
        keys = [slashed.lower(), slashed.replace("/", ".").lower()]
    found: set[str] = set()
    for key in keys:
        found.update(names.get(key, ()))
    return sorted(found)[:IMPORT_TARGETS]


class _Graph:
    """Undirected weighted edges keyed by node position, both directions summed as the bench does."""

    def __init__(self, positions: dict[str, int]):
        self.positions = positions
        self.edges: list[dict[int, float]] = [{} for _ in positions]

    def add(self, left: str, right: str, weight: float) -> None:
        a, b = self.positions.get(left), self.positions.get(right)
        if a is None or b is None or a == b:
            return
        self.edges[a][b] = self.edges[a].get(b, 0.0) + weight
        self.edges[b][a] = self.edges[b].get(a, 0.0) + weight


def _import_edges(nodes: dict[str, _Node], graph: _Graph) -> None:
    names = _module_names(nodes)
    for path, node in nodes.items():
        for spec in import_specs(node.text):
            for target in resolve_import(spec, path, names):
                if target != path:
                    graph.add(path, target, IMPORT_WEIGHT)


def _symbol_edges(nodes: dict[str, _Node], tokens: dict[str, set[str]], graph: _Graph, key_of: Callable[[str], str]) -> bool:
    """Edges from a file to the few files defining a multi-part symbol all of whose parts it holds.

    Returns False (no edges) when more than `SYMBOL_SCAN_MAX_FILES` files are source or test.
    The bench's order, with its set iterations sorted: tokens and keys ascending, keys ranked by
    how many of a file's tokens name them (ties: first counted first), the first
    `4 * SYMBOL_REFS_PER_FILE` kept, at most `SYMBOL_REFS_PER_FILE` targets a file.
    """
    searchable = [path for path, node in nodes.items() if node.kind != "other"]
    if len(searchable) > SYMBOL_SCAN_MAX_FILES:
        return False
    definers: dict[str, set[str]] = defaultdict(set)
    for path in searchable:
        for symbol in nodes[path].symbols or ():
            key = key_of(symbol)
            if key:
                definers[key].add(path)
    parts_of: dict[str, set[str]] = {}
    keys_of_token: dict[str, set[str]] = defaultdict(set)
    for path in searchable:
        for symbol in sorted(nodes[path].symbols or ()):
            key = key_of(symbol)
            if not key or len(definers[key]) > SYMBOL_KEY_FILES:
                continue
            parts = {token for token in bench_tokens(symbol) if len(token) >= 3 and token not in GENERIC_SYMBOLS}
            if not parts or (len(parts) == 1 and len(next(iter(parts))) < 8):
                continue
            parts_of[key] = parts
            for token in parts:
                keys_of_token[token].add(key)
    # token -> its keys as a ragged array (tokens and keys numbered in sorted order), so a file's
    # key counts are one gather and one `np.unique` instead of a dictionary increment per pair
    token_ids = {token: number for number, token in enumerate(sorted(keys_of_token))}
    key_names = sorted(parts_of)
    key_ids = {key: number for number, key in enumerate(key_names)}
    key_lists = [sorted(key_ids[key] for key in keys_of_token[token]) for token in sorted(keys_of_token)]
    offsets = np.zeros(len(key_lists) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(keys) for keys in key_lists])
    token_keys = np.fromiter((key for keys in key_lists for key in keys), dtype=np.int64, count=int(offsets[-1]))
    part_counts = np.array([len(parts_of[key]) for key in key_names], dtype=np.int64)
    ordered_definers: dict[int, list[str]] = {}
    kept = SYMBOL_REFS_PER_FILE * 4
    for path in searchable:
        ids = np.array(sorted(token_ids[token] for token in tokens[path] if token in token_ids), dtype=np.int64)
        if not len(ids):
            continue
        starts, lengths = offsets[ids], offsets[ids + 1] - offsets[ids]
        total = int(lengths.sum())
        if not total:
            continue
        gather = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(total)
        # the keys in the bench's counting order: tokens ascending, each token's keys ascending
        keys, first, counts = np.unique(token_keys[gather], return_index=True, return_counts=True)
        # Counter.most_common(n): count descending, ties in first-counted order
        ranked = np.lexsort((first, -counts))[:kept]
        refs = 0
        seen: set[str] = set()
        for key, count in zip(keys[ranked].tolist(), counts[ranked].tolist()):
            if count < part_counts[key]:
                continue
            targets = ordered_definers.get(key)
            if targets is None:
                targets = ordered_definers[key] = sorted(definers[key_names[key]])
            for target in targets:
                if target == path or target in seen:
                    continue
                graph.add(path, target, SYMBOL_WEIGHT)
                seen.add(target)
                refs += 1
                if refs >= SYMBOL_REFS_PER_FILE:
                    break
            if refs >= SYMBOL_REFS_PER_FILE:
                break
    return True


def source_test_keys(path: str) -> list[str]:
    """The bench's `canonical_test_source_keys`: the stem without test affixes, and `module:stem`."""
    pure = PurePosixPath(path)
    stem = pure.stem.lower()
    for suffix in ("_test", "test", "tests", ".test", ".spec", "_spec"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    for prefix in ("test_", "tests_"):
        if stem.startswith(prefix):
            stem = stem[len(prefix) :]
    stem = re.sub(r"[^a-z0-9]+", "", stem)
    if len(stem) < 3:
        return []
    parents = [part.lower() for part in pure.parent.parts if part.lower() not in TEST_MARKERS]
    return [stem, f"{parents[-1]}:{stem}"] if parents and parents[-1] else [stem]


def _test_pair_edges(nodes: dict[str, _Node], graph: _Graph) -> None:
    sources: dict[str, list[str]] = defaultdict(list)
    tests: dict[str, list[str]] = defaultdict(list)
    for path, node in nodes.items():
        for key in source_test_keys(path):
            if node.kind == "test":
                tests[key].append(path)
            elif node.kind == "source":
                sources[key].append(path)
    for key, paired_tests in tests.items():
        for source in sources.get(key, [])[:PAIRED_FILES]:
            for test in paired_tests[:PAIRED_FILES]:
                graph.add(source, test, TEST_PAIR_WEIGHT)


# -- the index ---------------------------------------------------------------------------------


def build_repomap(rows: Iterable[dict[str, Any]], progress: Callable[[int, int | None], None] | None = None) -> RepoMapIndex:
    """The map of a snapshot's chunk rows (or of `file_chunks(...)` for a tree); `progress`
    hears each file's tokens counted, the file graph's edges come after."""
    keys: dict[str, str] = {}

    def key_of(symbol: str) -> str:  # symbols repeat across files and loops: key each once
        key = keys.get(symbol)
        if key is None:
            key = keys[symbol] = informative_key(symbol)
        return key

    nodes = _nodes(rows, key_of)
    paths = list(nodes)
    builder = PostingsBuilder()
    token_sets: dict[str, set[str]] = {}
    for number, path in enumerate(paths, start=1):
        if progress is not None:
            progress(number, len(paths))
        path_tokens, symbol_tokens, everything = _token_sets(nodes[path])
        token_sets[path] = everything
        classes: list[str] = []
        for token in sorted(everything):
            weight = PATH_CLASS if token in path_tokens else SYMBOL_CLASS if token in symbol_tokens else CONTENT_CLASS
            classes.extend([token] * weight)
        builder.add(classes)
    token_sizes = np.array(builder.distinct, dtype=np.int64)
    postings = builder.finish()
    graph = _Graph({path: position for position, path in enumerate(paths)})
    _import_edges(nodes, graph)
    scanned = _symbol_edges(nodes, token_sets, graph, key_of)
    _test_pair_edges(nodes, graph)
    del token_sets
    offsets = np.zeros(len(paths) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(edges) for edges in graph.edges])
    targets = np.fromiter((target for edges in graph.edges for target in edges), dtype=np.int32, count=int(offsets[-1]))
    weights = np.fromiter((weight for edges in graph.edges for weight in edges.values()), dtype=np.float64, count=int(offsets[-1]))
    kinds = np.array([KIND_CODES[nodes[path].kind] for path in paths], dtype=np.uint8)
    stats = {
        "file_count": len(paths),
        "symbol_count": sum(len(node.symbols or ()) for node in nodes.values()),
        "edge_count": int(offsets[-1]),
        "source_count": int((kinds == KIND_CODES["source"]).sum()),
        "test_count": int((kinds == KIND_CODES["test"]).sum()),
        "symbol_reference_scan_skipped": int(not scanned),
    }
    return RepoMapIndex(paths=paths, kinds=kinds, token_sizes=token_sizes, postings=postings, edge_offsets=offsets,
                        edge_targets=targets, edge_weights=weights, stats=stats)


def idf(total_nodes: int, frequency: int) -> float:
    """The bench's smoothed idf over nodes' token sets."""
    total = max(1, total_nodes)
    return math.log((total + 1) / (frequency + 1)) + 1.0
