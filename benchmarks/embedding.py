"""Figures for the embedding arms on real ARB rows, beside the bench's own `evaluate_embedding_baseline`.

    python benchmarks/embedding.py --corpus CORPUS_DIR --samples SAMPLES.jsonl --bench-src CHECKOUT \\
        [--model hash|wordllama|SENTENCE_TRANSFORMERS_MODEL] [--bench-cache shared|none] [--quality]

CHECKOUT is a checkout of eyuansu62/agent-retrieval-bench (its `src/` goes on sys.path; an oracle, never
a dependency). One embedder object serves both sides: the plugin runs in this process (`pytest.main`)
with that object declared as a user's embedding arm, and the bench gets it as `embedder=`. The object
is wrapped to add up the seconds spent in its own `encode`.

Printed, all measured in this run (ratios, not targets asserted):

- parity: for every sample the bench ranked, whether the plugin's ranking is the bench's `top_files`
  (given files removed, as the plugin scores; `release_runs.same_top`) and, for samples without given
  files, whether recall@5/10/20, precision@5/10/20 and MRR (when the first gold file is in the top k)
  are the bench's; a plugin record that is an error, or none at all, counts as a disagreement;
- cold: the plugin's wall time (a new vector cache) against the bench's (a new vector cache and
  shared text cache, as `arb eval-embedding --version` runs, or with `--bench-cache none` no cache),
  and the plugin's time over the embedder's own encode time in that run. The plugin encodes as the
  bench's shared text cache does (distinct texts, the same windows), so for a model whose vectors
  depend on their batch (a SentenceTransformers one) parity is exact against the shared mode;
- warm: the same run again on the filled cache, and cold/warm;
- reuse: for each repository at two commits, the chunks of the second commit encoded anew, beside
  the chunks whose text the first commit lacks (the least a cache can encode);
- with `--quality`: recall@20, MRR@k and BCY@8k of the embedding arm beside bm25:all, arb-lexical
  and arb-repomap, means over the positive samples (a plugin run of those arms).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

import pytest

from pytest_retrieval_bench import embedding_arm
from pytest_retrieval_bench.arms.embedders import EmbedOptions, load_model
from pytest_retrieval_bench.arms.embedding import EmbeddingArm, chunk_text
from release_runs import same_top


class TimedEmbedder:
    """The embedder both sides use, adding up the seconds of its own `encode` calls."""

    def __init__(self, inner: Any, model_name: str):
        self.inner, self.model_name, self.seconds, self.texts = inner, model_name, 0.0, 0

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> Any:
        started = time.perf_counter()
        try:
            return self.inner.encode(texts, batch_size=batch_size)
        finally:
            self.seconds += time.perf_counter() - started
            self.texts += len(texts)


class Arms:
    """A pytest plugin object declaring the shared embedder as an arm, and hearing each snapshot's encoding."""

    def __init__(self, embedder: TimedEmbedder):
        self.arm: EmbeddingArm = embedding_arm("dense", embedder)
        self.encoded: dict[str, tuple[int, int]] = {}
        self.arm.on_encoded = lambda _arm, key, texts, encoded, _seconds: self.encoded.__setitem__(key, (texts, encoded))

    def pytest_retrieval_bench_arms(self, config: Any) -> list[Any]:
        return [self.arm]


def plugin_run(samples: Path, corpus: Path, cache: Path, arms: str, report: Path, plugin: Any = None) -> float:
    args = [f"--bench-samples={samples}", f"--bench-corpus={corpus}", f"--bench-arms={arms}", f"--bench-cache-dir={cache}",
            f"--bench-report={report}", "--bench-replace-registration", "-p", "no:cacheprovider", "-q", "-p", "no:randomly"]
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = pytest.main(args, plugins=[plugin] if plugin is not None else [])
    seconds = time.perf_counter() - started
    if code not in (0, 1):
        raise SystemExit(f"the plugin run failed (exit {code}): {' '.join(args)}")
    return seconds


def records(report: Path, arm: str) -> dict[str, dict[str, Any]]:
    data = json.loads(report.read_text())
    return {entry["id"]: {**entry["arms"][arm], "given": entry["given"]} for entry in data["details"] if arm in entry["arms"]}


def parity(found: dict[str, dict[str, Any]], details: list[dict[str, Any]]) -> tuple[int, int, int, int]:
    """(rankings equal, rankings compared, samples whose metrics are all equal, samples compared), over every
    sample the bench ranked: a plugin record that is an error, or no plugin record, is a disagreement in both
    (its given files unknown when there is no record, it counts among the metric comparisons too)."""
    same = compared = metric_same = metric_compared = 0
    for detail in details:
        record = found.get(detail["sample_id"])
        compared += 1
        if record is None or record["error"]:
            metric_compared += record is None or not record["given"]
            continue
        given = set(record["given"])
        same += same_top(detail["top_files"], record["ranking"], given)
        if given:
            continue
        metric_compared += 1
        theirs, ours = detail["metrics"], record["metrics"]
        pairs = [(ours[f"{name.lower()}@{k}"], theirs[f"{name}@{k}"]) for name in ("Recall", "Precision") for k in (5, 10, 20)]
        if record["rank_of_first_gold"] is not None:
            pairs.append((ours["mrr@k"], theirs["MRR"]))
        metric_same += all(abs(a - b) <= 1e-6 for a, b in pairs)
    return same, compared, metric_same, metric_compared


