"""Private copies that could lead out: symbolic links in a snapshot directory or committed in git,
a file that is also a directory, a copy that fails half way. A copy holds the snapshot's regular
files only, is checked before use, and a copy that cannot be made is an error for every item of its
snapshot; nothing outside the run's own temporary directory changes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_retrieval_bench.corpus.copies import PrivateCopies
from pytest_retrieval_bench.corpus.copy_files import check_copy, find_path_clash
from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.corpus.tree import read_directory, read_git_tree
from pytest_retrieval_bench.errors import SnapshotError

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
GIN_TREE = TESTDATA / "trees" / "acme__gin-lite"
GIN_KEY = "acme/gin-lite@5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5"

# A command arm that looks for links in its copy and writes a file into every directory it can reach,
# following links: were a link kept, the write would land outside the copy.
PROBE = """
import json, os, sys
links = [os.path.join(d, n) for d, subdirs, files in os.walk(".") for n in subdirs + files if os.path.islink(os.path.join(d, n))]
reached = 0
for d, _subdirs, _files in os.walk(".", followlinks=True):
    if "/.git" in d + "/":
        continue
    with open(os.path.join(d, "written-by-arm.txt"), "w") as handle:
        handle.write("x")
    reached += 1
with open(os.environ["PROBE_LOG"], "a") as log:
    log.write(json.dumps({"links": links, "reached": reached}) + "\\n")
print(json.dumps({"results": [{"path": "gin.go"}]}))
"""


def tree_digest(root: Path) -> str:
    """Every entry below root (links as their targets, not followed), with file bytes."""
    digest = hashlib.sha256()
    for directory, subdirs, files in os.walk(root, followlinks=False):
        subdirs.sort()
        for name in sorted(subdirs + files):
            full = Path(directory, name)
            digest.update(str(full.relative_to(root)).encode() + b"\0")
            if full.is_symlink():
                digest.update(b"L" + os.readlink(full).encode())
            elif full.is_file():
                digest.update(hashlib.sha256(full.read_bytes()).digest())
    return digest.hexdigest()


def probe_arm(pytester: pytest.Pytester) -> list[str]:
    script = pytester.path / "probe.py"
    script.write_text(PROBE)
    spec = {"argv": [sys.executable, str(script)], "ranking": "results[].path", "env": {"PROBE_LOG": str(pytester.path / "probe.log")}}
    return [f"--bench-command-arm=probe={json.dumps(spec)}", "--bench-arms=probe"]


def gin_samples(pytester: pytest.Pytester) -> Path:
    """The bundled release's gin-lite samples only (the snapshot these tests rebuild)."""
    source = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
    rows = [line for line in source.read_text().splitlines() if json.loads(line)["repo"] == "acme/gin-lite" and '"UNLABELED' not in line]
    path = pytester.path / "samples.jsonl"
    path.write_text("\n".join(rows) + "\n")
    return path


def run_probe(pytester: pytest.Pytester, snapshot_args: list[str]) -> tuple[pytest.RunResult, list[dict]]:
    samples = gin_samples(pytester)
    result = pytester.runpytest_subprocess(f"--bench-samples={samples}", *snapshot_args, *probe_arm(pytester),
                                           "-p", "no:cacheprovider", "--bench-no-cache", timeout=300)
    log = pytester.path / "probe.log"
    return result, [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def add_links(tree: Path, outside: Path) -> None:
    (tree / "inside-link.go").symlink_to("gin.go")
    (tree / "back").symlink_to(".")  # points back into the source tree itself
    (tree / "escape").symlink_to(os.path.relpath(outside, tree))
    (tree / "absolute").symlink_to(outside.resolve())


def test_links_in_a_snapshot_directory_are_left_out_of_the_copy(pytester: pytest.Pytester) -> None:
    tree, outside = pytester.path / "gin", pytester.path / "outside"
    shutil.copytree(GIN_TREE, tree)
    outside.mkdir()
    (outside / "keep.txt").write_text("mine\n")
    add_links(tree, outside)
    before = tree_digest(pytester.path / "gin"), tree_digest(outside)
    result, probes = run_probe(pytester, [f"--bench-snapshot={GIN_KEY}={tree}"])
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert probes and all(probe["links"] == [] for probe in probes)
    assert (tree_digest(tree), tree_digest(outside)) == before  # nothing written through a link


def git_repository(pytester: pytest.Pytester, outside: Path) -> tuple[Path, str]:
    repo = pytester.path / "repos" / "acme__gin-lite"
    shutil.copytree(GIN_TREE, repo)
    add_links(repo, outside)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "links", "--no-gpg-sign"]):
        subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    return repo, commit


