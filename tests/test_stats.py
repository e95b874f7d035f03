"""Tests for pytest_retrieval_bench.scoring.stats.

scipy and statsmodels are used here as independent oracles only; stats.py
itself must not import them (checked below).
"""

from __future__ import annotations

import ast
import hashlib
import math
import random
import sys
from fractions import Fraction
from pathlib import Path

import numpy
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from pytest_retrieval_bench.scoring import stats
from pytest_retrieval_bench.scoring.stats import (
    bootstrap_interval,
    interval_seed,
    latency_summary,
    mean,
    median_absolute_deviation,
    minimum_detectable_effect,
    nearest_rank,
    paired_t_test,
    t_cdf,
    t_ppf,
    wilson_interval,
)

FAST = settings(max_examples=100, deadline=None)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


def _close(actual: float, expected: float, rel: float = 1e-9, scale: float = 0.0) -> bool:
    """Relative comparison; ``scale`` gives a tiny absolute floor (1e-12 * scale)
    for values that are near zero only through cancellation."""
    return abs(actual - expected) <= max(rel * abs(expected), 1e-12 * scale)


# --------------------------------------------------------------------------
# module hygiene
# --------------------------------------------------------------------------


def test_runtime_imports_are_stdlib_and_numpy_only():
    """stats and the t distribution it uses import the standard library and numpy, and stats the t module."""
    from pytest_retrieval_bench.scoring import student_t

    imported = set()
    for module in (stats, student_t):
        for node in ast.walk(ast.parse(Path(module.__file__).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module if node.module.startswith("pytest_retrieval_bench") else node.module.split(".")[0])
    assert not imported & {"scipy", "statsmodels", "pytest", "hypothesis"}
    assert imported - {"numpy", "pytest_retrieval_bench.scoring.student_t"} <= sys.stdlib_module_names, imported


# --------------------------------------------------------------------------
# Wilson
# --------------------------------------------------------------------------

WILSON_GRID = sorted(
    {(k, n) for n in (1, 2, 3, 5, 10, 17, 100, 1000) for k in (0, 1, 2, n // 3, n // 2, n - 1, n) if 0 <= k <= n}
)


@pytest.mark.parametrize(("k", "n"), WILSON_GRID)
def test_wilson_matches_statsmodels_and_scipy(k, n):
    low, high = wilson_interval(k, n)
    sm_low, sm_high = proportion_confint(k, n, alpha=0.05, method="wilson")
    sp = scipy.stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert abs(low - sm_low) <= 1e-12 and abs(high - sm_high) <= 1e-12
    assert abs(low - sp.low) <= 1e-12 and abs(high - sp.high) <= 1e-12
    assert type(low) is float and type(high) is float


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.9, 0.99])
def test_wilson_other_confidence_levels(confidence):
    for k, n in [(0, 7), (3, 7), (40, 123), (999, 1000)]:
        low, high = wilson_interval(k, n, confidence)
        sm_low, sm_high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
        assert abs(low - sm_low) <= 1e-12 and abs(high - sm_high) <= 1e-12


def test_wilson_edges():
    assert wilson_interval(0, 0) is None
    assert wilson_interval(0, 5)[0] == 0.0
    assert wilson_interval(5, 5)[1] == 1.0
    with pytest.raises(ValueError):
        wilson_interval(6, 5)
    with pytest.raises(ValueError):
        wilson_interval(-1, 5)
    with pytest.raises(ValueError):
        wilson_interval(1, 5, confidence=1.0)


@st.composite
def k_n(draw):
    n = draw(st.integers(min_value=1, max_value=5000))
    k = draw(st.integers(min_value=0, max_value=n))
    return k, n


@FAST
@given(k_n())
def test_wilson_properties(kn):
    k, n = kn
    low, high = wilson_interval(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0
    assert low < high
    # Same proportion, half the data -> strictly wider interval.
    low2, high2 = wilson_interval(2 * k, 2 * n)
    assert high - low > high2 - low2


# --------------------------------------------------------------------------
# seeds and bootstrap
# --------------------------------------------------------------------------


def test_interval_seed_is_sha256_prefix():
    # sha256(b"abc") = ba7816bf8f01cfea 414140de5dae2223 ... (FIPS 180-2 test vector)
    assert interval_seed("abc") == 0xBA7816BF8F01CFEA
    name = "ndcg@10/bm25-vs-dense/ünïcode"
    expected = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big")
    assert interval_seed(name) == expected
    assert type(interval_seed(name)) is int
    assert interval_seed("a") != interval_seed("b")


def _plain_bootstrap(diffs, name, resamples, cut):
    """Reference: same generator and draws, but pure-Python means and sorting."""
    n = len(diffs)
    rng = numpy.random.default_rng(interval_seed(name))
    idx = rng.integers(0, n, size=(resamples, n)).tolist()
    means = sorted(math.fsum(diffs[i] for i in row) / n for row in idx)
    return means[cut], means[resamples - cut - 1]


@pytest.mark.parametrize(
    ("n", "seed", "resamples", "cut"),
    [(1, 0, 400, 10), (2, 1, 400, 10), (7, 2, 1000, 25), (50, 3, 4000, 100), (333, 4, 600, 15)],
)
def test_bootstrap_matches_plain_loop(n, seed, resamples, cut):
    r = random.Random(seed)
    diffs = [r.gauss(0.2, 1.0) for _ in range(n)]
    name = f"metric-{seed}"
    got = bootstrap_interval(diffs, name, resamples=resamples, cut=cut)
    ref = _plain_bootstrap(diffs, name, resamples, cut)
    assert abs(got[0] - ref[0]) <= 1e-12 and abs(got[1] - ref[1]) <= 1e-12
    assert type(got[0]) is float and type(got[1]) is float


def test_bootstrap_default_is_95_percent_rule():
    r = random.Random(11)
    diffs = [r.choice([0.0, 0.0, 1.0, -1.0, 0.5]) for _ in range(40)]
    assert bootstrap_interval(diffs, "x") == pytest.approx(_plain_bootstrap(diffs, "x", 4000, 100), abs=1e-12)


def test_bootstrap_seeded_by_name():
    r = random.Random(5)
    diffs = [r.random() - 0.4 for _ in range(60)]
    a = bootstrap_interval(diffs, "recall@5")
    assert bootstrap_interval(list(diffs), "recall@5") == a
    assert bootstrap_interval(diffs, "recall@10") != a


def test_bootstrap_different_names_draw_different_indices():
    n = 25
    d1 = numpy.random.default_rng(interval_seed("alpha")).integers(0, n, size=(10, n))
    d2 = numpy.random.default_rng(interval_seed("beta")).integers(0, n, size=(10, n))
    assert not numpy.array_equal(d1, d2)


@pytest.mark.parametrize("n", [1, 2, 7, 64, 1001])
@pytest.mark.parametrize("block_rows", [1, 3, 8, 97])
def test_bootstrap_block_draws_equal_single_draw(n, block_rows):
    resamples = 200
    values = numpy.asarray(random.Random(n).choices(range(-50, 50), k=n), dtype=numpy.float64) / 7.0
    seed = interval_seed(f"blocks-{n}")
    single = numpy.random.default_rng(seed).integers(0, n, size=(resamples, n))
    expected_means = values[single].mean(axis=1)
    blocked = stats._bootstrap_means(values, seed, resamples, block_rows)
    assert numpy.array_equal(blocked, expected_means)
    # The integers themselves also match when drawn in row blocks.
    rng = numpy.random.default_rng(seed)
    rows = []
    done = 0
    while done < resamples:
        take = min(block_rows, resamples - done)
        rows.append(rng.integers(0, n, size=(take, n)))
        done += take
    assert numpy.array_equal(numpy.vstack(rows), single)


def test_bootstrap_public_result_independent_of_block_size(monkeypatch):
    r = random.Random(3)
    diffs = [r.gauss(0, 1) for _ in range(301)]
    whole = bootstrap_interval(diffs, "blk", resamples=500, cut=12)
    monkeypatch.setattr(stats, "_BOOTSTRAP_BLOCK_ELEMENTS", 301 * 7 + 5)  # 7 rows per block
    assert bootstrap_interval(diffs, "blk", resamples=500, cut=12) == whole
    monkeypatch.setattr(stats, "_BOOTSTRAP_BLOCK_ELEMENTS", 1)  # one row per block
    assert bootstrap_interval(diffs, "blk", resamples=500, cut=12) == whole


def test_bootstrap_edges():
    assert bootstrap_interval([], "x") is None
    assert bootstrap_interval([0.1, 0.1, 0.1], "x") == (0.1, 0.1)
    assert bootstrap_interval([0.0] * 10, "x") == (0.0, 0.0)
    assert bootstrap_interval([2.5], "x") == (2.5, 2.5)
    with pytest.raises(ValueError):
        bootstrap_interval([1.0, 2.0], "x", resamples=200, cut=100)
    with pytest.raises(ValueError):
        bootstrap_interval([1.0, float("nan")], "x")


def test_bootstrap_large_n_runs():
    diffs = numpy.random.default_rng(0).normal(0.05, 1.0, size=5000).tolist()
    low, high = bootstrap_interval(diffs, "big")
    m = mean(diffs)
    # 95% interval of a mean with sd ~1, n=5000: half-width ~ 1.96/sqrt(5000) ~ 0.028.
    assert low < m < high
    assert 0.04 < high - low < 0.07


@FAST
@given(st.lists(finite, min_size=1, max_size=40), st.text(max_size=10))
def test_bootstrap_properties(diffs, name):
    low, high = bootstrap_interval(diffs, name, resamples=200, cut=5)
    assert low <= high
    assert min(diffs) <= low and high <= max(diffs)


# --------------------------------------------------------------------------
# Student t
# --------------------------------------------------------------------------

T_DFS = [1, 2, 5, 30, 1000]
T_PROBS = [1e-10, 1e-4, 0.001, 0.01, 0.025, 0.05, 0.2, 0.5, 0.8, 0.9, 0.95, 0.975, 0.99, 0.999, 1 - 1e-7]
T_POINTS = [-1e5, -40.0, -6.0, -2.5, -1.0, -0.3, 0.0, 0.3, 1.0, 2.0, 2.5, 6.0, 40.0, 1e5]


@pytest.mark.parametrize("df", T_DFS)
def test_t_ppf_matches_scipy(df):
    for p in T_PROBS:
        got = t_ppf(p, df)
        expected = scipy.stats.t.ppf(p, df)
        assert _close(got, expected, rel=1e-9, scale=1e-3), (p, df, got, expected)
        assert type(got) is float


@pytest.mark.parametrize("df", T_DFS)
def test_t_cdf_matches_scipy(df):
    for t in T_POINTS:
        got = t_cdf(t, df)
        # Relative tolerance also on tiny lower-tail values (t = -1e5 gives ~1e-200).
        assert _close(got, scipy.stats.t.cdf(t, df), rel=1e-9), (t, df)
        assert type(got) is float


def test_t_ppf_cdf_round_trip_and_symmetry():
    for df in (1, 3, 17, 250):
        for p in (0.01, 0.3, 0.7, 0.99):
            assert t_cdf(t_ppf(p, df), df) == pytest.approx(p, rel=1e-12)
            assert t_ppf(1 - p, df) == pytest.approx(-t_ppf(p, df), rel=1e-12)
    assert t_ppf(0.5, 4) == 0.0
    with pytest.raises(ValueError):
        t_ppf(1.0, 4)
    with pytest.raises(ValueError):
        t_cdf(1.0, 0)


# --------------------------------------------------------------------------
# paired t-test
# --------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 5, 12, 40, 500])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_paired_t_test_matches_scipy(n, seed):
    rng = numpy.random.default_rng(1000 * n + seed)
    a = rng.normal(0.5, 1.0, size=n)
    b = a + rng.normal(0.3, 1.0, size=n)
    diffs = (a - b).tolist()
    res = paired_t_test(diffs)
    ref = scipy.stats.ttest_rel(a, b)
    ci = ref.confidence_interval(confidence_level=0.95)
    assert res["n"] == n and res["df"] == n - 1
    assert _close(res["mean"], float(numpy.mean(a - b)), rel=1e-9, scale=res["sd"])
    assert _close(res["sd"], float(numpy.std(a - b, ddof=1)), rel=1e-9)
    assert _close(res["t"], float(ref.statistic), rel=1e-9)
    assert _close(res["p"], float(ref.pvalue), rel=1e-9)
    assert _close(res["ci_low"], float(ci.low), rel=1e-9, scale=res["sd"])
    assert _close(res["ci_high"], float(ci.high), rel=1e-9, scale=res["sd"])
    for key, value in res.items():
        assert type(value) is (int if key in ("n", "df") else float), key


def test_paired_t_test_other_confidence_and_strong_effect():
    rng = numpy.random.default_rng(7)
    a = rng.normal(size=200)
    b = a - 1.0 + rng.normal(0, 0.5, size=200)  # huge effect: p ~ 1e-80
    res = paired_t_test((a - b).tolist(), confidence=0.9)
    ref = scipy.stats.ttest_rel(a, b)
    ci = ref.confidence_interval(confidence_level=0.9)
    assert 0 < res["p"] < 1e-40
    assert _close(res["p"], float(ref.pvalue), rel=1e-9)
    assert _close(res["ci_low"], float(ci.low), rel=1e-9)
    assert _close(res["ci_high"], float(ci.high), rel=1e-9)


def test_paired_t_test_edge_cases():
    empty = paired_t_test([])
    assert empty == {"n": 0, "mean": None, "sd": None, "t": None, "df": None, "p": None, "ci_low": None, "ci_high": None}
    one = paired_t_test([0.25])
    assert one == {"n": 1, "mean": 0.25, "sd": None, "t": None, "df": None, "p": None, "ci_low": None, "ci_high": None}
    zeros = paired_t_test([0.0] * 5)
    assert zeros == {"n": 5, "mean": 0.0, "sd": 0.0, "t": None, "df": 4, "p": 1.0, "ci_low": 0.0, "ci_high": 0.0}
    const = paired_t_test([0.5, 0.5, 0.5])
    assert const == {"n": 3, "mean": 0.5, "sd": 0.0, "t": None, "df": 2, "p": 0.0, "ci_low": 0.5, "ci_high": 0.5}
    # Constant values whose float mean is not exactly the value still count as sd == 0.
    tenth = paired_t_test([0.1, 0.1, 0.1])
    assert tenth["sd"] == 0.0 and tenth["t"] is None and tenth["p"] == 0.0
    assert tenth["ci_low"] == tenth["ci_high"] == tenth["mean"]
    with pytest.raises(ValueError):
        paired_t_test([1.0, float("inf")])


def test_equal_deltas_from_different_bases_have_no_t_as_in_cce():
    """Seven MRR deltas of 1/6 computed as 1/2 - 1/3, 1/3 - 1/6 and 1/6 - 0 differ in their last bits;
    within 16 machine epsilons of their magnitude they are constant (cce-rust's rule), so no t."""
    deltas = [1 / 2 - 1 / 3, 1 / 3 - 1 / 6, 1 / 6 - 0, 1 / 2 - 1 / 3, 1 / 3 - 1 / 6, 1 / 6 - 0, 1 / 2 - 1 / 3]
    assert len(set(deltas)) == 2  # not bit-identical
    result = paired_t_test(deltas)
    assert result["sd"] == 0.0 and result["t"] is None and result["p"] == 0.0 and result["ci_low"] == result["ci_high"] == result["mean"]
    assert paired_t_test([1e-17, -1e-17, 1e-17])["t"] is not None  # at that magnitude they differ: a t is computed, as cce does
    assert paired_t_test([1 / 6, 1 / 6 + 1e-12, 1 / 6])["t"] is not None


@FAST
@given(st.lists(finite, min_size=0, max_size=30), st.randoms(use_true_random=False))
def test_paired_t_test_order_invariant(diffs, rnd):
    shuffled = list(diffs)
    rnd.shuffle(shuffled)
    a, b = paired_t_test(diffs), paired_t_test(shuffled)
    # fsum makes this exact; the brief only requires 1e-12.
    assert a == b


# --------------------------------------------------------------------------
# minimum detectable effect
# --------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 10, 100, 5000])
@pytest.mark.parametrize(("alpha", "power"), [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5)])
def test_mde_matches_formula(n, alpha, power):
    sd = 0.37
    expected = (scipy.stats.t.ppf(1 - alpha / 2, n - 1) + scipy.stats.t.ppf(power, n - 1)) * sd / math.sqrt(n)
    got = minimum_detectable_effect(sd, n, alpha=alpha, power=power)
    assert type(got) is float
    assert _close(got, float(expected), rel=1e-9)


def test_mde_edges():
    assert minimum_detectable_effect(None, 50) is None
    assert minimum_detectable_effect(1.0, 1) is None
    assert minimum_detectable_effect(1.0, 0) is None
    assert minimum_detectable_effect(0.0, 10) == 0.0
    # n=100, sd=1: roughly (1.984 + 0.845) / 10.
    assert minimum_detectable_effect(1.0, 100) == pytest.approx(0.2829, abs=1e-3)


# --------------------------------------------------------------------------
# nearest rank, MAD, latency
# --------------------------------------------------------------------------


def test_nearest_rank_hand_computed():
    values = [35, 20, 50, 15, 40]  # sorted: 15, 20, 35, 40, 50 (n = 5)
    assert nearest_rank(values, 0.05) == 15  # ceil(0.25) = 1
    assert nearest_rank(values, 0.30) == 20  # ceil(1.5) = 2
    assert nearest_rank(values, 0.40) == 20  # ceil(2.0) = 2
    assert nearest_rank(values, 0.50) == 35  # ceil(2.5) = 3
    assert nearest_rank(values, 1.00) == 50  # ceil(5) = 5
    assert nearest_rank([3, 1, 4, 2], 0.5) == 2  # ceil(2) = 2: lower median, no interpolation
    assert nearest_rank([7.5], 0.01) == 7.5  # ceil(0.01) = 1
    # 0.07 * 100 is 7.000000000000001 in floats; rank must still be 7.
    assert nearest_rank(list(range(1, 101)), 0.07) == 7
    assert nearest_rank(list(range(1, 21)), 0.95) == 19  # ceil(19) = 19
    assert type(nearest_rank([1, 2, 3], 0.5)) is float


def test_nearest_rank_errors():
    with pytest.raises(ValueError):
        nearest_rank([], 0.5)
    with pytest.raises(ValueError):
        nearest_rank([1.0], 0.0)
    with pytest.raises(ValueError):
        nearest_rank([1.0], 1.5)


def test_median_absolute_deviation_hand_computed():
    # median: n=7, rank ceil(3.5)=4 of [1,1,2,2,4,6,9] -> 2
    # |x-2| = 1,1,0,0,2,4,7 -> sorted 0,0,1,1,2,4,7 -> rank 4 -> 1
    assert median_absolute_deviation([1, 1, 2, 2, 4, 6, 9]) == 1.0
    # median: n=6, rank 3 of [1,2,3,4,100,200] -> 3
    # |x-3| = 2,1,0,1,97,197 -> sorted 0,1,1,2,97,197 -> rank 3 -> 1
    assert median_absolute_deviation([200, 1, 100, 2, 4, 3]) == 1.0
    # median of [10, 20]: rank 1 -> 10; deviations 0, 10 -> rank 1 -> 0
    assert median_absolute_deviation([20, 10]) == 0.0


def test_latency_summary():
    assert latency_summary([1.0] * 29) == "NOT_RUN"
    assert latency_summary([]) == "NOT_RUN"
    assert latency_summary([1.0] * 5, min_samples=5) != "NOT_RUN"
    values = [float(v) for v in range(1, 31)]
    random.Random(0).shuffle(values)
    # n = 30: p50 rank ceil(15) = 15 -> 15; p95 rank ceil(28.5) = 29 -> 29; max 30.
    # MAD: m = 15; |x-15| sorted = 0,1,1,2,2,...,14,14,15; rank 15 -> 7.
    summary = latency_summary(values)
    assert summary == {"n": 30, "p50": 15.0, "p95": 29.0, "max": 30.0, "mad": 7.0}
    assert "mean" not in summary
    assert all(type(v) is float for k, v in summary.items() if k != "n")


# --------------------------------------------------------------------------
# mean
# --------------------------------------------------------------------------


def exactly_rounded_sum(values: list[float]) -> float:
    """The floats' exact sum (as fractions), rounded once: what an exactly rounded sum must give."""
    return float(sum(map(Fraction, values), Fraction(0)))


def test_mean_is_exactly_rounded():
    assert mean([]) is None
    cancelling = [1e16, 1.0, -1e16]
    assert (cancelling[0] + cancelling[1]) + cancelling[2] == 0.0  # adding in order loses the 1.0
    assert mean(cancelling) == exactly_rounded_sum(cancelling) / 3 == 1.0 / 3.0
    assert mean([0.1] * 10) == 0.1
    assert type(mean([1, 2])) is float
    with pytest.raises(ValueError):
        mean([float("nan")])


@FAST
@given(st.lists(st.floats(min_value=-1e300, max_value=1e300, allow_nan=False), min_size=1, max_size=60))
def test_mean_is_the_exactly_rounded_sum_over_the_count(values):
    assert mean(values) == exactly_rounded_sum(values) / len(values)


@FAST
@given(
    st.lists(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), min_size=1, max_size=60),
    st.randoms(use_true_random=False),
)
def test_mean_order_and_split_invariant(values, rnd):
    shuffled = list(values)
    rnd.shuffle(shuffled)
    assert mean(values) == mean(shuffled)
    # Records split over "workers" and concatenated in another order.
    cut = rnd.randint(0, len(values))
    assert mean(shuffled[cut:] + shuffled[:cut]) == mean(values)


def test_plain_sum_adds_left_to_right_on_every_python():
    """The trajectory means and cce's t-test add as the bench and cce do (Python 3.11's `sum`): no
    compensation, so 1e16 + 1.0 is lost, where 3.12's builtin `sum` keeps it."""
    from pytest_retrieval_bench.scoring.summation import plain_sum

    assert plain_sum([1e16, 1.0, -1e16]) == 0.0
    assert plain_sum([]) == 0.0
    values = [0.1] * 10 + [1e-17, 3.0, -2.5]
    total = 0.0
    for value in values:
        total += value
    assert plain_sum(iter(values)) == total
