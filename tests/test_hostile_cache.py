"""Cache state that lies: a file digest with one hex digit changed, an unpacked release edited or
missing a chunk file, a cache directory on a full disk. Nothing under the cache is believed: each
is found, rebuilt or gone around with one warning, and the report is the one a clean cache gives
(index entries that break their invariants: test_hostile_index_entries.py)."""

from __future__ import annotations

import codecs
import errno
import json
import os
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from cache_helpers import ARCHIVE, ARMS, CORPUS, GIN_CHUNKS, SAMPLES, build, results, run, warnings_saying
from pytest_retrieval_bench.index.cache import IndexCache
from pytest_retrieval_bench.files.sha256 import file_sha256


# -- 1. file digests -----------------------------------------------------------------------------------------------


def test_a_digest_entry_with_one_hex_digit_changed_is_recomputed(pytester: pytest.Pytester) -> None:
    """The bundled corpus is old enough not to be racy, so its digests are kept; one hex digit changed
    in each kept entry must not reach the registration (nor make a rerun look like another corpus)."""
    cache = pytester.path / "cache"
    _, first = run(pytester, "first.json", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", f"--bench-cache-dir={cache}")
    digests = first["registration"]["corpus"][0]["chunk_files_sha256"]
    assert digests[GIN_CHUNKS] == file_sha256(CORPUS / GIN_CHUNKS)
    entries = sorted((cache / "digests").rglob("*.digest"))
    edited = 0
    for entry in entries:
        data = entry.read_bytes()
        for digest in digests.values():
            if digest.encode() in data:
                wrong = digest[:10] + ("0" if digest[10] != "0" else "1") + digest[11:]
                entry.write_bytes(data.replace(digest.encode(), wrong.encode()))
                edited += 1
    assert edited == len(digests) == 3, "every chunk file's digest was kept, and edited"
    _, second = run(pytester, "second.json", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", f"--bench-cache-dir={cache}")
    assert second["registration"]["corpus"] == first["registration"]["corpus"]
    assert all(digest.encode() in b"".join(entry.read_bytes() for entry in entries) for digest in digests.values()), "entries rewritten"


def test_a_digest_entry_is_believed_only_when_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_retrieval_bench.corpus import file_digests

    monkeypatch.setattr(file_digests, "RACY_SECONDS", 0.0)
    path = tmp_path / "a.chunks.jsonl"
    path.write_bytes(b'{"path": "a"}\n')
    truth = file_sha256(path)
    assert file_digests.FileDigests(tmp_path / "digests").sha256(path) == truth
    [entry] = list((tmp_path / "digests").rglob("*.digest"))
    kept = entry.read_bytes()
    for wrong in ("f" * 64, truth[:-1] + "Z", truth[:-1], 17):  # another digest, not hex, short, not a string
        entry.write_bytes(kept.replace(truth.encode(), json.dumps(wrong).strip('"').encode()))
        assert file_digests.FileDigests(tmp_path / "digests").sha256(path) == truth, wrong
        assert entry.read_bytes() == kept, "the entry is rewritten whole"


# -- 2. unpacked releases ------------------------------------------------------------------------------------------


def unpacked(cache: Path) -> Path:
    [tree] = list((cache / "releases").iterdir())
    return tree / "corpus"


def rot13_texts(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**row, "text": codecs.encode(row["text"], "rot13")}) + "\n" for row in rows))


def same_size_edit(path: Path) -> None:
    data = path.read_bytes()
    assert data.count(b"return") > 1
    path.write_bytes(data.replace(b"return", b"nruter"))


@pytest.mark.parametrize("damage", [pytest.param(lambda path: path.unlink(), id="deleted"), pytest.param(rot13_texts, id="edited"),
                                    pytest.param(same_size_edit, id="edited-same-size")])
def test_an_unpacked_release_that_differs_is_unpacked_again(pytester: pytest.Pytester, damage: Callable[[Path], None]) -> None:
    cache = pytester.path / "cache"
    _, first = run(pytester, "first.json", f"--bench-samples={ARCHIVE}", f"--bench-cache-dir={cache}")
    chunk_file = unpacked(cache) / "synthetic_v1" / GIN_CHUNKS
    size = chunk_file.stat().st_size
    damage(chunk_file)
    result, second = run(pytester, "second.json", f"--bench-samples={ARCHIVE}", f"--bench-cache-dir={cache}")
    assert results(second) == results(first) and second["registration"] == first["registration"]
    assert warnings_saying(result, f"the unpacked release {unpacked(cache).parent} differs from {ARCHIVE}") == 1
    assert warnings_saying(result, "unpacked again") == 1 and str(chunk_file) in result.stdout.str()
    assert chunk_file.stat().st_size == size and file_sha256(chunk_file) == file_sha256(CORPUS / GIN_CHUNKS)
    third, _ = run(pytester, "third.json", f"--bench-samples={ARCHIVE}", f"--bench-cache-dir={cache}")
    assert warnings_saying(third, "unpacked again") == 0


