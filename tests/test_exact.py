"""Tests of dpmask.exact against dp-accounting, mpmath, Monte Carlo and closed forms.

The analytic Gaussian curve is checked against Google's dp-accounting and a
60-digit mpmath evaluation; the Setting B (p = 1) curve against an mpmath
computation that shares no code with the package (Poisson mixture of central
chi-square tails, mpmath's own 0F1 for the density ratio) and against
simulated releases from dpmask.paper.mechanisms.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from dp_accounting import gaussian_mechanism as dpa

from dpmask import exact
from dpmask.paper import bounds
from dpmask.exact import one_column
from dpmask.paper.table import PAPER_TABLE1

from _mp_ncx2 import log_ratio_threshold

EPS_GRID = np.logspace(-5, 3, 9)
DELTA_GRID = np.array([1e-15, 1e-12, 1e-9, 1e-6, 1e-3, 0.05, 0.3, 0.5])


# --- oracles ---------------------------------------------------------------------------------


def _mp_gauss_delta(eps, sigma, dps=60):
    with mp.workdps(dps):
        eps, sigma = mp.mpf(eps), mp.mpf(sigma)
        return mp.ncdf(1 / (2 * sigma) - eps * sigma) - mp.e**eps * mp.ncdf(-1 / (2 * sigma) - eps * sigma)


def _mp_ncx2_tail(c, k, lam, upper=True):
    """P[T > c] (or P[T < c]) of ncx2(k, lam): Poisson(lam/2) mixture of central chi-squares."""
    c, k, lam = mp.mpf(c), mp.mpf(k), mp.mpf(lam)
    total, j = mp.mpf(0), 0
    while True:
        w = mp.exp(-lam / 2) * (lam / 2) ** j / mp.factorial(j)
        if upper:
            term = w * mp.gammainc((k + 2 * j) / 2, c / 2, mp.inf, regularized=True)
        else:
            term = w * mp.gammainc((k + 2 * j) / 2, 0, c / 2, regularized=True)
        total += term
        if j > lam / 2 + 10 and term < mp.mpf(10) ** (-mp.mp.dps):
            return total
        j += 1


def _mp_masked_delta(eps, sigma, n, a, b, dps=30):
    """delta(eps) between ||X||^2 = a and ||X'||^2 = b, p = 1, in mpmath."""
    with mp.workdps(dps):
        eps, s2 = mp.mpf(eps), mp.mpf(sigma) ** 2
        la, lb, half = a / s2, b / s2, mp.mpf(n) / 2

        def log_ratio(t):
            return -(la - lb) / 2 + mp.log(mp.hyp0f1(half, la * t / 4)) - mp.log(mp.hyp0f1(half, lb * t / 4))

        c = mp.findroot(lambda t: log_ratio(t) - eps, n + (la + lb) / 2 + 10)
        up = la > lb
        return _mp_ncx2_tail(c, n, la, up) - mp.e**eps * _mp_ncx2_tail(c, n, lb, up)


# --- classical and analytic Gaussian ---------------------------------------------------------


def test_classical_sigma_closed_form_and_refusal():
    assert exact.classical_gaussian_sigma(0.5, 1e-5) == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-15)
    with pytest.raises(ValueError, match="eps must be < 1"):
        exact.classical_gaussian_sigma(1.0, 1e-5)
    with pytest.raises(ValueError, match="delta"):
        exact.classical_gaussian_sigma(0.5, 0.0)


def test_classical_sigma_is_sufficient_under_the_exact_curve():
    eps, delta = np.meshgrid(np.linspace(0.01, 0.99, 9), DELTA_GRID[:6])
    assert np.all(exact.analytic_gaussian_delta(eps, exact.classical_gaussian_sigma(eps, delta)) <= delta)


def test_analytic_pair_inverts_over_the_whole_range():
    eps, delta = np.meshgrid(EPS_GRID, DELTA_GRID, indexing="ij")
    sigma = exact.analytic_gaussian_sigma(eps, delta)
    assert sigma.shape == eps.shape
    np.testing.assert_allclose(exact.analytic_gaussian_delta(eps, sigma), delta, rtol=1e-10)


@pytest.mark.parametrize("eps", EPS_GRID)
def test_analytic_sigma_agrees_with_dp_accounting(eps):
    for delta in DELTA_GRID:
        ref = dpa.get_sigma_gaussian(float(eps), float(delta), tol=1e-15)
        assert exact.analytic_gaussian_sigma(eps, delta) == pytest.approx(ref, rel=1e-9)


def test_analytic_delta_agrees_with_dp_accounting_epsilon():
    for sigma in (0.05, 0.7, 3.0, 40.0, 900.0):
        for delta in (1e-12, 1e-6, 1e-2):
            eps = dpa.get_epsilon_gaussian(sigma, delta, tol=1e-15)
            if eps > 0:
                assert exact.analytic_gaussian_delta(eps, sigma) == pytest.approx(delta, rel=1e-8)


