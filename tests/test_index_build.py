"""How postings are built: batched vocabularies, narrow arrays and tokens streamed in pieces.

The build gathers terms per batch of documents and merges the batches at the end; every test
here compares its output with a deliberately plain reference (a dict of Counters) built in the
test, for batch sizes from one term up to a single batch, so the batching cannot change a result.
"""

from __future__ import annotations

import functools
from array import array
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import _pytest
from pytest_retrieval_bench.index.tokens import bench_tokens, line_pieces, stream_tokens, word_runs
from pytest_retrieval_bench.corpus.tree import read_directory
from pytest_retrieval_bench.index.pair_counts import Batch, PairCounts
from pytest_retrieval_bench.index.chunk_index import ChunkIndex, file_chunks
from pytest_retrieval_bench.index.postings import LexicalIndex, Postings, PostingsBuilder, _extend

REAL_TREE = Path(_pytest.__file__).resolve().parent


def reference_postings(documents: list[list[str]]) -> dict[str, list[tuple[int, int]]]:
    """term -> [(document, count)], documents ascending: what a postings list means."""
    postings: dict[str, list[tuple[int, int]]] = {}
    for number, tokens in enumerate(documents):
        for term, count in Counter(tokens).items():
            postings.setdefault(term, []).append((number, count))
    return postings


def as_reference(postings: Postings) -> dict[str, list[tuple[int, int]]]:
    found: dict[str, list[tuple[int, int]]] = {}
    for term in postings.terms:
        docs, counts = postings.get(term)
        found[term] = list(zip(docs.tolist(), counts.tolist()))
    return found


def build(documents: list[list[str]], batch_terms: int) -> tuple[Postings, PostingsBuilder]:
    builder = PostingsBuilder(batch_terms=batch_terms)
    for tokens in documents:
        builder.add(tokens)
    return builder.finish(), builder


def assert_matches_reference(documents: list[list[str]], batch_terms: int) -> Postings:
    postings, builder = build(documents, batch_terms)
    expected = reference_postings(documents)
    assert postings.terms == sorted(expected, key=lambda term: term.encode("utf-8", errors="surrogatepass"))
    assert as_reference(postings) == expected
    assert list(builder.lengths) == [len(tokens) for tokens in documents]
    assert list(builder.distinct) == [len(set(tokens)) for tokens in documents]
    return postings


@functools.lru_cache(maxsize=None)
def real_files() -> tuple[tuple[str, str], ...]:
    """(path, text) of the installed `_pytest` package's text files, read once."""
    return tuple(read_directory(REAL_TREE, "pytest-dev/pytest", "0" * 40).text_files())


def real_texts() -> list[str]:
    return [text for _, text in real_files()]


EDGE_DOCUMENTS = [
    [],
    ["b", "a", "b", "ab", "abc", "a"],
    [],
    ["é", "e", "日本", "😀", "\udc80", "z", "Z", ""],
    ["abc", "ab", "a", "b"],
    [],
    ["😀", "😀", "b"],
    [],
]


@pytest.mark.parametrize("batch_terms", [1, 2, 3, 7, 1 << 30])
def test_edge_documents_match_the_reference(batch_terms: int) -> None:
    """Empty documents between and after batches, prefixes, non-ASCII and lone surrogates."""
    assert_matches_reference(EDGE_DOCUMENTS, batch_terms)


@pytest.mark.parametrize("tokenize", [bench_tokens, word_runs], ids=["bench_tokens", "word_runs"])
@pytest.mark.parametrize("batch_terms", [97, 4096, 1 << 30])
def test_real_tree_matches_the_reference(tokenize, batch_terms: int) -> None:
    documents = [tokenize(text) for text in real_texts()]
    postings = assert_matches_reference(documents, batch_terms)
    if batch_terms == 97:  # many batches really were merged
        assert len(postings.terms) > 20 * batch_terms


def test_the_result_does_not_depend_on_the_batch_size() -> None:
    documents = [word_runs(text) for text in real_texts()[:300]]
    single, _ = build(documents, 1 << 30)
    for batch_terms in (1, 50, 1000):
        batched, _ = build(documents, batch_terms)
        assert batched.blob == single.blob
        for name in ("term_offsets", "offsets", "docs", "counts"):
            assert np.array_equal(getattr(batched, name), getattr(single, name)), name
            assert getattr(batched, name).dtype == getattr(single, name).dtype, name


