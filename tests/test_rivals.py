"""Tests for dpmask.rivals and the rival's noise model in dpmask.inference.

Independent truths used: a numerical maximisation of ||x x^T - x' x'^T||_F over
the cube (SLSQP from many starts, random search and an enumeration of pairs
built from the cube's vertices) for the sensitivity; sample moments of many
draws for the noise (tolerance five Monte Carlo standard errors); numpy's
lstsq on the noiseless data for least squares; binomial coverage of the
standard errors with enough replications to tell 0.92 from 0.95; and the
release forms of the correlation and PCA estimators (written before the Gram
forms existed).
"""

import itertools
import warnings

import numpy as np
import pytest
from scipy import optimize, stats

from dpmask import rivals
from dpmask.exact import analytic_gaussian_sigma
from dpmask.inference import (
    correlation_from_gram,
    correlation_from_release,
    ols_from_gram,
    pca_from_gram,
    pca_from_release,
    simulate_gram,
)
from dpmask.paper.mechanisms import release_a, release_b


def frob(x, xp):
    return np.linalg.norm(np.outer(x, x) - np.outer(xp, xp))


# --------------------------------------------------------------------------- sensitivity


def _numerical_sup(p, rng):
    """Largest ||x x^T - x' x'^T||_F found by search; independent of the closed form."""
    best = 0.0
    # (1) pairs built from vertices: x a vertex, x' = x moved inward by a unit vector spread
    #     evenly over a subset of coordinates (includes the one-coordinate move and the diagonal)
    for signs in itertools.product([-1.0, 1.0], repeat=p):
        x = np.array(signs)
        for k in range(1, p + 1):
            for subset in itertools.combinations(range(p), k):
                d = np.zeros(p)
                d[list(subset)] = -x[list(subset)] / np.sqrt(k)
                best = max(best, frob(x, x + d))
    # (2) random search over the feasible set
    m = 20000
    x = rng.uniform(-1, 1, (m, p))
    d = rng.standard_normal((m, p))
    d *= rng.uniform(0, 1, (m, 1)) ** (1 / p) / np.linalg.norm(d, axis=1, keepdims=True)
    xp = x + d
    ok = np.all(np.abs(xp) <= 1, axis=1)
    for a, b in zip(x[ok], xp[ok]):
        best = max(best, frob(a, b))
    # (3) local maximisation from random starts (SLSQP with the exact constraints)
    cons = [{"type": "ineq", "fun": lambda z: 1.0 - np.sum((z[:p] - z[p:]) ** 2)}]
    for _ in range(40):
        z0 = rng.uniform(-1, 1, 2 * p)
        z0[p:] = np.clip(z0[:p] + 0.3 * rng.standard_normal(p) / np.sqrt(p), -1, 1)
        res = optimize.minimize(lambda z: -frob(z[:p], z[p:]) ** 2, z0, method="SLSQP",
                                bounds=[(-1, 1)] * (2 * p), constraints=cons,
                                options={"ftol": 1e-14, "maxiter": 500})
        z = res.x
        if np.all(np.abs(z) <= 1 + 1e-9) and np.sum((z[:p] - z[p:]) ** 2) <= 1 + 1e-9:
            best = max(best, frob(z[:p], z[p:]))
    return best


@pytest.mark.parametrize("p", [1, 2, 3, 4, 5, 6])
def test_gram_sensitivity_is_the_supremum_found_by_optimisation(p):
    rng = np.random.default_rng(900 + p)
    formula = rivals.gram_sensitivity(p)
    found = _numerical_sup(p, rng)
    assert found <= formula * (1 + 1e-7)          # nothing beats the formula ...
    assert found >= formula * (1 - 1e-6)          # ... and the search reaches it
    ones = np.ones(p)
    assert frob(ones, (1 - 1 / np.sqrt(p)) * ones) == pytest.approx(formula, rel=1e-12)  # attained
    # moving one coordinate gives only sqrt(2p - 1)
    e1 = np.zeros(p)
    e1[0] = 1.0
    assert frob(ones, ones - e1) == pytest.approx(np.sqrt(2 * p - 1), rel=1e-12)


def test_gram_sensitivity_is_ufunc_like():
    np.testing.assert_allclose(rivals.gram_sensitivity([1, 4, 9]), [1.0, 3.0, 5.0])
    assert isinstance(rivals.gram_sensitivity(4), float)


