"""Tests for dpmask.inference: least squares, correlations and PCA from a masked release.

The truths used: least squares computed directly on ``X + C`` (numpy's lstsq,
the same noise matrix), the closed-form mean and variance of the entries of a
noncentral Wishart matrix, Monte Carlo averages and coverages of real releases
with tolerances of five Monte Carlo standard errors, and numpy's corrcoef/cov
on the raw data when no noise is added.

The long Monte Carlo loops draw Setting A releases: the first two tests show
that a Setting B release has exactly the Gram matrix of the Setting A release
with the same noise, and the estimators see nothing else, so the laws agree.
"""

import numpy as np
import pytest

from dpmask.inference import (
    correlation_from_release,
    corrected_gram,
    gram,
    ols_from_gram,
    ols_from_release,
    pca_from_release,
    simulate_gram,
)
from dpmask.paper.mechanisms import haar_orthogonal, release_a, release_b

BETA = np.array([0.3, -0.2])


def _design(n, rng):
    """Two predictors in [-1, 1] and a response with |y| <= 1 (Definition 2.1's scaling)."""
    Z = rng.uniform(-1, 1, (n, 2))
    e = rng.uniform(-0.5, 0.5, n)
    return np.column_stack([Z, Z @ BETA + e])


def _lstsq_fit(M, response):
    """Reference OLS on an explicit matrix: coefficients and textbook standard errors."""
    pred = [j for j in range(M.shape[1]) if j != response]
    Z, y = M[:, pred], M[:, response]
    coef, *_ = np.linalg.lstsq(Z, y, rcond=None)
    resid = y - Z @ coef
    s2 = resid @ resid / (Z.shape[0] - Z.shape[1])
    se = np.sqrt(np.diag(s2 * np.linalg.inv(Z.T @ Z)))
    return coef, se, s2


# --- what masking keeps --------------------------------------------------------------


def test_uncorrected_ols_on_masked_release_is_ols_on_noisy_data():
    rng = np.random.default_rng(11)
    X = _design(60, rng)
    M = X + 0.7 * rng.standard_normal(X.shape)
    Y = haar_orthogonal(60, rng) @ M  # Setting B with a known A and C
    for response in (2, 0, -1):
        fit = ols_from_release(Y, response, correct_noise=False)
        coef, se, s2 = _lstsq_fit(M, response % 3)
        np.testing.assert_allclose(fit.coef, coef, rtol=1e-9)
        np.testing.assert_allclose(fit.se, se, rtol=1e-9)
        assert fit.sigma2_resid == pytest.approx(s2, rel=1e-9)
        assert fit.df == 58 and not fit.corrected


