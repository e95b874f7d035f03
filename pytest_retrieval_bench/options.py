"""Command-line options and ini keys, parsed once into a frozen `Settings`.

Every option is also an ini key (`--bench-limit` <-> `bench_limit`); the command line wins.
Paths from the command line are relative to the invocation directory, from ini to the rootdir.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from pytest_retrieval_bench.arms.deadline import DEFAULT_ARM_TIMEOUT
from pytest_retrieval_bench.arms.embed_batches import DEFAULT_MEMORY_BUDGET
from pytest_retrieval_bench.arms.embedders import EmbedOptions
from pytest_retrieval_bench.history import DEFAULT_STORAGE
from pytest_retrieval_bench.shard import parse_shard


# (option, kind, help); kind: "paths" (repeatable), "path", "str", "list" (repeatable, comma-split), "int", "flag"
OPTIONS: tuple[tuple[str, str, str], ...] = (
    ("samples", "paths", "Samples file: .jsonl, .jsonl.zst or a release .tar.zst (repeatable). Without it the plugin stays out of the way."),
    ("corpus", "paths", "Release corpus directory (manifest or OWNER__NAME/COMMIT.chunks.jsonl[.zst]) (repeatable)."),
    ("snapshot", "list-raw", "OWNER/NAME@COMMIT=PATH: a directory or clean git worktree for one snapshot (repeatable)."),
    ("repos", "path", "Directory of git repositories named OWNER__NAME, OWNER+NAME or OWNER/NAME (bare or not)."),
    ("arms", "list", "Arms to run, comma-separated or repeated (aliases: lexical, bm25, arb). Default: the six lexical built-ins (arb-repomap and other arms only when named)."),
    ("fuse", "list-raw", "NAME=ARM[*WEIGHT],ARM[*WEIGHT]...[:k=K]: add arm NAME, the reciprocal rank fusion of those arms' rankings (repeatable; k defaults to 60)."),
    ("limit", "int", "k: ranking length scored (1..50, default 20)."),
    ("arm-timeout", "str", "Seconds a Python or fixture arm may take on one item before the item is an error (default 300; 0: no limit)."),
    ("report", "path", "Write the canonical JSON report here (and REPORT.registration.json before any arm runs)."),
    ("registration", "path", "Write the registration here instead of REPORT.registration.json: a new file, created exclusively before any arm runs."),
    ("snapshot-latency", "flag", "Matched snapshot latency: per item a cold call (snapshot store moved aside) and a hit call that must agree, "
                                 "for arms that declare an index step and a snapshot store (corvint-context)."),
    ("replace-registration", "flag", "Replace an existing registration sidecar that differs from this run's, also in a run of part of "
                                     "the bench (a run of the whole selection replaces it by itself)."),
    ("task-type", "str", "Only samples of this task type."),
    ("max-samples", "int", "Only the first N samples by id (after --bench-task-type)."),
    ("fold-map", "path", 'JSON {"owner/name": "A"|"B"}: each sample\'s partition; adds fold: groups.'),
    ("baseline-arms", "list", "Arms the others are paired against (default: the six lexical built-ins and arb-repomap; aliases expand)."),
    ("cache-dir", "path", "Index cache directory (default: retrieval-bench/ in pytest's cache directory)."),
    ("no-cache", "flag", "Do not read or write the index cache."),
    ("baseline", "path", "A baseline report to pair this run with by sample id and arm (typically the main branch's)."),
    ("gate", "list-raw", "Gate rule [noninferior:|noregression:]METRIC>=THRESHOLD[:arm=NAME][:group=GROUP] on the paired bootstrap "
                         "interval of run - baseline: noninferior (the default) fails unless its lower bound is >= THRESHOLD, "
                         "noregression fails only when its upper bound is below THRESHOLD; METRIC a ranking metric (recall@10) "
                         "or, with agents, a trajectory metric (final_file_f1) (repeatable)."),
    ("fail-regressed", "flag", "Fail each item whose sample regressed against the baseline (a hit became a miss, a rank fell)."),
    ("update-baseline", "flag", "Write this run to the --bench-baseline path: its arms replace the baseline's, whose other arms are kept "
                                "(refused when an arm errored or the run is partial)."),
    ("markdown", "path", "Write the summary, paired and baseline tables as GitHub-flavoured Markdown here."),
    ("html", "path", "Write the report as one self-contained HTML page here (plots, tables, per-sample view; opens offline)."),
    ("table", "list", "Summary groups printed in the terminal: all, task, stratum, repo, fold, or exact group names (default: all)."),
    ("command-arm", "list-raw", "NAME=JSON: a command arm with the fields of [tool.retrieval-bench.arms.NAME] (repeatable)."),
    ("trajectories", "list-raw", "NAME=FILE: add arm NAME, the trajectories recorded in FILE (the bench's eval-trajectories JSONL) replayed and "
                                 "scored without running anything (repeatable)."),
    ("capture", "path", "Keep every command arm's exact stdout and stderr in this new JSONL file (mode 0600); a capture failure stops the report."),
    ("shard", "str", "I/N: run shard I of N (from 1), a partition by snapshot balanced by source size, the same in every job."),
    ("allow-partial", "flag", "With --bench-summarize: merge an incomplete or duplicated set of shards; the result is marked partial."),
    ("save", "str", "Save this run's report under NAME in the storage folder (NNNN_COMMIT_DATE_NAME.json; a partial run too, marked)."),
    ("autosave", "flag", "Save every complete run's report in the storage folder, named after the git branch (or 'run')."),
    ("storage", "path", "The folder of saved runs (default: .retrieval-bench under the rootdir)."),
    ("compare", "optional", "Pair this run with a saved run, as --bench-baseline does: latest (the default: the newest saved run of the "
                            "same samples and limit), a counter N, or a run NAME (its newest)."),
    ("embed-batch-size", "int", "Texts per encode batch of the embed:MODEL arms, chunks and queries (default 32, the bench's)."),
    ("embed-device", "str", "Device of a SentenceTransformers embed:MODEL arm (default: cuda when torch sees one, else cpu)."),
    ("embed-query-prefix", "str", "Text put before each query an embed:MODEL arm encodes (default: none)."),
    ("embed-passage-prefix", "str", "Text put before each chunk text an embed:MODEL arm encodes (default: none)."),
    ("embed-normalize", "str", "true or false: the model library normalises the embed:MODEL arms' vectors (default true)."),
    ("embed-memory", "int", "MiB one encode call of an embedding arm may take (estimated; default 512): a batch of the bench's that "
                            "would need more is split, said once per snapshot and reported."),
    ("embed-trust-remote-code", "flag", "Let a SentenceTransformers embed:MODEL arm run the model repository's own code (default: off)."),
    ("summarize", "paths", "Merge these written reports (repeatable; with --bench-report, without --bench-samples) and rebuild every summary."),
)
LIMIT_MAX = 50


def ini_name(option: str) -> str:
    return "bench_" + option.replace("-", "_")


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("retrieval-bench", "retrieval benchmark (pytest-retrieval-bench)")
    for option, kind, help_text in OPTIONS:
        dest = ini_name(option)
        if kind == "flag":
            group.addoption(f"--bench-{option}", action="store_true", default=None, dest=dest, help=help_text)
            parser.addini(dest, help_text, type="bool", default=False)
        elif kind == "optional":
            group.addoption(f"--bench-{option}", action="store", nargs="?", const="latest", default=None, dest=dest, help=help_text)
            parser.addini(dest, help_text, type="string", default="")
        elif kind in ("paths", "list", "list-raw"):
            group.addoption(f"--bench-{option}", action="append", default=None, dest=dest, help=help_text)
            parser.addini(dest, help_text, type="linelist", default=[])
        else:
            group.addoption(f"--bench-{option}", action="store", default=None, dest=dest, help=help_text)
            parser.addini(dest, help_text, type="string", default="")


@dataclass(frozen=True)
class Settings:
    samples: tuple[Path, ...] = ()
    corpus: tuple[Path, ...] = ()
    snapshots: dict[str, Path] = field(default_factory=dict)
    repos: Path | None = None
    arms: tuple[str, ...] = ()
    limit: int = 20
    report: Path | None = None
    registration: Path | None = None
    snapshot_latency: bool = False
    replace_registration: bool = False
    task_type: str | None = None
    max_samples: int | None = None
    fold_map_path: Path | None = None
    fold_map: dict[str, str] = field(default_factory=dict)
    fold_map_sha256: str | None = None
    baseline_arms: tuple[str, ...] | None = None
    cache_dir: Path | None = None
    no_cache: bool = False
    summarize: tuple[Path, ...] = ()
    baseline: Path | None = None
    gate: tuple[str, ...] = ()
    fail_regressed: bool = False
    update_baseline: bool = False
    markdown: Path | None = None
    html: Path | None = None
    shard: tuple[int, int] | None = None
    allow_partial: bool = False
    table_groups: tuple[str, ...] = ("all",)
    command_arms: tuple[tuple[str, Path], ...] = ()
    trajectories: tuple[tuple[str, Path], ...] = ()
    capture: Path | None = None
    fuse: tuple[str, ...] = ()
    arm_timeout: float | None = DEFAULT_ARM_TIMEOUT
    save: str | None = None
    autosave: bool = False
    storage: Path | None = None
    compare: str | None = None
    embed: EmbedOptions = field(default_factory=EmbedOptions)

    @property
    def active(self) -> bool:
        return bool(self.samples)

    def with_samples(self, samples: tuple[Path, ...]) -> "Settings":
        return replace(self, samples=samples)


SAMPLES_SUFFIXES = (".jsonl", ".jsonl.zst", ".tar.zst", ".parquet")


def _named_samples_file(config: pytest.Config, arg: str) -> Path | None:
    """The samples file a command-line argument names (`S` or `S::ID[arm]`), if it names one: made
    absolute as pytest makes its initial paths, links not followed, so pytest knows it for one of
    them (a resolved path through a linked directory was collected a second time)."""
    path = Path(config.invocation_params.dir) / arg.split("::", 1)[0]
    return Path(os.path.abspath(path)) if path.name.endswith(SAMPLES_SUFFIXES) and path.is_file() else None


def samples_for_run(config: pytest.Config, settings: Settings) -> tuple[tuple[Path, ...], bool]:
    """Which samples files this run benchmarks, and whether the bench runs alone.

    No test paths: the option's or ini's samples, alone. Test paths: the samples files among them,
    plus `--bench-samples` from the command line; `bench_samples` from the ini does not apply, so
    `pytest tests/test_plain.py` runs just that file.
    """
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        return settings.samples, True
    named = [path for path in (_named_samples_file(config, arg) for arg in config.args) if path is not None]
    from_option = list(settings.samples) if config.getoption("bench_samples") else []
    unique: dict[Path, None] = {}
    for path in [*from_option, *named]:
        unique.setdefault(path, None)
    return tuple(unique), False


WORKER_DIRS = "retrieval_bench_dirs"


def path_bases(config: pytest.Config) -> tuple[Path, Path]:
    """(invocation directory, rootdir) that relative paths resolve against.

    An xdist worker uses the controller's, handed over in its workerinput: a gateway with another
    working directory (`--tx popen//chdir=...`, `ssh=...//chdir=...`) must still read the same files.
    """
    given = getattr(config, "workerinput", {}).get(WORKER_DIRS)
    if given:
        return Path(given["invocation"]), Path(given["rootdir"])
    return Path(config.invocation_params.dir), config.rootpath


def _raw(config: pytest.Config, option: str, kind: str) -> tuple[Any, Path]:
    """The option's value and the directory its relative paths are relative to."""
    dest = ini_name(option)
    value = config.getoption(dest)
    invocation, rootdir = path_bases(config)
    if value is not None:
        return value, invocation
    return config.getini(dest), rootdir


