"""Removing a directory the plugin made, whatever an arm did inside it.

`shutil.rmtree` before Python 3.13 recurses once per directory level (a tree 2,000 levels deep
raises RecursionError and stays) and builds full paths (past PATH_MAX it cannot name the deepest
files); every version gives up on a directory an arm made read-only. Private copies and the
session directory are handed to arms, so their removal must cope with all three: this walk keeps
its own stack, works relative to open directory descriptors, hoists a deep subtree up to the top
directory (a rename within one file system) once the stack of open descriptors reaches a bound,
and restores write and search permission on a directory before emptying it. Symbolic links are
removed, never followed.
"""

from __future__ import annotations

import itertools
import os
import stat
from pathlib import Path

MAX_OPEN = 32
"""Open directory descriptors kept at once; deeper subtrees are hoisted to the top directory."""

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_hoisted = itertools.count()


def remove_tree(path: Path | str, ignore_errors: bool = False) -> None:
    """Remove `path` and everything below it; a missing path is not an error, others raise OSError
    (or are ignored, as `shutil.rmtree(ignore_errors=True)` does)."""
    try:
        _remove(os.fspath(path))
    except OSError:
        if not ignore_errors:
            raise


def _remove(path: str) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(path)
        return
    _allow(path, info.st_mode)
    top = os.open(path, _OPEN_FLAGS)
    try:
        _empty(top)
    finally:
        os.close(top)
    os.rmdir(path)


def _allow(path: str, mode: int, dir_fd: int | None = None) -> None:
    """Write and search permission on a directory, so its entries can be listed and removed."""
    wanted = stat.S_IMODE(mode) | stat.S_IRWXU
    if wanted != stat.S_IMODE(mode):
        os.chmod(path, wanted, dir_fd=dir_fd, follow_symlinks=False) if dir_fd is not None else os.chmod(path, wanted)


def _empty(top: int) -> None:
    """Empty the directory open as `top`, depth first, with at most MAX_OPEN descriptors open."""
    stack: list[tuple[int, str | None]] = [(top, None)]  # (descriptor, its name in the parent below it on the stack)
    try:
        while stack:
            fd, _ = stack[-1]
            child = _first_subdirectory_after_removing_files(fd)
            if child is None:  # empty now: close it and remove it from its parent (the top stays, for the caller)
                if len(stack) == 1:
                    return
                _, name = stack.pop()
                os.close(fd)
                os.rmdir(name, dir_fd=stack[-1][0])  # type: ignore[arg-type]
                continue
            info = os.lstat(child, dir_fd=fd)
            _allow(child, info.st_mode, dir_fd=fd)
            if len(stack) >= MAX_OPEN:  # hoist the subtree to the top directory instead of descending further
                hoisted = f".remove-tree-{os.getpid()}-{next(_hoisted)}"
                os.rename(child, hoisted, src_dir_fd=fd, dst_dir_fd=top)
                continue
            stack.append((os.open(child, _OPEN_FLAGS, dir_fd=fd), child))
    finally:
        for fd, _ in stack[1:]:
            os.close(fd)


def _first_subdirectory_after_removing_files(fd: int) -> str | None:
    """Unlink every non-directory entry of the directory `fd`; the name of one subdirectory, if any."""
    subdirectory = None
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                subdirectory = subdirectory or entry.name
            else:
                os.unlink(entry.name, dir_fd=fd)
    return subdirectory


def allow_writes(path: Path | str, recursive: bool = True) -> bool:
    """Give back the owner's write permission (and read and search on directories) on `path` and
    (with `recursive`) everything below it, so git can reset a copy an arm made read-only, its
    `.git` too; whether anything changed. Links are not followed; what cannot be reached is left
    as it is (the reset then says why)."""
    changed = False
    pending = [os.fspath(path)]
    while pending:
        current = pending.pop()
        try:
            mode = os.lstat(current).st_mode
            wanted = stat.S_IMODE(mode) | (stat.S_IRWXU if stat.S_ISDIR(mode) else stat.S_IRUSR | stat.S_IWUSR)
            if (stat.S_ISDIR(mode) or stat.S_ISREG(mode)) and wanted != stat.S_IMODE(mode):
                os.chmod(current, wanted)
                changed = True
            if recursive and stat.S_ISDIR(mode):
                with os.scandir(current) as entries:
                    pending.extend(entry.path for entry in entries)
        except OSError:
            continue
    return changed
