"""ContextBench's symbols: tree-sitter definition nodes, found as `extractors/treesitter.py` finds them.

A symbol is `(file, node type, start byte, end byte)`. The definitions of a file are its named
nodes of the language's definition types, nested ones included (a walk that skips unnamed and
comment nodes with their subtrees); a span selects the definitions it overlaps by one byte or more;
a symbol name selects the named definitions called so (or called its last dotted part).

tree-sitter is the optional extra `symbols` (`tree-sitter==0.20.4`, `tree-sitter-languages==1.10.2`,
the bundle the official evaluator uses), imported on first use. Without it `unavailable_reason()`
says why and symbol metrics are absent; a language whose grammar the bundle lacks raises
`MissingGrammar` naming it (the official would stop the whole evaluation).
"""

from __future__ import annotations

import posixpath
from typing import Any, Callable, Iterator, Mapping, Sequence

from pytest_retrieval_bench.scoring.contextbench_context import Checkout, Interval

Symbol = tuple[str, str, int, int]

LANGUAGE_BY_SUFFIX = {
    ".py": "python", ".js": "javascript", ".jsx": "javascript", ".ts": "typescript", ".tsx": "tsx", ".java": "java", ".go": "go",
    ".rs": "rust", ".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp", ".hpp": "cpp", ".cs": "c_sharp", ".php": "php", ".rb": "ruby",
    ".swift": "swift", ".kt": "kotlin", ".scala": "scala",
}
DEFINITION_TYPES = {
    "python": {"function_definition", "class_definition", "async_function_definition"},
    "javascript": {"function_declaration", "class_declaration", "method_definition", "arrow_function"},
    "typescript": {"function_declaration", "class_declaration", "method_definition", "interface_declaration"},
    "tsx": {"function_declaration", "class_declaration", "method_definition", "interface_declaration"},
    "java": {"method_declaration", "class_declaration", "interface_declaration", "constructor_declaration"},
    "go": {"function_declaration", "method_declaration", "type_declaration"},
    "rust": {"function_item", "impl_item", "struct_item", "trait_item"},
    "c": {"function_definition", "struct_specifier"},
    "cpp": {"function_definition", "class_specifier", "struct_specifier"},
    "c_sharp": {"method_declaration", "class_declaration", "interface_declaration"},
    "php": {"function_definition", "method_declaration", "class_declaration"},
    "ruby": {"method", "class", "module"},
    "swift": {"function_declaration", "class_declaration", "protocol_declaration"},
    "kotlin": {"function_declaration", "class_declaration"},
    "scala": {"function_definition", "class_definition", "trait_definition"},
}
_IDENTIFIER_RANK = {"identifier": 0, "field_identifier": 1, "property_identifier": 2, "method_identifier": 3}
_IDENTIFIER_TYPES = {*_IDENTIFIER_RANK, "type_identifier", "scoped_identifier", "namespace_identifier", "constant_identifier"}
INSTALL = "pip install 'pytest-retrieval-bench[symbols]' (tree-sitter 0.20.4 and tree-sitter-languages 1.10.2, for Python 3.10-3.12)"


class MissingGrammar(Exception):
    """The grammar bundle has no parser for a language ContextBench scores symbols in."""

    def __init__(self, language: str):
        super().__init__(f"tree-sitter-languages has no grammar for {language}")
        self.language = language


_loader: dict[str, Any] = {}


def _get_parser() -> Callable[[str], Any] | None:
    if "get_parser" not in _loader:
        try:
            from tree_sitter_languages import get_parser  # type: ignore[import-not-found]
            get_parser("python")
            _loader["get_parser"] = get_parser
        except Exception as error:  # ImportError, or a bundle that cannot load its grammars
            _loader["get_parser"] = None
            _loader["reason"] = f"symbol metrics need tree-sitter ({type(error).__name__}: {error}); install them with {INSTALL}"
    return _loader["get_parser"]


def unavailable_reason() -> str | None:
    """Why symbols cannot be extracted in this interpreter (None: they can)."""
    return None if _get_parser() is not None else _loader["reason"]


