"""The bench session: one object per pytest process that knows the samples, arms and records.

Roles (decided once, at configure): `local` (no xdist) and `controller` collect records from
reports and write the report; a `worker` runs items and attaches records to its reports.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable

import pytest

from pytest_retrieval_bench import __version__
from pytest_retrieval_bench.arms.base import Answer, Arm, Request
from pytest_retrieval_bench.arms.capture import CaptureError, CaptureWriter
from pytest_retrieval_bench.arms.fusion import FusionArm, fuse_records
from pytest_retrieval_bench.arms.registry import BUILTIN_ARMS, REFERENCE_ARMS, select_arms
from pytest_retrieval_bench.index.tokens import TOKENIZER_VERSION
from pytest_retrieval_bench.corpus.copies import PrivateCopies
from pytest_retrieval_bench.corpus.file_digests import FileDigests
from pytest_retrieval_bench.corpus.progress import SetupCounts
from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.corpus.store import SnapshotStore
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.arms.fixture_arms import REQUEST_FIXTURE, FixtureArm
from pytest_retrieval_bench.report.gate import GateRule, parse_rule, sample_change
from pytest_retrieval_bench.index.cache import IndexCache
from pytest_retrieval_bench.index.cache_writes import CacheWrites
from pytest_retrieval_bench.options import Settings
from pytest_retrieval_bench.arms.snapshot_latency import MatchedLatency
from pytest_retrieval_bench.bench.outputs import check_outputs
from pytest_retrieval_bench.report.registration import build_registration, create_registration, latency_registration, registration_drift, sidecar_path
from pytest_retrieval_bench.report.build import build_report
from pytest_retrieval_bench.arms.deadline import arm_time_limit
from pytest_retrieval_bench.bench.arms_setup import bind_embedding_arms, configured_arms, dense_device, embedding_models, matched_arms, variant_aliases
from pytest_retrieval_bench.bench.finish import load_baseline, outputs_of, publish
from pytest_retrieval_bench.bench.node_ids import SnapshotKey, parse_node_id
from pytest_retrieval_bench.bench.registration_sidecar import RegistrationSidecar
from pytest_retrieval_bench.bench.saved_runs import save_published, with_compared_baseline
from pytest_retrieval_bench.history.provenance import commit_info, machine_info
from pytest_retrieval_bench.bench.samples_setup import apply_max_samples, check_corpus_levels, check_filters, load_all
from pytest_retrieval_bench.bench.run import failed_record, make_request, run_item
from pytest_retrieval_bench.bench.agent_run import AgentItems
from pytest_retrieval_bench.arms.agents.grep_cache import GrepIndexCache
from pytest_retrieval_bench.arms.agents.replay import ReplayArm
from pytest_retrieval_bench.bench.snapshot_checks import snapshot_checks
from pytest_retrieval_bench.bench.snapshot_sources import require_snapshot_source, snapshot_resolver
from pytest_retrieval_bench.bench.unknown_arms import node_id_arm_message, unknown_arm_message
from pytest_retrieval_bench.samples import LoadedSamples, Sample
from pytest_retrieval_bench.files.sha256 import file_sha256
from pytest_retrieval_bench.shard import partition, partition_digest


class BenchSession:
    def __init__(self, config: pytest.Config, settings: Settings, role: str, base_dir: Path, owns_base: bool, bench_only: bool = False):
        self.config = config
        self.bench_only = bench_only
        self.settings = settings
        self.role = role
        self.loaded: list[LoadedSamples] = load_all(settings)
        check_filters(self.loaded, settings, config)
        apply_max_samples(self.loaded, settings.max_samples)
        self.samples_by_id: dict[str, Sample] = {sample.id: sample for loaded in self.loaded for sample in loaded.samples}
        self.arms: dict[str, Arm] = self._available_arms()
        try:
            variants = variant_aliases(self.arms)
            self.arm_names = select_arms(settings.arms or BUILTIN_ARMS, self.arms, extra_aliases=variants)
            self.arm_names += [name for name, arm in self.arms.items() if isinstance(arm, (FusionArm, ReplayArm)) and name not in self.arm_names]
            self.fusions: dict[str, FusionArm] = {name: self.arms[name] for name in self.arm_names if isinstance(self.arms[name], FusionArm)}  # type: ignore[misc]
            self.baselines = select_arms(settings.baseline_arms, self.arms, "--bench-baseline-arms", variants) if settings.baseline_arms else list(REFERENCE_ARMS)
        except BenchError as error:
            raise pytest.UsageError(unknown_arm_message(error, role, config)) from error
        if role != "worker" and (problem := node_id_arm_message(config, settings.samples, self.arm_names, self.arms)):
            raise pytest.UsageError(problem)
        self.records: dict[tuple[str, str], dict[str, Any]] = {}
        self.expected: set[tuple[str, str]] = set()
        self.lost: dict[tuple[str, str], str] = {}
        self.skipped_items: set[tuple[str, str]] = set()
        self.index_kinds: dict[str, set[str]] = {}
        #: records of fusion components for the current snapshot, so each runs once per sample
        self.component_records: dict[tuple[str, str], dict[str, Any]] = {}
        self._components = {name for fusion in self.fusions.values() for name in fusion.component_names}
        self.snapshot_setups: list[dict[str, Any]] = []
        self.snapshot_loads: list[tuple[str, str | None]] = []  # (snapshot, xdist worker or None) per read
        self._snapshot_keys = sorted({sample.snapshot_key for sample in self.samples_by_id.values()})
        self._snapshot_params = {key: SnapshotKey(key) for key in self._snapshot_keys}
        self._snapshot_ordinals = {key: number for number, key in enumerate(self._snapshot_keys)}
        self._costs: dict[str, int] = {}
        self.report: dict[str, Any] | None = None
        self.report_bytes: bytes | None = None
        self.updated_baseline = ""  # what an update changed in the baseline, once written
        self.report_path: Path | None = None
        self.written: list[str] = []  # the Markdown and HTML outputs written, each said on a line of its own
        self.report_notes: list[str] = []
        self.capture: CaptureWriter | None = None
        if settings.capture is not None and role != "local":
            raise pytest.UsageError("--bench-capture needs a run without xdist workers (-p no:xdist or -n 0)")
        self.copies = PrivateCopies(base_dir / "copies", owned_root=base_dir if owns_base else None)
        self.base_dir = base_dir
        self.owns_base = owns_base
        require_snapshot_source(settings, self.loaded)
        check_corpus_levels(self.loaded, settings)
        self._cache_writes = CacheWrites(None if settings.no_cache else self.cache_dir())  # shared: a full disk stops every cache write
        self.store = SnapshotStore(snapshot_resolver(settings, self.loaded, self.cache_dir(), self._file_digests, self.base_dir / "releases",
                                                     self._cache_writes), self.copies, self._index_cache())
        grep_cache = GrepIndexCache(self.store.cache, self.store.events) if self.store.cache is not None and self._cache_outlives_run() else None
        self.agents = AgentItems(settings.limit, settings.arm_timeout, grep_cache)
        bind_embedding_arms(config, self.arms, None if settings.no_cache else self.cache_dir() / "vectors", self._cache_writes,
                            settings.embed.memory_budget, self.store.events)
        self.registration = build_registration(settings, self.loaded, self.arm_names, self.arms, __version__, TOKENIZER_VERSION,
                                               config.rootpath, content_digests=role != "worker", digest_of=self._file_digests.sha256 if self._file_digests else file_sha256)
        self.matched: dict[str, MatchedLatency] = matched_arms(settings.snapshot_latency, role, self.arm_names, self.arms)
        if self.matched:
            selected = [sample.id for loaded in self.loaded for sample in loaded.samples]
            self.registration["snapshot_latency"] = latency_registration([m.arm for m in self.matched.values()], selected)
        self.registration_written: bytes | None = None
        self.sidecar = RegistrationSidecar(settings.report) if settings.report is not None else None
        self.shard_keys = self._shard_keys()
        self.failures: list[str] = []
        self.rules = self._gate_rules()
        self.settings, self.compare_notes = with_compared_baseline(self.settings, self.registration)
        self.baseline = self._baseline()
        self._baseline_records = {(entry["id"], arm): record for entry in (self.baseline or {}).get("details", []) for arm, record in entry.get("arms", {}).items()}

    @property
    def registration_path(self) -> Path | None:
        """--bench-registration, else the sidecar beside --bench-report, else none."""
        if self.settings.registration is not None:
            return self.settings.registration
        return sidecar_path(self.settings.report) if self.settings.report is not None else None

    @property
    def exclusive_registration(self) -> bool:
        """Seed 000's latency registration: created once, never reused or replaced."""
        return self.settings.registration is not None or self.settings.snapshot_latency

    def _gate_rules(self) -> list[GateRule]:
        try:
            return [parse_rule(text) for text in self.settings.gate]
        except BenchError as error:
            raise pytest.UsageError(str(error)) from error

    def _baseline(self) -> dict[str, Any] | None:
        try:
            return load_baseline(self.settings.baseline, self.settings.update_baseline, self.registration, self.arm_names, self.rules)
        except BenchError as error:
            raise pytest.UsageError(f"--bench-baseline {error}") from error

    # -- set-up -------------------------------------------------------------------------------
    def _available_arms(self) -> dict[str, Arm]:
        try:
            return configured_arms(self.config, self.settings)
        except BenchError as error:
            raise pytest.UsageError(str(error)) from error


    def cache_dir(self) -> Path:
        if self.settings.cache_dir is not None:
            return self.settings.cache_dir
        cache = getattr(self.config, "cache", None)
        if cache is not None:
            return Path(cache.mkdir("retrieval-bench"))
        return self.base_dir / "cache"

    def _cache_outlives_run(self) -> bool:
        """Whether a later run reads this run's cache: not the directory of its own a run without
        pytest's cache provider removes at its end (building an agent's grep index at the first
        grep only pays when a later run loads it)."""
        return self.settings.cache_dir is not None or getattr(self.config, "cache", None) is not None

    def _index_cache(self) -> IndexCache | None:
        return None if self.settings.no_cache else IndexCache(self.cache_dir() / "index", self._cache_writes)

    @cached_property
    def _file_digests(self) -> FileDigests | None:
        """Corpus files' sha256, remembered beside the index cache when there is one: the registration
        names them, and read receipts are checked against them (one hash of each file a run)."""
        return None if self.settings.no_cache else FileDigests(self.cache_dir() / "digests", self._cache_writes)

    def _shard_keys(self) -> set[str] | None:
        """With --bench-shard I/N: the snapshots of shard I (recorded, with the partition's digest)."""
        if self.settings.shard is None:
            return None
        index, count = self.settings.shard
        costs = {key: self.snapshot_cost(key) for key in self._snapshot_keys}
        assignment = partition(costs, count)
        self.registration["shard"] = {"index": index, "count": count, "partition_sha256": partition_digest(assignment, count)}
        return {key for key, shard in assignment.items() if shard == index}

    def in_shard(self, sample: Sample) -> bool:
        return self.shard_keys is None or sample.snapshot_key in self.shard_keys

    # -- collection ---------------------------------------------------------------------------
    def samples_index(self, path: Path) -> int | None:
        """Which loaded samples file `path` is (None when it is not one of this run's)."""
        resolved = path.resolve()
        for index, loaded in enumerate(self.loaded):
            if loaded.path.resolve() == resolved:
                return index
        return None

    def selected_samples(self, index: int) -> list[Sample]:
        """A file's samples in snapshot order, so one snapshot's items run together."""
        return sorted((sample for sample in self.loaded[index].samples if self.in_shard(sample)), key=lambda s: (s.repo, s.base_commit, s.id))

    def snapshot_param(self, key: str) -> str:
        """One str object per snapshot key: pytest compares a session fixture's param by identity too."""
        return self._snapshot_params[key]

    def snapshot_cost(self, key: str) -> int:
        """The size of a snapshot's source in bytes, known before indexing (cached per key)."""
        if key not in self._costs:
            self._costs[key] = self.store.resolver.estimate(*key.rsplit("@", 1))
        return self._costs[key]

    def snapshot_ordinal(self, key: str) -> int:
        return self._snapshot_ordinals[key]

    def plan_indexes(self, items: Iterable[Any]) -> None:
        """Which index kinds each snapshot's selected items use, so set-up builds only those."""
        self.index_kinds = {}
        for item in items:
            sample, arm_name = getattr(item, "sample", None), getattr(item, "arm_name", None)
            if sample is None or arm_name is None:
                continue
            self.index_kinds.setdefault(sample.snapshot_key, set()).update(self.index_kinds_of(arm_name))

    def index_kinds_of(self, arm_name: str) -> set[str]:
        """The index kinds an arm reads (a fusion: those of its components)."""
        arm = self.arms[arm_name]
        if isinstance(arm, FusionArm):
            return {kind for name in arm.component_names for kind in self.index_kinds_of(name)}
        kind = getattr(arm, "uses_index", None)
        return {kind} if kind else set()

    def expect(self, nodeids: Iterable[str]) -> None:
        for nodeid in nodeids:
            parsed = parse_node_id(nodeid)
            if parsed:
                self.expected.add(parsed)

    def snapshot_of_node(self, nodeid: str) -> str | None:
        """The snapshot key of a bench item's nodeid (None for any other test)."""
        parsed = parse_node_id(nodeid)
        if parsed is None:
            return None
        sample = self.samples_by_id.get(parsed[0])
        return sample.snapshot_key if sample else None

    # -- running ------------------------------------------------------------------------------
    def open_snapshot(self, key: str, notify: Callable[[SetupCounts], None] | None = None) -> Snapshot:
        """Set-up of one snapshot: read it, and build or load the indexes its selected arms use
        (`notify` hears the counts as they change)."""
        repo, _, commit = key.rpartition("@")
        kinds = self.index_kinds.get(key, set())
        return self.store.open(repo, commit, kinds, SetupCounts(key, len(kinds), notify) if notify is not None else None)

    def release_snapshot(self, key: str) -> None:
        self.store.release(key)
        self.component_records.clear()
        self.agents.release()

    def load_snapshot(self, key: str) -> Snapshot:
        """A snapshot for an ordinary test, read apart from the store's current one."""
        repo, _, commit = key.rpartition("@")
        return self.store.load_apart(repo, commit)

    def make_request(self, sample: Sample, arm_name: str, snapshot: Snapshot) -> Request:
        return make_request(sample, snapshot, self.settings.limit, getattr(self.arms[arm_name], "max_query_chars", None))

    def prepare_arm(self, arm: Any, snapshot: Snapshot) -> None:
        """`prepare` once per snapshot; a fusion prepares its object components; a matched arm indexes the copy."""
        if isinstance(arm, FusionArm):
            for name in arm.component_names:  # a fixture arm prepares only when it is an `@embedder(...)` one
                self.store.prepare(self.matched.get(name, self.arms[name]), snapshot)
            return
        self.store.prepare(self.matched.get(arm.name, arm), snapshot)

    def run(self, sample: Sample, arm_name: str, request: Request, snapshot: Snapshot, call: Any,
            raised: list[BaseException] | None = None) -> dict[str, Any]:
        """One item's record (the arm's own exception appended to `raised`); a fusion component
        that already ran for this sample is not run again."""
        key = (sample.id, arm_name)
        if key in self.component_records:
            return self.component_records[key]
        seconds, source = arm_time_limit(self.arms[arm_name], self.settings.arm_timeout)
        matched = self.matched.get(arm_name)
        if matched is not None:  # the cold and the hit call, instead of one ordinary call
            call = lambda: matched.retrieve(request)
        record = run_item(sample, arm_name, request, snapshot, self.settings.limit, call, seconds, source, matched=matched is not None,
                          raised=raised)
        if self.capture is not None:
            self.capture.flush()  # disk writes stay outside the measured wall time
        if arm_name in self._components:
            self.component_records[key] = record
        return record

    def run_fused(self, sample: Sample, fusion: FusionArm, snapshot: Snapshot, funcargs: dict[str, Any]) -> dict[str, Any]:
        """A fusion item: its components' records (run now unless they ran already), then RRF over them.

        Fixture-arm components are called with the fused item's own fixtures (`funcargs`).
        Only the fusion itself is timed in the fused record's `wall_ms`.
        """
        components: dict[str, dict[str, Any]] = {}
        for name in fusion.component_names:
            arm = self.arms[name]
            request = self.make_request(sample, name, snapshot)
            if isinstance(arm, FixtureArm):
                arguments = {parameter: request if parameter == REQUEST_FIXTURE else funcargs[parameter] for parameter in arm.parameters()}
                call = lambda arm=arm, arguments=arguments: arm.function(**arguments)
            else:
                call = lambda arm=arm, request=request: arm.retrieve(request)
            components[name] = self.run(sample, name, request, snapshot, call)
        request = self.make_request(sample, fusion.name, snapshot)
        return run_item(sample, fusion.name, request, snapshot, self.settings.limit,
                        lambda: Answer(ranking=fuse_records(fusion, components)))

    def setup_failure_record(self, sample: Sample, arm_name: str, message: str) -> dict[str, Any]:
        """An item whose set-up failed (its snapshot, an arm fixture, `prepare`) is an arm error."""
        return failed_record(sample, arm_name, message, self.settings.limit)

    def regression(self, record: dict[str, Any]) -> str | None:
        """With --bench-fail-regressed: why this item regressed against the baseline, if it did."""
        if not self.settings.fail_regressed or record.get("error") or record.get("skipped"):
            return None
        before = self._baseline_records.get((record["sample_id"], record["arm"]))
        if before is None:
            return None
        change, why = sample_change(before, record)
        return why if change == "regressed" else None

    def add_record(self, record: dict[str, Any]) -> None:
        self.records[(record["sample_id"], record["arm"])] = record

    def add_skipped(self, nodeid: str) -> None:
        parsed = parse_node_id(nodeid)
        if parsed:
            self.skipped_items.add(parsed)

    def add_lost(self, nodeid: str, reason: str) -> None:
        parsed = parse_node_id(nodeid)
        if parsed and parsed not in self.records:
            self.lost[parsed] = reason

    # -- the end ------------------------------------------------------------------------------
    def start(self) -> None:
        """Before any arm runs: the registration sidecar (a differing one is refused)."""
        if not self.writes_outputs:
            return
        if self.exclusive_registration and self.registration_path is not None:
            try:
                self.registration_written = create_registration(self.registration_path, self.registration)
            except BenchError as error:
                raise pytest.UsageError(f"--bench-registration: {error}" if self.settings.registration else str(error)) from error
        elif self.sidecar is not None:
            try:
                self.sidecar.write(self.registration, self.settings.replace_registration, self.config)
            except BenchError as error:
                raise pytest.UsageError(str(error)) from error
        if self.settings.capture is not None:
            self._open_capture()

    def _open_capture(self) -> None:
        """Before any arm runs: the capture file, bound to this run's registration."""
        settings = self.settings
        programs = [self.arms[name] for name in self.arm_names if hasattr(self.arms[name], "descriptor")]
        forbidden = [*settings.corpus, *settings.snapshots.values(), *([settings.repos] if settings.repos else []), self.base_dir]
        try:
            self.capture = CaptureWriter(settings.capture, self.registration, [arm.descriptor() for arm in programs], forbidden)  # type: ignore[attr-defined]
        except CaptureError as error:
            raise pytest.UsageError(f"--bench-capture: {error}") from error
        for arm in programs:
            arm.capture = self.capture  # type: ignore[attr-defined]

    @property
    def writes_outputs(self) -> bool:
        """`--co`, `--setup-only` and `--setup-plan` run no arm, so they write nothing at all."""
        option = self.config.option
        return not (getattr(option, "collectonly", False) or getattr(option, "setuponly", False) or getattr(option, "setupplan", False))

    def not_run(self, records: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
        """Every selected `id[arm]` without a record, skipped arms aside: the report is then partial."""
        return sorted(f"{sample.id}[{arm}]" for loaded in self.loaded for sample in loaded.samples for arm in self.arm_names
                      if not sample.skip_reason and self.in_shard(sample) and (sample.id, arm) not in records and (sample.id, arm) not in self.skipped_items)

    def finish(self) -> dict[str, Any] | None:
        if not self.writes_outputs:
            return None
        samples = self.samples_by_id
        records = dict(self.records)
        for key, reason in sorted(self.lost.items()):
            if key not in records and key[0] in samples:
                records[key] = failed_record(samples[key[0]], key[1], f"lost: {reason}", self.settings.limit)
        unrecorded = set(not_run := self.not_run(records))  # a protocol skip or a skipped item records nothing by design: neither is missing
        missing = sorted({sample_id for sample_id, arm in self.expected if f"{sample_id}[{arm}]" in unrecorded})
        problems = [str(problem) for loaded in self.loaded for problem in loaded.problems]
        self.report = build_report(
            registration=self.registration,
            samples=samples.values(),
            records=records.values(),
            baselines=self.baselines,
            limit=self.settings.limit,
            with_folds=bool(self.settings.fold_map),
            problems=problems,
            snapshot_problems=snapshot_checks(self.config).entries(),
            missing=missing,
            not_run=not_run,
        )
        capture_failure = None
        if self.capture is not None:
            self.capture.close()
            capture_failure = self.capture.failure_reason if self.capture.failed else None
        models = embedding_models(self.arms, self.arm_names, snapshot_checks(self.config).splits())
        self.report.update(commit_info=commit_info(self.config.rootpath), machine_info=machine_info(dense_device(models)), **({"embedding_models": models} if models else {}))
        published = publish(self.report, outputs_of(self.settings), self.baseline, self.rules, capture_failure=capture_failure,
                            registration_failure=self._registration_drift(), paired_against=self.baselines)
        self.report_bytes, self.updated_baseline = published.report_bytes, published.updated_baseline
        self.report_path, self.report_notes = published.report_path, published.notes + self.compare_notes
        self.report_notes += self.sidecar.settle(published.report_path) if self.sidecar is not None else []
        self.written = published.written
        self.report_notes += [note for note in [save_published(self.settings, self.report, published.report_bytes, self.config.rootpath)] if note]
        self.failures.extend(published.failures)
        return self.report

    def _registration_drift(self) -> str | None:
        """Before an exclusive registration's report is published: the paths still distinct, the file
        as written, the executables, the bench and the environment as registered."""
        path = self.registration_path
        if self.registration_written is None or path is None:
            return None
        problems = registration_drift(path, self.registration_written, self.registration, self.arms, [m.arm for m in self.matched.values()])
        label = "--bench-registration" if self.settings.registration is not None else "the registration sidecar of --bench-report"
        outputs = [("--bench-report", self.settings.report), (label, path)]
        try:
            check_outputs([(label, output) for label, output in outputs if output is not None], [], [])
        except BenchError as error:
            problems.append(str(error))
        return "; ".join(problems) or None

    def close(self) -> None:
        if self.capture is not None:
            self.capture.close()
        self.store.close()  # removes the copies, and the session's directory where it owns it


