"""cce.relevance/v1 fixtures: anchors, the loader's rules and errors, rel_ metrics by hand, a full run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from report_helpers import assert_outcomes

from pytest_retrieval_bench.arms.base import Answer
from pytest_retrieval_bench.samples.metrics import estimate_tokens, extra_metrics, line_count_of
from pytest_retrieval_bench.samples import load_samples
from pytest_retrieval_bench.samples.relevance import NULL_COMMIT, Anchor, RelevanceReader, fixture_repo, parse_anchor

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
FIXTURE = TESTDATA / "formats" / "relevance" / "cases.jsonl"
CORPUS = TESTDATA / "formats" / "relevance" / "corpus"


# -- anchors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("auth.py", Anchor("auth.py", path="auth.py")),
        ("auth.py#function_definition", Anchor("auth.py#function_definition", path="auth.py", kind="function_definition")),
        ("#interface_declaration", Anchor("#interface_declaration", kind="interface_declaration")),
        ("auth.py@10-42", Anchor("auth.py@10-42", path="auth.py", start_line=10, end_line=42)),
        ("auth.py#function_definition@3-3", Anchor("auth.py#function_definition@3-3", path="auth.py", kind="function_definition", start_line=3, end_line=3)),
        ("user@host.py", Anchor("user@host.py", path="user@host.py")),  # not digits-and-dashes: literal
        ("user@host.py@2-5", Anchor("user@host.py@2-5", path="user@host.py", start_line=2, end_line=5)),  # the last @ only
        ("mail@v2", Anchor("mail@v2", path="mail@v2")),
        ("trailing@", Anchor("trailing@", path="trailing@")),
        # cce's Anchor::parse, compiled and run on each (Rust trim, usize ends, ASCII digits only):
        ("f.py@1-18446744073709551615", Anchor("f.py@1-18446744073709551615", path="f.py", start_line=1, end_line=2**64 - 1)),
        ("f.py@007-010", Anchor("f.py@007-010", path="f.py", start_line=7, end_line=10)),
        (" f.py @3-4", Anchor(" f.py @3-4", path="f.py", start_line=3, end_line=4)),
        ("f.py@3-4\x1c", Anchor("f.py@3-4\x1c", path="f.py@3-4\x1c")),  # Rust's trim keeps U+001C: no range
        ("\x1cf.py", Anchor("\x1cf.py", path="\x1cf.py")),
        ("\xa0f.py\u3000", Anchor("\xa0f.py\u3000", path="f.py")),
        ("f.py\x85", Anchor("f.py\x85", path="f.py")),
        ("a@b@3-4", Anchor("a@b@3-4", path="a@b", start_line=3, end_line=4)),
        ("f.py # kind @3-4", Anchor("f.py # kind @3-4", path="f.py", kind="kind", start_line=3, end_line=4)),
        ("f.py@+3-4", Anchor("f.py@+3-4", path="f.py@+3-4")),
        ("f.py@\u0663-\u0664", Anchor("f.py@\u0663-\u0664", path="f.py@\u0663-\u0664")),  # Arabic-Indic digits are text
        ("f.py@1_0-20", Anchor("f.py@1_0-20", path="f.py@1_0-20")),
    ],
)
def test_anchor_forms(text, expected):
    assert parse_anchor(text) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("#kind@1-2", "no file path"),
        ("@1-2", "empty anchor"),
        ("auth.py@0-3", "invalid line range"),
        ("auth.py@5-3", "invalid line range"),
        ("auth.py@7", "invalid line range"),
        ("auth.py@1-2-3", "invalid line range"),
        ("auth.py@-", "invalid line range"),
        ("f.py@1-99999999999999999999", "invalid line range"),  # above cce's usize: rejected, never expanded
        ("f.py@1-18446744073709551616", "invalid line range"),
        ("auth.py#", "empty kind"),
        ("", "empty anchor"),
        ("  ", "empty anchor"),
    ],
)
def test_anchor_rejections(text, words):
    with pytest.raises(ValueError, match=words):
        parse_anchor(text)


# -- loading --------------------------------------------------------------------------------------


def test_fixture_loads_with_its_corpus_as_a_snapshot():
    loaded = load_samples(FIXTURE)
    assert loaded.format == "relevance" and not loaded.problems
    assert loaded.snapshots == {f"local/cases@{NULL_COMMIT}": CORPUS.absolute()}
    by_id = {sample.id: sample for sample in loaded.samples}
    assert sorted(by_id) == ["install-guide", "kind-only", "login", "q5", "timeout-span"]
    login = by_id["login"]
    assert (login.repo, login.base_commit, login.task_type, login.stratum) == ("local/cases", NULL_COMMIT, "relevance", "positive")
    assert login.query_text == "where does a user login with a password" and login.extra["k"] == 5
    default = by_id["q5"]  # id from the line number (blank lines count), k defaults to 10
    assert default.extra["k"] == 10 and default.gold_files == ("user@host.py", "auth.py")
    assert by_id["kind-only"].skip_reason == "no_file_anchor" and by_id["kind-only"].gold_files == ()
    assert by_id["install-guide"].gold_files == ("docs/guide.md",)  # two anchors, one file


def test_fixture_repo_names():
    assert fixture_repo(Path("eval/relevance/code.jsonl")) == "local/code"
    assert fixture_repo(Path("my set.ndjson.zst")) == "local/my-set"


def _load(tmp_path: Path, lines: list, name: str = "set.jsonl"):
    path = tmp_path / name
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines), encoding="utf-8")
    return path, load_samples(path)


def test_headerless_fixture_is_detected_and_has_no_corpus(tmp_path):
    _, loaded = _load(tmp_path, [{"query": "q", "expected": ["a.py"]}])
    assert loaded.format == "relevance" and loaded.snapshots == {} and loaded.samples[0].id == "q1"


@pytest.mark.parametrize(
    ("bad", "field", "words"),
    [
        ({"query": "q"}, "expected", "non-empty array"),
        ({"query": "q", "expected": []}, "expected", "non-empty array"),
        ({"query": "q", "expected": [3]}, "expected[0]", "anchors must be strings"),
        ({"query": "q", "expected": ["#k@1-2"]}, "expected[0]", "no file path"),
        ({"query": "", "expected": ["a.py"]}, "query", "missing or empty"),
        ({"query": "q", "expected": ["a.py"], "k": 0}, "k", "positive integer"),
        ({"query": "q", "expected": ["a.py"], "k": True}, "k", "positive integer"),
        ({"query": "q", "expected": ["a.py"], "id": "a:b"}, "id", "brackets"),
        ({"schema": "cce.relevance/v1"}, "schema", "first non-blank line"),
    ],
)
def test_malformed_cases_name_file_line_and_field(tmp_path, bad, field, words):
    path, loaded = _load(tmp_path, [{"schema": "cce.relevance/v1"}, {"id": "ok", "query": "q", "expected": ["a.py"]}, bad])
    assert [sample.id for sample in loaded.samples] == ["ok"]
    message = str(loaded.problems[0])
    assert message.startswith(f"{path}:3: field {field!r}: ") and words in message


def test_bad_headers(tmp_path):
    path, loaded = _load(tmp_path, [{"schema": "cce.relevance/v2"}, {"query": "q", "expected": ["a.py"]}])
    assert str(loaded.problems[0]).startswith(f"{path}:1: field 'schema': unsupported schema")
    path, loaded = _load(tmp_path, [{"schema": "cce.relevance/v1", "corpus": "missing-dir"}, {"query": "q", "expected": ["a.py"]}], "other.jsonl")
    assert "does not exist" in str(loaded.problems[0]) and loaded.snapshots == {} and len(loaded.samples) == 1


def test_reader_resolves_the_corpus_relative_to_the_fixture(tmp_path):
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "tree").mkdir()
    reader = RelevanceReader(tmp_path / "fixtures" / "x.jsonl")
    reader.parse({"schema": "cce.relevance/v1", "corpus": "../tree"}, "x.jsonl", 1)
    assert reader.corpus == tmp_path / "tree"


# -- metrics --------------------------------------------------------------------------------------


# settings.py line weights (cce.tokens/v1, floor(bytes/4), min 1): 1, 2, 3, 5, 1
TEXTS = {
    "config/settings.py": "a\n" + "x" * 8 + "\n" + "y" * 12 + "\n" + "z" * 20 + "\n" + "w" * 4 + "\n",
    "auth.py": ("p" * 16 + "\n") * 10,  # ten lines of 4 tokens
    "docs/guide.md": "# G\n\nabcdefgh",  # three lines: 1, 1, 2 tokens
}


def _case(expected: list[str], k: int):
    path = Path("x.jsonl")
    return RelevanceReader(path).parse({"id": "c", "query": "q", "expected": expected, "k": k}, "x.jsonl", 1)


def _score(sample, answer, limit=20):
    return extra_metrics(sample, answer, answer.ranking, limit, lambda path: line_count_of(TEXTS.get(path)), TEXTS.get)


def test_estimator():
    assert [estimate_tokens(text) for text in ("", "abc", "abcd", "x" * 9, "é" * 4)] == [1, 1, 1, 2, 2]


def test_rel_metrics_by_hand_with_spans():
    sample = _case(["auth.py", "config/settings.py@3-4", "#function_definition"], k=4)
    answer = Answer(ranking=["auth.py", "docs/guide.md", "config/settings.py"], spans=[
        {"path": "auth.py", "kind": "function_definition", "start_line": 4, "end_line": 8},  # auth.py and #function_definition
        {"path": "docs/guide.md"},  # whole file, no anchor
        {"path": "config/settings.py", "start_line": 1, "end_line": 3},  # overlaps 3-4
        {"path": "config/settings.py", "start_line": 5, "end_line": 5},  # no overlap
        {"path": "auth.py", "start_line": 11, "end_line": 14},  # past k
    ])
    scores = _score(sample, answer)
    values = scores.values
    assert values["rel_precision@k"] == 0.5  # 2 relevant of k = 4
    assert values["rel_recall"] == 1.0  # 3 of 3 anchors
    assert values["rel_mrr"] == 1.0
    assert values["rel_f1"] == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    # cce's weights: a line inside a returned span (cce: an indexed chunk) weighs its text, any other 1.
    # expected {settings 3, 4}: line 3 is in the span 1-3 (3 tokens), line 4 in no span (1) -> 4;
    # retrieved settings {1,2,3,5} = 1 + 2 + 3 + 1, auth 4..8 = 20, guide (whole file) = 4 -> 31
    assert scores.counts["rel_tok_recall"] == [3, 4] and scores.counts["rel_tok_precision"] == [3, 31]
    assert values["rel_tok_recall"] == pytest.approx(3 / 4)
    assert values["rel_tok_precision"] == pytest.approx(3 / 31)
    assert values["rel_tok_iou"] == pytest.approx(3 / 32)


def test_precision_divides_by_k_even_when_fewer_results_return():
    sample = _case(["auth.py"], k=10)
    values = _score(sample, Answer(ranking=["docs/guide.md", "auth.py"])).values
    assert values["rel_precision@k"] == 0.1 and values["rel_mrr"] == 0.5 and values["rel_recall"] == 1.0
    assert values["rel_f1"] == pytest.approx(2 * 0.1 / 1.1)


def test_whole_file_rankings_match_only_path_anchors():
    sample = _case(["auth.py#function_definition", "#function_definition", "config/settings.py@3-4", "auth.py"], k=2)
    values = _score(sample, Answer(ranking=["auth.py", "config/settings.py"])).values
    # auth.py (whole file) matches only the bare path; settings.py covers all its lines, so its range
    assert values["rel_precision@k"] == 1.0 and values["rel_recall"] == 0.5


def test_a_range_past_the_end_of_the_file_weighs_one_token_per_line():
    sample = _case(["config/settings.py@5-7"], k=1)
    scores = _score(sample, Answer(ranking=["config/settings.py"]))
    # expected lines 5, 6, 7 = 1 + 1 + 1; the whole file retrieved = 1 + 2 + 3 + 5 + 1 = 12; overlap line 5 = 1
    assert scores.counts["rel_tok_recall"] == [1, 3] and scores.counts["rel_tok_precision"] == [1, 12]
    assert scores.values["rel_tok_iou"] == pytest.approx(1 / 14)


def test_unranged_cases_have_no_token_metrics_and_errors_score_zero():
    unranged = _score(_case(["auth.py"], k=5), Answer(ranking=["auth.py"])).values
    assert not any(name.startswith(("rel_tok_", "codenib_")) for name in unranged)
    ranged = _case(["auth.py@1-2"], k=5)
    good = _score(ranged, Answer(ranking=["auth.py"]))
    failed = extra_metrics(ranged, None, [], 20, lambda path: line_count_of(TEXTS.get(path)), TEXTS.get)
    assert set(failed.values) == set(good.values) and not any(failed.values.values())
    assert failed.counts["rel_tok_recall"] == [0, 2]  # no result covers lines 1-2: each weighs 1, as cce's uncovered lines
    assert good.counts["rel_tok_recall"] == [8, 8]  # the whole file covers them: 4 tokens each


def test_token_weights_come_from_the_returned_spans_as_cce_weighs_chunks():
    """cce's LineWeights::from_chunks: a line weighs the estimate of its text in the chunk covering it,
    a line no chunk covers weighs 1. With spans, the chunks known are the answer's spans."""
    text = "class A:\n    def m(self): pass\n    x = 1\n\nabcdefghijklmnop\n"  # 2, 5, 2, 1, 4 tokens
    sample = _case(["f.py@2-5"], k=10)
    answer = Answer(ranking=["f.py"], spans=[{"path": "f.py", "start_line": 1, "end_line": 3}])
    scores = extra_metrics(sample, answer, answer.ranking, 20, lambda path: line_count_of(text), {"f.py": text}.get)
    # expected 2..5 = 5 + 2 + 1 + 1 (lines 4, 5 in no span); retrieved 1..3 = 2 + 5 + 2; overlap 2..3 = 7
    assert scores.counts["rel_tok_recall"] == [7, 9] and scores.counts["rel_tok_precision"] == [7, 9]
    assert scores.values["rel_tok_iou"] == pytest.approx(7 / 11)
    whole = _score_text(sample, Answer(ranking=["f.py"]), text)  # a whole file covers every line: file weights
    assert whole.counts["rel_tok_recall"] == [12, 12] and whole.counts["rel_tok_precision"] == [12, 14]


