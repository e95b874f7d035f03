"""The frozen whole-file lexical baselines of SPEC 3.1: grep, grep-ident, bm25:all, bm25:ident.

Each is a few array operations over the snapshot's `LexicalIndex`. They are never tuned:
changing a rule here changes every report ever compared against them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from pytest_retrieval_bench.arms.base import Answer, Request
from pytest_retrieval_bench.index.tokens import grep_terms, ident_terms, query_identifiers, word_runs
from pytest_retrieval_bench.index.postings import LexicalIndex

BM25_K1 = 1.2
BM25_B = 0.75
RANKING_CAP = 1000
NOT_APPLICABLE = "NOT_APPLICABLE"
_WORD = re.compile(r"[A-Za-z0-9_]+")


def lexical_index(request: Request) -> LexicalIndex:
    """The snapshot's shared index (built or loaded once per snapshot by the session)."""
    return request.snapshot.lexical_index()  # type: ignore[attr-defined]


def _ranked(index: LexicalIndex, scores: np.ndarray, *secondary: np.ndarray) -> list[str]:
    """Documents with a positive score: score descending, then each secondary key descending, then path."""
    candidates = np.flatnonzero(scores > 0)
    keys = [candidates] + [-key[candidates] for key in reversed(secondary)] + [-scores[candidates]]
    order = candidates[np.lexsort(keys)][:RANKING_CAP]
    return [index.paths[doc] for doc in order]


def _answer(ranking: list[str]) -> Answer:
    return Answer(ranking=ranking, cache_state=NOT_APPLICABLE)


def grep_scores(index: LexicalIndex, terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per file: 2 per term in the path's tokens, else 1 if in the content; and term occurrences."""
    size = len(index.paths)
    scores = np.zeros(size, dtype=np.int64)
    occurrences = np.zeros(size, dtype=np.int64)
    for term in terms:
        term_score = np.zeros(size, dtype=np.int64)
        docs, counts = index.content.get(term)
        term_score[docs] = 1
        occurrences[docs] += counts
        path_docs, _ = index.path_tokens.get(term)
        term_score[path_docs] = 2
        scores += term_score
    return scores, occurrences


def _whole_word_counts(index: LexicalIndex, identifier: str, read_text: Callable[[str], str | None]) -> tuple[np.ndarray, np.ndarray]:
    """Files holding an identifier as a whole word, and how often.

    An identifier made of identifier bytes is one maximal word run, so the word index answers
    directly. A file stem with `.` or `-` (`index.d`, `my-plugin`) is not: its word runs narrow
    the candidates through the index, and a regex counts the whole-word matches in those.
    """
    if _WORD.fullmatch(identifier):
        return index.words.get(identifier)
    candidates: np.ndarray | None = None
    for part in dict.fromkeys(word_runs(identifier)):
        docs, _ = index.words.get(part)
        candidates = docs if candidates is None else np.intersect1d(candidates, docs)
    if candidates is None or not len(candidates):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    pattern = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(identifier) + r"(?![A-Za-z0-9_])")
    docs, counts = [], []
    for doc in candidates.tolist():
        found = len(pattern.findall(read_text(index.paths[doc]) or ""))
        if found:
            docs.append(doc)
            counts.append(found)
    return np.asarray(docs, dtype=np.int64), np.asarray(counts, dtype=np.int64)


def ident_scores(index: LexicalIndex, identifiers: list[str], read_text: Callable[[str], str | None]) -> tuple[np.ndarray, np.ndarray]:
    """Per file: distinct identifiers present as whole words, plus 1 per identifier in the lowercased path."""
    size = len(index.paths)
    scores = np.zeros(size, dtype=np.int64)
    occurrences = np.zeros(size, dtype=np.int64)
    lowered_paths = index.lowered_paths
    for identifier in identifiers:
        docs, counts = _whole_word_counts(index, identifier, read_text)
        scores[docs] += 1
        occurrences[docs] += counts
        needle = identifier.lower()
        in_path = [position for position, path in enumerate(lowered_paths) if needle in path]
        if in_path:
            scores[np.asarray(in_path, dtype=np.int64)] += 1
    return scores, occurrences


def bm25_scores(index: LexicalIndex, terms: list[str], k1: float = BM25_K1, b: float = BM25_B) -> np.ndarray:
    """Whole-file BM25 (Lucene idf, (k1 + 1) in the numerator), each distinct term once."""
    size = len(index.paths)
    scores = np.zeros(size, dtype=np.float64)
    if size == 0:
        return scores
    mean_length = float(index.doc_lengths.sum()) / size
    norm = k1 * ((1.0 - b) + b * (index.doc_lengths / mean_length)) if mean_length > 0 else np.full(size, k1 * (1.0 - b))
    for term in dict.fromkeys(terms):
        docs, counts = index.content.get(term)
        if len(docs) == 0:
            continue
        frequency = len(docs)
        idf = math.log(1.0 + (size - frequency + 0.5) / (frequency + 0.5))
        tf = counts.astype(np.float64)
        scores[docs] += idf * (tf * (k1 + 1.0)) / (tf + norm[docs])
    return scores


@dataclass(frozen=True)
class GrepArm:
    """A control, not what an agent types: every bench token of the query text of 2+ chars."""

    name: str = "grep"
    uses_index: ClassVar[str] = "lexical"

    def retrieve(self, request: Request) -> Answer:
        index = lexical_index(request)
        scores, occurrences = grep_scores(index, grep_terms(request.query_text))
        return _answer(_ranked(index, scores, occurrences))


@dataclass(frozen=True)
class GrepIdentArm:
    """What an agent types into ripgrep: code identifiers and file stems from the query's strings."""

    name: str = "grep-ident"
    uses_index: ClassVar[str] = "lexical"

    def retrieve(self, request: Request) -> Answer:
        index = lexical_index(request)
        identifiers = query_identifiers(request.query)
        if not identifiers:
            return Answer(ranking=[], state="NO_IDENTIFIERS", cache_state=NOT_APPLICABLE)
        scores, occurrences = ident_scores(index, identifiers, request.snapshot.read_text)
        return _answer(_ranked(index, scores, occurrences))


@dataclass(frozen=True)
class BM25Arm:
    """Whole-file BM25, k1 1.2, b 0.75, over the grep terms (`all`) or identifier tokens (`ident`)."""

    name: str
    uses_index: ClassVar[str] = "lexical"

    def retrieve(self, request: Request) -> Answer:
        index = lexical_index(request)
        if self.name == "bm25:ident":
            terms = ident_terms(query_identifiers(request.query))
        else:
            terms = grep_terms(request.query_text)
        return _answer(_ranked(index, bm25_scores(index, terms)))
