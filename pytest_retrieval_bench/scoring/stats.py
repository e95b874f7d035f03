"""Pure statistical helpers for the benchmark report.

Everything here works on plain data and returns plain Python builtins
(``float``, ``int``, ``dict``, ``tuple``, ``None``, ``str``), never numpy
scalars, because results are serialised with orjson and shipped between
worker processes.  The only runtime dependencies are the standard library and
numpy; scipy/statsmodels are used by the test-suite as oracles only.

Determinism matters more than speed: the same inputs must give byte-identical
output no matter how records were split over workers.  Hence sums use
``math.fsum`` (exactly rounded, so independent of summation order), bootstrap
seeds come from SHA-256 of a name (never ``hash()``), and percentiles use the
nearest-rank rule (no interpolation).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from fractions import Fraction
from statistics import NormalDist

import numpy

__all__ = [
    "wilson_interval",
    "interval_seed",
    "bootstrap_interval",
    "paired_t_test",
    "minimum_detectable_effect",
    "t_cdf",
    "t_ppf",
    "nearest_rank",
    "median_absolute_deviation",
    "latency_summary",
    "mean",
]

# Maximum number of resample indices materialised at once by the bootstrap
# (2**22 int64 indices = 32 MiB, plus the same again for the gathered floats).
_BOOTSTRAP_BLOCK_ELEMENTS = 1 << 22


def _finite_floats(values: Sequence[float], what: str) -> list[float]:
    """Convert to a list of Python floats, refusing NaN/inf (they would poison
    sums and sorting silently)."""
    out = [float(v) for v in values]
    for v in out:
        if not math.isfinite(v):
            raise ValueError(f"{what}: non-finite value {v!r}")
    return out


def _check_open_unit(value: float, what: str) -> float:
    value = float(value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{what} must be strictly between 0 and 1, got {value!r}")
    return value


# --------------------------------------------------------------------------
# Means
# --------------------------------------------------------------------------


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean as ``math.fsum(values) / n``; ``None`` when empty.

    ``math.fsum`` is exactly rounded, so the result does not depend on the
    order of ``values``: summaries are byte-identical however records were
    distributed over workers.  Non-finite values raise ``ValueError``.
    """
    xs = _finite_floats(values, "mean")
    if not xs:
        return None
    return math.fsum(xs) / len(xs)


# --------------------------------------------------------------------------
# Wilson interval
# --------------------------------------------------------------------------


def wilson_interval(
    successes: int, n: int, confidence: float = 0.95
) -> tuple[float, float] | None:
    """Wilson score interval for a binomial proportion ``successes / n``.

    Used instead of the normal (Wald) interval because it behaves well at 0 and
    n successes and for small n.  ``z`` is the standard-normal quantile at
    ``(1 + confidence) / 2`` (``statistics.NormalDist().inv_cdf``).  Returns
    ``None`` when ``n == 0``.  The bounds are clamped to ``[0, 1]``; the lower
    bound is exactly 0.0 when ``successes == 0`` and the upper bound exactly 1.0
    when ``successes == n`` (their true values; this only removes rounding).
    """
    successes = int(successes)
    n = int(n)
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    confidence = _check_open_unit(confidence, "confidence")
    if n == 0:
        return None
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    z2 = z * z
    p = successes / n
    denom = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, center - half)
    high = 1.0 if successes == n else min(1.0, center + half)
    return (float(low), float(high))


# --------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------


def interval_seed(name: str) -> int:
    """Stable 64-bit seed derived from ``name``.

    ``int.from_bytes(sha256(name.encode("utf-8")).digest()[:8], "big")``.
    Python's ``hash()`` is salted per process, so it would make bootstrap
    intervals differ between runs and workers.
    """
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big")


