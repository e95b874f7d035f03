"""The Student t distribution without scipy at runtime: its CDF, quantile and two-sided tail,
from the regularized incomplete beta function (a continued fraction, modified Lentz).

Plain floats in and out, like the rest of `scoring`; scipy is the tests' oracle only.
"""

from __future__ import annotations

import functools
import math

__all__ = ["t_cdf", "t_ppf", "t_two_sided_p"]


_BETACF_EPS = 1e-16
_BETACF_TINY = 1e-300
_BETACF_MAXIT = 100_000


def _nonzero(value: float) -> float:
    """`value`, or the smallest step away from zero the fraction allows (Lentz's guard)."""
    return _BETACF_TINY if abs(value) < _BETACF_TINY else value


def _lentz_step(aa: float, c: float, d: float) -> tuple[float, float, float]:
    """One term `aa` of the continued fraction: the new (c, d) and the factor it multiplies h by."""
    d = 1.0 / _nonzero(1.0 + aa * d)
    c = _nonzero(1.0 + aa / c)
    return c, d, d * c


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (modified Lentz).

    Converges quickly for ``x < (a + 1) / (a + b + 2)``; callers use the
    symmetry ``I_x(a, b) = 1 - I_{1-x}(b, a)`` otherwise.
    """
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = 1.0
    d = 1.0 / _nonzero(1.0 - qab * x / qap)
    h = d
    for m in range(1, _BETACF_MAXIT + 1):
        m2 = 2 * m
        c, d, factor = _lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), c, d)  # the even term
        h *= factor
        c, d, delta = _lentz_step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), c, d)  # the odd term
        h *= delta
        if abs(delta - 1.0) < _BETACF_EPS:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge (a={a}, b={b}, x={x})")


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """Regularized incomplete beta ``I_x(a, b)``, with ``y = 1 - x`` supplied
    by the caller so it can be computed without cancellation."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = (
        a * math.log(x)
        + b * math.log(y)
        - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, y) / b


def t_two_sided_p(t: float, df: float) -> float:
    """``P(|T| >= |t|)`` for Student t with ``df`` degrees of freedom:
    ``I_{df/(df+t^2)}(df/2, 1/2)``, evaluated so that small tails keep full
    relative precision."""
    t2 = t * t
    if math.isinf(t2):
        return 0.0
    s = df + t2
    x = df / s
    y = t2 / s
    a = df / 2.0
    b = 0.5
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    if x < (a + 1.0) / (a + b + 2.0):
        return _betainc(a, b, x, y)
    # p is close to 1 here; compute the complement directly.
    return 1.0 - _betainc(b, a, y, x)


def t_cdf(t: float, df: float) -> float:
    """Student-t cumulative distribution function ``P(T <= t)``."""
    t = float(t)
    df = float(df)
    if not df > 0.0:
        raise ValueError(f"df must be positive, got {df!r}")
    if math.isnan(t):
        raise ValueError("t is NaN")
    half_tail = 0.5 * t_two_sided_p(t, df)
    return half_tail if t < 0.0 else 1.0 - half_tail


def _t_log_pdf(t: float, df: float) -> float:
    return (
        math.lgamma((df + 1.0) / 2.0)
        - math.lgamma(df / 2.0)
        - 0.5 * math.log(df * math.pi)
        - (df + 1.0) / 2.0 * math.log1p(t * t / df)
    )


@functools.lru_cache(maxsize=4096)
def t_ppf(p: float, df: float) -> float:
    """Student-t quantile: the ``t`` with ``t_cdf(t, df) == p``.

    Kept per (p, df): a report's minimum detectable effects ask for the same few quantiles
    thousands of times (each read of a report checks them again), and each is about 150 tail
    evaluations.

    Found by safeguarded Newton iteration on the upper-tail probability inside
    a bracket that is always maintained (bisection whenever Newton would leave
    it), so it cannot diverge even for df = 1 and extreme ``p``.
    """
    p = float(p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be strictly between 0 and 1, got {p!r}")
    df = float(df)
    if not df > 0.0:
        raise ValueError(f"df must be positive, got {df!r}")
    if p == 0.5:
        return 0.0
    sign = 1.0 if p > 0.5 else -1.0
    q = 1.0 - p if p > 0.5 else p  # target upper-tail probability, < 0.5

    def upper_tail(t: float) -> float:
        return 0.5 * t_two_sided_p(t, df)

    lo, hi = 0.0, 1.0
    while upper_tail(hi) > q:
        lo = hi
        hi *= 2.0
        if math.isinf(hi):
            raise ArithmeticError("t quantile out of floating-point range")
    t = 0.5 * (lo + hi)
    for _ in range(500):
        f = upper_tail(t) - q
        if f == 0.0:
            return sign * t
        if f > 0.0:
            lo = t
        else:
            hi = t
        # d(upper_tail)/dt = -pdf(t)
        step = f / math.exp(_t_log_pdf(t, df))
        candidate = t + step
        if not lo < candidate < hi:
            # Bisect; geometrically when the bracket spans orders of magnitude.
            candidate = math.sqrt(lo * hi) if lo > 0.0 and hi > 4.0 * lo else 0.5 * (lo + hi)
            step = candidate - t
        t = candidate
        if abs(step) <= 2e-16 * abs(t) or hi - lo <= 2e-16 * hi:
            break
    return sign * t
