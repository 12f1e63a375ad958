"""The conditions under chapter 9's claims, computed: the PD event of Proposition 9.5 and the dropout cost of masking.

* :func:`dpmask.rivals.gram.gram_pd_probability` (the probability that the rival's ``K + E`` is positive
  definite, the event on which its table has the law of a masked release) is checked against
  independent truth: for p = 2 an exact two-dimensional quadrature written here (``K + E`` is
  positive definite iff its diagonal is positive and ``b^2 < a c``, with the three entries
  independent normals), for p = 5 a simulation written here that draws ``svec(E)`` directly, and
  the two exact bounds recomputed with scipy's chi-square and normal laws.
* :func:`dpmask.rivals.trust.masking_dropout_cost` (the noise masking needs for the smallest number of
  rows that may complete, against the noise for the planned number) is checked against Theorem
  3.4's root computed here with scipy's noncentral chi-square quantile and brentq, and against
  the closed form ``(n / n_min)^(1/4)`` of the large-n lower bound with the Gaussian calibration
  taken from dp-accounting.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, special, stats

from dpmask import rivals
from dpmask.rivals import gram, trust

TABLE1_LEVELS = [(0.1, 0.01), (0.1, 0.001), (0.01, 0.01), (0.01, 0.001), (0.001, 0.01), (0.001, 0.001)]


# --------------------------------------------------------------------------- the PD event


def _pd_probability_p2(K, tau, nodes=800):
    """P[K + E PD] for p = 2 by quadrature: a = K11 + E11, c = K22 + E22 ~ N(., tau^2), b = K12 + E12 ~ N(., tau^2/2).

    PD iff a > 0, c > 0 and |b| < sqrt(a c).  Substituting a = u^2, c = v^2 makes the integrand smooth,
    and Gauss-Legendre with 800 nodes in each of u, v integrates it to far below the Monte Carlo error.
    """
    s = tau / math.sqrt(2)
    x, w = np.polynomial.legendre.leggauss(nodes)

    def grid(mean):
        top = math.sqrt(max(mean, 0.0) + 12 * tau)
        u = (x + 1) * top / 2
        return u, w * top / 2 * 2 * u * stats.norm.pdf(u**2, mean, tau)     # da = 2u du

    u, wu = grid(K[0, 0])
    v, wv = grid(K[1, 1])
    r = np.outer(u, v)                                                        # sqrt(a c)
    inner = special.ndtr((r - K[0, 1]) / s) - special.ndtr((-r - K[0, 1]) / s)
    return float(wu @ inner @ wv)


def _pd_probability_sim(K, tau, draws, seed):
    """P[K + E PD] by a simulation of its own: svec(E) has i.i.d. N(0, tau^2) coordinates."""
    p = K.shape[0]
    rng = np.random.default_rng(seed)
    iu = np.triu_indices(p, 1)
    E = np.zeros((draws, p, p))
    idx = np.arange(p)
    E[:, idx, idx] = tau * rng.standard_normal((draws, p))
    off = tau / math.sqrt(2) * rng.standard_normal((draws, len(iu[0])))
    E[:, iu[0], iu[1]] = off
    E[:, iu[1], iu[0]] = off
    # Sylvester's criterion: every leading principal minor positive
    ok = np.ones(draws, bool)
    for k in range(1, p + 1):
        ok &= np.linalg.det((K + E)[:, :k, :k]) > 0
    return ok.mean(), math.sqrt(ok.mean() * (1 - ok.mean()) / draws)


@pytest.mark.parametrize("n, eps, delta", [(1000, 0.01, 0.001), (1000, 0.001, 0.01), (10_000, 0.001, 0.001)])
def test_pd_probability_p2_matches_quadrature(n, eps, delta):
    K = n * rivals.example_moments(2)
    tau = rivals.sigma_gram(eps, delta, 2)
    truth = _pd_probability_p2(K, tau)
    r = gram.gram_pd_probability(K, tau, draws=40_000, rng=11)
    assert 0.01 < truth < 0.99           # a cell where the event is uncertain
    assert abs(r.estimate - truth) < 5 * max(r.se, 1e-4), (r, truth)
    assert r.se == pytest.approx(math.sqrt(r.estimate * (1 - r.estimate) / 40_000))
    assert r.lower <= truth <= r.upper


@pytest.mark.parametrize("n, eps, delta", [(1000, 0.1, 0.01), (10_000, 0.01, 0.001), (10_000, 0.001, 0.001)])
def test_pd_probability_p5_matches_an_independent_simulation(n, eps, delta):
    K = n * rivals.example_moments(5)
    tau = rivals.sigma_gram(eps, delta, 5)
    ours, ours_se = _pd_probability_sim(K, tau, 40_000, seed=5)
    r = gram.gram_pd_probability(K, tau, draws=40_000, rng=7)
    assert abs(r.estimate - ours) < 5 * max(math.hypot(r.se, ours_se), 1e-4), (r, ours)


def test_pd_probability_bounds_are_the_exact_laws():
    K = np.array([[50.0, 10.0], [10.0, 30.0]])
    tau = 12.0
    r = gram.gram_pd_probability(K, tau, draws=1000, rng=0)
    lam = np.linalg.eigvalsh(K)[0]
    assert r.lower == pytest.approx(stats.chi2.cdf(lam**2 / tau**2, 3), rel=1e-12)
    assert r.upper == pytest.approx(stats.norm.cdf(50 / tau) * stats.norm.cdf(30 / tau), rel=1e-12)
    truth = _pd_probability_p2(K, tau)
    assert r.lower <= truth <= r.upper
    # a K that is not PD has lower bound 0, and its diagonal bounds the probability from above
    r0 = gram.gram_pd_probability(np.array([[1.0, 2.0], [2.0, 1.0]]), 0.01, draws=1000, rng=0)
    assert r0.lower == 0.0 and r0.estimate == 0.0


def test_pd_probability_refuses_bad_arguments():
    with pytest.raises(ValueError, match="draws"):
        gram.gram_pd_probability(np.eye(2), 1.0, draws=10)
    with pytest.raises(ValueError, match="tau"):
        gram.gram_pd_probability(np.eye(2), -1.0)
    with pytest.raises(ValueError, match="symmetric"):
        gram.gram_pd_probability(np.array([[1.0, 2.0], [0.0, 1.0]]), 1.0)


# --------------------------------------------------------------------------- the dropout cost of masking


def _theorem_3_4_root(eps, delta, n, p):
    """The root of g(sigma) = 0 (Theorem 3.4), with scipy's quantile and brentq."""
    def g(s):
        return (2 * math.sqrt(p) + 1) / (2 * (n - p)) * stats.ncx2.isf(delta, 2 * (n - p), p / s**2) + math.sqrt(p) - s**2 * eps

    hi = 10.0
    while g(hi) > 0:
        hi *= 2
    return optimize.brentq(g, 1e-3 * hi, hi, xtol=1e-13, rtol=1e-13)