@pytest.mark.parametrize("eps", [1e-5, 1e-3, 0.1, 1.0, 30.0, 1e3])
def test_analytic_delta_matches_mpmath_to_1e12(eps):
    for delta in (1e-15, 1e-8, 1e-3, 0.4):
        sigma = exact.analytic_gaussian_sigma(eps, delta)
        ref = _mp_gauss_delta(eps, sigma)
        assert exact.analytic_gaussian_delta(eps, sigma) == pytest.approx(float(ref), rel=1e-12)


def test_large_eps_does_not_overflow():
    # e^eps overflows above 709; the log curve must stay finite and right
    for eps, sigma in ((800.0, 0.03), (5000.0, 0.012)):
        ref = mp.log(_mp_gauss_delta(eps, sigma, dps=80))
        val = exact.analytic_gaussian_log_delta(eps, sigma)
        assert math.isfinite(val) and val == pytest.approx(float(ref), rel=1e-12)


def test_ufunc_behaviour_and_validation():
    assert isinstance(exact.analytic_gaussian_delta(1.0, 1.0), float)
    assert exact.analytic_gaussian_sigma([[0.1], [1.0]], [1e-3, 1e-5, 0.1]).shape == (2, 3)
    for bad, name in (((0.0, 1.0), "eps"), ((1.0, -1.0), "sigma")):
        with pytest.raises(ValueError, match=name):
            exact.analytic_gaussian_delta(*bad)
    with pytest.raises(ValueError, match="delta"):
        exact.analytic_gaussian_sigma(1.0, 1.0)


# --- the paper's criterion for Setting A -----------------------------------------------------


def test_criterion_sigma_solves_criterion_in_mpmath():
    for eps, delta in ((0.1, 0.01), (0.001, 0.001), (2.0, 1e-9)):
        sigma = mp.mpf(exact.setting_a_criterion_sigma(eps, delta))
        tail = 1 - mp.ncdf(sigma * eps - 1 / (2 * sigma))
        assert float(tail) == pytest.approx(delta, rel=1e-12)


def test_criterion_sits_between_theorem_32_bounds_and_above_the_exact_curve():
    eps, delta = np.meshgrid([0.001, 0.01, 0.1, 0.9], [1e-9, 1e-3, 0.01, 0.3])
    crit = exact.setting_a_criterion_sigma(eps, delta)
    assert np.all(bounds.sigma_a_necessary(eps, delta) < crit)
    assert np.all(crit < bounds.sigma_a_sufficient(eps, delta))
    assert np.all(exact.analytic_gaussian_sigma(eps, delta) < crit)
    sigma = np.linspace(0.5, 50, 7)
    assert np.all(exact.analytic_gaussian_delta(0.3, sigma) < exact.setting_a_criterion_delta(0.3, sigma))


# --- Setting B, p = 1 ------------------------------------------------------------------------

MP_POINTS = [(1.0, 1.0, 10), (0.1, 1.0, 100), (0.5, 0.6, 5), (0.1, 0.836, 100)]


@pytest.mark.parametrize("eps,sigma,n", MP_POINTS)
def test_masked_p1_delta_matches_mpmath(eps, sigma, n):
    ref = _mp_masked_delta(eps, sigma, n, 1, 0)
    assert exact.masked_p1_delta(eps, sigma, n) == pytest.approx(float(ref), rel=1e-8)


def test_hockey_stick_other_ordering_matches_mpmath():
    # lam_p < lam_q: the optimal set is {T < c}
    val = exact.ncx2_hockey_stick_log_delta(0.1, 10, 0.0, 1 / 0.6**2)
    with mp.workdps(30):
        eps, lb = mp.mpf("0.1"), 1 / mp.mpf("0.6") ** 2
        c = mp.findroot(lambda t: lb / 2 - mp.log(mp.hyp0f1(5, lb * t / 4)) - eps, 5)
        ref = _mp_ncx2_tail(c, 10, 0, False) - mp.e**eps * _mp_ncx2_tail(c, 10, lb, False)
    assert math.exp(val) == pytest.approx(float(ref), rel=1e-8)


@pytest.mark.parametrize("eps,sigma,n", [(0.1, 1.0, 100), (1.0, 0.5, 5), (0.01, 3.0, 1000), (0.3, 0.8, 20)])
def test_worst_pair_is_the_corner(eps, sigma, n):
    # the search over all reachable pairs lands on ||X||^2 = 1 versus ||X'||^2 = 0
    log_delta, a, b = exact.masked_p1_worst_pair(eps, sigma, n)
    assert (a, b) == (1.0, 0.0)
    # and a brute-force scan of the edge |a - b| = 1 finds nothing larger
    s = np.linspace(0, n - 1, 41)
    for hi, lo in ((s + 1, s), (s, s + 1)):
        vals = exact.ncx2_hockey_stick_log_delta(eps, n, hi / sigma**2, lo / sigma**2)
        assert np.all(vals <= log_delta + 1e-12)