def _paths(values: list[str], base: Path) -> tuple[Path, ...]:
    return tuple(base / value for value in values if value)


_SNAPSHOT = re.compile(r"^(?P<repo>[^/@=\s]+(?:/[^/@=\s]+)?)@(?P<commit>[0-9a-f]{40})=(?P<path>.+)$")


def _fold_map(path: Path) -> tuple[dict[str, str], str]:
    import hashlib

    try:
        data = path.read_bytes()
    except OSError as error:
        raise pytest.UsageError(f"--bench-fold-map {path}: cannot read: {error.strerror or error}") from error
    try:
        mapping = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise pytest.UsageError(f"--bench-fold-map {path}: malformed JSON: {error}") from error
    if not isinstance(mapping, dict) or not all(isinstance(v, str) and v in ("A", "B") for v in mapping.values()):
        raise pytest.UsageError(f'--bench-fold-map {path}: expected {{"owner/name": "A" | "B"}}')
    return mapping, hashlib.sha256(data).hexdigest()


COMPRESSIONS = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"PK\x03\x04": "zip"}


def _refuse_missing_sources(values: dict[str, Any]) -> None:
    """Start-up problems are one usage error naming the option and the path, never an error per item."""
    directories = [("--bench-corpus", path) for path in values["corpus"]] + ([("--bench-repos", values["repos"])] if values["repos"] else [])
    for option, path in directories:
        if not path.is_dir():
            raise pytest.UsageError(f"{option} {path}: {'not a directory' if path.exists() else 'no such directory'}")
    cache = values["cache-dir"]
    if cache is not None and cache.exists() and not cache.is_dir():
        raise pytest.UsageError(f"--bench-cache-dir {cache}: exists and is not a directory")
    seen: dict[Path, Path] = {}
    for path in values["samples"]:
        resolved = path.resolve()
        if resolved in seen:
            raise pytest.UsageError(f"--bench-samples {path}: given twice (as {seen[resolved]} too)")
        seen[resolved] = path
        try:
            with path.open("rb") as handle:
                head = handle.read(6)
        except OSError:
            continue  # the loader names a file it cannot open
        for magic, name in COMPRESSIONS.items():
            if head.startswith(magic):
                raise pytest.UsageError(f"--bench-samples {path}: {name}-compressed, an unsupported compression "
                                        "(use plain .jsonl, .jsonl.zst or a release .tar.zst)")


