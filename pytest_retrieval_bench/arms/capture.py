"""Exact diagnostics for command arms: every invocation's stdout and stderr bytes in one JSONL file.

A report says what an arm answered; when a result looks wrong, the question is what the program
actually printed. The capture keeps those bytes, bounded, in a private file that is never
overwritten, and binds them with a footer (count, byte length and sha256 of everything before
it) so a reader can tell a complete capture from a cut one. A capture that cannot be kept
faithfully marks itself failed; the caller must then not publish the report (the file stays).

Lines are appended in memory by `record` and written by `flush`, so the caller can keep disk
writes outside an arm's measured time.
"""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from pathlib import Path
from typing import Any, Iterable, Sequence

import orjson

from pytest_retrieval_bench.errors import BenchError

PROFILE = "retrieval-bench-capture-v1"
#: seed 000's profile, used when the capture holds only the corvint-context preset (the seed's case)
CONTEXT_PROFILE = "corvint-retrieval-context-capture-v0"
CONTEXT_ARM = "corvint-context"
PROFILES = (PROFILE, CONTEXT_PROFILE)
MAX_INVOCATIONS = 1024
MAX_HEADER_BYTES = 1 << 20
MAX_RECORD_METADATA_BYTES = 64 << 10
MAX_STDOUT_BYTES = 8 << 20
MAX_STDERR_BYTES = 64 << 10
MAX_FILE_BYTES = 64 << 20
_FOOTER_RESERVE = 4096

COMPLETE, TRUNCATED, NOT_PRODUCED = "COMPLETE", "TRUNCATED", "NOT_PRODUCED"
PARSED, MALFORMED, NOT_RUN = "PARSED", "MALFORMED", "NOT_RUN"
PARSE_STATES = (PARSED, MALFORMED, NOT_RUN)
PHASES = ("ordinary", "cold", "hit")
LIMITS = {
    "invocations": MAX_INVOCATIONS,
    "header_bytes": MAX_HEADER_BYTES,
    "record_metadata_bytes": MAX_RECORD_METADATA_BYTES,
    "stdout_bytes": MAX_STDOUT_BYTES,
    "stderr_bytes": MAX_STDERR_BYTES,
    "file_bytes": MAX_FILE_BYTES,
}


class CaptureError(BenchError):
    """A capture destination was refused, or a capture file did not validate."""


def check_destination(path: Path, forbidden_roots: Iterable[Path] = ()) -> Path:
    """The absolute destination, or CaptureError: it must be new, symlink-free, outside the inputs."""
    absolute = Path(os.path.abspath(path))
    probe = Path(absolute.anchor)
    for part in absolute.parts[1:]:
        probe = probe / part
        if probe.is_symlink():
            raise CaptureError(f"capture path {path}: component {probe} is a symbolic link")
    if os.path.lexists(absolute):
        raise CaptureError(f"capture path {path} already exists; a capture is never overwritten")
    if not absolute.parent.is_dir():
        raise CaptureError(f"capture path {path}: directory {absolute.parent} does not exist")
    resolved = absolute.parent.resolve() / absolute.name
    for root in forbidden_roots:
        root_resolved = Path(root).resolve()
        if resolved == root_resolved or root_resolved in resolved.parents:
            raise CaptureError(f"capture path {path} is inside the input {root}; write it elsewhere")
    return absolute


def _line(value: dict[str, Any]) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS) + b"\n"


def _stream(data: bytes | None, total: int | None, limit: int) -> dict[str, Any]:
    """A stream field: the retained bytes, their count and digest, and whether that is all of it."""
    if data is None:
        return {"state": NOT_PRODUCED}
    total = len(data) if total is None else total
    kept = data[:limit]
    state = COMPLETE if total <= len(kept) else TRUNCATED
    return {"state": state, "bytes": len(kept), "produced_bytes": total, "sha256": hashlib.sha256(kept).hexdigest(),
            "base64": base64.b64encode(kept).decode("ascii")}


