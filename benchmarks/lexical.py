"""Speed and memory figures for the built-in lexical arms on a real source tree.

Run it from the project root, in an environment where the package is installed:

    python benchmarks/lexical.py                  # 100 queries, with bm25s if installed
    python benchmarks/lexical.py --queries 20 --no-bm25s

The tree is the installed `numpy`, `pytest` and `_pytest` package directories, plus further
installed packages in a fixed order (`scipy`, `pygments`, `pip`, `setuptools`, `hypothesis`)
until it holds at least `--min-files` text files. It is read into one in-memory snapshot with
every path prefixed by its package name. The queries are built with a fixed seed from the
tree's identifiers, file names and docstring sentences: plain sentences, issue-like objects and
trace-like objects, like the bench's query shapes.

Printed: the corpus size; index build time and throughput (the whole-file index, the tree's
chunk index read off it, and for comparison a chunk index built from one row per file as a
release's rows would be); the median per-query latency of every built-in arm; memory (below);
(a) bm25s on identical tokens against our BM25; (b) a per-query scan in the style of the bench's
reference rankers against our arb-lexical; (c) a cold run (read, build, store in the index cache,
query) against a warm one (read, load from the cache, query). Only the standard library, numpy
and (optionally) bm25s are used. It prints figures and asserts nothing.

Memory is measured twice. With tracemalloc, in this process: what each index build allocates at
its peak and keeps, above the text already held. And as the peak RSS of a fresh process that
only reads the tree and indexes it as the plugin does (`lexical_memory.py`), against the same process
after its imports. Both are printed as multiples of the text's UTF-8 size.
"""

from __future__ import annotations

import argparse
import ast
import math
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import numpy as np
from installed_tree import build_indexes, choose_packages, read_tree
from lexical_memory import memory_figures, text_size
from peak_rss import peak_rss_mb

from pytest_retrieval_bench.arms.arb_reference import ArbReferenceArm
from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.arms.lexical import BM25_B, BM25_K1, BM25Arm, GrepArm, GrepIdentArm, bm25_scores
from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.index.cache import IndexCache
from pytest_retrieval_bench.index.chunk_index import ChunkIndex, chunk_text, file_chunks
from pytest_retrieval_bench.index.postings import LexicalIndex, Postings
from pytest_retrieval_bench.index.tokens import bench_tokens, grep_terms
from pytest_retrieval_bench.samples.arb import query_text_for_eval

SEED = 20240611
ARMS = (GrepArm(), GrepIdentArm(), BM25Arm("bm25:all"), BM25Arm("bm25:ident"), ArbReferenceArm("arb-lexical"), ArbReferenceArm("arb-bm25"))
MB = 1_000_000


# --------------------------------------------------------------------------- the tree's indexes


def serve(snapshot: Snapshot, lexical: LexicalIndex, chunks: ChunkIndex) -> None:
    """Hand the snapshot its indexes (its loader is asked for one kind at a time)."""
    snapshot.index_loader = lambda _snapshot, kind: lexical if kind == "lexical" else chunks


# --------------------------------------------------------------------------- the queries


def _first_sentence(docstring: str) -> str | None:
    text = " ".join(docstring.split())
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return sentence if 25 <= len(sentence) <= 160 else None