def read_settings(config: pytest.Config) -> Settings:
    """Parse and validate every option; a bad value is a usage error naming the option."""
    values: dict[str, Any] = {}
    for option, kind, _ in OPTIONS:
        raw, base = _raw(config, option, kind)
        if kind == "paths":
            values[option] = _paths(list(raw or []), base)
        elif kind == "list":
            values[option] = tuple(part.strip() for entry in (raw or []) for part in str(entry).split(",") if part.strip())
            if raw and not values[option]:  # `--bench-arms=` from an unset variable must not mean "the default"
                raise pytest.UsageError(f"--bench-{option}: an empty value; name at least one, or leave the option out")
        elif kind == "list-raw":
            values[option] = [(entry, base) for entry in (raw or []) if entry]
        elif kind == "flag":
            values[option] = bool(raw)
        elif kind == "path":
            values[option] = base / raw if raw else None
        elif kind == "int":
            if raw in (None, ""):
                values[option] = None
            else:
                try:
                    values[option] = int(raw)
                except ValueError:
                    raise pytest.UsageError(f"--bench-{option}: expected a whole number, got {raw!r}") from None
        else:
            values[option] = raw or None
    limit = values["limit"] if values["limit"] is not None else 20
    if not 1 <= limit <= LIMIT_MAX:
        raise pytest.UsageError(f"--bench-limit: must be between 1 and {LIMIT_MAX}, got {limit}")
    if values["max-samples"] is not None and values["max-samples"] < 1:
        raise pytest.UsageError(f"--bench-max-samples: must be at least 1, got {values['max-samples']}")
    snapshots: dict[str, Path] = {}
    for entry, base in values["snapshot"]:
        match = _SNAPSHOT.match(entry)
        if not match:
            raise pytest.UsageError(f"--bench-snapshot {entry!r}: expected OWNER/NAME@COMMIT=PATH (or NAME@COMMIT=PATH for a repository named without an owner) with a 40-hex commit")
        snapshots[f"{match['repo']}@{match['commit']}"] = base / match["path"]
    if values["samples"]:  # an inactive plugin (no samples) judges nothing
        _refuse_missing_sources(values)
    _refuse_path_taken_by_compare(config, values["compare"])
    if values["compare"] and values["baseline"]:
        raise pytest.UsageError("--bench-compare and --bench-baseline both name what this run is paired with: give one")
    if (values["fail-regressed"] or values["update-baseline"] or values["gate"]) and not (values["baseline"] or values["compare"]):
        raise pytest.UsageError("--bench-gate, --bench-fail-regressed and --bench-update-baseline need --bench-baseline REPORT (or --bench-compare)")
    if values["compare"] and values["update-baseline"]:
        raise pytest.UsageError("--bench-update-baseline writes a --bench-baseline file; a saved run (--bench-compare) is never rewritten")
    if values["save"]:
        from pytest_retrieval_bench.errors import BenchError
        from pytest_retrieval_bench.history.store import check_name

        try:
            check_name(values["save"])
        except BenchError as error:
            raise pytest.UsageError(str(error)) from None
    if values["capture"] is not None and values["summarize"]:
        raise pytest.UsageError("--bench-capture cannot be combined with --bench-summarize: a merge runs no arm, so there is nothing to capture")
    if values["capture"] is not None and values["report"] is None and values["registration"] is None:
        raise pytest.UsageError("--bench-capture needs --bench-report or --bench-registration: a capture is bound to the run's registration, "
                                "which is written beside the report (REPORT.registration.json) or where --bench-registration says")
    _check_registration_options(values)
    fold_map, fold_digest = _fold_map(values["fold-map"]) if values["fold-map"] else ({}, None)
    shard = None
    if values["shard"]:
        try:
            shard = parse_shard(values["shard"])
        except ValueError as error:
            raise pytest.UsageError(f"--bench-shard: {error}") from None
    return Settings(
        samples=values["samples"],
        corpus=values["corpus"],
        snapshots=snapshots,
        repos=values["repos"],
        arms=values["arms"],
        limit=limit,
        report=values["report"],
        registration=values["registration"],
        snapshot_latency=values["snapshot-latency"],
        replace_registration=values["replace-registration"],
        task_type=values["task-type"],
        max_samples=values["max-samples"],
        fold_map_path=values["fold-map"],
        fold_map=fold_map,
        fold_map_sha256=fold_digest,
        baseline_arms=values["baseline-arms"] or None,
        cache_dir=values["cache-dir"],
        no_cache=values["no-cache"],
        summarize=values["summarize"],
        baseline=values["baseline"],
        gate=tuple(entry for entry, _ in values["gate"]),
        fail_regressed=values["fail-regressed"],
        update_baseline=values["update-baseline"],
        markdown=values["markdown"],
        html=values["html"],
        shard=shard,
        allow_partial=values["allow-partial"],
        table_groups=values["table"] or ("all",),
        command_arms=tuple(values["command-arm"]),
        trajectories=tuple(values["trajectories"]),
        capture=values["capture"],
        fuse=tuple(entry for entry, _ in values["fuse"]),
        arm_timeout=_arm_timeout(values["arm-timeout"]),
        save=values["save"],
        autosave=values["autosave"],
        storage=values["storage"] or path_bases(config)[1] / DEFAULT_STORAGE,
        compare=values["compare"],
        embed=_embed_options(values),
    )


