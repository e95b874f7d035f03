"""The models behind the built-in embedding arms: wordllama's bundled weights, a SentenceTransformers
model, or an embedder the user brings (the bench's `TextEmbedder`: `encode(texts, batch_size)`).

Each is loaded only when its arm is first set up, so a missing extra or a bad path is an error of
that arm at snapshot set-up, and `sentence_transformers` is never imported unless selected.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from pytest_retrieval_bench.arms.embed_batches import DEFAULT_BYTES_PER_CHAR, DEFAULT_MEMORY_BUDGET

if TYPE_CHECKING:
    import numpy as np

WORDLLAMA = "wordllama"
HASH = "hash"


class TextEmbedder(Protocol):
    """What an embedding arm encodes with: texts in, one row of floats per text out."""

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> Any:
        ...


@dataclass(frozen=True)
class EmbedOptions:
    """How the arm encodes: the bench's defaults (batch 32, no prefixes, normalised, no remote code)."""

    batch_size: int = 32
    device: str | None = None
    query_prefix: str = ""
    passage_prefix: str = ""
    normalize: bool = True
    trust_remote_code: bool = False
    #: bytes one encode call's transient memory may take (an estimate: see `embed_batches`); None:
    #: the run's `--bench-embed-memory`. Not part of the model's identity: it changes only batches
    #: that the bench's would not fit
    memory_budget: int | None = None

    @property
    def budget(self) -> int:
        return self.memory_budget if self.memory_budget is not None else DEFAULT_MEMORY_BUDGET


def library_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def files_digest(root: Path) -> str | None:
    """sha256 over the names and bytes of a model's files (a file or a directory), None if absent."""
    if not root.exists():
        return None
    digest = hashlib.sha256()
    for path in sorted(p for p in ([root] if root.is_file() else root.rglob("*")) if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" if root.is_dir() else b"")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def wordllama_dir() -> Path | None:
    spec = importlib.util.find_spec(WORDLLAMA)
    return Path(spec.origin).parent if spec is not None and spec.origin else None


@functools.lru_cache(maxsize=None)
def weights_digest(model: str) -> str | None:
    """The digest of the weights an arm would load: wordllama's bundled file, a local model's files;
    None for a model named on a hub (its files are wherever the library keeps them). Read once per
    process: the identity, the vector key and the report all ask, and a model can be gigabytes."""
    if model == HASH:
        return "no weights"
    if model == WORDLLAMA:
        package = wordllama_dir()
        return files_digest(package / "weights" / "l2_supercat_256.safetensors") if package else None
    path = Path(model).expanduser()
    return files_digest(path) if path.exists() else None


class WordLlamaEmbedder:
    """wordllama's static embeddings (256 dimensions), normalised by wordllama itself when asked.

    wordllama pads a batch to its longest text and holds every padded token's vector twice (about
    2.1 kB a token), so a text whose cost alone exceeds the memory budget is pooled here instead,
    a block of tokens at a time, with wordllama's own tokenizer, table and arithmetic in wordllama's
    order: the same float32 vector to the bit, in a bounded amount of memory."""

    #: transient bytes per padded character (see `embed_batches.DEFAULT_BYTES_PER_CHAR`)
    bytes_per_char = DEFAULT_BYTES_PER_CHAR
    #: tokens pooled at a time for a text over the budget (about 50 MB of transient vectors)
    BLOCK_TOKENS = 16_384

    def __init__(self, model: Any, normalize: bool, memory_budget: int = DEFAULT_MEMORY_BUDGET):
        self.model, self.normalize, self.memory_budget = model, normalize, memory_budget
        self.dimension = int(model.embedding.shape[1])

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> Any:
        if (len(texts) == 1 and len(texts[0]) * self.bytes_per_char > self.memory_budget
                and not getattr(self.model, "binary", False)):
            return self.pooled_in_blocks(texts[0])[None, :]
        return self.model.embed(list(texts), norm=self.normalize, batch_size=batch_size)

    def pooled_in_blocks(self, text: str) -> np.ndarray:
        """`embed([text])[0]` without padding or the whole (tokens, dim) array: wordllama sums the
        masked token vectors one token after another in float32, so carrying the running sum from
        block to block adds in the same order and gives the same bits."""
        import numpy as np  # not at import: options read this module, and loading the plugin imports no numpy

        model = self.model
        encoded = model.tokenize([text])[0]
        ids = np.array(encoded.ids, dtype=np.int32)
        mask = np.array(encoded.attention_mask, dtype=np.float32)
        del encoded
        np.clip(ids, 0, model.embedding.shape[0] - 1, out=ids)
        total: np.ndarray | None = None
        for start in range(0, len(ids), self.BLOCK_TOKENS):
            block = model.embedding[ids[start:start + self.BLOCK_TOKENS]] * mask[start:start + self.BLOCK_TOKENS, np.newaxis]
            if total is not None:
                block = np.concatenate([total[np.newaxis, :], block])
            total = np.sum(block[np.newaxis], axis=1, dtype=np.float32)[0]
        if total is None:
            total = np.zeros(self.dimension, dtype=np.float32)
        count = np.maximum(mask.sum(keepdims=True), 1.0).astype(np.float32)
        vector = (total / count)[np.newaxis, :]
        if self.normalize:
            vector /= np.linalg.norm(vector, axis=1, keepdims=True)
        return vector[0]


class SentenceTransformerEmbedder:
    """As the bench's own: `normalize_embeddings` asks the library to normalise, numpy out, no bar."""

    def __init__(self, model: Any, normalize: bool):
        self.model, self.normalize = model, normalize
        # renamed in sentence-transformers 6 (the old name warns there)
        get_dimension = getattr(model, "get_embedding_dimension", None) or getattr(model, "get_sentence_embedding_dimension", None)
        self.dimension = get_dimension() if callable(get_dimension) else None

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> Any:
        return self.model.encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                                 normalize_embeddings=self.normalize, show_progress_bar=False)


