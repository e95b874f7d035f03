"""Index cache entries whose zstd checksum is valid but whose arrays break the index's invariants
(postings naming documents out of range, offsets that fall, lengths that disagree, a vocabulary
out of order, paths twice): each is refused at load with one warning and rebuilt, where it used
to load and fail items with an IndexError blamed on the arms, or change a ranking silently."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import zstandard

from cache_helpers import CORPUS, SAMPLES, build, results, run, warnings_saying
from pytest_retrieval_bench.index import cache as cache_module
from pytest_retrieval_bench.index.cache import IndexCache


# -- entries rewritten with a valid checksum ---------------------------------------------------------


def rewrite_entry(path: Path, edit: Callable[[dict[str, np.ndarray]], None]) -> None:
    """Re-encode an entry with its arrays edited and a valid zstd checksum: only the invariants can tell."""
    body = memoryview(zstandard.ZstdDecompressor().decompress(path.read_bytes()[len(cache_module.MAGIC):]))
    size = int.from_bytes(body[:8], "big")
    header = json.loads(bytes(body[8 : 8 + size]))
    payload = body[8 + size :]
    arrays = {name: np.frombuffer(payload, dtype=np.dtype(dtype), count=length, offset=start).copy()
              for name, (dtype, length, start, _) in header["layout"].items()}
    edit(arrays)
    blobs, offset = [], 0
    for name in sorted(arrays):
        data = np.ascontiguousarray(arrays[name]).tobytes()
        header["layout"][name] = [arrays[name].dtype.str, len(arrays[name]), offset, len(data)]
        blobs.append(data)
        offset += len(data)
    new_payload = b"".join(blobs) + bytes(payload[header["arrays_bytes"] :])
    header.update(arrays_bytes=offset, payload_bytes=len(new_payload))
    encoded = json.dumps(header).encode()
    new_body = len(encoded).to_bytes(8, "big") + encoded + new_payload
    path.write_bytes(cache_module.MAGIC + zstandard.ZstdCompressor(write_checksum=True).compress(new_body))


def postings_prefix(arrays: dict[str, np.ndarray]) -> str:
    return sorted(name for name in arrays if name.endswith(".docs"))[0][: -len(".docs")]


def doc_out_of_range(arrays: dict[str, np.ndarray]) -> None:
    docs = arrays[postings_prefix(arrays) + ".docs"]
    docs[-1] = np.iinfo(docs.dtype).max


def offsets_fall(arrays: dict[str, np.ndarray]) -> None:
    offsets = arrays[postings_prefix(arrays) + ".offsets"]
    assert len(offsets) > 3 and offsets[2] > offsets[1]
    offsets[1], offsets[2] = offsets[2], offsets[1]


def lengths_disagree(arrays: dict[str, np.ndarray]) -> None:
    name = next(name for name in ("doc_lengths", "token_counts", "kinds") if name in arrays)
    arrays[name] = arrays[name][:-1]


def docs_not_ascending(arrays: dict[str, np.ndarray]) -> None:
    prefix = postings_prefix(arrays)
    offsets, docs = arrays[prefix + ".offsets"], arrays[prefix + ".docs"]
    term = next(term for term in range(len(offsets) - 1) if offsets[term + 1] - offsets[term] > 1)
    start = offsets[term]
    docs[start], docs[start + 1] = docs[start + 1], docs[start]


def terms_out_of_order(arrays: dict[str, np.ndarray]) -> None:
    """Two neighbouring terms of one length swapped in the vocabulary: each now finds the other's documents."""
    prefix = postings_prefix(arrays)
    blob, bounds = arrays[prefix + ".blob"], arrays[prefix + ".term_offsets"].astype(np.int64)
    lengths = np.diff(bounds)
    term = next(term for term in range(len(lengths) - 1) if lengths[term] == lengths[term + 1])
    start, middle, end = bounds[term], bounds[term + 1], bounds[term + 2]
    blob[start:end] = np.concatenate([blob[middle:end], blob[start:middle]])


def edges_out_of_range(arrays: dict[str, np.ndarray]) -> None:
    targets = arrays["edge_targets"]
    assert len(targets)
    targets[0] = len(arrays["kinds"])


