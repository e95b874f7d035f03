"""ContextBench rows: the loader's rules and errors, the cb_ metrics by hand, Parquet, a full run."""

from __future__ import annotations

import builtins
import json
from pathlib import Path

import pytest

from report_helpers import assert_outcomes

from pytest_retrieval_bench.arms.base import Answer
from pytest_retrieval_bench.errors import InputError
from pytest_retrieval_bench.samples.metrics import extra_metrics
from pytest_retrieval_bench.samples import load_samples
from pytest_retrieval_bench.samples.contextbench import normalize_path, parse_contextbench_row

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
FIXTURE = TESTDATA / "formats" / "contextbench.jsonl"
GIN_TREE = TESTDATA / "trees" / "acme__gin-lite"
GIN_COMMIT = "5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5"
COMMIT = "c" * 40


def _row(**overrides):
    row = {"instance_id": "acme__widgets-1", "repo": "acme/widgets", "base_commit": COMMIT,
           "problem_statement": "Widgets crash\n\nwhen  spaced  ", "gold_context": [{"file": "a.py", "start_line": 1, "end_line": 2, "content": "x"}]}
    row.update(overrides)
    return row


def _write(tmp_path: Path, rows: list) -> Path:
    path = tmp_path / "cb.jsonl"
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), encoding="utf-8")
    return path


# -- loading --------------------------------------------------------------------------------------


def test_fixture_loads_as_contextbench():
    loaded = load_samples(FIXTURE)
    assert loaded.format == "contextbench" and not loaded.problems
    by_id = {sample.id: sample for sample in loaded.samples}
    first = by_id["acme__gin-lite-101"]
    assert first.task_type == "contextbench" and first.stratum == "positive" and first.repo == "acme/gin-lite"
    assert first.gold_files == ("path.go", "path_test.go")  # /testbed/ stripped
    assert first.extra["spans"] == [{"path": "path.go", "start_line": 12, "end_line": 40}, {"path": "path_test.go", "start_line": 1, "end_line": 25}]
    second = by_id["acme__gin-lite-102"]  # gold_context as a JSON string, repo as a GitHub URL
    assert second.repo == "acme/gin-lite" and second.gold_files == ("middleware/recovery.go",)
    assert len(second.extra["spans"]) == 2
    assert by_id["acme__gin-lite-103"].gold_files == ("binding/json.go",)  # /workspace/ stripped


def test_query_text_is_the_problem_statement_verbatim():
    sample = parse_contextbench_row(_row(), "f.jsonl", 1)
    assert sample.query_text == "Widgets crash\n\nwhen  spaced  "
    assert sample.query == {"problem_statement": "Widgets crash\n\nwhen  spaced  "}


# The official gold reader's outputs (contextbench/parsers/gold.py, _normalize_rel_path), obtained by
# running it on each input: the rule is `\\`->`/`; drop "/testbed/"; or drop "/workspace/" and the
# directory after it; or lstrip("/") an absolute path; or lstrip("./") a relative one.
OFFICIAL_NORMALISATION = [
    ("/workspace/vuejs__core__0.1/package.json", "package.json"),
    ("/workspace/cli__cli__0.1/pkg/cmd/repo/clone/clone.go", "pkg/cmd/repo/clone/clone.go"),
    ("/workspace/package.json", "package.json"),
    ("/workspace//x/y.py", "x/y.py"),
    ("/workspace/r/./a.py", "./a.py"),
    ("/workspace", "workspace"),
    ("/testbed/django/db/models/query.py", "django/db/models/query.py"),
    ("/testbed", "testbed"),
    ("/testbed/./x.py", "./x.py"),
    ("/TESTBED/a.py", "TESTBED/a.py"),
    ("/app/lib/ansible/module.py", "app/lib/ansible/module.py"),
    ("/app/", "app/"),
    ("./src/a.py", "src/a.py"),
    ("././src/a.py", "src/a.py"),
    (".github/workflows/ci.yml", "github/workflows/ci.yml"),
    ("./.env", "env"),
    (".../x", "x"),
    ("../src/a.py", "src/a.py"),
    ("src//a.py", "src//a.py"),
    ("//testbed/x.py", "testbed/x.py"),
    ("///a//b.py", "a//b.py"),
    ("\\testbed\\django\\x.py", "django/x.py"),
    ("/.hidden/x", ".hidden/x"),
    (" /testbed/x.py", " /testbed/x.py"),
    ("src/a.py/", "src/a.py/"),
    ("testbed/a.py", "testbed/a.py"),
    ("a.py", "a.py"),
]


