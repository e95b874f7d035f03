"""Test-only oracles for the frozen lexical arms of SPEC 3.1.

* bm25:all / bm25:ident agree with bm25s (Lucene variant, float64) fed the very same tokens;
* grep / grep-ident rankings agree with a deliberately naive per-file scan written here;
* the on-disk index cache round-trips exactly and rejects damaged or foreign entries;
* arb-lexical / arb-bm25 reproduce the bench's own rankings recorded in a fixture.

The real tree is the installed `_pytest` package; the queries are built from its identifiers,
file names and docstring sentences with a fixed seed.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import random
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zstandard

import _pytest
from pytest_retrieval_bench.arms.arb_reference import ArbReferenceArm, bm25_chunk_scores, lexical_chunk_scores
from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.arms.lexical import BM25_B, BM25_K1, RANKING_CAP, BM25Arm, GrepArm, GrepIdentArm, bm25_scores
from pytest_retrieval_bench.index.tokens import bench_tokens, grep_terms, ident_terms, query_identifiers
from pytest_retrieval_bench.corpus.snapshot import MAX_TEXT_BYTES, Snapshot
from pytest_retrieval_bench.corpus.tree import read_directory
from pytest_retrieval_bench.index.chunk_index import ChunkIndex, file_chunks
from pytest_retrieval_bench.index.postings import LexicalIndex
from pytest_retrieval_bench.index.cache import MAGIC, IndexCache, cache_key, decode, encode
from pytest_retrieval_bench.index.lazy_rows import LazyRows
from pytest_retrieval_bench.samples.arb import query_text_for_eval

ROOT = Path(__file__).resolve().parent.parent
REAL_TREE = Path(_pytest.__file__).resolve().parent
COMMIT = "0" * 40
ARMS = (GrepArm(), GrepIdentArm(), BM25Arm("bm25:all"), BM25Arm("bm25:ident"), ArbReferenceArm("arb-lexical"), ArbReferenceArm("arb-bm25"))


# --------------------------------------------------------------------------- helpers


KINDS = ("lexical", "chunks")


def build_index(snapshot: Snapshot, kind: str) -> LexicalIndex | ChunkIndex:
    """The snapshot's index loader: "lexical" (whole files) or "chunks" (chunk rows, else file chunks)."""
    if kind == "lexical":
        return LexicalIndex.build(snapshot.text_files())
    rows = snapshot.chunk_rows if snapshot.chunk_rows is not None else file_chunks(snapshot.text_files())
    return ChunkIndex.build(rows)


def build_indexes(snapshot: Snapshot) -> tuple[LexicalIndex, ChunkIndex]:
    return build_index(snapshot, "lexical"), build_index(snapshot, "chunks")  # type: ignore[return-value]


def with_loader(snapshot: Snapshot) -> Snapshot:
    snapshot.index_loader = build_index
    return snapshot


def store_both(cache: IndexCache, digest: str, lexical: LexicalIndex, chunks: ChunkIndex) -> None:
    cache.store(digest, "lexical", lexical)
    cache.store(digest, "chunks", chunks)


def load_both(cache: IndexCache, digest: str) -> tuple[LexicalIndex, ChunkIndex] | None:
    lexical, chunks = cache.load(digest, "lexical"), cache.load(digest, "chunks")
    return None if lexical is None or chunks is None else (lexical, chunks)  # type: ignore[return-value]


def round_trip(digest: str, lexical: LexicalIndex, chunks: ChunkIndex) -> tuple[LexicalIndex, ChunkIndex]:
    decoded = [decode(cache_key(digest, kind), kind, encode(cache_key(digest, kind), index)) for kind, index in zip(KINDS, (lexical, chunks))]
    return decoded[0], decoded[1]  # type: ignore[return-value]


def query_text_of(query: Any) -> str:
    """A plain-text query is its own text; an object is rendered as the bench renders it."""
    return query if isinstance(query, str) else query_text_for_eval(query)


def request(snapshot: Any, query: Any, sample_id: str = "q") -> Request:
    return Request(sample_id=sample_id, task_type="bug2code", repo=snapshot.repo, base_commit=snapshot.commit,
                   query=query, query_text=query_text_of(query), changed_file=None, k=10, snapshot=snapshot)


class Loaded:
    """A request snapshot whose indexes are given (e.g. decoded from the cache)."""

    def __init__(self, snapshot: Snapshot, lexical: LexicalIndex, chunks: ChunkIndex):
        self.repo, self.commit = snapshot.repo, snapshot.commit
        self._lexical, self._chunks = lexical, chunks
        self.read_text = snapshot.read_text

    def lexical_index(self) -> LexicalIndex:
        return self._lexical

    def chunk_index(self) -> ChunkIndex:
        return self._chunks


# --------------------------------------------------------------------------- the real tree and its queries


