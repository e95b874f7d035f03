"""Find a sample's snapshot in SPEC 2's order: explicit, release corpus, git repositories."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from pytest_retrieval_bench.corpus.chunks import check_promises, find_chunk_file, locate_chunk_file, read_chunk_file
from pytest_retrieval_bench.corpus.progress import Counted
from pytest_retrieval_bench.corpus.read_receipts import ReadReceipts
from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.corpus.tree import (directory_bytes, find_repository, git_tree_bytes, read_directory, read_git_tree, read_worktree,
                                                repository_names)
from pytest_retrieval_bench.errors import SnapshotError


@dataclass
class SnapshotResolver:
    """Resolution order: --bench-snapshot, then --bench-corpus directories, then --bench-repos."""

    explicit: dict[str, Path] = field(default_factory=dict)
    corpus_dirs: list[Path] = field(default_factory=list)
    repos_dir: Path | None = None
    lazy_corpus_dirs: list[Callable[[], list[Path]]] = field(default_factory=list)
    #: receipts of full chunk-file reads (beside the index cache), so a file read before is read
    #: for its file rows only
    receipts: ReadReceipts | None = None

    def _all_corpus_dirs(self, strict: bool = True) -> list[Path]:
        """The corpus directories; a provider that fails (a release that cannot be unpacked) raises
        its SnapshotError when `strict`, else is passed over."""
        dirs = list(self.corpus_dirs)
        for provider in self.lazy_corpus_dirs:
            try:
                dirs.extend(provider())
            except SnapshotError:
                if strict:
                    raise
        return dirs

    def estimate(self, repo: str, commit: str) -> int:
        """The snapshot's source size in bytes, found as `load` would find it but read no further."""
        key = f"{repo}@{commit}"
        if key in self.explicit:
            return directory_bytes(self.explicit[key])
        for corpus_dir in self._all_corpus_dirs(strict=False):  # its set-up names a release's problem
            try:
                chunk_file = find_chunk_file(corpus_dir, repo, commit)
            except SnapshotError:  # its set-up names the problem; a cost estimate only orders work
                return 0
            if chunk_file is not None:
                return chunk_file.stat().st_size
        if self.repos_dir is not None:
            repository = find_repository(self.repos_dir, repo)
            if repository is not None:
                return git_tree_bytes(repository, commit)
        return 0

    def load(self, repo: str, commit: str, whole: bool = False, progress: Counted | None = None) -> Snapshot:
        """The snapshot; a release's chunk rows are all read when `whole` (or when it has no receipt).
        `progress` hears the files read as the reader goes."""
        key = f"{repo}@{commit}"
        if key in self.explicit:
            path = self.explicit[key]
            if not path.is_dir():
                raise SnapshotError(f"--bench-snapshot {key}={path}: not a directory")
            if (path / ".git").exists():
                return read_worktree(path, repo, commit, progress)
            return read_directory(path, repo, commit, progress)
        searched: list[str] = []
        for corpus_dir in self._all_corpus_dirs():
            source, notes = locate_chunk_file(corpus_dir, repo, commit)
            if source is not None:
                snapshot = read_chunk_file(source.path, repo, commit, None if whole else self.receipts, progress)
                check_promises(source, snapshot)
                return snapshot
            searched.append(f"corpus {corpus_dir}" + (f" ({'; '.join(notes)})" if notes else ""))
        if self.repos_dir is not None:
            repository = find_repository(self.repos_dir, repo)
            if repository is not None:
                return read_git_tree(repository, repo, commit, progress)
            searched.append(f"repositories {self.repos_dir} ({repository_miss(self.repos_dir, repo, commit)})")
        where = "; searched " + ", ".join(searched) if searched else "; no --bench-snapshot, --bench-corpus or --bench-repos given"
        raise SnapshotError(f"no snapshot for {key}{where}")


def repository_miss(repos_dir: Path, repo: str, commit: str) -> str:
    """Which directory names --bench-repos was searched for, and a near miss when one is there."""
    names = repository_names(repo)
    if not names:
        return f"{repo!r} has no owner, and --bench-repos finds a repository by OWNER__NAME: give it with --bench-snapshot {repo}@{commit}=PATH"
    note = "tried " + ", ".join(names) + ", each also with .git"
    name = repo.split("/", 1)[1]
    near = [candidate.name for candidate in (repos_dir / name, repos_dir / f"{name}.git") if candidate.is_dir()]
    if near:
        note += f"; {near[0]} is there, but the name must carry the owner: rename or link it as {names[0]}"
        if repo.startswith("local/"):
            note += " (retrieval-bench known-target generate names the repository local/<directory> unless given --repo-name OWNER/NAME)"
    return note
