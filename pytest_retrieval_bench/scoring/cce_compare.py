"""cce's `relevance --compare` block, computed the way cce computes it, so the strings agree.

cce pairs two backends' per-query P@k, recall, MRR and F1 (`b - a`), and reports per metric a
paired t-test: t, the two-sided p at n - 1 degrees of freedom from the regularized incomplete
beta function (the Numerical Recipes continued fraction with a 6-term Lanczos log-gamma), and a
95% interval whose critical t is found by 200 bisection steps. Deltas that are constant within
16 machine epsilons of their magnitude have no t (p is 1 when their mean is exactly 0, else 0),
and below two queries only n and the mean are given. Values are printed as cce prints them: six
decimals rounded half away from zero, signed for the delta, t and bounds. The plugin's own paired
section (bootstrap, its own t-test) is unaffected; this block exists to be set beside cce's.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from pytest_retrieval_bench.scoring.stats import constant_within_rounding
from pytest_retrieval_bench.scoring.summation import plain_sum

#: cce's metric keys, in its order, and the report metric each one is read from
METRICS = (("precision_at_k", "rel_precision@k"), ("recall", "rel_recall"), ("mrr", "rel_mrr"), ("f1", "rel_f1"))

_LANCZOS = (76.18009172947146, -86.50532032941677, 24.01409824083091, -1.231739572450155, 0.1208650973866179e-2, -0.5395239384953e-5)


def _ln_gamma(x: float) -> float:
    series = 1.000000000190015
    for j, coefficient in enumerate(_LANCZOS):
        series += coefficient / (x + 1.0 + j)
    tmp = x + 5.5
    tmp = tmp - (x + 0.5) * math.log(tmp)
    return -tmp + math.log(2.5066282746310005 * series / x)


def _clamp(value: float) -> float:
    return 1e-300 if abs(value) < 1e-300 else value


def _continued_fraction(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 / _clamp(1.0 - qab * x / qap)
    h = d
    for step in range(1, 301):
        m = float(step)
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 / _clamp(1.0 + aa * d)
        c = _clamp(1.0 + aa / c)
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 / _clamp(1.0 + aa * d)
        c = _clamp(1.0 + aa / c)
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 3e-14:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(_ln_gamma(a + b) - _ln_gamma(a) - _ln_gamma(b) + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _continued_fraction(a, b, x) / a
    return 1.0 - front * _continued_fraction(b, a, 1.0 - x) / b


def two_sided_p(t: float, df: float) -> float:
    return _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def critical_t(alpha: float, df: float) -> float:
    low, high = 0.0, 1.0
    while two_sided_p(high, df) > alpha and high < 1e300:
        high *= 2.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        if two_sided_p(middle, df) > alpha:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)


def paired_t(deltas: Sequence[float]) -> dict[str, Any]:
    """n, mean_delta, t, p and ci95 (None where cce has none) of one metric's deltas."""
    n = len(deltas)
    mean = plain_sum(deltas) / n if n else 0.0
    if n < 2:
        return {"n": n, "mean_delta": mean, "t": None, "p": None, "ci95": None}
    first = deltas[0]
    if constant_within_rounding(deltas):
        return {"n": n, "mean_delta": first, "t": None, "p": 1.0 if mean == 0.0 else 0.0, "ci95": (first, first)}
    variance = plain_sum([(delta - mean) * (delta - mean) for delta in deltas]) / (n - 1)
    error = math.sqrt(variance) / math.sqrt(n)
    t = mean / error
    half = critical_t(0.05, n - 1.0) * error
    return {"n": n, "mean_delta": mean, "t": t, "p": two_sided_p(t, n - 1.0), "ci95": (mean - half, mean + half)}


def format6(value: float) -> str:
    magnitude = abs(value) * 1_000_000.0
    scaled = math.floor(magnitude)
    if magnitude - scaled >= 0.5:  # Rust's f64::round: half away from zero (Python's round() is half to even)
        scaled += 1
    sign = "-" if value < 0.0 and scaled != 0 else ""
    return f"{sign}{scaled // 1_000_000}.{scaled % 1_000_000:06d}"


def format6_signed(value: float) -> str:
    text = format6(value)
    return text if text.startswith("-") else f"+{text}"


def stats_block(stats: dict[str, Any]) -> dict[str, Any]:
    """One metric as cce's JSON writes it: `{n, mean_delta, t, p, ci95_low, ci95_high}`."""
    interval = stats["ci95"]
    return {
        "n": stats["n"],
        "mean_delta": format6_signed(stats["mean_delta"]),
        "t": format6_signed(stats["t"]) if stats["t"] is not None else None,
        "p": format6(stats["p"]) if stats["p"] is not None else None,
        "ci95_low": format6_signed(interval[0]) if interval is not None else None,
        "ci95_high": format6_signed(interval[1]) if interval is not None else None,
    }


def compare_block(a: str, b: str, a_metrics: Sequence[dict[str, float]], b_metrics: Sequence[dict[str, float]]) -> dict[str, Any]:
    """`{"a", "b", "metrics": {precision_at_k, recall, mrr, f1}}` over paired per-query metrics."""
    metrics = {}
    for key, name in METRICS:
        deltas = [after[name] - before[name] for before, after in zip(a_metrics, b_metrics)]
        metrics[key] = stats_block(paired_t(deltas))
    return {"a": a, "b": b, "metrics": metrics}
