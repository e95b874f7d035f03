"""The frozen tokenizers of SPEC 3.1, against expectations worked out by hand from the rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_retrieval_bench.index.tokens import bench_tokens, grep_terms, ident_terms, query_identifiers, word_run_bytes, word_runs


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "eH" is the only lower->Upper boundary; "HTTPRequest" stays one run.
        ("parseHTTPRequest", ["parse", "httprequest"]),
        ("getHTTPResponseCode", ["get", "httpresponse", "code"]),
        # "pR" splits; "LH" (upper->upper) does not.
        ("XMLHttpRequest", ["xmlhttp", "request"]),
        ("iPhone", ["i", "phone"]),
        ("aBcD", ["a", "bc", "d"]),
        ("ABC", ["abc"]),
        # A digit is not a lowercase letter: no split before the capital.
        ("utf8Decode", ["utf8decode"]),
        ("a1B2", ["a1b2"]),
        # Underscores, dots, dashes and slashes separate runs.
        ("snake_case_name", ["snake", "case", "name"]),
        ("__init__", ["init"]),
        ("src/foo.bar-baz/Qux.py", ["src", "foo", "bar", "baz", "qux", "py"]),
        # Only ASCII letters and digits belong to a run.
        ("naïveÉtat café", ["na", "ve", "tat", "caf"]),
        ("x² + y", ["x", "y"]),
        ("", []),
        ("  ...  ", []),
        # Repeats are kept: these are the document's tokens, counts matter.
        ("fooBar foo_bar FOO", ["foo", "bar", "foo", "bar", "foo"]),
    ],
)
def test_bench_tokens(text: str, expected: list[str]) -> None:
    assert bench_tokens(text) == expected


def test_word_runs_are_maximal_identifier_byte_runs() -> None:
    assert word_runs("foo_bar(baz2) __init__ a-b x.y_z") == ["foo_bar", "baz2", "__init__", "a", "b", "x", "y_z"]
    assert word_runs("camelCase") == ["camelCase"]  # case is kept, nothing is split
    assert word_runs("état") == ["tat"]
    assert word_runs("") == []


@given(st.text(alphabet=st.characters(codec=None, categories=None), max_size=200)
       | st.text(alphabet="aZ09_ \t\n\x0b\x0c\x1c\x85\xa0é€\ud800\U0001f600.-", max_size=200))
def test_word_run_bytes_are_the_word_runs_as_bytes(text: str) -> None:
    # any code point, lone surrogates included; and a mix of word bytes, every kind of blank and multi-byte characters
    assert word_run_bytes(text) == [run.encode("ascii") for run in word_runs(text)]


def test_word_run_bytes_keep_only_identifier_bytes() -> None:
    assert word_run_bytes("foo_bar(baz2) état x\x00y\u00e9z") == [b"foo_bar", b"baz2", b"tat", b"x", b"y", b"z"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # tokens: the parse httprequest of a b the the x x2 parse
        ("The parseHTTPRequest of a B, the TheX x2 parse", ["the", "parse", "httprequest", "of", "x2"]),
        ("a b c", []),
        ("ab AB aB", ["ab"]),  # "aB" -> "a B": two one-letter tokens
        ("zeta alpha zeta", ["zeta", "alpha"]),  # first-occurrence order, not sorted
        ("", []),
    ],
)
def test_grep_terms(text: str, expected: list[str]) -> None:
    assert grep_terms(text) == expected


def test_query_identifiers_from_string_values_only() -> None:
    query = {
        "title": "parseHTTPRequest fails in src/util/mod.rs.",
        "FixtureRequest_key": "x",  # the key is an identifier: ignored
        "count_value": 12345,  # a number: ignored
        "ratio": 1.5,
        "flag": True,
        "nothing": None,
        "list": ["my_var", "abc", "a_b", "_abc", "abcd_", "XMLHttp", {"inner_key_name": "v2_beta"}],
    }
    # parseHTTPRequest: camel boundary "eH"; my_var, v2_beta: inner underscore; mod: stem of mod.rs.
    # Not: "a_b" (3 chars), "_abc"/"abcd_" (underscore only at an end), "XMLHttp" (no lower->Upper).
    assert query_identifiers(query) == ["mod", "my_var", "parseHTTPRequest", "v2_beta"]


def test_query_identifiers_ignore_keys_and_numbers() -> None:
    assert query_identifiers({"someKey_name": 1, "otherKey": [2, 3.5, False], "thirdKey": {"fourth_key": None}}) == []
    assert query_identifiers({"a": "12345 678_9"}) == []  # digits cannot start an identifier
    assert query_identifiers(42) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("src/util/mod.rs", ["mod"]),
        ("the bug is in mod.rs.", ["mod"]),
        ("see mod.rs, lib.rs; and main.go:12", ["lib", "main", "mod"]),
        ("foo.py bar.tsx baz.min.js", ["bar", "baz.min", "foo"]),
        ("App.tsx and App.ts", ["App"]),
        ("lib.c util.h main.cpp Program.cs Widget.java Main.kt app.rb", ["Main", "Program", "Widget", "app", "lib", "main", "util"]),
        ("my-plugin.py", ["my-plugin"]),
        (r"C:\src\Widget.cs", ["Widget"]),
        ("https://example.com/x/app.js?v=1", ["app"]),
        # Not code files, or no stem.
        ("README.md thing.pyc notes.txt data.json", []),
        ("path/to/.py", []),
        ("file.python", []),
    ],
)
def test_query_identifiers_code_file_stems(text: str, expected: list[str]) -> None:
    assert query_identifiers({"body": text}) == expected
    assert query_identifiers(text) == expected  # a bare string is its own only value


def test_query_identifiers_sorted_distinct_and_mixed() -> None:
    text = "zeta_value calls fooBar in foo_bar.py, then fooBar again; see zeta_value.go"
    # identifiers: zeta_value, fooBar, foo_bar (from the file name text too); stems: foo_bar, zeta_value
    assert query_identifiers(text) == ["fooBar", "foo_bar", "zeta_value"]
    # code-point order: upper case sorts before lower case
    assert query_identifiers("zz_top Aa_b aB_c") == ["Aa_b", "aB_c", "zz_top"]


def test_query_identifiers_length_floor() -> None:
    assert query_identifiers("aBc") == []  # camel boundary but 3 characters
    assert query_identifiers("aBcd") == ["aBcd"]
    assert query_identifiers("a_bc") == ["a_bc"]
    assert query_identifiers("x.py") == ["x"]  # stems have no length floor


def test_ident_terms() -> None:
    assert ident_terms(["parseHTTPRequest", "my_var", "mod"]) == ["parse", "httprequest", "my", "var", "mod"]
    assert ident_terms(["a_b"]) == ["a", "b"]  # no length floor
    assert ident_terms(["fooBar", "foo_bar", "bar_baz"]) == ["foo", "bar", "baz"]  # distinct, first occurrence
    assert ident_terms(["baz.min", "my-plugin"]) == ["baz", "min", "my", "plugin"]
    assert ident_terms([]) == []