def _score_text(sample, answer, text):
    return extra_metrics(sample, answer, answer.ranking, 20, lambda path: line_count_of(text), {"f.py": text}.get)


def test_lines_are_split_as_rust_splits_them():
    from pytest_retrieval_bench.samples.line_ranges import rust_lines

    assert rust_lines("abcdefg\r") == ["abcdefg\r"] and rust_lines("a\r\nb\r") == ["a", "b\r"] and rust_lines("x\r\r\n") == ["x\r"]
    assert rust_lines("a\n\n") == ["a", ""] and rust_lines("") == []


def test_the_widest_range_cce_accepts_is_scored_without_listing_its_lines():
    """`f.py@1-18446744073709551615` is a valid cce anchor (usize::MAX); one line more is rejected.
    Scoring it once raised MemoryError (the range was turned into a set of line numbers)."""
    with pytest.raises(ValueError, match="invalid line range"):
        parse_anchor("f.py@1-18446744073709551616")
    text = "abcdefgh\n" * 3  # three lines of 2 tokens
    sample = _case(["f.py@1-18446744073709551615"], k=10)
    scores = _score_text(sample, Answer(ranking=["f.py"]), text)
    assert scores.counts["rel_tok_recall"] == [6, float(6 + (2**64 - 1 - 3))]  # lines past the end weigh 1 each
    assert scores.counts["rel_tok_precision"] == [6, 6]


