"""Writing and checking a private copy's files: regular files only, every directory made inside it.

A private copy is where a command arm runs, so it must hold exactly the snapshot's files and
nothing that leads out of it: no symbolic link is ever written, no directory is created outside
the copy (were the copy removed mid-write, by a signal, the write fails instead of re-creating
it), and a copy is used only once `check_copy` has found every expected file and nothing else.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath
from typing import Callable, Iterable

from pytest_retrieval_bench.errors import SnapshotError


def find_path_clash(paths: Iterable[str]) -> tuple[str, str] | None:
    """A (file, path below it) pair, such as `pkg` and `pkg/x.go`, or None: a tree cannot hold both.

    The directories are gathered first, each once (a tree has far fewer than files), so a tree
    without a clash, the usual case, costs one `rpartition` per file; the pair named is the
    first in path order.
    """
    known = set(paths)
    directories: set[str] = set()
    for path in known:
        parent = path.rpartition("/")[0]
        while parent and parent not in directories:
            directories.add(parent)
            parent = parent.rpartition("/")[0]
    if directories.isdisjoint(known):
        return None
    for path in sorted(known):
        parts = path.split("/")
        for end in range(1, len(parts)):
            parent = "/".join(parts[:end])
            if parent in known:
                return parent, path
    return None


class CopyWriter:
    """Writes regular files below the existing directory `target`, making each directory once."""

    def __init__(self, target: Path):
        self.target = target
        self._made: set[str] = set()

    def write(self, relative: str, data: bytes, executable: bool = False) -> None:
        parts = PurePosixPath(relative).parts
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent in self._made:
                continue
            directory = self.target / parent
            try:
                directory.mkdir()  # never with parents: the copy itself must still exist
            except FileExistsError:
                if directory.is_symlink() or not directory.is_dir():
                    raise SnapshotError(f"cannot write {relative!r} in the private copy: {parent!r} is a file") from None
            self._made.add(parent)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            descriptor = os.open(self.target / relative, flags, 0o755 if executable else 0o644)
        except FileExistsError:
            raise SnapshotError(f"cannot write {relative!r} in the private copy: the path is already taken") from None
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)


def copy_regular_files(source: Path, target: Path, keep: Callable[[str], bool]) -> None:
    """Copy the regular files below `source` (`.git` aside) whose relative path `keep` accepts (the
    snapshot's own rule, so the copy holds what it lists); links, devices and sockets are left out."""
    writer = CopyWriter(target)
    for directory, subdirs, files in os.walk(source, followlinks=False):
        subdirs[:] = sorted(name for name in subdirs if name != ".git")
        for name in sorted(files):
            full = Path(directory, name)
            info = os.lstat(full)
            relative = full.relative_to(source).as_posix()
            if stat.S_ISREG(info.st_mode) and keep(relative):
                writer.write(relative, full.read_bytes(), executable=bool(info.st_mode & stat.S_IXUSR))


def check_copy(target: Path, expected: Iterable[str]) -> None:
    """A copy holds exactly the expected regular files (and `.git`, once committed); else SnapshotError."""
    found: set[str] = set()
    pending = [("", target)]
    while pending:
        prefix, directory = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                relative = prefix + entry.name
                if entry.is_symlink() or not (entry.is_file(follow_symlinks=False) or entry.is_dir(follow_symlinks=False)):
                    raise SnapshotError(f"private copy {target}: {relative!r} is not a regular file or directory")
                if entry.is_dir(follow_symlinks=False):
                    if relative != ".git":
                        pending.append((relative + "/", Path(entry.path)))
                else:
                    found.add(relative)
    wanted = set(expected)
    if found != wanted:
        absent, extra = sorted(wanted - found), sorted(found - wanted)
        detail = "; ".join(part for part in (f"missing {absent[:5]!r}" if absent else "", f"unexpected {extra[:5]!r}" if extra else "") if part)
        raise SnapshotError(f"private copy {target} does not match the snapshot ({len(found)} of {len(wanted)} files): {detail}")
