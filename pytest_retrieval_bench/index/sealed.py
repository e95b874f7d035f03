"""One format for the small records a run keeps beside its cache (file digests, read receipts, a
release's unpack record): a magic line naming the kind and version, the sha256 of the body, the body.
A record whose magic or checksum does not match is never believed."""

from __future__ import annotations

import hashlib


def seal(magic: bytes, body: bytes) -> bytes:
    return magic + hashlib.sha256(body).hexdigest().encode() + b"\n" + body


def unseal(magic: bytes, data: bytes) -> bytes:
    """The body of a record sealed with `magic`; ValueError when it is not one, or was changed."""
    if not data.startswith(magic):
        raise ValueError("bad magic")
    checksum, _, body = data[len(magic):].partition(b"\n")
    if hashlib.sha256(body).hexdigest().encode() != checksum:
        raise ValueError("checksum mismatch")
    return body