def test_release_b_keeps_the_gram_of_its_own_noisy_data():
    # release_b draws C first from the generator: replaying the seed rebuilds M = X + C.
    rng = np.random.default_rng(12)
    X = _design(40, rng)
    sigma = 0.3
    M = X + sigma * np.random.default_rng(5).standard_normal(X.shape)
    for method in ("frame", "dense"):
        Y = release_b(X, sigma, rng=5, method=method)
        np.testing.assert_allclose(gram(Y), M.T @ M, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(
            ols_from_release(Y, 2, correct_noise=False).coef, _lstsq_fit(M, 2)[0], rtol=1e-9
        )


def test_corrected_gram_subtracts_n_sigma_squared():
    G = np.array([[10.0, 1.0], [1.0, 12.0]])
    np.testing.assert_array_equal(corrected_gram(G, 5, 0.5), [[8.75, 1.0], [1.0, 10.75]])


def test_corrected_fit_with_vanishing_noise_is_plain_ols():
    rng = np.random.default_rng(13)
    X = _design(80, rng)
    fit = ols_from_gram(X.T @ X, 80, 2, 1e-12)
    coef, se, s2 = _lstsq_fit(X, 2)
    np.testing.assert_allclose(fit.coef, coef, rtol=1e-9)
    np.testing.assert_allclose(fit.se, se, rtol=1e-6)  # population SE -> textbook SE as sigma -> 0


# --- the moment correction -------------------------------------------------------------


def test_corrected_estimator_is_unbiased_and_uncorrected_is_attenuated():
    rng = np.random.default_rng(14)
    n, sigma, reps = 1000, 0.5, 600
    X = _design(n, rng)
    target = _lstsq_fit(X, 2)[0]  # the raw data's own coefficients
    corr, naive = [], []
    for _ in range(reps):
        Y = release_a(X, sigma, rng)
        corr.append(ols_from_release(Y, 2, sigma).coef)
        naive.append(ols_from_release(Y, 2, correct_noise=False).coef)
    corr, naive = np.array(corr), np.array(naive)
    mc_se = corr.std(axis=0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(corr.mean(axis=0) - target) < 5 * mc_se)
    # without the correction the noise shrinks the slopes by about s_zz / (s_zz + sigma^2) = 4/7
    shrink = naive.mean(axis=0) / target
    assert np.all(np.abs(shrink - (1 / 3) / (1 / 3 + sigma**2)) < 0.05)
    naive_se = naive.std(axis=0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(naive.mean(axis=0) - target) > 20 * naive_se)


def test_corrected_residual_variance_removes_the_response_noise():
    rng = np.random.default_rng(15)
    n, sigma, reps = 1000, 0.5, 300
    X = _design(n, rng)
    s2_raw = _lstsq_fit(X, 2)[2]
    est = np.array([ols_from_release(release_a(X, sigma, rng), 2, sigma).sigma2_resid for _ in range(reps)])
    assert abs(est.mean() - s2_raw) < 5 * est.std(ddof=1) / np.sqrt(reps)
    naive = ols_from_release(release_a(X, sigma, rng), 2, correct_noise=False).sigma2_resid
    assert naive > s2_raw + 0.5 * sigma**2  # noise in y (and attenuation) inflates it


def _release_grams(X_fixed, Z, beta, sigma, reps, rng, conditional, chunk=500):
    """Gram matrices of `reps` Setting A releases X + C, vectorised in chunks.  A Setting B
    release has the same Gram matrix (first tests above), and the estimators see nothing else.
    Unconditional: new regression errors (hence a new X) in every replication."""
    n = Z.shape[0]
    out = []
    for start in range(0, reps, chunk):
        k = min(chunk, reps - start)
        if conditional:
            X = np.broadcast_to(X_fixed, (k, n, 3))
        else:
            y = Z @ beta + rng.uniform(-0.5, 0.5, (k, n))
            X = np.concatenate([np.broadcast_to(Z, (k, n, 2)), y[..., None]], axis=2)
        M = X + sigma * rng.standard_normal((k, n, 3))
        out.append(np.einsum("kni,knj->kij", M, M))
    return np.concatenate(out)


@pytest.mark.parametrize(
    "conditional, beta",
    [(False, (0.3, -0.2)), (True, (0.3, -0.2)), (False, (1.5, 0.0))],
    ids=["population", "conditional", "population-large-beta"],
)
def test_standard_errors_cover_95_percent(conditional, beta):
    """Coverage of the 95 % intervals, two-sided, with the power to see a wrong standard error.

    conditional=False: new regression errors each replication, target the population beta;
    conditional=True: one fixed data set, target its own least-squares coefficients.  The third
    case has a large first coefficient (the response then leaves [-1, 1], which the estimator
    does not mind) so that the meat term n sigma^4 beta beta^T carries about 20 % of the
    variance of coef[0] instead of 1-3 %: doubling it must fail too.
    8000 replications: the binomial standard error of a coverage of 0.95 is 0.0024, and the
    limits 0.95 +- 0.013 (5.4 of them) reject a true coverage of 0.92 or 0.98 almost surely,
    and standard errors off by x1.1 (coverage 0.969) or x0.9 (0.923) with high probability.
    The spread of the z-scores (coef - target) / se must be 1 within 0.05 (its standard error
    is about 0.008): standard errors off by 5 % or more fail it.  Measured with 20000-40000
    replications: coverages 0.950-0.955 and z spreads 0.981-0.999 in all three cases.
    """
    beta = np.array(beta)
    rng = np.random.default_rng(16 + conditional + 2 * int(beta[0] > 1))
    n, sigma, reps = 1000, 0.5, 8000
    Z = rng.uniform(-1, 1, (n, 2))
    X_fixed = np.column_stack([Z, Z @ beta + rng.uniform(-0.5, 0.5, n)])
    target = _lstsq_fit(X_fixed, 2)[0] if conditional else beta
    G = _release_grams(X_fixed, Z, beta, sigma, reps, rng, conditional)
    fit = ols_from_gram(G, n, 2, sigma, conditional=conditional)
    z = (fit.coef - target) / fit.se
    coverage = np.mean(np.abs(z) <= 1.959964, axis=0)
    assert np.all(np.abs(coverage - 0.95) < 0.013), coverage
    assert np.all(np.abs(z.std(axis=0) - 1.0) < 0.05), z.std(axis=0)
    naive = ols_from_gram(G[:500], n, 2, correct_noise=False)
    naive_cov = np.mean(np.abs(naive.coef - target) <= 1.959964 * naive.se, axis=0)
    assert np.all(naive_cov[np.abs(target) > 0.1] < 0.5)  # attenuated: the uncorrected SEs do not cover


def test_conditional_errors_are_smaller_than_population_errors():
    rng = np.random.default_rng(17)
    X = _design(500, rng)
    Y = release_b(X, 0.4, rng)
    pop = ols_from_release(Y, 2, 0.4).se
    cond = ols_from_release(Y, 2, 0.4, conditional=True).se
    assert np.all(cond < pop)


def test_intercept_column_released_with_the_data():
    rng = np.random.default_rng(18)
    n, sigma, reps = 1500, 0.4, 200
    z = rng.uniform(-1, 1, n)
    X = np.column_stack([np.ones(n), z, 0.2 + 0.5 * z + rng.uniform(-0.3, 0.3, n)])
    target = _lstsq_fit(X, 2)[0]
    est = np.array([ols_from_release(release_b(X, sigma, rng), 2, sigma, intercept=0).coef for _ in range(reps)])
    mc_se = est.std(axis=0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(est.mean(axis=0) - target) < 5 * mc_se)
    # the known entry n replaces the noisy corrected entry
    fit = ols_from_release(release_b(X, sigma, rng), 2, sigma, intercept=0)
    assert fit.gram[0, 0] == n


# --- correlations and principal components ------------------------------------------------


def test_correlation_and_pca_of_a_noise_free_masked_release_match_the_data():
    rng = np.random.default_rng(19)
    n = 50
    data = rng.uniform(-1, 1, (n, 3))
    data[:, 1] = 0.5 * data[:, 0] + 0.5 * data[:, 1]
    Y = haar_orthogonal(n, rng) @ np.column_stack([np.ones(n), data])
    np.testing.assert_allclose(correlation_from_release(Y, correct_noise=False, constant=0), np.corrcoef(data.T), atol=1e-12)
    values, vectors = pca_from_release(Y, correct_noise=False, constant=0)
    ref_values, ref_vectors = np.linalg.eigh(np.cov(data.T))
    np.testing.assert_allclose(values, ref_values[::-1], rtol=1e-10)
    for j in range(3):  # same directions up to sign
        assert abs(abs(vectors[:, j] @ ref_vectors[:, 2 - j]) - 1) < 1e-10
    # no constant column: uncentred correlation (cosine similarity)
    Yc = haar_orthogonal(n, rng) @ data
    norms = np.linalg.norm(data, axis=0)
    np.testing.assert_allclose(correlation_from_release(Yc, correct_noise=False), data.T @ data / np.outer(norms, norms), atol=1e-12)


def test_corrected_correlation_is_close_to_the_data_correlation():
    rng = np.random.default_rng(20)
    n, sigma, reps = 2000, 0.5, 100
    data = rng.uniform(-1, 1, (n, 2))
    data[:, 1] = 0.6 * data[:, 0] + 0.4 * data[:, 1]
    X = np.column_stack([np.ones(n), data])
    truth = np.corrcoef(data.T)[0, 1]
    est = np.array([correlation_from_release(release_a(X, sigma, rng), sigma, constant=0)[0, 1] for _ in range(reps)])
    assert abs(est.mean() - truth) < 5 * est.std(ddof=1) / np.sqrt(reps)
    raw = correlation_from_release(release_b(X, sigma, rng), correct_noise=False, constant=0)[0, 1]
    assert raw < truth - 0.2  # the noise dilutes the uncorrected correlation


# --- the Gram simulator ------------------------------------------------------------------


def test_simulate_gram_has_the_noncentral_wishart_moments():
    rng = np.random.default_rng(21)
    n, sigma, reps = 30, 0.8, 20000
    X = rng.uniform(-1, 1, (n, 2))
    draws = simulate_gram(X.T @ X, n, sigma, size=reps, rng=rng)
    s2 = sigma**2
    col2 = (X**2).sum(axis=0)
    mean = X.T @ X + n * s2 * np.eye(2)
    # Var of sum_i (x_ij + c_ij)(x_ik + c_ik): 4 s2 x^2 + 2 s2^2 on the diagonal, s2 (x_j^2 + x_k^2) + s2^2 off it
    var = np.array([[4 * s2 * col2[0] + 2 * n * s2**2, s2 * (col2[0] + col2[1]) + n * s2**2],
                    [s2 * (col2[0] + col2[1]) + n * s2**2, 4 * s2 * col2[1] + 2 * n * s2**2]])
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * np.sqrt(var / reps))
    # sample variance: relative standard error about sqrt(2 / reps) for near-Gaussian entries, use 5x that plus kurtosis slack
    np.testing.assert_allclose(draws.var(axis=0, ddof=1), var, rtol=5 * np.sqrt(3 / reps))