class CaptureWriter:
    """Writes one capture file: header now, a record per invocation, a footer at `close`."""

    def __init__(self, path: Path, registration: dict[str, Any], descriptors: Sequence[dict[str, Any]], forbidden_roots: Iterable[Path] = ()):
        self.path = check_destination(Path(path), forbidden_roots)
        self.failed = False
        self.failure_reason: str | None = None
        self.invocations = 0
        self.descriptor_arms = [str(descriptor.get("arm")) for descriptor in descriptors]
        if len(set(self.descriptor_arms)) != len(self.descriptor_arms):
            raise CaptureError("capture descriptors name an arm twice")
        self.profile = CONTEXT_PROFILE if self.descriptor_arms == [CONTEXT_ARM] else PROFILE
        header = _line({"kind": "header", "profile": self.profile, "registration": registration,
                        "descriptors": list(descriptors), "limits": LIMITS})
        if len(header) > MAX_HEADER_BYTES:
            raise CaptureError(f"capture header is {len(header)} bytes, above the {MAX_HEADER_BYTES}-byte limit")
        self._samples: dict[str, int] = {}
        self._pending: list[bytes] = []
        self._digest = hashlib.sha256()
        self._bytes = 0
        self._closed = False
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError as error:
            raise CaptureError(f"capture path {path} already exists; a capture is never overwritten") from error
        except OSError as error:
            raise CaptureError(f"capture path {path}: cannot create: {error.strerror or error}") from error
        if hasattr(os, "fchmod"):
            os.fchmod(self._fd, stat.S_IRUSR | stat.S_IWUSR)
        self._append(header)
        self.flush()

    def fail(self, reason: str) -> None:
        """Mark the capture failed (first reason wins); later records are dropped, the file is kept."""
        if not self.failed:
            self.failed, self.failure_reason = True, reason

    def record(self, *, sample_id: str, arm: str, task: str, stdout: bytes | None, stderr: bytes | None,
               parse_status: str, stdout_total: int | None = None, stderr_total: int | None = None,
               repo: str | None = None, base_commit: str | None = None, phase: str = "ordinary",
               exit_status: int | None = None, timed_out: bool = False) -> None:
        """Keep one invocation; `*_total` is how many bytes the program produced if more than given."""
        if self.failed or self._closed:
            return
        if self.invocations >= MAX_INVOCATIONS:
            self.fail(f"more than {MAX_INVOCATIONS} invocations")
            return
        if parse_status not in PARSE_STATES or phase not in PHASES or arm not in self.descriptor_arms:
            self.fail(f"invocation {self.invocations}: arm {arm!r} (phase {phase!r}, parse {parse_status!r}) has no descriptor or a bad label")
            return
        task_bytes = task.encode("utf-8", errors="surrogatepass")
        out = _stream(stdout, stdout_total, MAX_STDOUT_BYTES)
        err = _stream(stderr, stderr_total, MAX_STDERR_BYTES)
        entry: dict[str, Any] = {
            "kind": "record", "invocation": self.invocations, "sample_ordinal": self._samples.setdefault(sample_id, len(self._samples)),
            "sample_id": sample_id, "repo": repo, "base_commit": base_commit, "arm": arm, "phase": phase,
            "task": {"bytes": len(task_bytes), "sha256": hashlib.sha256(task_bytes).hexdigest()},
            "exit_status": exit_status, "timed_out": timed_out, "stdout": out, "stderr": err, "parse": parse_status,
        }
        if out["state"] == TRUNCATED:  # stdout is kept whole or not at all: the record is dropped
            self.fail(f"invocation {self.invocations}: stdout of {out['produced_bytes']} bytes exceeds {MAX_STDOUT_BYTES}")
            return
        metadata = len(_line({**entry, "stdout": {**out, "base64": ""}, "stderr": {**err, "base64": ""}}))
        if metadata > MAX_RECORD_METADATA_BYTES:
            self.fail(f"invocation {self.invocations}: record metadata is {metadata} bytes, above {MAX_RECORD_METADATA_BYTES}")
            return
        line = _line(entry)
        if self._bytes + len(line) > MAX_FILE_BYTES - _FOOTER_RESERVE:
            self.fail(f"invocation {self.invocations}: the capture would exceed {MAX_FILE_BYTES} bytes")
            return
        self._append(line)
        self.invocations += 1

    def flush(self) -> None:
        """Write pending lines to disk (call outside timed code)."""
        while self._pending and not self._closed:
            data = self._pending.pop(0)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view):]
            except OSError as error:
                self._pending.clear()
                self.fail(f"write failed: {error.strerror or error}")

    def close(self) -> None:
        """Write the footer (status PARTIAL after any failure) and close; safe to call twice."""
        if self._closed:
            return
        self.flush()
        self._pending.append(self._footer())
        self.flush()
        try:
            os.fsync(self._fd)
        except OSError as error:
            self.fail(f"sync failed: {error.strerror or error}")
        os.close(self._fd)
        self._closed = True

    def _footer(self) -> bytes:
        """The footer line; its `total_bytes` is the whole encoded file, this line included (seed 000),
        found by settling the number against the line's own length."""
        fields = {"kind": "footer", "invocations": self.invocations, "prior_sha256": self._digest.hexdigest(),
                  "status": "PARTIAL" if self.failed else COMPLETE, "failure": self.failure_reason}
        total = self._bytes
        while True:
            line = _line({**fields, "total_bytes": total})
            if self._bytes + len(line) == total:
                return line
            total = self._bytes + len(line)

    def _append(self, line: bytes) -> None:
        self._pending.append(line)
        self._digest.update(line)
        self._bytes += len(line)

    def __enter__(self) -> "CaptureWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def validate_capture(path: Path) -> dict[str, Any]:
    """Check sequence, descriptors, counts, digests, complete lines and no trailing bytes.

    Returns a summary (`status` is the footer's, or INCOMPLETE without a footer); raises
    CaptureError naming the line at fault.
    """
    data = Path(path).read_bytes()
    if not data:
        raise CaptureError(f"{path}: empty capture")
    if len(data) > MAX_FILE_BYTES:
        raise CaptureError(f"{path}: {len(data)} bytes, above the {MAX_FILE_BYTES}-byte limit")
    if not data.endswith(b"\n"):
        raise CaptureError(f"{path}: the last line is incomplete (no newline)")
    lines = data.split(b"\n")[:-1]
    rows = []
    for number, raw in enumerate(lines, start=1):
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            raise CaptureError(f"{path}:{number}: not JSON ({error})") from error
        if not isinstance(row, dict):
            raise CaptureError(f"{path}:{number}: not a JSON object")
        rows.append(row)
    header = rows[0]
    if header.get("kind") != "header" or header.get("profile") not in PROFILES:
        raise CaptureError(f"{path}:1: not a {' or '.join(PROFILES)} header")
    if len(lines[0]) + 1 > MAX_HEADER_BYTES or not isinstance(header.get("registration"), dict) or not isinstance(header.get("descriptors"), list):
        raise CaptureError(f"{path}:1: header without registration/descriptors, or above the size limit")
    arms = [d.get("arm") if isinstance(d, dict) else None for d in header["descriptors"]]
    if None in arms or len(set(arms)) != len(arms):
        raise CaptureError(f"{path}:1: descriptors must be objects naming distinct arms")
    samples: dict[str, int] = {}
    digest = hashlib.sha256(lines[0] + b"\n")
    footer: dict[str, Any] | None = None
    count = 0
    for number, (raw, row) in enumerate(zip(lines[1:], rows[1:]), start=2):
        if row.get("kind") == "footer":
            if number != len(lines):
                raise CaptureError(f"{path}:{number + 1}: trailing bytes after the footer")
            footer = row
            if row.get("invocations") != count or row.get("total_bytes") != len(data) or row.get("prior_sha256") != digest.hexdigest():
                raise CaptureError(f"{path}:{number}: footer does not match the preceding {count} invocations, their sha256 "
                                   f"and the file's {len(data)} bytes")
            if row.get("status") not in (COMPLETE, "PARTIAL"):
                raise CaptureError(f"{path}:{number}: footer status {row.get('status')!r}")
            continue
        _check_record(path, number, row, count, arms, samples)
        count += 1
        digest.update(raw + b"\n")
    return {"profile": header["profile"], "status": footer["status"] if footer else "INCOMPLETE", "invocations": count,
            "total_bytes": len(data), "arms": arms, "failure": footer.get("failure") if footer else None}


