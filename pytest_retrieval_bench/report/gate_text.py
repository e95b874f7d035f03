"""The words every output uses for a gate rule's form and for what a failing rule would need.

One place, so the terminal, the failure message, the Markdown and the HTML page say the same.
Reports written before rules had forms hold non-inferiority rules only, and read as such.
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.report.gate import FORMS, NONINFERIOR


def form_of(rule: dict[str, Any]) -> str:
    return rule.get("form") or NONINFERIOR


def form_words(rule: dict[str, Any]) -> str:
    """`non-inferiority: lower bound >= -0.02`: the form's name and the bound that decides."""
    bound = "lower bound" if form_of(rule) == NONINFERIOR else "upper bound"
    return f"{FORMS.get(form_of(rule), form_of(rule))}: {bound} >= {rule['threshold']:+g}"


def needed_note(rule: dict[str, Any]) -> str:
    """For a failing non-inferiority rule: the positives its observed spread would need, or that none would do."""
    if "positives_needed" not in rule:
        return ""
    needed = rule["positives_needed"]
    if needed is None:
        return (f"the mean difference {rule['mean_difference']:+.3f} is not above {rule['threshold']:+g}: "
                "no number of samples would lift the lower bound to the threshold")
    return (f"at the observed spread the lower bound would reach {rule['threshold']:+g} with about {needed} positive samples "
            f"(this run paired {rule['n']})")


def failure_words(rule: dict[str, Any]) -> str:
    """A failed rule in one clause of the run's failure message: arm, form, and what it would need."""
    words = f"{rule['arm']}; {FORMS.get(form_of(rule), form_of(rule))}"
    if "positives_needed" in rule:
        needed = rule["positives_needed"]
        words += "; no sample count would pass it" if needed is None else f"; needs about {needed} positives, has {rule['n']}"
    return words


def new_arms_note(baseline: dict[str, Any]) -> str:
    arms = baseline.get("new_arms") or []
    return f"new arm(s), no baseline records, unpaired: {', '.join(arms)}" if arms else ""
