"""Removing what the plugin made, whatever an arm did inside it: any depth, read-only directories,
symbolic links (removed, never followed); and snapshot paths deeper than the documented bound."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from pytest_retrieval_bench.files.remove_tree import MAX_OPEN, allow_writes, remove_tree
from pytest_retrieval_bench.corpus.snapshot import MAX_PATH_DEPTH, check_relative_path

RELEASE = Path(__file__).resolve().parent.parent / "testdata" / "release"
GIN_CHUNKS = RELEASE / "corpus" / "synthetic_v1" / "acme__gin-lite" / "5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5.chunks.jsonl"


def _deep_tree(root: Path, depth: int) -> None:
    """`depth` nested directories named `d`, each with a file, built relative to descriptors (past PATH_MAX)."""
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        os.close(os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
        deeper = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.symlink(os.fspath(root.parent / "outside"), "link", dir_fd=fd)
    os.close(fd)


DEEP = 2200
"""Levels of the deep tree: past the default recursion limit (1,000), and with two bytes a level past PATH_MAX."""


def test_a_tree_deeper_than_the_recursion_limit_and_path_max_is_removed(tmp_path: Path) -> None:
    (tmp_path / "outside").write_text("kept")
    root = tmp_path / "tree"
    _deep_tree(root, DEEP)
    assert DEEP > sys.getrecursionlimit() and len(os.fsencode(root)) + 2 * DEEP > os.pathconf(tmp_path, "PC_PATH_MAX")
    if sys.version_info < (3, 13):  # 3.13's rmtree keeps its own stack; earlier ones recurse once per level
        with pytest.raises((RecursionError, OSError)):
            shutil.rmtree(root)  # what the plugin used before
    remove_tree(root)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["outside"]
    assert (tmp_path / "outside").read_text() == "kept"  # the link was removed, not followed


def test_read_only_directories_and_files_are_removed(tmp_path: Path) -> None:
    root = tmp_path / "copy"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "file.txt").write_text("x")
    (root / "a" / "b" / "file.txt").chmod(0o400)
    for directory in (root / "a" / "b", root / "a", root):
        directory.chmod(stat.S_IRUSR | stat.S_IXUSR)
    remove_tree(root)
    assert not root.exists()


def test_hoisting_keeps_no_more_than_its_bound_of_descriptors_and_leaves_nothing(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    _deep_tree(root, MAX_OPEN * 3 + 1)
    before = len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").is_dir() else None
    remove_tree(root)
    assert not root.exists() and [path.name for path in tmp_path.iterdir()] == []
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before  # every descriptor closed


def test_a_missing_path_is_no_error_and_a_file_is_removed(tmp_path: Path) -> None:
    remove_tree(tmp_path / "absent")
    (tmp_path / "file").write_text("x")
    remove_tree(tmp_path / "file")
    assert not (tmp_path / "file").exists()


def test_a_path_deeper_than_the_bound_is_refused_and_one_at_it_is_not() -> None:
    at_bound = "/".join(["d"] * MAX_PATH_DEPTH) + "/x.go"
    assert check_relative_path(at_bound) is None
    reason = check_relative_path("d/" + at_bound)
    assert reason is not None and f"{MAX_PATH_DEPTH + 1} directories deep (at most {MAX_PATH_DEPTH})" in reason


def test_a_chunk_row_2200_directories_deep_is_a_corpus_error_naming_the_line(pytester: pytest.Pytester) -> None:
    rows = [json.loads(line) for line in GIN_CHUNKS.read_text().splitlines()]
    deep = dict(rows[0], path="/".join(["d"] * 2200) + "/x.go", chunk_id="deadbeefdeadbeefdeadbeef")
    corpus = pytester.path / "corpus" / "acme__gin-lite"
    corpus.mkdir(parents=True)
    (corpus / GIN_CHUNKS.name).write_text("".join(json.dumps(row) + "\n" for row in rows + [deep]))
    samples = [line for line in (RELEASE / "benchmark" / "synthetic_v1" / "samples.jsonl").read_text().splitlines()
               if json.loads(line)["repo"] == "acme/gin-lite"]
    (pytester.path / "s.jsonl").write_text("\n".join(samples) + "\n")
    result = pytester.runpytest_subprocess("--bench-samples=s.jsonl", "--bench-corpus=corpus", "--bench-arms=grep", "-p", "no:cacheprovider")
    assert "RecursionError" not in result.stdout.str()
    assert f"{GIN_CHUNKS.name}:{len(rows) + 1}: field 'path'" in result.stdout.str()
    assert "2200 directories deep" in result.stdout.str()
    assert result.parseoutcomes()["errors"] == len(samples) - 1  # one unlabeled sample is skipped


def test_a_file_name_that_is_not_utf8_is_left_out_and_listed_never_crashing_the_report(pytester: pytest.Pytester) -> None:
    tree = pytester.path / "tree"
    shutil.copytree(Path(__file__).resolve().parent.parent / "testdata" / "trees" / "acme__gin-lite", tree)
    os.close(os.open(os.path.join(os.fsencode(tree), b"caf\xe9.go"), os.O_CREAT | os.O_WRONLY))
    with open(os.path.join(os.fsencode(tree), b"caf\xe9.go"), "w") as handle:
        handle.write("package gin\n// router middleware context\n")
    samples = Path(__file__).resolve().parent.parent / "testdata" / "formats" / "contextbench.jsonl"
    result = pytester.runpytest_subprocess(f"--bench-samples={samples}", "--bench-arms=grep,bm25:all", "--bench-report=out.json",
                                           "--bench-snapshot=acme/gin-lite@5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5=tree", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()[-3000:]
    report = json.loads((pytester.path / "out.json").read_text())
    assert {"kind": "undecodable_path", "path": "caf\\xe9.go", "snapshot": "acme/gin-lite@5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5"} in report["snapshot_problems"]
    assert "not valid UTF-8 and were left out (caf\\xe9.go)" in result.stdout.str()
    assert not any("caf" in path for entry in report["details"] for record in entry["arms"].values() for path in record["ranking"])


def test_allow_writes_gives_the_owner_write_permission_back_below_a_tree_never_through_a_link(tmp_path: Path) -> None:
    """What the reset of a copy an arm made read-only relies on (the mode bits are checked, so this
    holds for root too, whom read-only directories do not stop)."""
    root, outside = tmp_path / "copy", tmp_path / "outside"
    (root / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    (root / "a" / "b" / "file.txt").write_text("x")
    (root / "a" / "out").symlink_to(outside)
    for path, mode in ((root / "a" / "b" / "file.txt", 0o444), (root / "a" / "b", 0o555), (root / "a", 0o500), (root, 0o555), (outside, 0o555)):
        path.chmod(mode)
    assert allow_writes(root) is True
    assert [stat.S_IMODE(path.stat().st_mode) & stat.S_IWUSR for path in (root, root / "a", root / "a" / "b", root / "a" / "b" / "file.txt")] == [stat.S_IWUSR] * 4
    assert stat.S_IMODE(outside.stat().st_mode) == 0o555  # a link is not followed
    assert allow_writes(root) is False  # nothing left to change
    outside.chmod(0o755)