def _refuse_path_taken_by_compare(config: pytest.Config, compare: str | None) -> None:
    """`--bench-compare mine`: the option's value is optional, so argparse takes the test path after it
    as the saved run to compare with, and `mine` is never collected. Said before anything else goes
    wrong for it (an arm `mine/conftest.py` declares is then unknown). `--bench-compare=mine` is a name."""
    args = [str(arg) for arg in config.invocation_params.args]
    separate = any(arg == "--bench-compare" and following == compare for arg, following in zip(args, args[1:]))
    path = Path(config.invocation_params.dir) / compare if compare else None
    if not separate or path is None or not path.exists():
        return
    kind = "a directory" if path.is_dir() else "a file"
    raise pytest.UsageError(f"--bench-compare took {compare!r} as the saved run to compare with (its value is optional), but {compare!r} is "
                            f"{kind}: give test paths before the option (pytest {compare} ... --bench-compare) or write --bench-compare=latest; "
                            f"for a saved run named {compare!r} write --bench-compare={compare}")


def _embed_options(values: dict[str, Any]) -> EmbedOptions:
    batch_size = values["embed-batch-size"] if values["embed-batch-size"] is not None else 32
    if batch_size < 1:
        raise pytest.UsageError(f"--bench-embed-batch-size: must be at least 1, got {batch_size}")
    memory = values["embed-memory"] if values["embed-memory"] is not None else DEFAULT_MEMORY_BUDGET >> 20
    if memory < 1:
        raise pytest.UsageError(f"--bench-embed-memory: must be at least 1 (MiB), got {memory}")
    normalize = (values["embed-normalize"] or "true").strip().lower()
    if normalize not in ("true", "false"):
        raise pytest.UsageError(f"--bench-embed-normalize: expected true or false, got {values['embed-normalize']!r}")
    return EmbedOptions(batch_size=batch_size, device=values["embed-device"], query_prefix=values["embed-query-prefix"] or "",
                        passage_prefix=values["embed-passage-prefix"] or "", normalize=normalize == "true",
                        trust_remote_code=values["embed-trust-remote-code"], memory_budget=memory << 20)