@pytest.mark.parametrize("eps, delta, n, p, f, n_min", [
    (0.1, 0.01, 1000, 2, 0.5, 500), (0.1, 0.01, 1000, 2, 0.1, 900), (0.01, 0.001, 10_000, 5, 0.2, 8000),
    (0.001, 0.001, 1000, 5, 0.5, 500), (0.1, 0.01, 101, 5, 0.29, 72),
])
def test_sigma_0_cost_is_theorem_3_4_at_the_smallest_n(eps, delta, n, p, f, n_min):
    r = trust.masking_dropout_cost(eps, delta, n, p, f)
    assert r.n_min == n_min
    planned, needed = _theorem_3_4_root(eps, delta, n, p), _theorem_3_4_root(eps, delta, n_min, p)
    assert r.sigma_planned == pytest.approx(planned, rel=1e-8)
    assert r.sigma_needed == pytest.approx(needed, rel=1e-8)
    assert r.ratio == pytest.approx(needed / planned, rel=1e-8) and r.ratio > 1


def test_the_issue_s_figure_at_half_dropping_out():
    """The issue found about 1.011 at n = 1000 with half the rows dropping out (eps = 0.1, delta = 0.01, p = 2)."""
    assert round(trust.masking_dropout_cost(0.1, 0.01, 1000, 2, 0.5).ratio, 3) == 1.011


@pytest.mark.parametrize("f", [0.1, 0.2, 0.5])
def test_sigma_low_cost_is_the_fourth_root(f):
    dpa = pytest.importorskip("dp_accounting.gaussian_mechanism")
    for eps, delta in TABLE1_LEVELS[:3]:
        for p in (2, 5):
            n = 10**4
            tau = dpa.get_sigma_gaussian(eps, delta, tol=1e-12) * (2 * math.sqrt(p) - 1)
            r = trust.masking_dropout_cost(eps, delta, n, p, f, level="sigma_low")
            n_min = n - round(f * n)
            assert r.n_min == n_min
            assert r.sigma_planned == pytest.approx((tau**2 / (2 * n)) ** 0.25, rel=1e-6)
            assert r.ratio == pytest.approx((n / n_min) ** 0.25, rel=1e-12)


def test_no_dropout_costs_nothing_and_bad_arguments_are_named():
    assert trust.masking_dropout_cost(0.1, 0.01, 1000, 2, 0.0).ratio == 1.0
    with pytest.raises(ValueError, match="dropout"):
        trust.masking_dropout_cost(0.1, 0.01, 10, 5, 0.6)      # leaves 4 rows for 5 columns
    with pytest.raises(ValueError, match="dropout"):
        trust.masking_dropout_cost(0.1, 0.01, 1000, 2, 1.0)
    with pytest.raises(ValueError, match="level"):
        trust.masking_dropout_cost(0.1, 0.01, 1000, 2, 0.1, level="exact")
    with pytest.raises(ValueError, match="n must exceed p"):
        trust.masking_dropout_cost(0.1, 0.01, 2, 2, 0.1)
    with pytest.raises(ValueError, match="eps"):
        trust.masking_dropout_cost(-0.1, 0.01, 1000, 2, 0.1)