def test_a_file_added_to_an_unpacked_release_is_found(tmp_path: Path) -> None:
    from pytest_retrieval_bench.corpus.release import ReleaseCorpus, difference

    corpus = ReleaseCorpus(ARCHIVE, "d" * 64, tmp_path)
    [directory] = corpus()
    assert difference(corpus.final) is None
    (directory / "extra.chunks.jsonl").write_text("{}\n")
    assert difference(corpus.final) == f"{directory / 'extra.chunks.jsonl'} is not in the archive"
    with pytest.warns(UserWarning, match="is not in the archive"):
        assert ReleaseCorpus(ARCHIVE, "d" * 64, tmp_path)() == [directory]
    assert not (directory / "extra.chunks.jsonl").exists()


@pytest.mark.parametrize("leftover", ["incomplete", "without-record", "damaged-record"])
def test_an_unpacked_tree_without_a_whole_record_is_unpacked_again(tmp_path: Path, leftover: str) -> None:
    """A tree left by a crash before its `.complete`, or whose record of the unpack is missing or
    edited, cannot be checked, so it is not used."""
    from pytest_retrieval_bench.corpus.release import MANIFEST, ReleaseCorpus

    final = ReleaseCorpus(ARCHIVE, "d" * 64, tmp_path).final
    if leftover == "incomplete":
        (final / "corpus" / "synthetic_v1").mkdir(parents=True)
        (final / "corpus" / "synthetic_v1" / "corpus_manifest.jsonl").write_text("")
    else:
        ReleaseCorpus(ARCHIVE, "d" * 64, tmp_path)()
        record = final / MANIFEST
        if leftover == "without-record":
            record.unlink()
        else:
            record.write_bytes(record.read_bytes().replace(b'"corpus/', b'"corpuz/', 1))
    with pytest.warns(UserWarning, match="unpacked again"):
        [directory] = ReleaseCorpus(ARCHIVE, "d" * 64, tmp_path)()
    assert file_sha256(directory / "corpus_manifest.jsonl") == file_sha256(CORPUS / "corpus_manifest.jsonl")
    assert sorted(path.name for path in final.parent.iterdir()) == [final.name], "no staging or stale tree left"


# -- 4. a cache directory that cannot be written ----------------------------------------------------------------


