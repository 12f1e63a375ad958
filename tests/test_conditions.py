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
  taken from dp-accounting; its first-order error ratio (``quantity="error"``, Proposition 9.6) against the
  slopes' constants derived by hand, issue 32's printed figures, and masked Gram matrices simulated here with
  scipy's Wishart law.
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


# --------------------------------------------------------------------------- the dropout cost in first-order error


def _slope_coefficients(M):
    """Proposition 9.6's (c2, c4) for the least-squares slopes, by hand (not the package's finite differences).

    With v = (-beta, 1) the slopes' error is K_zz^{-1} (E v)_z to first order, and M v has no z part (the normal
    equations), so masking's covariance (9.2) gives Cov((E v)_z) = n sigma^2 (|v|^2 M_zz + v'Mv I)
    + n sigma^4 (|v|^2 I + beta beta'); divided by n^2 and averaged over the k slopes:
    c2 = (|v|^2 tr M_zz^{-1} + v'Mv tr M_zz^{-2}) / k and c4 = (|v|^2 tr M_zz^{-2} + beta' M_zz^{-2} beta) / k.
    """
    M = np.asarray(M, float)
    k = M.shape[0] - 1
    Mzz, Mzy = M[:k, :k], M[:k, k]
    beta = np.linalg.solve(Mzz, Mzy)
    v = np.append(-beta, 1.0)
    inv = np.linalg.inv(Mzz)
    inv2 = inv @ inv
    c2 = (v @ v * np.trace(inv) + v @ M @ v * np.trace(inv2)) / k
    c4 = (v @ v * np.trace(inv2) + beta @ inv2 @ beta) / k
    return c2, c4


def test_slope_coefficients_by_hand_for_the_example():
    """p = 2 example data: M = [[1/3, 1/6], [1/6, 1/6]], beta = 1/2, so c2 = 9/2 and c4 = 27/2."""
    c2, c4 = _slope_coefficients(rivals.example_moments(2))
    assert c2 == pytest.approx(4.5, rel=1e-12) and c4 == pytest.approx(13.5, rel=1e-12)


@pytest.mark.parametrize("f, masking, rival", [(0.1, 1.052, 1.054), (0.2, 1.113, 1.118), (0.5, 1.396, 1.414)])
def test_the_issue_s_error_ratios_at_the_lower_bound(f, masking, rival):
    """Issue 32's figures at eps = delta = 0.001, n = 10^4, p = 2 (example data): masking's slope-error ratio at
    sigma_low and the rival's padding factor (distributed_tau padded over unpadded), both to three decimals."""
    r = trust.masking_dropout_cost(0.001, 0.001, 10**4, 2, f, level="sigma_low", quantity="error")
    assert r.quantity == "error" and round(r.ratio, 3) == masking
    assert round(float(trust.distributed_tau(0.001, 0.001, 2, pad=f) / trust.distributed_tau(0.001, 0.001, 2)), 3) == rival
    noise = trust.masking_dropout_cost(0.001, 0.001, 10**4, 2, f, level="sigma_low")
    assert noise.quantity == "noise" and noise.ratio < r.ratio < noise.ratio**2 <= 1 / math.sqrt(1 - f) + 1e-12


@pytest.mark.parametrize("level", ["sigma_0", "sigma_low"])
@pytest.mark.parametrize("p", [2, 3, 5])
def test_error_ratio_is_proposition_9_6_with_constants_by_hand(level, p):
    """For random second moments (and the example's by default) the error ratio is
    sqrt((c2 s'^2 + c4 s'^4) / (c2 s^2 + c4 s^4)) with (c2, c4) by hand, and lies between r and r^2."""
    rng = np.random.default_rng(32 + p)
    A = rng.uniform(-1, 1, (50, p))
    for M in (A.T @ A / 50, None):
        c2, c4 = _slope_coefficients(rivals.example_moments(p) if M is None else M)
        for eps, delta in TABLE1_LEVELS[::2]:
            for n, f in ((10**3, 0.5), (10**5, 0.2), (10**7, 0.1)):
                r = trust.masking_dropout_cost(eps, delta, n, p, f, level=level, quantity="error", moments=M)
                s, t = r.sigma_planned, r.sigma_needed
                assert r.ratio == pytest.approx(math.sqrt((c2 * t**2 + c4 * t**4) / (c2 * s**2 + c4 * s**4)), rel=1e-6)
                assert t / s <= r.ratio * (1 + 1e-12) and r.ratio <= (t / s) ** 2 * (1 + 1e-12)


