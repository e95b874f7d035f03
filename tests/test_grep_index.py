"""`grep` answers alike by plain scans and by the snapshot's `GrepIndex`: the bench's counts, order and snippets.

The reference below is the bench's `grep_files` rule as docs/agents.md states it (case-insensitive
substring counts over `path\\ntext`, path matches first, then more matches, a shorter path, the
path; the snippet around the first match in the text), written out plainly.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from pytest_retrieval_bench.arms.agents import tool_files as tool_files_module
from pytest_retrieval_bench.arms.agents.grep_index import GrepIndex, PathOrder, haystack_runs, is_piece
from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles

TEXTS = {
    "README.md": "Widgets: call f(x) then g(x). ENV env Env_var envenv",
    "src/app.py": "def main():\n    return run(1, 2)  # Σ ΣΑΣ ς\n",
    "src/env/config.py": "ENVIRONMENT = {'env': 1}\nenv_name = 'prod'\n",
    "src/kelvin.txt": "\u212aelvin and K and k; İstanbul i\u0307 done",  # the Kelvin sign and dotted I lower to ASCII letters
    "src/sigma.txt": "ΟΔΟΣ\nΣ\nαΣ β",
    "tests/test_app.py": "from src.app import main\n\ndef test_main():\n    assert main() == 3\n",
    "empty.txt": "",
    "docs/notes.md": "See the readme; the readme says it all (readme).\nPattern.compile(...) pattern.COMPILE( ... )",
    "docs/zzz_ä.md": "naïve café CAFÉ caféé aaaa aaa a_a __ _",
    "surrogate.txt": "broken \udcff text env",
    "deep/a/b/c.py": "aaaaaaa bbb aaa\r\naaa\tenv\x00nul",
}

PATTERNS = ["env", "ENV", "e", "a", "aa", "aaa", "readme", "pattern.compile(", "(...)", "( ... )", "kelvin", "k", "i\u0307",
            "istanbul", "σ", "ς", "οδοσ", "café", "caf", "naïve", "x)", "md\nwid", ".py\ndef", "src/", "_", "__", "a_a",
            "environment", "nul", "\x00", "\udcff", "zzz", "missing", "then g", "widgets:", "3\n", "\t", "1, 2"]


def bench_grep(texts: dict[str, str], pattern: str, top_k: int) -> list[dict[str, Any]]:
    needle = pattern.lower()
    rows = []
    for path, text in texts.items():
        matches = f"{path}\n{text}".lower().count(needle)
        if matches:
            index = text.lower().find(needle)
            snippet = "" if index < 0 else text[max(0, index - 80): min(len(text), index + len(needle) + 160)].replace("\n", "\\n")
            rows.append({"path": path, "matches": matches, "snippet": snippet, "path_match": needle in path.lower()})
    rows.sort(key=lambda row: (-int(row["path_match"]), -row["matches"], len(row["path"]), row["path"]))
    return rows[:top_k]


def random_texts(seed: int) -> dict[str, str]:
    generator = random.Random(seed)
    alphabet = "aAbB_ 0.\n(ΣσK\u212aé-"
    return {f"d{generator.randrange(3)}/f{index}{generator.choice(['', 'A', '_b', '.py'])}":
            "".join(generator.choice(alphabet) for _ in range(generator.randrange(0, 120))) for index in range(40)}


@pytest.fixture(scope="module")
def indexed() -> ToolFiles:
    files = ToolFiles(dict(TEXTS))
    files.prepare_grep()
    return files


@pytest.mark.parametrize("pattern", PATTERNS)
def test_grep_by_index_and_by_scan_equals_the_bench_rule(pattern: str, indexed: ToolFiles) -> None:
    expected = bench_grep(TEXTS, pattern, 12)
    assert ToolFiles(dict(TEXTS)).grep(pattern, 12) == expected
    assert indexed.grep(pattern, 12) == expected


@pytest.mark.parametrize("seed", range(6))
def test_random_texts_and_patterns_agree(seed: int) -> None:
    texts = random_texts(seed)
    scanned, indexed = ToolFiles(texts), ToolFiles(texts)
    indexed.prepare_grep()
    generator = random.Random(seed + 100)
    text = "".join(texts.values())
    for _ in range(80):
        start = generator.randrange(max(1, len(text) - 4))
        pattern = text[start: start + generator.randrange(1, 9)] or "a"
        expected = bench_grep(texts, pattern, 5)
        assert scanned.grep(pattern, 5) == expected, pattern
        assert indexed.grep(pattern, 5) == expected, pattern


def test_a_snapshot_grepped_often_is_indexed_and_its_answers_do_not_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tool_files_module, "INDEX_AFTER_SCANS", 3)
    files = ToolFiles(dict(TEXTS))
    answers = [files.grep(pattern, 12) for pattern in PATTERNS[:3]]
    assert files._index is None and files._all_haystacks is not None
    answers += [files.grep(pattern, 12) for pattern in PATTERNS[3:]]
    assert files._index is not None and files._all_haystacks is None  # the index replaced the lowercased copies
    assert answers == [bench_grep(TEXTS, pattern, 12) for pattern in PATTERNS]


def test_runs_are_those_of_the_lowercased_haystack() -> None:
    assert haystack_runs("A/B.py", "FooBar \u212a x_1 ünï") == {b"a": 1, b"b": 1, b"py": 1, b"foobar": 1, b"k": 1, b"x_1": 1, b"n": 1}
    assert is_piece("x_1") and not is_piece("x.1") and not is_piece("ü") and not is_piece("")


def test_the_index_counts_a_piece_inside_longer_runs_without_overlaps() -> None:
    index = GrepIndex(PathOrder(["p", "q"]), ["aaaaa aaa", "baaab"])
    assert index.run_counts("aa").tolist() == ["p\naaaaa aaa".count("aa"), "q\nbaaab".count("aa")] == [3, 1]
    assert index.candidates("a a").tolist() == [0]  # "baaab" holds "a" only inside its run, never ending or beginning one
    assert index.candidates("aa b").tolist() == [] and index.candidates("q\nb").tolist() == [1] and index.candidates("(") is None
    assert np.array_equal(index.holding("zz"), [False, False])