def make_queries(snapshot: Snapshot, count: int, seed: int = SEED) -> list[Any]:
    rng = random.Random(seed)
    python_files = sorted(path for path in snapshot.texts if path.endswith(".py"))
    camel: set[str] = set()
    snake: set[str] = set()
    sentences: set[str] = set()
    for path in rng.sample(python_files, min(len(python_files), 400)):
        try:
            tree = ast.parse(snapshot.texts[path])
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if re.search(r"[a-z][A-Z]", node.name) and len(node.name) >= 6:
                    camel.add(node.name)
                elif re.search(r"[A-Za-z0-9]_[A-Za-z0-9]", node.name) and len(node.name) >= 8:
                    snake.add(node.name)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                docstring = ast.get_docstring(node)
                sentence = _first_sentence(docstring) if docstring else None
                if sentence:
                    sentences.add(sentence)
    camel_names, snake_names, docs = sorted(camel), sorted(snake), sorted(sentences)
    queries: list[Any] = []
    for number in range(count):
        shape = number % 3
        if shape == 0:
            queries.append(rng.choice(docs))
        elif shape == 1:
            queries.append({"title": rng.choice(docs), "body": f"Calling {rng.choice(snake_names)} on a {rng.choice(camel_names)} fails."})
        else:
            path = rng.choice(python_files)
            queries.append({"trace": f'File "{path}", line {rng.randint(10, 900)}, in {rng.choice(snake_names)}\n'
                                     f"{rng.choice(camel_names)}: {rng.choice(docs)}"})
    return queries


def query_text_of(query: Any) -> str:
    return query if isinstance(query, str) else query_text_for_eval(query)


def make_request(snapshot: Any, query: Any, number: int) -> Request:
    query_text = query_text_of(query)
    return Request(sample_id=f"q{number}", task_type="bug2code", repo="installed/packages", base_commit="0" * 40,
                   query=query, query_text=query_text, changed_file=None, k=10, snapshot=snapshot)


# --------------------------------------------------------------------------- helpers


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def rank_positive(paths: list[str], scores: np.ndarray) -> list[str]:
    """Positive scores descending, ties by path (document ids are in path order)."""
    candidates = np.flatnonzero(scores > 0)
    order = candidates[np.lexsort((candidates, -scores[candidates]))]
    return [paths[doc] for doc in order]


def run_all_arms(handle: Any, queries: list[Any]) -> int:
    ranked = 0
    for number, query in enumerate(queries):
        request = make_request(handle, query, number)
        for arm in ARMS:
            ranked += bool(arm.retrieve(request).ranking)
    return ranked


