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
from itertools import accumulate, chain
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


def line_specs(line: str) -> list[str]:
    """The import specs of one line: none for a comment line."""
    stripped = line.strip()
    if not stripped or stripped.startswith(("//", "# ", "*")):
        return []
    # each alternative has one group, which matches at least a character: the one that matched is the spec
    return [match[match.lastindex] for match in IMPORT_PATTERN.finditer(stripped)]


def import_specs(text: str, known: dict[str, list[str]] | None = None) -> list[str]:
    """The import specs of a file's first `IMPORT_LINES` lines, comment lines skipped, at most
    `IMPORT_SPECS`. `known` keeps each distinct line's specs across the files of a snapshot, whose
    import lines repeat (`import org.junit.jupiter.api.Test;` in every test file)."""
    hits = sorted({match.start() for literal, word in _IMPORT_WORDS if literal in text for match in word.finditer(text)})
    if not hits:
        return []
    known = {} if known is None else known
    specs: list[str] = []
    for line in _hit_lines(text, hits):
        found = known.get(line)
        if found is None:
            found = known[line] = line_specs(line)
        specs.extend(found)
    return specs[:IMPORT_SPECS]


def _tail(name: str) -> str:
    """What follows a name's last `/` or `.`: an import name and the file it names end alike."""
    return name[max(name.rfind("/"), name.rfind(".")) + 1 :]


def module_names(paths: Iterable[str], wanted: set[str] | None = None) -> dict[str, set[str]]:
    """Every lowercase name an import may use for a file: dotted and slashed, 2..5 trailing parts,
    stem; with `wanted`, only those names.

    Each name of a file (in pathlib's normal form, ASCII) ends with its stem or is its name, so
    a file none of whose two tails ends a wanted name is passed over without making its names."""
    tails = None if wanted is None else {_tail(name) for name in wanted}
    names: dict[str, set[str]] = defaultdict(set)
    for path in paths:
        plain = path.isascii()  # an ASCII path lowercases a character at a time: lowered once, its names are lowercase
        source = path.lower() if plain else path
        _, name, stem, suffix = split_path(source)
        normal = is_plain_path(source)
        if tails is not None and plain and normal and _tail(stem) not in tails and _tail(name) not in tails:
            continue
        no_suffix = source[: len(source) - len(suffix)] if normal else str(PurePosixPath(source).with_suffix(""))
        parts = no_suffix.split("/")
        variants = [no_suffix, no_suffix.replace("/", "."), name, stem]
        for width in range(2, min(5, len(parts)) + 1):
            variants.append("/".join(parts[-width:]))
            variants.append(".".join(parts[-width:]))
        for variant in variants:
            if variant:
                key = variant if plain else variant.lower()
                if wanted is None or key in wanted:
                    names[key].add(path)
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


def _cleaned(spec: str) -> str:
    """The spec without surrounding space and trailing `;` or `,`: a leading `.` makes it relative."""
    return spec.strip().strip(";,")


def lookup_keys(spec: str, from_path: str) -> list[str]:
    """The names an import spec is looked up by: relative specs from the importing file's directory."""
    cleaned = _cleaned(spec)
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
        return [collapsed.lower(), f"{collapsed}/index".lower(), f"{collapsed}/mod".lower(), f"{collapsed}/__init__".lower()] if collapsed else []
    slashed = cleaned.replace("::", "/").replace(".", "/").strip("/")
    return [slashed.lower(), slashed.replace("/", ".").lower()]


def _targets(keys: list[str], names: dict[str, set[str]]) -> list[str]:
    found: set[str] = set()
    for key in keys:
        found.update(names.get(key, ()))
    return sorted(found)[:IMPORT_TARGETS]


def resolve_import(spec: str, from_path: str, names: dict[str, set[str]]) -> list[str]:
    """The files an import spec may name: relative specs from the importing file's directory."""
    return _targets(lookup_keys(spec, from_path), names)


def import_pairs(paths: list[str], texts: list[str]) -> tuple[list[int], list[int]]:
    """(importing node, imported node) for every import edge, in the bench's order: files in node
    order, their specs in order, each spec's targets in path order.

    Every file's specs are read first, so the names of files are made only for the names some
    spec looks up (`module_names(paths, wanted)`)."""
    known: dict[str, list[str]] = {}
    relative: dict[str, bool] = {}
    keys_of: dict[tuple[str, str | None], list[str]] = {}
    importing: list[tuple[int, list[tuple[str, str | None]]]] = []
    for position, (path, text) in enumerate(zip(paths, texts)):
        specs = import_specs(text, known) if text else []
        if not specs:
            continue
        directory = split_path(path)[0]
        found: list[tuple[str, str | None]] = []
        for spec in specs:
            # a relative spec resolves from the importing file's directory, any other alike everywhere
            is_relative = relative.get(spec)
            if is_relative is None:
                is_relative = relative[spec] = _cleaned(spec).startswith(".")
            key = (spec, directory if is_relative else None)
            if key not in keys_of:
                keys_of[key] = lookup_keys(spec, path)
            found.append(key)
        importing.append((position, found))
    names = module_names(paths, set(chain.from_iterable(keys_of.values())))
    positions = {path: position for position, path in enumerate(paths)}
    resolved = {key: [positions[target] for target in _targets(keys, names)] for key, keys in keys_of.items()}
    left: list[int] = []
    right: list[int] = []
    for position, found in importing:
        for key in found:
            for target in resolved[key]:
                if target != position:
                    left.append(position)
                    right.append(target)
    return left, right
