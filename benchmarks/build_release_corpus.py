"""Build an Agent Retrieval Bench release-format chunk corpus from local git repositories.

The benchmarks need real release corpora (`OWNER__NAME/COMMIT.chunks.jsonl` plus a
`corpus_manifest.jsonl`), and the bench's own builder is the only faithful way to make them:
its file filters, symbol regexes, truncation and chunk ids are what a published release holds.
So this script imports `agent_retrieval_bench.corpus.build_commit_chunks` and runs it once per
distinct (repo, base_commit) of the samples. Run it with the Python of an environment where
the bench is installed; nothing in `pytest_retrieval_bench` imports it.

    python benchmarks/build_release_corpus.py --samples SAMPLES.jsonl --repos MIRRORS \\
        --out CORPUS_DIR [--samples-out BUILT.jsonl] [--verify OWNER/NAME@COMMIT]

The bench's builder starts one `git show` per blob, which dominates its run time on large
trees. Its blob reader is swapped, for the duration of the build, for one long-lived
`git cat-file --batch` process per repository that returns the same bytes; anything that is
not a plain blob (a missing or quoted path, a tree, a submodule) still goes through the
bench's own reader, so the output does not depend on the swap. `--verify` rebuilds the named
snapshots with the unswapped builder and fails unless the chunk files are byte-identical.

Repositories are found by name under each `--repos DIR` as `OWNER+NAME`, `OWNER__NAME` or
`OWNER/NAME`, each a bare repository, a work tree, or a directory holding either as `repo/`;
`--repo OWNER/NAME=PATH` names one explicitly. A snapshot whose repository or commit cannot be
found is skipped and reported, and its samples are left out of `--samples-out`.

Each chunk file is built in a scratch directory inside the corpus and renamed into place, so an
interrupted run never leaves a short chunk file; a rerun reuses the finished snapshots listed in
the manifest. Manifest rows are the builder's own, with `chunks_path` as `OUT/OWNER__NAME/...`
as given on the command line (the bench's evaluators open that path from the working
directory; the plugin finds the file by its layout). A JSON summary is printed on stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any, Callable, Iterator

from agent_retrieval_bench import __version__ as ARB_VERSION
from agent_retrieval_bench import corpus as arb_corpus
from agent_retrieval_bench.io import repo_slug

MANIFEST = "corpus_manifest.jsonl"
_HEADER = re.compile(rb"^[0-9a-f]{40,64} (?P<type>[a-z]+) (?P<size>[0-9]+)\n$")

Snapshot = tuple[str, str]


class CatFileReader:
    """One `git cat-file --batch` process for a repository: a blob costs a pipe round trip, not a fork."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._process = subprocess.Popen(
            ["git", "-C", str(git_dir), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def blob(self, spec: str) -> bytes | None:
        """The blob's bytes, or None when `spec` is not a plain blob (missing, tree, commit)."""
        if "\n" in spec:
            return None
        stdin: IO[bytes] = self._process.stdin  # type: ignore[assignment]
        stdout: IO[bytes] = self._process.stdout  # type: ignore[assignment]
        stdin.write(spec.encode("utf-8", errors="surrogateescape") + b"\n")
        stdin.flush()
        header = stdout.readline()
        if not header:
            raise RuntimeError(f"git cat-file --batch in {self.git_dir} exited")
        match = _HEADER.match(header)
        if match is None:  # "<spec> missing" / "<spec> ambiguous": no body follows
            return None
        size = int(match.group("size"))
        body = stdout.read(size)
        stdout.read(1)  # the LF after every object
        if len(body) != size:
            raise RuntimeError(f"git cat-file --batch in {self.git_dir} returned a short object for {spec!r}")
        return body if match.group("type") == b"blob" else None

    def close(self) -> None:
        if self._process.stdin:
            self._process.stdin.close()
        self._process.wait()


@contextlib.contextmanager
def cat_file_blobs() -> Iterator[None]:
    """Swap the bench's per-blob `git show` for cat-file readers while the block runs.

    The replacement applies the bench's own rules to the bytes (a NUL byte or no bytes gives
    "", else UTF-8 with replacement characters) and defers to the original reader for every
    spec that is not a plain blob, so its result equals the original's.
    """
    original: Callable[[Path, str, str], str] = arb_corpus._git_blob
    readers: dict[str, CatFileReader] = {}

    def read_blob(repo_path: Path, commit: str, path: str) -> str:
        key = str(repo_path)
        if key not in readers:
            readers[key] = CatFileReader(repo_path)
        data = readers[key].blob(f"{commit}:{path}")
        if data is None:
            return original(repo_path, commit, path)
        if b"\x00" in data:
            return ""
        return data.decode("utf-8", errors="replace")

    arb_corpus._git_blob = read_blob  # type: ignore[assignment]
    try:
        yield
    finally:
        arb_corpus._git_blob = original  # type: ignore[assignment]
        for reader in readers.values():
            reader.close()


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def _git_dir_in(candidate: Path) -> Path | None:
    for path in (candidate, candidate / ".git", candidate / "repo"):
        if path.is_dir() and _is_git_dir(path):
            return path
        if path.is_dir() and (path / ".git").exists():
            return path
    return None


def find_repository(repo: str, roots: list[Path], explicit: dict[str, Path]) -> Path | None:
    """Where `owner/name` lives: an explicit mapping first, then each root by the usual spellings."""
    if repo in explicit:
        return _git_dir_in(explicit[repo])
    owner, _, name = repo.partition("/")
    for root in roots:
        for candidate in (root / f"{owner}+{name}", root / f"{owner}__{name}", root / owner / name):
            found = _git_dir_in(candidate)
            if found is not None:
                return found
    return None


def has_commit(git_dir: Path, commit: str) -> bool:
    result = subprocess.run(
        ["git", "-C", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return result.returncode == 0


def read_samples(paths: list[Path]) -> list[tuple[str, Snapshot | None]]:
    """Every non-blank line of the samples files with its snapshot (None when a field is missing)."""
    lines: list[tuple[str, Snapshot | None]] = []
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                row = json.loads(line)
                repo, commit = row.get("repo"), row.get("base_commit")
                key = (repo, commit) if isinstance(repo, str) and isinstance(commit, str) else None
                lines.append((line if line.endswith("\n") else line + "\n", key))
    return lines


def read_manifest(out_dir: Path) -> dict[Snapshot, dict[str, Any]]:
    path = out_dir / MANIFEST
    rows: dict[Snapshot, dict[str, Any]] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows[(row["repo"], row["base_commit"])] = row
    return rows


def write_atomic(path: Path, text: str) -> None:
    """Write beside the target and rename, so a reader never sees half a file."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def write_manifest(out_dir: Path, rows: dict[Snapshot, dict[str, Any]]) -> None:
    text = "".join(json.dumps(rows[key], ensure_ascii=False, sort_keys=True) + "\n" for key in sorted(rows))
    write_atomic(out_dir / MANIFEST, text)


def build_snapshot(repo: str, commit: str, git_dir: Path, out_dir: Path, limits: dict[str, int], fast: bool) -> dict[str, Any]:
    """Run the bench's builder into a scratch directory, then move the chunk file into place."""
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=out_dir))
    try:
        with cat_file_blobs() if fast else contextlib.nullcontext():
            row = arb_corpus.build_commit_chunks(repo=repo, base_commit=commit, bare_repo=git_dir, out_dir=scratch, **limits)
        built = Path(row["chunks_path"])
        final = out_dir / repo_slug(repo) / built.name
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(built, final)
        row["chunks_path"] = str(final)
        return row
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def verify_snapshot(repo: str, commit: str, git_dir: Path, built: Path, limits: dict[str, int]) -> bool:
    """Rebuild with the bench's unswapped reader and compare the chunk files byte for byte."""
    with tempfile.TemporaryDirectory(prefix="arb-verify-") as scratch:
        row = arb_corpus.build_commit_chunks(repo=repo, base_commit=commit, bare_repo=git_dir, out_dir=Path(scratch), **limits)
        return filecmp.cmp(row["chunks_path"], built, shallow=False)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, action="append", required=True, help="bench samples JSONL (repeatable)")
    parser.add_argument("--repos", type=Path, action="append", default=[], help="directory of repositories named OWNER+NAME, OWNER__NAME or OWNER/NAME (repeatable)")
    parser.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=PATH", help="one repository's location (repeatable)")
    parser.add_argument("--out", type=Path, required=True, help="the corpus directory to write")
    parser.add_argument("--samples-out", type=Path, help="write the samples rows whose snapshot was built here")
    parser.add_argument("--verify", action="append", default=[], metavar="OWNER/NAME@COMMIT", help="also build this snapshot with the unswapped builder and require identical bytes (repeatable)")
    parser.add_argument("--slow", action="store_true", help="use the bench's own per-blob reader throughout")
    parser.add_argument("--max-file-bytes", type=int, default=400_000)
    parser.add_argument("--max-chunk-chars", type=int, default=8_000)
    parser.add_argument("--max-files-per-commit", type=int, default=20_000)
    args = parser.parse_args(argv)
    if not args.repos and not args.repo:
        parser.error("give --repos DIR or --repo OWNER/NAME=PATH")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    explicit = {name: Path(path) for name, _, path in (item.partition("=") for item in args.repo)}
    limits = {
        "max_file_bytes": args.max_file_bytes,
        "max_chunk_chars": args.max_chunk_chars,
        "max_files_per_commit": args.max_files_per_commit,
    }
    lines = read_samples(args.samples)
    snapshots = sorted({key for _, key in lines if key is not None})
    out_dir: Path = args.out
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(out_dir)
    built: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []

    for repo, commit in snapshots:
        previous = manifest.get((repo, commit))
        if previous and previous.get("status") == "ok" and (out_dir / repo_slug(repo) / f"{commit}.chunks.jsonl").is_file():
            built.append({**previous, "reused": True})
            continue
        git_dir = find_repository(repo, args.repos, explicit)
        if git_dir is None:
            skipped.append({"repo": repo, "base_commit": commit, "reason": "repository not found"})
            continue
        if not has_commit(git_dir, commit):
            skipped.append({"repo": repo, "base_commit": commit, "reason": f"commit not in {git_dir}"})
            continue
        started = time.monotonic()
        row = build_snapshot(repo, commit, git_dir, out_dir, limits, fast=not args.slow)
        manifest[(repo, commit)] = row
        write_manifest(out_dir, manifest)
        built.append({**row, "seconds": round(time.monotonic() - started, 2)})
        print(f"built {repo}@{commit[:12]}: {row['file_count']} files, {row['chunk_count']} chunks", file=sys.stderr)

    # Keep the manifest to the snapshots of these samples that exist.
    wanted = {(row["repo"], row["base_commit"]) for row in built}
    manifest = {key: row for key, row in manifest.items() if key in wanted}
    write_manifest(out_dir, manifest)

    verified: dict[str, bool] = {}
    for item in args.verify:
        repo, _, commit = item.partition("@")
        git_dir = find_repository(repo, args.repos, explicit)
        chunk_file = out_dir / repo_slug(repo) / f"{commit}.chunks.jsonl"
        if git_dir is None or not chunk_file.is_file():
            verified[item] = False
            continue
        verified[item] = verify_snapshot(repo, commit, git_dir, chunk_file, limits)

    if args.samples_out is not None:
        write_atomic(args.samples_out, "".join(line for line, key in lines if key in wanted))

    summary = {
        "arb_version": ARB_VERSION,
        "corpus": str(out_dir),
        "snapshots": [{key: row.get(key) for key in ("repo", "base_commit", "file_count", "symbol_count", "chunk_count", "skipped_large", "seconds", "reused") if key in row} for row in built],
        "skipped": skipped,
        "samples_built": sum(1 for _, key in lines if key in wanted),
        "samples_total": len(lines),
        "verified_identical": verified,
    }
    print(json.dumps(summary, indent=2))
    return 0 if all(verified.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
