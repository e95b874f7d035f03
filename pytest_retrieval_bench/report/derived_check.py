"""A report's summary and paired statistics checked against its own details.

Every summary figure and every paired statistic is a function of the details as written (see
`build_report`; a merge relies on it), and each record is checked against its ranking and the
sample's labels (`recompute`). So a reader that shows the summary or the paired section rebuilds
those sections alone from the details and refuses a report whose written figures differ: a number
edited by hand there is named by its JSON path instead of being shown.

What a later version adds to a section (a figure the rebuild has and the report lacks) is not a
difference: a saved run outlives the version that wrote it. The baseline arms a run was paired
against are not recorded; they are read off the paired section's `CANDIDATE vs BASELINE` keys,
matched against the arms the details hold. Each written comparison must equal the rebuilt one; the
Holm-adjusted p-values, which depend on every comparison of a group, are compared when the rebuilt
group holds the same comparisons (a baseline arm with no comparison at all would be taken for a
candidate).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pytest_retrieval_bench.report.build import arm_row, build_paired, build_summary, details_labels, has_folds, rounded
from pytest_retrieval_bench.report.trajectory_section import trajectory_section
from pytest_retrieval_bench.report.values import key

PAIR_SEPARATOR = " vs "


def _rows_by_arm(report: dict[str, Any], labels: dict[str, dict[str, Any]], limit: int) -> dict[str, list[dict[str, Any]]]:
    """Each arm's records as `build_report` reads them for its summary and paired sections, by sample id."""
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in sorted(report["details"], key=lambda entry: entry["id"]):
        if entry["id"] in labels and "stratum" in labels[entry["id"]]:
            for arm, record in sorted((entry.get("arms") or {}).items()):
                rows[arm].append(arm_row({**record, "sample_id": entry["id"], "arm": arm}, labels[entry["id"]], limit))
    return rows


def paired_baselines(paired: dict[str, Any], arms: set[str]) -> list[str]:
    """The baseline arms a paired section names: in `CANDIDATE vs BASELINE`, the arm the key ends in
    whose candidate is an arm too (an arm name may itself hold " vs ")."""
    found = set()
    for entries in paired.values():
        for pair in entries:
            found.update(arm for arm in arms if pair.endswith(PAIR_SEPARATOR + arm) and pair[: -len(PAIR_SEPARATOR + arm)] in arms)
    return sorted(found)


def first_difference(written: Any, rebuilt: Any, where: str, ignore: frozenset[str] = frozenset()) -> str | None:
    """The JSON path of the first written value the rebuilt one contradicts (keys in `ignore` skipped;
    keys only the rebuild has are a later version's additions, not differences)."""
    if isinstance(written, dict) and isinstance(rebuilt, dict):
        for name in sorted(written):
            if name in ignore:
                continue
            if name not in rebuilt:
                return f"{where}{key(name)} is written, but the details give no such entry"
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
    numbers = isinstance(written, (int, float)) and isinstance(rebuilt, (int, float))
    if (type(written) is not type(rebuilt) and not numbers) or written != rebuilt:
        return f"{where}: {_shown(written)} is written, but the details give {_shown(rebuilt)}"
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def derived_problem(report: dict[str, Any], sections: tuple[str, ...]) -> str | None:
    """The first figure of the summary or paired section (those of `sections`) that the details do not give."""
    if "trajectory" in sections and "trajectory" in report:  # agent arms' section, rebuilt from the details alone
        found = first_difference(report["trajectory"], rounded(trajectory_section(report["details"])), "$.trajectory")
        if found:
            return found
    wanted = [name for name in ("summary", "paired") if name in sections and name in report]
    if not wanted:
        return None
    labels = details_labels(report)
    limit = int(report["registration"].get("limit") or 20)
    with_folds = has_folds(report["registration"], labels)
    rows = _rows_by_arm(report, labels, limit)
    if "summary" in wanted:
        found = first_difference(report["summary"], rounded(build_summary(rows, limit, with_folds)), "$.summary")
        if found:
            return found
    if "paired" in wanted:
        rebuilt = rounded(build_paired(rows, paired_baselines(report["paired"] or {}, set(rows)), limit, with_folds))
        for group, entries in (report["paired"] or {}).items():
            rebuilt_entries = rebuilt.get(group, {})
            same_comparisons = set(entries) == set(rebuilt_entries)
            for pair, comparison in entries.items():
                if pair not in rebuilt_entries:
                    return f"$.paired{key(group)}{key(pair)} is written, but the details give no such comparison"
                found = first_difference(comparison, rebuilt_entries[pair], f"$.paired{key(group)}{key(pair)}",
                                         frozenset() if same_comparisons else frozenset({"p_holm"}))
                if found:
                    return found
    return None
