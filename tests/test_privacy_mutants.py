"""The privacy numbers against independent truth, fast enough to run once per mutant (issue 32).

``make mutate`` (mutation/run.py) mutates every function that returns a privacy number (sigma,
tau, c, w, delta, their tails and nudges, the budget splits, the sensitivity constants) and runs,
for each mutant, the tests of this file that call it.  Each test recomputes its number from
nothing the package computes: mpmath at 60 digits (the Gaussian mechanism's delta, the normal
quantiles), scipy's own chi-square laws, the closed forms of the docstrings, and searches over
the neighbours' cube for the sensitivities.  The points are seeded random draws over each
function's domain plus the documented corners; the tolerances are the documented ones (an
upper bound must not lie below the truth at all, and not above it by more than its stated
allowance).
"""

from __future__ import annotations

import math
import re

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from dpmask import _safe
from dpmask.exact import gaussian as gc
from dpmask.paper import bounds
from dpmask.rivals import compare, gram, jl, ssp, trust, wishart

DPS = 60
RNG_SEED = 32


def _loguniform(rng, lo, hi, size):
    return np.exp(rng.uniform(np.log(lo), np.log(hi), size))


def mp_gauss_delta(eps, sigma):
    """delta(eps) of the Gaussian mechanism (sensitivity 1), Balle and Wang's Theorem 8, 60 digits."""
    # the two terms agree to about log10(sigma) + log10(1/eps) digits: carry that many more
    dps = DPS + math.ceil(max(0.0, math.log10(sigma))) + math.ceil(max(0.0, -math.log10(eps)))
    with mp.workdps(dps):
        e, s = mp.mpf(eps), mp.mpf(sigma)
        return +mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)


def mp_isf(delta):
    """Upper delta-quantile of the standard normal, solved in mpmath."""
    with mp.workdps(DPS):
        d = mp.mpf(delta)
        return mp.findroot(lambda g: mp.erfc(g / mp.sqrt(2)) / 2 - d, float(stats.norm.isf(delta)))


def rel(a, b):
    return abs(float((mp.mpf(a) - mp.mpf(b)) / mp.mpf(b)))


# --------------------------------------------------------------------------- nudge_up


def test_nudge_up_reaches_the_first_safe_value_and_stops_there():
    root = np.array([[1.0, 3.0, 7.5], [1e-300, 2.0, 1e300]])
    x = root * (1.0 - np.array([[1e-16, 1e-13, 1e-10], [1e-12, 0.0, 1e-15]]))
    x[1, 1] = 2.5                                                # already safe: left alone
    out = _safe.nudge_up(lambda v, r: r - v, x, np.inf, (root,))
    assert out.shape == root.shape
    assert np.all(out >= root)                                   # safe
    assert out[1, 1] == 2.5
    # the steps double from 2**-52: the first safe step overshoots the root by at most the last step
    gap = np.maximum((root - x) / x, np.finfo(float).eps)
    moved = x < root
    assert np.all(out[moved] <= root[moved] * (1.0 + 2.0 * gap[moved] + 4e-16))


def test_nudge_up_stops_at_top_and_after_its_steps():
    x = np.array([1.0, 1.0])
    out = _safe.nudge_up(lambda v: 2.0 - v, x, np.array([1.5, 10.0]))
    assert out[0] == 1.5                                         # top: the rigorous end
    assert 2.0 <= out[1] <= 10.0
    few = _safe.nudge_up(lambda v: 2.0 - v, np.array([1.0]), np.inf, steps=3)
    assert few[0] == 1.0 * (1 + 2**-52) * (1 + 2**-51) * (1 + 2**-50)
    assert _safe.nudge_up(lambda v: 1.0 - v, 1.0, np.inf).shape == ()   # 0-d in, 0-d out
    assert _safe.nudge_up(lambda v: 1.0 - v, 1.0, np.inf) == 1.0          # an excess of 0 is safe: not moved
    # whole numbers in: the steps are taken in floats, not truncated back to the integer
    up = _safe.nudge_up(lambda v: 2.5 - v, np.array([2, 3]), np.inf, steps=60)
    assert 2.5 <= up[0] < 2.6 and up[1] == 3.0                        # 2 x 1.27: the steps overshoot by one step
    # the steps run out: the values come back in their shape, raised as far as the steps went
    stuck = _safe.nudge_up(lambda v: 5.0 - v, np.ones((2, 2)), np.inf, steps=2)
    assert stuck.shape == (2, 2) and np.all(stuck == (1 + 2**-52) * (1 + 2**-51))


# --------------------------------------------------------------------------- the Gaussian curves


def _gauss_points():
    rng = np.random.default_rng(RNG_SEED)
    eps = _loguniform(rng, 1e-3, 10.0, 24)
    sigma = _loguniform(rng, 0.3, 30.0, 24) / np.sqrt(eps)
    corners = [(1.0, 25.0),       # a < 0, erfcx points close and past 15 (asymptotic series)
               (1e-3, 3e3),       # a < 0 at small eps, long sigma
               (1e-4, 10.0),      # a >= 0, sigma >= 1, a < 5: the quadrature of the density
               (0.5, 0.05),       # a >= 0 far out: log_ndtr, delta near 1e-10
               (1.0, 0.02),       # delta ~ 1e-70
               (5.0, 0.15),       # large eps, small sigma
               (1e-6, 1e5),       # a = 0.1 - 5e-6 ... close branch at huge sigma
               (2.0, 1.0), (0.01, 300.0), (3.0, 2.0),
               (1e-9, 1e4), (1e-13, 1e6),    # a >= 0 at large sigma: the two log terms nearly cancel
               (1e-7, 1.5e3)]
    return list(zip(eps, sigma)) + corners


@pytest.mark.parametrize("eps, sigma", _gauss_points())
def test_gaussian_delta_is_an_upper_bound_within_its_allowance(eps, sigma):
    true = mp_gauss_delta(eps, sigma)
    got = gc.analytic_gaussian_delta(eps, sigma)
    log_got = gc.analytic_gaussian_log_delta(eps, sigma)
    allowance = 2e-14 * max(1.0, abs(float(mp.log(true))))    # documented: 2e-14 max(1, |log delta|)
    assert mp.mpf(got) >= true
    assert rel(got, true) <= 1.2 * allowance + 4e-16
    assert mp.mpf(log_got) >= mp.log(true)
    assert float(mp.mpf(log_got) - mp.log(true)) <= 1.2 * allowance


@pytest.mark.parametrize("eps, sigma", [(1e-3, 0.01), (1.0, 1e-3), (1e-100, 1e-100)])
def test_gaussian_delta_near_one_is_at_most_one(eps, sigma):
    # delta is a probability: the allowance must not lift it above 1 (nor its log above 0)
    assert mp_gauss_delta(eps, sigma) > 1 - 1e-12
    assert gc.analytic_gaussian_delta(eps, sigma) <= 1.0
    assert gc.analytic_gaussian_log_delta(eps, sigma) <= 0.0


def test_gaussian_delta_of_many_points_at_once():
    # several points of each branch in one call, each against its own truth
    eps = np.array([1e-9, 1e-13, 1e-7, 1.0, 0.5, 1e-3, 2.0])
    sigma = np.array([1e4, 1e6, 1.5e3, 25.0, 0.05, 3e3, 1.0])
    got = gc.analytic_gaussian_delta(eps, sigma)
    for e, s_, g in zip(eps, sigma, got):
        true = mp_gauss_delta(float(e), float(s_))
        assert mp.mpf(g) >= true and rel(g, true) <= 1.2 * 2e-14 * max(1.0, abs(float(mp.log(true)))) + 4e-16


def test_gaussian_delta_at_the_bottom_of_the_floats():
    # below 1e-308 the log is exact to its allowance and delta is rounded up, never to 0
    for sigma in (40.0, 60.0):
        log_true = mp.log(mp_gauss_delta(1.0, sigma))
        assert float(log_true) < -745
        log_got = gc.analytic_gaussian_log_delta(1.0, sigma)
        assert 0 <= float(mp.mpf(log_got) - log_true) <= 1.2 * 2e-14 * abs(float(log_true))
        assert gc.analytic_gaussian_delta(1.0, sigma) == 5e-324       # rounded up from 0, never 0
    true = mp_gauss_delta(1.0, 37.7)                                  # a subnormal delta
    assert mp.mpf(2.2e-308) > true > mp.mpf(5e-324)
    assert mp.mpf(gc.analytic_gaussian_delta(1.0, 37.7)) >= true