def test_sigma_gram_is_the_gaussian_mechanism_on_the_attained_sensitivity():
    """Independent truth (the old test restated the code): dp-accounting's calibration of the
    Gaussian mechanism times the Frobenius distance ||x x^T - x' x'^T|| of the pair that
    attains the sensitivity, x = 1, x' = (1 - 1/sqrt p) 1, computed here with numpy; and the
    Gaussian mechanism with that sensitivity and noise tau is (eps, delta)-DP (mpmath)."""
    import mpmath as mp
    from dp_accounting import gaussian_mechanism as dpa

    for eps, delta, p in [(0.1, 0.01, 2), (1.0, 1e-5, 5), (0.001, 0.001, 3)]:
        x = np.ones(p)
        xp = (1 - 1 / np.sqrt(p)) * x
        assert np.linalg.norm(x - xp) == pytest.approx(1.0)
        sens = np.linalg.norm(np.outer(x, x) - np.outer(xp, xp))
        tau = rivals.sigma_gram(eps, delta, p)
        assert tau == pytest.approx(dpa.get_sigma_gaussian(eps, delta, tol=1e-15) * sens, rel=1e-8)
        with mp.workdps(60):
            s = mp.mpf(tau) / mp.mpf(sens)
            e = mp.mpf(eps)
            true_delta = mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)
        assert true_delta <= delta
    out = rivals.sigma_gram(np.array([0.1, 0.01])[:, None], 0.01, np.array([1, 4]))
    assert out.shape == (2, 2)


# --------------------------------------------------------------------------- noise


def test_gram_noise_has_the_stated_moments():
    rng = np.random.default_rng(910)
    p, tau, m = 3, 2.5, 200000
    E = rivals.gram_noise(p, tau, size=m, rng=rng)
    assert np.array_equal(E, np.swapaxes(E, 1, 2))
    # the vector (E_ii, sqrt(2) E_ij) must be N(0, tau^2 I): its L2 sensitivity is Frobenius
    iu = np.triu_indices(p, 1)
    vec = np.concatenate([np.diagonal(E, axis1=1, axis2=2), np.sqrt(2) * E[:, iu[0], iu[1]]], axis=1)
    var = vec.var(axis=0)
    se_var = tau**2 * np.sqrt(2 / m)              # sd of a sample variance of a normal
    assert np.all(np.abs(var - tau**2) < 5 * se_var), var
    assert np.all(np.abs(vec.mean(axis=0)) < 5 * tau / np.sqrt(m))
    corr = np.corrcoef(vec.T)[np.triu_indices(vec.shape[1], 1)]
    assert np.all(np.abs(corr) < 5 / np.sqrt(m))  # independent entries
    # Gaussian: fourth moment 3 tau^4 on the diagonal (sd of the estimate about sqrt(96/m) tau^4)
    k4 = np.mean(np.diagonal(E, axis1=1, axis2=2) ** 4, axis=0)
    assert np.all(np.abs(k4 - 3 * tau**4) < 5 * np.sqrt(96 / m) * tau**4)


def test_release_gram_adds_the_noise_to_x_transpose_x():
    rng = np.random.default_rng(911)
    X = rng.uniform(-1, 1, (300, 3))
    K = X.T @ X
    draws = np.array([rivals.release_gram(X, 1.5, rng) for _ in range(4000)])
    dev = draws - K
    assert np.allclose(draws, np.swapaxes(draws, 1, 2))
    se = 1.5 / np.sqrt(4000)
    assert np.all(np.abs(dev.mean(axis=0)) < 5 * se)
    var = dev.var(axis=0)
    expected = np.where(np.eye(3, dtype=bool), 1.5**2, 1.5**2 / 2)
    assert np.all(np.abs(var / expected - 1) < 5 * np.sqrt(2 / 4000))
    # reproducible with a seed
    assert np.array_equal(rivals.release_gram(X, 1.0, rng=3), rivals.release_gram(X, 1.0, rng=3))


# --------------------------------------------------------------------------- least squares


def _design(n, rng):
    z = rng.uniform(-1, 1, (n, 2))
    y = 0.4 * z[:, 0] - 0.3 * z[:, 1] + rng.uniform(-0.3, 0.3, n)
    return np.column_stack([z, y])


