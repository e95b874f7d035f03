"""One snapshot in memory: its text files, its other paths, its chunk rows, a private copy on demand."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import orjson

from pytest_retrieval_bench.corpus.copy_files import CopyWriter
from pytest_retrieval_bench.index.chunk_index import file_chunks
from pytest_retrieval_bench.index.repomap_nodes import NodeReader
from pytest_retrieval_bench.scoring.budgets import TokenCounts

MAX_TEXT_BYTES = 1_048_576


def as_text(data: bytes) -> str | None:
    """SPEC 2's text-file rule: under 1 MiB, no NUL byte, decoded as UTF-8 with replacement."""
    if len(data) >= MAX_TEXT_BYTES or b"\x00" in data:
        return None
    return data.decode("utf-8", errors="replace")


def is_text(text: str) -> bool:
    """The same rule for a chunk file's file row: under 1 MiB as UTF-8 and no NUL character."""
    return "\x00" not in text and (len(text) * 4 < MAX_TEXT_BYTES or len(text.encode("utf-8", errors="surrogatepass")) < MAX_TEXT_BYTES)


def undecodable(path: str) -> str | None:
    """A path read from a file system or a git tree whose bytes are not UTF-8 (they arrive as lone
    surrogates), shown with its bad bytes escaped (`caf\\xe9.txt`); None for a valid path."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return None


MAX_PATH_DEPTH = 256
"""Directory levels a snapshot path may have: far past any repository's, and every copy stays writable."""


def check_relative_path(path: str) -> str | None:
    """Why a path may not be written inside a snapshot, or None when it is safe."""
    if not path:
        return "empty path"
    depth = path.replace("\\", "/").count("/")
    if depth > MAX_PATH_DEPTH:
        return f"path {path[:60]!r}... is {depth} directories deep (at most {MAX_PATH_DEPTH})"
    if path.startswith("/") or (len(path) > 1 and path[1] == ":") or path.startswith("\\"):
        return f"absolute path {path!r}"
    if any(part == ".." for part in path.replace("\\", "/").split("/")):
        return f"path {path!r} has a '..' component"
    return None


def row_hash(row: dict[str, Any]) -> bytes:
    """A chunk row's part of the content digest: sha256 of its JSON, keys sorted."""
    return hashlib.sha256(orjson.dumps(row, option=orjson.OPT_SORT_KEYS)).digest()