def test_simulate_gram_matches_explicit_releases_in_distribution():
    rng = np.random.default_rng(22)
    n, sigma, reps = 8, 1.0, 3000
    X = rng.uniform(-1, 1, (n, 3))
    direct = np.array([gram(release_a(X, sigma, rng)) for _ in range(reps)])
    sim = simulate_gram(X.T @ X, n, sigma, size=reps, rng=rng)
    from scipy import stats

    for j, k in [(0, 0), (0, 1), (2, 2)]:
        assert stats.ks_2samp(direct[:, j, k], sim[:, j, k]).pvalue > 1e-4
    small = simulate_gram(X[:4].T @ X[:4], 4, sigma, size=5, rng=rng)  # n - p = 1 < p
    assert small.shape == (5, 3, 3) and np.all(np.linalg.eigvalsh(small) > 0)
    assert simulate_gram(X.T @ X, n, sigma, rng=1).shape == (3, 3)
    few = np.array([gram(release_b(X, sigma, rng)) for _ in range(300)])  # masked releases too
    assert stats.ks_2samp(few[:, 0, 1], sim[:, 0, 1]).pvalue > 1e-4


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(response=3), "response must be a column index"),
        (dict(response=-4), "response must be a column index"),
        (dict(response=1.5), "response must be a column index"),
        (dict(response=True), "response must be a column index"),
        (dict(response=2, sigma=None), "sigma .* is required"),
        (dict(response=2, sigma=-1.0), "sigma must be finite and > 0"),
        (dict(response=2, sigma=[0.1, 0.2]), "sigma must be a single number"),
        (dict(response=2, sigma=0.1, intercept=True), "intercept=True cannot be honoured"),
        (dict(response=2, sigma=0.1, intercept=2), "intercept must differ from response"),
        (dict(response=2, sigma=0.1, intercept=7), "intercept must be a column index"),
        (dict(response=2, sigma=50.0), "not positive definite"),
    ],
)
def test_bad_input_raises(kwargs, match):
    rng = np.random.default_rng(23)
    Y = release_b(_design(30, rng), 0.1, rng)
    with pytest.raises(ValueError, match=match):
        ols_from_release(Y, **kwargs)


