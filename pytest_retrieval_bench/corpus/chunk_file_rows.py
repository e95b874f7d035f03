"""A release's chunk rows, read again from its chunk file each time they are gone through.

A large release's rows, read into dicts, take several times its file text (a diffusers snapshot:
118 MB for 14 MB of file rows' text), and the memory they free is mostly kept by the allocator,
under everything the builds make after them. Each index build goes through the rows once, in
order, so the rows are never all held: the first read checks every row and keeps only their
number, and each pass parses the file again, a row at a time. A pass over a chunk file that has
changed since the first read is refused (its indexes would not be those of the rows read), and
so is one that does not give the number of rows counted then.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Collection, Iterator, Mapping

import orjson

from pytest_retrieval_bench.corpus.read_receipts import identity
from pytest_retrieval_bench.errors import InputError, SnapshotError
from pytest_retrieval_bench.files.jsonl import iter_numbered_lines


class ChunkFileRows:
    """The rows of the chunk file `path`, `count` of them, in the file's order, as dicts; paths
    are the strings of `shared` (a row's path is one of the snapshot's, so a kept label costs no
    new string). `in_path_order`: the rows' paths ascend (each file's rows are together). `read_as`:
    the file's identity (`read_receipts.identity`) taken before the read that counted the rows."""

    def __init__(self, path: Path, count: int, in_path_order: bool, shared: Mapping[str, str], read_as: str | None):
        self.path = path.absolute()  # a later pass finds the same file whatever the working directory is then
        self.count = count
        self.in_path_order = in_path_order
        self._shared = shared
        self._identity = read_as

    @property
    def row_paths(self) -> Collection[str]:
        """Every path a row has, each once."""
        return self._shared.keys()

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self._check_unchanged()
        shared = self._shared
        found = number = 0
        try:
            for number, line in iter_numbered_lines(self.path):
                if line.isspace():
                    continue
                row = orjson.loads(line)
                row["path"] = shared.get(row["path"], row["path"])
                found += 1
                yield row
        except (orjson.JSONDecodeError, KeyError, TypeError, InputError) as error:  # the file changed under the pass
            self._check_unchanged()
            raise SnapshotError(f"corpus error: {self.path}:{number}: not the row read before ({error})") from error
        self._check_unchanged()
        if found != self.count:
            raise SnapshotError(f"corpus error: {self.path} now has {found} rows, {self.count} when it was read")

    def _check_unchanged(self) -> None:
        now = identity(self.path)
        if now is None or now != self._identity:
            raise SnapshotError(f"corpus error: {self.path} changed after it was read (its indexes would not be of the rows read); run again")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ChunkFileRows):  # the same rows when they are of the same read of the same file
            return (self.path, self._identity, self.count) == (other.path, other._identity, other.count) or list(self) == list(other)
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ChunkFileRows({str(self.path)!r}, {self.count} rows)"
