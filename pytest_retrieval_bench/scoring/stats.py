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

from pytest_retrieval_bench.scoring.student_t import t_cdf, t_ppf, t_two_sided_p

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
# Paired t-test and minimum detectable effect
# --------------------------------------------------------------------------


CONSTANT_EPSILONS = 16.0
"""Values within this many machine epsilons (`math.ulp(1.0)`) of their magnitude are one value (cce-rust's rule)."""


def constant_within_rounding(xs: Sequence[float]) -> bool:
    """Whether the values are one value up to rounding: 1/2 - 1/3, 1/3 - 1/6 and 1/6 - 0 are all
    1/6 but differ in their last bits, and a t-test of them would divide by rounding noise."""
    low, high = min(xs), max(xs)
    return high - low <= CONSTANT_EPSILONS * math.ulp(1.0) * max(abs(low), abs(high))


def _sample_sd(xs: list[float], m: float) -> float:
    """Sample standard deviation (ddof = 1) with an order-invariant sum; 0 for values constant
    within rounding (`constant_within_rounding`)."""
    if constant_within_rounding(xs):
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
    * all differences identical (``sd == 0``), ``n >= 2``, or equal within 16 machine
      epsilons of their magnitude (as cce-rust rules, so equal deltas computed from different
      bases are constant): ``sd = 0.0``,
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
    result["p"] = float(t_two_sided_p(t, df))
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
