"""The RepoMap's word runs handed to the one-read build of the same snapshot (`repomap_content`).

A map built first keeps the word-run ids of every text it read whole; the lexical and chunk build
then takes them instead of reading those texts again. Every test compares against the builds
that read everything themselves, array for array, and one counts what the build still reads, so
a build that ignored what it was given, or read a text twice, fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_read_receipts import COMMIT, REPO, release_rows, write_chunk_file
from test_release_build import EDGE_TEXTS, RELEASE_CORPUS, TEXT, assert_same_chunks, assert_same_lexical, edge_rows, file_row, real_tree, releases, symbol_row

from pytest_retrieval_bench.corpus.chunks import read_chunk_file
from pytest_retrieval_bench.corpus.copies import PrivateCopies
from pytest_retrieval_bench.corpus.resolve import SnapshotResolver
from pytest_retrieval_bench.corpus.store import SnapshotStore
from pytest_retrieval_bench.index import release_build
from pytest_retrieval_bench.index.cache import IndexCache, encode
from pytest_retrieval_bench.index.chunk_index import ChunkIndex
from pytest_retrieval_bench.index.postings import LexicalIndex
from pytest_retrieval_bench.index.release_build import OneReadBuild
from pytest_retrieval_bench.index.repomap import build_repomap
from pytest_retrieval_bench.index.repomap_content import CONTENT_CHARS, MapContent, runs_before
from pytest_retrieval_bench.index.tokens import word_run_bytes


def kept_by_the_map(rows: list[dict[str, Any]]) -> MapContent:
    """What a map of `rows` keeps; the map itself must be the one built without keeping."""
    keep = MapContent()
    assert encode("k", build_repomap(rows, None, keep)) == encode("k", build_repomap(rows))
    return keep


def assert_given_changes_no_index(texts: dict[str, str], rows: list[dict[str, Any]], batch_tokens: int = 1 << 20) -> None:
    """Every build (both kinds, chunks alone, lexical alone) given the map's content gives the indexes of the reference builds."""
    for lexical, with_rows in ((True, True), (False, True), (True, False)):
        build = OneReadBuild(texts, rows if with_rows else None, lexical, batch_tokens, given=kept_by_the_map(rows))
        build.read()
        found_lexical, found_chunks = build.finish()
        if lexical:
            assert_same_lexical(found_lexical, LexicalIndex.build(sorted(texts.items())))
        if with_rows:
            assert_same_chunks(found_chunks, ChunkIndex.build(rows))


@pytest.mark.parametrize("batch_tokens", [1, 1 << 20])
def test_edge_rows_given_the_maps_content_match_the_reference(batch_tokens: int) -> None:
    rows = sorted(edge_rows(), key=lambda row: str(row.get("path")))
    assert_given_changes_no_index(EDGE_TEXTS, rows, batch_tokens)


@settings(max_examples=100, deadline=None)
@given(release=releases(), batch_tokens=st.sampled_from([1, 1 << 20]))
def test_random_releases_given_the_maps_content_match_the_reference(release: tuple[dict[str, str], list[dict[str, Any]]], batch_tokens: int) -> None:
    texts, rows = release
    for ordered in (rows, sorted(rows, key=lambda row: str(row.get("path")))):
        assert_given_changes_no_index(texts, ordered, batch_tokens)


def test_the_bundled_release_given_the_maps_content_matches_the_reference() -> None:
    chunk_files = sorted(RELEASE_CORPUS.rglob("*.chunks.jsonl*"))
    assert chunk_files
    for chunk_file in chunk_files:
        snapshot = read_chunk_file(chunk_file, "acme/x", "0" * 40)
        assert_given_changes_no_index(dict(snapshot.texts), list(snapshot.chunk_rows or []))


