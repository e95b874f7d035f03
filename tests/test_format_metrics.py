"""What the formats share: detection, Answer.spans, the scoring hook, micro averages, ARB unchanged."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_retrieval_bench.arms.base import Answer
from pytest_retrieval_bench.report.build import build_report, summarize_arm
from pytest_retrieval_bench.bench.run import score
from pytest_retrieval_bench.samples.arb import parse_arb_row
from pytest_retrieval_bench.samples.load import detect_format
from pytest_retrieval_bench.samples.relevance import RelevanceReader

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
ARB_KEYS = {"ranking", "abstained", "error", "state", "packet_bytes", "cache_state", "metrics", "selective_success", "rank_of_first_gold",
            "rank_of_first_gold_uncut"}
ARB_SUMMARY_KEYS = {"n", "positives", "errors", "abstentions", "metrics", "selective_success", "selective_success_wilson95", "wilson95"}


# -- detection ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first_line", "expected"),
    [
        ({"schema": "cce.relevance/v1", "corpus": "x"}, "relevance"),
        ({"query": "q", "expected": ["a.py"]}, "relevance"),
        ({"schema": "known-target-v1"}, "known-target"),
        ({"id": "c", "intent": "symbol_lookup", "targets": []}, "known-target"),
        ({"instance_id": "i", "problem_statement": "p"}, "contextbench"),
        ({"id": "s", "task_type": "code2test", "query": {"q": 1}, "gold": {}}, "arb"),
        ("not json", "arb"),
        ([1, 2], "arb"),
    ],
)
def test_format_is_read_from_the_first_non_blank_line(tmp_path, first_line, expected):
    path = tmp_path / "samples.jsonl"
    text = first_line if isinstance(first_line, str) else json.dumps(first_line)
    path.write_text("\n  \n" + text + "\n", encoding="utf-8")
    assert detect_format(path) == expected


def test_parquet_is_read_from_the_name(tmp_path):
    assert detect_format(tmp_path / "train-00000.parquet") == "contextbench"
    assert detect_format(TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl") == "arb"


# -- Answer.spans ---------------------------------------------------------------------------------


def test_spans_alone_give_the_ranking():
    answer = Answer(ranking=[], spans=[{"path": "b.py", "start_line": 3}, {"path": "a.py"}, {"path": "b.py", "kind": "function"}])
    assert answer.ranking == ["b.py", "a.py"] and not answer.is_abstention
    assert answer.spans[0] == {"path": "b.py", "start_line": 3, "end_line": 3}


@pytest.mark.parametrize(
    ("span", "words"),
    [
        ("a.py", "expected an object"),
        ({"path": ""}, "non-empty string"),
        ({"path": "a.py", "kind": ""}, "'kind'"),
        ({"path": "a.py", "end_line": 3}, "without 'start_line'"),
        ({"path": "a.py", "start_line": 0}, "positive integer"),
        ({"path": "a.py", "start_line": 4, "end_line": 2}, "before start_line"),
        ({"path": "z.py"}, "not in the ranking"),
    ],
)
def test_malformed_spans_are_the_arms_error(span, words):
    with pytest.raises(ValueError, match=words):
        Answer(ranking=["a.py"], spans=[span])


# -- the scoring hook -----------------------------------------------------------------------------


def _arb():
    row = {"id": "s1", "task_type": "trace2code", "repo": "acme/w", "base_commit": "a" * 40, "query": {"t": "x"},
           "gold": {"root_cause_files": ["a.py"]}, "metadata": {}}
    return parse_arb_row(row, "f.jsonl", 1)


def _relevance():
    return RelevanceReader(Path("x.jsonl")).parse({"id": "r1", "query": "q", "expected": ["a.py@1-2", "b.py"], "k": 2}, "x.jsonl", 1)


TEXTS = {"a.py": "one\ntwo\nthree\n", "b.py": "b\n"}


def test_arb_records_gain_no_keys():
    assert set(score(_arb(), Answer(ranking=["a.py"]), None, 20, TEXTS.get)) == ARB_KEYS
    assert set(score(_arb(), None, "boom", 20)) == ARB_KEYS


def test_format_metrics_merge_into_the_record():
    answer = Answer(ranking=["a.py", "b.py"], spans=[{"path": "a.py", "start_line": 2, "end_line": 3}])
    record = score(_relevance(), answer, None, 20, TEXTS.get)
    assert record["metrics"]["recall@5"] == 1.0  # the common metrics stay
    assert record["metrics"]["rel_recall"] == 0.5 and record["metrics"]["rel_precision@k"] == 0.5
    assert record["metric_counts"]["rel_tok_recall"] == [1.0, 2.0]  # line 2 of lines 1-2, one token each
    assert record["spans"] == [{"path": "a.py", "start_line": 2, "end_line": 3}]
    failed = score(_relevance(), None, "boom", 20, TEXTS.get)
    assert set(failed["metrics"]) == set(record["metrics"]) and not any(failed["metrics"].values())
    assert "spans" not in failed


def test_given_files_leave_the_spans_too():
    sample = _relevance()
    answer = Answer(ranking=["a.py", "b.py"], spans=[{"path": "a.py", "start_line": 1}, {"path": "b.py"}])
    record = score(replace(sample, given_files=("a.py",)), answer, None, 20, TEXTS.get)
    assert record["ranking"] == ["b.py"] and record["spans"] == [{"path": "b.py"}]


# -- the report -----------------------------------------------------------------------------------


def _row(metrics, counts=None, positive=True, repo="acme/w"):
    row = {"metrics": metrics, "error": None, "abstained": False, "selective_success": True, "_positive": positive,
           "_labels": {"repo": repo}}
    if counts is not None:
        row["metric_counts"] = counts
    return row


def test_arb_summaries_gain_no_keys():
    rows = [_row({"hit@5": 1.0, "recall@5": 0.5}), _row({"hit@5": 0.0, "recall@5": 0.0})]
    assert set(summarize_arm(rows, 5)) == ARB_SUMMARY_KEYS


def test_micro_averages_and_partial_means_by_hand():
    rows = [
        _row({"hit@5": 1.0, "rel_tok_recall": 0.5}, {"rel_tok_recall": [1, 2], "rel_recall": [0, 0]}),
        _row({"hit@5": 0.0, "rel_tok_recall": 1.0}, {"rel_tok_recall": [6, 6], "rel_recall": [0, 0]}),
        _row({"hit@5": 1.0}),  # an unranged case: no token metrics
    ]
    summary = summarize_arm(rows, 5)
    assert summary["metrics"]["rel_tok_recall"] == 0.75  # (0.5 + 1.0) / 2, not over all three
    assert summary["metrics"]["hit@5"] == pytest.approx(2 / 3)
    assert summary["metric_n"] == {"rel_tok_recall": 2}
    assert summary["micro"] == {"rel_recall": None, "rel_tok_recall": 7 / 8}  # (1 + 6) / (2 + 6)


def test_arb_report_bytes_do_not_change_with_the_hook():
    """The same ARB records scored with and without a snapshot reader give the same report."""
    from pytest_retrieval_bench.report.build import canonical_json

    sample = _arb()
    plain = {"sample_id": "s1", "arm": "grep", "wall_ms": 1.0, "query_chars": 9, "query_truncated": False, **score(sample, Answer(ranking=["a.py"]), None, 20)}
    hooked = {**plain, **score(sample, Answer(ranking=["a.py"]), None, 20, TEXTS.get)}
    reports = [canonical_json(build_report({}, [sample], [record], ["grep"], 20, False)) for record in (plain, hooked)]
    assert reports[0] == reports[1]
    assert b"micro" not in reports[0] and b"metric_n" not in reports[0] and b"metric_counts" not in reports[0]
