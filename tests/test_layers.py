"""The package's layers import only downwards: each top-level module or subpackage has a rank, and
no import reaches one of its own rank or higher.

An import cycle between two parts of the package (corpus reading lines through samples, samples
checking paths through corpus) makes every one of them load the others first and makes neither
testable alone; this keeps the order of DESIGN.md's layout checked instead of hoped for. Imports
under `if TYPE_CHECKING:` are annotations only and not counted; imports inside functions are.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pytest_retrieval_bench

PACKAGE = Path(pytest_retrieval_bench.__file__).parent
NAME = "pytest_retrieval_bench"

LAYERS: tuple[tuple[str, ...], ...] = (  # lowest first
    ("errors", "__version__", "words"),
    ("files", "scoring"),
    ("leftovers",),
    ("index",),
    ("corpus",),
    ("samples",),
    ("arms",),
    ("report",),
    ("history",),
    ("shard", "progress", "junit", "tracebacks", "hookspecs", "dist_mode"),
    ("options",),
    ("bench",),
    ("terminal", "xdist", "fixtures"),
    ("fixture_scopes",),
    ("collect", "cli"),
    ("plugin",),
    ("__init__",),  # the public names, each imported on first use
)
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported_parts(source: str) -> list[tuple[int, str]]:
    """(line, part of the package) of every import of the package in `source`, type-checking-only
    ones left out; `from pytest_retrieval_bench import name` is the part `name` when it is a module
    or subpackage, `__version__` for the version, else the package's public names (`__init__`)."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (node.module == NAME or node.module.startswith(NAME + ".")):
            parts = node.module.split(".")[1:]
            if parts:
                found.append((node.lineno, parts[0]))
            else:
                for alias in node.names:
                    module = (PACKAGE / f"{alias.name}.py").exists() or (PACKAGE / alias.name).is_dir()
                    found.append((node.lineno, alias.name if module or alias.name == "__version__" else "__init__"))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name.split(".")[1]) for alias in node.names if alias.name.startswith(NAME + "."))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def upward_imports(part: str, source: str, where: str) -> list[str]:
    """Every import in `source` (a module of `part`) of a part of the same rank or higher, as `where:line`."""
    return [f"{where}:{line} ({part}, rank {RANK[part]}) imports {target} (rank {RANK.get(target, '?')})"
            for line, target in imported_parts(source) if target != part and RANK.get(target, len(LAYERS)) >= RANK[part]]


def _part_of(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py") if len(relative.parts) > 1 or relative.name != "__init__.py" else "__init__"


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_part_has_a_layer() -> None:
    parts = {_part_of(path) for path in MODULES}
    assert parts, "no module found: the check would pass on nothing"
    assert parts - set(RANK) == set(), "give each new top-level module or subpackage its place in LAYERS"


def test_no_import_reaches_up_or_across() -> None:
    problems = [problem for path in MODULES for problem in upward_imports(_part_of(path), path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))]
    assert problems == []


@pytest.mark.parametrize(("part", "source", "expected"), [
    ("corpus", "from pytest_retrieval_bench.samples.reader import iter_numbered_lines\n", ["samples"]),
    ("index", "def f():\n    from pytest_retrieval_bench.corpus.snapshot import Snapshot\n", ["corpus"]),
    ("index", "import pytest_retrieval_bench.report.build\n", ["report"]),
    ("files", "from pytest_retrieval_bench import leftovers\n", ["leftovers"]),
    ("arms", "from pytest_retrieval_bench import arm\n", ["__init__"]),
    ("options", "from pytest_retrieval_bench.options import OPTIONS\nfrom pytest_retrieval_bench.shard import parse_shard\n", []),
    ("bench", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pytest_retrieval_bench.terminal import MessageRepr\n", []),
    ("terminal", "from pytest_retrieval_bench.xdist import WorkerView\n", ["xdist"]),  # the same rank is across, not down
    ("corpus", "from pytest_retrieval_bench import __version__\n", []),
])
def test_the_check_names_what_it_finds(part: str, source: str, expected: list[str]) -> None:
    found = upward_imports(part, source, "module.py")
    assert [problem.split(" imports ")[1].split(" ")[0] for problem in found] == expected
    assert all(problem.startswith("module.py:") for problem in found)