def test_arrays_are_narrow_when_values_fit_and_wide_when_not() -> None:
    small, _ = build([["a", "b"], ["a"]], 16)
    assert small.docs.dtype == np.uint16 and small.counts.dtype == np.uint16
    many_documents = [["x"]] * 70_000 + [["y"] * 70_000]
    postings = assert_matches_reference(many_documents, 16)
    assert postings.docs.dtype == np.int32 and postings.counts.dtype == np.int32
    assert postings.get("y")[1].tolist() == [70_000]
    assert postings.get("x")[0][-1] == 69_999


def test_a_document_with_more_distinct_terms_than_two_bytes_can_number() -> None:
    """Batch term ids are stored in two bytes until one does not fit."""
    documents = [["shared"], [f"t{number}" for number in range(70_000)] + ["shared"], ["shared", "t69999"]]
    postings = assert_matches_reference(documents, 10)
    assert postings.get("shared")[0].tolist() == [0, 1, 2]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 200_000), st.integers(0, 70_000), st.integers(1, 5)), max_size=60), st.booleans())
def test_a_batch_counts_its_pairs(pairs: list[tuple[int, int, int]], weighted: bool) -> None:
    """`Batch.count` against a Counter, keys of 32 bits and of 64 (a span of 200,000 documents
    times 70,000 terms does not fit 32), counted or weighted."""
    pairs.sort(key=lambda pair: pair[0])
    docs = np.array([doc for doc, _, _ in pairs], dtype=np.int32)
    terms = np.array([term for _, term, _ in pairs], dtype=np.int32)
    weights = np.array([weight for _, _, weight in pairs], dtype=np.int64)
    batch = Batch.count(docs, terms, weights if weighted else None)
    expected: Counter[tuple[int, int]] = Counter()
    for doc, term, weight in pairs:
        expected[doc, term] += weight if weighted else 1
    found = list(zip(batch.pair_docs().tolist(), batch.pair_terms().tolist(), batch.counts.tolist()))
    assert found == [(doc, term, count) for (doc, term), count in sorted(expected.items())]
    assert batch.vocabulary.tolist() == sorted({term for _, term, _ in pairs})
    assert batch.docs.tolist() == sorted({doc for doc, _, _ in pairs})


def counted(counts: PairCounts) -> list[tuple[int, int, int]]:
    return [(doc, term, count) for batch in counts.batches()
            for doc, term, count in zip(batch.pair_docs().tolist(), batch.pair_terms().tolist(), batch.counts.tolist())]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.lists(st.integers(0, 9), max_size=5), max_size=4), max_size=12), st.integers(1, 8), st.integers(1, 20))
def test_many_documents_extended_at_once_count_as_added_one_by_one(documents: list[list[list[int]]], group: int, batch_tokens: int) -> None:
    """`PairCounts.extend` (a file's chunk rows at once) against `add` per document and against a
    Counter, documents handed over a few at a time, batches of any size: the counts and each
    document's total are the same."""
    one_by_one = PairCounts(len(documents), batch_tokens)
    at_once = PairCounts(len(documents), batch_tokens)
    for doc, slices in enumerate(documents):
        one_by_one.add(doc, *[np.array(ids, dtype=np.int32) for ids in slices])
    for start in range(0, len(documents), group):
        docs = [doc for doc in range(start, min(start + group, len(documents))) for _ in documents[doc]]
        at_once.extend(docs, [np.array(ids, dtype=np.int32) for doc in range(start, min(start + group, len(documents))) for ids in documents[doc]])
    assert at_once.totals().tolist() == one_by_one.totals().tolist() == [sum(map(len, slices)) for slices in documents]
    expected = sorted((doc, term, count) for doc, slices in enumerate(documents) for term, count in Counter(sum(slices, [])).items())
    assert sorted(counted(at_once)) == sorted(counted(one_by_one)) == expected


def test_extend_refuses_documents_out_of_order() -> None:
    counts = PairCounts(5)
    counts.extend([0, 0, 1], [np.array([1], dtype=np.int32)] * 3)
    with pytest.raises(ValueError, match="ascending"):
        counts.extend([1, 2], [np.array([1], dtype=np.int32)] * 2)  # document 1 again
    with pytest.raises(ValueError, match="ascending"):
        counts.extend([3, 2], [np.array([1], dtype=np.int32)] * 2)
    counts.extend([], [])
    counts.extend([4], [np.array([2], dtype=np.int32)])
    assert counts.totals().tolist() == [2, 1, 0, 0, 1]


def test_extend_widens_without_keeping_a_partial_extension() -> None:
    values = _extend(array("H", [1]), [2, 70_000, 3])
    assert values.typecode == "i" and values.tolist() == [1, 2, 70_000, 3]
    values = _extend(values, [2**40])
    assert values.typecode == "q" and values.tolist() == [1, 2, 70_000, 3, 2**40]
    kept = array("H", [5])
    assert _extend(kept, [6]) is kept and kept.tolist() == [5, 6]


