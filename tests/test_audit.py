"""Tests of dpmask.audit: the laws of the audit statistics by simulation, their
privacy curves against mpmath, the lower bounds against Theorem 3.4, and the
Monte Carlo estimator's intervals.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats
from scipy.optimize import brentq

from dpmask import audit, bounds, exact, mechanisms
from dpmask.table import PAPER_TABLE1


def _mp_tail(c, k, lam, upper=True):
    """P[T > c] (or < c) of ncx2(k, lam) as a Poisson mixture of central chi-squares."""
    c, k, lam = mp.mpf(c), mp.mpf(k), mp.mpf(lam)
    total, j = mp.mpf(0), 0
    while True:
        w = mp.exp(-lam / 2) * (lam / 2) ** j / mp.factorial(j)
        lo, hi = (c / 2, mp.inf) if upper else (0, c / 2)
        term = w * mp.gammainc((k + 2 * j) / 2, lo, hi, regularized=True)
        total += term
        if j > lam / 2 + 10 and term < mp.mpf(10) ** (-mp.mp.dps):
            return total
        j += 1


def _mp_threshold(eps, k, la, lb):
    half = mp.mpf(k) / 2
    f = lambda t: -(la - lb) / 2 + mp.log(mp.hyp0f1(half, la * t / 4)) - mp.log(mp.hyp0f1(half, lb * t / 4)) - eps
    return mp.findroot(f, k + (la + lb) / 2 + 10)


def _row_pair(n, p):
    """Worst neighbours of the projection statistic: row 1 = (1,...,1) versus (1 - 1/sqrt p)(1,...,1)."""
    X = np.zeros((n, p))
    X[0] = 1.0
    Xp = X.copy()
    Xp[0] = 1.0 - 1.0 / math.sqrt(p)
    return X, Xp


def test_neighbours_are_valid_and_extreme():
    X, Xp = _row_pair(10, 5)
    mechanisms.check_data(Xp)
    assert np.linalg.norm(X[0] - Xp[0]) == pytest.approx(1.0)
    w = np.ones(5) / math.sqrt(5)
    assert np.sum((X @ w) ** 2) - np.sum((Xp @ w) ** 2) == pytest.approx(2 * math.sqrt(5) - 1)


@pytest.mark.parametrize("statistic", ["projection", "frobenius"])
def test_statistic_law_by_simulation(statistic):
    """The simulated statistic has the noncentral chi-square law the module assumes (KS test)."""
    n, p, sigma = 12, 4, 0.7
    X, _ = _row_pair(n, p)
    rng = np.random.default_rng(20267)
    w = np.ones(p) / math.sqrt(p)
    if statistic == "projection":
        fn, df, lam = (lambda Y: np.sum((Y @ w) ** 2) / sigma**2), n, p / sigma**2
    else:
        fn, df, lam = (lambda Y: np.sum(Y**2) / sigma**2), n * p, p / sigma**2
    draws = np.array([fn(Y) for Y in audit._batch_release_b(X, sigma, 3000, rng)])
    assert stats.kstest(draws, stats.ncx2(df, lam).cdf).pvalue > 1e-3


def test_projection_delta_matches_mpmath():
    n, p, sigma, eps = 20, 5, 1.2, 0.2
    a, b = p, (math.sqrt(p) - 1) ** 2
    log_delta, wa, wb = audit.statistic_worst_pair(eps, sigma, n, p, "projection")
    assert (wa, wb) == pytest.approx((a, b))
    with mp.workdps(30):
        la, lb = mp.mpf(a) / sigma**2, mp.mpf(b) / sigma**2
        c = _mp_threshold(mp.mpf(eps), n, la, lb)
        ref = _mp_tail(c, n, la) - mp.e ** mp.mpf(eps) * _mp_tail(c, n, lb)
    assert math.exp(log_delta) == pytest.approx(float(ref), rel=1e-8)


@pytest.mark.parametrize("statistic", ["projection", "frobenius"])
def test_worst_pair_is_the_corner_and_nothing_on_the_edge_beats_it(statistic):
    n, p, sigma, eps = 30, 5, 1.0, 0.1
    log_delta, a, b = audit.statistic_worst_pair(eps, sigma, n, p, statistic)
    assert (a, b) == pytest.approx((p, (math.sqrt(p) - 1) ** 2))
    df = n if statistic == "projection" else n * p
    r = np.linspace(1.0, math.sqrt(p), 15)[:, None]
    s = np.linspace(0.0, (n - 1) * p, 15)[None, :]
    hi, lo = r**2 + s, (r - 1) ** 2 + s
    for x, y in ((hi, lo), (lo, hi)):
        vals = exact.ncx2_hockey_stick_log_delta(eps, df, x / sigma**2, y / sigma**2)
        assert np.all(vals <= log_delta + 1e-12)


def test_mc_delta_with_neyman_pearson_threshold_matches_exact_curve():
    """Projection statistic, 5 standard errors."""
    n, p, sigma, eps = 8, 4, 0.9, 0.3
    X, Xp = _row_pair(n, p)
    target = audit.statistic_delta(eps, sigma, n, p, "projection")
    la, lb = p / sigma**2, (math.sqrt(p) - 1) ** 2 / sigma**2
    c = brentq(
        lambda t: float(-(la - lb) / 2 + mp.log(mp.hyp0f1(n / 2, la * t / 4)) - mp.log(mp.hyp0f1(n / 2, lb * t / 4))) - eps,
        1e-3, 1e3,
    )
    w = np.ones(p) / math.sqrt(p)
    res = audit.mc_delta(
        lambda Y: np.sum((Y @ w) ** 2) / sigma**2, X, Xp, sigma, eps, 20000, 1, threshold=c, method="batch"
    )
    assert target > 0.02  # a regime where Monte Carlo can see delta
    assert abs(res["delta"] - target) < 5 * res["se"]


def test_mc_delta_learned_threshold_is_a_valid_lower_bound():
    n, p, sigma, eps = 8, 4, 0.9, 0.3
    X, Xp = _row_pair(n, p)
    target = audit.statistic_delta(eps, sigma, n, p, "projection")
    w = np.ones(p) / math.sqrt(p)
    res = audit.mc_delta(lambda Y: np.sum((Y @ w) ** 2), X, Xp, sigma, eps, 8000, np.random.default_rng(7), method="batch")
    assert res["ci_low"] < target
    assert res["ci_low"] <= res["delta"] <= res["ci_high"]
    assert res["n_used"] == 4000


def test_lower_bounds_sit_below_theorem_34_and_grow_with_p():
    rows = np.array([r[:4] for r in PAPER_TABLE1 if r[3] == 100 and r[0] == 0.1], float)
    eps, delta, p, n = rows.T
    lower = audit.sigma_lower_bound(eps, delta, n, p)
    assert np.all(lower < bounds.sigma_b(eps, delta, n, p))
    # Theorem 3.4's sigma passes the audit statistic: delta of the statistic <= delta
    assert np.all(audit.statistic_delta(eps, bounds.sigma_b(eps, delta, n, p), n, p) <= delta)
    by_p = {pp: lower[(p == pp) & (delta == 0.01)][0] for pp in (1, 5, 20)}
    assert by_p[1] < by_p[5] < by_p[20]


def test_batch_releases_have_the_law_of_mechanisms_release_b():
    """Two-sample KS test of the batched draws against dpmask.mechanisms.release_b, on an
    off-diagonal Gram entry and on the squared norm of the first row of the release."""
    X, _ = _row_pair(6, 3)
    rng = np.random.default_rng(3)
    batch = list(audit._batch_release_b(X, 0.8, 600, rng))
    loop = [mechanisms.release_b(X, 0.8, rng) for _ in range(600)]
    for fn in (lambda Y: (Y.T @ Y)[0, 1], lambda Y: np.sum(Y[0] ** 2)):
        a = [fn(Y) for Y in batch]
        b = [fn(Y) for Y in loop]
        assert stats.ks_2samp(a, b).pvalue > 1e-3


def test_p1_lower_bound_is_the_exact_value():
    for statistic in ("projection", "frobenius"):
        assert audit.sigma_lower_bound(0.1, 0.01, 100, 1, statistic) == pytest.approx(
            exact.masked_p1_sigma(0.1, 0.01, 100), rel=1e-9
        )


def test_lower_bound_is_a_real_violation_just_below_it():
    eps, delta, n, p = 0.1, 0.01, 100, 5
    lower = audit.sigma_lower_bound(eps, delta, n, p, "projection")
    assert audit.statistic_delta(eps, 0.99 * lower, n, p) > delta
    assert audit.statistic_delta(eps, lower, n, p) == pytest.approx(delta, rel=1e-7)


def test_validation():
    X, Xp = _row_pair(6, 2)
    far = np.zeros((6, 2))
    far[0] = 1.0
    with pytest.raises(ValueError, match="neighbours"):
        audit.mc_delta(np.sum, far, -far, 1.0, 0.1, 100, 0)
    with pytest.raises(ValueError, match="n_samples"):
        audit.mc_delta(np.sum, X, Xp, 1.0, 0.1, 5, 0)
    with pytest.raises(ValueError, match="statistic"):
        audit.sigma_lower_bound(0.1, 0.01, 10, 2, statistic="trace")
    with pytest.raises(ValueError, match="n must exceed p"):
        audit.sigma_lower_bound(0.1, 0.01, 3, 3)


def test_tightness_explorer_numbers_bracket_the_truth():
    """The chapter 7 widget (dpmask.widgets.tightness_*) shows the audit bound below Theorem 3.4."""
    from dpmask import widgets

    vals = widgets.tightness_numbers(0.1, 0.01, 100, 5)
    assert vals["b_lower"] == pytest.approx(audit.sigma_lower_bound(0.1, 0.01, 100, 5), rel=1e-12)
    assert vals["b_lower"] < vals["b_sufficient"] <= vals["b_corrected"]
    assert vals["analytic"] < vals["a_criterion"] < vals["a_sufficient"]
    box = widgets.tightness_explorer(eps=0.1, delta=0.01, n=100, p=5)
    html = box.children[1].value
    assert "data-key='b_lower'" in html and len(box.children[2].value) > 0
