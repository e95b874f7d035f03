"""What the terminal shows: a header line, a status word per item, a compact table per arm."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_retrieval_bench.bench.session import BenchSession


def outcome_word(record: dict[str, Any]) -> str:
    """HIT / MISS for positive samples, ABSTAIN for an abstention, ANSWER on a no-gold sample."""
    if record.get("abstained"):
        return "ABSTAIN"
    if record.get("rank_of_first_gold") is not None:
        return "HIT"
    if record.get("metrics"):
        return "MISS"
    return "ANSWER"


def header_lines(bench: "BenchSession") -> list[str]:
    samples = sum(len(loaded.samples) for loaded in bench.loaded)
    snapshots = len({sample.snapshot_key for loaded in bench.loaded for sample in loaded.samples})
    files = ", ".join(str(loaded.path) for loaded in bench.loaded)
    return [f"retrieval-bench: samples {files} ({samples} samples, {snapshots} snapshots); arms {', '.join(bench.arm_names)}; limit {bench.settings.limit}"]


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"


def summary_lines(bench: "BenchSession") -> list[str]:
    report = bench.report or {}
    overall = report.get("summary", {}).get("all", {})
    limit = bench.settings.limit
    hit_key = f"hit@{10 if limit >= 10 else 5}" if limit >= 5 else None
    lines = ["", "retrieval-bench summary (group all)"]
    header = f"{'arm':<14} {'n':>4} {'pos':>4} {hit_key or 'hit':>8} {'95% Wilson':>15} {'recall@10':>9} {'mrr@k':>6} {'selective':>9} {'errors':>6} {'abstain':>7}"
    lines.append(header)
    for arm, row in overall.items():
        metrics = row["metrics"]
        interval = row["wilson95"].get(hit_key) if hit_key else None
        wilson = f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "-"
        lines.append(
            f"{arm:<14} {row['n']:>4} {row['positives']:>4} {_fmt(metrics.get(hit_key)) if hit_key else '-':>8} {wilson:>15} "
            f"{_fmt(metrics.get('recall@10')):>9} {_fmt(metrics.get('mrr@k')):>6} {_fmt(row['selective_success']):>9} {row['errors']:>6} {row['abstentions']:>7}"
        )
    for comparison, metrics in report.get("paired", {}).get("all", {}).items():
        for metric, result in metrics.items():
            low, high = result["bootstrap95"] or (None, None)
            verdict = "better" if low is not None and low > 0 else "worse" if high is not None and high < 0 else "no significant difference"
            lines.append(f"paired {comparison} {metric}: {result['mean_difference']:+.3f} [{low:+.3f}, {high:+.3f}] -> {verdict}")
    baseline = report.get("baseline")
    if baseline:
        lines.append(f"against baseline {bench.settings.baseline}: {'FAILED' if baseline['failed'] else 'passed'}")
        for rule in baseline["rules"]:
            low_high = rule["bootstrap95"]
            bounds = f"[{low_high[0]:+.3f}, {low_high[1]:+.3f}]" if low_high else "[no data]"
            note = "" if rule["significant"] else ", not significant"
            lines.append(f"  gate {rule['rule']} arm {rule['arm']}: mean {_fmt(rule['mean_difference'])} {bounds} (n={rule['n']}{note}) -> {rule['verdict'].upper()}")
        for side, key in (("only in this run", "only_in_run"), ("only in the baseline", "only_in_baseline")):
            if baseline.get(key):
                lines.append(f"  samples {side}: {', '.join(baseline[key])}")
        for arm, changes in baseline["arms"].items():
            lines.append(f"  {arm}: {changes['improved']} improved, {changes['regressed']} regressed, {changes['unchanged']} unchanged")
            for change in changes["regressions"][:20]:
                lines.append(f"    REGRESSED {change['id']} ({change['repo']}): {change['why']}")
            for change in changes["improvements"][:20]:
                lines.append(f"    improved  {change['id']} ({change['repo']}): {change['why']}")
    for failure in bench.failures:
        lines.append(f"retrieval-bench: {failure}")
    if bench.updated_baseline:
        lines.append(f"baseline updated: {bench.settings.baseline}")
    if report.get("missing"):
        lines.append(f"samples with no record: {', '.join(report['missing'])}")
    if bench.settings.report is not None:
        lines.append(f"report written to {bench.settings.report}")
    return lines