def test_ols_gram_noise_matches_lstsq_on_the_noiseless_data():
    rng = np.random.default_rng(920)
    X = _design(400, rng)
    direct = np.linalg.lstsq(X[:, :2], X[:, 2], rcond=None)[0]
    fit = ols_from_gram(rivals.release_gram(X, 1e-7, rng), 400, 2, noise="gram", tau=1e-7)
    np.testing.assert_allclose(fit.coef, direct, atol=1e-8)
    # with a constant column: its Gram entry is set to n and the fit is lstsq with intercept
    Xc = np.column_stack([np.ones(400), X])
    direct_c = np.linalg.lstsq(Xc[:, :3], Xc[:, 3], rcond=None)[0]
    fit_c = ols_from_gram(rivals.release_gram(Xc, 1e-7, rng), 400, 3, noise="gram", tau=1e-7, intercept=0)
    np.testing.assert_allclose(fit_c.coef, direct_c, atol=1e-8)
    assert fit_c.gram[0, 0] == 400 and fit.corrected


def _coverage(est, se, truth):
    return np.mean(np.abs(est - truth) <= stats.norm.ppf(0.975) * se, axis=0)


REPS = 4000
# binomial standard error of a 95 % coverage over REPS runs: sqrt(0.95 * 0.05 / 4000) = 0.0034;
# the band 0.95 +- 0.0103 (three standard errors) excludes 0.92 by almost nine of them.
BAND = 3 * np.sqrt(0.95 * 0.05 / REPS)


def test_ols_gram_noise_conditional_standard_errors_cover():
    rng = np.random.default_rng(921)
    n, tau = 2000, 20.0
    X = _design(n, rng)
    K = X.T @ X
    truth = np.linalg.solve(K[:2, :2], K[:2, 2])     # the data's own least squares
    G = K + rivals.gram_noise(3, tau, size=REPS, rng=rng)
    fit = ols_from_gram(G, n, 2, noise="gram", tau=tau, conditional=True)
    cover = _coverage(fit.coef, fit.se, truth)
    assert np.all(np.abs(cover - 0.95) < BAND), cover
    # power: standard errors off by the factors that matter would be caught
    for wrong in (0.8, 1.3):
        bad = _coverage(fit.coef, wrong * fit.se, truth)
        assert np.all(np.abs(bad - 0.95) > BAND), (wrong, bad)
    # the first-order error agrees with the spread of the estimates
    fo = rivals.first_order_errors(K, rivals.gram_noise_cov(3, tau), response=2)["ols"]
    rmse = np.sqrt(np.mean((fit.coef - truth) ** 2))
    assert rmse == pytest.approx(fo, rel=0.05)


def test_ols_gram_noise_population_standard_errors_cover():
    rng = np.random.default_rng(922)
    n, tau = 500, 10.0
    beta = np.array([0.4, -0.3])
    X = rng.uniform(-1, 1, (REPS, n, 2))
    y = X @ beta + rng.uniform(-0.3, 0.3, (REPS, n))
    D = np.concatenate([X, y[..., None]], axis=2)
    K = np.einsum("rij,rik->rjk", D, D)
    G = K + rivals.gram_noise(3, tau, size=REPS, rng=rng)
    fit = ols_from_gram(G, n, 2, noise="gram", tau=tau)
    cover = _coverage(fit.coef, fit.se, beta)
    assert np.all(np.abs(cover - 0.95) < BAND), cover
    for wrong in (0.8, 1.3):
        assert np.all(np.abs(_coverage(fit.coef, wrong * fit.se, beta) - 0.95) > BAND)
    # ignoring the Gram noise (textbook errors) under-covers
    naive = ols_from_gram(G, n, 2, correct_noise=False)
    assert np.all(_coverage(naive.coef, naive.se, beta) < 0.95 - BAND)