def test_index_builds_agree_with_the_reference_on_the_real_tree() -> None:
    """LexicalIndex and ChunkIndex, which stream each file in pieces, against whole-text tokens."""
    files = list(real_files())
    lexical = LexicalIndex.build(files)
    assert as_reference(lexical.content) == reference_postings([bench_tokens(text) for _, text in files])
    assert as_reference(lexical.words) == reference_postings([word_runs(text) for _, text in files])
    assert lexical.doc_lengths.tolist() == [len(bench_tokens(text)) for _, text in files]
    chunks = ChunkIndex.build(file_chunks(files))
    chunk_tokens = [bench_tokens(f"{path} file {text}") for path, text in files]
    assert as_reference(chunks.postings) == reference_postings(chunk_tokens)
    assert chunks.token_counts.tolist() == [len(tokens) for tokens in chunk_tokens]
    assert chunks.distinct_counts.tolist() == [len(set(tokens)) for tokens in chunk_tokens]


# --------------------------------------------------------------------------- tokens in pieces

TEXT = st.text(alphabet=st.sampled_from(list("aZbQ_9 \n\r\t.-éÉ😀")), max_size=200)


@settings(max_examples=300, deadline=None)
@given(text=TEXT, size=st.integers(min_value=1, max_value=24))
def test_pieces_cut_after_newlines_and_keep_every_token(text: str, size: int) -> None:
    pieces = list(line_pieces(text, size))
    assert "".join(pieces) == text
    for piece in pieces[:-1]:
        assert piece.endswith("\n")
        assert len(piece) <= size or "\n" not in piece[:-1]
    for tokenize in (bench_tokens, word_runs):
        assert list(stream_tokens(tokenize, text)) == tokenize(text)


def test_a_long_text_is_tokenized_in_pieces() -> None:
    line = "fooBar baz_qux " * 10 + "\n"
    text = line * 1000 + "x" * 5000 + "\nlastLine"
    pieces = list(line_pieces(text, 1 << 12))
    assert len(pieces) > 3 and max(len(piece) for piece in pieces) <= 5001
    assert list(stream_tokens(bench_tokens, text)) == bench_tokens(text)
    assert list(line_pieces("short", 1 << 12)) == ["short"]


# --------------------------------------------------------------------------- file chunks without a second index

EDGE_FILES = [
    ("a/file.py", "file file_name fileName"),  # `file` in the path and the text
    ("b/empty.txt", ""),  # the chunk text is only `path file`
    ("c/File/x.md", "nothing here"),  # `file` only in the path (lowercased)
    ("d/doc.md", "path doc md doc"),  # path terms repeated in the text
    ("e/z.rs", "zebra ZEBRA z"),
    ("f/g.go", "file"),
]


def assert_same_chunk_index(files: list[tuple[str, str]], extra_terms: list[str]) -> None:
    built = ChunkIndex.build(file_chunks(files))
    derived = ChunkIndex.of_files(LexicalIndex.build(files))
    assert derived.paths == built.paths and derived.chunk_ids == built.chunk_ids and derived.symbols == built.symbols
    for name in ("tiebreak", "token_counts", "distinct_counts"):
        assert getattr(derived, name).tolist() == getattr(built, name).tolist(), name
    terms = built.postings.terms + extra_terms
    assert "file" in terms
    for term in terms:
        built_docs, built_counts = built.postings.get(term)
        derived_docs, derived_counts = derived.postings.get(term)
        assert (derived_docs.tolist(), derived_counts.tolist()) == (built_docs.tolist(), built_counts.tolist()), term


def test_file_chunk_index_equals_the_built_one_on_edge_files() -> None:
    assert_same_chunk_index(EDGE_FILES, ["absent", ""])


def test_file_chunk_index_equals_the_built_one_on_the_real_tree() -> None:
    assert_same_chunk_index(list(real_files()), ["absent"])


@pytest.mark.parametrize("terms", [[], ["a", "bc"], ["é", "x", "\udcff", "zz"], ["ascii", "naïve"]])
def test_utf8_ends_are_each_terms_end_in_the_joined_encoding(terms: list[str]) -> None:
    from pytest_retrieval_bench.index.postings import utf8_ends

    blob = "".join(terms).encode("utf-8", errors="surrogatepass")
    ends = [0, *utf8_ends(terms, blob).tolist()]
    assert [blob[a:b].decode("utf-8", errors="surrogatepass") for a, b in zip(ends, ends[1:])] == terms
