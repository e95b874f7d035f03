"""The end of a run or a merge: compare with the baseline, gate, and write every output.

One implementation for `pytest` runs, `--bench-summarize` and `retrieval-bench summarize`, so a
merged report is gated, summarized and published exactly as a run's would be. A failure here
(a failed gate, a refused baseline update, a write that did not happen) is collected, never
raised: the caller turns it into the run's exit status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import orjson

from pytest_retrieval_bench.bench.outputs import report_destination
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.history.provenance import commit_info, machine_info
from pytest_retrieval_bench.report.build import canonical_json, write_atomically
from pytest_retrieval_bench.report.gate import GateRule, compare
from pytest_retrieval_bench.report.gate_text import failure_words
from pytest_retrieval_bench.report.markdown import render as render_markdown


@dataclass
class Outputs:
    """Where a report goes and what it is checked against (a subset of the run's Settings)."""

    report: Path | None = None
    markdown: Path | None = None
    html: Path | None = None
    baseline: Path | None = None
    update_baseline: bool = False
    fail_regressed: bool = False
    limit: int = 20


@dataclass
class Publication:
    report: dict[str, Any]
    report_bytes: bytes | None = None
    failures: list[str] = field(default_factory=list)
    updated_baseline: str = ""
    """When the baseline was written: what changed in it (`replaced grep; added mine; kept fx[1]`)."""
    report_path: Path | None = None
    """Where the report was written: `Outputs.report`, or beside it for a partial run (`report_destination`)."""
    notes: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    """The Markdown and HTML outputs written, each a line saying where (`the HTML page written to out.html`)."""


def load_baseline(path: Path | None, update_baseline: bool, registration: dict[str, Any], arms: Sequence[str],
                  rules: Sequence[GateRule]) -> dict[str, Any] | None:
    """The baseline a run or a merge is paired with, checked against it (BenchError naming the path).

    None without one, and when --bench-update-baseline is about to create it. An update is checked
    here too, before any arm runs: a shard's report is never a baseline, and the baseline's arms it
    keeps must be over this run's bench.
    """
    from pytest_retrieval_bench.report.baseline_update import check_update
    from pytest_retrieval_bench.report.gate import check_compatible
    from pytest_retrieval_bench.report.merge import read_report

    if path is not None and update_baseline and registration.get("shard"):
        raise BenchError(f"{path}: --bench-update-baseline with --bench-shard: a shard's report holds only its own snapshots; update "
                         "the baseline from the merge of every shard (retrieval-bench summarize shard-*.json --baseline ... --update-baseline)")
    if path is None or (update_baseline and not path.exists()):
        return None
    baseline = read_report(path)  # its errors name the file already
    try:
        check_compatible(registration, baseline, arms, rules)
        if update_baseline:
            check_update(baseline, registration, arms)
    except BenchError as error:
        raise BenchError(f"{path}: {error}") from error
    return baseline


def publish(report: dict[str, Any], outputs: Outputs, baseline: dict[str, Any] | None, rules: Sequence[GateRule],
            *, regressions_fail_items: bool = True, capture_failure: str | None = None,
            registration_failure: str | None = None, paired_against: Sequence[str]) -> Publication:
    """Gate the report against the baseline, then write it, its Markdown and HTML, and the baseline.

    `regressions_fail_items`: in a run each regressed item already failed; a merge has no items,
    so with --bench-fail-regressed its regressions fail the merge as a whole. `paired_against`:
    the run's baseline arms, which an updated baseline keeping other arms rebuilds `paired` with.
    """
    result = Publication(report)
    if baseline is not None:
        # compare the report as it will be written (rounded), exactly as a later rerun would see it
        report["baseline"] = compare(orjson.loads(canonical_json(report)), baseline, rules)
        if report["baseline"]["failed"]:
            failed = [f"{rule['rule']} ({failure_words(rule)})" for rule in report["baseline"]["rules"] if rule["verdict"] == "fail"]
            result.failures.append(f"gate failed against {outputs.baseline}: {', '.join(failed)}")
        regressed = sum(changes["regressed"] for changes in report["baseline"]["arms"].values())
        if outputs.fail_regressed and not regressions_fail_items and regressed:
            result.failures.append(f"{regressed} sample x arm item(s) regressed against {outputs.baseline}")
    if capture_failure is not None:
        result.failures.append(f"capture failed ({capture_failure}); the report was not published, the capture file is kept")
        return result
    if registration_failure is not None:
        result.failures.append(f"the run no longer matches its registration ({registration_failure}); the report was not published, "
                               "the registration is kept")
        return result
    result.report_bytes = canonical_json(report)  # the report as written, encoded once
    if outputs.report is not None:
        result.report_path, note = report_destination(outputs.report, report)
        result.notes += [note] if note else []
    _write(result, result.report_path, result.report_bytes, "the report")
    if outputs.markdown is not None:
        _write(result, outputs.markdown, render_markdown(report, outputs.limit).encode("utf-8"), "the Markdown summary")
    if outputs.html is not None:
        from pytest_retrieval_bench.report.html import render_html

        _write(result, outputs.html, render_html(orjson.loads(result.report_bytes)).encode("utf-8"), "the HTML page")
    if outputs.update_baseline and outputs.baseline is not None:
        _update_baseline(result, outputs, baseline, paired_against)
    return result


def _write(result: Publication, path: Path | None, data: bytes, what: str) -> None:
    """A failed write fails the session with its reason, instead of an internal error; a written
    Markdown or HTML output is said (the report has its own line)."""
    if path is None:
        return
    try:
        write_atomically(path, data)
    except OSError as error:
        result.failures.append(f"cannot write {what} to {path}: {error.strerror or error}")
        return
    if what != "the report":
        result.written.append(f"{what.removeprefix('the ')} written to {path}")


def _update_baseline(result: Publication, outputs: Outputs, baseline: dict[str, Any] | None, paired_against: Sequence[str]) -> None:
    """Only a complete, error-free report may become the baseline every later run is gated on; the
    baseline's arms it did not run are kept (report/baseline_update.py)."""
    from pytest_retrieval_bench.report.baseline_update import arms_of, changes_of, updated_baseline

    path = outputs.baseline
    assert path is not None
    errors = sum(1 for entry in result.report["details"] for record in entry["arms"].values() if record.get("error"))
    absent = result.report.get("partial") or {}
    if errors:
        result.failures.append(f"--bench-update-baseline refused: {errors} arm error(s) in this run; the baseline was not changed")
    elif absent:
        result.failures.append(f"--bench-update-baseline refused: {len(absent.get('not_run', []))} selected sample x arm item(s) did not run "
                               f"(deselected with -k, stopped early, interrupted or a shard missing); the baseline was not changed")
    else:
        data, changes = result.report_bytes or b"", changes_of(None, arms_of(result.report))
        if baseline is not None:  # merged from the report as written, as every merge is
            try:
                written, changes = updated_baseline(baseline, str(path), orjson.loads(data), str(outputs.report or "this run"), paired_against)
            except BenchError as error:  # load_baseline checked this before any arm ran; a guard, never a crash
                result.failures.append(f"--bench-update-baseline refused: {error}; the baseline was not changed")
                return
            data = canonical_json(written) if changes.kept else data
        failures = len(result.failures)
        _write(result, path, data, "the baseline")
        if len(result.failures) == failures:
            result.updated_baseline = changes.describe()


OFFLINE = ":offline"
"""Ends the identity of a fusion computed in a merge, from records rather than a run."""


def fusion_deriver(entries: Sequence[str], limit: int) -> Any:
    """The merge's `derive` step for `--fuse` entries: each fusion's records from its components'
    merged records, however many jobs they came from (file metrics only, see `offline_fused_record`)."""
    from pytest_retrieval_bench.arms.fusion import parse_fusion, with_identity
    from pytest_retrieval_bench.bench.run import offline_fused_record
    from pytest_retrieval_bench.samples.model import Sample

    fusions = [parse_fusion(entry, "--fuse") for entry in entries]

    def derive(records: dict[tuple[str, str], dict[str, Any]], labels: dict[str, dict[str, Any]],
               identities: dict[str, str]) -> tuple[list[str], list[str]]:
        present = {arm for _, arm in records}
        not_computed: list[str] = []
        for fusion in fusions:
            online = with_identity(fusion, identities).identity
            if fusion.name in present:  # the jobs fused it already (the same declaration, e.g. from the ini file)
                if identities.get(fusion.name) in (online, online + OFFLINE):
                    continue
                raise BenchError(f"--fuse {fusion.describe()!r}: the reports already hold a different arm named {fusion.name!r}")
            absent = [arm for arm in fusion.component_names if arm not in present]
            if absent:
                raise BenchError(f"--fuse {fusion.describe()!r}: no report holds component arm(s) {', '.join(map(repr, absent))}")
            for sample_id in sorted(labels):
                if (sample_id, "") in records:  # a skipped sample: no arm ran
                    continue
                components = {arm: records.get((sample_id, arm)) for arm in fusion.component_names}
                if any(record is None for record in components.values()):
                    not_computed.append(f"{sample_id}[{fusion.name}]")
                    continue
                record = offline_fused_record(fusion, Sample.from_labels(sample_id, labels[sample_id]), components, limit)  # type: ignore[arg-type]
                records[(sample_id, fusion.name)] = record
            identities[fusion.name] = online + OFFLINE
            present.add(fusion.name)
        return [fusion.name for fusion in fusions], not_computed

    return derive


def summarize(paths: Sequence[Path], known_arms: Sequence[str], baselines: Sequence[str], outputs: Outputs, gate: Sequence[str],
              allow_partial: bool, table_groups: Sequence[str], fuse: Sequence[str] = ()) -> tuple[Publication, list[str]]:
    """Merge written reports (adding `fuse` fusions), then gate and publish the merge exactly as a run would be.

    Raises BenchError for inputs that cannot be merged or a baseline that does not fit; returns
    the publication (its failures decide the exit status) and the terminal's lines.
    """
    from pytest_retrieval_bench.report.gate import parse_rule
    from pytest_retrieval_bench.report.merge import merge_reports, reports_among
    from pytest_retrieval_bench.report.run_tables import report_lines
    from pytest_retrieval_bench.report.tables import printable

    report = merge_reports(paths, known_arms, baselines, allow_partial, fusion_deriver(fuse, outputs.limit) if fuse else None)
    report.update(commit_info=commit_info(Path.cwd()), machine_info=machine_info())  # the merge's own, as a run records its own
    rules = [parse_rule(text) for text in gate]
    try:
        baseline = load_baseline(outputs.baseline, outputs.update_baseline, report["registration"], report["registration"]["arms"], rules)
    except BenchError as error:
        raise BenchError(f"baseline {error}") from error
    published = publish(report, outputs, baseline, rules, regressions_fail_items=False, paired_against=baselines)
    lines = report_lines(report, outputs.limit, table_groups, outputs.baseline,
                         published.report_path if published.report_bytes is not None else None)
    partial = report.get("partial")
    if partial:
        lines.append(f"retrieval-bench: PARTIAL report: {len(partial.get('not_run', []))} item(s) not run"
                     + (f", shard(s) {partial['missing_shards']} missing" if partial.get("missing_shards") else ""))
    lines += [f"retrieval-bench: {failure}" for failure in published.failures]
    if published.updated_baseline:
        lines.append(f"baseline updated: {outputs.baseline} ({published.updated_baseline})")
    lines += [f"retrieval-bench: {note}" for note in published.notes]
    lines += [f"retrieval-bench: {written}" for written in published.written]
    if published.report_bytes is not None and published.report_path is not None and not published.failures:
        lines.append(f"retrieval-bench: merged {len(report['registration'].get('merged_from') or reports_among(paths))} reports into {published.report_path}")
    return published, [printable(line) for line in lines]


def outputs_of(settings: Any) -> Outputs:
    """The outputs of a run or merge, from its Settings (`options.Settings`)."""
    return Outputs(report=settings.report, markdown=settings.markdown, html=settings.html, baseline=settings.baseline,
                   update_baseline=settings.update_baseline, fail_regressed=settings.fail_regressed, limit=settings.limit)