def test_first_order_errors_agree_with_simulation_for_both_noise_models():
    rng = np.random.default_rng(923)
    M = np.array([[1 / 3, 1 / 6], [1 / 6, 1 / 6]])
    n, m = 10**5, 20000
    K = n * M
    R0 = correlation_from_gram(K, n, correct_noise=False)[0, 1]
    v0 = pca_from_gram(K, n, correct_noise=False)[1][:, 0]
    beta0 = K[0, 1] / K[0, 0]
    for noise, G, cov, kw in [
        ("gram", K + rivals.gram_noise(2, 17.0, size=m, rng=rng), rivals.gram_noise_cov(2, 17.0), {"tau": 17.0}),
        ("mask", simulate_gram(K, n, 1.0, size=m, rng=rng), rivals.mask_noise_cov(K, n, 1.0), {"sigma": 1.0}),
    ]:
        fo = rivals.first_order_errors(K, cov)
        coef = ols_from_gram(G, n, 1, noise=noise, **kw).coef[:, 0]
        R = correlation_from_gram(G, n, noise=noise, **kw)[:, 0, 1]
        V = pca_from_gram(G, n, noise=noise, **kw)[1][:, :, 0]
        angle = np.arccos(np.clip(np.abs(V @ v0), 0, 1))
        # RMSE estimated from m draws has relative sd about 1/sqrt(2m) = 0.5 %; allow 4 %
        assert np.sqrt(np.mean((coef - beta0) ** 2)) == pytest.approx(fo["ols"], rel=0.04), noise
        assert np.sqrt(np.mean((R - R0) ** 2)) == pytest.approx(fo["corr"], rel=0.04), noise
        assert np.sqrt(np.mean(angle**2)) == pytest.approx(fo["angle"], rel=0.04), noise
    # the closed-form constants reproduce first_order_errors at any n, sigma, tau
    co = rivals.error_coefficients(M)
    for key in ("ols", "corr", "angle"):
        b, c = co[key]
        mask = rivals.first_order_errors(7 * M * 1000, rivals.mask_noise_cov(7000 * M, 7000, 0.3))[key]
        assert mask == pytest.approx(np.sqrt((b * 0.3**2 + c * 0.3**4) / 7000), rel=1e-5)
        gram = rivals.first_order_errors(7000 * M, rivals.gram_noise_cov(2, 5.0))[key]
        assert gram == pytest.approx(5.0 * np.sqrt(c / 2) / 7000, rel=1e-5)


# --------------------------------------------------------------------------- correlation and PCA


def _moments_by_hand(M, n, sigma, constant):
    """The covariance-type matrix written out from the rows of M (the noisy data itself, or a
    release with the same Gram matrix), independently of dpmask.inference: the second-moment
    matrix minus n sigma^2 I, centred through the constant column's sums when one is given."""
    p = M.shape[1]
    keep = [j for j in range(p) if j != constant]
    S = M[:, keep].T @ M[:, keep] - (0.0 if sigma is None else n * sigma**2) * np.eye(len(keep))
    if constant is None:
        return S / n
    sums = M[:, constant] @ M[:, keep]
    return (S - np.outer(sums, sums) / n) / (n - 1)


def test_gram_and_release_forms_against_numpy_and_the_written_out_moments():
    """Both forms against independent truth (the release forms now call the Gram forms, so
    comparing the two compared a thing with itself): without noise, numpy's corrcoef and the
    eigen-decomposition of numpy's cov of the data; with noise, correlations and principal
    components of the covariance written out from the release's rows in this test."""
    rng = np.random.default_rng(930)
    n = 800
    data = rng.uniform(-1, 1, (n, 3))
    data[:, 1] = 0.5 * data[:, 0] + 0.5 * data[:, 1]
    X = np.column_stack([np.ones(n), data])
    # no noise: the data's own sample correlation and covariance (numpy)
    for R in (correlation_from_release(X, correct_noise=False, constant=0),
              correlation_from_gram(X.T @ X, n, correct_noise=False, constant=0)):
        np.testing.assert_allclose(R, np.corrcoef(data.T), atol=1e-12)
    w_ref, V_ref = np.linalg.eigh(np.cov(data.T))
    for vals, vecs in (pca_from_release(X, correct_noise=False, constant=0),
                       pca_from_gram(X.T @ X, n, correct_noise=False, constant=0)):
        np.testing.assert_allclose(vals, w_ref[::-1], rtol=1e-12)
        np.testing.assert_allclose(np.abs(vecs.T @ V_ref[:, ::-1]), np.eye(3), atol=1e-9)
    # with noise: the moments written out from the release's rows
    for Y, sigma in [(release_b(X, 0.3, rng), 0.3), (release_a(data, 0.2, rng), 0.2)]:
        constant = 0 if Y.shape[1] == 4 else None
        for corr in (True, False):
            s = sigma if corr else None
            S = _moments_by_hand(Y, n, s, constant)
            d = 1 / np.sqrt(np.diag(S))
            for R in (correlation_from_release(Y, s, correct_noise=corr, constant=constant),
                      correlation_from_gram(Y.T @ Y, n, s, correct_noise=corr, constant=constant)):
                np.testing.assert_allclose(R, S * d[:, None] * d[None, :], atol=1e-12)
            w_ref, V_ref = np.linalg.eigh(S)
            for vals, vecs in (pca_from_release(Y, s, correct_noise=corr, constant=constant),
                               pca_from_gram(Y.T @ Y, n, s, correct_noise=corr, constant=constant)):
                np.testing.assert_allclose(vals, w_ref[::-1], rtol=1e-10)
                np.testing.assert_allclose(np.abs(vecs.T @ V_ref[:, ::-1]), np.eye(S.shape[0]), atol=1e-8)
    # a stack gives what a loop gives
    Gs = simulate_gram(data.T @ data, n, 0.3, size=5, rng=rng)
    stack = correlation_from_gram(Gs, n, 0.3)
    vals, vecs = pca_from_gram(Gs, n, 0.3)
    for i in range(5):
        np.testing.assert_allclose(stack[i], correlation_from_gram(Gs[i], n, 0.3), atol=1e-14)
        v1, w1 = pca_from_gram(Gs[i], n, 0.3)
        np.testing.assert_allclose(vals[i], v1, rtol=1e-12)
        np.testing.assert_allclose(vecs[i], w1, atol=1e-12)


