"""Regression tests for the numerical extremes of issue 10, each against independent truth.

Truth comes from closed forms (G_2(t) = 2 sinh(t)/t), mpmath (Bessel functions,
quadrature of the noncentral chi-square densities, the Gaussian mechanism's
curve at 60 digits), scipy's quantiles where they are accurate, or the
limiting form (delta -> 1 as sigma -> 0).  Never against the code's own output.
"""

from __future__ import annotations

import re
import warnings

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from dpmask import exact, widgets
from dpmask.exact import best as exact_best
from dpmask.paper import bounds, gq, mechanisms, table
from dpmask.exact import audit


@pytest.fixture(autouse=True)
def _no_runtime_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


# --------------------------------------------------------------------------- sigma -> 0: delta -> 1


def _mp_p1_pair_delta(eps, sigma, n):
    """Hockey stick of ncx2(n, 1/sigma^2) against chi2(n) (the pair |X|^2 = 1, |X'|^2 = 0), by mpmath.

    Densities from the Bessel form; the optimal set is {T > c} with c the root of
    p(c) = e^eps q(c); delta = int_c^inf (p - e^eps q) by adaptive quadrature.
    """
    mp.mp.dps = 30
    lam, k, e = mp.mpf(1) / mp.mpf(sigma) ** 2, mp.mpf(n), mp.mpf(eps)

    def p(t):
        return mp.mpf(1) / 2 * mp.exp(-(t + lam) / 2) * (t / lam) ** (k / 4 - mp.mpf(1) / 2) * mp.besseli(k / 2 - 1, mp.sqrt(lam * t))

    def q(t):
        return t ** (k / 2 - 1) * mp.exp(-t / 2) / (2 ** (k / 2) * mp.gamma(k / 2))

    c = mp.findroot(lambda t: mp.log(p(t)) - mp.log(q(t)) - e, k + lam / 2)
    return mp.quad(lambda t: p(t) - mp.exp(e) * q(t), [c, c + 10, c + 100, c + 1000, mp.inf])


@pytest.mark.parametrize("sigma", [1.0, 0.5, 0.3])
def test_masked_p1_delta_at_least_the_unit_pair_by_mpmath(sigma):
    """The worst pair is at least as bad as (1, 0), computed independently; and equal to it
    within 1e-8 (the book finds (1, 0) worst)."""
    truth = float(_mp_p1_pair_delta(1.0, sigma, 10))
    got = exact.masked_p1_delta(1.0, sigma, 10)
    assert got >= truth * (1 - 1e-9)
    assert got == pytest.approx(truth, rel=1e-8)


@pytest.mark.parametrize("sigma", [5e-5, 1e-5, 1e-8, 1e-15, 1e-30, 1e-75, 1e-80, 1e-150, 1e-300, 5e-324])
def test_masked_p1_delta_is_one_at_tiny_sigma(sigma):
    """Issue 10: 0.0, RuntimeError 'please report', or a ValueError naming an internal t.

    Truth: for the pair (1, 0) and the threshold sqrt(c) = 1/(2 sigma), delta >= 1 -
    Phi(-1/(2 sigma)) - e P[chi2_10 > 1/(4 sigma^2)], which is 1 to double precision
    for sigma <= 5e-5 (computed here with scipy's central laws only)."""
    s = 1.0 / (2.0 * sigma) if sigma > 1e-150 else 1e150
    lower = 1.0 - stats.norm.cdf(-s) - np.e * stats.chi2.sf(s * s, 10)
    assert lower == 1.0
    assert exact.masked_p1_delta(1.0, sigma, 10) == 1.0
    assert exact.masked_p1_log_delta(1.0, sigma, 10) == 0.0
    v, a, b = exact.masked_p1_worst_pair(1.0, sigma, 10)
    assert (v, a, b) == (0.0, 1.0, 0.0)
    # (its speed, the rigorous shortcut against the full search, is timed in benchmarks/bench_guards.py)


