"""The reference rankers' two shortcuts give what the plain walk gives.

`_distinct_paths` ranks paths by their best chunk instead of walking every sorted chunk, and
`Substrings` tests only the values filed under a piece of the query. Both are compared here with
the plain definitions, on values built to tie and to overlap.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_retrieval_bench.arms import arb_reference
from pytest_retrieval_bench.index.lazy_rows import LazyRows
from pytest_retrieval_bench.index.chunk_index import ChunkIndex, PathGroups, _tiebreak
from pytest_retrieval_bench.index.substrings import KEY_CHARS, Substrings

SHORT_TEXT = st.text(alphabet="ab_/.é", max_size=9)


def walked_paths(index: ChunkIndex, scores: np.ndarray | None, cap: int) -> list[str]:
    """The definition: every chunk by score (descending), ties by tiebreak; each path at its first chunk."""
    order = range(len(index.paths)) if scores is None else np.lexsort((index.tiebreak, -scores))
    ranking: list[str] = []
    for position in order:
        path = index.paths[position]
        if path and path not in ranking:
            ranking.append(path)
            if len(ranking) >= cap:
                break
    return ranking


def chunk_index(paths: list[str], chunk_ids: list[str]) -> ChunkIndex:
    size = len(paths)
    return ChunkIndex(paths=paths, chunk_ids=chunk_ids, symbols=[""] * size, tiebreak=_tiebreak(paths, chunk_ids),
                      token_counts=np.ones(size, dtype=np.int64), distinct_counts=np.ones(size, dtype=np.int64), postings=None)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["", "a.py", "b.py", "c/d.py", "e.go"]), st.sampled_from(["x", "y", "z", ""]),
                               st.sampled_from([0.0, -0.0, 1.5, 2.0, 1e-300, 7.25])), max_size=40),
       cap=st.sampled_from([1, 2, 3, 1000]), unscored=st.booleans())
def test_paths_ranked_by_their_best_chunk_are_the_walk(rows: list[tuple[str, str, float]], cap: int, unscored: bool) -> None:
    index = chunk_index([path for path, _, _ in rows], [f"{path}::{chunk}" for path, chunk, _ in rows])
    scores = None if unscored else np.array([score for _, _, score in rows], dtype=np.float64)
    with mock.patch.object(arb_reference, "RANKING_CAP", cap):
        assert arb_reference._distinct_paths(index, scores) == walked_paths(index, scores, cap)


def test_paths_ranked_by_their_best_chunk_on_real_scores() -> None:
    """Many chunks a path, scores of the bench's lexical formula; every one of the 1,500 paths is ranked, as the bench ranks them."""
    rng = np.random.default_rng(7)
    paths = [f"src/module_{rng.integers(0, 1500)}.py" for _ in range(6000)]
    index = chunk_index(paths, [f"{path}::{position}" for position, path in enumerate(paths)])
    scores = np.round(rng.gamma(1.0, 2.0, size=len(paths)), 1) * (rng.random(len(paths)) < 0.8)  # ties, and zeros
    ranking = arb_reference._distinct_paths(index, scores)
    assert len(ranking) == len(set(paths)) > 1000
    assert ranking == walked_paths(index, scores, len(paths))


def test_path_groups_list_each_paths_rows_in_row_order() -> None:
    groups = PathGroups.of(np.array([2, 0, 2, 1, 0], dtype=np.int32))
    assert groups.order.tolist() == [1, 4, 3, 0, 2] and groups.starts.tolist() == [0, 2, 3] and groups.path_ids.tolist() == [0, 1, 2]
    empty = PathGroups.of(np.zeros(0, dtype=np.int32))
    assert len(empty.order) == len(empty.starts) == len(empty.path_ids) == 0


@settings(max_examples=400, deadline=None)
@given(values=st.lists(SHORT_TEXT, max_size=30), text=st.text(alphabet="ab_/.éc", max_size=40))
def test_substrings_found_are_the_substrings(values: list[str], text: str) -> None:
    expected = [bool(value) and value in text for value in values]
    assert Substrings(values).found_in(text).tolist() == expected


def test_substrings_of_every_length_around_the_key() -> None:
    text = "fn parse_config(path) -> Config"
    values = ["", "p", "pa", "par", "pars", "parse", "parse_config", "config", "Config", "nope", "onfig(", text, text + "!"]
    assert KEY_CHARS == 4
    found = Substrings(values).found_in(text).tolist()
    assert found == [False, True, True, True, True, True, True, True, True, False, True, True, False]


def test_lazy_rows_are_made_once_on_first_read_and_must_have_their_length() -> None:
    calls: list[int] = []

    def make() -> list[str]:
        calls.append(1)
        return ["a.py", "b.py"]

    rows = LazyRows(2, make)
    assert len(rows) == 2 and not rows.made and calls == []
    assert rows[1] == "b.py" and list(rows) == ["a.py", "b.py"] and rows == ["a.py", "b.py"] and calls == [1]
    with pytest.raises(ValueError, match="expected 3 rows, made 2"):
        LazyRows(3, make)[0]