def test_masked_p1_delta_matches_simulated_releases():
    """Monte Carlo with dpmask.paper.mechanisms.release_b: tolerance 5 standard errors."""
    from dpmask.exact.audit import mc_delta
    from scipy.optimize import brentq

    eps, sigma, n = 0.5, 0.6, 5
    target = exact.masked_p1_delta(eps, sigma, n)
    la = 1 / sigma**2
    # Neyman-Pearson threshold from mpmath's 0F1 (independent of the package)
    c = brentq(lambda t: float(-la / 2 + mp.log(mp.hyp0f1(2.5, la * t / 4))) - eps, 1e-6, 500)
    X = np.zeros((n, 1))
    Xp = X.copy()
    X[0, 0] = 1.0
    res = mc_delta(lambda Y: float(np.sum(Y**2)) / sigma**2, X, Xp, sigma, eps, 6000, 20267, threshold=c)
    assert abs(res["delta"] - target) < 5 * res["se"]
    assert res["ci_low"] < target < res["ci_high"]


def test_masked_p1_pair_inverts():
    eps, delta = np.meshgrid([1e-3, 0.1, 2.0], [1e-9, 1e-3, 0.2], indexing="ij")
    for n in (3, 100, 10000):
        sigma = exact.masked_p1_sigma(eps, delta, n)
        np.testing.assert_allclose(exact.masked_p1_delta(eps, sigma, n), delta, rtol=1e-8)


def test_masked_p1_is_below_the_unmasked_exact_curve_and_theorem_34_suffices():
    # Lemma 2.3: masking never needs more noise; Theorem 3.4 (and its corrected form) suffice
    rows = np.array([r[:4] for r in PAPER_TABLE1 if r[2] == 1], float)
    eps, delta, n = rows[:, 0], rows[:, 1], rows[:, 3]
    exact_sigma = exact.masked_p1_sigma(eps, delta, n)
    assert np.all(exact_sigma < exact.analytic_gaussian_sigma(eps, delta))
    for corrected in (False, True):
        sigma = bounds.sigma_b(eps, delta, n, 1, corrected=corrected)
        assert np.all(exact.masked_p1_delta(eps, sigma, n) <= delta)
        assert np.all(exact_sigma < sigma)


def test_masked_p1_validation():
    with pytest.raises(ValueError, match="n must be a whole number"):
        exact.masked_p1_delta(0.1, 1.0, 1)
    with pytest.raises(ValueError, match="sigma"):
        exact.masked_p1_delta(0.1, 0.0, 10)
    with pytest.raises(ValueError, match="lam_p"):
        exact.ncx2_hockey_stick_log_delta(0.1, 10, -1.0, 0.0)


# --- issue 17: just below delta = 1 (M28, M29) -------------------------------------------------


def _mp_one_minus_delta(eps, sigma, n, dps=50):
    """1 - delta for the pair (||X||^2, ||X'||^2) = (1, 0): P_1(T <= c) + e^eps P_0(T > c), each
    term a positive sum (no cancellation), c the threshold where the log density ratio is eps."""
    with mp.workdps(dps):
        e, lam = mp.mpf(eps), 1 / mp.mpf(sigma) ** 2
        c = log_ratio_threshold(e, n, lam)
        # mpmath's lower incomplete gamma does not converge at order 5e5; there P_1(T <= c) is
        # not small (delta is far from 1 at df = 1e6), and 1 - P_1(T > c) loses nothing
        below = (_mp_ncx2_tail(c, n, lam, upper=False) if n <= 10**4
                 else 1 - _mp_ncx2_tail(c, n, lam, upper=True))
        return below + mp.exp(e) * _mp_ncx2_tail(c, n, 0, upper=True)


@pytest.mark.parametrize("n", [2, 10, 1000, 10**6])
def test_one_minus_delta_just_below_one_against_mpmath(n):
    """M28, M29.  For sigma in [0.05, 0.2] delta is within 1e-2 ... 1e-300 of 1.  The package
    answers 1 - delta to 1e-6 relative where it is above 2**-54 and exactly delta = 1 where a
    rigorous bound puts 1 - delta below 2**-54 (a shortcut constant of 1e-2 returned delta = 1
    where 1 - delta was 1e-3); and that bound is an upper bound on the true 1 - delta (dropping
    the factor 2 of Birge's x_p made it too small)."""
    eps = 1.0
    for sigma in (0.05, 0.07, 0.1, 0.14, 0.2):
        truth = _mp_one_minus_delta(eps, sigma, n)
        bound = mp.exp(mp.mpf(float(one_column._log_gap_upper(eps, sigma, float(n), 1.0))))
        assert bound >= truth * (1 - 1e-12), (sigma, n, bound, truth)
        got = 1.0 - exact.masked_p1_delta(eps, sigma, n)
        if truth > 2.0**-40:
            assert got == pytest.approx(float(truth), rel=1e-6), (sigma, n)
        elif got == 0.0:
            assert truth < 2.0**-53, (sigma, n, truth)  # delta = 1 is the rounding of the truth