@functools.lru_cache(maxsize=None)
def real_snapshot() -> Snapshot:
    return with_loader(read_directory(REAL_TREE, "pytest-dev/pytest", COMMIT))


def _first_sentence(docstring: str) -> str | None:
    text = " ".join(docstring.split())
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return sentence if 25 <= len(sentence) <= 160 else None


@functools.lru_cache(maxsize=None)
def real_queries() -> tuple[Any, ...]:
    """~20 queries from the tree's identifiers, file names and docstrings (fixed seed)."""
    snapshot = real_snapshot()
    camel: set[str] = set()
    snake: set[str] = set()
    sentences: set[str] = set()
    for path, text in snapshot.text_files():
        if not path.endswith(".py"):
            continue
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = node.name
                if re.search(r"[a-z][A-Z]", name) and len(name) >= 6:
                    camel.add(name)
                elif re.search(r"[A-Za-z0-9]_[A-Za-z0-9]", name) and len(name) >= 8:
                    snake.add(name)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                docstring = ast.get_docstring(node)
                sentence = _first_sentence(docstring) if docstring else None
                if sentence:
                    sentences.add(sentence)
    rng = random.Random(20240611)
    camel_names, snake_names, docs = sorted(camel), sorted(snake), sorted(sentences)
    paths = sorted(path for path in snapshot.texts if path.endswith(".py"))
    queries: list[Any] = []
    for _ in range(5):  # plain docstring sentences
        queries.append(rng.choice(docs))
    for _ in range(5):  # issue-style objects: a sentence plus identifiers
        queries.append({"title": rng.choice(docs), "body": f"Calling {rng.choice(snake_names)} on a {rng.choice(camel_names)} fails."})
    for _ in range(4):  # trace-style objects naming a file
        path = rng.choice(paths)
        queries.append({"trace": f'File "src/_pytest/{path}", line {rng.randint(10, 900)}, in {rng.choice(snake_names)}\n'
                                 f"{rng.choice(camel_names)}: {rng.choice(docs)}"})
    queries += [
        # identifiers in keys (ignored), numbers (ignored), nested values (used)
        {"FixtureRequest": "getfixturevalue raised for the requested fixture", "pytest_runtest_setup": 12345,
         "details": {"CallInfo_from_call": [3.5, "see runner.py and the CallInfo object", 7], "TestReport": None}},
        # a dotted module name written as a file: stem "_pytest.fixtures"
        {"title": "ImportError in _pytest.fixtures.py when collecting", "body": "happens for every FixtureDef"},
        "the and or but",  # grep terms, no identifiers
        "a b c",  # nothing usable at all
    ]
    return tuple(queries)


QUERY_IDS = [f"q{number:02d}" for number in range(18)]


@pytest.fixture(scope="module")
def snapshot() -> Snapshot:
    return real_snapshot()


@pytest.fixture(scope="module")
def queries() -> tuple[Any, ...]:
    built = real_queries()
    assert len(built) == len(QUERY_IDS)
    return built


def test_real_tree_and_queries_are_substantial(snapshot: Snapshot, queries: tuple[Any, ...]) -> None:
    assert len(snapshot.texts) >= 50
    with_identifiers = [query for query in queries if query_identifiers(query)]
    assert len(with_identifiers) >= 10
    ranked = [query for query in queries if GrepIdentArm().retrieve(request(snapshot, query)).ranking]
    assert len(ranked) >= 8


# --------------------------------------------------------------------------- 1. BM25 against bm25s


def bm25s_engine(snapshot: Snapshot):
    bm25s = pytest.importorskip("bm25s")
    corpus = [bench_tokens(text) for _, text in snapshot.text_files()]
    engine = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene", idf_method="lucene", dtype="float64")
    engine.index(corpus, show_progress=False)
    return engine


def bm25s_scores(engine: Any, size: int, terms: list[str]) -> np.ndarray:
    """bm25s counts a repeated query token repeatedly: give it each distinct term once."""
    distinct = list(dict.fromkeys(terms))
    if not distinct:
        return np.zeros(size)
    scores = np.asarray(engine.get_scores(distinct), dtype=np.float64)
    assert scores.dtype == np.float64 and scores.shape == (size,)
    return scores


def bm25_terms(variant: str, query: Any) -> list[str]:
    return grep_terms(query_text_of(query)) if variant == "bm25:all" else ident_terms(query_identifiers(query))


def expected_bm25_ranking(paths: list[str], scores: np.ndarray) -> list[str]:
    positive = [position for position in range(len(paths)) if scores[position] > 0]
    return [paths[position] for position in sorted(positive, key=lambda position: (-scores[position], paths[position]))][:RANKING_CAP]