@pytest.mark.parametrize(("raw", "expected"), OFFICIAL_NORMALISATION)
def test_path_normalisation_is_the_official_rule(raw, expected):
    assert normalize_path(raw) == expected


# Where the official rule gives a path no snapshot holds (empty, absolute, `..`): an error for the row.
@pytest.mark.parametrize(("raw", "official"), [("/workspace/", ""), ("/testbed/", ""), ("/", ""), ("", ""),
                                               ("/workspace/a__b__0.1//x.py", "/x.py"), ("/testbed/../x.py", "../x.py"),
                                               ("src/../a.py", "src/../a.py"), ("C:\\repo\\x.py", "C:/repo/x.py")])
def test_path_normalisation_refuses_what_names_no_snapshot_file(raw, official):
    with pytest.raises(ValueError):
        normalize_path(raw)


def test_spans_keep_repeats_and_gold_files_keep_order():
    spans = [{"file": "b.py", "start_line": 3, "end_line": 4}, {"file": "/testbed/a.py", "start_line": 1, "end_line": 2},
             {"file": "./b.py", "start_line": 3, "end_line": 4}]
    sample = parse_contextbench_row(_row(gold_context=spans), "f.jsonl", 1)
    assert sample.gold_files == ("b.py", "a.py")
    assert len(sample.extra["spans"]) == 3  # CodeNib counts every gold block


@pytest.mark.parametrize(("overrides", "expected"), [
    ({"repo": "cli", "original_inst_id": "cli__cli-5973"}, "cli/cli"),
    ({"repo": "core", "original_inst_id": "vuejs__core-10289"}, "vuejs/core"),
    ({"repo": "jackson-core", "original_inst_id": "fasterxml__jackson-core-964"}, "fasterxml/jackson-core"),
    ({"repo": "clap", "repo_url": "https://github.com/clap-rs/clap.git", "original_inst_id": "x"}, "clap-rs/clap"),
    ({"repo": "zstd"}, "zstd"),  # no owner anywhere: named with --bench-snapshot zstd@COMMIT=DIR
    ({"repo": "mui/material-ui", "original_inst_id": "other__thing-1"}, "mui/material-ui"),
])
def test_a_repository_without_an_owner(overrides, expected):
    assert parse_contextbench_row(_row(**overrides), "f.jsonl", 1).repo == expected