def changed_chunks(corpus: Path, order: list[str]) -> dict[str, tuple[str, int, int]]:
    """For each repository at two commits: (the commit set up second, its chunks, those whose text the
    first lacks: the least a cache can encode)."""
    manifest = [json.loads(line) for line in (corpus / "corpus_manifest.jsonl").read_text().splitlines() if line.strip()]
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in manifest:
        by_repo[row["repo"]].append(row)
    out: dict[str, tuple[str, int, int]] = {}
    for repo, rows in by_repo.items():
        keys = [f"{repo}@{row['base_commit']}" for row in rows]
        if len(rows) != 2 or not set(keys) <= set(order):
            continue
        rows.sort(key=lambda row: order.index(f"{repo}@{row['base_commit']}"))
        texts = []
        for row in rows:
            path = Path(row["chunks_path"])
            path = path if path.is_absolute() else corpus.parent / path
            texts.append([chunk_text(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()])
        first = set(texts[0])
        out[repo] = (f"{repo}@{rows[1]['base_commit']}", len(texts[1]), sum(text not in first for text in texts[1]))
    return out


def quality(samples: Path, corpus: Path, cache: Path, model: str, scratch: Path) -> None:
    arms = [f"embed:{model}", "bm25:all", "arb-lexical", "arb-repomap"]
    report = scratch / "quality.json"
    plugin_run(samples, corpus, cache, ",".join(arms), report)
    print("quality (means over the positive samples):")
    print(f"  {'arm':<18} {'n':>3} {'recall@20':>10} {'mrr@k':>8} {'bcy@8k':>8}")
    for arm in arms:
        rows = [record["metrics"] for record in records(report, arm).values() if record["metrics"].get("recall@20") is not None]
        n = len(rows)
        mean = lambda key: sum(row.get(key, 0.0) for row in rows) / n if n else float("nan")  # noqa: E731
        print(f"  {arm:<18} {n:>3} {mean('recall@20'):>10.3f} {mean('mrr@k'):>8.3f} {mean('bcy@8000'):>8.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--samples", type=Path, required=True)
    parser.add_argument("--bench-src", type=Path, required=True)
    parser.add_argument("--model", default="hash", help="hash, wordllama or a SentenceTransformers model's path or name (default hash)")
    parser.add_argument("--bench-cache", choices=("shared", "none"), default="shared",
                        help="the bench's caches: shared (a vector cache and shared text cache, the --version default) or none")
    parser.add_argument("--quality", action="store_true")
    args = parser.parse_args(argv)
    corpus, samples = args.corpus.resolve(), args.samples.resolve()
    sys.path.insert(0, str(args.bench_src / "src"))
    from agent_retrieval_bench.embedding_eval import evaluate_embedding_baseline

    embedder = TimedEmbedder(load_model(args.model, EmbedOptions()), args.model)
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        arms = Arms(embedder)
        cold = plugin_run(samples, corpus, scratch / "cache", "dense", scratch / "cold.json", arms)
        cold_encode, cold_texts = embedder.seconds, embedder.texts
        encoded_cold = dict(arms.encoded)
        embedder.seconds = embedder.texts = 0
        warm = plugin_run(samples, corpus, scratch / "cache", "dense", scratch / "warm.json", Arms(embedder))
        warm_texts = embedder.texts
        embedder.seconds = embedder.texts = 0
        here = os.getcwd()
        os.chdir(corpus.parent)  # the manifest's chunks_path is relative to the corpus's parent, and the bench opens it as given
        try:
            started = time.perf_counter()
            caches = ({"cache_dir": scratch / "bench-vectors", "shared_text_cache": scratch / "bench-shared.sqlite"}
                      if args.bench_cache == "shared" else {})
            result = evaluate_embedding_baseline([samples], corpus, model_name=args.model, details_path=scratch / "bench.jsonl", embedder=embedder,
                                                 **caches)
            bench = time.perf_counter() - started
        finally:
            os.chdir(here)
        details = [json.loads(line) for line in (scratch / "bench.jsonl").read_text().splitlines()]
        print(f"model {args.model}; the bench's caches: {args.bench_cache}; samples {samples.name}: bench evaluated {result['evaluated']}, skipped {result['skipped']}")
        for label, report in (("cold", scratch / "cold.json"), ("warm", scratch / "warm.json")):
            same, compared, metric_same, metric_compared = parity(records(report, "dense"), details)
            print(f"parity ({label} run): rankings equal {same}/{compared}; metrics equal {metric_same}/{metric_compared} (samples without given files)")
        split = json.loads((scratch / "cold.json").read_text()).get("embedding_models", {}).get("dense", {}).get("batches_split", [])
        print(f"cold run: {len(split)} snapshots had batches split to fit the encoder memory budget "
              f"({sum(entry['batches'] for entry in split)} batches; the bench's own batches elsewhere)")
        print(f"cold: plugin {cold:.2f} s, bench {bench:.2f} s (bench's encode {embedder.seconds:.2f} s), bench/plugin {bench / cold:.2f}")
        print(f"cold: the embedder's own encode time in the plugin run {cold_encode:.2f} s ({cold_texts:,} texts); "
              f"plugin wall / encode = {cold / cold_encode:.3f} (overhead {100 * (cold / cold_encode - 1):.1f}%)")
        print(f"warm: plugin {warm:.2f} s ({warm_texts:,} texts encoded: the queries), cold/warm {cold / warm:.1f}x")
        for repo, (key, total, changed) in changed_chunks(corpus, list(encoded_cold)).items():
            texts, encoded = encoded_cold.get(key, (total, -1))
            print(f"reuse: {key}: {encoded:,} of {texts:,} chunks encoded anew ({100 * encoded / max(texts, 1):.1f}%); "
                  f"{changed:,} have a text the other commit lacks ({100 * changed / max(total, 1):.1f}%)")
        if args.quality:
            quality(samples, corpus, scratch / "cache", args.model, scratch)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