def test_bad_arrays_raise():
    with pytest.raises(ValueError, match="2-D"):
        ols_from_release(np.ones(5), 0, correct_noise=False)
    with pytest.raises(ValueError, match="finite"):
        ols_from_release(np.array([[1.0, np.nan], [0.0, 1.0], [1.0, 1.0]]), 0, correct_noise=False)
    with pytest.raises(ValueError, match="at least two columns"):
        ols_from_release(np.ones((5, 1)), 0, correct_noise=False)
    with pytest.raises(ValueError, match="n must exceed the number of predictors"):
        ols_from_gram(np.eye(3), 2, 0, correct_noise=False)
    with pytest.raises(ValueError, match="symmetric"):
        ols_from_gram([[1.0, 2.0], [0.0, 1.0]], 5, 0, correct_noise=False)
    with pytest.raises(ValueError, match="square"):
        ols_from_gram(np.ones((2, 3)), 5, 0, correct_noise=False)
    with pytest.raises(ValueError, match="n must be a whole number"):
        corrected_gram(np.eye(2), 2.5, 1.0)
    with pytest.raises(ValueError, match="variance of column"):
        correlation_from_release(np.eye(4)[:, :2], 1.0)
    with pytest.raises(ValueError, match="constant=True cannot be honoured"):
        pca_from_release(np.eye(4)[:, :2], correct_noise=False, constant=True)
    with pytest.raises(ValueError, match="n must exceed p"):
        simulate_gram(np.eye(2), 2, 1.0)
    with pytest.raises(ValueError, match="positive semidefinite"):
        simulate_gram(-np.eye(2), 5, 1.0)
    with pytest.raises(ValueError, match="sigma"):
        simulate_gram(np.eye(2), 5, 0.0)


def test_stack_of_grams_gives_the_same_fits_as_one_at_a_time():
    rng = np.random.default_rng(24)
    X = _design(200, rng)
    stack = simulate_gram(X.T @ X, 200, 0.3, size=5, rng=rng)
    batch = ols_from_gram(stack, 200, 2, 0.3)
    for i in range(5):
        one = ols_from_gram(stack[i], 200, 2, 0.3)
        np.testing.assert_allclose(batch.coef[i], one.coef, rtol=1e-12)
        np.testing.assert_allclose(batch.cov[i], one.cov, rtol=1e-10)
        assert batch.sigma2_resid[i] == pytest.approx(one.sigma2_resid, rel=1e-12)
    bad = stack.copy()
    bad[3] -= 10 * 200 * 0.3**2 * np.eye(3)  # one corrected predictor block far below zero
    with pytest.raises(ValueError, match=r"not positive definite \(1 of 5\)"):
        ols_from_gram(bad, 200, 2, 0.3)


