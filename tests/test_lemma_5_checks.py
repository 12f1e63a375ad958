"""Numeric checks of the proof of Theorem 3.4 (book chapter 5), kept as unit tests.

Each test compares a step of the proof with an independent truth: mpmath's Bessel
functions, an explicit QR factorisation, or Monte Carlo with a stated tolerance
(five standard errors).  They cover Lemmas 5.1, 5.3, 5.5 (ii, the book's sharper
ratio bound), the index of the inner integral (G_{n-p-1}, not G_{n-p}), the bound on
lambda_max and the probability of the good set W of Lemma 5.6.
"""

import mpmath
import numpy as np
import pytest
from scipy import stats

from dpmask.paper import bounds, gq, mechanisms

SEED = 202651


def _qbar(X):
    """diag(1, Q) with X[1:] = Q R (complete QR), Lemma 5.1."""
    n = X.shape[0]
    Q, _ = np.linalg.qr(X[1:], mode="complete")
    Qbar = np.eye(n)
    Qbar[1:, 1:] = Q
    return Qbar


@pytest.mark.parametrize("q", [1.0, 2.0, 3.5, 7.0, 40.0, 500.0])
@pytest.mark.parametrize("t", [1e-3, 0.5, 3.0, 20.0, 200.0])
def test_sharper_slope_bound_against_mpmath(q, t):
    # Lemma 5.5 (ii): G_q'/G_q = I_{nu+1}(t)/I_nu(t) < t/(q+1), nu = (q-1)/2.
    nu = (q - 1) / 2
    exact = mpmath.besseli(nu + 1, t) / mpmath.besseli(nu, t)
    assert exact < mpmath.mpf(t) / (q + 1)
    assert gq.dlog_G(q, t) == pytest.approx(float(exact), rel=1e-12)


def test_sharper_constant_cannot_be_improved():
    # (q+1) G'/(t G) -> 1 as t -> 0, so no constant larger than q+1 works.
    for q in (1.0, 4.0, 60.0):
        t = 1e-4
        assert (q + 1) * gq.dlog_G(q, t) / t > 1 - 1e-7


def test_langevin_case_q2():
    # q = 2: G_2(t) = 2 sinh(t)/t, slope coth t - 1/t < t/3 (exercise 5.1).
    for t in (0.01, 0.7, 5.0, 50.0):
        lang = mpmath.coth(t) - 1 / mpmath.mpf(t)
        assert lang < mpmath.mpf(t) / 3
        assert gq.dlog_G(2, t) == pytest.approx(float(lang), rel=1e-12)


def test_inner_integral_has_index_n_minus_p_minus_1():
    # B_1 uniform on the unit sphere of a random (n-p)-dim subspace: E[exp(t u)] = G_{n-p-1}(t)/c_{n-p}.
    rng = np.random.default_rng(SEED)
    n, p, t, N = 6, 1, 4.0, 100_000
    q = n - p
    E = mechanisms.stiefel_frame(n, q, rng).T
    g = rng.standard_normal((N, q))
    b = (g / np.linalg.norm(g, axis=1, keepdims=True)) @ E
    direction = E.T @ rng.standard_normal(q)
    direction /= np.linalg.norm(direction)
    x = np.exp(t * (b @ direction))
    mean, se = x.mean(), x.std(ddof=1) / np.sqrt(N)
    right = np.exp(gq.log_G(q - 1, t) - gq.log_c_bar(q))
    paper = np.exp(gq.log_G(q, t) - gq.log_c_bar(q + 1))
    assert abs(mean - right) < 5 * se
    assert abs(mean - paper) > 20 * se


def test_change_of_coordinates_and_trace_identity():
    # Lemmas 5.1 and 5.3, and B Y = Xbar + Qbar^T C.
    rng = np.random.default_rng(SEED + 1)
    n, p = 9, 3
    X = rng.uniform(-1, 1, (n, p))
    Qbar = _qbar(X)
    Xbar = Qbar.T @ X
    A = mechanisms.haar_orthogonal(n, rng)
    B = (A @ Qbar).T
    y = rng.standard_normal((n, p))
    C = rng.standard_normal((n, p))
    assert np.abs(Xbar[p + 1:]).max() < 1e-12
    assert np.allclose(Xbar[0], X[0], atol=1e-14)
    assert np.allclose(A @ X, B.T @ Xbar, atol=1e-12)
    trace = np.trace(A.T @ y @ X.T)
    assert trace == pytest.approx(sum(B[i] @ y @ Xbar[i] for i in range(p + 1)), abs=1e-12)
    assert np.allclose(B @ (A @ (X + C)), Xbar + Qbar.T @ C, atol=1e-12)


@pytest.mark.parametrize("p", [1, 2, 5, 20])
def test_lambda_max_bound(p):
    # Step 4 of Lemma 5.6: ||M||_2 <= 2|X_1||Delta| + |Delta|^2 <= 2 sqrt(p) + 1.
    rng = np.random.default_rng(SEED + p)
    X1 = rng.uniform(-1, 1, (2000, p))
    D = rng.standard_normal((2000, p))
    D *= rng.uniform(0, 1, (2000, 1)) / np.linalg.norm(D, axis=1, keepdims=True)
    X1p = np.clip(X1 + D, -1, 1)
    D = X1p - X1
    M = X1p[:, :, None] * X1p[:, None, :] - X1[:, :, None] * X1[:, None, :]
    lam = np.abs(np.linalg.eigvalsh(M)).max(axis=1)
    nx, nd = np.linalg.norm(X1, axis=1), np.linalg.norm(D, axis=1)
    assert np.all(lam <= 2 * nx * nd + nd**2 + 1e-12)
    assert np.all(lam <= 2 * np.sqrt(p) + 1)


def test_good_set_probability():
    # Lemma 5.6 with kappa = n - p - 1 at sigma_b(corrected=True): P[(Y, B) in W] >= 1 - delta,
    # judged by a one-sided 99.9 % Clopper-Pearson lower bound.
    rng = np.random.default_rng(SEED + 2)
    n, p, eps, delta, N = 10, 2, 0.5, 0.05, 1500
    X = rng.uniform(-1, 1, (n, p))
    X[0] = (1 - 1 / np.sqrt(2)) * np.ones(p)
    Xp = X.copy()
    Xp[0] = np.ones(p)
    sigma = bounds.sigma_b(eps, delta, n, p, corrected=True)
    Qbar = _qbar(X)
    rhs = 2 * (n - p - 1) * (eps + ((X**2).sum() - (Xp**2).sum()) / (2 * sigma**2))
    inside = 0
    for _ in range(N):
        A = mechanisms.haar_orthogonal(n, rng)
        Y = A @ (X + sigma * rng.standard_normal((n, p)))
        Bplus = (A @ Qbar).T[1:p + 1]
        norms = []
        for row in (X[0], Xp[0]):
            w = Y @ row
            v = w - Bplus.T @ (Bplus @ w)
            norms.append(v @ v)
        inside += abs(norms[0] - norms[1]) / sigma**4 <= rhs
    fails = N - inside
    lower = stats.beta.ppf(0.001, N - fails, fails + 1)
    assert lower >= 1 - delta