_parsers: dict[str, Any] = {}


def _parser(language: str) -> Any:
    if language not in _parsers:
        get_parser = _get_parser()
        try:
            _parsers[language] = get_parser(language) if get_parser else None
        except Exception:
            _parsers[language] = None
    if _parsers[language] is None:
        raise MissingGrammar(language)
    return _parsers[language]


def language_of(path: str) -> str | None:
    return LANGUAGE_BY_SUFFIX.get(posixpath.splitext(path.lower())[1])


def _tree(path: str, content: bytes) -> tuple[Any, set[str]] | None:
    language = language_of(path)
    if language is None:
        return None
    return _parser(language).parse(content), DEFINITION_TYPES[language]


def definitions(path: str, content: bytes) -> list[tuple[str, int, int]]:
    """(node type, start byte, end byte) of every definition (`extract_defs`'s walk)."""
    parsed = _tree(path, content)
    if parsed is None:
        return []
    tree, types = parsed
    found: list[tuple[str, int, int]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if not node.is_named or "comment" in node.type:
            continue
        if node.type in types:
            found.append((node.type, node.start_byte, node.end_byte))
        stack.extend(reversed(node.children))
    return found


def _descendants(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children or []))


def _text(content: bytes, node: Any) -> str:
    return content[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _name(node: Any, content: bytes) -> str:
    """A definition's name (`_best_name_for_def`): its `name` field, else the best-ranked identifier
    under its `declarator` field (or under itself)."""
    name_node = node.child_by_field_name("name")
    if name_node is not None and (name := _text(content, name_node).strip()):
        return name
    declarator = node.child_by_field_name("declarator")
    best, best_rank = "", 10**9
    for child in _descendants(declarator if declarator is not None else node):
        if not child.is_named or child.type not in _IDENTIFIER_TYPES:
            continue
        text = _text(content, child).strip()
        rank = _IDENTIFIER_RANK.get(child.type, 100)
        if text and rank < best_rank:
            best, best_rank = text, rank
            if rank == 0:
                break
    return best


def named_definitions(path: str, content: bytes) -> list[tuple[str, str, int, int]]:
    """(node type, name, start byte, end byte) of every named definition (`extract_named_defs`)."""
    parsed = _tree(path, content)
    if parsed is None:
        return []
    tree, types = parsed
    found = []
    for node in _descendants(tree.root_node):
        if node.is_named and "comment" not in node.type and node.type in types and (name := _name(node, content)):
            found.append((node.type, name, node.start_byte, node.end_byte))
    return found


def symbols_in_spans(spans: Mapping[str, Sequence[Interval]], checkout: Checkout) -> set[Symbol]:
    """The definitions overlapping the byte spans (`extract_def_set_in_spans`)."""
    found: set[Symbol] = set()
    for path, intervals in spans.items():
        content = checkout.read_bytes(path)
        if content is None:
            continue
        for kind, start, end in definitions(path, content):
            if any(not (end < span_start or start > span_end) for span_start, span_end in intervals):
                found.add((path, kind, start, end))
    return found


def symbols_named(names_by_file: Mapping[str, Sequence[str]], checkout: Checkout) -> set[Symbol]:
    """The definitions the names select (`extract_def_set_from_symbol_names`): a name matches the
    definitions called so, else those called its last dotted part."""
    found: set[Symbol] = set()
    for path, names in names_by_file.items():
        content = checkout.read_bytes(path) if path and names else None
        if content is None:
            continue
        by_name: dict[str, list[tuple[str, int, int]]] = {}
        for kind, name, start, end in named_definitions(path, content):
            by_name.setdefault(name, []).append((kind, start, end))
        for raw in names:
            symbol = raw.strip() if isinstance(raw, str) else ""
            for candidate in [symbol, *([symbol.split(".")[-1]] if "." in symbol else [])] if symbol else []:
                if by_name.get(candidate):
                    found.update((path, kind, start, end) for kind, start, end in by_name[candidate])
                    break
    return found