def test_a_bare_repository_row_runs_against_a_named_snapshot(pytester):
    row = _row(repo="gin-lite", base_commit=GIN_COMMIT, gold_context=[{"file": "/workspace/gin-gonic__gin__0.1/gin.go", "start_line": 1, "end_line": 5}])
    (pytester.path / "cb.jsonl").write_text(json.dumps(row) + "\n")
    result = pytester.runpytest_subprocess("--bench-samples=cb.jsonl", f"--bench-snapshot=gin-lite@{GIN_COMMIT}={GIN_TREE}", "--bench-arms=grep",
                                           "--bench-report=out.json", "-p", "no:cacheprovider", timeout=300)
    assert result.ret == 0, result.stdout.str()[-2000:]
    entry = json.loads((pytester.path / "out.json").read_text())["details"][0]
    assert entry["repo"] == "gin-lite" and entry["arms"]["grep"]["error"] is None


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        ({"instance_id": None}, "instance_id", "missing"),
        ({"instance_id": "a b"}, "instance_id", "whitespace"),
        ({"repo": "not a repo"}, "repo", "owner/name"),
        ({"repo": "cli", "repo_url": "ftp://x"}, "repo_url", "owner/name"),
        ({"base_commit": "abc"}, "base_commit", "40 lowercase hex"),
        ({"problem_statement": "  "}, "problem_statement", "empty"),
        ({"problem_statement": 3}, "problem_statement", "expected string"),
        ({"gold_context": "[not json"}, "gold_context", "not a JSON list"),
        ({"gold_context": []}, "gold_context", "no gold spans"),
        ({"gold_context": {"file": "a.py"}}, "gold_context", "expected a list"),
        ({"gold_context": ["a.py"]}, "gold_context[0]", "expected an object"),
        ({"gold_context": [{"file": "/workspace/a__b__0.1//a.py", "start_line": 1, "end_line": 1}]}, "gold_context[0]", "absolute path"),
        ({"gold_context": [{"file": "src/../a.py", "start_line": 1, "end_line": 1}]}, "gold_context[0]", "'..' component"),
        ({"gold_context": [{"file": "a.py", "start_line": 0, "end_line": 1}]}, "gold_context[0]", "positive integer"),
        ({"gold_context": [{"file": "a.py", "start_line": 5, "end_line": 4}]}, "gold_context[0]", "before start_line"),
        ({"gold_context": [{"start_line": 1, "end_line": 1}]}, "gold_context[0]", "'file' must be a string"),
    ],
)
def test_malformed_rows_name_file_line_and_field(tmp_path, overrides, field, words):
    row = _row(**overrides)
    if overrides.get("instance_id", "") is None:
        del row["instance_id"]
    path = _write(tmp_path, [_row(instance_id="good-1"), row, _row(instance_id="good-2")])
    loaded = load_samples(path)
    assert [sample.id for sample in loaded.samples] == ["good-1", "good-2"]
    assert len(loaded.problems) == 1
    message = str(loaded.problems[0])
    assert message.startswith(f"{path}:2: field {field!r}: ") and words in message


def test_duplicate_instance_ids_are_problems(tmp_path):
    loaded = load_samples(_write(tmp_path, [_row(), _row()]))
    assert len(loaded.samples) == 1 and "duplicate sample id" in str(loaded.problems[0])


# -- Parquet --------------------------------------------------------------------------------------


