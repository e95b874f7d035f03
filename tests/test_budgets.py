"""Budgeted Context Yield (BCY): the bench's packing reproduced exactly.

`tests/fixtures/arb_reference/bcy.json` holds what `agent_retrieval_bench.bcy_curve.pack_files`
returns for rankings of the bundled release and for hand-written texts (see the fixture README);
`bcy_metrics` and `pack` must give the very same floats and counters. Hand-computed cases pin the
boundary rules, and a naive per-budget packer checks the one-pass packing over random rankings.
"""

from __future__ import annotations

import ast
import functools
import json
import random
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_retrieval_bench.files.jsonl import iter_sample_lines
from pytest_retrieval_bench.scoring import budgets as budgets_module
from pytest_retrieval_bench.scoring.budgets import (
    BCY_BUDGETS,
    BCY_TOKENIZER,
    Packing,
    TokenCounts,
    bcy_metrics,
    count_tokens,
    header_tokens,
    pack,
)

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / "testdata" / "release"
MANIFEST = RELEASE / "corpus" / "synthetic_v1" / "corpus_manifest.jsonl"
FIXTURE = ROOT / "tests" / "fixtures" / "arb_reference" / "bcy.json"
COUNTERS = ("used_tokens", "covered_gold_count", "gold_count", "packed_files", "partial_files", "missing_ranked_files")


# --------------------------------------------------------------------------- the recorded bench output


