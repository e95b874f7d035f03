"""The computed sections of a report read back (summary, paired, latency, baseline), checked by the readers
that show them (`html`, `leaderboard`) before anything is rendered.

A merge never reads these sections (it rebuilds them from the details), so only a reader that
does checks them: a malformed one is refused with the file and the JSON path of its first
problem, never a traceback from deep inside a table or a plot. Absent keys are allowed (reports
of earlier versions lack some); present ones must be what this package writes.
"""

from __future__ import annotations

from typing import Any, Callable

from pytest_retrieval_bench.report.values import MAX_COUNT, MAX_MS, is_number, key, metric_problem

Problem = str | None


def _object(value: Any, where: str) -> Problem:
    return None if isinstance(value, dict) else f"{where}: expected an object, got {type(value).__name__}"


def _count(value: Any, where: str, most: float = MAX_COUNT) -> Problem:
    ok = is_number(value) and float(value).is_integer() and 0 <= value <= most
    return None if ok else f"{where}: {value!r} is not a count (a whole number from 0 to {most:g})"


def _rate(value: Any, where: str, signed: bool = False) -> Problem:
    low = -1 if signed else 0
    return None if value is None or (is_number(value) and low <= value <= 1) else f"{where}: {value!r} is not null or a number from {low} to 1"


def _interval(value: Any, where: str, signed: bool = False) -> Problem:
    low = -1 if signed else 0
    if value is None:
        return None
    ok = isinstance(value, list) and len(value) == 2 and all(is_number(v) and low <= v <= 1 for v in value) and value[0] <= value[1]
    return None if ok else f"{where}: {value!r} is not null or an interval [low, high] with {low} <= low <= high <= 1"


def _each(value: Any, where: str, check: Callable[[Any, str], Problem]) -> Problem:
    """`check` on every member of an object."""
    problem = _object(value, where)
    for name, member in (value.items() if problem is None else ()):
        problem = check(member, f"{where}{key(name)}")
        if problem:
            break
    return problem


def _summary_entry(entry: Any, where: str) -> Problem:
    problem = _object(entry, where)
    if problem:
        return problem
    for name in ("n", "positives", "errors", "abstentions"):
        if name in entry and (problem := _count(entry[name], f"{where}.{name}", entry.get("n", MAX_COUNT) if name != "n" else MAX_COUNT)):
            return problem
    for name in ("metrics", "repository_macro"):
        if name in entry and (problem := _means(entry[name], f"{where}.{name}")):
            return problem
    if "micro" in entry and (problem := _each(entry["micro"], f"{where}.micro", _rate)):
        return problem
    if "metric_n" in entry and (problem := _each(entry["metric_n"], f"{where}.metric_n", _count)):
        return problem
    if "selective_success" in entry and (problem := _rate(entry["selective_success"], f"{where}.selective_success")):
        return problem
    if "selective_success_wilson95" in entry and (problem := _interval(entry["selective_success_wilson95"], f"{where}.selective_success_wilson95")):
        return problem
    if "wilson95" in entry:
        return _each(entry["wilson95"], f"{where}.wilson95", _interval)
    return None


def _means(metrics: Any, where: str) -> Problem:
    """Means of metrics: each null or in the metric's range (a mean count need not be whole)."""
    problem = _object(metrics, where)
    for name, value in (metrics.items() if problem is None else ()):
        if value is not None and (problem := metric_problem(str(name), value, whole=False)):
            return f"{where}{key(name)}: {problem}"
    return problem


def summary_problem(summary: Any) -> Problem:
    return _each(summary, "$.summary", lambda group, where: _each(group, where, _summary_entry))


def _latency_figures(figures: Any, where: str) -> Problem:
    if isinstance(figures, str):  # NOT_RUN: too few timed items
        return None
    problem = _object(figures, where)
    if problem:
        return problem
    if "n" in figures and (problem := _count(figures["n"], f"{where}.n")):
        return problem
    for name in ("p50", "p95", "max", "mad", "min"):
        value = figures.get(name)
        if value is not None and not (is_number(value) and 0 <= value <= MAX_MS):
            return f"{where}.{name}: {value!r} is not null or a time in milliseconds (0 to {MAX_MS:g})"
    return None


def latency_problem(latency: Any) -> Problem:
    return _each(latency, "$.latency", lambda arm, where: _each(arm, where, _latency_figures))