def test_masked_p1_delta_is_monotone_through_the_switch():
    """delta(sigma) decreases in sigma (post-processing): no dip where the rigorous bound
    hands over to the search."""
    sig = np.geomspace(1e-3, 2.0, 25)
    d = np.asarray(exact.masked_p1_delta(1.0, sig, 10))
    assert np.all(np.diff(d) <= 1e-12) and np.all((0 < d) & (d <= 1))


@pytest.mark.parametrize("p", [1, 2, 5])
def test_audit_statistic_delta_at_tiny_sigma(p):
    """audit.statistic_delta(1, 1e-300, 10, 2) was 0.0.  The audit is a lower bound on the
    release's delta, whose truth here is 1 (the projection's laws are separated)."""
    for sigma in (1e-300, 1e-80, 1e-5):
        d = audit.statistic_delta(1.0, sigma, 10, p)
        assert 1 - 1e-15 <= d <= 1.0


def test_mechanism_delta_never_zero():
    """A mechanism's delta errs upward: where it lies below 1e-300 the bound 1e-300 is reported."""
    d = exact.masked_p1_delta(50.0, 1.0, 1000)
    assert 0 < d <= 1.000001e-300
    # the true value there is far below: the unit pair's own delta underflows in mpmath-free scipy
    assert stats.chi2.sf(2000.0, 1000) < 1e-50


# --------------------------------------------------------------------------- G_q at large t


@pytest.mark.parametrize("t", [1e5, 1e6, 1e10, 1e50, 1e300])
def test_log_G_q2_closed_form_at_large_t(t):
    """gq.log_G(2, 1e10) was NaN.  G_2(t) = 2 sinh(t)/t, so log G_2 = t - log t + log1p(-e^{-2t})."""
    assert gq.log_G(2, t) == pytest.approx(t - np.log(t), rel=1e-14)


@pytest.mark.parametrize("q, t", [(1, 1e300), (1, 1e10), (3, 1e6), (7, 2e5), (39, 1e12), (41, 1e12), (1e12, 1e300)])
def test_log_G_against_mpmath_far_out(q, t):
    mp.mp.dps = 40
    qq, tt = mp.mpf(q), mp.mpf(t)
    nu = (qq - 1) / 2
    ref = mp.log(mp.sqrt(mp.pi) * mp.gamma(qq / 2)) + nu * mp.log(2 / tt) + mp.log(mp.besseli(nu, tt))
    assert gq.log_G(q, t) == pytest.approx(float(ref), rel=1e-12)