def test_error_ratio_against_simulated_masked_gram_matrices():
    """Monte Carlo, written here with scipy: the masked Gram matrix's noise is X'C + C'X + C'C - n sigma^2 I with
    the columns of X'C i.i.d. N(0, sigma^2 K) and C'C ~ Wishart(n, sigma^2 I).  At eps = delta = 0.001, n = 10^6,
    p = 2, half the rows possibly lost, at sigma_low: the simulated slope-RMSE ratio at sigma(n_min) and sigma(n)
    matches the error ratio (1.39), not the noise ratio (1.19).  4,000 draws each: relative standard error of the
    ratio about 1.6 %; tolerance 6 %."""
    n, draws = 10**6, 4000
    r = trust.masking_dropout_cost(0.001, 0.001, n, 2, 0.5, level="sigma_low", quantity="error")
    K = n * rivals.example_moments(2)
    L = np.linalg.cholesky(K)
    rng = np.random.default_rng(3205)
    rmse = []
    for s in (r.sigma_planned, r.sigma_needed):
        XC = s * np.einsum("ab,dbj->daj", L, rng.standard_normal((draws, 2, 2)))   # columns N(0, s^2 K)
        CC = stats.wishart(df=n, scale=s**2 * np.eye(2)).rvs(size=draws, random_state=rng)
        G = K + XC + np.swapaxes(XC, 1, 2) + CC - n * s**2 * np.eye(2)
        rmse.append(np.sqrt(np.mean((G[:, 0, 1] / G[:, 0, 0] - K[0, 1] / K[0, 0]) ** 2)))
    assert rmse[1] / rmse[0] == pytest.approx(r.ratio, rel=0.06)
    assert abs(rmse[1] / rmse[0] - r.sigma_needed / r.sigma_planned) > 0.1


def test_error_ratio_refuses_bad_arguments_by_name():
    ok = dict(eps=0.1, delta=0.01, n=1000, p=2, dropout=0.1)
    for kwargs, name in ((dict(quantity="variance"), "quantity"), (dict(quantity=None), "quantity"),
                         (dict(quantity="error", statistic="slope"), "statistic"),
                         (dict(moments=np.eye(2)), "moments"), (dict(statistic="corr"), "statistic"),
                         (dict(quantity="error", moments=np.eye(3)), "moments"),
                         (dict(quantity="error", moments=[[1.0, 2.0], [2.0, 1.0]]), "moments"),
                         (dict(quantity="error", moments=[[1.0, np.nan], [np.nan, 1.0]]), "moments")):
        with pytest.raises(ValueError, match=name):
            trust.masking_dropout_cost(**ok, **kwargs)
    with pytest.raises(ValueError, match="p must be at least 2"):
        trust.masking_dropout_cost(0.1, 0.01, 1000, 1, 0.1, quantity="error")
    with pytest.raises(ValueError, match="moments must be given"):
        trust.masking_dropout_cost(0.1, 0.01, 1000, 7, 0.1, quantity="error")
    M7 = np.eye(7) + 0.1
    assert trust.masking_dropout_cost(0.1, 0.01, 1000, 7, 0.1, quantity="error", moments=M7).ratio > 1
    for stat in ("corr", "angle"):
        assert trust.masking_dropout_cost(0.1, 0.01, 1000, 3, 0.1, quantity="error", statistic=stat).ratio > 1
    # the default quantity is the noise ratio, as before
    assert trust.masking_dropout_cost(**ok) == trust.masking_dropout_cost(**ok, quantity="noise")
    assert trust.masking_dropout_cost(**ok).quantity == "noise"