def test_inference_explorer_numbers_follow_the_sigma_to_the_fourth_law():
    # rows for a given error scale like sigma^4 when the noise dominates (the sigma^4 terms of the meat)
    from dpmask.paper.bounds import sigma_b
    from dpmask.exact import analytic_gaussian_sigma
    from dpmask.widgets import inference_numbers

    vals = inference_numbers(0.1, 1e-3, 10**6)
    law = (analytic_gaussian_sigma(0.1, 1e-3) / sigma_b(0.1, 1e-3, 10**9, 2)) ** 4
    assert abs(vals["rows_ratio"] / law - 1) < 0.02
    # closed form of the one-predictor first-order error: var = (sigma^4 (1 + 2 b^2) + sigma^2 ((1 + b^2) s + e2)) / (n s^2)
    s, b, e2, n, sig = 1 / 3, 0.5, 1 / 12 * (1 - 1 / 10**6), 10**6, vals["sigma_b"]
    closed = np.sqrt((sig**4 * (1 + 2 * b**2) + sig**2 * ((1 + b**2) * s + e2)) / (n * s**2))
    assert vals["rmse_b"] == pytest.approx(closed, rel=1e-6)


# --- issue 17: checks that fail on planted bugs M12 and M14 ------------------------------------


def test_gram_noise_standard_errors_with_an_intercept_cover_95_percent():
    """M12: under the rival's Gram noise with an intercept column, the meat of the sandwich
    loses E_cc's share tau^2 beta_c^2 (G_cc = n is known); halving that share inflated the
    intercept's standard error by 26 % and no test saw it.  One fixed data set (y = 0.8 +
    0.15 x + noise, so beta_c carries most of the meat), 4000 draws of E = (W + W^T)/2 with
    W_ij ~ N(0, tau^2) made here with numpy; the target is the data's own least squares.
    Coverage of the 95 % intervals 0.95 +- 0.0103 (three binomial standard errors) and the
    spread of the z-scores 1 +- 0.05 (its standard error is 0.011) for both coefficients."""
    rng = np.random.default_rng(1712)
    n, tau, reps = 5000, 30.0, 4000
    x = rng.uniform(-1, 1, n)
    y = np.clip(0.8 + 0.15 * x + 0.05 * rng.standard_normal(n), -1, 1)
    X = np.column_stack([np.ones(n), x, y])
    target = _lstsq_fit(X, 2)[0]
    W = tau * rng.standard_normal((reps, 3, 3))
    G = X.T @ X + 0.5 * (W + np.swapaxes(W, 1, 2))
    fit = ols_from_gram(G, n, 2, noise="gram", tau=tau, intercept=0, conditional=True)
    z = (fit.coef - target) / fit.se
    coverage = np.mean(np.abs(z) <= 1.959964, axis=0)
    assert np.all(np.abs(coverage - 0.95) < 0.0103), coverage
    assert np.all(np.abs(z.std(axis=0) - 1.0) < 0.05), z.std(axis=0)


def test_correlation_projection_is_eigen_clipping_for_three_columns():
    """M14: with p = 3 a covariance matrix with one negative eigenvalue must be projected onto
    the PSD cone (eigenvalues clipped at 0, by hand here) before scaling; with p = 2, as in the
    other tests, clipping the correlation and projecting agree, so deleting the projection
    (warning kept) went unseen."""
    from dpmask.inference import correlation_from_gram

    R0 = np.array([[1.0, 0.9, 0.9], [0.9, 1.0, -0.5], [0.9, -0.5, 1.0]])  # not PSD
    scale = np.diag([2.0, 1.0, 0.5])
    n = 50
    G = n * scale @ R0 @ scale
    w, V = np.linalg.eigh(G / n)
    assert w[0] < 0 < w[1]
    S = (V * np.clip(w, 0.0, None)) @ V.T
    d = 1.0 / np.sqrt(np.diag(S))
    expected = S * d[:, None] * d[None, :]
    with pytest.warns(RuntimeWarning, match="not positive semidefinite"):
        got = correlation_from_gram(G, n, correct_noise=False)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert np.linalg.eigvalsh(got)[0] > -1e-12  # a correlation matrix again
    assert np.max(np.abs(got - R0)) > 0.05  # not merely R0 clipped to [-1, 1]