@pytest.fixture
def small_disks(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """A factory of 64 KiB tmpfs mounts (too small for the bundled release's corpus), unmounted after."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted: list[Path] = []

    def mount(name: str) -> Path:
        point = tmp_path / name
        point.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(point)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(point)
        return point

    try:
        yield mount
    finally:
        for point in mounted:
            subprocess.run(["umount", str(point)], check=True)


@pytest.fixture
def full_disk(small_disks: Callable[[str], Path]) -> Path:
    """A tmpfs filled up: every write under it fails with ENOSPC."""
    mount = small_disks("full")
    with (mount / "filler").open("wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 4096)
        except OSError as error:
            assert error.errno == errno.ENOSPC
    return mount


@pytest.mark.parametrize("inputs", [pytest.param((f"--bench-samples={ARCHIVE}",), id="release"),
                                    pytest.param((f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}"), id="corpus")])
def test_a_full_disk_under_the_cache_is_one_warning_and_the_run_goes_on_uncached(pytester: pytest.Pytester, full_disk: Path,
                                                                                  inputs: tuple[str, ...]) -> None:
    _, expected = run(pytester, "expected.json", *inputs, f"--bench-cache-dir={pytester.path / 'roomy'}")
    cache = full_disk / "cache"
    result, report = run(pytester, "full.json", *inputs, f"--bench-cache-dir={cache}")
    assert results(report) == results(expected)
    text = result.stdout.str() + result.stderr.str()
    assert warnings_saying(result, f"the cache directory {cache} cannot be written (No space left on device)") == 1, text[-3000:]
    assert warnings_saying(result, "CacheWarning") == 1 and "OSError" not in text
    assert [path.name for path in full_disk.rglob("*") if not path.is_dir()] == ["filler"], "nothing half-written is left"


def test_a_full_disk_under_the_cache_and_the_temporary_directory_fails_each_snapshot_in_one_line(
        pytester: pytest.Pytester, full_disk: Path, small_disks: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's temporary directory on a disk with room for the run's own files, not for the corpus."""
    cache, scratch = full_disk / "cache", small_disks("scratch")
    monkeypatch.setenv("TMPDIR", str(scratch))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", ARMS, f"--bench-samples={ARCHIVE}", f"--bench-cache-dir={cache}", timeout=300)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == 1, text[-3000:]
    assert "Traceback" not in text and "OSError" not in text, text[-3000:]
    assert f"cannot unpack {ARCHIVE}: the cache directory {cache / 'releases'}: No space left on device; the run's directory " in text
    shown = [line for line in result.stdout.lines if "cannot unpack" in line and not line.startswith(("FAILED", "ERROR "))]  # short summary aside (whole on a CI)
    assert len(shown) == 3, shown  # once per snapshot (its first item); the snapshot's other items point at it
    assert [path.name for path in full_disk.rglob("*") if not path.is_dir()] == ["filler"]
    assert list(scratch.iterdir()) == [], "the run's directory is removed, the half-unpacked corpus with it"


def test_a_full_disk_under_the_cache_and_the_run_directory_is_one_error_found_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_retrieval_bench.corpus import release
    from pytest_retrieval_bench.errors import SnapshotError
    from pytest_retrieval_bench.index.cache_writes import CacheWrites

    tries: list[Path] = []

    def no_space(archive: Path, final: Path) -> None:
        tries.append(final)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(release, "_unpack", no_space)
    writes = CacheWrites(tmp_path / "cache")
    corpus = release.ReleaseCorpus(ARCHIVE, "d" * 64, tmp_path / "cache", tmp_path / "run", writes)
    with pytest.warns(UserWarning, match=f"the cache directory {tmp_path / 'cache'} cannot be written") as caught:
        with pytest.raises(SnapshotError) as error:
            corpus()
    assert len(caught) == 1
    assert str(error.value) == (f"cannot unpack {ARCHIVE}: the cache directory {tmp_path / 'cache' / 'releases'}: No space left on device; "
                                f"the run's directory {tmp_path / 'run'}: No space left on device")
    assert writes.stopped is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(5):
            with pytest.raises(SnapshotError, match="No space left on device"):
                corpus()
    assert tries == [corpus.final, corpus.fallback], "tried once in each directory, not again per item"


def test_the_first_lasting_write_failure_stops_every_cache_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_retrieval_bench.corpus import file_digests
    from pytest_retrieval_bench.index import cache_writes

    monkeypatch.setattr(file_digests, "RACY_SECONDS", 0.0)
    calls: list[str] = []

    def no_space(prefix: str, dir: str) -> tuple[int, str]:
        calls.append(dir)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(cache_writes.tempfile, "mkstemp", no_space)
    writes = cache_writes.CacheWrites(tmp_path / "cache")
    cache = IndexCache(tmp_path / "cache" / "index", writes)
    with pytest.warns(UserWarning) as caught:
        for kind in ("lexical", "chunks", "repomap"):
            cache.store("a" * 64, kind, build(kind))
            assert cache.load("a" * 64, kind) is None
        path = tmp_path / "old.txt"
        path.write_text("x")
        os.utime(path, ns=(0, 0))
        assert file_digests.FileDigests(tmp_path / "cache" / "digests", writes).sha256(path) == file_sha256(path)
    assert [str(warning.message) for warning in caught] == [
        f"the cache directory {tmp_path / 'cache'} cannot be written (No space left on device): the run goes on uncached "
        "(index entries, read receipts and file digests are not kept)"]
    assert len(calls) == 1, "no write is tried after the first lasting failure"
    assert not list((tmp_path / "cache").rglob(".tmp-*"))


def test_an_unpack_failing_half_way_leaves_no_staging_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_retrieval_bench.corpus import release

    real_open = Path.open
    opened: list[Path] = []

    def filling(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode == "wb" and ".unpack-" in str(self) and str(self).startswith(str(tmp_path / "cache")):
            opened.append(self)
            if len(opened) > 1:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", filling)
    with pytest.warns(UserWarning, match="cannot be written"):
        [directory] = release.ReleaseCorpus(ARCHIVE, "d" * 64, tmp_path / "cache", tmp_path / "run")()
    assert directory.is_relative_to(tmp_path / "run")
    assert sorted(path.name for path in (tmp_path / "cache" / "releases").iterdir()) == []
    assert sorted(path.name for path in directory.iterdir()) == sorted(path.name for path in CORPUS.iterdir())
    shutil.rmtree(tmp_path / "run")