def test_G_overflows_to_inf_not_nan():
    """gq.G(1, 1e300) was NaN; G_1(1e300) = pi I_0(1e300) exceeds the float range: inf, as documented."""
    assert gq.G(1, 1e300) == np.inf
    assert gq.dlog_G(1, 1e300) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("call, name", [
    (lambda: gq.log_G(2, 1e301), "t"),
    (lambda: gq.log_G(1e13, 1.0), "q"),
    (lambda: gq.G(2, np.inf), "t"),
    (lambda: gq.log_ratio_bound(2, 1.0, 2e300), "t2"),
    (lambda: gq.log_G([1, 2], [1, 2, 3]), "q, t"),
    (lambda: gq.sample_sphere_coordinate(3, size=10**12), "size"),
])
def test_gq_domain_is_enforced(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_gq_numbers_holds_at_large_t():
    """widgets.gq_numbers(1, 1e10, 0) reported holds: False from a NaN."""
    out = widgets.gq_numbers(1, 1e10, 0)
    mp.mp.dps = 40
    ref = -mp.log(mp.besseli(0, mp.mpf(1e10)))  # log G_1(0) - log G_1(1e10) = log(pi) - log(pi I_0)
    assert out["log_ratio"] == pytest.approx(float(ref), rel=1e-12)
    assert out["holds"] is True and np.isfinite(out["log_bound"])
    with pytest.raises(ValueError, match="t1"):
        widgets.gq_numbers(1, np.nan, 0)


# --------------------------------------------------------------------------- Theorem 3.4 at the edges


def test_g_b_at_tiny_sigma_is_finite_and_errs_upward():
    """bounds.g_b(1e-10, .1, .01, 100, 5) was NaN.  With lambda = 5e20 the quantile is
    lambda + O(sqrt(lambda)); g is then c lambda to 1e-9, and no smaller (the safe side)."""
    g = bounds.g_b(1e-10, 0.1, 0.01, 100, 5)
    c = (2 * np.sqrt(5) + 1) / (2 * 95)
    lam = 5 / 1e-20
    assert np.isfinite(g)
    assert g >= c * (lam + 190)  # the quantile at delta = 0.01 exceeds the mean k + lambda
    assert g == pytest.approx(c * lam, rel=1e-9)


def test_birge_quantile_bound_is_above_scipy():
    """The quantile used beyond scipy's range is an upper bound (checked where scipy is exact)."""
    for df in (2.0, 200.0, 2e5):
        for nc in (0.0, 1.0, 1e3, 1e6):
            for d in (1e-12, 0.01, 0.5):
                x = -np.log(d)
                birge = df + nc + 2 * np.sqrt((df + 2 * nc) * x) + 2 * x
                assert birge >= stats.ncx2.isf(d, df, max(nc, 1e-300))


@pytest.mark.parametrize("n, p", [(1e12, 1), (1e14, 100), (1e15, 5), (2**53, 20)])
def test_sigma_b_at_huge_n_approaches_its_limit_from_above(n, p):
    """sigma_b(.1, .01, 1e14, 100) was RuntimeError 'please report'; n >= 1e12 flooded
    RuntimeWarnings (the fixture turns any into an error).  The limit sigma_0^2 ->
    (3 sqrt p + 1)/eps is approached from above, and the answer must stay above it."""
    eps = 0.1
    limit = np.sqrt((3 * np.sqrt(p) + 1) / eps)
    got = bounds.sigma_b(eps, 0.01, n, p)
    assert limit < got < limit * (1 + 10 / np.sqrt(n - p))


def test_sigma_b_switch_stays_sufficient_and_close():
    """At n - p = 1e9 both quantiles are available: the bound's root is not below scipy's
    (sufficient) and within 1e-4 of it."""
    ref = {}
    for eps, d, p in [(0.1, 0.01, 1), (1.0, 1e-10, 5), (1e-3, 0.5, 100)]:
        n = 1e9 + p
        exact_root = bounds.sigma_b(eps, d, n, p)
        old = bounds._EXACT_DF_MAX
        try:
            bounds._EXACT_DF_MAX = 0.0
            upper_root = bounds.sigma_b(eps, d, n, p)
        finally:
            bounds._EXACT_DF_MAX = old
        ref[(eps, d, p)] = upper_root / exact_root - 1
        assert 0 <= upper_root / exact_root - 1 < 1e-4


def test_sigma_b_tiny_eps_is_sufficient():
    """Tiny eps left g a rounding hair above 0 at the bracket's end (RuntimeError)."""
    for n, p, eps, d in [(2, 1, 1e-100, 0.01), (10, 1, 1e-20, 1e-300), (100, 5, 1e-100, 1e-100)]:
        s = bounds.sigma_b(eps, d, n, p)
        c = (2 * np.sqrt(p) + 1) / (2 * (n - p))
        # g(s) <= 0 with the exact (scipy) quantile, up to rounding of s^2 eps
        g = c * stats.ncx2.isf(d, 2 * (n - p), p / s**2) + np.sqrt(p) - s**2 * eps
        assert g <= 1e-12 * s**2 * eps


@pytest.mark.parametrize("call, name", [
    (lambda: bounds.sigma_b(0.1, 0.01, 1e17, 5), "n"),
    (lambda: bounds.sigma_b(0.1, 0.01, 1e300, 1), "n"),
    (lambda: bounds.sigma_b([0.1, 0.2], [0.01, 0.02, 0.03], 100, 1), "eps, delta"),
    (lambda: bounds.sigma_b(0.1, 1 - 1e-12, 100, 1), "delta"),
    (lambda: bounds.g_b(1e-300, 0.1, 0.01, 100, 5), "sigma"),
    (lambda: bounds.sigma_b(1e-300, 0.01, 100, 5), "eps"),
])
def test_bounds_domain_is_enforced(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_sigma_b_block_names_block_sizes_with_the_true_value():
    """sigma_b_block(.1, .01, [2**63], 5) named n with an overflowed (negative) value."""
    with pytest.raises(ValueError, match=r"block_sizes .*9\.22\d*e\+18"):
        bounds.sigma_b_block(0.1, 0.01, [2**63], 5)


def test_table1_huge_n():
    """table1 showed n = -9223372036854775808 for n = 2**63."""
    grid = {"eps": (0.1,), "delta": (0.01,), "p": (1,)}
    with pytest.raises(ValueError, match=r"\bn\b.*9\.22\d*e\+18"):
        table.table1({**grid, "n": (2**63,)})
    row = table.table1({**grid, "n": (2**52,)})[0]
    assert row["n"] == 2**52
    with pytest.raises(ValueError, match="grid"):
        table.table1({"eps": (0.1,)})


# --------------------------------------------------------------------------- exact: caps and speed


def test_masked_p1_sigma_caps_n():
    """masked_p1_sigma(0.1, 0.01, 1e12) ran for minutes; now n is refused before any search
    (how fast, against a full solve, is timed in benchmarks/bench_guards.py)."""
    with pytest.raises(ValueError, match=r"\bn\b.*1e\+06"):
        exact.masked_p1_sigma(0.1, 0.01, 1e12)


def test_exact_shape_mismatch_names_arguments():
    with pytest.raises(ValueError, match="eps, sigma, n"):
        exact.masked_p1_delta([1.0, 2.0], [1.0, 2.0, 3.0], 10)
    with pytest.raises(ValueError, match="eps, sigma"):
        exact.analytic_gaussian_delta([1.0, 2.0], [1.0, 2.0, 3.0])


def test_analytic_gaussian_delta_at_large_sigma_against_mpmath():
    """Large sigma: the two normal tails nearly cancel (lost 7 digits before); large eps sigma:
    the difference of erfcx values lost everything (log delta = -inf)."""
    mp.mp.dps = 60

    def ref(e, s):
        e, s = mp.mpf(e), mp.mpf(s)
        return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)

    for e, s in [(1e-100, 4e9), (1e-6, 1e6), (1e-3, 1e3), (0.1, 50.0), (1.0, 1e10), (10.0, 1e10)]:
        r = ref(e, s)
        if r > mp.mpf("1e-300"):
            assert exact.analytic_gaussian_delta(e, s) == pytest.approx(float(r), rel=1e-11)
        else:
            assert exact.analytic_gaussian_log_delta(e, s) == pytest.approx(float(mp.log(r)), rel=1e-9)
    # sigma_A at eps -> 0 tends to 1/(2 Phi^-1((1 + delta)/2)) (delta = P[|Z| < 1/(2 sigma)]),
    # about 1/(delta sqrt(2 pi)) for small delta; the returned sigma is nudged to the safe side
    # (delta below the target as computed, with a margin of 5e-14 |log delta|), so it lies
    # above the limit by a few 1e-12, never below it
    limit = 1 / (2 * mp.sqrt(2) * mp.erfinv(mp.mpf("1e-10")))
    got = exact.analytic_gaussian_sigma(1e-100, 1e-10)
    assert got >= limit and got == pytest.approx(float(limit), rel=1e-11)


def test_criterion_sigma_no_cancellation_above_one_half():
    """delta > 1/2 with tiny eps: (gamma + sqrt(gamma^2 + 2 eps))/(2 eps) was 0/0."""
    gamma = stats.norm.isf(0.9)
    truth = 1.0 / (2 * abs(gamma))  # the root of eps s^2 - gamma s - 1/2 as eps -> 0
    assert exact.setting_a_criterion_sigma(1e-100, 0.9) == pytest.approx(truth, rel=1e-14)


# --------------------------------------------------------------------------- mechanisms and audits


@pytest.mark.parametrize("release", [mechanisms.release_a, mechanisms.release_b, mechanisms.release_c])
def test_complex_data_refused(release):
    X = np.full((6, 2), 0.5) + 0.1j
    with pytest.raises(TypeError, match=r"\bX\b"):
        release(X, 1.0, rng=0)


def test_allocation_caps():
    with pytest.raises(ValueError, match=r"\bn\b.*8192"):
        mechanisms.haar_orthogonal(10**5)
    with pytest.raises(ValueError, match="n \\* p"):
        mechanisms.stiefel_frame(10**9, 2)
    with pytest.raises(ValueError, match="dense"):
        mechanisms.release_b(np.zeros((8193, 1)), 1.0, rng=0, method="dense")


def test_mc_delta_nan_statistic_and_huge_eps():
    """mc_delta with a NaN statistic reported delta = 0 with an interval; eps = 1000 gave -inf."""
    X = np.zeros((5, 1))
    Xp = X.copy()
    Xp[0, 0] = 1.0
    with pytest.raises(ValueError, match="stat_fn"):
        audit.mc_delta(lambda Y: np.nan, X, Xp, 1.0, 1.0, 40, 1)
    with pytest.raises(TypeError, match="stat_fn"):
        audit.mc_delta(lambda Y: "x", X, Xp, 1.0, 1.0, 40, 1)
    with pytest.raises(ValueError, match="eps"):
        audit.mc_delta(lambda Y: float(Y[0, 0]), X, Xp, 1.0, 1000.0, 40, 1)
    out = audit.mc_delta(lambda Y: float(Y[0, 0]), X, Xp, 1.0, 700.0, 40, 1)
    assert all(np.isfinite(out[k]) for k in ("delta", "ci_low", "ci_high", "se"))


# --------------------------------------------------------------------------- issue 17, section 3: input refused


def test_counts_above_2_to_the_53_are_refused_not_rounded():
    """sigma_b(..., 2**53 + 1, ...) computed as 2**53 (a float cannot hold 2**53 + 1)."""
    for n in (2**53 + 1, [100, 2**53 + 1], np.array([2**53 + 1], dtype=np.int64)):
        with pytest.raises(ValueError, match=r"\bn must be .*<= 2\*\*53.*got 9007199254740993"):
            bounds.sigma_b(0.1, 0.01, n, 5)
    with pytest.raises(ValueError, match=r"block_sizes .*got 9007199254740993"):
        bounds.sigma_b_block(0.1, 0.01, [100, 2**53 + 1], 5)
    assert bounds.sigma_b(0.1, 0.01, 2**53, 5) > 0  # the cap itself is inside


def test_bools_and_text_are_not_numbers_and_flags_are_bools():
    from dpmask import rivals
    from dpmask.paper import mechanisms

    X = np.zeros((6, 2))
    for rng in (True, False, np.bool_(True)):
        with pytest.raises(TypeError, match=r"\brng\b.*bool"):
            mechanisms.release_b(X, 1.0, rng=rng)
    with pytest.raises(ValueError, match=r"\beps must be a real number or an array of real numbers, got the text '0\.1'"):
        bounds.sigma_b("0.1", 0.01, 100, 5)
    with pytest.raises(ValueError, match=r"\beps\b.*text"):
        rivals.sigma_gram("0.1", 0.01, 5)
    with pytest.raises(ValueError, match=r"\bdelta\b.*text"):
        exact_best.best_sufficient_sigma(0.1, "0.01", 100, 5)
    with pytest.raises(TypeError, match=r"\bn\b.*bool"):
        bounds.sigma_b(0.1, 0.01, [100, True], 5)
    for fn in (lambda c: bounds.g_b(1.0, 0.1, 0.01, 100, 5, corrected=c),
               lambda c: bounds.sigma_b(0.1, 0.01, 100, 5, corrected=c),
               lambda c: bounds.sigma_b_block(0.1, 0.01, [100], 5, corrected=c),
               lambda c: exact_best.best_sufficient_sigma(0.1, 0.01, 100, 5, corrected=c),
               lambda c: table.table1(corrected=c)):
        for flag in ("no", 0, None, 1):
            with pytest.raises(TypeError, match=r"corrected must be True or False"):
                fn(flag)


def test_one_eps_domain_for_the_package():
    """best_sufficient_sigma and sigma_gram refused eps = 1e5 while sigma_b accepted it; the
    docstrings said eps > 0 and the module [1e-100, 1e100].  Now [1e-100, 1e4] everywhere."""
    from dpmask import _validate, rivals

    assert _validate.EPS_DOMAIN == (1e-100, 1e4)
    calls = [lambda e: bounds.sigma_b(e, 0.01, 100, 5), lambda e: bounds.g_b(1.0, e, 0.01, 100, 5),
             lambda e: exact_best.best_sufficient_sigma(e, 0.01, 100, 5), lambda e: bounds.sufficient_sigma(e, 0.01, 100, 5),
             lambda e: rivals.sigma_gram(e, 0.01, 5), lambda e: exact.analytic_gaussian_sigma(e, 0.01),
             lambda e: exact.analytic_gaussian_delta(e, 1.0), lambda e: rivals.sigma_low_large_n(e, 0.01, 100, 5)]
    for call in calls:
        for bad in (1e5, 1e4 * (1 + 1e-15), 1e-101):
            with pytest.raises(ValueError, match=r"eps must lie in \[1e-100, 10000\]"):
                call(bad)
        for good in (1e-100, 1e4):
            assert np.isfinite(call(good))
    for mod in (bounds, exact, rivals):
        text = " ".join(f.__doc__ or "" for f in vars(mod).values() if callable(f)) + (mod.__doc__ or "")
        assert not re.search(r"\beps\b[^\n]*1e100", text), mod.__name__
        assert "eps > 0" not in text, mod.__name__


def test_analytic_gaussian_pair_is_consistent_at_the_corners():
    """analytic_gaussian_sigma(1e-100, 1e-300) returned 3.0e101, which analytic_gaussian_delta
    refused (its sigma domain ended at 1e100)."""
    for eps in (1e-100, 1.0, 1e4):
        for delta in (1e-300, 0.5, 1 - 2e-12):
            s = exact.analytic_gaussian_sigma(eps, delta)
            log_d = exact.analytic_gaussian_log_delta(eps, s)
            assert log_d <= np.log(delta) and log_d == pytest.approx(np.log(delta), rel=1e-9, abs=1e-12)
    assert exact.analytic_gaussian_sigma(1e-100, 1e-300) == pytest.approx(3.0e101, rel=1e-2)


# --------------------------------------------------------------------------- issue 17, section 2: no crash inside


def test_masked_p1_sigma_settles_at_tiny_delta_and_around():
    """masked_p1_sigma(1e-4, 1e-250, 10000) raised "worst-pair search did not settle": scipy's
    noncentral chi-square tails, wrong by factors up to 1e100 there, made pair after pair look
    worse.  With accurate tails the search settles; its neighbourhood too (eps in [1e-4, 100],
    delta from 1e-250 to 1 - 1e-11, n from 2 to 1e6, 990 points, ran clean when this was fixed)."""
    eps = np.array([1e-4, 2e-4, 1e-3])[:, None]
    delta = np.array([1e-250, 1e-240, 1e-200])[None, :]
    for n in (3000, 10000, 30000):
        s = exact.masked_p1_sigma(eps, delta, n)
        assert np.all(np.isfinite(s) & (s > 0))
        assert np.all(np.diff(s, axis=1) < 0)  # more noise for a smaller delta
    d = exact.masked_p1_delta(1e-4, exact.masked_p1_sigma(1e-4, 1e-250, 10000), 10000)
    assert d <= 1e-250 and d == pytest.approx(1e-250, rel=1e-6)


def test_sigma_lower_bound_settles_at_tiny_delta_and_around():
    """audit.sigma_lower_bound(100, 1e-250, 21, 20) raised the same error (the only point of
    the issue's grid eps {1e-4, ..., 100} x delta {1e-250, ..., 0.9} at n = 21, p = 20 that did);
    that grid at eight (n, p) from (2, 1) to (10000, 3), both statistics, ran clean when this was
    fixed."""
    from dpmask.exact import audit

    for eps in (20.0, 100.0):
        lo = audit.sigma_lower_bound(eps, np.array([1e-250, 1e-200]), 21, 20)
        assert np.all(np.isfinite(lo) & (lo > 0)) and lo[0] > lo[1]
    # a lower bound: the projection statistic is not (eps, delta)-DP just below it
    lo = audit.sigma_lower_bound(100.0, 1e-250, 21, 20, "projection")
    assert audit.statistic_log_delta(100.0, lo * (1 - 1e-6), 21, 20) >= np.log(1e-250)


def test_noncentral_tails_where_scipy_raises():
    """Issue 25: scipy's ncx2.sf raises OverflowError (Boost's tgamma) at x near 0 with a
    noncentrality above about 1500, which made sigma_b(100, 0.3, 751, 750) raise.  _ncx2 takes the
    other tail at such a point (and the quadrature where both fail), alone or among ordinary points."""
    from scipy import stats

    from dpmask.paper import _ncx2

    x, k, lam = 1.136300227102607e-16, 2.0, 29999.999999999996
    try:
        stats.ncx2.sf(x, k, lam)
    except OverflowError:
        pass  # the behaviour contained (a later scipy may not raise; the checks below hold either way)
    assert _ncx2.logsf(x, k, lam) == 0.0                  # P[T > 1e-16] = 1 to double precision
    xs = np.array([x, 5.0, 1.2e-16])
    lams = np.array([lam, 1.0, 2738.6127875258303])
    out = _ncx2.logsf(xs, k, lams)
    assert np.all(np.isfinite(out)) and out[0] == 0.0 and out[2] == 0.0
    assert out[1] == pytest.approx(float(stats.ncx2.logsf(5.0, k, 1.0)), rel=1e-12)
    assert np.all(_ncx2.logcdf(xs, k, lams)[[0, 2]] < -1000)  # the lower tail there is astronomically small


def test_masked_arrays_are_refused_by_name_where_a_mask_would_be_ignored():
    # np.asarray drops a numpy.ma mask and computes with the hidden values; issue 32 found fully
    # masked arrays accepted by these privacy functions.  Detects: a mask silently ignored.
    from dpmask import exact, rivals

    masked = np.ma.masked_all(3)
    calls = {"eps": [lambda m: exact.analytic_gaussian_delta(m, 1.0), lambda m: exact.analytic_gaussian_sigma(m, 1e-5),
                     lambda m: rivals.sigma_gram(m, 1e-5, 2), lambda m: rivals.distributed_delta(m, 1e-5, 2)],
             "delta": [lambda m: exact.analytic_gaussian_sigma(1.0, m), lambda m: rivals.sigma_gram(1.0, m, 2),
                       lambda m: rivals.distributed_delta(1.0, m, 2)]}
    for name, fns in calls.items():
        for fn in fns:
            with pytest.raises(ValueError, match=f"{name} is a masked array"):
                fn(masked)
            partly = np.ma.array([0.5, 0.5], mask=[False, True]) if name == "eps" else np.ma.array([1e-5, 1e-5],
                                                                                                    mask=[True, False])
            with pytest.raises(ValueError, match=name):
                fn(partly)
    # a masked array with nothing masked is its data
    plain = np.array([0.5, 1.0])
    assert np.array_equal(exact.analytic_gaussian_delta(np.ma.array(plain), 1.0), exact.analytic_gaussian_delta(plain, 1.0))