def scan_lexical(rows: list[dict[str, Any]], query_text: str) -> list[str]:
    """A straightforward per-query scan of the arb-lexical score: every chunk re-tokenized."""
    query_counts = Counter(bench_tokens(query_text))
    chunk_tokens = [set(bench_tokens(chunk_text(row))) for row in rows]
    if not query_counts:
        return list(dict.fromkeys(str(row.get("path", "")) for row in rows))
    frequency: Counter[str] = Counter()
    for tokens in chunk_tokens:
        frequency.update(tokens)
    total = max(1, len(rows))
    lowered_query = query_text.lower()
    scored = []
    for row, tokens in zip(rows, chunk_tokens):
        score = 0.0
        for token, count in query_counts.items():
            if token in tokens:
                score += (1.0 + math.log(count)) * math.log((total + 1) / (1 + frequency[token]) + 1.0)
        path = str(row.get("path", ""))
        if path and path.lower() in lowered_query:
            score += 25.0
        basename = Path(path).name.lower()
        if basename and basename in lowered_query:
            score += 8.0
        symbol = row.get("symbol")
        if symbol and str(symbol).lower() in lowered_query:
            score += 5.0
        scored.append((-(score / max(1.0, math.sqrt(len(tokens)))), path, str(row.get("chunk_id", ""))))
    scored.sort()
    return list(dict.fromkeys(path for _, path, _ in scored if path))


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000.0


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100, help="number of queries (default 100)")
    parser.add_argument("--no-bm25s", action="store_true", help="skip the comparison with bm25s")
    parser.add_argument("--scan-queries", type=int, default=10, help="queries for the per-query scan (default 10)")
    parser.add_argument("--min-files", type=int, default=2000, help="add installed packages until this many text files")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--no-memory", action="store_true", help="skip the memory figures (tracemalloc slows the builds)")
    args = parser.parse_args(argv)

    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    packages = choose_packages(args.min_files)
    read_seconds, snapshot = timed(lambda: read_tree(packages))
    text_bytes, _ = text_size(snapshot)
    print("\n== corpus")
    print(f"packages            {', '.join(name for name, _ in packages)}")
    print(f"text files          {len(snapshot.texts)}  (other files: {len(snapshot.other_paths)})")
    print(f"text                {text_bytes / MB:.1f} MB")
    print(f"read from disk      {read_seconds:.2f} s (files already in the page cache)")

    lexical_seconds, lexical = timed(lambda: LexicalIndex.build(snapshot.text_files()))
    chunk_seconds, chunks = timed(lambda: ChunkIndex.of_files(lexical))
    rows_seconds, _ = timed(lambda: ChunkIndex.build(file_chunks(snapshot.text_files())))
    print("\n== index build")
    print(f"LexicalIndex        {lexical_seconds:.2f} s  ({text_bytes / MB / lexical_seconds:.1f} MB/s)  "
          f"vocabulary {len(lexical.content.terms)} tokens, {len(lexical.words.terms)} words")
    print(f"tree ChunkIndex     {chunk_seconds:.2f} s  (read off the LexicalIndex)  {len(chunks.paths)} file chunks")
    print(f"rows ChunkIndex     {rows_seconds:.2f} s  ({text_bytes / MB / rows_seconds:.1f} MB/s)  "
          f"from one row per file, as a release's rows are indexed")
    serve(snapshot, lexical, chunks)

    queries = make_queries(snapshot, args.queries, args.seed)
    print(f"\n== per-query latency ({len(queries)} queries, median / p90 / max; first call timed apart)")
    arm_latency: dict[str, list[float]] = {}
    for arm in ARMS:
        # the first call per snapshot fills lazy per-index caches (lowered paths, basenames)
        first, _ = timed(lambda: arm.retrieve(make_request(snapshot, queries[0], 0)))
        latencies = []
        ranked = 0
        for number, query in enumerate(queries):
            seconds, answer = timed(lambda: arm.retrieve(make_request(snapshot, query, number)))
            latencies.append(seconds)
            ranked += bool(answer.ranking)
        arm_latency[arm.name] = latencies
        ordered = sorted(latencies)
        p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        print(f"{arm.name:<18}  {median_ms(latencies):8.2f} ms {p90 * 1000:8.2f} ms {ordered[-1] * 1000:8.2f} ms   "
              f"answered {ranked}/{len(queries)}; first call {first * 1000:.1f} ms")
    print(f"\npeak RSS            {peak_rss_mb():.0f} MB (after build and queries)")
    if not args.no_memory:
        memory_figures(snapshot, text_bytes, args.min_files)

    # (a) bm25s on identical tokens
    print("\n== (a) BM25: ours vs bm25s on identical tokens (bm25:all terms)")
    if args.no_bm25s:
        print("skipped (--no-bm25s)")
    else:
        try:
            import bm25s
        except ImportError:
            bm25s = None
            print("skipped: bm25s is not installed")
        if bm25s is not None:
            paths = [path for path, _ in snapshot.text_files()]
            tokenize_seconds, documents = timed(lambda: [bench_tokens(text) for _, text in snapshot.text_files()])
            print(f"tokenize (shared)   {tokenize_seconds:.2f} s, {sum(len(d) for d in documents)} tokens")

            def build_ours() -> LexicalIndex:
                content = Postings.build(documents)
                lengths = np.asarray([len(d) for d in documents], dtype=np.int64)
                empty = Postings.build([[] for _ in documents])
                return LexicalIndex(paths=paths, doc_lengths=lengths, content=content, path_tokens=empty, words=empty)

            def build_theirs() -> Any:
                engine = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene", dtype="float64")
                engine.index(documents, show_progress=False)
                return engine

            ours_build, ours_index = timed(build_ours)
            theirs_build, engine = timed(build_theirs)
            term_lists = [list(dict.fromkeys(grep_terms(query_text_of(q)))) for q in queries]

            def query_ours() -> list[list[str]]:
                return [rank_positive(paths, bm25_scores(ours_index, terms)) for terms in term_lists]

            def query_theirs() -> list[list[str]]:
                return [rank_positive(paths, engine.get_scores(terms)) if terms else [] for terms in term_lists]

            ours_query, ours_rankings = timed(query_ours)
            theirs_query, theirs_rankings = timed(query_theirs)
            same_top10 = sum(a[:10] == b[:10] for a, b in zip(ours_rankings, theirs_rankings))
            print(f"index build         ours {ours_build:.2f} s   bm25s {theirs_build:.2f} s   ours/bm25s {ours_build / theirs_build:.2f}")
            print(f"{f'{len(queries)} queries':<20}ours {ours_query:.3f} s   bm25s {theirs_query:.3f} s   ours/bm25s {ours_query / theirs_query:.2f}")
            print(f"build + queries     ours {ours_build + ours_query:.2f} s   bm25s {theirs_build + theirs_query:.2f} s   "
                  f"ours/bm25s {(ours_build + ours_query) / (theirs_build + theirs_query):.2f}")
            print(f"same top 10         {same_top10}/{len(queries)} queries")
            del engine, ours_index, documents
            print(f"peak RSS            {peak_rss_mb():.0f} MB (after bm25s)")

    # (b) per-query scan in the style of the bench's reference rankers
    scan_count = min(args.scan_queries, len(queries))
    print(f"\n== (b) arb-lexical: per-query scan (every chunk re-tokenized) vs index, {scan_count} queries")
    rows = file_chunks(snapshot.text_files())
    scan_times = []
    agree = 0
    for number, query in enumerate(queries[:scan_count]):
        request = make_request(snapshot, query, number)
        seconds, scanned = timed(lambda: scan_lexical(rows, request.query_text))
        scan_times.append(seconds)
        indexed = ArbReferenceArm("arb-lexical").retrieve(request).ranking
        agree += scanned[: len(indexed)] == indexed  # the arm's ranking is capped
    ours = arm_latency["arb-lexical"][:scan_count]
    print(f"scan                median {median_ms(scan_times):9.1f} ms")
    print(f"index               median {median_ms(ours):9.2f} ms")
    print(f"speed-up            {statistics.median(scan_times) / statistics.median(ours):.0f}x   (rankings identical: {agree}/{scan_count})")
    rows.clear()  # free the chunk texts before the cache measurement

    # (c) cold vs warm index cache, end to end
    print(f"\n== (c) index cache, end to end: read tree + index + {len(queries)} queries x {len(ARMS)} arms")
    with tempfile.TemporaryDirectory() as directory:
        cache = IndexCache(Path(directory))

        def cold() -> int:
            fresh = read_tree(packages)
            digest = fresh.content_digest()
            built = build_indexes(fresh)
            cache.store(digest, "lexical", built[0])  # a tree's chunk index is read off it, never stored
            serve(fresh, *built)
            return run_all_arms(fresh, queries)

        def warm() -> int:
            fresh = read_tree(packages)
            digest = fresh.content_digest()
            loaded = cache.load(digest, "lexical")
            if not isinstance(loaded, LexicalIndex):
                raise RuntimeError("the index cache entry was not found")
            serve(fresh, loaded, ChunkIndex.of_files(loaded))
            return run_all_arms(fresh, queries)

        cold_seconds, cold_ranked = timed(cold)
        size = sum(path.stat().st_size for path in Path(directory).rglob("*.idx.zst"))
        warm_seconds, warm_ranked = timed(warm)
        digest = snapshot.content_digest()
        load_seconds, _ = timed(lambda: cache.load(digest, "lexical"))
    print(f"cache entry         {size / MB:.1f} MB on disk; loading it alone {load_seconds:.2f} s")
    print(f"cold (build+store)  {cold_seconds:.2f} s")
    print(f"warm (load)         {warm_seconds:.2f} s")
    print(f"cold/warm           {cold_seconds / warm_seconds:.1f}x   (answers: cold {cold_ranked}, warm {warm_ranked})")
    print(f"\npeak RSS            {peak_rss_mb():.0f} MB (end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
