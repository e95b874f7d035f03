"""The sort-based stand-ins for `np.unique` and `np.lexsort` give numpy's own arrays."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_retrieval_bench.index.distinct import first_positions, lex_order, sorted_distinct

values = st.lists(st.integers(min_value=0, max_value=50), max_size=300)


@given(values)
@settings(max_examples=200, deadline=None)
def test_sorted_distinct_is_numpys_unique(found: list[int]) -> None:
    array = np.asarray(found, dtype=np.int64)
    assert np.array_equal(sorted_distinct(array), np.unique(array))


@given(values, st.sampled_from([1, 1 << 58]))
@settings(max_examples=200, deadline=None)
def test_first_positions_are_numpys_return_index(found: list[int], scale: int) -> None:
    """Scaled values make the position-keyed sort overflow, so the stable-argsort route is taken too."""
    array = np.asarray(found, dtype=np.int64) * scale
    assert np.array_equal(first_positions(array), np.unique(array, return_index=True)[1])


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 99), st.integers(0, 4)), unique=True, max_size=200),
       st.sampled_from([1, 1 << 30]))
@settings(max_examples=200, deadline=None)
def test_lex_order_is_numpys_lexsort_for_distinct_rows(rows: list[tuple[int, int, int]], widen: int) -> None:
    """`widen` makes the mixed-radix key pass 63 bits, where `np.lexsort` itself is used."""
    first, second, third = (np.asarray(column, dtype=np.int64) for column in zip(*rows)) if rows else (np.zeros(0, dtype=np.int64),) * 3
    expected = np.lexsort((third, second, first))
    assert np.array_equal(lex_order((first, 10 * widen), (second, 100 * widen), (third, 5)), expected)


def test_first_positions_of_nothing_is_empty() -> None:
    assert first_positions(np.zeros(0, dtype=np.int64)).tolist() == []
