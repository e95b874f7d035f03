"""The agents' grep index kept in the run's index cache: a warm run loads it before the first grep,
a damaged or unsound entry is rebuilt, and no report changes for it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from pytest_retrieval_bench.arms.agents.grep_cache import KIND, GrepIndexCache, grep_key, sound_grep_index
from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles
from pytest_retrieval_bench.index.cache import IndexCache, pack_entry, unpack_entry
from test_grep_index import PATTERNS, TEXTS

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / "testdata" / "release"
SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
DIGEST = "0" * 64


def without_times(value: Any) -> Any:
    """What may differ between runs of the same inputs set to 0: wall times (an item's, a call's)."""
    if isinstance(value, dict):
        return {key: (0 if key in ("wall_ms", "wall_seconds") else without_times(item)) for key, item in value.items()}
    return [without_times(item) for item in value] if isinstance(value, list) else value


def comparable(path: Path) -> Any:
    report = json.loads(path.read_bytes())
    report.pop("latency")
    return without_times(report)


def _run(directory: Path, name: str) -> str:
    cache = [] if name == "throwaway" else [f"--bench-cache-dir={directory / 'cache'}"]  # without: a cache of the run's own, removed at its end
    result = subprocess.run([sys.executable, "-m", "pytest", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=arb-closed-tool",
                             *cache, f"--bench-report={name}.json", "-q", "-p", "no:cacheprovider",
                             "-p", "no:hypothesispytest", f"--rootdir={directory}"], cwd=directory, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    return result.stdout


def _entries(directory: Path) -> list[Path]:
    return sorted((directory / "cache" / "index").rglob("*.idx.zst"))


def _unsound(entry: Path) -> None:
    """The entry rewritten whole and well-formed (checksum intact) but naming a file past the last."""
    key = entry.name.removesuffix(".idx.zst")
    arrays, lists, _ = unpack_entry(key, entry.read_bytes())
    arrays = dict(arrays, files=np.full_like(arrays["files"], len(lists["paths"])))
    entry.write_bytes(b"".join(pack_entry(key, arrays, lists)))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A cold run (the cache empty), a warm one, one with an entry's bytes flipped, one with an
    entry rewritten unsound, one with a cache no later run reads: each run's output, report, and
    the entries after it."""
    directory = tmp_path_factory.mktemp("grep-cache")
    shutil.copytree(RELEASE, directory / "release")
    found: dict[str, Any] = {}
    damage: dict[str, Callable[[Path], None]] = {
        "cold": lambda entry: None, "warm": lambda entry: None,
        "flipped": lambda entry: entry.write_bytes((data := bytearray(entry.read_bytes())) and bytes(data[:60] + bytes([data[60] ^ 0xFF]) + data[61:])),
        "unsound": _unsound, "throwaway": lambda entry: None,
    }
    for name, damaging in damage.items():
        entries = _entries(directory)
        if entries:
            damaging(entries[0])
        found[name] = {"out": _run(directory, name), "report": comparable(directory / f"{name}.json"),
                       "entries": {entry.name: entry.read_bytes() for entry in _entries(directory)}}
    return found


def test_a_cold_run_builds_and_stores_each_snapshots_grep_index(runs: dict[str, Any]) -> None:
    assert "3 snapshots set up: 3 indexes built" in runs["cold"]["out"] and "0 loaded from cache" in runs["cold"]["out"]
    assert len(runs["cold"]["entries"]) == 3


def test_a_warm_run_loads_every_grep_index_and_writes_the_same_report(runs: dict[str, Any]) -> None:
    assert "3 snapshots set up: 0 indexes built" in runs["warm"]["out"] and "3 loaded from cache" in runs["warm"]["out"]
    assert runs["warm"]["report"] == runs["cold"]["report"]
    assert runs["warm"]["entries"] == runs["cold"]["entries"]