@pytest.mark.parametrize("kind", ["lexical", "chunks", "repomap"])
@pytest.mark.parametrize("edit", [doc_out_of_range, offsets_fall, lengths_disagree, docs_not_ascending, terms_out_of_order])
def test_an_entry_breaking_an_invariant_is_rebuilt_with_a_warning(tmp_path: Path, kind: str, edit: Callable[..., None]) -> None:
    cache = IndexCache(tmp_path / "index")
    cache.store("a" * 64, kind, build(kind))
    [path] = list((tmp_path / "index").rglob("*.idx.zst"))
    assert cache.load("a" * 64, kind) is not None
    rewrite_entry(path, edit)
    assert cache_module.decode(cache_module.cache_key("a" * 64, kind), kind, path.read_bytes()) is not None, "its checksum is valid"
    with pytest.warns(UserWarning, match=f"index cache entry {path} breaks its index's invariants"):
        assert cache.load("a" * 64, kind) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.load("a" * 64, kind) is None, "still refused, and said once"


def test_a_repomap_entry_with_edges_out_of_range_is_rebuilt(tmp_path: Path) -> None:
    cache = IndexCache(tmp_path / "index")
    cache.store("a" * 64, "repomap", build("repomap"))
    [path] = list((tmp_path / "index").rglob("*.idx.zst"))
    rewrite_entry(path, edges_out_of_range)
    with pytest.warns(UserWarning, match="edge_targets holds"):
        assert cache.load("a" * 64, "repomap") is None


@pytest.mark.parametrize("kind", ["lexical", "chunks", "repomap"])
def test_paths_that_repeat_or_are_not_strings_break_an_invariant(kind: str) -> None:
    from pytest_retrieval_bench.index.invariants import check_index

    check_index(build(kind))
    for wrong in ("src/app.py", 7):
        index = build(kind)
        paths = index.label_values.paths if kind == "chunks" else index.paths
        paths[-1] = wrong
        with pytest.raises(ValueError, match="paths are not distinct strings"):
            check_index(index)


def test_a_term_sharing_a_long_prefix_is_ordered_by_the_bytes_after_it() -> None:
    """The order is compared 8 bytes at a time: terms equal over their first 8, 16 bytes, a term that
    is a prefix of the next, and a NUL byte (which pads a shorter term) are each ordered as bytes are."""
    from pytest_retrieval_bench.index.invariants import _strictly_sorted

    def check(terms: list[bytes]) -> None:
        bounds = np.cumsum([0] + [len(term) for term in terms])
        _strictly_sorted("t", b"".join(terms), bounds)

    ordered = [b"", b"\0", b"a", b"a\0", b"abcdefgh", b"abcdefgh\0", b"abcdefghabcdefgh", b"abcdefghabcdefgh1", b"abcdefghabcdefgi", b"b"]
    assert ordered == sorted(ordered)
    check(ordered)
    for position in range(len(ordered) - 1):
        swapped = list(ordered)
        swapped[position], swapped[position + 1] = swapped[position + 1], swapped[position]
        with pytest.raises(ValueError, match="strictly increasing"):
            check(swapped)
        with pytest.raises(ValueError, match="strictly increasing"):
            check(ordered[: position + 1] + [ordered[position]] + ordered[position + 1 :])  # a term twice


def test_index_entries_with_postings_out_of_range_are_rebuilt_in_a_run(pytester: pytest.Pytester) -> None:
    cache = pytester.path / "cache"
    args = (f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", f"--bench-cache-dir={cache}")
    _, first = run(pytester, "first.json", *args)
    entries = sorted((cache / "index").rglob("*.idx.zst"))
    assert len(entries) >= 3
    for entry in entries:
        rewrite_entry(entry, doc_out_of_range)
    result, second = run(pytester, "second.json", *args)
    assert results(second) == results(first)
    assert warnings_saying(result, "breaks its index's invariants") == len(entries)
    third, _ = run(pytester, "third.json", *args)
    assert warnings_saying(third, "breaks its index's invariants") == 0, "the rebuilt entries were written back"