def test_centred_covariance_under_gram_noise_is_unbiased():
    rng = np.random.default_rng(931)
    n, tau, m = 50, 5.0, 40000
    data = rng.uniform(-1, 1, (n, 2))
    X = np.column_stack([np.ones(n), data])
    G = X.T @ X + rivals.gram_noise(3, tau, size=m, rng=rng)
    # the covariance matrix is the PCA's matrix: its trace is the sum of eigenvalues
    vals, _ = pca_from_gram(G, n, noise="gram", tau=tau, constant=0)
    truth = np.trace(np.cov(data.T))
    est = vals.sum(axis=1)
    assert abs(est.mean() - truth) < 5 * est.std() / np.sqrt(m)


def test_corrected_correlation_outside_the_cone_is_projected_with_a_warning():
    # a corrected second-moment matrix with |S_12| > sqrt(S_11 S_22) (not PSD)
    n, sigma = 100, 1.0
    G = np.array([[1.0, 1.1], [1.1, 1.0]]) * n + n * sigma**2 * np.eye(2)
    with pytest.warns(RuntimeWarning, match="positive semidefinite"):
        R = correlation_from_gram(G, n, sigma)
    assert np.all(np.abs(R) <= 1) and np.linalg.eigvalsh(R)[0] >= -1e-12
    assert R[0, 1] == pytest.approx(1.0)          # the nearest PSD matrix is rank one here
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # no warning when the matrix is PSD
        R = correlation_from_gram(np.array([[1.0, 0.5], [0.5, 1.0]]) * n + n * sigma**2 * np.eye(2), n, sigma)
    assert R[0, 1] == pytest.approx(0.5, rel=1e-12)


# --------------------------------------------------------------------------- bad input


def test_bad_input_is_refused_with_the_argument_named():
    with pytest.raises(ValueError, match="p must be a whole number >= 1"):
        rivals.gram_sensitivity(0)
    with pytest.raises(ValueError, match="p must be a whole number"):
        rivals.gram_sensitivity(1.5)
    with pytest.raises(ValueError, match="eps"):
        rivals.sigma_gram(0.0, 0.01, 2)
    with pytest.raises(ValueError, match="delta"):
        rivals.sigma_gram(0.1, 1.0, 2)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        rivals.release_gram([[2.0, 0.0]], 1.0)
    with pytest.raises(ValueError, match="tau must be finite and > 0"):
        rivals.release_gram([[0.5, 0.0]], -1.0)
    with pytest.raises(ValueError, match="size"):
        rivals.gram_noise(2, 1.0, size=0)
    with pytest.raises(ValueError, match="noise must be 'mask'"):
        ols_from_gram(np.eye(2), 10, 1, 1.0, noise="laplace")
    with pytest.raises(ValueError, match="tau .* is required"):
        ols_from_gram(np.eye(2), 10, 1, noise="gram")
    with pytest.raises(ValueError, match="sigma must be None"):
        ols_from_gram(np.eye(2), 10, 1, 1.0, noise="gram", tau=1.0)
    with pytest.raises(ValueError, match="tau must be None"):
        ols_from_gram(np.eye(2), 10, 1, 1.0, tau=1.0)
    with pytest.raises(ValueError, match="tau must be finite and > 0"):
        correlation_from_gram(np.eye(2), 10, noise="gram", tau=0.0)
    with pytest.raises(ValueError, match="variance of column"):
        correlation_from_gram(np.eye(2), 10, 1.0)
    with pytest.raises(ValueError, match="K must be positive definite"):
        rivals.first_order_errors(np.zeros((2, 2)), np.zeros((2, 2, 2, 2)))
    with pytest.raises(ValueError, match="cov must be"):
        rivals.first_order_errors(np.eye(2), np.zeros((2, 2)))


