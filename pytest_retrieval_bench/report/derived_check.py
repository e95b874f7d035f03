"""A report's summary and paired statistics checked against its own details.

Every summary figure and every paired statistic is a function of the details as written (see
`build_report`; a merge relies on it), and each record is checked against its ranking and the
sample's labels (`recompute`). So a reader that shows the summary or the paired section rebuilds
them from the details and refuses a report whose written figures differ: a number edited by hand
there is named by its JSON path instead of being shown.

The baseline arms a run was paired against are not recorded; they are read off the paired
section's `CANDIDATE vs BASELINE` keys. Each written comparison must equal the rebuilt one; the
Holm-adjusted p-values, which depend on every comparison of a group, are compared when the rebuilt
group holds the same comparisons (a baseline arm with no comparison at all would be taken for a
candidate).
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report.build import build_report, details_labels, rounded
from pytest_retrieval_bench.report.values import key

PAIR_SEPARATOR = " vs "


def rebuilt_from_details(report: dict[str, Any]) -> dict[str, Any]:
    """The report `build_report` makes of this report's details alone, paired against the baselines its
    paired section names."""
    labels = details_labels(report)
    records = [{**record, "sample_id": entry["id"], "arm": arm} for entry in report["details"] for arm, record in (entry.get("arms") or {}).items()]
    baselines = sorted({pair.rpartition(PAIR_SEPARATOR)[2] for entries in (report.get("paired") or {}).values() for pair in entries})
    return build_report(registration=report["registration"], samples=[], records=records, baselines=baselines,
                        limit=int(report["registration"].get("limit") or 20),
                        with_folds=any(label.get("partition", "unassigned") != "unassigned" for label in labels.values()), labels_override=labels)


def first_difference(written: Any, rebuilt: Any, where: str, ignore: frozenset[str] = frozenset()) -> str | None:
    """The JSON path of the first value that differs (keys in `ignore` skipped), with both values."""
    if isinstance(written, dict) and isinstance(rebuilt, dict):
        for name in sorted(set(written) | set(rebuilt)):
            if name in ignore:
                continue
            if name not in rebuilt:
                return f"{where}{key(name)} is written, but the details give no such entry"
            if name not in written:
                return f"{where}{key(name)} is missing, but the details give {_shown(rebuilt[name])}"
            found = first_difference(written[name], rebuilt[name], f"{where}{key(name)}", ignore)
            if found:
                return found
        return None
    if isinstance(written, list) and isinstance(rebuilt, list) and len(written) == len(rebuilt):
        for index, (mine, theirs) in enumerate(zip(written, rebuilt)):
            found = first_difference(mine, theirs, f"{where}[{index}]", ignore)
            if found:
                return found
        return None
    if type(written) is not type(rebuilt) and not (isinstance(written, (int, float)) and isinstance(rebuilt, (int, float))) or written != rebuilt:
        return f"{where}: {_shown(written)} is written, but the details give {_shown(rebuilt)}"
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def derived_problem(report: dict[str, Any], sections: tuple[str, ...]) -> str | None:
    """The first figure of the summary or paired section (those of `sections`) that the details do not give."""
    wanted = [name for name in ("summary", "paired") if name in sections and name in report]
    if not wanted:
        return None
    rebuilt = rounded(rebuilt_from_details(report))
    if "summary" in wanted:
        found = first_difference(report["summary"], rebuilt["summary"], "$.summary")
        if found:
            return found
    if "paired" in wanted:
        for group, entries in (report["paired"] or {}).items():
            rebuilt_entries = rebuilt["paired"].get(group, {})
            same_comparisons = set(entries) == set(rebuilt_entries)
            for pair, comparison in entries.items():
                if pair not in rebuilt_entries:
                    return f"$.paired{key(group)}{key(pair)} is written, but the details give no such comparison"
                found = first_difference(comparison, rebuilt_entries[pair], f"$.paired{key(group)}{key(pair)}",
                                         frozenset() if same_comparisons else frozenset({"p_holm"}))
                if found:
                    return found
    return None