@pytest.mark.parametrize("damage", ["flipped", "unsound"])
def test_a_damaged_or_unsound_entry_is_rebuilt_and_changes_nothing(runs: dict[str, Any], damage: str) -> None:
    out = runs[damage]["out"]
    assert "1 index built" in out and "2 loaded from cache" in out, out
    assert ("breaks its index's invariants (files holds" in out) == (damage == "unsound")
    assert runs[damage]["report"] == runs["cold"]["report"]
    assert runs[damage]["entries"] == runs["cold"]["entries"]  # rebuilt and stored again, byte for byte


def test_a_run_whose_cache_no_later_run_reads_builds_no_grep_index(runs: dict[str, Any]) -> None:
    assert "3 snapshots set up: 0 indexes built" in runs["throwaway"]["out"] and "0 loaded from cache" in runs["throwaway"]["out"]
    assert runs["throwaway"]["report"] == runs["cold"]["report"]


def test_tool_files_build_at_the_first_grep_then_load_prepared(tmp_path: Path) -> None:
    cache = GrepIndexCache(IndexCache(tmp_path))
    paths = list(TEXTS)
    assert cache.load(DIGEST, paths) is None
    cold = ToolFiles(dict(TEXTS), when_built=cache.built_hook(DIGEST, "s"))
    expected = [cold.grep(pattern, 12) for pattern in PATTERNS]
    assert cache.built == 1 and cold._index is not None  # built at the first grep, not after INDEX_AFTER_SCANS scans
    loaded = cache.load(DIGEST, paths)
    assert loaded is not None and cache.loaded == 1
    assert [ToolFiles(dict(TEXTS), grep_index=loaded).grep(pattern, 12) for pattern in PATTERNS] == expected
    assert cache.load(DIGEST, paths[::-1]) is None  # the same files in another order: its hits' positions would differ
    assert cache.load("1" * 64, paths) is None


def _arrays(tmp_path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    files = ToolFiles(dict(TEXTS))
    index = files.prepare_grep()
    key = grep_key(DIGEST)
    arrays, lists, _ = unpack_entry(key, b"".join(pack_entry(key, index.arrays(), {"paths": index.paths.paths})))
    return {name: array.copy() for name, array in arrays.items()}, lists


def _break(arrays: dict[str, np.ndarray], name: str, change: Callable[[np.ndarray], None]) -> None:
    change(arrays[name])


BREAKS: dict[str, Callable[[dict[str, np.ndarray]], None]] = {
    "files": lambda arrays: _break(arrays, "files", lambda a: a.__setitem__(0, -1)),
    "counts": lambda arrays: _break(arrays, "counts", lambda a: a.__setitem__(0, 0)),
    "rows": lambda arrays: _break(arrays, "rows", lambda a: a.__setitem__(1, a[-1] + 1)),
    "by_length": lambda arrays: _break(arrays, "by_length", lambda a: a.__setitem__(1, a[0])),
    "longest_first": lambda arrays: _break(arrays, "longest_first", lambda a: a.__setitem__(-1, a[0] + 1)),
    "joined": lambda arrays: _break(arrays, "joined", lambda a: a.__setitem__(int(np.flatnonzero(a == 32)[0]), ord("a"))),
    "trigram_places": lambda arrays: _break(arrays, "trigram_places", lambda a: a.__setitem__(slice(None), a[::-1].copy())),
    "trigram_codes": lambda arrays: _break(arrays, "trigram_codes", lambda a: a.__setitem__(0, 1 << 24)),
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_an_entry_breaking_an_invariant_is_refused_naming_it(tmp_path: Path, name: str) -> None:
    arrays, _ = _arrays(tmp_path)
    sound_grep_index(arrays, list(TEXTS))  # as written: sound
    BREAKS[name](arrays)
    with pytest.raises(ValueError, match=name):
        sound_grep_index(arrays, list(TEXTS))


def test_the_grep_kind_has_its_own_key() -> None:
    assert KIND == "grep" and grep_key(DIGEST) != grep_key("1" * 64) and len(grep_key(DIGEST)) == 64
