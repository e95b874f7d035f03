"""`embed:hash`: a deterministic embedder with no weights (feature hashing of word tokens).

It exists so the dense path can be run and checked anywhere, offline and in CI: a smoke arm, and
the embedder the parity check against the bench's `evaluate_embedding_baseline` uses (the same
object on both sides). Only the standard library and numpy, so a script can load it on its own.
Its quality is not the point; each vector depends on its text alone, never on its batch.
"""

from __future__ import annotations

import hashlib
import re
from typing import Sequence

import numpy as np

TOKEN = re.compile(r"[A-Za-z0-9_]+")


class HashingEmbedder:
    """Each lower-cased word token adds +-1 to one of `dimension` buckets; rows L2-normalised."""

    model_name = "hash"
    #: nothing is padded: a text's cost is its own, whatever its batch (no batch is ever split)
    bytes_per_char = 0

    def __init__(self, dimension: int = 256, normalize: bool = True):
        self.dimension, self.normalize = dimension, normalize

    def vector(self, text: str) -> np.ndarray:
        out = np.zeros(self.dimension, dtype=np.float32)
        for token in TOKEN.findall(text.lower()):
            value = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
            out[value % self.dimension] += 1.0 if (value >> 32) & 1 else -1.0
        norm = float(np.sqrt(np.dot(out, out)))
        return out / np.float32(norm) if self.normalize and norm > 0 else out

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        return np.stack([self.vector(text) for text in texts]) if len(texts) else np.zeros((0, self.dimension), np.float32)
