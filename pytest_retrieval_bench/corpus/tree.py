"""Snapshots from a plain directory or from a git repository's tree at a commit."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from pytest_retrieval_bench.corpus.copy_files import CopyWriter, copy_regular_files
from pytest_retrieval_bench.corpus.own_programs import git_command
from pytest_retrieval_bench.corpus.progress import Counted
from pytest_retrieval_bench.corpus.snapshot import Snapshot, as_text, undecodable
from pytest_retrieval_bench.errors import SnapshotError


def git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    """Run git read-only in `repo` (as every git of the plugin's: `own_programs.git_command`); a
    failure is a snapshot error with git's own words."""
    result = git_command(repo, *args, input=input)
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SnapshotError(f"git {' '.join(args[:2])} failed in {repo}: {message[0] if message else result.returncode}")
    return result.stdout


def read_directory(root: Path, repo: str, commit: str, progress: Counted | None = None) -> Snapshot:
    """Every regular file below `root` except `.git`; symbolic links are not followed; a name that
    is not valid UTF-8 is left out (listed in `undecodable_paths`).

    The files are listed first, so `progress` hears how many there are before the reads."""
    found: list[Path] = []
    for directory, subdirs, files in os.walk(root, followlinks=False):
        subdirs[:] = sorted(name for name in subdirs if name != ".git")
        found.extend(full for name in sorted(files) if not (full := Path(directory, name)).is_symlink() and full.is_file())
    texts: dict[str, str] = {}
    others: list[str] = []
    skipped: list[str] = []
    for number, full in enumerate(found, start=1):
        relative = full.relative_to(root).as_posix()
        if (shown := undecodable(relative)) is not None:
            skipped.append(shown)
        else:
            try:
                text = as_text(full.read_bytes())
            except OSError as error:
                raise SnapshotError(f"cannot read {full}: {error.strerror or error}") from error
            if text is None:
                others.append(relative)
            else:
                texts[relative] = text
        if progress is not None:
            progress(number, len(found))
    return Snapshot(repo=repo, commit=commit, origin=str(root), texts=texts, other_paths=tuple(sorted(others)),
                    undecodable_paths=tuple(sorted(skipped)), writer=lambda target: copy_regular_files(root, target, keep=named_in_utf8))


def iter_git_blobs(repo_dir: Path, commit: str) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of every regular blob in the commit's tree, read with `git ls-tree` and one
    `git cat-file --batch` (symbolic links and submodules skipped; bare repositories work)."""
    for path, _mode, data in _iter_blobs_with_modes(repo_dir, commit):
        yield path, data


def _iter_blobs_with_modes(repo_dir: Path, commit: str) -> Iterator[tuple[str, bytes, bytes]]:
    listing = git(repo_dir, "ls-tree", "-r", "-z", "--full-tree", commit)
    entries: list[tuple[str, bytes, str]] = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, kind, sha = meta.split(b" ")
        if kind == b"blob" and mode != b"120000":
            entries.append((name.decode("utf-8", "surrogateescape"), mode, sha.decode()))
    if not entries:
        return
    batch = git(repo_dir, "cat-file", "--batch", input="".join(f"{sha}\n" for _, _, sha in entries).encode())
    offset = 0
    for path, mode, _sha in entries:
        header_end = batch.index(b"\n", offset)
        size = int(batch[offset:header_end].split(b" ")[2])
        yield path, mode, batch[header_end + 1 : header_end + 1 + size]
        offset = header_end + 1 + size + 1


def read_git_tree(repo_dir: Path, repo: str, commit: str, progress: Counted | None = None) -> Snapshot:
    """The tree at `commit`, as git stores it (bare or not)."""
    texts: dict[str, str] = {}
    others: list[str] = []
    skipped: list[str] = []
    for number, (path, data) in enumerate(iter_git_blobs(repo_dir, commit), start=1):
        if (shown := undecodable(path)) is not None:
            skipped.append(shown)
        elif (text := as_text(data)) is None:
            others.append(path)
        else:
            texts[path] = text
        if progress is not None:
            progress(number, None)
    return Snapshot(
        repo=repo,
        commit=commit,
        origin=f"{repo_dir}@{commit}",
        texts=texts,
        other_paths=tuple(sorted(others)),
        undecodable_paths=tuple(sorted(skipped)),
        writer=lambda target: _export_git(repo_dir, commit, target),
    )


def _export_git(repo_dir: Path, commit: str, target: Path) -> None:
    """The commit's regular blobs as files (executable bit kept); symbolic links are left out, and
    so are names not valid UTF-8, as the snapshot leaves them out."""
    writer = CopyWriter(target)
    for path, mode, data in _iter_blobs_with_modes(repo_dir, commit):
        if named_in_utf8(path):
            writer.write(path, data, executable=mode == b"100755")


def named_in_utf8(path: str) -> bool:
    """Whether a snapshot keeps the file at `path` read from a tree: a name not valid UTF-8 is left
    out (no report could hold it), of the snapshot and of its private copy alike."""
    return undecodable(path) is None


def read_worktree(path: Path, repo: str, commit: str, progress: Counted | None = None) -> Snapshot:
    """A git worktree must be clean and at `commit`; its tree is then read from git itself."""
    head = git(path, "rev-parse", "HEAD").decode().strip()
    if head != commit:
        raise SnapshotError(f"snapshot {path} is a git worktree at {head}, not at {commit}")
    dirty = git(path, "status", "--porcelain", "--untracked-files=normal").decode("utf-8", "replace")
    if dirty.strip():
        first = dirty.strip().splitlines()[0]
        raise SnapshotError(f"snapshot {path} is a git worktree with uncommitted changes (first: {first!r})")
    return read_git_tree(path, repo, commit, progress)


def repository_names(repo: str) -> list[str]:
    """The directory names `find_repository` tries for OWNER/NAME (none for a name without an owner)."""
    if "/" not in repo:  # a repository named without its owner is found by --bench-snapshot only
        return []
    owner, name = repo.split("/", 1)
    return [f"{owner}__{name}", f"{owner}+{name}", f"{owner}/{name}"]


def find_repository(repos_dir: Path, repo: str) -> Path | None:
    """`OWNER__NAME`, `OWNER+NAME` or `OWNER/NAME` below `repos_dir`, bare (`.git` suffix) or not."""
    for relative in repository_names(repo):
        for candidate in (repos_dir / relative, repos_dir / f"{relative}.git"):
            if candidate.is_dir():
                return candidate
    return None


def directory_bytes(directory: Path) -> int:
    """Total size of the regular files below a directory (`.git` aside): a cost estimate.

    One `lstat` a file through `os.scandir` (the kind comes with the directory entry): the
    controller estimates every snapshot before handing any out, so this is on the critical path."""
    total = 0
    pending = [os.fspath(directory)]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != ".git":
                        pending.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
    return total


def git_tree_bytes(repository: Path, commit: str) -> int:
    """Total blob size of a commit's tree (`git ls-tree -r -l`), 0 when git cannot tell."""
    result = git_command(repository, "ls-tree", "-r", "-l", "--full-tree", commit)
    if result.returncode != 0:
        return 0
    return sum(int(fields[3]) for line in result.stdout.decode("utf-8", "surrogateescape").splitlines() if len(fields := line.split(None, 4)) == 5 and fields[3].isdigit())