def _solve_points():
    rng = np.random.default_rng(RNG_SEED + 1)
    eps = _loguniform(rng, 1e-3, 20.0, 20)
    delta = _loguniform(rng, 1e-14, 0.45, 20)
    corners = [(1.0, 1e-5), (1e-100, 1e-300), (1e4, 0.5), (0.1, 0.99), (1e-3, 1e-300), (50.0, 1e-6),
               (1.0, 0.9)]
    return list(zip(eps, delta)) + corners


@pytest.mark.parametrize("eps, delta", _solve_points())
def test_analytic_gaussian_sigma_is_sufficient_and_tight(eps, delta):
    sigma = gc.analytic_gaussian_sigma(eps, delta)
    true = mp_gauss_delta(eps, sigma)
    assert true <= delta                                         # sufficient, to the last bit
    assert rel(true, delta) <= 1e-10 * max(1.0, abs(math.log(delta)))   # documented: about 1e-10


def test_analytic_gaussian_sigma_broadcasts():
    eps = np.array([[0.1], [1.0]])
    delta = np.array([1e-5, 1e-3, 0.1])
    out = gc.analytic_gaussian_sigma(eps, delta)
    assert out.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            assert out[i, j] == gc.analytic_gaussian_sigma(float(eps[i, 0]), float(delta[j]))


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-5), (0.9, 0.3), (1e-3, 1e-200), (0.5, 1e-300)])
def test_classical_gaussian_sigma_is_dwork_roth(eps, delta):
    with mp.workdps(DPS):
        want = mp.sqrt(2 * mp.log(mp.mpf(1.25) / mp.mpf(delta))) / mp.mpf(eps)
    assert rel(gc.classical_gaussian_sigma(eps, delta), want) < 1e-14


@pytest.mark.parametrize("eps, sigma", [(1.0, 1.0), (0.1, 30.0), (3.0, 0.2), (1e-3, 1e3), (10.0, 3.0)])
def test_setting_a_criterion_delta_is_the_normal_tail(eps, sigma):
    with mp.workdps(DPS):
        want = mp.ncdf(1 / (2 * mp.mpf(sigma)) - mp.mpf(eps) * mp.mpf(sigma))
    assert rel(gc.setting_a_criterion_delta(eps, sigma), want) < 1e-13


@pytest.mark.parametrize("eps, delta", [(0.1, 0.01), (1.0, 1e-5), (1e-3, 1e-300), (5.0, 0.4), (0.2, 0.8),
                                        (1e4, 0.5), (2.0, 0.999)])
def test_setting_a_criterion_sigma_is_the_smallest_sufficient_root(eps, delta):
    sigma = gc.setting_a_criterion_sigma(eps, delta)
    with mp.workdps(DPS):
        s, e = mp.mpf(sigma), mp.mpf(eps)
        tail = mp.ncdf(1 / (2 * s) - e * s)
    assert tail <= delta                                        # P[L > eps] <= delta: sufficient
    assert rel(tail, delta) <= 1e-12 * max(1.0, abs(math.log(delta)))


# --------------------------------------------------------------------------- Theorem 3.2, Corollaries 3.3 and 3.5


@pytest.mark.parametrize("eps, delta", [(0.1, 0.01), (0.9, 0.4), (1e-3, 1e-300), (0.5, 1e-12), (1e-100, 0.2)])
def test_setting_a_theorem_bounds(eps, delta):
    g = mp_isf(delta)
    with mp.workdps(DPS):
        e = mp.mpf(eps)
        assert rel(bounds.sigma_a_necessary(eps, delta), g / e) < 1e-13
        assert rel(bounds.sigma_a_sufficient(eps, delta), g / e * (1 + 1 / (2 * g**2))) < 1e-13
        if delta < 0.05:
            root = mp.sqrt(-mp.log(mp.mpf(delta))) / e
            assert rel(bounds.sigma_a_corollary(eps, delta), mp.mpf("1.7") * root) < 1e-14
            assert rel(bounds.sigma_a_corollary(eps, delta, "necessary"), root) < 1e-14
            assert rel(bounds.sigma_a_corollary(eps, delta, kind="sufficient"), mp.mpf("1.7") * root) < 1e-14


@pytest.mark.parametrize("fn, eps, delta", [
    (bounds.sigma_a_necessary, 1.0, 0.1), (bounds.sigma_a_necessary, 0.5, 0.5),
    (bounds.sigma_a_sufficient, 1.0, 0.1), (bounds.sigma_a_sufficient, 0.5, 0.5),
    (bounds.sigma_a_corollary, 1.0, 0.01), (bounds.sigma_a_corollary, 0.5, 0.05),
    (gc.classical_gaussian_sigma, 1.0, 0.1),
])
def test_setting_a_theorems_refuse_outside_their_hypotheses(fn, eps, delta):
    with pytest.raises(ValueError):
        fn(eps, delta)


def test_sigma_a_corollary_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="kind"):
        bounds.sigma_a_corollary(0.5, 0.01, "tight")


@pytest.mark.parametrize("eps, delta, n, p", [(0.1, 0.01, 1000, 2), (0.9, 1e-300, 10, 9), (1e-3, 0.5, 10**9, 64)])
def test_sigma_b_corollary_is_corollary_3_5(eps, delta, n, p):
    with mp.workdps(DPS):
        e, d = mp.mpf(eps), mp.mpf(delta)
        want = mp.sqrt((2 * n - p + mp.log(1 / d)) / (2 * (n - p))) * 3 * mp.mpf(p) ** mp.mpf(0.25) / mp.sqrt(e)
    assert rel(bounds.sigma_b_corollary(eps, delta, n, p), want) < 1e-13


@pytest.mark.parametrize("n, p", [(10, 1), (1000, 7), (2**40, 64)])
def test_theorem_3_4_coefficient(n, p):
    assert rel(bounds._b_coefficient(n, p, False), (2 * mp.sqrt(p) + 1) / (2 * (n - p))) < 1e-14
    assert rel(bounds._b_coefficient(n, p, True), (2 * mp.sqrt(p) + 1) / (2 * (n - p - 1))) < 1e-14


# --------------------------------------------------------------------------- sensitivities


