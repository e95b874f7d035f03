"""`embed:<model>`: dense retrieval over the snapshot's chunks, exactly as the bench's `embedding_eval`.

Set-up (`prepare`, outside the item's timed span) encodes every distinct chunk text of the snapshot
that the vector store lacks, in the bench's shared-text-cache windows of `batch_size` batches, into
one contiguous float32 array; an item encodes only its query and ranks. The chunk text (`path:`, `kind:`, optional `symbol:`, `content:` lines,
after the passage prefix), the query text (the canonical JSON the sample gives every arm, after the
query prefix), the float32 dot product, the chunk order (score descending, then path, then chunk id)
and the file ranking (each path at its first chunk) are the bench's.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from contextlib import nullcontext
from typing import Any, Callable, ClassVar, ContextManager, Iterable

import numpy as np
import orjson

from pytest_retrieval_bench.arms.base import Answer, Request
from pytest_retrieval_bench.arms.embed_batches import DEFAULT_BYTES_PER_CHAR, Splits, plan_calls
from pytest_retrieval_bench.arms.embedders import (BUILT_IN_DIMENSIONS, EmbedOptions, TextEmbedder, load_model, model_libraries,
                                                   planned_device, weights_digest)
from pytest_retrieval_bench.arms.lexical import NOT_APPLICABLE, RANKING_CAP
from pytest_retrieval_bench.errors import ArmError
from pytest_retrieval_bench.index.vectors import VectorStore, encode_window, vectors_for

PREFIX = "embed:"


def chunk_text(row: dict[str, Any]) -> str:
    """The bench's `chunk_text_for_embedding`."""
    parts = [f"path: {row.get('path', '')}", f"kind: {row.get('kind', '')}"]
    if row.get("symbol"):
        parts.append(f"symbol: {row.get('symbol')}")
    parts.append("content:")
    parts.append(str(row.get("text", "")))
    return "\n".join(parts)


def checked_vectors(arm: str, output: Any, count: int, what: str) -> np.ndarray:
    """An embedder's output as a (count, dim) float32 array; ArmError naming the arm otherwise."""
    try:
        array = np.asarray(output, dtype=np.float32)
    except (TypeError, ValueError) as error:
        raise ArmError(f"arm {arm!r}: the embedder returned {type(output).__name__} for {what}, not a 2-D float array ({error})") from None
    if array.ndim != 2 or array.shape[0] != count or array.shape[1] == 0:
        raise ArmError(f"arm {arm!r}: the embedder returned shape {tuple(array.shape)} for {count} {what}; expected ({count}, dim)")
    if not np.isfinite(array).all():
        raise ArmError(f"arm {arm!r}: the embedder returned a non-finite value for {what}")
    return np.ascontiguousarray(array)


@dataclass
class Held:
    """One snapshot's chunk vectors and the order keys of its chunks (one snapshot at a time)."""

    key: str
    vectors: np.ndarray
    #: each chunk's place in (path, chunk id) order: the tie-break below the score, as one integer
    tie_rank: np.ndarray
    #: each chunk's path as an index into `path_names` (sorted, distinct)
    path_ids: np.ndarray
    path_names: list[str]
    encoded: int
    seconds: float

    @classmethod
    def of(cls, key: str, vectors: np.ndarray, rows: list[dict[str, Any]], encoded: int, seconds: float) -> "Held":
        paths = np.array([str(row.get("path", "")) for row in rows], dtype=str)
        chunk_ids = np.array([str(row.get("chunk_id", "")) for row in rows], dtype=str)
        tie_rank = np.empty(len(rows), dtype=np.int64)
        tie_rank[np.lexsort((chunk_ids, paths))] = np.arange(len(rows))  # a stable sort: equal keys keep row order
        names, path_ids = np.unique(paths, return_inverse=True)
        return cls(key, vectors, tie_rank, path_ids.reshape(-1), names.tolist(), encoded, seconds)