# --------------------------------------------------------------------------- the explorer


def test_sigma_low_large_n_matches_the_exact_projection_bound():
    from dpmask.exact.audit import sigma_lower_bound

    for eps, delta, p in [(0.1, 0.01, 2), (0.001, 0.001, 5)]:
        exact_low = sigma_lower_bound(eps, delta, np.array([1000, 10**5]), p, statistic="projection")
        approx = rivals.sigma_low_large_n(eps, delta, np.array([1000, 10**5]), p)
        np.testing.assert_allclose(approx, exact_low, rtol=0.01)


def test_rivals_explorer_shows_independently_computed_numbers():
    """The panel after five slider moves (how fast each update is, against a recomputation of
    Table 1 in the same run, is timed in benchmarks/bench_guards.py)."""
    pytest.importorskip("ipywidgets")
    pytest.importorskip("matplotlib")
    import re

    from dpmask import widgets
    from dpmask.paper import bounds

    box = widgets.rivals_explorer(eps=0.1, delta=0.01, n=10**5, p=2)
    controls = {c.description: c for c in box.children[0].children}

    def shown():
        html = box.children[1].value
        return {k: float(v) for k, v in re.findall(r"data-key='(\w+)'[^>]*>([^<]*)<", html)}

    assert bytes(box.children[2].value[:8]) == b"\x89PNG\r\n\x1a\n"
    for key, value in [("n", 10**6), ("p", 5), ("estimand", "corr"), ("ε", 0.01), ("δ", 0.001)]:
        controls[key].value = value
    vals = shown()
    e, d, n = controls["ε"].value, controls["δ"].value, int(round(controls["n"].value))
    M = rivals.example_moments(5)
    K = n * M
    # independent path: numerical Jacobian with the covariance tensors, not the closed form
    tau = analytic_gaussian_sigma(e, d) * (2 * np.sqrt(5) - 1)
    s0 = bounds.sigma_b(e, d, n, 5)
    assert vals["tau"] == pytest.approx(tau, rel=1e-4)
    assert vals["rmse_gram"] == pytest.approx(
        rivals.first_order_errors(K, rivals.gram_noise_cov(5, tau))["corr"], rel=1e-3)
    assert vals["rmse_B0"] == pytest.approx(
        rivals.first_order_errors(K, rivals.mask_noise_cov(K, n, s0))["corr"], rel=1e-3)
    # rows for RMSE 0.01 with the rival: tau sqrt(c/2)/0.01, c from the n = 1 tensor
    c = rivals.first_order_errors(M, 2 * rivals.gram_noise_cov(5, 1.0))["corr"] ** 2
    assert vals["rows_gram"] == pytest.approx(tau * np.sqrt(c / 2) / 0.01, rel=1e-3)
    # and the rows of Setting B at sigma_low do give the target
    rows = vals["rows_Blow"]
    s_low = rivals.sigma_low_large_n(e, d, rows, 5)
    at_rows = rivals.first_order_errors(rows * M, rivals.mask_noise_cov(rows * M, int(rows), s_low))["corr"]
    assert at_rows == pytest.approx(0.01, rel=1e-3)
    with pytest.raises(ValueError, match="estimand"):
        widgets.rivals_numbers(0.1, 0.01, 1000, 2, estimand="median")
    with pytest.raises(ValueError, match="p must be"):
        widgets.rivals_numbers(0.1, 0.01, 1000, 7)


def test_rivals_figure_draws():
    pytest.importorskip("matplotlib")
    from dpmask import widgets

    fig = widgets.rivals_figure(eps_values=(0.1, 0.01), p_values=(2,))
    assert len(fig.axes) == 1 and len(fig.axes[0].lines) == 4


def test_bench_rivals_quick_runs():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=str(root))
    run = subprocess.run([sys.executable, str(root / "benchmarks" / "bench_rivals.py"), "--quick"],
                         capture_output=True, text=True, timeout=120, env=env, cwd=root)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "rival / masking" in run.stdout
