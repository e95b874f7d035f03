"""Answers that are not lists: an iterable is read once, a lone string is refused with the arm's name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_retrieval_bench.arms.base import Answer
from pytest_retrieval_bench.bench.run import _validate, as_answer
from pytest_retrieval_bench.errors import ArmError

RELEASE = Path(__file__).resolve().parent.parent / "testdata" / "release"

CONFTEST = """
import pytest
from pytest_retrieval_bench import Answer

class Generator:
    name = "gen"
    def retrieve(self, request):
        return Answer(ranking=(path for path in request.snapshot.paths()[:6]))

class Bare:
    name = "bare"
    def retrieve(self, request):
        return (path for path in request.snapshot.paths()[:6])

class Lone:
    name = "lone"
    def retrieve(self, request):
        return request.snapshot.paths()[0]

class LoneInAnswer:
    name = "lone-answer"
    def retrieve(self, request):
        return Answer(ranking=request.snapshot.paths()[0])

@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return [Generator(), Bare(), Lone(), LoneInAnswer()]
"""


def test_iterables_are_materialised_once() -> None:
    assert Answer(ranking=iter(["a", "b"])).ranking == ["a", "b"]
    assert Answer(ranking=("a", "b")).ranking == ["a", "b"]
    assert as_answer(path for path in ["x", "y"]).ranking == ["x", "y"]
    with pytest.raises(ValueError, match="single str"):
        Answer(ranking="src/a.py")
    with pytest.raises(ValueError, match="ranking is int"):
        Answer(ranking=3)  # type: ignore[arg-type]
    with pytest.raises(ArmError, match="single str"):
        as_answer("src/a.py")
    with pytest.raises(ArmError, match="returned dict"):
        as_answer({"ranking": ["a"]})


class PathLike(str):
    """A str subclass: a path string all the same."""


@pytest.mark.parametrize("ranking, error", [
    (["a.py", "b.py"], None),
    ([PathLike("b.py")], None),
    ([], None),
    (["a.py", "c.py"], "ranking entry 'c.py' is not a file of the snapshot"),
    (["a.py", 3], "ranking entry 3 is not a path string"),
    (["a.py", ["b.py"]], r"ranking entry \['b.py'\] is not a path string"),  # unhashable
    ([b"a.py"], "ranking entry b'a.py' is not a path string"),
])
def test_every_ranking_entry_is_a_path_of_the_snapshot(ranking: list[object], error: str | None) -> None:
    paths = frozenset({"a.py", "b.py"})
    if error is None:
        assert _validate(Answer(ranking=ranking), paths).ranking == ranking  # type: ignore[arg-type]
    else:
        with pytest.raises(ArmError, match=error):
            _validate(Answer(ranking=ranking), paths)  # type: ignore[arg-type]


def test_in_a_run(pytester: pytest.Pytester) -> None:
    shutil.copytree(RELEASE, pytester.path / "release")
    pytester.makeconftest(CONFTEST)
    result = pytester.runpytest_subprocess("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl",
                                           "--bench-corpus=release/corpus/synthetic_v1", "--bench-arms=gen,bare,lone,lone-answer",
                                           "--bench-report=out.json", "-p", "no:cacheprovider", timeout=300)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*arm lone failed on *: arm returned a single str (*), expected a list of paths*",
                                 "E * ValueError: ranking is a single str*"])  # the arm's own exception, as pytest shows it
    report = json.loads((pytester.path / "out.json").read_text())
    for entry in report["details"]:
        if entry["stratum"] != "positive" or not entry.get("arms"):
            continue
        arms = entry["arms"]
        assert arms["gen"]["ranking"] and arms["gen"]["ranking"] == arms["bare"]["ranking"]  # never an empty, consumed generator
        assert not arms["gen"]["abstained"] and arms["lone"]["error"] and arms["lone-answer"]["error"]