@dataclass
class Snapshot:
    """A repository at a base commit, as the lexical arms and the arm API see it."""

    repo: str
    commit: str
    origin: str
    #: path -> text of each text file (a `FileRowTexts` parses a release's on first use)
    texts: Mapping[str, str]
    other_paths: tuple[str, ...] = ()
    #: file names left out because they are not valid UTF-8 (no report could hold them), shown escaped
    undecodable_paths: tuple[str, ...] = ()
    #: a release's rows: a list when held, or a `ChunkFileRows` that reads them again from the file at each pass
    chunk_rows: Iterable[dict[str, Any]] | None = None
    #: rows in the chunk file (kept when the rows are freed, or never held)
    row_count: int = 0
    writer: Callable[[Path], None] | None = None
    directory_provider: Callable[..., Path] | None = field(default=None, repr=False)
    index_loader: Callable[["Snapshot", str], Any] | None = field(default=None, repr=False)
    _digest: str | None = field(default=None, repr=False)
    _files_digest: str | None = field(default=None, repr=False)
    _lexical: Any = field(default=None, repr=False)
    _chunks: Any = field(default=None, repr=False)
    _repomap: Any = field(default=None, repr=False)
    rows_dropped: bool = field(default=False, repr=False)
    #: whether anything keys on `content_digest` (an index cache): without one, the rows are never hashed
    digest_wanted: bool = field(default=True, repr=False)
    #: an arm reads the rows themselves (an embedding arm's chunk texts): they stay until the snapshot goes
    keep_rows: bool = field(default=False, repr=False)
    _token_counts: Any = field(default=None, repr=False)
    #: `row_hash` of each row, taken by the read that went through them, for `content_digest`
    _row_hashes: list[bytes] | None = field(default=None, repr=False, compare=False)
    #: the map's nodes, taken by that read as it went (until the map is built or loaded)
    map_nodes: NodeReader | None = field(default=None, repr=False, compare=False)

    @property
    def key(self) -> str:
        return f"{self.repo}@{self.commit}"

    def paths(self) -> list[str]:
        return sorted([*self.texts, *self.other_paths])

    def read_text(self, path: str) -> str | None:
        return self.texts.get(path)

    def text_files(self) -> Iterator[tuple[str, str]]:
        for path in sorted(self.texts):
            yield path, self.texts[path]

    def directory(self, fresh: bool = False) -> Path:
        """The private copy; with `fresh`, reset to the committed tree first (each item starts clean)."""
        if self.directory_provider is None:
            raise RuntimeError("this snapshot has no private copy provider")
        return self.directory_provider(self, fresh) if fresh else self.directory_provider(self)

    def _index(self, kind: str) -> Any:
        """One kind of index, built or loaded from the cache on first use, then kept."""
        attribute = f"_{kind}"
        if getattr(self, attribute) is None:
            if self.index_loader is None:
                raise RuntimeError("this snapshot has no index loader")
            if self.digest_wanted:
                self.content_digest()  # before the rows that feed it may be freed
            setattr(self, attribute, self.index_loader(self, kind))
        return getattr(self, attribute)

    def has_index(self, kind: str) -> bool:
        return getattr(self, f"_{kind}") is not None

    def keep_index(self, kind: str, index: Any) -> None:
        """Hold an index built elsewhere (several kinds built together) as if `_index` had made it."""
        setattr(self, f"_{kind}", index)

    def lexical_index(self) -> Any:
        """The shared whole-file `LexicalIndex`."""
        return self._index("lexical")

    def chunk_index(self) -> Any:
        """The shared `ChunkIndex` over the chunk rows (or one file chunk per text file)."""
        return self._index("chunks")

    def repomap_index(self) -> Any:
        """The shared RepoMap file graph over the chunk rows (or over the text files of a tree)."""
        return self._index("repomap")

    def drop_rows(self) -> None:
        """Free held chunk rows (a second copy of the text) once the indexes that read them exist
        (rows read again from their file at each pass hold nothing, and stay)."""
        if isinstance(self.chunk_rows, list) and not self.keep_rows:
            if self.digest_wanted:
                self.content_digest()
            self.chunk_rows = None
            self.rows_dropped = True

    @property
    def has_rows(self) -> bool:
        """Whether the snapshot came with chunk rows (a release), even if they were freed since."""
        return self.chunk_rows is not None or self.rows_dropped

    def chunk_row_list(self) -> list[dict[str, Any]]:
        """The chunk rows an embedding arm encodes: the release's own, or one file chunk per text file
        of a tree (kept only when set-up was told to keep them: the `rows` index kind)."""
        if self.chunk_rows is not None:
            return self.chunk_rows if isinstance(self.chunk_rows, list) else list(self.chunk_rows)
        if self.rows_dropped:
            raise RuntimeError(f"{self.key}: the chunk rows were freed before an arm that reads them was prepared")
        return file_chunks(self.text_files())

    def token_counts(self) -> TokenCounts:
        """The files' BCY token counts, each file counted once for every item of the snapshot."""
        if self._token_counts is None:
            # the dict's own `get`, not `self.read_text`: a bound method of the snapshot kept by the
            # snapshot is a cycle, so its texts and indexes would outlive its release until the cycle
            # collector ran, and two snapshots would be held at once
            self._token_counts = TokenCounts(self.texts.get)
        return self._token_counts

    def path_set(self) -> frozenset[str]:
        cached = self.__dict__.get("_path_set")
        if cached is None:
            cached = self.__dict__["_path_set"] = frozenset(self.texts) | frozenset(self.other_paths)
        return cached

    def files_digest(self) -> str:
        """sha256 over sorted (path, text sha256) of text files and the other paths' names.

        The same tree gives the same digest whatever its source (chunk file, directory, git).
        """
        if self._files_digest is None:
            digest = hashlib.sha256()
            for path, text in self.text_files():
                digest.update(path.encode("utf-8", errors="surrogateescape") + b"\0")
                digest.update(hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).digest())
            for path in sorted(self.other_paths):
                digest.update(b"\1" + path.encode("utf-8", errors="surrogateescape") + b"\0")
            self._files_digest = digest.hexdigest()
        return self._files_digest

    def content_digest(self) -> str:
        """The files digest plus the chunk rows: keys the index cache (chunk rows feed an index)."""
        if self._digest is None:
            if self.rows_dropped and self.chunk_rows is None:
                raise RuntimeError(f"{self.key}: the content digest was not taken before the chunk rows were freed")
            digest = hashlib.sha256(self.files_digest().encode())
            for hashed in self._row_hashes if self._row_hashes is not None else map(row_hash, self.chunk_rows or ()):
                digest.update(b"\2" + hashed)
            self._digest = digest.hexdigest()
            self._row_hashes = None
        return self._digest

    def write_to(self, target: Path) -> None:
        """Write the snapshot's files under the existing directory `target` (the private copy only):
        regular files, no links; `copy_paths` lists what it must then hold."""
        if self.writer is not None:
            self.writer(target)
            return
        writer = CopyWriter(target)
        for path, text in self.texts.items():
            writer.write(path, text.encode("utf-8", errors="surrogatepass"))

    def copy_paths(self) -> list[str]:
        """The files a private copy holds: every path of a tree or git snapshot; the text files of one
        read from chunk rows (a binary or oversized file row has no bytes to write)."""
        return self.paths() if self.writer is not None else sorted(self.texts)