@functools.lru_cache(maxsize=None)
def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def release_texts() -> dict[tuple[str, str], dict[str, str]]:
    """File texts per (repo, commit), read as the bench's `load_file_texts` reads a chunk file."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    for line in iter_sample_lines(MANIFEST):
        if not line.text.strip():
            continue
        entry = json.loads(line.text)
        texts: dict[str, str] = {}
        for row_line in iter_sample_lines(RELEASE / entry["chunks_path"]):
            if row_line.text.strip():
                row = json.loads(row_line.text)
                if row.get("kind") == "file" and row.get("path"):
                    texts[str(row["path"])] = str(row.get("text") or "")
        out[(entry["repo"], entry["base_commit"])] = texts
    return out


def counts_for(case: dict[str, Any], shared: dict[tuple[str, str], TokenCounts]) -> TokenCounts:
    if "texts" in case:
        return TokenCounts(case["texts"].get)
    key = (case["repo"], case["base_commit"])
    if key not in shared:
        shared[key] = TokenCounts(release_texts()[key].get)
    return shared[key]


def test_fixture_is_the_bench_at_the_pinned_commit() -> None:
    document = fixture()
    assert document["upstream_commit"] == "07014c986f3deadb1548c62b32c0ffbe6a81465d"
    assert document["tokenizer"] == BCY_TOKENIZER
    names = {case["case"] for case in document["cases"]}
    assert {"lexical", "bm25", "lexical:tiny", "bm25:gold-boundary", "messy", "gold-not-in-snapshot", "empty-ranking"} <= names
    assert len(document["cases"]) >= 150


def test_bcy_metrics_equal_the_recorded_bcy_exactly() -> None:
    shared: dict[tuple[str, str], TokenCounts] = {}
    compared = 0
    mismatches: list[str] = []
    for case in fixture()["cases"]:
        got = bcy_metrics(case["ranking"], case["gold"], counts_for(case, shared), case["budgets"])
        assert list(got) == [f"bcy@{budget}" for budget in sorted(set(case["budgets"]))]
        for result in case["results"]:
            compared += 1
            value = got[f"bcy@{result['budget']}"]
            if not (value == result["bcy"] and repr(value) == repr(result["bcy"])):
                mismatches.append(f"{case['case']} {case['sample_id']} @{result['budget']}: {value!r} != {result['bcy']!r}")
    assert compared >= 1000
    assert mismatches == [], "\n".join(mismatches[:20])
    assert sum(len(counts) for counts in shared.values()) <= sum(len(texts) for texts in release_texts().values()) + 10


def test_pack_counters_equal_the_recorded_ones() -> None:
    shared: dict[tuple[str, str], TokenCounts] = {}
    mismatches: list[str] = []
    for case in fixture()["cases"]:
        got = {packing.budget: packing for packing in pack(case["ranking"], case["gold"], counts_for(case, shared), case["budgets"])}
        for result in case["results"]:
            packing = got[result["budget"]]
            for name in COUNTERS:
                if getattr(packing, name) != result[name]:
                    mismatches.append(f"{case['case']} {case['sample_id']} @{result['budget']} {name}: {getattr(packing, name)} != {result[name]}")
    assert mismatches == [], "\n".join(mismatches[:20])


def test_the_recorded_cases_reach_every_packing_rule() -> None:
    results = [result for case in fixture()["cases"] for result in case["results"]]
    assert any(r["partial_files"] for r in results)                      # a prefix at the boundary
    assert any(r["used_tokens"] < r["budget"] for r in results)          # ran out of files
    assert any(r["used_tokens"] == r["budget"] and not r["partial_files"] for r in results)  # filled exactly
    assert any(r["missing_ranked_files"] for r in results)
    assert any(0 < r["bcy"] < 1 for r in results) and any(r["bcy"] == 1 for r in results)
    assert any(r["gold_count"] == 0 for r in results)


def test_token_counts_equal_the_bench_tokenizer_on_every_release_file() -> None:
    recorded = fixture()["token_counts"]
    texts = release_texts()
    assert sorted(recorded) == sorted(f"{repo}@{commit}" for repo, commit in texts)
    for (repo, commit), files in texts.items():
        assert {path: count_tokens(text) for path, text in files.items()} == recorded[f"{repo}@{commit}"]


# --------------------------------------------------------------------------- hand-computed rules


def test_tokenizer_rules() -> None:
    assert BCY_TOKENIZER == "regex_code_tokenizer_v1" and BCY_BUDGETS == (4000, 8000, 16000, 32000)
    assert count_tokens("") == 0 and count_tokens(" \n\t ") == 0
    assert count_tokens("x1 := 007 + 3.14e10") == 9            # x1 : = 007 + 3 . 14 e10
    assert count_tokens("café naïve") == 5                     # caf é na ï ve: non-ASCII letters stand alone
    assert count_tokens("🎉→_a9b") == 3
    assert header_tokens("a.py") == 6                          # # # # a . py
    assert header_tokens("src/é x.rs") == 3 + 6                # src / é x . rs


def texts_counts(texts: dict[str, str]) -> TokenCounts:
    return TokenCounts(texts.get)


def one(ranking: list[str], gold: list[str], texts: dict[str, str], budget: int) -> Packing:
    return pack(ranking, gold, texts_counts(texts), (budget,))[0]


A = {"a.py": "x = 1"}  # header 6, content 3, separator 1: total 10


def test_a_file_whose_header_alone_exceeds_the_budget_is_packed_but_not_covered() -> None:
    for budget in range(1, 6):
        packing = one(["a.py", "b.py"], ["a.py"], {**A, "b.py": "y"}, budget)
        assert (packing.used_tokens, packing.packed_files, packing.partial_files, packing.bcy) == (budget, 1, 1, 0.0)
    assert one(["a.py"], ["a.py"], A, 6).bcy == 0.0            # header only: no content token
    assert one(["a.py"], ["a.py"], A, 7).bcy == 1.0            # one content token is enough (tau = 1)
    content_without_separator = one(["a.py"], ["a.py"], A, 9)
    assert (content_without_separator.partial_files, content_without_separator.bcy) == (1, 1.0)
    exact = one(["a.py"], ["a.py"], A, 10)
    assert (exact.used_tokens, exact.partial_files, exact.bcy) == (10, 0, 1.0)
    assert one(["a.py"], ["a.py"], A, 11).used_tokens == 10


def test_header_of_a_later_file_over_the_remaining_budget() -> None:
    texts = {**A, "b.py": "y + z"}                              # b.py: 6 + 3 + 1
    packing = one(["a.py", "b.py", "c.py"], ["b.py"], texts, 13)
    assert (packing.used_tokens, packing.packed_files, packing.partial_files, packing.missing_ranked_files, packing.bcy) == (13, 2, 1, 0, 0.0)
    assert one(["a.py", "b.py"], ["b.py"], texts, 17).bcy == 1.0


def test_empty_and_blank_files_are_packed_never_covered() -> None:
    texts = {"e.py": "", "w.py": " \n", **A}                    # e.py costs 6 (no separator), w.py 7
    packing = one(["e.py", "w.py", "a.py"], ["e.py", "w.py", "a.py"], texts, 100)
    assert (packing.used_tokens, packing.packed_files, packing.missing_ranked_files) == (6 + 7 + 10, 3, 0)
    assert packing.covered_gold_count == 1 and packing.bcy == 1 / 3
    stop = one(["e.py", "a.py"], ["a.py"], texts, 6)           # the empty file fills the budget exactly
    assert (stop.used_tokens, stop.packed_files, stop.partial_files, stop.bcy) == (6, 1, 0, 0.0)
    assert texts_counts(texts).content("e.py") == 0 and texts_counts(texts).content("gone") is None


def test_gold_file_not_in_the_snapshot_counts_in_the_denominator() -> None:
    packing = one(["gone.py", "a.py"], ["gone.py", "a.py"], A, 100)
    assert (packing.missing_ranked_files, packing.covered_gold_count, packing.gold_count, packing.bcy) == (1, 1, 2, 0.5)
    assert bcy_metrics(["a.py"], ["elsewhere.py"], texts_counts(A)) == {f"bcy@{b}": 0.0 for b in BCY_BUDGETS}


def test_duplicate_and_empty_paths_are_packed_once() -> None:
    texts = {**A, "b.py": "y"}                                  # b.py: 6 + 1 + 1
    packing = one(["a.py", "", "a.py", "b.py", "a.py"], ["a.py", "a.py", ""], texts, 100)
    assert (packing.used_tokens, packing.packed_files, packing.gold_count, packing.bcy) == (18, 2, 1, 1.0)


def test_missing_files_after_the_stop_are_not_counted() -> None:
    assert one(["a.py", "gone.py"], [], A, 5).missing_ranked_files == 0
    assert one(["a.py", "gone.py"], [], A, 10).missing_ranked_files == 0
    assert one(["a.py", "gone.py"], [], A, 11).missing_ranked_files == 1
    assert one(["gone.py", "a.py"], [], A, 0).missing_ranked_files == 1  # a zero budget stops at the first file with text


def test_empty_ranking_and_no_gold() -> None:
    assert bcy_metrics([], ["a.py"], texts_counts(A)) == {"bcy@4000": 0.0, "bcy@8000": 0.0, "bcy@16000": 0.0, "bcy@32000": 0.0}
    assert one([], ["a.py"], A, 10) == Packing(10, 0, 0, 1, 0, 0, 0)
    assert one(["a.py"], [], A, 100).bcy == 0.0


def test_budgets_are_sorted_and_distinct_in_the_result() -> None:
    got = bcy_metrics(["a.py"], ["a.py"], texts_counts(A), (9, 3, 9, 7))
    assert got == {"bcy@3": 0.0, "bcy@7": 1.0, "bcy@9": 1.0}
    assert list(got) == ["bcy@3", "bcy@7", "bcy@9"]


def test_each_file_is_read_and_counted_once() -> None:
    calls: list[str] = []
    texts = {**A, "b.py": "y"}

    def text_of(path: str) -> str | None:
        calls.append(path)
        return texts.get(path)

    counts = TokenCounts(text_of)
    for _ in range(3):
        bcy_metrics(["gone.py", "a.py", "b.py"], ["b.py"], counts)
    assert sorted(calls) == ["a.py", "b.py", "gone.py"] and len(counts) == 3


# --------------------------------------------------------------------------- one pass == one budget at a time


def naive_pack(ranking: list[str], gold: list[str], texts: dict[str, str], budget: int) -> tuple[int, ...]:
    """The protocol spelled out for a single budget, with token lists (test oracle)."""
    seen: list[str] = []
    for path in ranking:
        if path and path not in seen:
            seen.append(path)
    targets = {path for path in gold if path}
    used = packed = partial = missing = 0
    covered: set[str] = set()
    for path in seen:
        if path not in texts:
            missing += 1
            continue
        header = budgets_module._TOKEN.findall(f"### {path}\n")
        content = budgets_module._TOKEN.findall(texts[path])
        size = len(header) + len(content) + (1 if texts[path] else 0)
        if budget - used <= 0:
            break
        packed += 1
        if size <= budget - used:
            shown = len(content)
            used += size
        else:
            partial += 1
            shown = min(len(content), max(0, budget - used - len(header)))
            used = budget
        if path in targets and content and shown >= 1:
            covered.add(path)
        if used >= budget:
            break
    return (budget, used, len(covered), len(targets), packed, partial, missing)


def test_one_pass_equals_packing_each_budget_alone() -> None:
    rng = random.Random(20240601)
    words = ["x", "foo_bar", "42", "(", ")", "é", "→", " ", "\n", "a1", "::", ""]
    for _ in range(300):
        texts = {f"f{i}.py": " ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for i in range(8)}
        pool = list(texts) + ["gone.py", "", "f0.py"]
        ranking = [rng.choice(pool) for _ in range(rng.randint(0, 10))]
        gold = rng.sample(pool, rng.randint(0, 4))
        budgets = sorted({rng.randint(0, 90) for _ in range(rng.randint(1, 6))})
        got = [tuple(vars(p).values()) for p in pack(ranking, gold, texts_counts(texts), budgets)]
        assert got == [naive_pack(ranking, gold, texts, budget) for budget in budgets], (ranking, gold, budgets)


def test_the_module_needs_only_the_standard_library() -> None:
    tree = ast.parse(Path(budgets_module.__file__).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= {"__future__", "re", "dataclasses", "typing"}


CODE_LIKE = st.text(alphabet=st.sampled_from("aZ_09x7 \t\n\x0b\x0c\r\x1c\x1f\x00\x7f.:=+(){}[]\"'#é"), max_size=300)


@given(text=CODE_LIKE, repeat=st.integers(min_value=1, max_value=60))
@settings(max_examples=300, deadline=None)
def test_counting_long_ascii_texts_by_classes_equals_the_regex(text: str, repeat: int) -> None:
    """Long ASCII texts are counted without the regex: the count must be the regex's, including
    digit-led runs (`12ab` is two tokens, also at the very start), `\\x1c`-`\\x1f` (spaces to
    `\\s`) and control characters."""
    long_text = (text * repeat)[:20_000]
    assert count_tokens(long_text) == len(budgets_module._TOKEN.findall(long_text))


ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=()), max_size=200)  # any code point, lone surrogates too


@given(text=ANY_TEXT, code=CODE_LIKE, repeat=st.integers(min_value=1, max_value=40))
@settings(max_examples=300, deadline=None)
def test_counting_long_texts_of_any_characters_by_classes_equals_the_regex(text: str, code: str, repeat: int) -> None:
    """Non-ASCII characters are one token each (their UTF-8 lead byte), and end word runs; a
    text with a non-ASCII space goes to the regex."""
    long_text = ((code + text) * repeat)[:20_000]
    assert count_tokens(long_text) == len(budgets_module._TOKEN.findall(long_text))
    for padded in ("x" * budgets_module._BYTES_FROM + text, "12ab " + text + "y" * budgets_module._BYTES_FROM):
        assert count_tokens(padded) == len(budgets_module._TOKEN.findall(padded))  # long enough for the classes


def test_the_non_ascii_spaces_are_every_character_the_regex_counts_as_space() -> None:
    space = re.compile(r"\s")
    regex_spaces = {code for code in range(0x80, 0x110000) if space.match(chr(code))}
    listed = {code for code in range(0x80, 0x110000) if budgets_module._NON_ASCII_SPACE.match(chr(code))}
    assert listed == regex_spaces and len(listed) > 10


def test_class_count_on_real_source_equals_the_regex() -> None:
    root = Path(json.__file__).parent.parent  # the standard library's sources
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in sorted(root.glob("*.py"))[:200]]
    for text in texts:
        assert count_tokens(text) == len(budgets_module._TOKEN.findall(text))
    assert sum(len(text) >= budgets_module._BYTES_FROM and text.isascii() for text in texts) > 50, "most are counted by classes"
