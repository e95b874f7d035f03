"""The RepoMap's import edges: the bench's import specs of a file and the files they may name.

The rules are the bench's (`extract_import_specs`, `resolve_import_spec`); two things make them
cheap over a whole snapshot without changing a result: a line is matched against the import
pattern only when it holds one of the words every alternative of the pattern needs, and a spec
is resolved once per snapshot (once per importing directory when it is relative).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from itertools import accumulate
from pathlib import PurePosixPath
from typing import Iterable, Iterator

from pytest_retrieval_bench.index.path_kinds import is_plain_path, split_path

IMPORT_LINES = 2_000
IMPORT_SPECS = 200
IMPORT_TARGETS = 8

IMPORT_PATTERN = re.compile(
    r"(?:^|\s)(?:from\s+([A-Za-z0-9_\.]+)\s+import|import\s+([A-Za-z0-9_\./:-]+)|"
    r"require\(\s*['\"]([^'\"]+)['\"]\s*\)|from\s+['\"]([^'\"]+)['\"]|"
    r"import\s+['\"]([^'\"]+)['\"]|#include\s+[<\"]([^>\"]+)[>\"]|"
    r"use\s+(?:crate::|super::)?([A-Za-z0-9_:]+))"
)
_IMPORT_WORDS = tuple((literal, re.compile(word)) for literal, word in (("from", r"from\s"), ("import", r"import\s"), ("#include", r"#include\s"),
                                                                     ("use", r"use\s"), ("require(", r"require\(")))
"""What every match of `IMPORT_PATTERN` holds, each a literal-led pattern that `re` finds at about
memchr speed: a line holding none of them cannot match, so only the lines they are found on are
matched against the pattern (a hit whose `\\s` is the line's own break only costs a wasted try).
A word's pattern runs only where `str.find` (faster still) sees its literal part."""


_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")
_NON_ASCII_BREAKS = ("\x85", "\u2028", "\u2029")
"""What `str.splitlines` breaks a line at besides a newline (each is whitespace, so `strip` drops it)."""


def _hit_lines(text: str, hits: list[int]) -> Iterator[str]:
    """The distinct lines (by `str.splitlines`) holding the sorted positions `hits`, in order,
    within the first `IMPORT_LINES` lines. A text of fewer lines with newlines as its only breaks
    (the common case) is cut around each hit; any other is split into lines whole."""
    if (text.count("\n") < IMPORT_LINES and not any(other in text for other in _OTHER_BREAKS)
            and (text.isascii() or not any(other in text for other in _NON_ASCII_BREAKS))):
        last = -1
        for hit in hits:
            start = text.rfind("\n", 0, hit) + 1
            if start != last:
                last = start
                end = text.find("\n", hit)
                yield text[start:end] if end >= 0 else text[start:]
        return
    lines = text.splitlines(True)  # with their breaks, so they tile the text
    ends = list(accumulate(map(len, lines)))
    line_end = 0
    for hit in hits:
        if hit >= line_end:  # past the line of the hit before
            number = bisect_right(ends, hit)
            if number >= IMPORT_LINES:
                return
            line_end = ends[number]
            yield lines[number]


def import_specs(text: str) -> list[str]:
    """The import specs of a file's first `IMPORT_LINES` lines, comment lines skipped, at most `IMPORT_SPECS`."""
    hits = sorted({match.start() for literal, word in _IMPORT_WORDS if literal in text for match in word.finditer(text)})
    specs: list[str] = []
    for line in _hit_lines(text, hits) if hits else ():
        stripped = line.strip()
        if not stripped or stripped.startswith(("//", "# ", "*")):
            continue
        # each alternative has one group, which matches at least a character: the one that matched is the spec
        specs.extend(match[match.lastindex] for match in IMPORT_PATTERN.finditer(stripped))
    return specs[:IMPORT_SPECS]


def module_names(paths: Iterable[str]) -> dict[str, set[str]]:
    """Every lowercase name an import may use for a file: dotted and slashed, 2..5 trailing parts, stem."""
    names: dict[str, set[str]] = defaultdict(set)
    for path in paths:
        plain = path.isascii()  # an ASCII path lowercases a character at a time: lowered once, its names are lowercase
        source = path.lower() if plain else path
        _, name, stem, suffix = split_path(source)
        no_suffix = source[: len(source) - len(suffix)] if is_plain_path(source) else str(PurePosixPath(source).with_suffix(""))
        parts = no_suffix.split("/")
        variants = [no_suffix, no_suffix.replace("/", "."), name, stem]
        for width in range(2, min(5, len(parts)) + 1):
            variants.append("/".join(parts[-width:]))
            variants.append(".".join(parts[-width:]))
        for variant in variants:
            if variant:
                names[variant if plain else variant.lower()].add(path)
    return names


def _collapse(path: PurePosixPath) -> str:
    parts: list[str] = []
    for part in path.parts:
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def _without_suffix(path: PurePosixPath) -> PurePosixPath:
    if path.name in ("", ".", ".."):
        return path
    try:
        return path.with_suffix("")
    except ValueError:
        return path


def resolve_import(spec: str, from_path: str, names: dict[str, set[str]]) -> list[str]:
    """The files an import spec may name: relative specs from the importing file's directory."""
    cleaned = spec.strip().strip(";,")
    if cleaned.startswith("."):
        base = PurePosixPath(from_path).parent
        if "/" in cleaned:
            relative = _without_suffix(base / cleaned)
        else:
            level = len(cleaned) - len(cleaned.lstrip("."))
            for _ in range(max(0, level - 1)):
                base = base.parent
            relative = base.joinpath(*[part for part in cleaned[level:].split(".") if part])
        collapsed = _collapse(relative)
        keys = [collapsed.lower(), f"{collapsed}/index".lower(), f"{collapsed}/mod".lower(), f"{collapsed}/__init__".lower()] if collapsed else []
    else:
        slashed = cleaned.replace("::", "/").replace(".", "/").strip("/")
        keys = [slashed.lower(), slashed.replace("/", ".").lower()]
    found: set[str] = set()
    for key in keys:
        found.update(names.get(key, ()))
    return sorted(found)[:IMPORT_TARGETS]


def import_pairs(paths: list[str], texts: list[str]) -> tuple[list[int], list[int]]:
    """(importing node, imported node) for every import edge, in the bench's order: files in node
    order, their specs in order, each spec's targets in path order."""
    names = module_names(paths)
    positions = {path: position for position, path in enumerate(paths)}
    resolved: dict[tuple[str, str | None], list[int]] = {}
    left: list[int] = []
    right: list[int] = []
    for position, (path, text) in enumerate(zip(paths, texts)):
        if not text:
            continue
        directory = split_path(path)[0]
        for spec in import_specs(text):
            # a relative spec resolves from the importing file's directory, any other alike everywhere
            key = (spec, directory if spec.strip().strip(";,").startswith(".") else None)
            targets = resolved.get(key)
            if targets is None:
                targets = resolved[key] = [positions[target] for target in resolve_import(spec, path, names)]
            for target in targets:
                if target != position:
                    left.append(position)
                    right.append(target)
    return left, right