def test_links_committed_in_a_git_worktree_are_left_out_of_the_copy(pytester: pytest.Pytester) -> None:
    outside = pytester.path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine\n")
    repo, commit = git_repository(pytester, outside)
    tracked = subprocess.run(["git", "-C", str(repo), "ls-files", "-s"], capture_output=True, text=True, check=True).stdout
    assert tracked.count("120000 ") == 4  # the links are in the commit
    before = tree_digest(repo), tree_digest(outside)
    samples = gin_samples(pytester)
    samples.write_text(samples.read_text().replace("5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5", commit))  # the samples name this commit
    result = pytester.runpytest_subprocess(f"--bench-samples={samples}", f"--bench-snapshot=acme/gin-lite@{commit}={repo}", *probe_arm(pytester),
                                           "-p", "no:cacheprovider", "--bench-no-cache", timeout=300)
    assert result.ret == 0, result.stdout.str()[-3000:]
    probes = [json.loads(line) for line in (pytester.path / "probe.log").read_text().splitlines()]
    assert probes and all(probe["links"] == [] for probe in probes)
    assert (tree_digest(repo), tree_digest(outside)) == before


def test_a_git_copy_keeps_the_executable_bit_and_leaves_links_out(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "lib.py").write_text("x = 1\n")
    (repo / "abs").symlink_to("/etc/passwd")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "c", "--no-gpg-sign"]):
        subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    snapshot = read_git_tree(repo, "o/r", commit)
    copies = PrivateCopies(tmp_path / "copies", owned_root=None)
    try:
        copy = copies.get(snapshot)
        assert sorted(p.name for p in copy.iterdir() if p.name != ".git") == ["lib.py", "run.sh"]
        assert os.access(copy / "run.sh", os.X_OK) and not os.access(copy / "lib.py", os.X_OK)
    finally:
        copies.cleanup()
        copies.restore_signals()


def add_undecodable_names(tree: Path) -> None:
    """A file and a directory whose names are not UTF-8: the snapshot leaves both out."""
    with open(os.path.join(os.fsencode(tree), b"bad\xff.go"), "w") as handle:
        handle.write("package gin\n")
    os.mkdir(os.path.join(os.fsencode(tree), b"dir\xfe"))
    with open(os.path.join(os.fsencode(tree), b"dir\xfe", b"inner.go"), "w") as handle:
        handle.write("package inner\n")


def test_a_name_that_is_not_utf8_is_left_out_of_a_directory_snapshot_s_copy_too(pytester: pytest.Pytester) -> None:
    """The copy holds exactly the snapshot's files, so its check passes and every command-arm item runs."""
    tree = pytester.path / "gin"
    shutil.copytree(GIN_TREE, tree)
    add_undecodable_names(tree)
    result, probes = run_probe(pytester, [f"--bench-snapshot={GIN_KEY}={tree}"])
    assert "does not match the snapshot" not in result.stdout.str()
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert probes and result.parseoutcomes()["passed"] > 0


def test_a_name_that_is_not_utf8_is_left_out_of_a_git_snapshot_s_copy_too(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "lib.py").write_text("x = 1\n")
    add_undecodable_names(repo)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "c", "--no-gpg-sign"]):
        subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    snapshot = read_git_tree(repo, "o/r", commit)
    assert snapshot.paths() == ["lib.py"] and snapshot.undecodable_paths == ("bad\\xff.go", "dir\\xfe/inner.go")
    copies = PrivateCopies(tmp_path / "copies", owned_root=None)
    try:
        copy = copies.get(snapshot)
        assert sorted(os.listdir(copy)) == [".git", "lib.py"]
    finally:
        copies.cleanup()
        copies.restore_signals()


