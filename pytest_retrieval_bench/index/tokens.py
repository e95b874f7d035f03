"""The frozen tokenizers of the built-in lexical arms (SPEC 3.1).

Changing anything here changes every report, so `TOKENIZER_VERSION` is part of the index
cache key and of the registration.
"""

from __future__ import annotations

import re
from itertools import chain
from typing import Any, Callable, Iterator

TOKENIZER_VERSION = "bench-tokens-1"

_CAMEL_BOUNDARY = re.compile(r"([a-z])([A-Z])")
_CAMEL_GAP = re.compile(r"(?<=[a-z])(?=[A-Z])")
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
_WORD_RUN = re.compile(r"[A-Za-z0-9_]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INNER_UNDERSCORE = re.compile(r"[A-Za-z0-9_]_[A-Za-z0-9_]")
_PATH_LIKE = re.compile(r"[A-Za-z0-9_./\-]+")
CODE_EXTENSIONS = (".go", ".py", ".rs", ".ts", ".tsx", ".js", ".java", ".kt", ".rb", ".cs", ".cpp", ".c", ".h")


def bench_tokens(text: str) -> list[str]:
    """The bench's `tokenize`: split lower->Upper boundaries, alphanumeric runs, lowercased.

    The bench writes the split as `sub(r"([a-z])([A-Z])", r"\1 \2")`; a space put into the empty
    gap between the two letters is the same text (matches of the pair never overlap: the upper
    letter that ends one cannot start the next), without expanding a template per match.
    """
    spaced = _CAMEL_GAP.sub(" ", text)
    # tokens are ASCII, so lowercasing them joined is the same as one by one, and faster
    return " ".join(_ALNUM_RUN.findall(spaced)).lower().split()


def word_runs(text: str) -> list[str]:
    """Maximal runs of identifier bytes; an identifier occurs as a whole word iff it equals one."""
    return _WORD_RUN.findall(text)


_WORD_BYTES_ONLY = bytes(byte if bytes([byte]).isalnum() or byte == 0x5F else 0x20 for byte in range(256))
"""Each byte of `[A-Za-z0-9_]` kept, every other byte a space (`bytes.isalnum` is ASCII only)."""


def word_run_bytes(text: str) -> list[bytes]:
    """`word_runs(text)`, each run as its ASCII bytes, at about twice the speed: no regex and no
    string per run. Every byte of a multi-byte UTF-8 character is 0x80 or more, never an
    identifier byte, so blanking the other bytes and splitting leaves exactly the runs."""
    return text.encode("utf-8", errors="surrogatepass").translate(_WORD_BYTES_ONLY).split()


PIECE_CHARS = 1 << 16


def line_pieces(text: str, size: int = PIECE_CHARS) -> Iterator[str]:
    """`text` cut just after newlines into pieces of about `size` characters (longer if a line is).

    No token of either tokenizer spans a newline, and neither does a lower->Upper boundary, so
    the pieces' tokens, in order, are the text's tokens.
    """
    start = 0
    while len(text) - start > size:
        cut = text.rfind("\n", start, start + size)
        if cut < 0:
            cut = text.find("\n", start + size)
            if cut < 0:
                break
        yield text[start : cut + 1]
        start = cut + 1
    yield text[start:] if start else text


def stream_tokens(tokenize: Callable[[str], list[str]], text: str) -> Iterator[str]:
    """`tokenize(text)` as a stream, one piece at a time: a 1 MiB file's whole token list (a
    Python string per token, about ten times the text) is never held at once."""
    return chain.from_iterable(map(tokenize, line_pieces(text)))


def grep_terms(query_text: str) -> list[str]:
    """Distinct bench tokens of at least two characters, in first-occurrence order."""
    return list(dict.fromkeys(token for token in bench_tokens(query_text) if len(token) >= 2))


def _string_values(value: Any) -> Iterator[str]:
    """Every string value of a JSON document, never its keys, never numbers."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key in value:
            yield from _string_values(value[key])
    elif isinstance(value, list):
        for item in value:
            yield from _string_values(item)


def _is_code_identifier(name: str) -> bool:
    if len(name) < 4:
        return False
    return bool(_INNER_UNDERSCORE.search(name)) or bool(_CAMEL_BOUNDARY.search(name))


def _code_file_stems(text: str) -> Iterator[str]:
    """Stems of code file names: the basename up to its last extension, for known extensions."""
    for token in _PATH_LIKE.findall(text):
        basename = token.rstrip(".").rsplit("/", 1)[-1]
        for extension in CODE_EXTENSIONS:
            if basename.endswith(extension) and len(basename) > len(extension):
                stem = basename[: -len(extension)]
                if stem and not stem.endswith("."):
                    yield stem
                break


def query_identifiers(query: Any) -> list[str]:
    """grep-ident's terms: code-like identifiers and code file stems from string values, sorted."""
    found: set[str] = set()
    for text in _string_values(query):
        for match in _IDENTIFIER.finditer(text):
            if _is_code_identifier(match.group(0)):
                found.add(match.group(0))
        found.update(_code_file_stems(text))
    return sorted(found)


def ident_terms(identifiers: list[str]) -> list[str]:
    """bm25:ident's terms: the bench tokens of the identifiers, distinct, no length floor."""
    return list(dict.fromkeys(token for identifier in identifiers for token in bench_tokens(identifier)))
