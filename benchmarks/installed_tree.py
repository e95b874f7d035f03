"""The lexical benchmark's corpus: installed package directories read as one tree snapshot.

The tree is the installed `numpy`, `pytest` and `_pytest` package directories, plus further
installed packages in a fixed order until it holds at least the wanted number of text files,
every path prefixed by its package name.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.corpus.tree import read_directory
from pytest_retrieval_bench.index.chunk_index import ChunkIndex
from pytest_retrieval_bench.index.postings import LexicalIndex

BASE_PACKAGES = ("numpy", "pytest", "_pytest")
EXTRA_PACKAGES = ("scipy", "pygments", "pip", "setuptools", "hypothesis")


def package_directory(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin).parent if spec.origin else None


def choose_packages(min_files: int) -> list[tuple[str, Path]]:
    """The base packages, then extras in a fixed order until the tree is big enough."""
    chosen: list[tuple[str, Path]] = []
    text_files = 0
    for name in BASE_PACKAGES + EXTRA_PACKAGES:
        if name in EXTRA_PACKAGES and text_files >= min_files:
            break
        directory = package_directory(name)
        if directory is None or not directory.is_dir():
            continue
        chosen.append((name, directory))
        text_files += len(read_directory(directory, "probe/probe", "0" * 40).texts)
    return chosen


def read_tree(packages: list[tuple[str, Path]]) -> Snapshot:
    """One snapshot of several directories, paths prefixed by the package name."""
    texts: dict[str, str] = {}
    others: list[str] = []
    for name, directory in packages:
        part = read_directory(directory, f"installed/{name}", "0" * 40)
        texts.update((f"{name}/{path}", text) for path, text in part.texts.items())
        others.extend(f"{name}/{path}" for path in part.other_paths)
    return Snapshot(repo="installed/packages", commit="0" * 40, origin="installed packages", texts=texts, other_paths=tuple(sorted(others)))


def build_indexes(snapshot: Snapshot) -> tuple[LexicalIndex, ChunkIndex]:
    """As the plugin indexes a tree: the whole-file index, and the chunk index read off it."""
    lexical = LexicalIndex.build(snapshot.text_files())
    return lexical, ChunkIndex.of_files(lexical)
