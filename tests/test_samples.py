"""The ARB loader against the bench's own reference outputs, and its errors for bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import zstandard

from pytest_retrieval_bench.samples import load_samples
from pytest_retrieval_bench.samples.arb import parse_arb_row

FIXTURES = Path(__file__).resolve().parent / "fixtures"
COMMIT = "a" * 40


def _row(**overrides):
    row = {"id": "s1", "task_type": "code2test", "repo": "acme/widgets", "base_commit": COMMIT,
           "query": {"pr_title": "Fix it", "changed_file": "src/a.py"}, "gold": {"related_tests": ["tests/test_a.py"]}, "metadata": {}}
    row.update(overrides)
    return row


def test_real_rows_match_the_bench_reference():
    expected = json.loads((FIXTURES / "arb_v0_1_expected.json").read_text(encoding="utf-8"))["rows"]
    loaded = load_samples(FIXTURES / "arb_v0_1" / "samples.jsonl")
    assert not loaded.problems
    assert len(loaded.samples) == 35 == len(expected)
    raw = {json.loads(line)["id"]: json.loads(line) for line in (FIXTURES / "arb_v0_1" / "samples.jsonl").read_text(encoding="utf-8").splitlines()}
    for sample in loaded.samples:
        reference = expected[sample.id]
        assert hashlib.sha256(sample.query_text.encode("utf-8")).hexdigest() == reference["query_text_sha256"], sample.id
        assert len(sample.query_text) == reference["query_chars"]
        assert list(sample.gold_files) == reference["gold"], sample.id
        assert list(sample.given_files) == reference["given"], sample.id
        gold = raw[sample.id]["gold"]
        spec_negatives = list(dict.fromkeys([*gold.get("negative_distractors", []), *reference["hard_negative_files"]]))
        assert list(sample.hard_negatives) == [p for p in spec_negatives if p not in sample.gold_files], sample.id
        assert sample.stratum == "positive"


def test_query_text_keeps_escapes_and_non_ascii():
    sample = parse_arb_row(_row(query={"b": "naïve → \"q\"\nline", "a": 1}), "f.jsonl", 1)
    assert sample.query_text == '{"a": 1, "b": "naïve → \\"q\\"\\nline"}'


@pytest.mark.parametrize(
    ("gold", "task", "expected"),
    [
        ({"no_gold": True, "files": ["x"]}, "code2test", []),
        ({"files": [{"path": "a"}, "b", "a"], "related_tests": ["t"]}, "code2test", ["a", "b"]),
        ({"related_tests": ["t", "t"], "root_cause_files": ["r"]}, "code2test", ["t"]),
        ({"must_context_files": [{"path": "m"}], "context_files": ["c"]}, "comment2context", ["m"]),
        ({"context_files": [{"path": "c"}], "root_cause_files": ["r"]}, "comment2context", ["c"]),
        ({"root_cause_files": ["r"], "related_tests": ["t"]}, "trace2code", ["r"]),
        ({"related_tests": ["t"]}, "trace2code", ["t"]),
        ({}, "trace2code", []),
    ],
)
def test_gold_rules(gold, task, expected):
    assert list(parse_arb_row(_row(task_type=task, gold=gold), "f", 1).gold_files) == expected


def test_given_hard_negatives_and_strata():
    sample = parse_arb_row(
        _row(task_type="comment2context", query={"path": "src/r.py", "review_comment": "x"},
             gold={"context_files": ["src/c.py"], "negative_distractors": ["n1", "src/c.py"]}, hard_negative_files=["n2", "n1"]), "f", 1)
    assert sample.given_files == ("src/r.py",)
    assert sample.hard_negatives == ("n1", "n2")
    natural = parse_arb_row(_row(gold={"files": [], "no_gold": True}, metadata={"organic": True}), "f", 1)
    counterfactual = parse_arb_row(_row(gold={"files": [], "no_gold": True}, metadata={"organic": False}), "f", 1)
    unlabeled = parse_arb_row(_row(gold={"related_tests": []}), "f", 1)
    assert (natural.stratum, counterfactual.stratum) == ("natural_no_gold", "counterfactual_no_gold")
    assert unlabeled.skip_reason == "no_gold_unlabeled" and natural.skip_reason is None


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_bad_rows_are_located_and_the_rest_still_load(tmp_path):
    good = json.dumps(_row())
    path = _write(tmp_path / "s.jsonl", [
        good,
        "{not json",
        json.dumps({k: v for k, v in _row(id="s2").items() if k != "repo"}),
        json.dumps(_row(id="s3", base_commit="xyz")),
        json.dumps(_row(id="s1")),
        "",
        json.dumps(_row(id="s4")),
        "[1, 2]",
    ])
    loaded = load_samples(path)
    assert [s.id for s in loaded.samples] == ["s1", "s4"]
    messages = [str(p) for p in loaded.problems]
    assert messages[0].startswith(f"{path}:2: malformed JSON")
    assert messages[1] == f"{path}:3: field 'repo': missing"
    assert messages[2].startswith(f"{path}:4: field 'base_commit': expected 40 lowercase hex digits")
    assert messages[3] == f"{path}:5: field 'id': duplicate sample id 's1' (first at line 1)"
    assert messages[4] == f"{path}:8: expected a JSON object, got list"


def test_zstd_samples_and_corrupt_stream(tmp_path):
    payload = "".join(json.dumps(_row(id=f"s{i}")) + "\n" for i in range(200)).encode()
    path = tmp_path / "s.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(payload))
    assert len(load_samples(path).samples) == 200
    corrupt = tmp_path / "bad.jsonl.zst"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    corrupt.write_bytes(bytes(data[: len(data) - 5]))
    loaded = load_samples(corrupt)
    assert loaded.problems and "corrupt" in str(loaded.problems[-1]) and str(corrupt) in str(loaded.problems[-1])


def test_missing_file_is_an_error(tmp_path):
    from pytest_retrieval_bench.errors import InputError

    with pytest.raises(InputError, match="no such file"):
        load_samples(tmp_path / "absent.jsonl")


def test_fold_map_task_filter(tmp_path):
    path = _write(tmp_path / "s.jsonl", [json.dumps(_row(id="a")), json.dumps(_row(id="b", task_type="trace2code", repo="acme/other"))])
    loaded = load_samples(path, fold_map={"acme/widgets": "A"}, task_type="code2test")
    assert [(s.id, s.partition) for s in loaded.samples] == [("a", "A")]
    assert [s.partition for s in load_samples(path, fold_map={"acme/widgets": "A"}).samples] == ["A", "unassigned"]


@pytest.mark.parametrize(
    ("gold", "field"),
    [({"files": "src/x.py"}, "gold.files"), ({"related_tests": [1]}, "gold.related_tests"),
     ({"related_tests": ["t"], "given_files": "README.md"}, "gold.given_files"), ({"root_cause_files": [["a"]]}, "gold.root_cause_files")],
)
def test_mistyped_path_fields_are_located_errors(gold, field):
    from pytest_retrieval_bench.errors import InputError

    with pytest.raises(InputError, match=f"f.jsonl:7: field '{field}'"):
        parse_arb_row(_row(gold=gold), "f.jsonl", 7)


def test_path_objects_are_accepted_in_every_path_list():
    sample = parse_arb_row(_row(gold={"related_tests": [{"path": "t.py"}], "negative_distractors": [{"path": "n.py"}]}), "f", 1)
    assert sample.gold_files == ("t.py",) and sample.hard_negatives == ("n.py",)


@pytest.mark.parametrize("line, message", [
    ('{"id": "s1",', "malformed JSON: unexpected end of data (the line ends before its JSON value does)"),
    ('{"id" "s1"}', "malformed JSON at character 7 of the line: unexpected character, expected ':' after key"),
    ('{"é": 1 2}', "malformed JSON at character 9 of the line: unexpected character, expected ',' or '}'"),
])
def test_a_malformed_line_is_placed_on_its_own_line_not_on_orjsons(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path / "s.jsonl", [json.dumps(_row()), json.dumps(_row(id="s2")), line])
    assert [str(problem) for problem in load_samples(path).problems] == [f"{path}:3: {message}"]  # never orjson's "line 2 column 1"


def test_bytes_that_are_not_utf8_are_named_with_their_place(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(json.dumps(_row()).encode() + b'\n{"id": "\xff\xfe"}\n')
    assert [str(problem) for problem in load_samples(path).problems] == [f"{path}:2: not valid UTF-8: byte 0xff at byte 9 of the line"]


def test_a_directory_given_as_samples_is_named_a_directory(tmp_path: Path) -> None:
    from pytest_retrieval_bench.errors import InputError

    with pytest.raises(InputError, match="a directory, not a samples file"):
        load_samples(tmp_path)
    with pytest.raises(InputError, match="no such file"):
        load_samples(tmp_path / "absent.jsonl")
