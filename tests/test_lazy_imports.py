"""The plugin costs a pytest run without a bench almost nothing: its session, collection and
reporting modules, and numpy, are imported only once a bench is configured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_retrieval_bench

HEAVY = ["numpy", "pytest_retrieval_bench.bench.session", "pytest_retrieval_bench.collect", "pytest_retrieval_bench.terminal",
         "pytest_retrieval_bench.report.build", "pytest_retrieval_bench.index.repomap", "pytest_retrieval_bench.arms.embedding"]


def _modules_after(code: str, cwd: Path) -> dict[str, bool]:
    """Which of `HEAVY` a fresh interpreter holds after running `code`."""
    script = f"import json, sys\n{code}\nprint(json.dumps({{name: name in sys.modules for name in {HEAVY!r}}}))"
    result = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, check=True,
                            env={"PATH": "", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_loading_the_plugin_imports_none_of_the_bench(tmp_path: Path) -> None:
    assert _modules_after("import pytest_retrieval_bench.plugin", tmp_path) == dict.fromkeys(HEAVY, False)


def test_a_run_without_samples_imports_none_of_the_bench(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert 1 + 1 == 2\n")
    code = ("import pytest\n"
            "code = pytest.main(['-q', '-p', 'pytest_retrieval_bench.plugin', '-p', 'no:cacheprovider', 'test_plain.py'])\n"
            "assert code == 0, code")
    assert _modules_after(code, tmp_path) == dict.fromkeys(HEAVY, False)


def test_a_run_with_samples_imports_the_bench(tmp_path: Path) -> None:
    """The other side: the same check sees the modules once a bench is configured (it can fail)."""
    root = Path(__file__).resolve().parent.parent
    samples = root / "testdata" / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
    corpus = root / "testdata" / "release" / "corpus" / "synthetic_v1"
    code = ("import pytest\n"
            f"code = pytest.main(['-q', '-p', 'pytest_retrieval_bench.plugin', '-p', 'no:cacheprovider', '--co', '--bench-samples={samples}', "
            f"'--bench-corpus={corpus}', '--bench-arms=bm25', '--rootdir={tmp_path}'])\n"
            "assert code == 0, code")
    found = _modules_after(code, tmp_path)
    assert found["pytest_retrieval_bench.bench.session"] and found["pytest_retrieval_bench.collect"]


def test_the_public_names_are_imported_on_first_use() -> None:
    from pytest_retrieval_bench import Arm, Request, arm, embedding_arm
    from pytest_retrieval_bench.arms.base import Arm as BaseArm
    from pytest_retrieval_bench.arms.embedding import embedding_arm as defined_embedding_arm
    from pytest_retrieval_bench.arms.fixture_arms import arm as defined_arm

    assert (Arm, arm, embedding_arm) == (BaseArm, defined_arm, defined_embedding_arm)
    assert Request.__module__ == "pytest_retrieval_bench.arms.base"
    assert set(pytest_retrieval_bench.__all__) <= set(dir(pytest_retrieval_bench))
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        pytest_retrieval_bench.not_a_name  # noqa: B018