def _paired_result(result: Any, where: str) -> Problem:
    problem = _object(result, where)
    if problem:
        return problem
    for name in ("n", "wins", "losses", "ties"):
        if name in result and (problem := _count(result[name], f"{where}.{name}")):
            return problem
    for name in ("mean_difference", "minimum_detectable_effect"):
        value = result.get(name)
        if value is not None and not is_number(value):
            return f"{where}.{name}: {value!r} is not null or a finite number"
    if problem := _interval(result.get("bootstrap95"), f"{where}.bootstrap95", signed=True):
        return problem
    if "verdict" in result and not (result["verdict"] is None or isinstance(result["verdict"], str)):
        return f"{where}.verdict: {result['verdict']!r} is not null or a string"
    test = result.get("t_test")
    if test is None:
        return None
    if problem := _object(test, f"{where}.t_test"):
        return problem
    for name in ("p", "p_holm"):
        if problem := _rate(test.get(name), f"{where}.t_test.{name}"):
            return problem
    return None


def paired_problem(paired: Any) -> Problem:
    return _each(paired, "$.paired", lambda group, where: _each(group, where, lambda comparison, at: _each(comparison, at, _paired_result)))


def _finite_or_null(value: Any, where: str) -> Problem:
    return None if value is None or is_number(value) else f"{where}: {value!r} is not null or a finite number"


def _rule(rule: Any, where: str) -> Problem:
    problem = _object(rule, where)
    if problem:
        return problem
    for name in ("rule", "form", "arm", "group", "metric", "verdict"):
        if rule.get(name) is not None and not isinstance(rule[name], str):
            return f"{where}.{name}: {rule[name]!r} is not null or a string"
    if "threshold" not in rule or not is_number(rule["threshold"]):
        return f"{where}.threshold: {rule.get('threshold')!r} is not a finite number"
    for name in ("n", "positives_needed"):
        if rule.get(name) is not None and (problem := _count(rule[name], f"{where}.{name}")):
            return problem
    if problem := _finite_or_null(rule.get("mean_difference"), f"{where}.mean_difference"):
        return problem
    if "positives_needed" in rule and not (is_number(rule.get("mean_difference")) and is_number(rule.get("n"))):
        return f"{where}: a rule with positives_needed needs a finite mean_difference and n"
    bounds = rule.get("bootstrap95")
    if bounds is not None and not (isinstance(bounds, list) and len(bounds) == 2 and all(is_number(v) for v in bounds) and bounds[0] <= bounds[1]):
        return f"{where}.bootstrap95: {bounds!r} is not null or an interval [low, high]"
    return None


def _changes(changes: Any, where: str) -> Problem:
    problem = _object(changes, where)
    if problem:
        return problem
    for name in ("improved", "regressed", "unchanged"):
        if name in changes and (problem := _count(changes[name], f"{where}.{name}")):
            return problem
    for name in ("regressions", "improvements"):
        listed = changes.get(name, [])
        if not (isinstance(listed, list) and all(isinstance(change, dict) for change in listed)):
            return f"{where}.{name}: expected a list of objects"
    return None


def baseline_problem(baseline: Any) -> Problem:
    """The comparison with a baseline a run or merge wrote (`--bench-baseline`)."""
    problem = _object(baseline, "$.baseline")
    if problem:
        return problem
    rules = baseline.get("rules", [])
    if not isinstance(rules, list):
        return "$.baseline.rules: expected a list"
    for number, rule in enumerate(rules):
        if problem := _rule(rule, f"$.baseline.rules[{number}]"):
            return problem
    for name in ("only_in_run", "only_in_baseline", "new_arms"):
        listed = baseline.get(name)
        if listed is not None and not (isinstance(listed, list) and all(isinstance(item, str) for item in listed)):
            return f"$.baseline.{name}: expected a list of strings"
    return _each(baseline.get("arms", {}), "$.baseline.arms", _changes)


CHECKS: dict[str, Callable[[Any], Problem]] = {"summary": summary_problem, "latency": latency_problem, "paired": paired_problem,
                                              "baseline": baseline_problem}


def section_problem(report: dict[str, Any], sections: tuple[str, ...]) -> Problem:
    """The first problem of the named sections a reader shows (an absent section is none)."""
    for name in sections:
        if name in report and name in CHECKS and (problem := CHECKS[name](report[name])):
            return problem
    return None