@dataclass(eq=False)
class EmbeddingArm:
    """A dense arm: `embed:<model>` (wordllama or a SentenceTransformers model), or a user's embedder."""

    name: str
    model: str
    options: EmbedOptions = field(default_factory=EmbedOptions)
    #: a user's embedder (its output used as is); None loads `model` at the first set-up
    embedder: TextEmbedder | None = None
    #: an `@embedder(...)` fixture arm's function (module.qualname), whose embedder is bound at set-up
    fixture: str | None = None
    uses_index: ClassVar[str] = "rows"
    vector_store: VectorStore | None = None
    #: told of each snapshot's encoding: (arm, snapshot key, distinct texts, of those encoded, seconds)
    on_encoded: Callable[[str, str, int, int, float], None] | None = None
    #: told when a snapshot's set-up split batches to fit the memory budget: (arm, snapshot key, splits, budget)
    on_split: Callable[[str, str, Splits, int], None] | None = None
    #: (arm, snapshot key) -> a context yielding the `(encoded, to encode)` callback of a progress display, or None
    show_encoding: Callable[[str, str], ContextManager[Callable[[int, int], None] | None]] | None = None
    _loaded: TextEmbedder | None = field(default=None, repr=False)
    _held: Held | None = field(default=None, repr=False)
    _dimension: int | None = field(default=None, repr=False)

    # -- identity --------------------------------------------------------------------------------
    def model_identity(self, bound: bool = True) -> dict[str, Any]:
        """What the vectors depend on: a different model, weights, prefix or normalisation is another arm.

        An `@embedder(...)` arm is described by its function unless `bound` asks for the embedder it
        returned (the vector key): the registration and report are the same in every process."""
        options = self.options
        if self.fixture is not None and not (bound and self.embedder is not None):
            source = {"embedder_fixture": self.fixture, "normalize": "as returned"}
        elif self.embedder is not None:
            metadata = getattr(self.embedder, "cache_metadata", None)
            source = {"embedder": f"{type(self.embedder).__module__}.{type(self.embedder).__qualname__}",
                      "model_name": str(getattr(self.embedder, "model_name", self.model)),
                      "metadata": metadata() if callable(metadata) else None, "normalize": "as returned"}
        else:
            source = {"model": self.model, "weights_sha256": weights_digest(self.model), "normalize": options.normalize}
        return {**source, "query_prefix": options.query_prefix, "passage_prefix": options.passage_prefix,
                "batch_size": options.batch_size, "trust_remote_code": options.trust_remote_code}

    def identity_digest(self) -> str:
        """A digest of the model identity the registration names (an `@embedder(...)` arm: its function and options)."""
        return hashlib.sha256(orjson.dumps(self.model_identity(bound=False), option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]

    @property
    def identity(self) -> str:
        return f"embedding:{self.model}:{self.identity_digest()}"

    def description(self) -> dict[str, Any]:
        """The report's record of the model: identity, library versions, device and dimension, all
        known without loading it, so an xdist controller that ran no item writes what a worker would.
        A user's embedder gives its `dimension` and `device` attributes, if it has them."""
        built_in = self.embedder is None and self.fixture is None
        given = self.embedder if self.fixture is None else None
        dimension = BUILT_IN_DIMENSIONS.get(self.model) if built_in else getattr(given, "dimension", None)
        device = planned_device(self.model, self.options.device) if built_in else getattr(given, "device", None)
        return {**self.model_identity(bound=False), "memory_budget_bytes": self.options.budget,
                "dimension": dimension if isinstance(dimension, int) else None,
                "device": str(device) if device is not None else None,
                "libraries": {"numpy": np.__version__, **(model_libraries(self.model) if built_in else {})}}

    # -- set-up ----------------------------------------------------------------------------------
    def _embedder(self) -> TextEmbedder:
        if self.embedder is not None:
            return self.embedder
        if self._loaded is None:
            try:
                self._loaded = load_model(self.model, self.options)
            except (RuntimeError, ImportError, OSError, ValueError) as error:
                raise ArmError(f"arm {self.name!r}: {error}") from None
        return self._loaded

    def encode(self, texts: list[str], what: str, batch_size: int | None = None) -> np.ndarray:
        embedder = self._embedder()
        try:
            output = embedder.encode(texts, batch_size=batch_size or self.options.batch_size)
        except ArmError:
            raise
        except Exception as error:
            raise ArmError(f"arm {self.name!r}: encoding {what} failed: {type(error).__name__}: {error}") from error
        return checked_vectors(self.name, output, len(texts), what)

    def bytes_per_char(self) -> float:
        """The embedder's transient bytes per padded character: its own `bytes_per_char`, else the default."""
        declared = getattr(self._embedder(), "bytes_per_char", None)
        return float(declared) if isinstance(declared, (int, float)) and declared >= 0 else DEFAULT_BYTES_PER_CHAR

    def dimension(self) -> int:
        if self._dimension is None:
            declared = getattr(self._embedder(), "dimension", None)
            self._dimension = int(declared) if isinstance(declared, int) and declared > 0 else self.encode(["dimension"], "a probe text").shape[1]
        return self._dimension

    def vector_key(self) -> str:
        identity = {**self.model_identity(), "dimension": self.dimension()}
        identity.pop("batch_size")  # a batch's make-up may change a vector's last bits, but it stays that model's vector
        return hashlib.sha256(orjson.dumps(identity, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]

    def prepare(self, snapshot: Any) -> None:
        """Encode the snapshot's chunks (those the vector store lacks) and hold them, one snapshot at a time."""
        if self._held is not None and self._held.key == snapshot.key:
            return
        self._held = None  # the last snapshot's vectors go before this one's are made
        rows = snapshot.chunk_row_list()
        prefix = self.options.passage_prefix
        texts = [prefix + chunk_text(row) for row in rows]
        started = time.perf_counter()
        dimension = self.dimension()
        splits = Splits()

        def encode_chunks(missing: list[str]) -> np.ndarray:
            plan = plan_calls([len(text) for text in missing], self.options.batch_size, self.options.budget,
                              self.bytes_per_char())
            splits.add(plan.splits)
            parts = []
            for call in plan.calls:
                part = missing[call.start:call.stop]
                vectors = self.encode(part, f"{len(part)} chunk texts", call.batch_size)
                if vectors.shape[1] != dimension:
                    raise ArmError(f"arm {self.name!r}: the embedder returned {vectors.shape[1]} dimensions for chunks, {dimension} before")
                parts.append(vectors)
            return parts[0] if len(parts) == 1 else np.concatenate(parts)  # `missing` is never empty: one call at least

        showing = self.show_encoding(self.name, snapshot.key) if self.show_encoding is not None else nullcontext(None)
        with showing as progress:
            vectors, encoded = vectors_for(texts, self.vector_key(), self.vector_store, dimension, encode_chunks,
                                           encode_window(self.options.batch_size), progress)
        seconds = time.perf_counter() - started
        self._held = Held.of(snapshot.key, vectors, rows, encoded, seconds)
        if splits.batches and self.on_split is not None:
            self.on_split(self.name, snapshot.key, splits, self.options.budget)
        if self.on_encoded is not None:
            self.on_encoded(self.name, snapshot.key, len(set(texts)), encoded, seconds)  # distinct: a text is encoded once

    # -- an item ---------------------------------------------------------------------------------
    def ranked_chunks(self, query_text: str) -> np.ndarray:
        """Chunk rows in the bench's order: score descending, then path, then chunk id."""
        held = self._held
        assert held is not None
        query = self.encode([self.options.query_prefix + query_text], "the query")[0]
        if query.shape[0] != held.vectors.shape[1]:
            raise ArmError(f"arm {self.name!r}: the query vector has {query.shape[0]} dimensions, the chunks {held.vectors.shape[1]}")
        scores = held.vectors @ query
        return np.lexsort((held.tie_rank, -scores.astype(np.float64)))

    def retrieve(self, request: Request) -> Answer:
        if self._held is None or self._held.key != f"{request.repo}@{request.base_commit}":
            self.prepare(request.snapshot)
        held = self._held
        assert held is not None
        ranked_paths = held.path_ids[self.ranked_chunks(request.query_text)]
        _, first = np.unique(ranked_paths, return_index=True)  # each file at its first chunk
        names = held.path_names
        ranking = [name for name in (names[path] for path in ranked_paths[np.sort(first)].tolist()) if name][:RANKING_CAP]
        return Answer(ranking=ranking, cache_state=NOT_APPLICABLE, extra={"chunks": len(held.tie_rank)})


def embedding_arm(name: str, embedder: TextEmbedder, **options: Any) -> EmbeddingArm:
    """A user's embedder as a built-in-quality arm: the same chunk texts, cache, batching and ranking."""
    return EmbeddingArm(name=name, model=str(getattr(embedder, "model_name", name)), options=EmbedOptions(**options), embedder=embedder)



_NAMED = re.compile(r"embed:[^,*=\s]+")


def named_embedding_arms(entries: Iterable[str], options: EmbedOptions) -> list[EmbeddingArm]:
    """The `embed:<model>` arms that `--bench-arms` or `--bench-fuse` entries name, with the run's options."""
    names: dict[str, None] = {}
    for entry in entries:
        for found in _NAMED.findall(entry):
            names.setdefault(re.sub(r":k=[^:]*$", "", found), None)
    return [EmbeddingArm(name=name, model=name[len(PREFIX):], options=options) for name in names if len(name) > len(PREFIX)]