def test_a_file_that_is_also_a_directory_names_both_rows(release_bench: pytest.Pytester) -> None:
    chunks = release_bench.path / "release/corpus/synthetic_v1/acme__gin-lite/5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5.chunks.jsonl"
    lines = chunks.read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    first_file = next(i for i, row in enumerate(rows) if row["kind"] == "file" and "/" not in row["path"])
    clash = dict(rows[first_file], path=rows[first_file]["path"] + "/inner.go")
    lines.append(json.dumps(clash))
    manifest = release_bench.path / "release/corpus/synthetic_v1/corpus_manifest.jsonl"
    entries = [json.loads(line) for line in manifest.read_text().splitlines()]
    entries[0].update(chunk_count=entries[0]["chunk_count"] + 1, file_count=entries[0]["file_count"] + 1)
    manifest.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    chunks.write_text("\n".join(lines) + "\n")
    result = release_bench.runpytest_subprocess("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl", "--bench-corpus=release/corpus/synthetic_v1",
                                                "--bench-arms=grep", "-p", "no:cacheprovider", "--bench-no-cache", timeout=300)
    text = result.stdout.str()
    assert result.ret == 1
    name = rows[first_file]["path"]
    assert f"file row {name!r} (line {first_file + 1}) is also a directory of file row {name + '/inner.go'!r}" in text
    assert f"chunks.jsonl:{len(lines)}" in text  # the second row's line


def test_find_path_clash() -> None:
    assert find_path_clash(["a/b.go", "a", "c"]) == ("a", "a/b.go")
    assert find_path_clash(["a/b/c.go", "a/b"]) == ("a/b", "a/b/c.go")
    assert find_path_clash(["ab", "a/b", "a.go"]) is None


def first_clash_by_prefixes(paths: list[str]) -> tuple[str, str] | None:
    """The definition: in path order, the first path with a proper prefix directory that is a path."""
    known = set(paths)
    for path in sorted(known):
        parts = path.split("/")
        for end in range(1, len(parts)):
            if "/".join(parts[:end]) in known:
                return "/".join(parts[:end]), path
    return None


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(alphabet="ab/", min_size=1, max_size=6), max_size=12))
def test_find_path_clash_is_the_first_clash_in_path_order(paths: list[str]) -> None:
    assert find_path_clash(paths) == first_clash_by_prefixes(paths)


class _HalfWriter:
    """Writes one file, then fails as a full disk would."""

    calls = 0

    def __call__(self, target: Path) -> None:
        type(self).calls += 1
        (target / "first.txt").write_text("one\n")
        raise OSError(28, "No space left on device", str(target / "second.txt"))


def test_a_copy_that_fails_half_way_is_never_reused(tmp_path: Path) -> None:
    snapshot = Snapshot(repo="o/r", commit="c", origin="test", texts={"first.txt": "one\n", "second.txt": "two\n"}, writer=_HalfWriter())
    copies = PrivateCopies(tmp_path / "copies", owned_root=None)
    try:
        for _ in range(3):
            with pytest.raises(SnapshotError, match=r"private copy of o/r@c could not be made: .*second.txt: No space left on device"):
                copies.get(snapshot)
        assert _HalfWriter.calls == 1  # the failure is remembered, not retried into a half copy
        assert list((tmp_path / "copies").iterdir()) == []  # the half-made copy is gone
    finally:
        copies.cleanup()
        copies.restore_signals()


def test_a_clash_in_memory_is_a_copy_error_not_a_partial_copy(tmp_path: Path) -> None:
    snapshot = Snapshot(repo="o/r", commit="c", origin="test", texts={"pkg": "file\n", "pkg/x.go": "package x\n"})
    copies = PrivateCopies(tmp_path / "copies", owned_root=None)
    try:
        with pytest.raises(SnapshotError, match=r"'pkg/x.go'.*'pkg' is a file|'pkg'.*already taken"):
            copies.get(snapshot)
        assert list((tmp_path / "copies").iterdir()) == []
    finally:
        copies.cleanup()
        copies.restore_signals()


def test_check_copy_refuses_links_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    check_copy(tmp_path, ["a.txt"])
    with pytest.raises(SnapshotError, match=r"missing \['b.txt'\]"):
        check_copy(tmp_path, ["a.txt", "b.txt"])
    (tmp_path / "link").symlink_to("a.txt")
    with pytest.raises(SnapshotError, match="'link' is not a regular file or directory"):
        check_copy(tmp_path, ["a.txt"])


