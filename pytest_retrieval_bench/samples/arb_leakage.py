"""The bench's rule for ARB rows whose query leaks the answer (`query_has_leakage`), rule for rule.

The bench's evaluators (its closed-tool one among them) skip such a row and count it as
`query_leakage`: a query holding a raw patch or the fix commit, or, for an edit2ripple row, one
that names a gold file (its path, its file name or its module path). Agent items apply it as a
skip with that reason; ranking items do not (the plugin's ranking protocol scores every row).
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import Any, Mapping

QUERY_LEAKAGE = "query_leakage"
_RAW_PATCH_MARKER = re.compile(r"diff --git\b|(^|\n)(---\s+(?:a/|/dev/null)|\+\+\+\s+(?:b/|/dev/null))")


def has_raw_patch_marker(text: str) -> bool:
    return bool(_RAW_PATCH_MARKER.search(text.replace("\\n", "\n")))


def module_variants(path: str) -> list[str]:
    """A path's module spellings (`a.b.c`, `a/b/c`, and without the first part), lowercased, 3+ characters."""
    parts = [part for part in PurePosixPath(path.replace("\\", "/")).with_suffix("").parts if part not in {".", ""}]
    variants = [".".join(parts), "/".join(parts)]
    if len(parts) > 1:
        variants += [".".join(parts[1:]), "/".join(parts[1:])]
    return [variant.lower() for variant in variants if len(variant) >= 3]


def _edit2ripple_fatal(row: Mapping[str, Any], query_text: str) -> bool:
    """The bench's fatal edit2ripple leakage: the query re-read as JSON (text that is no JSON object
    as `{"text": ...}`), then a patch, the fix commit (metadata), or a gold file named in it."""
    try:
        query = json.loads(query_text) if query_text.strip().startswith("{") else {"text": query_text}
    except json.JSONDecodeError:
        query = {"text": query_text}
    normalized = json.dumps(query or {}, ensure_ascii=False, sort_keys=True).replace("\\n", "\n")
    lowered = normalized.lower()
    fix_commit = str((row.get("metadata") or {}).get("fix_commit") or "")
    if has_raw_patch_marker(normalized) or (fix_commit and fix_commit in normalized):
        return True
    for path in (str(value) for value in (row.get("gold") or {}).get("files") or []):
        pure = PurePosixPath(path)
        if (path.lower() and path.lower() in lowered) or (pure.name.lower() and pure.name.lower() in lowered):
            return True
        if any("." in variant and variant in lowered for variant in module_variants(path)):
            return True
    return False


def query_has_leakage(row: Mapping[str, Any], query_text: str) -> bool:
    """Whether the bench skips this ARB row (`row`: the samples line as read) for a leaking query."""
    if row.get("task_type") == "edit2ripple" and _edit2ripple_fatal(row, query_text):
        return True
    fix_commit = str((row.get("gold") or {}).get("fix_commit") or "").strip()
    normalized = query_text.replace("\\n", "\n")
    return has_raw_patch_marker(normalized) or bool(fix_commit and fix_commit in normalized)