def _bootstrap_means(
    values: numpy.ndarray, seed: int, resamples: int, block_rows: int
) -> numpy.ndarray:
    """Resample means, drawing ``block_rows`` rows of indices at a time.

    Generator.integers fills row-major from one stream, so consecutive blocks of
    rows drawn from the same generator are the same numbers as a single
    ``rng.integers(0, n, size=(resamples, n))`` call; blocking only bounds
    memory (the test-suite checks the equivalence).
    """
    n = values.shape[0]
    rng = numpy.random.default_rng(seed)
    means = numpy.empty(resamples, dtype=numpy.float64)
    block_rows = max(1, int(block_rows))
    start = 0
    while start < resamples:
        rows = min(block_rows, resamples - start)
        idx = rng.integers(0, n, size=(rows, n))
        means[start : start + rows] = values[idx].mean(axis=1)
        start += rows
    return means


def bootstrap_interval(
    diffs: Sequence[float], name: str, resamples: int = 4000, cut: int = 100
) -> tuple[float, float] | None:
    """Percentile-bootstrap interval for the mean of ``diffs``.

    Rule (exactly): ``rng = numpy.random.default_rng(interval_seed(name))``;
    ``idx = rng.integers(0, n, size=(resamples, n))``;
    ``means = numpy.asarray(diffs, dtype=numpy.float64)[idx].mean(axis=1)``;
    sort ``means`` ascending; the interval is
    ``(means[cut], means[resamples - cut - 1])``, i.e. drop the ``cut`` lowest
    and ``cut`` highest resample means and take the extremes of what remains
    (defaults: 4000 resamples, 100 cut from each end, a 95% interval).
    Both ends are then clamped to ``[min(diffs), max(diffs)]``, which only
    removes floating-point rounding excursions of the numpy mean.

    Seeding from the name (rather than globally) keeps each interval
    reproducible on its own, independent of which other intervals were computed
    or in which order.  The draws index positions, so the result depends on the
    order of ``diffs``: callers must pass them in a canonical order (e.g. sorted
    by sample id).  Indices are drawn in blocks of rows for large inputs, which
    yields the same numbers as the single call above.  Returns ``None`` when
    ``diffs`` is empty; non-finite values raise ``ValueError``.
    """
    xs = _finite_floats(diffs, "bootstrap_interval")
    resamples = int(resamples)
    cut = int(cut)
    if cut < 0 or resamples <= 2 * cut:
        raise ValueError(f"need 0 <= cut and resamples > 2*cut, got resamples={resamples}, cut={cut}")
    n = len(xs)
    if n == 0:
        return None
    values = numpy.asarray(xs, dtype=numpy.float64)
    block_rows = max(1, _BOOTSTRAP_BLOCK_ELEMENTS // n)
    means = _bootstrap_means(values, interval_seed(name), resamples, block_rows)
    means.sort()
    lo_bound, hi_bound = min(xs), max(xs)
    low = min(max(float(means[cut]), lo_bound), hi_bound)
    high = min(max(float(means[resamples - cut - 1]), lo_bound), hi_bound)
    return (low, high)


# --------------------------------------------------------------------------
# Student t distribution (no scipy at runtime)
# --------------------------------------------------------------------------

_BETACF_EPS = 1e-16
_BETACF_TINY = 1e-300
_BETACF_MAXIT = 100_000


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (modified Lentz).

    Converges quickly for ``x < (a + 1) / (a + b + 2)``; callers use the
    symmetry ``I_x(a, b) = 1 - I_{1-x}(b, a)`` otherwise.
    """
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < _BETACF_TINY:
        d = _BETACF_TINY
    d = 1.0 / d
    h = d
    for m in range(1, _BETACF_MAXIT + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        if abs(d) < _BETACF_TINY:
            d = _BETACF_TINY
        c = 1.0 + aa / c
        if abs(c) < _BETACF_TINY:
            c = _BETACF_TINY
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        if abs(d) < _BETACF_TINY:
            d = _BETACF_TINY
        c = 1.0 + aa / c
        if abs(c) < _BETACF_TINY:
            c = _BETACF_TINY
        d = 1.0 / d
        delta = d * c
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


def _t_two_sided_p(t: float, df: float) -> float:
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
    half_tail = 0.5 * _t_two_sided_p(t, df)
    return half_tail if t < 0.0 else 1.0 - half_tail


def _t_log_pdf(t: float, df: float) -> float:
    return (
        math.lgamma((df + 1.0) / 2.0)
        - math.lgamma(df / 2.0)
        - 0.5 * math.log(df * math.pi)
        - (df + 1.0) / 2.0 * math.log1p(t * t / df)
    )


def t_ppf(p: float, df: float) -> float:
    """Student-t quantile: the ``t`` with ``t_cdf(t, df) == p``.

    Found by safeguarded Newton iteration on the upper-tail probability inside
    a bracket that is always maintained (bisection whenever Newton would leave
    it), so it cannot diverge even for df = 1 and extreme ``p``.
    """
    p = _check_open_unit(p, "p")
    df = float(df)
    if not df > 0.0:
        raise ValueError(f"df must be positive, got {df!r}")
    if p == 0.5:
        return 0.0
    sign = 1.0 if p > 0.5 else -1.0
    q = 1.0 - p if p > 0.5 else p  # target upper-tail probability, < 0.5

    def upper_tail(t: float) -> float:
        return 0.5 * _t_two_sided_p(t, df)

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


# --------------------------------------------------------------------------
# Paired t-test and minimum detectable effect
# --------------------------------------------------------------------------


def _sample_sd(xs: list[float], m: float) -> float:
    """Sample standard deviation (ddof = 1) with an order-invariant sum."""
    if max(xs) == min(xs):
        return 0.0
    return math.sqrt(math.fsum((x - m) * (x - m) for x in xs) / (len(xs) - 1))


def paired_t_test(diffs: Sequence[float], confidence: float = 0.95) -> dict:
    """Two-sided one-sample t-test of ``mean(diffs) == 0``.

    Testing the per-sample differences against 0 is exactly the paired t-test
    of the two arms (scipy's ``ttest_rel``).  Returns a dict with keys
    ``n`` (int), ``mean``, ``sd`` (sample sd, ddof = 1), ``t``, ``df`` (int,
    ``n - 1``), ``p`` (two-sided) and ``ci_low``/``ci_high`` (the ``confidence``
    interval ``mean -/+ t_{(1+confidence)/2, df} * sd / sqrt(n)``).

    Edge cases:

    * ``n == 0``: ``mean``, ``sd``, ``t``, ``df``, ``p`` and the CI are ``None``.
    * ``n == 1``: ``mean`` is the value; ``sd``, ``t``, ``df``, ``p`` and the CI
      are ``None``.
    * all differences identical (``sd == 0``), ``n >= 2``: ``sd = 0.0``,
      ``df = n - 1``, ``t = None``; if ``mean == 0`` then ``p = 1.0`` and
      CI ``(0.0, 0.0)``; otherwise ``p = 0.0`` and CI ``(mean, mean)``.
      (scipy returns NaN/inf here instead.)

    Sums use ``math.fsum``, so the result does not depend on the order of
    ``diffs``.  Non-finite values raise ``ValueError``.
    """
    xs = _finite_floats(diffs, "paired_t_test")
    confidence = _check_open_unit(confidence, "confidence")
    n = len(xs)
    result: dict = {
        "n": n,
        "mean": None,
        "sd": None,
        "t": None,
        "df": None,
        "p": None,
        "ci_low": None,
        "ci_high": None,
    }
    if n == 0:
        return result
    m = math.fsum(xs) / n
    result["mean"] = m
    if n < 2:
        return result
    df = n - 1
    sd = _sample_sd(xs, m)
    result["sd"] = sd
    result["df"] = df
    if sd == 0.0:
        if m == 0.0:
            result.update(p=1.0, ci_low=0.0, ci_high=0.0)
        else:
            result.update(p=0.0, ci_low=m, ci_high=m)
        return result
    se = sd / math.sqrt(n)
    t = m / se
    tcrit = t_ppf(0.5 + confidence / 2.0, df)
    result["t"] = float(t)
    result["p"] = float(_t_two_sided_p(t, df))
    result["ci_low"] = float(m - tcrit * se)
    result["ci_high"] = float(m + tcrit * se)
    return result


def minimum_detectable_effect(
    sd: float | None, n: int, alpha: float = 0.05, power: float = 0.8
) -> float | None:
    """Smallest true mean difference the paired design detects reliably.

    ``MDE = (t_{1-alpha/2, n-1} + t_{power, n-1}) * sd / sqrt(n)``, where
    ``sd`` is the standard deviation of the per-sample differences: a true
    effect this large is found significant (two-sided, level ``alpha``) with
    probability about ``power``.  Reported next to non-significant results so
    "no difference found" is not read as "no difference".  ``None`` when
    ``n < 2`` or ``sd is None``.
    """
    if sd is None or int(n) < 2:
        return None
    sd = float(sd)
    if not math.isfinite(sd) or sd < 0.0:
        raise ValueError(f"sd must be finite and >= 0, got {sd!r}")
    alpha = _check_open_unit(alpha, "alpha")
    power = _check_open_unit(power, "power")
    n = int(n)
    df = n - 1
    return float((t_ppf(1.0 - alpha / 2.0, df) + t_ppf(power, df)) * sd / math.sqrt(n))


# --------------------------------------------------------------------------
# Percentiles and latency
# --------------------------------------------------------------------------


def nearest_rank(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile: ``sorted(values)[rank - 1]`` with
    ``rank = max(1, ceil(q * n))``, ``q`` in ``(0, 1]``.

    Always returns an observed value (no interpolation), so it is exact and
    reproducible.  ``q * n`` is computed exactly from the decimal ``q`` prints
    as (``Fraction(repr(q))``), so e.g. ``q = 0.07, n = 100`` gives rank 7, not
    the 8 that float rounding (7.000000000000001) would give.  ``ValueError``
    on empty input, ``q`` outside ``(0, 1]`` or non-finite values.
    """
    xs = _finite_floats(values, "nearest_rank")
    if not xs:
        raise ValueError("nearest_rank of an empty sequence")
    q = float(q)
    if not 0.0 < q <= 1.0:
        raise ValueError(f"q must be in (0, 1], got {q!r}")
    xs.sort()
    n = len(xs)
    rank = max(1, math.ceil(Fraction(repr(q)) * n))
    rank = min(rank, n)
    return xs[rank - 1]


def median_absolute_deviation(values: Sequence[float]) -> float:
    """Median absolute deviation, nearest-rank throughout, unscaled.

    ``m = nearest_rank(values, 0.5)`` then ``nearest_rank(|x - m|, 0.5)``.
    There is no interpolation anywhere: for even n both medians are the lower
    middle value, and no 1.4826 normal-consistency factor is applied.
    """
    xs = _finite_floats(values, "median_absolute_deviation")
    m = nearest_rank(xs, 0.5)
    return nearest_rank([abs(x - m) for x in xs], 0.5)


def latency_summary(values_ms: Sequence[float], min_samples: int = 30, with_min: bool = False) -> dict | str:
    """Robust latency summary: ``{"n", "p50", "p95", "max", "mad"}`` (and ``"min"`` with `with_min`,
    which the matched snapshot latency rows report; other rows keep their bytes).

    Percentiles are nearest-rank and ``mad`` is :func:`median_absolute_deviation`.
    Latencies are heavy-tailed, so no mean is reported, ever.  Returns the
    string ``"NOT_RUN"`` when fewer than ``min_samples`` values are given, since
    a p95 from a handful of timings is noise.
    """
    xs = _finite_floats(values_ms, "latency_summary")
    if len(xs) < int(min_samples) or not xs:
        return "NOT_RUN"
    summary = {
        "n": len(xs),
        "p50": nearest_rank(xs, 0.5),
        "p95": nearest_rank(xs, 0.95),
        "max": max(xs),
        "mad": median_absolute_deviation(xs),
    }
    if with_min:
        summary["min"] = min(xs)
    return summary