def _cube_pairs(dim, rng, draws=50_000):
    """Random neighbours in the cube [-1, 1]^dim at distance <= 1, many at the cube's faces and corners."""
    x = rng.uniform(-1, 1, (draws, dim))
    x[: draws // 2] = np.sign(x[: draws // 2])                  # half at corners, where the suprema sit
    d = rng.normal(size=(draws, dim))
    d *= (rng.uniform(0.5, 1.0, (draws, 1)) ** 0.1) / np.linalg.norm(d, axis=1, keepdims=True)
    return x, np.clip(x - d, -1, 1)


@pytest.mark.parametrize("p", [1, 2, 3, 5])
def test_gram_sensitivity_is_the_supremum_over_the_cube(p):
    rng = np.random.default_rng(RNG_SEED + p)
    x, y = _cube_pairs(p, rng)
    fro = np.linalg.norm(x[:, :, None] * x[:, None, :] - y[:, :, None] * y[:, None, :], axis=(1, 2))
    value = gram.gram_sensitivity(p)
    assert fro.max() <= value * (1 + 1e-12)                     # not exceeded by any sampled pair
    assert fro.max() >= 0.9 * value
    ones = np.ones(p)
    near = ones * (1 - 1 / np.sqrt(p))                          # the docstring's attaining pair
    attained = np.linalg.norm(np.outer(ones, ones) - np.outer(near, near))
    assert value == pytest.approx(attained, rel=1e-14)
    assert value == pytest.approx(2 * math.sqrt(p) - 1, rel=1e-15)


def test_gram_sensitivity_broadcasts():
    assert np.allclose(gram.gram_sensitivity(np.array([1, 4, 9])), [1.0, 3.0, 5.0], rtol=1e-15, atol=0)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_cross_sensitivity_is_the_supremum_over_the_cube(k):
    rng = np.random.default_rng(RNG_SEED + 10 * k)
    a, b = _cube_pairs(k + 1, rng)
    change = np.linalg.norm(a[:, :k] * a[:, k:] - b[:, :k] * b[:, k:], axis=1)
    value = ssp.cross_sensitivity(k)
    assert change.max() <= value * (1 + 1e-12)
    attained = np.linalg.norm(np.ones(k) * 1.0 - np.ones(k) * 0.0)    # z = z' = 1, y = 1, y' = 0
    assert value == pytest.approx(attained, rel=1e-15)
    assert value == pytest.approx(math.sqrt(k), rel=1e-15)


def _joint_sum_truth(k):
    """max over theta of g_k (the docstring's formula, written again) by a dense grid and a bounded polish."""
    def g(theta):
        t, s = math.sin(theta), math.cos(theta)
        fro = 2 * math.sqrt(k) * s - s * s
        cross = k * t * t + 2 * t * (1 - t) * math.sqrt(k) * s + (1 - t) ** 2 * s * s
        return 2 * fro**2 / (2 * math.sqrt(k) - 1) ** 2 + cross / k

    grid = np.linspace(0, math.pi / 2, 20001)
    vals = [g(th) for th in grid]
    i = int(np.argmax(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = optimize.minimize_scalar(lambda th: -g(th), bounds=(lo, hi), method="bounded",
                                   options=dict(xatol=1e-12))
    return max(max(vals), -res.fun, g(0.0), g(math.pi / 2))


@pytest.mark.parametrize("k, approx", [(1, 3.0), (2, 2.533), (4, 2.297), (9, None), (63, None)])
def test_adassp_joint_sum_is_a_certified_upper_bound(k, approx):
    truth = _joint_sum_truth(k)
    value = ssp.adassp_joint_sum(k)
    assert truth <= value <= truth + 1e-4                       # documented: never below, at most 1e-4 above
    # the margin is L h / 2 with the docstring's Lipschitz bound L and the step h of 2**18 angles
    lip = 16 * k / (2 * math.sqrt(k) - 1) ** 2 + (k + 2.5 * math.sqrt(k) + 4) / k
    assert value - truth == pytest.approx(0.5 * lip * (math.pi / 2) / 2**18, rel=1e-4)
    if approx is not None:
        assert value == pytest.approx(approx, abs=1e-3)


@pytest.mark.parametrize("eps, delta, p", [(0.1, 0.01, 2), (1.0, 1e-5, 5), (3.0, 0.3, 17), (1e-6, 1e-12, 64)])
def test_adassp_noise_splits_the_budget_in_three_shares(eps, delta, p):
    k = p - 1
    t = ssp.adassp_noise(eps, delta, p)
    s = t["sigma_share"]
    true = mp_gauss_delta(eps / 3, s)
    assert true <= delta / 3 and rel(true, delta / 3) < 1e-9 * max(1.0, abs(math.log(delta / 3)))
    sens_gram, sens_cross = 2 * math.sqrt(k) - 1, math.sqrt(k)
    assert t["sens_gram"] == pytest.approx(sens_gram, rel=1e-15)
    assert t["sens_lambda"] == pytest.approx(sens_gram, rel=1e-15)
    assert t["sens_cross"] == pytest.approx(sens_cross, rel=1e-15)
    assert t["tau_gram"] == pytest.approx(s * sens_gram, rel=1e-15)
    assert t["tau_lambda"] == pytest.approx(s * sens_gram, rel=1e-15)
    assert t["tau_cross"] == pytest.approx(s * sens_cross, rel=1e-15)


@pytest.mark.parametrize("eps, delta, p", [(0.1, 0.01, 2), (1.0, 1e-5, 5), (3.0, 0.3, 3)])
def test_adassp_noise_gaussian_composition(eps, delta, p):
    k = p - 1
    t = ssp.adassp_noise(eps, delta, p, composition="gaussian")
    s = t["sigma_share"]
    # s / sqrt(S_k) must be a sufficient Gaussian sigma at the whole (eps, delta), S_k independent
    true = mp_gauss_delta(eps, s / math.sqrt(_joint_sum_truth(k)))
    assert true <= delta
    assert rel(true, delta) < 1e-3                               # the joint sum's margin is below 1e-4
    assert t["tau_gram"] == pytest.approx(s * (2 * math.sqrt(k) - 1), rel=1e-15)
    assert t["tau_lambda"] == pytest.approx(s * (2 * math.sqrt(k) - 1), rel=1e-15)
    assert t["tau_cross"] == pytest.approx(s * math.sqrt(k), rel=1e-15)
    assert t["sens_cross"] == pytest.approx(math.sqrt(k), rel=1e-15)


# --------------------------------------------------------------------------- the rival's Gram noise


@pytest.mark.parametrize("eps, delta, p", [(0.1, 0.01, 2), (1.0, 1e-5, 1), (1e-3, 1e-300, 64), (8.0, 0.3, 7),
                                           (0.5, 0.9, 3)])
def test_sigma_gram_is_sufficient_and_tight(eps, delta, p):
    tau = gram.sigma_gram(eps, delta, p)
    true = mp_gauss_delta(eps, tau / (2 * math.sqrt(p) - 1))
    # tau / sens carries one rounding: allow the delta that a few ulp of sigma move
    assert true <= delta * (1 + 1e-13)
    assert rel(true, delta) < 1e-10 * max(1.0, abs(math.log(delta)))


@pytest.mark.parametrize("eps, delta, n, p", [(0.1, 0.01, 10**4, 2), (1.0, 1e-5, 1e6, 5), (0.01, 1e-3, 37.5, 1)])
def test_sigma_low_large_n_is_its_closed_form(eps, delta, n, p):
    tau = gram.sigma_gram(eps, delta, p)
    with mp.workdps(DPS):
        want = (mp.mpf(tau) ** 2 / (2 * mp.mpf(n))) ** mp.mpf(0.25)
    assert rel(gram.sigma_low_large_n(eps, delta, n, p), want) < 1e-14
    assert rel(gram._sigma_low_from_tau(tau, n), want) < 1e-14


# --------------------------------------------------------------------------- the distributed rival


@pytest.mark.parametrize("eps, delta, p, f, f_max", [(0.1, 0.01, 2, 0.0, 0.0), (0.1, 0.01, 2, 0.2, 0.0),
                                                      (1.0, 1e-5, 5, 0.1, 0.3), (0.5, 1e-3, 3, 0.5, 0.5),
                                                      (2.0, 0.2, 64, 0.9, 0.1), (0.3, 1e-4, 1, 0.3, 0.1)])
def test_distributed_tau_and_delta(eps, delta, p, f, f_max):
    tau = gram.sigma_gram(eps, delta, p)
    left = trust.distributed_tau(eps, delta, p, dropout=f, pad=f_max)
    assert rel(left, mp.mpf(tau) * mp.sqrt((1 - mp.mpf(f)) / (1 - mp.mpf(f_max)))) < 1e-15
    got = trust.distributed_delta(eps, delta, p, dropout=f, pad=f_max)
    true = mp_gauss_delta(eps, left / (2 * math.sqrt(p) - 1))
    assert mp.mpf(got) >= true                                   # an upper bound
    assert rel(got, true) < 1e-11 * max(1.0, abs(math.log(float(true))))
    if f <= f_max:
        assert got <= delta * (1 + 1e-11)


def test_distributed_rival_without_dropouts_by_default():
    eps, delta, p = 0.2, 1e-4, 3
    tau = trust.distributed_tau(eps, delta, p)
    true = mp_gauss_delta(eps, tau / (2 * math.sqrt(p) - 1))
    assert true <= delta * (1 + 1e-13) and rel(true, delta) < 1e-9
    assert rel(trust.distributed_delta(eps, delta, p), delta) < 1e-9


def test_distributed_delta_beyond_the_gaussian_range():
    # sigma below 1e-100: the bound is 1; a huge sigma is clipped to 1e102 (a smaller delta bounds it)
    assert trust._delta_up(1.0, np.array([1e-101]))[0] == 1.0
    assert trust._delta_up(1.0, np.array([1e-100 * (1 + 1e-6)]))[0] == pytest.approx(1.0, abs=1e-12)
    top = float(trust._delta_up(1e-100, np.array([1e110]))[0])
    assert mp.mpf(top) >= mp_gauss_delta(1e-100, 1e110)
    assert 0 < top < 1e-101
    # the 16-ulp rounding-down of sigma: the bound moves by no more than 16 ulp of sigma's worth
    eps, sigma = 0.5, 3.0
    got = float(trust._delta_up(eps, np.array([sigma]))[0])
    assert mp.mpf(got) >= mp_gauss_delta(eps, sigma * (1 - 16 * 2.0**-52))
    assert rel(got, mp_gauss_delta(eps, sigma)) < 1e-12           # 16 ulp of sigma, times the slope


# --------------------------------------------------------------------------- budget splits


def test_jl_budget_halves_both_parameters_for_the_test():
    assert jl._jl_budget(0.3, 1e-4, True) == (0.15, 0.15, 5e-5, 5e-5)
    assert jl._jl_budget(0.3, 1e-4, False) == (0.0, 0.3, 1e-4, 0.0)


# --------------------------------------------------------------------------- the domains, by name


@pytest.mark.parametrize("call, name, reason", [
    (lambda: gc.classical_gaussian_sigma(1.0, 0.1), "eps", "(the classical Gaussian mechanism is proved for eps < 1 only)"),
    (lambda: gc.classical_gaussian_sigma(1e-101, 0.1), "eps", None),
    (lambda: gc.analytic_gaussian_log_delta(1e-101, 1.0), "eps", None),
    (lambda: gc.analytic_gaussian_log_delta(1.01e4, 1.0), "eps", None),
    (lambda: gc.analytic_gaussian_log_delta(1.0, 1e-101), "sigma", None),
    (lambda: gc.analytic_gaussian_log_delta(1.0, 1.01e102), "sigma", None),
    (lambda: gc.setting_a_criterion_delta(1e-101, 1.0), "eps", None),
    (lambda: gc.setting_a_criterion_delta(1.01e4, 1.0), "eps", None),
    (lambda: gc.setting_a_criterion_delta(1.0, 1e-101), "sigma", None),
    (lambda: gc.setting_a_criterion_delta(1.0, 1.01e102), "sigma", None),
    (lambda: gc.setting_a_criterion_sigma(1.01e4, 0.1), "eps", None),
    (lambda: gc.setting_a_criterion_sigma(1e-101, 0.1), "eps", None),
    (lambda: wishart.wishart_scale(0.1, 0.01, 0), "p", None),
    (lambda: wishart.wishart_scale(0.1, 0.01, 65), "p", None),
    (lambda: wishart.wishart_delta(0.1, 1.0, 0), "p", None),
    (lambda: wishart.wishart_delta(0.1, 1e-301, 1), "c", None),
    (lambda: wishart.wishart_delta(0.1, 1.01e300, 1), "c", None),
    (lambda: gc.analytic_gaussian_sigma(0.1, 1 - 1e-13), "delta", "(nearer 1 the target is lost to rounding)"),
    (lambda: gc.analytic_gaussian_sigma(1.01e4, 0.1), "eps", None),
    (lambda: gc.analytic_gaussian_sigma(1e-101, 0.1), "eps", None),
    (lambda: wishart.wishart_delta(1e-7, 1.0, 1), "eps", None),
    (lambda: wishart.wishart_delta(10.5, 1.0, 1), "eps", None),
    (lambda: wishart.wishart_delta(np.array([0.1, 0.2]), 1.0, 1), "eps", None),
    (lambda: wishart.wishart_delta(0.1, np.array([1.0, 2.0]), 1), "c", None),
    (lambda: gram.sigma_gram(0.1, 1 - 1e-13, 2), "delta", "(nearer 1 the target is lost to rounding)"),
    (lambda: bounds.sigma_a_necessary(0.5, 0.6), "delta", "(Theorem 3.2 assumes eps < 1 and delta < 1/2)"),
    (lambda: bounds.sigma_a_sufficient(1.5, 0.1), "eps", "(Theorem 3.2 assumes eps < 1 and delta < 1/2)"),
    (lambda: bounds.sigma_a_corollary(0.5, 0.06), "delta", "(Corollary 3.3 assumes eps < 1 and delta < 0.05)"),
    (lambda: bounds.sigma_b_corollary(1.0, 0.1, 10, 2), "eps", "(Corollary 3.5 assumes eps < 1)"),
    (lambda: bounds.sigma_b_corollary(1.5, 0.1, 10, 2), "eps", "(Corollary 3.5 assumes eps < 1)"),
    (lambda: ssp.cross_sensitivity(0), "k", None),
    (lambda: jl.jl_w(0.1, 0.01, 0, 2), "r", None),
    (lambda: jl.jl_w(0.1, 0.01, 10, 0), "p", None),
    (lambda: jl.jl_w(0.1, 0.01, 10, 65), "p", None),
    (lambda: jl.jl_w(0.1, 1e-301, 10, 2), "delta", None),
    (lambda: jl.jl_delta(0.1, 3.0, 0, 2), "r", None),
    (lambda: jl.jl_delta(0.1, 3.0, 10, 0), "p", None),
    (lambda: jl.jl_delta(0.1, 1.01e150, 10, 2), "w", None),
    (lambda: jl.jl_delta(1e-7, 3.0, 10, 2), "eps", None),
    (lambda: jl.jl_delta(10.5, 3.0, 10, 2), "eps", None),
    (lambda: jl.jl_delta(np.array([0.1, 0.2]), 3.0, 10, 2), "eps", None),
    (lambda: jl.jl_delta(0.1, np.array([3.0, 4.0]), 10, 2), "w", None),
    (lambda: jl.jl_delta(0.1, -3.0, 10, 2), "w", None),
    (lambda: jl.jl_pair_delta(np.array([0.1, 0.2]), 0.5, -0.2, 3), "eps", None),
    (lambda: jl.jl_pair_delta(0.1, np.array([0.5, 0.6]), -0.2, 3), "mu1", None),
    (lambda: jl.jl_pair_delta(0.1, 0.5, np.array([-0.2, -0.1]), 3), "mu2", None),
    (lambda: jl.jl_pair_delta(0.1, 0.5, -0.2, 0), "r", None),
    (lambda: jl.jl_pair_delta(1e-7, 0.5, -0.2, 3), "eps", None),
    (lambda: jl.jl_pair_delta(0.1, -0.5, -0.2, 3), "need mu1", None),
    (lambda: jl.jl_pair_delta(0.1, 0.5, -1.0, 3), "need mu1", None),
    (lambda: jl.jl_pair_delta(0.1, 0.5, 0.2, 3), "need mu1", None),
    (lambda: jl.jl_pair_delta(10.5, 0.5, -0.2, 3), "eps", None),
    (lambda: jl.jl_pair_delta(0.1, "a", -0.2, 3), "mu1", None),
    (lambda: jl.jl_pair_delta(0.1, 0.5, "b", 3), "mu2", None),
    (lambda: bounds.g_b(1e-101, 0.1, 0.01, 100, 1), "sigma", None),
    (lambda: bounds.g_b(1.01e100, 0.1, 0.01, 100, 1), "sigma", None),
    (lambda: gram.gram_sensitivity(0), "p", None),
    (lambda: gram.sigma_low_large_n(0.1, 0.01, 0.0, 2), "n", None),
    (lambda: gram.sigma_low_large_n(0.1, 0.01, 2.0**54, 2), "n", None),
    (lambda: trust.distributed_tau(0.1, 0.01, 2, dropout=1.0), "dropout", None),
    (lambda: trust.distributed_tau(0.1, 0.01, 2, pad=1.0), "pad", None),
    (lambda: trust.distributed_delta(0.1, 0.01, 2, dropout=1.0), "dropout", None),
    (lambda: trust.distributed_delta(0.1, 0.01, 0), "p", None),
    (lambda: trust.distributed_delta("0.1", 0.01, 2), "eps", None),
])
def test_privacy_functions_refuse_outside_their_domain_by_name(call, name, reason):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    text = str(info.value)
    assert re.match(rf"{name}\b", text), text                 # the message starts with the argument's name
    if reason is not None:
        assert f"{reason}, got" in text


# --------------------------------------------------------------------------- the Wishart mechanism


def mp_wishart_delta(c, p):
    """1 - exp(-(2 sqrt(p) - 1)/(2c)): the mass one release puts where its neighbour's cannot be."""
    with mp.workdps(DPS):
        return -mp.expm1(-(2 * mp.sqrt(p) - 1) / (2 * mp.mpf(c)))


def _wishart_points():
    rng = np.random.default_rng(RNG_SEED + 7)
    eps = _loguniform(rng, 1e-6, 10.0, 30)
    delta = _loguniform(rng, 1e-290, 0.49, 30)
    p = rng.integers(1, 65, 30)
    corners = [(1.0, 0.1, 3), (0.1, 0.01, 1), (1e-6, 1e-12, 64), (10.0, 0.4999, 1), (0.001, 1e-300, 64),
               (1e-6, 1e-299, 1), (2.0, 2.0**-52, 2),
               (1.0, 5e-300, 64), (1.0, 1.6e-299, 64),   # scales of 1.5e300 and 4.7e299: refused, accepted
               (1.0, 1.25e-300, 1), (1.0, 9e-301 * 1.2, 1)]  # 4e299 accepted, 4.6e299 accepted
    return [(float(e), float(d), int(q)) for e, d, q in zip(eps, delta, p)] + corners


@pytest.mark.parametrize("eps, delta, p", _wishart_points())
def test_wishart_scale_is_sufficient_and_its_delta_an_upper_bound(eps, delta, p):
    try:
        c = wishart.wishart_scale(eps, delta, p)
    except ValueError as exc:                                    # a scale above 5e299, refused by name
        sens = 2 * math.sqrt(p) - 1
        assert str(exc).startswith(f"delta must be large enough that the Wishart scale stays below 5e+299 "
                                   f"(about delta >= {sens / 1e300:.1e} for p = {p})")
        assert mp_wishart_delta(1e300 / 2, p) > delta
        return
    true = mp_wishart_delta(c, p)
    assert true <= delta                                         # sufficient, to the last bit
    # and only a few ulp more noise: 16 ulp of delta at most over 3,000 random draws, 27 allowed
    assert rel(true, delta) < 6e-15
    reported = wishart.wishart_delta(eps, c, p)
    assert mp.mpf(reported) >= true and rel(reported, true) < 1e-14
    assert wishart.WISHART_C_DOMAIN[0] <= c <= wishart.WISHART_C_DOMAIN[1]


@pytest.mark.parametrize("c, p", [(1e-300, 1), (1e-3, 64), (0.7, 2), (11.693667213723046, 3), (1e12, 64),
                                  (1e300, 1), (3.0, 5)])
def test_wishart_delta_at_the_corners(c, p):
    true = mp_wishart_delta(c, p)
    for eps in (1e-6, 0.5, 10.0):                                # the same at every eps
        got = wishart.wishart_delta(eps, c, p)
        assert mp.mpf(got) >= true and got <= 1.0
        assert rel(got, true) < 1e-14


@pytest.mark.parametrize("eps, p", [(0.1, 1), (1e-6, 64), (10.0, 7)])
def test_wishart_paper_scale(eps, p):
    assert rel(wishart.wishart_scale(eps, 0.01, p, calibration="paper"), 3 * (2 * mp.sqrt(p) - 1) / (2 * mp.mpf(eps))) < 1e-15
    with pytest.raises(ValueError, match="calibration"):
        wishart.wishart_scale(eps, 0.01, p, calibration="exact")


def test_sigma_low_large_n_names_the_arguments_that_do_not_broadcast():
    with pytest.raises(ValueError) as info:
        gram.sigma_low_large_n(0.1, 0.01, np.full(3, 100.0), np.array([1, 2]))
    assert "shapes eps, delta, p (2,), n (3,)" in str(info.value)


# --------------------------------------------------------------------------- Theorem 3.4 (Setting B)


def mp_ncx2_sf(x, df, nc, cdf=False):
    """P[T > x] (or P[T <= x]), T ~ chi2_df(nc): the Poisson mixture of central laws, in mpmath."""
    with mp.workdps(40):
        x, df, half = mp.mpf(x), mp.mpf(df), mp.mpf(nc) / 2
        if x <= 0:
            return mp.mpf(0) if cdf else mp.mpf(1)
        total, j, weight = mp.mpf(0), 0, mp.exp(-half)
        while True:
            a = df / 2 + j
            term = weight * (mp.gammainc(a, 0, x / 2, regularized=True) if cdf
                             else mp.gammainc(a, x / 2, mp.inf, regularized=True))
            total += term
            if j > half and (term == 0 or term < total * mp.mpf(10) ** -45):
                return total
            j += 1
            weight *= half / j


def mp_g_tail(sigma, eps, delta, n, p, corrected=False):
    """P[T > x(sigma)] for Theorem 3.4: g(sigma) <= 0 exactly when it is <= delta."""
    with mp.workdps(40):
        s = mp.mpf(sigma) ** 2
        c = (2 * mp.sqrt(p) + 1) / (2 * (n - p - (1 if corrected else 0)))
        x = (s * mp.mpf(eps) - mp.sqrt(p)) / c
        return mp_ncx2_sf(x, 2 * (n - p), p / s)


# eps, delta, n, p, corrected: delta on both sides of 1/2 (the tail's two branches), n - p from 1 up
SIGMA_B_POINTS = [(0.1, 0.01, 100, 1, False), (1.0, 1e-5, 10**4, 5, False), (0.5, 1e-12, 2000, 64, False),
                  (1e-3, 1e-300, 50, 2, False), (3.0, 0.3, 10, 9, False), (0.2, 0.9, 30, 3, False),
                  (0.1, 0.01, 100, 1, True), (2.0, 0.7, 12, 10, True)]


@pytest.mark.parametrize("eps, delta, n, p, corrected", SIGMA_B_POINTS)
def test_sigma_b_is_sufficient_and_tight(eps, delta, n, p, corrected):
    sigma = bounds.sigma_b(eps, delta, n, p, corrected=corrected)
    assert mp_g_tail(sigma, eps, delta, n, p, corrected) <= delta                 # sufficient
    assert mp_g_tail(sigma * (1 - 1e-8), eps, delta, n, p, corrected) > delta     # within 1e-8 of the root
    assert (bounds._sigma_b(eps, delta, n, p, corrected) if corrected else bounds._sigma_b(eps, delta, n, p)) == sigma
    assert bounds.g_b(sigma, eps, delta, n, p, corrected=corrected) <= 1e-12 * sigma**2 * eps   # its rounding
    assert bounds.g_b(sigma * (1 - 1e-8), eps, delta, n, p, corrected=corrected) > 0


def mp_ncx2_isf(delta, df, nc):
    """Upper delta-quantile of chi2_df(nc), solved in mpmath."""
    with mp.workdps(40):
        guess = mp.mpf(float(stats.ncx2.isf(delta, df, nc)) if nc > 0 else float(stats.chi2.isf(delta, df)))
        lower = delta > 0.5
        target = (1 - mp.mpf(delta)) if lower else mp.mpf(delta)
        return mp.findroot(lambda x: mp.log(mp_ncx2_sf(x, df, nc, cdf=lower)) - mp.log(target), guess)


@pytest.mark.parametrize("delta, df, nc", [(0.01, 198, 0.02), (1e-5, 19990, 0.6), (1e-12, 3872, 1.3),
                                           (1e-300, 96, 1e-4), (0.3, 2, 9.0), (0.9, 54, 0.2), (0.6, 10, 40.0),
                                           (0.99, 10, 40.0), (0.95, 2, 0.5)])   # (the last two: the bracket's low end)
def test_ncx2_upper_quantile_is_never_below_the_true_one(delta, df, nc):
    got = float(bounds._ncx2_isf_upper(delta, df, nc))
    true = mp_ncx2_isf(delta, df, nc)
    assert got >= true and rel(got, true) < 1e-9
    # g_b is that quantile times the coefficient, plus sqrt(p) - sigma^2 eps (p = 2, sigma from nc)
    n, p = df / 2 + 2, 2
    sigma = math.sqrt(p / nc)
    g = bounds.g_b(sigma, 0.1, delta, n, p)
    truth = (2 * math.sqrt(p) + 1) / (2 * (n - p)) * true + math.sqrt(p) - sigma**2 * 0.1
    assert g >= truth - 1e-12 * abs(truth) and abs(g - truth) < 1e-9 * (abs(truth) + float(true))


def test_birge_bounds_are_lemma_8_1():
    df, nc = np.array([10.0, 1e3, 3e9]), np.array([0.5, 2e6, 7.0])
    for log_d in (-0.5, -30.0, -600.0):
        y = -log_d
        x = df + nc + 2 * np.sqrt((df + 2 * nc) * y) + 2 * y
        assert np.allclose(bounds._birge_quantile(log_d, df, nc), x, rtol=1e-15)
        assert np.allclose(bounds._birge_log_tail(x, df, nc), log_d, rtol=1e-12)
    assert np.all(bounds._birge_log_tail(df + nc - 1.0, df, nc) == 0.0)        # below the mean: the bound 1
    x = df + nc + 0.25                                                          # (sqrt(v + 2 (x - m)) - sqrt(v))^2 / 4
    assert np.allclose(bounds._birge_log_tail(x, df, nc), -(np.sqrt(df + 2 * nc + 0.5) - np.sqrt(df + 2 * nc)) ** 2 / 4,
                       rtol=1e-12)
    # the noncentral quantile is Birge's exactly beyond df = 2e9 or nc = 1e6, the accurate one up to there
    for d, k, lam in [(1e-5, 3e9, 5.0), (0.01, 100.0, 2e6), (0.3, 2.5e9, 2e6)]:
        assert float(bounds._ncx2_isf_upper(d, k, lam)) == pytest.approx(
            k + lam + 2 * math.sqrt((k + 2 * lam) * -math.log(d)) + 2 * -math.log(d), rel=1e-15)
    for d, k, lam in [(1e-5, 2e9, 5.0), (0.01, 100.0, 1e6)]:
        birge = k + lam + 2 * math.sqrt((k + 2 * lam) * -math.log(d)) + 2 * -math.log(d)
        assert float(bounds._ncx2_isf_upper(d, k, lam)) < birge * (1 - 1e-7)
    # a bound: never below the true tail (scipy's noncentral law, where it is accurate)
    for x in (15.0, 40.0, 80.0):
        assert bounds._birge_log_tail(x, 10.0, 0.5) >= stats.ncx2.logsf(x, 10.0, 0.5)


def mp_birge_sigma(eps, delta, n, p):
    """sigma^2 eps = c B(delta; 2(n - p), p/sigma^2) + sqrt(p), B Birge's quantile bound: solved in mpmath."""
    with mp.workdps(40):
        e, y, k = mp.mpf(eps), -mp.log(delta), 2 * (mp.mpf(n) - p)
        c = (2 * mp.sqrt(p) + 1) / (2 * (mp.mpf(n) - p))

        def f(s):
            lam = p / s
            return c * (k + lam + 2 * mp.sqrt((k + 2 * lam) * y) + 2 * y) + mp.sqrt(p) - s * e

        return mp.sqrt(mp.findroot(f, (mp.sqrt(p) / e, 10 * (c * (k + 4 * y) + mp.sqrt(p)) / e), solver="anderson"))


@pytest.mark.parametrize("eps, delta, n, p", [(0.1, 1e-5, 10**10, 2), (1e-3, 0.01, 2**53, 64), (2.0, 0.8, 5e9, 1),
                                              (1e4, 1e-5, 10**10, 64), (1e4, 0.8, 10**10, 64),
                                              (0.1, 1e-30, 10**10, 2), (1.0, 1e-300, 10**10, 3)])
def test_sigma_b_beyond_the_accurate_tail_is_birges_root(eps, delta, n, p):
    # beyond df = 2e9 the tail is Birge's bound e^-y; for delta > 1/2 it is compared as 1 - delta
    # against 1 - e^-y, the same root (at eps = 1e4, p = 64 the bracket's end is 4e-6 above it);
    # below delta = 1e-16 only the upper-tail form can tell e^-y from delta (1 - e^-y rounds to 1)
    sigma = bounds.sigma_b(eps, delta, n, p)
    true = mp_birge_sigma(eps, delta, n, p)
    assert sigma >= true and rel(sigma, true) < 1e-12


def test_sigma_b_switches_to_birge_above_df_2e9_only():
    eps, delta, p = 0.5, 1e-5, 1
    at = bounds.sigma_b(eps, delta, 10**9 + 1, p)             # df = 2e9: the accurate tail
    assert at < mp_birge_sigma(eps, delta, 10**9 + 1, p) * (1 - 1e-7)
    above = bounds.sigma_b(eps, delta, 10**9 + 2, p)          # df = 2e9 + 2: Birge's bound
    assert rel(above, mp_birge_sigma(eps, delta, 10**9 + 2, p)) < 1e-12


def test_sigma_b_large_noncentrality_uses_the_bound():
    # eps large, n small: p/sigma^2 above 1e6 would need sigma < 1e-3; at eps = 1e4, sigma ~ 0.03 (nc ~ 2e3)
    eps, delta, n, p = 1e4, 1e-3, 3, 2
    sigma = bounds.sigma_b(eps, delta, n, p)
    assert mp_g_tail(sigma, eps, delta, n, p) <= delta
    assert mp_g_tail(sigma * (1 - 1e-8), eps, delta, n, p) > delta


def test_gaussian_upper_quantile_is_the_normal_isf():
    for d in (0.01, 1e-300, 0.97):
        assert rel(bounds.gaussian_upper_quantile(d), mp_isf(d)) < 1e-14
    assert abs(bounds.gaussian_upper_quantile(0.5)) < 1e-16
    out = bounds.gaussian_upper_quantile(np.array([0.01, 0.2]))
    assert out.shape == (2,) and rel(out[1], mp_isf(0.2)) < 1e-14


def test_sigma_b_block_is_sigma_b_at_the_smallest_block():
    sigma = bounds.sigma_b_block(0.5, 1e-5, [300, 40, 4000], 3)
    assert mp_g_tail(sigma, 0.5, 1e-5, 40, 3) <= 1e-5 < mp_g_tail(sigma * (1 - 1e-8), 0.5, 1e-5, 40, 3)
    corr = bounds.sigma_b_block(0.5, 1e-5, [300, 40, 4000], 3, corrected=True)
    assert mp_g_tail(corr, 0.5, 1e-5, 40, 3, True) <= 1e-5 < mp_g_tail(corr * (1 - 1e-8), 0.5, 1e-5, 40, 3, True)
    with pytest.raises(TypeError, match="^corrected"):
        bounds.sigma_b_block(0.5, 1e-5, [300, 40], 3, corrected=1)


@pytest.mark.parametrize("eps, delta, n, p", [(0.1, 0.01, 100, 1), (0.9, 1e-5, 10**4, 5), (0.5, 0.3, 20, 9),
                                              (2.0, 0.01, 100, 2), (0.3, 0.7, 50, 2), (0.05, 1e-40, 10**5, 3),
                                              (1.0, 0.3, 100, 1), (1.5, 0.3, 100, 1), (0.5, 0.5, 100, 1)])
def test_sufficient_sigma_is_the_smaller_theorem(eps, delta, n, p):
    with mp.workdps(DPS):
        g = mp_isf(delta)
        a = g / eps * (1 + 1 / (2 * g**2)) if (eps < 1 and delta < 0.5) else mp.inf
    b = bounds.sigma_b(eps, delta, n, p)
    assert bounds.sufficient_sigma(eps, delta, n, p) == bounds.sufficient_sigma(eps, delta, n, p, "B")   # the default
    for setting in ("B", "C", "b"):
        got = bounds.sufficient_sigma(eps, delta, n, p, setting)
        assert rel(got, min(mp.mpf(b), a)) < 1e-14 if a < mp.inf else got == b
    if a < mp.inf:
        assert rel(bounds.sufficient_sigma(eps, delta, n, p, "A"), a) < 1e-14
    else:
        with pytest.raises(ValueError):
            bounds.sufficient_sigma(eps, delta, n, p, "A")
    with pytest.raises(ValueError, match="setting"):
        bounds.sufficient_sigma(eps, delta, n, p, "D")


# --------------------------------------------------------------------------- the JL release


def mp_chi2(x, r, upper):
    with mp.workdps(50):
        x = mp.mpf(x) / 2
        return mp.gammainc(mp.mpf(r) / 2, x, mp.inf, regularized=True) if upper else \
            mp.gammainc(mp.mpf(r) / 2, 0, x, regularized=True)


def mp_delta_up(eps, mu, r):
    """delta(eps) of N(0, 1)^r against N(0, 1 + mu)^r: (P(Q < q) - e^eps P(Q < q/(1 + mu)), Q ~ chi2_r), and the two terms."""
    with mp.workdps(50):
        e, mu = mp.mpf(eps), mp.mpf(mu)
        q = (r * mp.log1p(mu) - 2 * e) * (1 + mu) / mu
        if q <= 0:
            return mp.mpf(0), mp.mpf(0)
        a, b = mp_chi2(q, r, False), mp.exp(e) * mp_chi2(q / (1 + mu), r, False)
        return a - b, a + b


def mp_delta_down(eps, nu, r):
    """delta(eps) of N(0, 1)^r against N(0, 1 - nu)^r: P(Q > q) - e^eps P(Q > q/(1 - nu)), and the two terms."""
    with mp.workdps(50):
        e, nu = mp.mpf(eps), mp.mpf(nu)
        q = (2 * e - r * mp.log1p(-nu)) * (1 - nu) / nu
        a, b = mp_chi2(q, r, True), mp.exp(e) * mp_chi2(q / (1 - nu), r, True)
        return a - b, a + b


def mp_jl_delta(eps, w, r, p):
    """jl_delta's quantity: the worse end of the arc of radius rho = (2 sqrt(p) - 1)/w^2 (1 from rho = 1 on)."""
    with mp.workdps(50):
        rho = (2 * mp.sqrt(p) - 1) / mp.mpf(w) ** 2
        if rho >= 1:
            return mp.mpf(1), mp.mpf(1)
        return max(mp_delta_down(eps, rho, r), mp_delta_up(eps, rho / (1 - rho), r))


def assert_jl_bound(got, truth, terms):
    """An upper bound within its allowance: 1e-10 of each tail (TAIL_RTOL) plus 1e-9 relative (the rounding of rho)."""
    floor = max(truth, mp.mpf(jl.DELTA_FLOOR))
    assert mp.mpf(got) >= min(floor, 1)
    assert mp.mpf(got) <= min(1, floor * (1 + 1e-9) + 3e-10 * terms), (got, truth, terms)


JL_POINTS = [(0.1, 0.01, 100, 2), (1.0, 1e-5, 1000, 5), (0.5, 1e-12, 10**4, 64), (3.0, 0.3, 10, 1),
             (1e-3, 1e-30, 3000, 2), (10.0, 1e-300, 1, 1), (1e-6, 0.2, 50, 3), (2.0, 1e-100, 2000, 7),
             (10.0, 0.45, 1, 1), (1.0, 2e-300, 100, 2)]   # (the last: delta at the bracket's end rho = 0.999 is within a factor e of it)


@pytest.mark.parametrize("eps, delta, r, p", JL_POINTS)
def test_jl_w_is_sufficient_and_tight(eps, delta, r, p):
    w = jl.jl_w(eps, delta, r, p)
    assert mp_jl_delta(eps, w, r, p)[0] <= delta                        # sufficient
    assert mp_jl_delta(eps, w * (1 - 1e-6), r, p)[0] > delta            # and within 1e-6 of the root
    got = jl.jl_delta(eps, w, r, p)
    assert got <= delta
    assert_jl_bound(got, *mp_jl_delta(eps, w, r, p))


@pytest.mark.parametrize("eps, w, r, p", [(0.1, 3.0, 100, 2), (1.0, 1.5, 7, 1), (0.01, 40.0, 20000, 5),
                                          (5.0, 2.0, 1, 3), (1e-6, 10.0, 1000, 64), (0.3, 1.0, 100, 1),
                                          (0.3, 1.0 + 1e-12, 100, 1), (0.1, 1.2, 100, 2), (1.0, 1e6, 100, 2),
                                          (1.0, 1e100, 3, 2), (2.0, 6.0, 10**5, 2)])
def test_jl_delta_is_an_upper_bound_within_its_allowance(eps, w, r, p):
    assert_jl_bound(jl.jl_delta(eps, w, r, p), *mp_jl_delta(eps, w, r, p))


@pytest.mark.parametrize("eps, mu, r", [(0.1, 0.05, 100), (1.0, 3.0, 2), (1e-3, 1e-4, 10**4), (2.0, 0.5, 1),
                                        (0.5, 0.9, 30), (8.0, 0.01, 1000), (1e-6, 0.3, 5000),
                                        (0.5, 3.0, 1)])   # (the last: the up threshold q = 0.515, below 1)
def test_jl_rank_one_deltas_are_chi_square_differences(eps, mu, r):
    assert_jl_bound(jl._delta_up(eps, mu, r), *mp_delta_up(eps, mu, r))
    nu = mu / (1 + mu)
    assert_jl_bound(jl._delta_down(eps, nu, r), *mp_delta_down(eps, nu, r))
    assert_jl_bound(jl.jl_pair_delta(eps, mu, 0.0, r), *mp_delta_up(eps, mu, r))
    assert_jl_bound(jl.jl_pair_delta(eps, 0.0, -nu, r), *mp_delta_down(eps, nu, r))


def test_jl_pair_delta_with_two_eigenvalues_is_the_two_exponentials_at_r_2():
    # r = 2: a1 Q1 + a2 Q2 with Q ~ Exp(mean 2), a1 > 0 > a2, has the distribution function in closed form
    def prob(a1, a2, t):
        b = -a2
        return 1 - a1 / (a1 + b) * mp.exp(-t / (2 * a1)) if t >= 0 else b / (a1 + b) * mp.exp(t / (2 * b))

    assert jl.jl_pair_delta(0.5, 0.0, 0.0, 7) == 0.0
    # (the quadrature's worst checked point, 2.0e-9 off: the kink of its integrand, as jl_pair_delta's docstring says)
    for eps, mu1, mu2 in [(0.05, 0.1, -0.1)]:
        with mp.workdps(40):
            t = 2 * (mp.mpf(2) / 2 * (mp.log1p(mu1) + mp.log1p(mu2)) - eps)
            true = prob(mu1 / (1 + mu1), mu2 / (1 + mu2), t) - mp.exp(eps) * prob(mu1, mu2, t)
        assert abs(jl.jl_pair_delta(eps, mu1, mu2, 2) - max(true, 0)) < 3e-9


def swapped_pair_delta(eps, mu1, mu2, r):
    """jl_pair_delta's two-eigenvalue delta integrated the other way: over Q1, with Q2's survival function.

    P(a1 Q1 + a2 Q2 < t) = P(Q2 > (a1 Q1 - t)/|a2|): the chi-square distribution function up to the kink
    Q1 = t/a1, then a quadrature of the density times scipy.special's survival function on a window of
    60 standard deviations in 24 pieces (against mpmath at 25 digits at r = 1, 3, 10, 100, 1000: 5e-13).
    """
    t = r * (math.log1p(mu1) + math.log1p(mu2)) - 2.0 * eps
    h = r / 2.0
    lg = math.lgamma(h) + h * math.log(2.0)

    def pdf(q):
        return math.exp((h - 1.0) * math.log(q) - q / 2.0 - lg) if q > 0 else 0.0

    def prob(a1, a2):
        k = max(t / a1, 0.0)
        sd = math.sqrt(2.0 * r)
        edges = np.union1d(np.linspace(max(k, r - 60 * sd), r + 60 * sd, 25), [k])
        edges = edges[edges >= k]
        return special.chdtr(r, k) + sum(
            integrate.quad(lambda q: pdf(q) * special.chdtrc(r, (a1 * q - t) / -a2), a, b,
                           epsabs=1e-15, epsrel=1e-12, limit=400)[0] for a, b in zip(edges[:-1], edges[1:]))

    return max(prob(mu1 / (1 + mu1), mu2 / (1 + mu2)) - math.exp(eps) * prob(mu1, mu2), 0.0)


@pytest.mark.parametrize("eps, mu1, mu2, r", [(0.05, 0.1, -0.1, 1), (0.01, 0.5, -0.3, 2), (0.3, 1.0, -0.5, 3),
                                              (0.05, 0.1, -0.1, 10), (0.1, 0.05, -0.05, 100),
                                              (0.2, 0.01, -0.01, 1000), (0.1, 0.003, -0.003, 10**4),
                                              (1.0, 10.0, -0.9, 2), (2.0, 5.0, -0.8, 5)])
def test_jl_pair_delta_with_two_eigenvalues_against_the_other_order_of_integration(eps, mu1, mu2, r):
    # within the documented accuracy (about 2e-9; about 1e-12 at these points), at r from 1 to 10^4
    assert abs(jl.jl_pair_delta(eps, mu1, mu2, r) - swapped_pair_delta(eps, mu1, mu2, r)) < 2.5e-9


@pytest.mark.parametrize("x, r, upper", [(1200.0, 1000, True), (800.0, 1000, False), (2e6 + 2e4, 10**6, True),
                                         (1e6 - 1e4, 10**6, False), (5e3, 1000, True), (20.0, 10, True),
                                         (900.0, 1000, True), (1e-3, 3, False),
                                         (0.5, 1000, False)])   # (the last: scipy's log cdf is -inf there)
def test_jl_chi2_log_tail_against_mpmath(x, r, upper):
    assert abs(jl._chi2_log_tail(x, r, upper) - mp.log(mp_chi2(x, r, upper))) < 1e-9


def test_jl_as_delta_is_clipped_to_the_reported_range():
    assert jl._as_delta(math.log(0.3)) == pytest.approx(0.3, rel=1e-15)
    assert jl._as_delta(-800.0) == 1e-300 and jl._as_delta(-np.inf) == 1e-300
    assert jl._as_delta(0.5) == 1.0 and jl._as_delta(0.0) == 1.0
    assert jl._mu_up(0.25) == 0.25 * (1 + 4 * 2.0**-52)


# --------------------------------------------------------------------------- the comparison's thresholds


def test_comparison_thresholds_are_the_books():
    # module constants are not mutated by mutmut 3: checked here against the values chapter 9 states
    assert compare.NOT_PD_MAX == 0.01          # an RMSE is reported below a 1 % not-positive-definite rate
    assert compare.MARGIN_MIN == 5.0           # first order is reported at a margin of 5 or more
    assert compare.JL_CAP == 100               # jl_best's projection: at most 100 times the data's rows
    assert compare.N_EXACT_LOW == 10**6        # sigma_low is the exact projection bound up to 10^6 rows
    assert compare._Z99 == pytest.approx(float(mp_isf(0.01)), rel=1e-14)
    assert compare._Z975 == pytest.approx(float(mp_isf(0.025)), rel=1e-14)


def test_rmse_reported_below_one_percent_not_pd_only():
    nan = float("nan")
    assert compare.rmse_reported({"rmse": 2.5, "not_pd": 0.0099}) == 2.5
    assert compare.rmse_reported({"rmse": 2.5, "not_pd": 0.01}) is None
    assert compare.rmse_reported({"rmse": 2.5, "not_pd": 0.5, "not_pd_block": 0.0}) is None
    assert compare.rmse_reported({"rmse": 2.5, "not_pd": nan, "not_pd_block": 0.02}) is None
    assert compare.rmse_reported({"rmse": 2.5, "not_pd": nan, "not_pd_block": 0.005}) == 2.5
    assert compare.rmse_reported({"rmse": 2.5, "not_pd_block": 0.01}) is None
    assert compare.rmse_reported({"rmse": 2.5, "not_pd": nan, "not_pd_block": nan}) == 2.5
    assert compare.rmse_reported({"rmse": 2.5}) == 2.5


def _margin_gram():
    rng = np.random.default_rng(RNG_SEED + 9)
    X = rng.normal(size=(200, 4)) @ np.diag([1.0, 0.5, 2.0, 1.0])
    return X.T @ X


@pytest.mark.parametrize("kind, tau_lambda", [("A", 1.3), ("B0", 1.3), ("Blow", 1.3), ("gram", 1.3),
                                              ("gram_table", 1.3), ("wishart", 1.3), ("jl", 1.3), ("jl_always", 1.3),
                                              ("jl_best", 1.3), ("adassp", 1.3), ("adassp_joint", 1.3),
                                              ("adassp", 20.0), ("adassp", 0.01)])
def test_first_order_margin_is_lambda_min_over_the_noise_sd(kind, tau_lambda):
    # sd(v^T E v) for the bottom unit eigenvector v of H, from each mechanism's noise law:
    # masking 4 sigma^2 v^T K v + 2 n sigma^4; the rival's symmetric noise tau^2; the Wishart
    # mechanism's tau^2 = 2 (p + 1) c^2; JL's Wishart average of r rows 2 (v^T G v)^2 / r
    K, n, eps, delta = _margin_gram(), 200, 0.5, 1e-5
    k = K.shape[0] - 1
    level = {"sigma": 0.7, "tau": 3.0, "c": 0.9, "w": 2.5, "r": 40, "test": True,
             "tau_lambda": tau_lambda, "tau_gram": 30.0, "tau_cross": 1.1}
    lam, V = np.linalg.eigh(K[:k, :k])
    lam0, v = lam[0], V[:, 0]
    if kind in ("A", "B0", "Blow"):
        s = level["sigma"]
        want = lam0 / math.sqrt(4 * s**2 * lam0 + 2 * n * s**4)
    elif kind in ("gram", "gram_table"):
        want = lam0 / level["tau"]
    elif kind == "wishart":
        want = lam0 / (math.sqrt(2 * (k + 2)) * level["c"])
    elif kind.startswith("jl"):
        want = lam0 / (math.sqrt(2 / level["r"]) * (lam0 + level["w"] ** 2))
    else:   # AdaSSP: the ridge at the 99 % quantile of its noisy lambda_min, from its step-1 budget
        tl, tg = level["tau_lambda"], level["tau_gram"]
        lam_noisy = max(lam0 - tl * math.sqrt(math.log(6 / delta)), 0.0) + tl * float(mp_isf(0.01))
        ridge = max(0.0, tg * math.sqrt(k * math.log(2 * k**2 / 0.05)) - lam_noisy)
        assert ridge > 0                      # the ridge is active at these levels
        want = (lam0 + ridge) / tg
    got = compare.first_order_margin(kind, K, n, eps, delta, level=level)
    assert got == pytest.approx(want, rel=1e-12)


def test_first_order_margin_takes_the_mechanisms_own_noise_by_default():
    K = _margin_gram()
    lam0 = np.linalg.eigvalsh(K[:3, :3])[0]
    assert compare.first_order_margin("gram", K, 200, 0.5, 1e-5) == pytest.approx(
        lam0 / gram.sigma_gram(0.5, 1e-5, 4), rel=1e-12)
    with pytest.raises(ValueError, match="kind"):
        compare.first_order_margin("nope", K, 200, 0.5, 1e-5, level={})
    with pytest.raises(ValueError, match="^K must be symmetric"):
        compare.first_order_margin("gram", np.array([[1.0, 2.0], [3.0, 1.0]]), 200, 0.5, 1e-5)


def test_first_order_margin_with_an_inactive_ridge_is_lambda_min_over_tau_gram():
    # AdaSSP's ridge is max(0, tau_gram sqrt(k log(2 k^2/rho)) - lambda_noisy): with tau_gram = 1 it is
    # about 4.2 - 44 < 0, so the ridge is 0 and the margin is lambda_min(K_zz) / tau_gram exactly
    K = _margin_gram()
    lam0 = float(np.linalg.eigvalsh(K[:3, :3])[0])
    level = {"tau_lambda": 1.0, "tau_gram": 1.0, "tau_cross": 1.0}
    assert 1.0 * math.sqrt(3 * math.log(2 * 9 / 0.05)) < lam0 - math.sqrt(math.log(6 / 1e-5))
    assert compare.first_order_margin("adassp", K, 200, 0.5, 1e-5, level=level) == pytest.approx(lam0, rel=1e-12)


def test_first_order_margin_takes_the_projections_rows_from_r():
    # JL's margin lambda_min / (sqrt(2/r) (lambda_min + w^2)) with w calibrated for r rows (half the budget
    # to the projection: jl_w itself is checked against mpmath above), not for the n rows of the default
    K = _margin_gram()
    lam0 = float(np.linalg.eigvalsh(K[:3, :3])[0])
    for r in (40, 200):
        w = jl.jl_w(0.25, 0.5e-5, r, 4)
        want = lam0 / (math.sqrt(2 / r) * (lam0 + w**2))
        assert compare.first_order_margin("jl", K, 200, 0.5, 1e-5, r=r) == pytest.approx(want, rel=1e-12)


def test_first_order_margin_computes_only_its_own_mechanisms_noise():
    # at delta = 1e-120 the Wishart mechanism's scale is refused (past 1e100); the rival's margin is still defined
    K = _margin_gram()
    lam0 = float(np.linalg.eigvalsh(K[:3, :3])[0])
    assert compare.first_order_margin("gram", K, 200, 0.5, 1e-120) == pytest.approx(
        lam0 / gram.sigma_gram(0.5, 1e-120, 4), rel=1e-12)


def test_first_order_margin_with_a_noise_variance_below_one():
    # a variance in (0, 1] is still a finite margin: the rival's tau = 0.5 gives lambda_min / 0.5
    K = _margin_gram()
    lam0 = float(np.linalg.eigvalsh(K[:3, :3])[0])
    assert compare.first_order_margin("gram", K, 200, 0.5, 1e-5, level={"tau": 0.5}) == pytest.approx(
        lam0 / 0.5, rel=1e-12)
