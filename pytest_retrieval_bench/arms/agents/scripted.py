"""`arb-closed-tool`: the bench's scripted grep/read/submit policy (`scripted_grep_read_submit`) as an agent.

It lists the root, greps the query's heaviest words and phrases, reads the best-scoring files while
the budgets allow, and submits the best of what it read. Its calls go through the item's
`ClosedToolEnvironment`; its trace, final files and counts equal the bench's
`run_closed_tool_sample` detail row for the same sample and budgets.

Like the bench's policy, it scores candidates with more than the protocol shows an agent: every
path of the snapshot (for path-word matches) and the first 20,000 characters of each file it read
(beyond the tokens the read was charged). That is the reference policy as published; an agent of
the user's sees only what its calls return.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from pytest_retrieval_bench.arms.agents import scripted_query as q
from pytest_retrieval_bench.arms.agents.environment import ClosedToolEnvironment
from pytest_retrieval_bench.arms.agents.protocol import ALLOWED_TOOLS, Budgets, Episode
from pytest_retrieval_bench.arms.agents.tool_files import ToolFiles

NAME = "arb-closed-tool"
POLICY = "scripted_grep_read_submit"
CONTENT_CHARS = 20_000


def _path_patterns(files: ToolFiles) -> tuple[list[str], q.PathPatterns]:
    """Every path of the snapshot, and their lowercased texts ready to search, once per snapshot."""
    cached = files.memo.get("scripted.paths")
    if cached is None:
        paths, lowered = files.ordered_paths()
        cached = files.memo["scripted.paths"] = (paths, q.PathPatterns(lowered))
    return cached


def _content_words(files: ToolFiles, path: str) -> set[str]:
    """The words of a file's first 20,000 characters, once per snapshot."""
    cache = files.memo.setdefault("scripted.content_words", {})
    words = cache.get(path)
    if words is None:
        words = cache[path] = q.tokenize((files.text(path) or "")[:CONTENT_CHARS])
    return words


def environment(files: ToolFiles, budgets: Budgets | None = None) -> ClosedToolEnvironment:
    """The environment this policy runs in: the protocol's, with the bench's scripted submit rule."""
    return ClosedToolEnvironment(files, budgets, submit_unread_without_reads=True)


def run(query_text: str, files: ToolFiles, env: ClosedToolEnvironment) -> Episode:
    """Run the policy on one query; the episode's `extra` holds the bench's closed-tool fields
    (policy, budgets, patterns, trace) other than those scoring adds (`first_gold_step`)."""
    budgets = env.budgets
    max_calls = budgets.max_tool_calls
    query = q.parse_query(query_text)
    reserved_read_calls = max(1, min(max_calls - 2, budgets.final_k + 3))
    pattern_budget = max(1, min(budgets.max_grep_calls, max_calls - reserved_read_calls - 2))
    patterns = q.choose_grep_patterns(query, pattern_budget)
    trace: list[dict[str, Any]] = []
    scores: dict[str, float] = defaultdict(float)
    hit_patterns: dict[str, list[str]] = defaultdict(list)

    roots = env.list_dir("")
    trace.append({"tool": "list_dir", "path": "", "entries": (roots.entries or [])[:20]})

    for pattern in patterns:
        if env.tool_calls >= max_calls - 1:
            break
        result = env.grep(pattern, budgets.grep_top_k)
        hits = result.hits or []
        trace.append({"tool": "grep", "pattern": pattern,
                      "hits": [{"path": hit["path"], "matches": hit["matches"], "snippet": hit["snippet"][:240]} for hit in hits[:5]]})
        weight = q.pattern_score(pattern)
        for rank, hit in enumerate(hits, start=1):
            scores[hit["path"]] += weight * float(hit["matches"]) / math.sqrt(rank)
            hit_patterns[hit["path"]].append(pattern)

    for path in q.query_anchor_paths(query):
        if path in files:
            scores[path] += 2.0
            hit_patterns[path].append("query_path")
    paths, path_patterns = _path_patterns(files)
    for index, count in path_patterns.counts(patterns).items():
        scores[paths[index]] += 0.25 * count

    words = q.query_tokens(query)
    for path, _score in sorted(scores.items(), key=lambda item: (-item[1], item[0])):
        if env.tool_calls >= max_calls - 1 or env.read_tokens >= budgets.max_read_tokens:
            break
        if path not in files:
            continue
        result = env.read_file(path)
        if not result.ok:  # an empty file's read charges nothing: the bench's policy stops there
            break
        scores[path] += len(words & _content_words(files, path)) / max(1, len(words))
        trace.append({"tool": "read_file", "path": path, "tokens": result.tokens, "truncated": result.truncated,
                      "matched_patterns": hit_patterns.get(path, [])[:8]})

    ranked = env.read_paths if env.read_paths else list(scores)
    final = [path for path, _ in sorted(((path, scores[path]) for path in ranked), key=lambda item: (-item[1], item[0]))[: budgets.final_k]]
    submitted = env.submit(final)
    trace.append({"tool": "submit", "files": submitted.final_files if submitted.ok else final})
    return env.finish({
        "policy": POLICY,
        "allowed_tools": list(ALLOWED_TOOLS),
        "max_tool_calls": max_calls,
        "max_read_tokens": budgets.max_read_tokens,
        "max_read_tokens_per_file": budgets.max_read_tokens_per_file,
        "max_grep_calls": budgets.max_grep_calls,
        "final_k": budgets.final_k,
        "grep_patterns": patterns,
        "trace": trace,
    })


def closed_tool_fields(episode: Episode, latency_seconds: float | None = None) -> dict[str, Any]:
    """The bench's `closed_tool` block of a detail row, but `first_gold_step` (scoring adds it)."""
    fields = dict(episode.extra)
    fields.update({"tool_calls": episode.tool_calls, "grep_calls": episode.grep_calls, "read_calls": episode.read_calls,
                   "read_tokens": episode.read_tokens, "final_files": list(episode.final_files)})
    if latency_seconds is not None:
        fields["latency_seconds"] = latency_seconds
    return fields
