"""An arm's name selects it: a definition that would take a built-in's or an alias's name, or a
hook that returns something other than arms, is a usage error naming where it came from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench import Answer
from pytest_retrieval_bench.arms.discovery import available_arms
from pytest_retrieval_bench.errors import BenchError

SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "release/corpus/synthetic_v1"
USAGE_ERROR = 4


class Named:
    def __init__(self, name: Any) -> None:
        self.name = name

    def retrieve(self, request: Any) -> Answer:
        return Answer(ranking=[])


def arms_from_hook(tmp_path: Path, *results: Any) -> dict[str, Any]:
    return available_arms(tmp_path / "pyproject.toml", [], list(results))


def test_a_hook_arm_with_a_new_name_is_added(tmp_path: Path) -> None:
    mine = Named("mine")
    assert arms_from_hook(tmp_path, [mine], None)["mine"] is mine


@pytest.mark.parametrize("name", ["grep", "bm25:all", "arb-repomap"])
def test_a_hook_arm_named_like_a_built_in_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(BenchError, match=f"pytest_retrieval_bench_arms hook: arm '{name}' has the name of a built-in arm"):
        arms_from_hook(tmp_path, [Named(name)])


def test_a_hook_may_replace_a_corvint_preset_once(tmp_path: Path) -> None:
    """`preset_arms(binary)` returned from a hook is how a run picks the corvint executable."""
    from pytest_retrieval_bench.arms.corvint import preset_arms

    chosen = preset_arms("/opt/corvint/bin/corvint")
    arms = arms_from_hook(tmp_path, chosen)
    assert all(arms[arm.name] is arm for arm in chosen)
    with pytest.raises(BenchError, match="arm 'corvint-query' has the name of an arm defined elsewhere"):
        arms_from_hook(tmp_path, [Named("corvint-query")], [Named("corvint-query")])


def test_two_hook_arms_of_one_name_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BenchError, match="arm 'mine' has the name of an arm defined elsewhere"):
        arms_from_hook(tmp_path, [Named("mine")], [Named("mine")])


@pytest.mark.parametrize("name", ["bm25", "lexical", "arb", "corvint"])
def test_a_hook_arm_named_like_an_alias_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(BenchError, match=f"arm '{name}' has the name of an alias"):
        arms_from_hook(tmp_path, [Named(name)])


@pytest.mark.parametrize("name", ["a,b", "my arm", "x[1]", ""])
def test_a_hook_arm_name_that_cannot_be_selected_is_refused(tmp_path: Path, name: Any) -> None:
    with pytest.raises(BenchError, match=r"pytest_retrieval_bench_arms hook: arm name .*: expected a non-empty name"):
        arms_from_hook(tmp_path, [Named(name)])


@pytest.mark.parametrize("result", [Named("mine"), "mine", 3, {"mine": 1}])
def test_a_hook_that_returns_no_list_of_arms_is_refused_naming_what_it_returned(tmp_path: Path, result: Any) -> None:
    with pytest.raises(BenchError, match=r"pytest_retrieval_bench_arms hook returned .*: expected a list of arms") as caught:
        arms_from_hook(tmp_path, result)
    assert repr(result) in str(caught.value)


@pytest.mark.parametrize("item", ["grep", object(), None, Named(7)])
def test_a_hook_list_holding_a_non_arm_is_refused(tmp_path: Path, item: Any) -> None:
    with pytest.raises(BenchError, match=r"returned .* among its arms: an arm needs a string `name` and a `retrieve\(request\)` method"):
        arms_from_hook(tmp_path, [Named("fine"), item])


@pytest.fixture
def bench(release_bench: pytest.Pytester) -> pytest.Pytester:
    return release_bench


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "-p", "no:cacheprovider", *args, timeout=300)


def test_a_conftest_hook_arm_named_grep_stops_the_run_before_any_item(bench: pytest.Pytester) -> None:
    bench.makeconftest("""
import pytest
from pytest_retrieval_bench import Answer

class Fake:
    name = "grep"
    def retrieve(self, request):
        return Answer(ranking=[])

@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return [Fake()]
""")
    result = run(bench, "--bench-report=out.json")
    assert result.ret == USAGE_ERROR
    assert "arm 'grep' has the name of a built-in arm" in result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert not (bench.path / "out.json").exists()


def test_a_conftest_hook_returning_one_arm_not_in_a_list_is_a_usage_error(bench: pytest.Pytester) -> None:
    bench.makeconftest("""
import pytest
from pytest_retrieval_bench import Answer

class MyArm:
    name = "mine"
    def retrieve(self, request):
        return Answer(ranking=[])

@pytest.hookimpl(optionalhook=True)
def pytest_retrieval_bench_arms(config):
    return MyArm()
""")
    result = run(bench, "--bench-arms=mine")
    assert result.ret == USAGE_ERROR
    assert "pytest_retrieval_bench_arms hook returned <conftest.MyArm object" in result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("name", ["bm25", "lexical"])
def test_a_fixture_arm_named_like_an_alias_is_a_usage_error(bench: pytest.Pytester, name: str) -> None:
    bench.makeconftest(f"""
import pytest_retrieval_bench

@pytest_retrieval_bench.arm("{name}")
def mine(bench_request):
    return []
""")
    result = run(bench, f"--bench-arms={name}", "--co")
    assert result.ret == USAGE_ERROR
    assert f"fixture arm '{name}': arm '{name}' has the name of an alias" in result.stderr.str()


@pytest.mark.parametrize("name, other, message", [
    ("grep", "", "fixture arm 'grep' has the name of an arm defined elsewhere"),
    ("bm25", "", "fixture arm 'bm25': arm 'bm25' has the name of an alias"),
    ("mine", "mine", "fixture arm 'mine' has the name of an arm defined elsewhere"),
])
def test_a_parametrized_fixture_arm_whose_name_is_taken_is_a_usage_error(bench: pytest.Pytester, name: str, other: str, message: str) -> None:
    """A fixture arm's variants are selected by its name, so the name must be free, not only the variants'."""
    hook = f"""
from pytest_retrieval_bench import Answer

class Other:
    name = "{other}"
    def retrieve(self, request):
        return Answer(ranking=[])

def pytest_retrieval_bench_arms(config):
    return [Other()]
""" if other else ""
    bench.makeconftest(f"""
import pytest
import pytest_retrieval_bench

@pytest_retrieval_bench.arm("{name}")
@pytest.mark.parametrize("n", [1, 3])
def variants(bench_request, n):
    return bench_request.snapshot.paths()[:n]
{hook}""")
    result = run(bench, f"--bench-arms={name}", "--co")
    assert result.ret == USAGE_ERROR and message in result.stderr.str(), result.stderr.str()