def _check_registration_options(values: dict[str, Any]) -> None:
    """Seed 000's registration rules that need no arm: a latency run is always registered (a run
    without --bench-report writes no report file, only the terminal, so it needs --bench-registration),
    and an exclusive registration is never replaced (a rerun names a new path)."""
    latency, registration = values["snapshot-latency"], values["registration"]
    for option, given in (("--bench-snapshot-latency", latency), ("--bench-registration", registration is not None)):
        if given and values["summarize"]:
            raise pytest.UsageError(f"{option} cannot be combined with --bench-summarize: a merge runs no arm")
    if latency and values["report"] is None and registration is None:
        raise pytest.UsageError("--bench-snapshot-latency without --bench-report (a run that writes only to the terminal) "
                                "needs --bench-registration PATH: a latency run is registered before its first call")
    if values["replace-registration"] and (latency or registration is not None):
        raise pytest.UsageError("--bench-replace-registration cannot be combined with --bench-registration or --bench-snapshot-latency: "
                                "their registration is created once and never replaced; give a new path for a rerun")


def _arm_timeout(raw: str | None) -> float | None:
    if raw is None:
        return DEFAULT_ARM_TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        raise pytest.UsageError(f"--bench-arm-timeout: expected a number of seconds, got {raw!r}") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise pytest.UsageError(f"--bench-arm-timeout: expected 0 (no limit) or a positive number of seconds, got {raw!r}")
    return seconds or None