def test_parquet_without_pyarrow_is_a_clear_error(tmp_path, monkeypatch):
    path = tmp_path / "test-00000-of-00001.parquet"
    path.write_bytes(b"PAR1")
    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("No module named 'pyarrow'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(InputError, match=r"pip install pyarrow"):
        load_samples(path)


def test_parquet_rows_load_like_jsonl(tmp_path):
    pyarrow = pytest.importorskip("pyarrow")
    import pyarrow.parquet as parquet

    rows = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    as_lists = [{**row, "gold_context": json.loads(row["gold_context"]) if isinstance(row["gold_context"], str) else row["gold_context"]} for row in rows]
    path = tmp_path / "test.parquet"
    parquet.write_table(pyarrow.Table.from_pylist(as_lists), path)
    loaded = load_samples(path)
    assert loaded.format == "contextbench" and not loaded.problems
    reference = load_samples(FIXTURE)
    assert [(s.id, s.gold_files, s.extra["spans"], s.query_text) for s in loaded.samples] == [
        (s.id, s.gold_files, s.extra["spans"], s.query_text) for s in reference.samples
    ]
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet at all")
    assert "cannot read Parquet" in str(load_samples(broken).problems[0])


# -- metrics --------------------------------------------------------------------------------------


LINES = {"a.py": 20, "b.py": 5, "c.py": 30}


def _sample():
    spans = [{"file": "a.py", "start_line": 1, "end_line": 10}, {"file": "a.py", "start_line": 5, "end_line": 12},
             {"file": "b.py", "start_line": 3, "end_line": 4}]
    return parse_contextbench_row(_row(gold_context=spans), "f.jsonl", 1)


def test_cb_metrics_by_hand():
    # gold files {a, b}; gold lines a:1-12 (12), b:3-4 (2) = 14. R = [a, c] predicts 20 + 30 = 50 lines.
    scores = extra_metrics(_sample(), Answer(ranking=["a.py", "c.py"]), ["a.py", "c.py"], 20, LINES.get)
    assert scores.values["cb_file_coverage"] == 0.5  # 1 of 2 gold files
    assert scores.values["cb_file_precision"] == 0.5  # 1 of 2 ranked files
    assert scores.values["cb_line_coverage"] == pytest.approx(12 / 14)
    assert scores.values["cb_line_precision"] == pytest.approx(12 / 50)
    assert scores.counts["cb_line_coverage"] == [12, 14] and scores.counts["cb_line_precision"] == [12, 50]
    # CodeNib blocks a1-10, a5-12, b3-4 against whole files a, c: two of three recalled, one of two on target
    assert scores.values["codenib_block_recall@5"] == pytest.approx(2 / 3)
    assert scores.values["codenib_block_precision@5"] == 0.5
    assert scores.values["codenib_block_accuracy@5"] == 0.0


def test_cb_line_metrics_stop_at_the_end_of_the_file():
    # b.py has 5 lines in the snapshot; a gold span 3-8 counts only lines 3..5 as covered
    sample = parse_contextbench_row(_row(gold_context=[{"file": "b.py", "start_line": 3, "end_line": 8}]), "f.jsonl", 1)
    scores = extra_metrics(sample, Answer(ranking=["b.py"]), ["b.py"], 20, LINES.get)
    assert scores.counts["cb_line_coverage"] == [3, 6] and scores.counts["cb_line_precision"] == [3, 5]


def test_cb_line_metrics_ignore_spans_but_codenib_uses_them():
    answer = Answer(ranking=[], spans=[
        {"path": "a.py", "start_line": 1, "end_line": 4}, {"path": "a.py", "start_line": 3, "end_line": 8},  # overlaps the first: dropped
        {"path": "a.py", "start_line": 11}, {"path": "b.py", "start_line": 10, "end_line": 12},
    ])
    assert answer.ranking == ["a.py", "b.py"]
    scores = extra_metrics(_sample(), answer, answer.ranking, 5, LINES.get)
    # whole-file line metrics: a 12 of 20, b lines 3-4 of 5 -> 14 of 25
    assert scores.values["cb_file_coverage"] == 1.0 and scores.values["cb_file_precision"] == 1.0
    assert scores.values["cb_line_coverage"] == 1.0 and scores.values["cb_line_precision"] == pytest.approx(14 / 25)
    # kept spans a1-4, a11, b10-12: blocks a1-10 and a5-12 recalled, b3-4 not; two of three spans on target
    assert scores.values["codenib_block_recall@5"] == pytest.approx(2 / 3)
    assert scores.values["codenib_block_precision@5"] == pytest.approx(2 / 3)
    assert set(name for name in scores.values if name.startswith("codenib_")) == {
        "codenib_block_recall@5", "codenib_block_precision@5", "codenib_block_accuracy@5"}


def test_codenib_counts_a_repeated_gold_span_as_a_block_of_its_own():
    """CodeNib's compute_block_metrics over gold [a.py:10-20, a.py:10-20, b.py:5-8, c.py:1-3] and a
    prediction overlapping only a.py gave recall@20 2/4 = 0.5 (run with the official code); with the
    repeat removed it would be 1/3."""
    spans = [{"file": "src/a.py", "start_line": 10, "end_line": 20}, {"file": "src/a.py", "start_line": 10, "end_line": 20},
             {"file": "./src/b.py", "start_line": 5, "end_line": 8}, {"file": "src/c.py", "start_line": 1, "end_line": 3}]
    sample = parse_contextbench_row(_row(gold_context=spans), "f.jsonl", 1)
    answer = Answer(ranking=[], spans=[{"path": f"noise/n{i}.py", "start_line": 1, "end_line": 5} for i in range(2)]
                    + [{"path": "src/a.py", "start_line": 12, "end_line": 30}]
                    + [{"path": f"noise/n{i}.py", "start_line": 1, "end_line": 5} for i in range(2, 24)])
    scores = extra_metrics(sample, answer, answer.ranking, 20, lambda path: 100)
    assert scores.values["codenib_block_recall@20"] == 0.5 and scores.counts["codenib_block_recall@20"] == [2, 4]
    assert scores.values["codenib_block_precision@20"] == 0.05
    assert scores.values["codenib_block_recall@5"] == 0.5
    assert scores.values["cb_file_coverage"] == pytest.approx(1 / 3)  # files are a set: a, b, c


def test_an_errored_item_scores_zero_on_the_same_names():
    good = extra_metrics(_sample(), Answer(ranking=["a.py"]), ["a.py"], 20, LINES.get)
    failed = extra_metrics(_sample(), None, [], 20, LINES.get)
    assert set(failed.values) == set(good.values) and not any(failed.values.values())
    assert failed.counts["cb_file_coverage"] == [0, 2] and failed.counts["cb_file_precision"] == [0, 0]


# -- end to end -----------------------------------------------------------------------------------


def test_contextbench_run_end_to_end(pytester):
    result = pytester.runpytest_subprocess(
        f"--bench-samples={FIXTURE}", f"--bench-snapshot=acme/gin-lite@{GIN_COMMIT}={GIN_TREE}",
        "--bench-arms=grep", "--bench-report=out.json", "-p", "no:cacheprovider",
    )
    assert result.ret == 0, result.stdout.str()
    assert_outcomes(result, passed=3)
    report = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    summary = report["summary"]["all"]["grep"]
    for name in ("cb_file_coverage", "cb_file_precision", "cb_line_coverage", "cb_line_precision", "recall@10", "codenib_block_recall@5"):
        assert name in summary["metrics"], name
    assert set(summary["micro"]) >= {"cb_file_coverage", "cb_file_precision", "cb_line_coverage", "cb_line_precision"}
    official = summary["contextbench_official"]
    assert official["num_total"] == 3 and set(official) == {"num_total", "num_valid", "final_file", "final_line"}
    if official["num_valid"] == 3:  # every item answered: the official micro average is the pooled one
        assert official["final_file"]["coverage"] == pytest.approx(summary["micro"]["cb_file_coverage"], abs=1e-6)
    assert "task:contextbench" in report["summary"]
    detail = next(entry for entry in report["details"] if entry["id"] == "acme__gin-lite-101")
    record = detail["arms"]["grep"]
    assert detail["gold"] == ["path.go", "path_test.go"]
    # the grep ranking holds path.go and path_test.go, so both files and all 29 + 25 gold lines are covered
    assert record["metrics"]["cb_file_coverage"] == 1.0 and record["metrics"]["cb_line_coverage"] == 1.0
    assert record["metric_counts"]["cb_line_coverage"] == [54.0, 54.0]


def test_the_official_aggregation_drops_instances_with_no_context():
    """ContextBench's aggregate_results, run on the same four instances (two scored, one with no
    extracted context, one failed), gave num_valid 2, num_total 4, final_file coverage and precision
    2/3, final_line coverage 7/12 and precision 7/105 (micro over the valid instances only)."""
    from pytest_retrieval_bench.report.build import contextbench_official

    def row(file_cov, file_prec, line_cov, line_prec, error=None, abstained=False):
        counts = {"cb_file_coverage": file_cov, "cb_file_precision": file_prec, "cb_line_coverage": line_cov, "cb_line_precision": line_prec}
        return {"metric_counts": counts, "error": error, "abstained": abstained}

    rows = [row([1, 2], [1, 1], [5, 10], [5, 5]), row([1, 1], [1, 2], [2, 2], [2, 100]),
            row([0, 3], [0, 0], [0, 40], [0, 0], abstained=True), row([0, 1], [0, 0], [0, 9], [0, 0], error="boom")]
    official = contextbench_official(rows)
    assert official["num_valid"] == 2 and official["num_total"] == 4
    assert official["final_file"] == {"coverage": pytest.approx(2 / 3), "precision": pytest.approx(2 / 3)}
    assert official["final_line"] == {"coverage": pytest.approx(7 / 12), "precision": pytest.approx(7 / 105)}
    assert contextbench_official(rows[2:]) == {"num_total": 2, "num_valid": 0}
    # the official edge rule: no prediction -> precision 1.0, no gold -> coverage 1.0
    assert contextbench_official([row([0, 0], [0, 0], [0, 0], [0, 0])])["final_file"] == {"coverage": 1.0, "precision": 1.0}
