"""A per-row list of strings made only when something reads it.

A chunk index loaded from the cache holds its rows' paths and symbols as ids into distinct
values, and its rows' chunk ids as JSON; the queries read neither list (the rankers work on
the ids), so building them for every row, hundreds of thousands in a release, was set-up time
spent for nothing. Its length is known without building it.
"""

from __future__ import annotations

from typing import Callable, Iterator, Sequence, overload


class LazyRows(Sequence[str]):
    """`length` strings, made by `make()` on first use and kept; `make` must give exactly
    `length` (else ValueError, as from a damaged cache entry)."""

    def __init__(self, length: int, make: Callable[[], list[str]]):
        self._length = length
        self._make: Callable[[], list[str]] | None = make
        self._rows: list[str] | None = None

    @property
    def rows(self) -> list[str]:
        if self._rows is None:
            assert self._make is not None
            rows = self._make()
            if type(rows) is not list or len(rows) != self._length:
                raise ValueError(f"expected {self._length} rows, made {len(rows) if type(rows) is list else type(rows).__name__}")
            self._rows, self._make = rows, None
        return self._rows

    @property
    def made(self) -> bool:
        return self._rows is not None

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, position: int) -> str: ...

    @overload
    def __getitem__(self, position: slice) -> list[str]: ...

    def __getitem__(self, position: int | slice) -> str | list[str]:
        return self.rows[position]

    def __iter__(self) -> Iterator[str]:
        return iter(self.rows)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyRows):
            other = other.rows
        return self.rows == other if isinstance(other, list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyRows({self._length}, made={self.made})"