def test_a_directory_snapshot_reads_no_link(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.txt").write_text("a")
    (tree / "link.txt").symlink_to("a.txt")
    (tree / "dirlink").symlink_to(".")
    snapshot = read_directory(tree, "o/r", "c")
    assert snapshot.paths() == ["a.txt"]
    copies = PrivateCopies(tmp_path / "copies", owned_root=None)
    try:
        copy = copies.get(snapshot)
        assert sorted(p.name for p in copy.iterdir() if p.name != ".git") == ["a.txt"]
    finally:
        copies.cleanup()
        copies.restore_signals()


MID_WRITE = """
import os, signal, sys
from pathlib import Path
from pytest_retrieval_bench.corpus.copies import PrivateCopies, make_base_directory
from pytest_retrieval_bench.corpus.snapshot import Snapshot

base = make_base_directory()
print(base, flush=True)
copies = PrivateCopies(base / "copies", owned_root=base)

def writer(target):
    (target / "first.txt").write_text("one")
    os.kill(os.getpid(), signal.SIGTERM)  # arrives while the copy is being written
    (target / "second.txt").write_text("two")

copies.get(Snapshot(repo="o/r", commit="c", origin="t", texts={"first.txt": "one", "second.txt": "two"}, writer=writer))
print("not reached", flush=True)
"""


def test_sigterm_while_a_copy_is_written_leaves_nothing(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", MID_WRITE], capture_output=True, text=True, timeout=60, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert result.returncode == -15, result.stderr
    assert "not reached" not in result.stdout
    base = Path(result.stdout.split()[0])
    assert base.parent == tmp_path and not base.exists()
    assert list(tmp_path.iterdir()) == []


def test_a_worker_writing_after_the_controller_removed_the_session_directory_does_not_recreate_it(tmp_path: Path) -> None:
    """Under xdist the controller owns the session directory; a signal makes it remove the directory
    while a worker may be half way through a copy. The worker's writes then fail; none re-creates it."""
    session = tmp_path / "pytest-retrieval-bench-x"
    session.mkdir()
    copies = PrivateCopies(session / "copies", owned_root=None)  # a worker's: it does not own the directory

    def writer(target: Path) -> None:
        (target / "a.txt").write_text("a")
        shutil.rmtree(session)  # the controller's clean-up, meanwhile

    texts = {"a.txt": "a", "deep/er/b.txt": "b"}
    try:
        with pytest.raises(SnapshotError, match="could not be made"):
            copies.get(Snapshot(repo="o/r", commit="c", origin="t", texts=texts, writer=lambda target: (writer(target), Snapshot(
                repo="o/r", commit="c", origin="t", texts=texts).write_to(target))))
        with pytest.raises(SnapshotError, match="could not be made"):
            copies.get(Snapshot(repo="o/r2", commit="c", origin="t", texts=texts))  # the next snapshot's copy
    finally:
        copies.cleanup()
        copies.restore_signals()
    assert list(tmp_path.iterdir()) == []


def test_a_fresh_copy_is_the_committed_tree_ignored_snapshot_files_included(tmp_path: Path) -> None:
    """Each command item asks for a fresh copy: what an earlier item wrote, changed or deleted is undone;
    a snapshot file its own .gitignore names is committed too, so the reset never removes it."""
    texts = {".gitignore": "*.log\nbuild/\n", "keep.log": "a snapshot file the ignore rules name\n", "src/a.py": "x = 1\n"}
    snapshot = Snapshot(repo="o/r", commit="c", origin="t", texts=texts)
    copies = PrivateCopies(tmp_path / "copies", owned_root=None)
    try:
        copy = copies.get(snapshot, fresh=True)
        tracked = subprocess.run(["git", "-C", str(copy), "ls-files"], capture_output=True, text=True, check=True).stdout.split()
        assert sorted(tracked) == sorted(texts)
        (copy / "src" / "a.py").write_text("changed\n")
        (copy / "keep.log").unlink()
        (copy / "build").mkdir()
        (copy / "build" / "out.o").write_text("junk")
        (copy / "new.txt").write_text("junk")
        (copy / ".git" / "tool-cache").mkdir()
        assert copies.get(snapshot) == copy and (copy / "new.txt").exists()  # not fresh: as left
        assert copies.get(snapshot, fresh=True) == copy
        found = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file() and ".git" not in p.parts)
        assert found == sorted(texts) and (copy / "src" / "a.py").read_text() == "x = 1\n"
        assert (copy / ".git" / "tool-cache").is_dir()  # an arm's cache under .git/ survives
    finally:
        copies.cleanup()
        copies.restore_signals()
