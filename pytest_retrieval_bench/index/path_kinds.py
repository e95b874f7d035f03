"""The bench's file classes (`is_code_path`, `is_test_path`, `is_noise_path`), frozen.

RepoMap sorts files into test, source and other nodes by these rules; they are the bench's
candidate filters, so they stay exactly as the bench writes them.
"""

from __future__ import annotations

from pathlib import PurePosixPath

CODE_SUFFIXES = frozenset({
    ".bash", ".c", ".cc", ".cpp", ".cs", ".cxx", ".fish", ".go", ".h", ".hpp", ".java", ".js", ".jsx", ".kt", ".kts",
    ".m", ".mm", ".php", ".proto", ".py", ".pyi", ".rb", ".rs", ".scala", ".sh", ".swift", ".ts", ".tsx", ".zsh",
})
NOISE_PARTS = frozenset({
    ".github", ".idea", ".vscode", "benchmark", "benchmarks", "changelog", "changelogs", "doc", "docs", "documentation",
    "examples", "licenses", "node_modules", "snapshot", "snapshots", "template", "templates", "vendor",
})
NOISE_NAMES = frozenset({"changelog", "changelog.md", "contributing.md", "license", "license.md", "readme", "readme.md"})
TEST_DIRECTORIES = frozenset({"__tests__", "test", "tests", "testing", "testdata", "testsuite", "testsuites"})
TEST_NAME_ENDINGS = (
    "_test.go", "_test.py", "_test.rs", "_test.cc", "_test.cpp", ".spec.js", ".spec.jsx", ".spec.ts", ".spec.tsx",
    ".test.js", ".test.jsx", ".test.ts", ".test.tsx", "test.java", "tests.java",
)


def is_plain_path(path: str) -> bool:
    """Whether `str(PurePosixPath(path)) == path` and its name has a suffix rule pathlib versions agree on."""
    return not (not path or path[0] == "/" or path[-1] == "." or path[-1] == "/" or "//" in path or "/./" in path
                or path.startswith("./"))


def split_path(path: str) -> tuple[str, str, str, str]:
    """`PurePosixPath(path)`'s (str(parent), name, stem, suffix), by string operations where the
    path is already in pathlib's normal form (relative, no empty or `.` part, a name not ending
    in a dot: every path a chunk file holds), else from pathlib itself.

    pathlib costs a few microseconds a path; the map asks this of every file several times."""
    if not is_plain_path(path):
        pure = PurePosixPath(path)
        return str(pure.parent), pure.name, pure.stem, pure.suffix
    cut = path.rfind("/")
    name = path[cut + 1 :]
    dot = name.rfind(".")
    if dot > 0:
        return (path[:cut] if cut >= 0 else "."), name, name[:dot], name[dot:]
    return (path[:cut] if cut >= 0 else "."), name, name, ""


def _suffix(path: str) -> str:
    return split_path(path)[3].lower()


def is_noise_path(path: str) -> bool:
    normalized = path.replace("\\", "/")
    _, name, stem, _ = split_path(normalized)
    parts = {part.lower() for part in normalized.split("/")}
    return bool(parts & NOISE_PARTS) or name.lower() in NOISE_NAMES or stem.lower() in NOISE_NAMES


def is_code_path(path: str) -> bool:
    return bool(path) and not is_noise_path(path) and _suffix(path) in CODE_SUFFIXES


def is_test_path(path: str) -> bool:
    if not path:
        return False
    normalized = path.replace("\\", "/")
    parts = {part.lower() for part in normalized.split("/")}
    name = split_path(normalized.lower())[1]
    named_as_test = name.startswith("test_") or name.endswith(TEST_NAME_ENDINGS)
    return (bool(parts & TEST_DIRECTORIES) or named_as_test) and _suffix(path) in CODE_SUFFIXES


def file_kind(path: str) -> str:
    """"test", "source" or "other", in that order of precedence; the code suffix, which both
    classes require, is looked at first, so most other files cost one split."""
    if not path or _suffix(path) not in CODE_SUFFIXES:
        return "other"
    if is_test_path(path):
        return "test"
    return "other" if is_noise_path(path) else "source"
