"""Write tests/fixtures/arb_reference/embedding.json: what the bench's own `evaluate_embedding_baseline`
returns for the bundled release with the `embed:hash` embedder (see that folder's README).

    python benchmarks/make_embedding_fixture.py --bench-src CHECKOUT [--out PATH]

CHECKOUT is a checkout of the bench's repository; its `src/` is put on sys.path (the bench is an
oracle here, never a dependency of the plugin). Needs numpy, as the bench's float32 ranking does.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "testdata" / "release"


def hashing_embedder() -> object:
    """The plugin's `HashingEmbedder`, loaded from its file alone (it needs only numpy)."""
    path = ROOT / "pytest_retrieval_bench" / "arms" / "hashing_embedder.py"
    spec = importlib.util.spec_from_file_location("hashing_embedder", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.HashingEmbedder()


def plain_release(scratch: Path) -> Path:
    """A copy of the bundled release with its zstd chunk file decompressed (the bench reads plain JSONL)."""
    import zstandard

    release = scratch / "release"
    shutil.copytree(RELEASE, release)
    manifest = release / "corpus" / "synthetic_v1" / "corpus_manifest.jsonl"
    rows = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["chunks_path"].endswith(".zst"):
            packed = release / row["chunks_path"]
            row["chunks_path"] = row["chunks_path"][:-len(".zst")]
            (release / row["chunks_path"]).write_bytes(zstandard.ZstdDecompressor().stream_reader(packed.read_bytes()).read())
    manifest.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows), encoding="utf-8")
    return release


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-src", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "arb_reference" / "embedding.json")
    args = parser.parse_args()
    sys.path.insert(0, str(args.bench_src / "src"))
    from agent_retrieval_bench.embedding_eval import evaluate_embedding_baseline

    with tempfile.TemporaryDirectory() as scratch:
        release = plain_release(Path(scratch))
        os.chdir(release)  # the manifest's chunks_path is relative to the release root, and the bench opens it as given
        details = release / "details.jsonl"
        result = evaluate_embedding_baseline([release / "benchmark" / "synthetic_v1" / "samples.jsonl"], release / "corpus" / "synthetic_v1",
                                             model_name="hash", details_path=details, embedder=hashing_embedder())
        rows = [json.loads(line) for line in details.read_text(encoding="utf-8").splitlines()]
        os.chdir(ROOT)
    commit = subprocess.run(["git", "-C", str(args.bench_src), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    document = {"generated_by": "benchmarks/make_embedding_fixture.py", "upstream_commit": commit, "model": "embed:hash",
                "skipped": result["skipped"],
                "samples": {row["sample_id"]: {"top_files": row["top_files"], "metrics": row["metrics"]} for row in rows}}
    args.out.write_text(json.dumps(document, sort_keys=True, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(rows)} samples written to {args.out}")


if __name__ == "__main__":
    main()