def check_bm25(snapshot: Snapshot, engine: Any, variant: str, query: Any) -> int:
    index: LexicalIndex = snapshot.lexical_index()
    assert index.paths == [path for path, _ in snapshot.text_files()]
    terms = bm25_terms(variant, query)
    ours = bm25_scores(index, terms)
    theirs = bm25s_scores(engine, len(index.paths), terms) * (BM25_K1 + 1.0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=0.0)
    assert np.array_equal(ours > 0, theirs > 0)
    # each distinct query term counts once
    np.testing.assert_array_equal(bm25_scores(index, terms + terms[::-1]), ours)
    ranking = BM25Arm(variant).retrieve(request(snapshot, query)).ranking
    assert ranking == expected_bm25_ranking(index.paths, ours)
    return len(ranking)


@pytest.fixture(scope="module")
def real_bm25s(snapshot: Snapshot):
    return bm25s_engine(snapshot)


@pytest.mark.parametrize("variant", ["bm25:all", "bm25:ident"])
@pytest.mark.parametrize("number", range(len(QUERY_IDS)), ids=QUERY_IDS)
def test_bm25_matches_bm25s_on_real_tree(snapshot: Snapshot, queries: tuple[Any, ...], real_bm25s: Any, variant: str, number: int) -> None:
    check_bm25(snapshot, real_bm25s, variant, queries[number])


def test_bm25_real_tree_queries_rank_something(snapshot: Snapshot, queries: tuple[Any, ...]) -> None:
    ranked = sum(bool(BM25Arm(variant).retrieve(request(snapshot, query)).ranking) for variant in ("bm25:all", "bm25:ident") for query in queries)
    assert ranked >= 25  # the comparison with bm25s is not vacuous