def _check_record(path: Path, number: int, row: dict[str, Any], count: int, arms: list[Any], samples: dict[str, int]) -> None:
    where = f"{path}:{number}"
    if row.get("kind") != "record" or row.get("invocation") != count:
        raise CaptureError(f"{where}: expected record {count}, got {row.get('kind')!r} {row.get('invocation')!r}")
    if row.get("arm") not in arms:
        raise CaptureError(f"{where}: arm {row.get('arm')!r} has no descriptor")
    sample = row.get("sample_id")
    if row.get("sample_ordinal") != samples.setdefault(sample, len(samples)):
        raise CaptureError(f"{where}: sample ordinal {row.get('sample_ordinal')!r} out of sequence")
    if row.get("parse") not in PARSE_STATES or row.get("phase") not in PHASES:
        raise CaptureError(f"{where}: bad parse status or phase")
    for name in ("stdout", "stderr"):
        stream = row.get(name)
        if not isinstance(stream, dict) or stream.get("state") not in (COMPLETE, TRUNCATED, NOT_PRODUCED):
            raise CaptureError(f"{where}: {name} has no valid state")
        if stream["state"] == NOT_PRODUCED:
            if set(stream) != {"state"}:
                raise CaptureError(f"{where}: {name} is NOT_PRODUCED but carries a payload")
            continue
        try:
            payload = base64.b64decode(stream.get("base64", ""), validate=True)
        except (ValueError, TypeError) as error:
            raise CaptureError(f"{where}: {name} payload is not base64") from error
        if len(payload) != stream.get("bytes") or hashlib.sha256(payload).hexdigest() != stream.get("sha256"):
            raise CaptureError(f"{where}: {name} payload does not match its byte count or sha256")
        if (stream["state"] == COMPLETE) != (stream.get("produced_bytes") == len(payload)):
            raise CaptureError(f"{where}: {name} state {stream['state']} disagrees with produced_bytes")
        if name == "stdout" and stream["state"] == TRUNCATED:
            raise CaptureError(f"{where}: stdout is TRUNCATED; a capture keeps stdout COMPLETE or NOT_PRODUCED")
    if row["parse"] == PARSED and row["stdout"]["state"] != COMPLETE:
        raise CaptureError(f"{where}: PARSED without complete stdout")
