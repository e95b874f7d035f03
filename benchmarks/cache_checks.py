"""What the index cache's load-time invariant checks cost, as a ratio to the load without them.

Run it from the project root, in an environment where the package is installed:

    python benchmarks/cache_checks.py [--corpus CORPUS_DIR] [--files 20000] [--repeat 5]

An index loaded from the cache is checked for every structural invariant its queries rely on
(`pytest_retrieval_bench/index/invariants.py`). This measures, per index kind, the load as it
was (`decode`: decompression, slicing, the lists) against the load with the checks
(`decode` + `check_index`), on two sets of indexes:

- the bundled bench: every snapshot of `--corpus` (default: the bundled release corpus,
  `testdata/release/corpus/synthetic_v1`), its three indexes (lexical, chunks, repomap);
- a bigger synthetic snapshot: `--files` files of random identifiers (a fixed seed), the same
  three indexes.

Each figure is the fastest of `--repeat` rounds, both sides timed in the same round, so a busy
machine does not fall on one side of the ratio only. Printed: the entries' size, the load before
and after in milliseconds, after/before, and build/after (how much a load still saves over
building the index anew); nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any, Callable

from pytest_retrieval_bench.corpus.chunks import read_chunk_file
from pytest_retrieval_bench.index.cache import cache_key, decode, encode
from pytest_retrieval_bench.index.invariants import check_index
from pytest_retrieval_bench.index.chunk_index import ChunkIndex, file_chunks
from pytest_retrieval_bench.index.postings import LexicalIndex
from pytest_retrieval_bench.index.repomap import build_repomap

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("lexical", "chunks", "repomap")


def indexes(texts: dict[str, str], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The three indexes, and the seconds each took to build (what a rejected entry costs)."""
    builders = {"lexical": lambda: LexicalIndex.build(sorted(texts.items())), "chunks": lambda: ChunkIndex.build(rows),
                "repomap": lambda: build_repomap(rows)}
    found: dict[str, Any] = {}
    for kind, builder in builders.items():
        start = time.perf_counter()
        found[kind] = builder()
        found[f"{kind} build"] = time.perf_counter() - start
    return found


def bundled(corpus: Path) -> list[dict[str, Any]]:
    found = []
    for chunk_file in sorted(corpus.glob("*/*.chunks.jsonl*")):
        repo = chunk_file.parent.name.replace("__", "/", 1)
        commit = chunk_file.name.split(".", 1)[0]
        snapshot = read_chunk_file(chunk_file, repo, commit)
        found.append(indexes(dict(snapshot.texts), list(snapshot.chunk_rows or [])))
    return found


def synthetic(files: int, seed: int = 20261203) -> dict[str, Any]:
    chooser = random.Random(seed)
    words = [f"{chooser.choice(['get', 'set', 'parse', 'load', 'make', 'run'])}_{chooser.randrange(50_000):05d}" for _ in range(20_000)]
    texts = {}
    for number in range(files):
        body = "\n".join(f"def {chooser.choice(words)}({chooser.choice(words)}):\n    return {chooser.choice(words)}()" for _ in range(12))
        texts[f"pkg{number % 97}/module_{number}.py"] = body
    return indexes(texts, file_chunks(sorted(texts.items())))


def fastest(function: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def ratio(numerator: float, denominator: float) -> str:
    return f"{numerator / denominator:.2f}x" if denominator > 0 else "n/a"


def measure(label: str, sets: list[dict[str, Any]], repeat: int) -> None:
    print(f"\n== {label}: {len(sets)} snapshot(s)")
    for kind in KINDS:
        key = cache_key("0" * 64, kind)
        entries = [encode(key, found[kind]) for found in sets]
        before = after = 0.0
        for data in entries:
            loaded = decode(key, kind, data)
            best_before, best_after = float("inf"), float("inf")
            for _ in range(repeat):  # both sides in each round
                best_before = min(best_before, fastest(lambda: decode(key, kind, data), 1))
                best_after = min(best_after, fastest(lambda: check_index(decode(key, kind, data)), 1))
            check_index(loaded)
            before += best_before
            after += best_after
        size = sum(len(data) for data in entries) / 1024
        build = sum(found[f"{kind} build"] for found in sets)
        print(f"{kind:<8} entries {size:9.1f} KiB   load before {before * 1000:8.2f} ms   after {after * 1000:8.2f} ms   "
              f"after/before {ratio(after, before)}   build/after {ratio(build, after)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "testdata" / "release" / "corpus" / "synthetic_v1")
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    measure(f"bundled bench {args.corpus}", bundled(args.corpus), args.repeat)
    measure(f"synthetic snapshot, {args.files} files", [synthetic(args.files)], args.repeat)


if __name__ == "__main__":
    main()