def test_a_text_longer_than_the_map_reads_or_another_text_is_not_given() -> None:
    """The map reads a long text's first `CONTENT_CHARS` characters only, so it keeps nothing of
    it; and ids kept for one text are never handed out for another under the same path."""
    long_text = "alpha beta\n" * (CONTENT_CHARS // 11 + 2)
    rows = [file_row("a/long.py", long_text), file_row("b/short.py", "gamma delta\n")]
    keep = kept_by_the_map(rows)
    assert set(keep.read) == {"b/short.py"}
    assert keep.take("b/short.py", "gamma delta, changed\n") is None
    assert keep.take("b/short.py", "gamma delta\n") is None, "handed over (or refused) once"
    assert_given_changes_no_index({"a/long.py": long_text, "b/short.py": "gamma delta\n"}, rows)
    other = {"a/long.py": long_text, "b/short.py": "epsilon\n"}  # the build's text is not the one the map read
    build = OneReadBuild(other, None, True, given=kept_by_the_map(rows))
    build.read()
    assert_same_lexical(build.finish()[0], LexicalIndex.build(sorted(other.items())))


def test_a_build_given_the_maps_content_reads_none_of_those_texts_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real text (the installed `_pytest` package, cut into symbol rows): the build given the map's
    content reads, through `word_run_bytes`, exactly the characters of the texts the map read
    whole fewer than the build that reads everything itself."""
    texts = real_tree()
    rows: list[dict[str, Any]] = []
    for path, text in texts.items():
        rows.append(file_row(path, text))
        lines = text.split("\n")
        rows += [symbol_row(path, text, number, number, "line") for number, line in enumerate(lines, start=1) if line.startswith("def ")]
    read: list[int] = []

    def counted(text: str) -> list[bytes]:
        read.append(len(text))
        return word_run_bytes(text)

    monkeypatch.setattr(release_build, "word_run_bytes", counted)
    totals = []
    for keep in (None, kept_by_the_map(rows)):
        whole = sum(len(text) for path, (text, _) in keep.read.items() if texts.get(path) == text) if keep is not None else 0
        read.clear()
        build = OneReadBuild(texts, rows, True, given=keep)
        build.read()
        build.finish()
        totals.append((sum(read), whole))
    (alone, _), (with_map, whole) = totals
    assert whole == sum(len(text) for text in texts.values() if len(text) <= CONTENT_CHARS) > 0  # each short text, none longer
    assert alone - with_map == whole


def test_a_cold_set_up_builds_the_map_first_and_hands_what_it_read_to_the_other_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A set-up that builds the map and the lexical and chunk indexes: the map first, its content
    taken by the other build for every text file; every index equals the one a set-up of that
    kind alone builds (no hand-over). A map from the cache hands nothing, and changes nothing."""
    corpus = tmp_path / "corpus"
    write_chunk_file(corpus, sorted(release_rows(), key=lambda row: row["path"]))
    taken: list[str] = []
    real_take = MapContent.take

    def counted(self: MapContent, path: str, text: str) -> Any:
        found = real_take(self, path, text)
        if found is not None:
            taken.append(path)
        return found

    monkeypatch.setattr(MapContent, "take", counted)

    def opened(kinds: list[str], cache: str) -> Any:
        store = SnapshotStore(SnapshotResolver(corpus_dirs=[corpus]), PrivateCopies(tmp_path / f"copies-{cache}", owned_root=None),
                              IndexCache(tmp_path / cache))
        return store.open(REPO, COMMIT, kinds), store

    together, store = opened(["repomap", "chunks", "lexical"], "together")
    assert sorted(taken) == sorted(together.texts) and taken
    assert [event["kind"] for event in store.drain_events()] == ["repomap", "chunks", "lexical"]
    assert store._map_content is None, "nothing of the map is kept past the set-up"
    taken.clear()
    alone = {kind: opened([kind], f"alone-{kind}")[0] for kind in ("repomap", "chunks", "lexical")}
    assert not taken
    assert encode("k", together.repomap_index()) == encode("k", alone["repomap"].repomap_index())
    assert encode("k", together.chunk_index()) == encode("k", alone["chunks"].chunk_index())
    assert encode("k", together.lexical_index()) == encode("k", alone["lexical"].lexical_index())
    mixed = SnapshotStore(SnapshotResolver(corpus_dirs=[corpus]), PrivateCopies(tmp_path / "copies-mixed", owned_root=None),
                          IndexCache(tmp_path / "alone-repomap"))  # holds the map only
    reopened = mixed.open(REPO, COMMIT, ["repomap", "chunks", "lexical"])
    assert not taken and {event["kind"]: event["source"] for event in mixed.drain_events()} == {"repomap": "cache", "chunks": "built",
                                                                                                  "lexical": "built"}
    assert encode("k", reopened.lexical_index()) == encode("k", alone["lexical"].lexical_index())


@settings(max_examples=300, deadline=None)
@given(text=TEXT, data=st.data())
def test_runs_before_line_starts_counts_the_word_runs_before_them(text: str, data: Any) -> None:
    lines = text.split("\n")
    cuts = sorted(set(data.draw(st.lists(st.integers(min_value=0, max_value=len(lines)), max_size=6))) | {0, len(lines)})
    starts = [len("\n".join(lines[:cut])) + (1 if 0 < cut < len(lines) else 0) for cut in cuts]
    assert runs_before(text, cuts) == [len(word_run_bytes(text[:start])) for start in starts]
