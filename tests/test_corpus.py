"""Snapshot sources: chunk files, directories, clean git worktrees, repositories, private copies."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import zstandard

from pytest_retrieval_bench.corpus.chunks import find_chunk_file, read_chunk_file
from pytest_retrieval_bench.corpus.copies import PrivateCopies
from pytest_retrieval_bench.corpus.resolve import SnapshotResolver
from pytest_retrieval_bench.corpus.tree import directory_bytes, read_directory
from pytest_retrieval_bench.errors import SnapshotError

REPO = "acme/widgets"


def _rows(*files: tuple[str, str], extra: list[dict] | None = None) -> list[dict]:
    rows = [{"path": p, "kind": "file", "text": t, "symbol": "", "chunk_id": p} for p, t in files]
    return rows + (extra or [])


def _write_chunks(path: Path, rows: list[dict], compress: bool = False) -> Path:
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(zstandard.ZstdCompressor().compress(data) if compress else data)
    return path


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture
def git_repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "acme__widgets"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text("def parse_thing():\n    return 1\n")
    (repo / "bin.dat").write_bytes(b"\x00\x01")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    return repo, _git(repo, "rev-parse", "HEAD")


def test_chunk_file_reads_file_rows_and_keeps_all_rows(tmp_path):
    symbol = {"path": "src/a.py", "kind": "symbol", "text": "def a", "symbol": "a", "chunk_id": "x"}
    path = _write_chunks(tmp_path / "c.chunks.jsonl.zst", _rows(("src/a.py", "def a(): pass"), ("z.bin", "a\x00b"), extra=[symbol]), True)
    snapshot = read_chunk_file(path, REPO, "c" * 40)
    assert snapshot.texts == {"src/a.py": "def a(): pass"}
    assert snapshot.other_paths == ("z.bin",)
    assert len(snapshot.chunk_rows) == 3


@pytest.mark.parametrize(("bad", "reason"), [("/etc/passwd", "absolute path"), ("a/../../x", "'..' component"), ("src/a.py", "duplicate file path")])
def test_unsafe_or_repeated_chunk_paths_are_corpus_errors(tmp_path, bad, reason):
    path = _write_chunks(tmp_path / "c.chunks.jsonl", _rows(("src/a.py", "x"), (bad, "y")))
    with pytest.raises(SnapshotError) as error:
        read_chunk_file(path, REPO, "c" * 40)
    assert f"{path}:2: field 'path'" in str(error.value) and reason in str(error.value)


def test_corrupt_chunk_stream_is_a_snapshot_error(tmp_path):
    path = _write_chunks(tmp_path / "c.chunks.jsonl.zst", _rows(*[(f"f{i}", "text " * 50) for i in range(50)]), True)
    path.write_bytes(path.read_bytes()[:-7])
    with pytest.raises(SnapshotError, match="truncated zstd stream"):
        read_chunk_file(path, REPO, "c" * 40)


def test_find_chunk_file_by_layout_and_by_manifest(tmp_path):
    commit = "d" * 40
    corpus = tmp_path / "corpus" / "rel"
    by_layout = _write_chunks(corpus / "acme__widgets" / f"{commit}.chunks.jsonl", _rows(("a", "b")))
    assert find_chunk_file(corpus, REPO, commit) == by_layout
    elsewhere = _write_chunks(tmp_path / "elsewhere" / "x.chunks.jsonl", _rows(("a", "b")))
    (corpus / "corpus_manifest.jsonl").write_text(json.dumps({"repo": "o/n", "base_commit": commit, "status": "ok", "chunks_path": str(elsewhere)}) + "\n")
    with pytest.raises(SnapshotError, match=r"corpus_manifest.jsonl:1: chunks_path .* outside the corpus directory"):
        find_chunk_file(corpus, "o/n", commit)  # a file the registration's corpus digest does not cover
    inside = _write_chunks(corpus / "nested" / "x.chunks.jsonl", _rows(("a", "b")))
    (corpus / "corpus_manifest.jsonl").write_text(json.dumps({"repo": "o/n", "base_commit": commit, "status": "ok", "chunks_path": str(inside)}) + "\n")
    assert find_chunk_file(corpus, "o/n", commit) == inside
    assert find_chunk_file(corpus, "o/missing", commit) is None


def test_directory_snapshot_applies_text_rule(tmp_path):
    root = tmp_path / "tree"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("x")
    (root / "a.py").write_text("ok")
    (root / "big.txt").write_bytes(b"a" * 1_048_576)
    (root / "small.txt").write_bytes(b"a" * 1_048_575)
    (root / "nul.bin").write_bytes(b"a\x00")
    (root / "latin.txt").write_bytes(b"caf\xe9")
    snapshot = read_directory(root, REPO, "e" * 40)
    assert sorted(snapshot.texts) == ["a.py", "latin.txt", "small.txt"]
    assert snapshot.texts["latin.txt"] == "caf\ufffd"
    assert snapshot.other_paths == ("big.txt", "nul.bin")


def test_directory_cost_estimate_counts_regular_files_only(tmp_path):
    (tmp_path / "pkg" / "deep").mkdir(parents=True)
    (tmp_path / "a.py").write_bytes(b"x" * 10)
    (tmp_path / "pkg" / "deep" / "b.py").write_bytes(b"y" * 7)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "objects").write_bytes(b"z" * 1000)
    (tmp_path / "link.py").symlink_to(tmp_path / "a.py")
    (tmp_path / "linked-dir").symlink_to(tmp_path / "pkg", target_is_directory=True)
    assert directory_bytes(tmp_path) == 17


def test_clean_worktree_at_commit_is_read_from_git(git_repo):
    repo, commit = git_repo
    (repo / "ignored.log").write_text("untracked but ignored")
    (repo / ".git" / "info" / "exclude").write_text("*.log\n")
    snapshot = SnapshotResolver(explicit={f"{REPO}@{commit}": repo}).load(REPO, commit)
    assert snapshot.paths() == ["bin.dat", "src/a.py"]
    assert snapshot.texts["src/a.py"].startswith("def parse_thing")


def test_dirty_or_wrong_commit_worktree_is_an_error(git_repo):
    repo, commit = git_repo
    with pytest.raises(SnapshotError, match="not at " + "f" * 40):
        SnapshotResolver(explicit={f"{REPO}@{'f' * 40}": repo}).load(REPO, "f" * 40)
    (repo / "src" / "a.py").write_text("changed")
    with pytest.raises(SnapshotError, match="uncommitted changes"):
        SnapshotResolver(explicit={f"{REPO}@{commit}": repo}).load(REPO, commit)


def test_repositories_directory_and_missing_snapshot(git_repo, tmp_path):
    repo, commit = git_repo
    resolver = SnapshotResolver(repos_dir=repo.parent)
    assert resolver.load(REPO, commit).paths() == ["bin.dat", "src/a.py"]
    with pytest.raises(SnapshotError, match=r"no snapshot for acme/other@"):
        resolver.load("acme/other", commit)


def test_private_copy_is_a_committed_git_repo_and_is_removed(git_repo, tmp_path):
    repo, commit = git_repo
    snapshot = SnapshotResolver(repos_dir=repo.parent).load(REPO, commit)
    copies = PrivateCopies(tmp_path / "base", owned_root=tmp_path / "base")
    try:
        copy = copies.get(snapshot)
        assert copies.get(snapshot) == copy
        assert (copy / "src" / "a.py").read_text().startswith("def parse_thing")
        assert _git(copy, "status", "--porcelain") == ""
        assert (repo / "src" / "a.py").read_text().startswith("def parse_thing")
    finally:
        copies.cleanup()
        copies.restore_signals()
    assert not (tmp_path / "base").exists()


def test_prepare_runs_again_when_a_snapshot_comes_back(git_repo, tmp_path):
    from pytest_retrieval_bench.corpus.store import SnapshotStore

    repo, commit = git_repo
    other = tmp_path / "acme__other"
    (other / "x").mkdir(parents=True)
    (other / "x" / "y.py").write_text("y = 1\n")
    _git(other, "init", "-q")
    _git(other, "add", "-A")
    _git(other, "commit", "-qm", "one")
    other_commit = _git(other, "rev-parse", "HEAD")
    copies = PrivateCopies(tmp_path / "base", owned_root=tmp_path / "base")
    store = SnapshotStore(SnapshotResolver(repos_dir=tmp_path), copies, cache=None)
    prepared = []

    class Arm:
        name = "needs-a-copy"

        def prepare(self, snapshot):
            prepared.append(snapshot.key)
            (snapshot.directory() / "PREPARED").write_text("yes")

    try:
        for repo_name, sha in ((REPO, commit), ("acme/other", other_commit), (REPO, commit)):
            snapshot = store.get(repo_name, sha)
            store.prepare(Arm(), snapshot)
            assert (snapshot.directory() / "PREPARED").is_file()
        assert prepared == [f"{REPO}@{commit}", f"acme/other@{other_commit}", f"{REPO}@{commit}"]
    finally:
        store.close()
        copies.restore_signals()