def write_tiny_corpus(root: Path) -> None:
    files: dict[str, bytes] = {
        "empty.py": b"",
        "nul.bin": b"parse\x00request",
        "big.txt": b"request " * (MAX_TEXT_BYTES // 8) + b"x",  # over 1 MiB
        "exact.txt": b"r" * MAX_TEXT_BYTES,  # exactly 1 MiB: not under it
        "under.txt": (b"alpha " * (MAX_TEXT_BYTES // 6 + 1))[: MAX_TEXT_BYTES - 1],
        "src/parser.py": b"def parseHTTPRequest(raw):\n    return http_request_parse(raw)  # parse parse\n",
        "src/http_util.py": b"def http_request_parse(raw):\n    '''Parse an HTTP request.'''\n    return raw.split()\n",
        "docs/guide.md": b"# Guide\n\nRequest parsing: call parseHTTPRequest on the raw HTTP request bytes.\n",
        "bad_utf8.txt": b"caf\xe9 request \xff\xfe alpha\n",
        "nested/deep/mod.rs": b"pub fn parse_request() -> Request { Request::new() }\n",
        "web/index.d.ts": b"export declare function parseRequest(raw: string): Request;\n",
        "web/app.ts": b"import { parseRequest } from './index.d';\nconst my_plugin = 'my-plugin';\n",
    }
    for relative, data in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


TINY_QUERIES: tuple[Any, ...] = (
    "parse HTTP request",
    "parseHTTPRequest",
    "alpha alpha request",
    "request request request",
    "nothing matches zzz",
    "",
    {"title": "parseHTTPRequest and http_request_parse in src/parser.py", "n": 3},
    {"body": "index.d.ts exports parseRequest; my-plugin.ts and mod.rs"},
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    root = tmp_path_factory.mktemp("tiny")
    write_tiny_corpus(root)
    return with_loader(read_directory(root, "tiny/corpus", COMMIT))


def test_tiny_corpus_text_file_rule(tiny: Snapshot) -> None:
    assert sorted(tiny.texts) == ["bad_utf8.txt", "docs/guide.md", "empty.py", "nested/deep/mod.rs", "src/http_util.py",
                                  "src/parser.py", "under.txt", "web/app.ts", "web/index.d.ts"]
    assert tiny.other_paths == ("big.txt", "exact.txt", "nul.bin")
    assert tiny.texts["empty.py"] == ""
    assert tiny.texts["bad_utf8.txt"] == "caf\ufffd request \ufffd\ufffd alpha\n"
    index = tiny.lexical_index()
    assert index.paths == sorted(tiny.texts)
    assert int(index.doc_lengths[index.paths.index("empty.py")]) == 0
    # 1,048,575 bytes = 174,762 times "alpha " and then "alp"
    assert int(index.doc_lengths[index.paths.index("under.txt")]) == 174_763


@pytest.fixture(scope="module")
def tiny_bm25s(tiny: Snapshot):
    return bm25s_engine(tiny)


@pytest.mark.parametrize("variant", ["bm25:all", "bm25:ident"])
@pytest.mark.parametrize("number", range(len(TINY_QUERIES)))
def test_bm25_matches_bm25s_on_tiny_corpus(tiny: Snapshot, tiny_bm25s: Any, variant: str, number: int) -> None:
    check_bm25(tiny, tiny_bm25s, variant, TINY_QUERIES[number])


def test_bm25_tiny_corpus_by_hand(tiny: Snapshot) -> None:
    """One score written out from the formula, so the oracle itself is pinned."""
    index = tiny.lexical_index()
    size = len(index.paths)
    lengths = {path: len(bench_tokens(text)) for path, text in tiny.text_files()}
    mean = sum(lengths.values()) / size
    # "parse" is 4 times in src/parser.py (parseHTTPRequest, http_request_parse, "parse parse"), and in
    # 6 of the 9 text files (parser.py, http_util.py, guide.md, mod.rs, app.ts, index.d.ts)
    tf = 4
    df = 6
    assert size == 9 and bench_tokens(tiny.texts["src/parser.py"]).count("parse") == tf
    idf = math.log(1 + (size - df + 0.5) / (df + 0.5))
    expected = idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * lengths["src/parser.py"] / mean))
    scores = bm25_scores(index, ["parse"])
    assert scores[index.paths.index("src/parser.py")] == pytest.approx(expected, rel=1e-12)
    assert scores[index.paths.index("empty.py")] == 0.0
    assert BM25Arm("bm25:all").retrieve(request(tiny, "zzz qqq")).ranking == []


# --------------------------------------------------------------------------- 2. grep / grep-ident against a naive scan

_WORD_CHAR = "A-Za-z0-9_"


def naive_grep(snapshot: Snapshot, query_text: str) -> list[str]:
    terms = grep_terms(query_text)
    scored = []
    for path, content in snapshot.text_files():
        path_tokens = set(bench_tokens(path))
        content_counts = Counter(bench_tokens(content))
        score = sum(2 if term in path_tokens else 1 if term in content_counts else 0 for term in terms)
        occurrences = sum(content_counts[term] for term in terms)
        if score > 0:
            scored.append((-score, -occurrences, path))
    return [path for _, _, path in sorted(scored)][:RANKING_CAP]


def naive_grep_ident(snapshot: Snapshot, query: Any) -> list[str]:
    identifiers = query_identifiers(query)
    scored = []
    for path, content in snapshot.text_files():
        score = occurrences = 0
        for identifier in identifiers:
            pattern = re.compile(f"(?<![{_WORD_CHAR}])" + re.escape(identifier) + f"(?![{_WORD_CHAR}])")
            matches = len(pattern.findall(content))
            score += 1 if matches else 0
            occurrences += matches
            score += 1 if identifier.lower() in path.lower() else 0
        if score > 0:
            scored.append((-score, -occurrences, path))
    return [path for _, _, path in sorted(scored)][:RANKING_CAP]


@pytest.mark.parametrize("number", range(len(QUERY_IDS)), ids=QUERY_IDS)
def test_grep_matches_naive_scan_on_real_tree(snapshot: Snapshot, queries: tuple[Any, ...], number: int) -> None:
    query = queries[number]
    answer = GrepArm().retrieve(request(snapshot, query))
    assert answer.ranking == naive_grep(snapshot, query_text_of(query))


@pytest.mark.parametrize("number", range(len(QUERY_IDS)), ids=QUERY_IDS)
def test_grep_ident_matches_naive_scan_on_real_tree(snapshot: Snapshot, queries: tuple[Any, ...], number: int) -> None:
    query = queries[number]
    answer = GrepIdentArm().retrieve(request(snapshot, query))
    assert answer.ranking == naive_grep_ident(snapshot, query)
    if not query_identifiers(query):
        assert answer.state == "NO_IDENTIFIERS" and answer.is_abstention


def test_grep_ident_json_query_ignores_keys_and_numbers(snapshot: Snapshot, queries: tuple[Any, ...]) -> None:
    query = next(query for query in queries if isinstance(query, dict) and "FixtureRequest" in query)
    # "getfixturevalue" has neither an inner underscore nor a camel boundary; "runner" is the stem of runner.py
    assert query_identifiers(query) == ["CallInfo", "runner"]
    ranking = GrepIdentArm().retrieve(request(snapshot, query)).ranking
    assert ranking == naive_grep_ident(snapshot, query)
    assert ranking and ranking[0] == "runner.py"  # CallInfo is defined there and the stem names it
    # the keys would have matched: the oracle really does ignore them
    assert "FixtureRequest" not in query_identifiers(query)
    assert naive_grep_ident(snapshot, {"q": "FixtureRequest pytest_runtest_setup"})[:1] != []


@pytest.mark.parametrize("number", range(len(TINY_QUERIES)))
def test_grep_arms_match_naive_scan_on_tiny_corpus(tiny: Snapshot, number: int) -> None:
    query = TINY_QUERIES[number]
    assert GrepArm().retrieve(request(tiny, query)).ranking == naive_grep(tiny, query_text_of(query))
    assert GrepIdentArm().retrieve(request(tiny, query)).ranking == naive_grep_ident(tiny, query)


def test_grep_tiny_corpus_by_hand(tiny: Snapshot) -> None:
    ranking = GrepArm().retrieve(request(tiny, "parse request")).ranking
    # score 2 for every file with both terms, ordered by occurrences (5, 4, 4, 3, 3, 2) then path;
    # bad_utf8.txt has "request" only (score 1)
    assert ranking == ["src/parser.py", "nested/deep/mod.rs", "src/http_util.py", "docs/guide.md", "web/index.d.ts",
                       "web/app.ts", "bad_utf8.txt"]
    # the path token scores 2: "deep" is only in a path
    assert GrepArm().retrieve(request(tiny, "deep alpha")).ranking == ["nested/deep/mod.rs", "under.txt", "bad_utf8.txt"]


def test_grep_ident_stems_with_dots_and_dashes_are_whole_words(tiny: Snapshot) -> None:
    """SPEC 3.1: a file scores each identifier it contains as a whole word (no [A-Za-z0-9_] on either
    side). The stems `index.d` and `my-plugin` occur so in web/app.ts (`'./index.d'`, `'my-plugin'`)."""
    query = {"body": "see index.d.ts and my-plugin.py"}
    assert query_identifiers(query) == ["index.d", "my-plugin"]
    ranking = GrepIdentArm().retrieve(request(tiny, query)).ranking
    # web/app.ts: 2 whole-word identifiers, 0 path hits; web/index.d.ts: "index.d" in its path (1)
    assert ranking == naive_grep_ident(tiny, query) == ["web/app.ts", "web/index.d.ts"]


# --------------------------------------------------------------------------- 3. the index cache


def all_rankings(handle: Any, queries: tuple[Any, ...]) -> list[list[str]]:
    return [arm.retrieve(request(handle, query)).ranking for query in queries for arm in ARMS]


def test_cache_round_trip_gives_identical_rankings(snapshot: Snapshot, queries: tuple[Any, ...], tmp_path: Path) -> None:
    lexical, chunks = snapshot.lexical_index(), snapshot.chunk_index()
    digest = snapshot.content_digest()
    decoded_lexical, decoded_chunks = round_trip(digest, lexical, chunks)
    assert decoded_lexical.paths == lexical.paths and decoded_chunks.paths == chunks.paths
    assert decoded_chunks.chunk_ids == chunks.chunk_ids and decoded_chunks.symbols == chunks.symbols
    np.testing.assert_array_equal(decoded_lexical.doc_lengths, lexical.doc_lengths)
    for before, after in [(getattr(lexical, name), getattr(decoded_lexical, name)) for name in ("content", "path_tokens", "words")] + [
        (chunks.postings, decoded_chunks.postings)
    ]:
        assert after.terms == before.terms
        for field in ("offsets", "docs", "counts"):
            np.testing.assert_array_equal(getattr(after, field), getattr(before, field))
    for field in ("tiebreak", "token_counts", "distinct_counts"):
        np.testing.assert_array_equal(getattr(decoded_chunks, field), getattr(chunks, field))

    cache = IndexCache(tmp_path / "cache")
    assert load_both(cache, digest) is None
    store_both(cache, digest, lexical, chunks)
    loaded = load_both(cache, digest)
    assert loaded is not None
    expected = all_rankings(snapshot, queries)
    assert sum(1 for ranking in expected if ranking) >= 40
    assert all_rankings(Loaded(snapshot, decoded_lexical, decoded_chunks), queries) == expected
    assert all_rankings(Loaded(snapshot, *loaded), queries) == expected
    loaded_chunks = loaded[1]
    per_row = (loaded_chunks.paths, loaded_chunks.chunk_ids, loaded_chunks.symbols)
    assert all(isinstance(rows, LazyRows) and not rows.made for rows in per_row), "the rankers read no per-row list"
    assert per_row == (chunks.paths, chunks.chunk_ids, chunks.symbols)


def test_cache_round_trip_empty_snapshot() -> None:
    empty = Snapshot(repo="a/b", commit=COMMIT, origin="memory", texts={"blank.txt": ""})
    decoded_lexical, decoded_chunks = round_trip(empty.content_digest(), *build_indexes(empty))
    assert decoded_lexical.paths == ["blank.txt"] and decoded_lexical.content.terms == []
    handle = Loaded(empty, decoded_lexical, decoded_chunks)
    assert [arm.retrieve(request(handle, "anything here")).ranking for arm in ARMS] == [[], [], [], [], ["blank.txt"], ["blank.txt"]]


@pytest.fixture(params=KINDS)
def small_cache(request: pytest.FixtureRequest, tiny: Snapshot, tmp_path: Path) -> tuple[IndexCache, str, str, Path, bytes]:
    """One cache entry of the tiny corpus (without its 1 MiB file): (cache, digest, kind, file, bytes)."""
    kind = request.param
    small = with_loader(Snapshot(repo="tiny/corpus", commit=COMMIT, origin="memory",
                                 texts={path: text for path, text in tiny.texts.items() if path != "under.txt"}))
    cache = IndexCache(tmp_path / "cache")
    digest = small.content_digest()
    cache.store(digest, kind, small.lexical_index() if kind == "lexical" else small.chunk_index())
    files = list((tmp_path / "cache").rglob("*.idx.zst"))
    assert len(files) == 1
    return cache, digest, kind, files[0], files[0].read_bytes()


def same_index(key: str, first: Any, second: Any) -> bool:
    """Equal content (encoding is deterministic: same arrays and lists, same bytes)."""
    return encode(key, first) == encode(key, second)


def test_cache_rejects_truncated_entries(small_cache: tuple[IndexCache, str, str, Path, bytes]) -> None:
    cache, digest, kind, path, data = small_cache
    assert cache.load(digest, kind) is not None
    accepted = []
    for length in range(len(data)):
        path.write_bytes(data[:length])
        if cache.load(digest, kind) is not None:
            accepted.append(length)
    assert accepted == [], f"truncated entries accepted at lengths {accepted[:20]} of {len(data)}"


def test_cache_bit_flips_never_change_a_result(small_cache: tuple[IndexCache, str, str, Path, bytes]) -> None:
    """Every single-bit flip of the entry is refused, or decodes to exactly the stored index.

    (A few bits of a zstd frame do not affect its content, e.g. an unused header bit. Those may
    be accepted. Clearing the checksum flag is not: a frame without a checksum is refused.)
    """
    cache, digest, kind, path, data = small_cache
    key = cache_key(digest, kind)
    original = decode(key, kind, data)
    accepted_same = 0
    changed = []
    for position in range(len(data)):
        for bit in range(8):
            damaged = bytearray(data)
            damaged[position] ^= 1 << bit
            path.write_bytes(bytes(damaged))
            loaded = cache.load(digest, kind)
            if loaded is None:
                continue
            if same_index(key, loaded, original):
                accepted_same += 1
            else:
                changed.append((position, bit))
    assert changed == [], f"bit flips changed the loaded index: {changed[:20]}"
    assert accepted_same < len(data) * 8 // 100  # nearly every flip is detected
    # trailing bytes after the frame: refused
    path.write_bytes(data + b"\0garbage")
    assert cache.load(digest, kind) is None


def test_cache_refuses_a_frame_without_its_content_checksum(small_cache: tuple[IndexCache, str, str, Path, bytes]) -> None:
    """The frame's checksum is what finds damage, so the same body in a frame without one is refused."""
    cache, digest, kind, path, data = small_cache
    body = zstandard.ZstdDecompressor().decompress(data[len(MAGIC) :])
    path.write_bytes(MAGIC + zstandard.ZstdCompressor(write_checksum=False, write_content_size=True).compress(body))
    assert cache.load(digest, kind) is None
    path.write_bytes(MAGIC + zstandard.ZstdCompressor(write_checksum=True, write_content_size=True).compress(body))
    assert cache.load(digest, kind) is not None


def test_cache_recovers_after_damage(small_cache: tuple[IndexCache, str, str, Path, bytes]) -> None:
    cache, digest, kind, path, data = small_cache
    original = decode(cache_key(digest, kind), kind, data)
    path.write_bytes(data[: len(data) // 2])
    assert cache.load(digest, kind) is None
    cache.store(digest, kind, original)
    assert path.read_bytes() == data
    reloaded = cache.load(digest, kind)
    assert reloaded is not None and same_index(cache_key(digest, kind), reloaded, original)


def test_cache_rejects_wrong_key(small_cache: tuple[IndexCache, str, str, Path, bytes]) -> None:
    cache, digest, kind, path, data = small_cache
    other_kind = "chunks" if kind == "lexical" else "lexical"
    other = "f" * 64
    assert cache.load(other, kind) is None
    assert cache.load(digest, other_kind) is None
    # the right bytes filed under another key are still refused: the header names its key
    for wrong_digest, wrong_kind in ((other, kind), (digest, other_kind)):
        wrong_path = cache._path(cache_key(wrong_digest, wrong_kind))
        wrong_path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, wrong_path)
        assert cache.load(wrong_digest, wrong_kind) is None
    assert cache.load(digest, kind) is not None
    with pytest.raises(ValueError):
        decode(cache_key(other, kind), kind, data)


def _undecodable_name_tree(tmp_path: Path) -> Snapshot:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "ok.py").write_text("def parse_request():\n    pass\n")
    try:
        (root / "caf\udce9.py").write_text("x = 1\n")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system does not take a non-UTF-8 file name")
    return with_loader(read_directory(root, "a/b", COMMIT))


def test_content_digest_with_undecodable_file_name(tmp_path: Path) -> None:
    """A file name that is not UTF-8 (legal on POSIX) is left out and listed (no report could hold it);
    the cache key must still be computable."""
    snapshot = _undecodable_name_tree(tmp_path)
    assert "caf\udce9.py" not in snapshot.texts and snapshot.undecodable_paths == ("caf\\xe9.py",)
    digest = snapshot.content_digest()
    assert len(digest) == 64


def test_cache_store_with_undecodable_file_name_saves_time_only(tmp_path: Path) -> None:
    """The cache 'can only save time, never change a result': storing must not raise."""
    snapshot = _undecodable_name_tree(tmp_path)
    lexical, chunks = build_indexes(snapshot)
    cache = IndexCache(tmp_path / "cache")
    store_both(cache, "e" * 64, lexical, chunks)
    loaded = load_both(cache, "e" * 64)
    assert loaded is None or (loaded[0].paths == lexical.paths and loaded[1].paths == chunks.paths)


# --------------------------------------------------------------------------- 4. the bench's own rankers, recorded

RELEASE_CORPUS = ROOT / "testdata" / "release" / "corpus" / "synthetic_v1"
RELEASE_SAMPLES = ROOT / "testdata" / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
RANKINGS_FIXTURE = ROOT / "tests" / "fixtures" / "arb_reference" / "rankings.json"
ARB_NAMES = {"lexical": "arb-lexical", "bm25": "arb-bm25"}
ARB_SCORERS = {"lexical": lexical_chunk_scores, "bm25": bm25_chunk_scores}
FIXTURE_ABSENT = not (RELEASE_CORPUS.is_dir() and RELEASE_SAMPLES.is_file() and RANKINGS_FIXTURE.is_file())
FIXTURE_REASON = ("fixture absent: needs testdata/release/corpus/synthetic_v1/, testdata/release/benchmark/synthetic_v1/"
                  "samples.jsonl and tests/fixtures/arb_reference/rankings.json (the bench's own rankings)")


@functools.lru_cache(maxsize=None)
def arb_cases() -> tuple[tuple[dict[str, Any], Snapshot, dict[str, Any]], ...]:
    """(sample, snapshot read from its chunk file, recorded rankings) for every recorded sample."""
    from pytest_retrieval_bench.corpus.chunks import find_chunk_file, read_chunk_file

    recorded = json.loads(RANKINGS_FIXTURE.read_text(encoding="utf-8"))["samples"]
    samples = [json.loads(line) for line in RELEASE_SAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    snapshots: dict[tuple[str, str], Snapshot] = {}
    cases = []
    for sample in samples:
        if sample["id"] not in recorded:
            continue
        key = (sample["repo"], sample["base_commit"])
        if key not in snapshots:
            chunk_file = find_chunk_file(RELEASE_CORPUS, *key)
            assert chunk_file is not None, f"no chunk file for {key}"
            loaded = read_chunk_file(chunk_file, *key)
            rows = list(loaded.chunk_rows or [])
            assert any(row.get("kind") != "file" for row in rows)  # symbol chunks take part too
            loaded.index_loader = lambda s, kind, rows=rows: LexicalIndex.build(s.text_files()) if kind == "lexical" else ChunkIndex.build(rows)
            snapshots[key] = loaded
        cases.append((sample, snapshots[key], recorded[sample["id"]]))
    return tuple(cases)


def arb_request(sample: dict[str, Any], snapshot: Snapshot) -> Request:
    query = sample.get("query") or {}
    return Request(sample_id=sample["id"], task_type=sample.get("task_type", ""), repo=sample["repo"], base_commit=sample["base_commit"],
                   query=query, query_text=query_text_for_eval(query), changed_file=None, k=10, snapshot=snapshot)


@pytest.mark.skipif(FIXTURE_ABSENT, reason=FIXTURE_REASON)
def test_arb_reference_arms_reproduce_recorded_paths() -> None:
    cases = arb_cases()
    samples = [line for line in RELEASE_SAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(cases) >= len(samples) - 1  # the README leaves out only the one unlabeled sample
    mismatches: list[str] = []
    compared = 0
    for sample, snapshot, recorded in cases:
        for ranker, arm_name in ARB_NAMES.items():
            expected = recorded[ranker]["paths"]
            assert 0 < len(expected) <= 50
            got = ArbReferenceArm(arm_name).retrieve(arb_request(sample, snapshot)).ranking
            compared += 1
            if got[: len(expected)] != expected:
                mismatches.append(f"{sample['id']} {arm_name}: expected {expected[:5]}..., got {got[:5]}...")
            if len(expected) < 50:  # the whole repository was listed: so must we
                assert len(got) == len(expected), f"{sample['id']} {arm_name}: {len(got)} paths, recorded {len(expected)}"
    assert compared == 2 * len(cases)
    assert mismatches == [], "\n".join(mismatches[:20])


@pytest.mark.skipif(FIXTURE_ABSENT, reason=FIXTURE_REASON)
def test_arb_reference_chunk_scores_are_bit_identical() -> None:
    """The top 50 (path, chunk id, score) of both rankers, scores compared as exact float reprs."""
    mismatches: list[str] = []
    for sample, snapshot, recorded in arb_cases():
        index: ChunkIndex = snapshot.chunk_index()
        query_text = query_text_for_eval(sample.get("query") or {})
        for ranker, scorer in ARB_SCORERS.items():
            expected = [list(item) for item in recorded[ranker]["chunks"]]
            scores = scorer(index, query_text)
            order = np.lexsort((index.tiebreak, -scores))[: len(expected)]
            got = [[index.paths[i], index.chunk_ids[i], repr(float(scores[i]))] for i in order]
            if got != expected:
                first = next(n for n, (a, b) in enumerate(zip(got, expected)) if a != b)
                mismatches.append(f"{sample['id']} {ranker} at rank {first + 1}: expected {expected[first]}, got {got[first]}")
    assert mismatches == [], "\n".join(mismatches[:20])


MRR_FIXTURE = ROOT / "tests" / "fixtures" / "arb_reference" / "mrr.json"


@pytest.mark.skipif(FIXTURE_ABSENT or not MRR_FIXTURE.is_file(), reason=FIXTURE_REASON + " and mrr.json (the bench's MRR per sample)")
def test_arb_reference_arms_give_the_benchs_mrr_past_the_limit() -> None:
    """The record's `mrr` against the MRR the bench's evaluator published, at a limit of 5 (so the first
    gold file often ranks past the cut). The bench keeps given files in its ranking and the protocol
    removes them: where the bench ranks a given file above the first gold file that is not given, the
    rank moves up by the number of such given files, counted in the bench's own recorded ranking."""
    from pytest_retrieval_bench.bench.run import score
    from pytest_retrieval_bench.samples.arb import parse_arb_row

    published = json.loads(MRR_FIXTURE.read_text(encoding="utf-8"))["samples"]
    same = shifted = past_limit = 0
    for row, snapshot, recorded in arb_cases():
        if row["id"] not in published:  # a no-gold sample: no MRR
            continue
        sample = parse_arb_row(row, "samples.jsonl", 1)
        for ranker, arm_name in ARB_NAMES.items():
            bench = published[row["id"]][ranker]
            scored = score(sample, ArbReferenceArm(arm_name).retrieve(arb_request(row, snapshot)), None, 5)
            ranks = [rank for path, rank in bench["gold_ranks"].items() if rank and path not in sample.given_files]
            first = min(ranks) if ranks else None
            bench_paths = recorded[ranker]["paths"]
            assert first is None or first <= len(bench_paths), row["id"]
            ahead = sum(1 for path in bench_paths[: (first or len(bench_paths) + 1) - 1] if path in sample.given_files)
            rank = first - ahead if first else None
            assert scored["rank_of_first_gold_uncut"] == rank, (row["id"], ranker)
            if ahead == 0 and first == min([r for r in bench["gold_ranks"].values() if r], default=None):
                assert scored["metrics"]["mrr"] == bench["MRR"], (row["id"], ranker)  # the bench's number, bit for bit
                same += 1
            else:
                assert scored["metrics"]["mrr"] == (1.0 / rank if rank else 0.0), (row["id"], ranker)
                shifted += 1
            past_limit += rank is not None and rank > 5
    assert same >= 30 and shifted >= 10 and past_limit >= 10, (same, shifted, past_limit)  # 36, 20 and 11 when recorded


def test_tree_chunk_index_read_off_the_whole_file_index_scores_bit_identically(snapshot: Snapshot, queries: tuple[Any, ...]) -> None:
    """A tree's chunk index is `ChunkIndex.of_files(lexical index)`; the oracles above use the one
    built from `file_chunks` rows. Both give the very same float scores for every query."""
    built = ChunkIndex.build(file_chunks(snapshot.text_files()))
    derived = ChunkIndex.of_files(snapshot.lexical_index())
    for query in queries:
        text = query_text_of(query)
        for scorer in ARB_SCORERS.values():
            built_scores, derived_scores = scorer(built, text), scorer(derived, text)
            assert built_scores.tobytes() == derived_scores.tobytes(), (scorer.__name__, text[:60])
            assert np.count_nonzero(built_scores) > 0
