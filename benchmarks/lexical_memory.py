"""The lexical benchmark's memory figures: what the index builds allocate (tracemalloc, in the
calling process) and the peak RSS of a fresh process that reads the tree and indexes it as the
plugin does. Run on its own (`python benchmarks/lexical_memory.py --min-files N`) it is that
fresh process: it prints its figures as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tracemalloc
from typing import Any, Callable

from installed_tree import build_indexes, choose_packages, read_tree
from peak_rss import peak_rss_mb

from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.index.chunk_index import ChunkIndex, file_chunks
from pytest_retrieval_bench.index.postings import LexicalIndex

MB = 1_000_000


def text_size(snapshot: Snapshot) -> tuple[int, int]:
    """The text's UTF-8 bytes, and what its Python strings take."""
    texts = snapshot.texts.values()
    return sum(len(text.encode("utf-8", errors="surrogatepass")) for text in texts), sum(sys.getsizeof(text) for text in texts)


def traced(function: Callable[[], Any]) -> tuple[int, int, Any]:
    """(peak, kept) bytes allocated by `function` above what was allocated before it."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = function()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before, current - before, result


def memory_figures(snapshot: Snapshot, text_bytes: int, min_files: int) -> None:
    _, held = text_size(snapshot)
    print(f"\n== memory (tracemalloc: allocated above the text, which is held once; x = times the text's {text_bytes / MB:.1f} MB)")
    print(f"text held           {held / MB:.1f} MB as Python strings ({held / text_bytes:.2f}x)")
    lexical_peak, lexical_kept, lexical = traced(lambda: LexicalIndex.build(snapshot.text_files()))
    chunk_peak, chunk_kept, _ = traced(lambda: ChunkIndex.of_files(lexical))
    print(f"whole-file index    peak {lexical_peak / MB:5.1f} MB ({lexical_peak / text_bytes:.2f}x), keeps {lexical_kept / MB:5.1f} MB ({lexical_kept / text_bytes:.2f}x)")
    print(f"tree chunk index    peak {chunk_peak / MB:5.1f} MB, keeps {chunk_kept / MB:5.1f} MB (read off the whole-file index)")
    tree_peak = max(lexical_peak, lexical_kept + chunk_peak)
    print(f"a tree, both        peak {tree_peak / MB:5.1f} MB above the text: text + index = {(held + tree_peak) / text_bytes:.2f}x the text at most")
    rows_peak, rows_kept, _ = traced(lambda: ChunkIndex.build(file_chunks(snapshot.text_files())))
    print(f"chunk rows index    peak {rows_peak / MB:5.1f} MB ({rows_peak / text_bytes:.2f}x), keeps {rows_kept / MB:5.1f} MB "
          f"(a release's rows, here one per file, built while the whole-file index is kept)")
    release_peak = max(lexical_peak, lexical_kept + rows_peak)
    print(f"a release, both     peak {release_peak / MB:5.1f} MB above the text: text + index = {(held + release_peak) / text_bytes:.2f}x the text at most")

    completed = subprocess.run([sys.executable, __file__, "--min-files", str(min_files)],
                               capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        print(f"fresh-process RSS   not measured: {completed.stderr.strip().splitlines()[-1:] or completed.returncode}")
        return
    rss = json.loads(completed.stdout.strip().splitlines()[-1])
    above = rss["peak_indexing_mb"] - rss["after_imports_mb"]
    print(f"fresh-process RSS   {rss['after_imports_mb']:.0f} MB after imports, peak {rss['peak_reading_mb']:.0f} MB reading the tree, "
          f"peak {rss['peak_indexing_mb']:.0f} MB indexing it")
    print(f"                    peak above the imports: {above:.0f} MB = {above * MB / rss['text_bytes']:.2f}x the text "
          f"(the text held once included)")


def rss_only(min_files: int) -> int:
    """Child of `memory_figures`: read the tree, index it as the plugin does, print peak RSS as JSON."""
    after_imports = peak_rss_mb()
    snapshot = read_tree(choose_packages(min_files))
    peak_reading = peak_rss_mb()
    indexes = build_indexes(snapshot)  # held until the figure is taken, as the plugin holds them
    print(json.dumps({"after_imports_mb": after_imports, "peak_reading_mb": peak_reading, "peak_indexing_mb": peak_rss_mb(),
                      "text_bytes": text_size(snapshot)[0], "files": len(indexes[0].paths)}))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The fresh process of the lexical benchmark's memory figures")
    parser.add_argument("--min-files", type=int, default=2000)
    sys.exit(rss_only(parser.parse_args().min_files))