def choose_device(asked: str | None) -> str:
    """The bench's rule: the device asked for, else `cuda` when torch sees one, else `cpu`."""
    if asked:
        return asked
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


def load_model(model: str, options: EmbedOptions) -> TextEmbedder:
    """The embedder of `embed:<model>`; RuntimeError saying what is missing or wrong."""
    if model == HASH:
        from pytest_retrieval_bench.arms.hashing_embedder import HashingEmbedder

        return HashingEmbedder(normalize=options.normalize)
    if model == WORDLLAMA:
        package = wordllama_dir()
        if package is None:
            raise RuntimeError("wordllama is not installed (pip install 'pytest-retrieval-bench[embed]')")
        from wordllama import WordLlama

        # the package's own folder as the cache: its default loader looks for the tokenizer elsewhere, then downloads
        loaded = WordLlama.load(cache_dir=package, disable_download=True)
        return WordLlamaEmbedder(loaded, options.normalize, options.budget)
    if importlib.util.find_spec("sentence_transformers") is None:
        raise RuntimeError(f"model {model!r} needs sentence-transformers (pip install 'pytest-retrieval-bench[sentence-transformers]')")
    from sentence_transformers import SentenceTransformer

    kwargs: dict[str, Any] = {"device": planned_device(model, options.device)}
    if options.trust_remote_code:
        kwargs["trust_remote_code"] = True
    try:
        loaded = SentenceTransformer(model, **kwargs)
    except Exception as error:  # the library's own errors for a bad path or name vary by version
        raise RuntimeError(f"model {model!r} could not be loaded: {type(error).__name__}: {error}") from None
    return SentenceTransformerEmbedder(loaded, options.normalize)


#: the dimension of a built-in model's vectors, known without loading it
BUILT_IN_DIMENSIONS = {HASH: 256, WORDLLAMA: 256}


def model_libraries(model: str) -> dict[str, str]:
    """The versions of the libraries `embed:<model>` runs on, read from their installed metadata
    (nothing imported), so every process reports the same whether or not it loaded the model."""
    if model == HASH:
        return {}
    if model == WORDLLAMA:
        return {WORDLLAMA: library_version(WORDLLAMA)}
    return {name: library_version(name) for name in ("sentence-transformers", "torch", "transformers")}


def planned_device(model: str, asked: str | None) -> str:
    """The device `embed:<model>` runs on: `load_model` loads a SentenceTransformers model there, and
    the report names it without loading anything (wordllama and `hash` run on the CPU)."""
    return "cpu" if model in (HASH, WORDLLAMA) else choose_device(asked)