# -- end to end -----------------------------------------------------------------------------------


def test_relevance_run_end_to_end(pytester):
    result = pytester.runpytest_subprocess(
        f"--bench-samples={FIXTURE}", f"--bench-snapshot=local/cases@{NULL_COMMIT}={CORPUS}",
        "--bench-arms=grep", "--bench-report=out.json", "-p", "no:cacheprovider",
    )
    assert result.ret == 0, result.stdout.str()
    assert_outcomes(result, passed=4, skipped=1)
    report = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert report["skipped"] == {"no_file_anchor": 1}
    summary = report["summary"]["task:relevance"]["grep"]
    for name in ("rel_precision@k", "rel_recall", "rel_mrr", "rel_f1", "rel_tok_precision", "rel_tok_recall", "rel_tok_iou", "hit@5"):
        assert name in summary["metrics"], name
    assert summary["metric_n"]["rel_tok_iou"] == 2  # token metrics average over the two ranged cases only
    assert "rel_tok_recall" in summary["micro"]
    login = next(entry for entry in report["details"] if entry["id"] == "login")["arms"]["grep"]
    assert login["ranking"][0] == "auth.py" and login["metrics"]["rel_mrr"] == 1.0
    assert login["metrics"]["rel_precision@k"] == 0.2  # one relevant whole file over k = 5
