"""Tests of dpmask.paper.mechanisms: the releases of Settings A, B, C and block-diagonal masking.

Truth comes from closed forms (Gram identities, Haar and Stiefel moments, Beta laws of frame
coordinates, rotation invariance of Gaussian noise) and from the dense reference path, compared
by two-sample tests.  Every generator is seeded, so each test is deterministic; the thresholds
(p-values above 1e-3, moments within 5 standard errors) are what a correct sampler passes with
overwhelming probability.
"""

import numpy as np
import pytest
from scipy import stats

from dpmask.paper import mechanisms as mech

ALPHA = 1e-3


def _data(n, p, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=(n, p))


# --- check_data ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "X, match",
    [
        (np.zeros(5), "must be 2-D"),
        (np.zeros((2, 2, 2)), "must be 2-D"),
        (np.array([[0.0, np.nan], [0.0, 0.0]]), "row 0, column 1"),
        (np.array([[0.0, 0.0], [0.0, 1.5]]), r"\[-1, 1\]; row 1, column 1"),
        (np.array([[0.0, 0.0], [-np.inf, 0.0]]), "must be finite; entry at row 1, column 0"),
        ([["a", "b"]], "array of real numbers"),
        (np.zeros((0, 3)), "at least one row"),
    ],
)
def test_check_data_rejects_bad_data(X, match):
    with pytest.raises(ValueError, match=match):
        mech.check_data(X)


def test_releases_reject_bad_arguments():
    X = _data(10, 2)
    with pytest.raises(ValueError, match="sigma must be finite and > 0"):
        mech.release_b(X, 0.0, 1)
    with pytest.raises(ValueError, match="method must be"):
        mech.release_b(X, 1.0, 1, method="fast")
    with pytest.raises(ValueError, match="more rows than columns"):
        mech.release_b(_data(3, 3), 1.0, 1)
    with pytest.raises(ValueError, match="rng must be"):
        mech.release_a(X, 1.0, rng="seed")
    with pytest.raises(ValueError, match="block_sizes must sum to the number of rows n=10"):
        mech.release_block(X, 1.0, [5, 4], 1)
    with pytest.raises(ValueError, match=r"block_sizes\[1\]=2"):
        mech.release_block(X, 1.0, [8, 2], 1)
    with pytest.raises(ValueError, match="block_sizes is required"):
        mech.release_block(X, 1.0)
    with pytest.raises(ValueError, match="p must be <= n"):
        mech.stiefel_frame(3, 4, 0)


# --- Haar matrices and uniform frames -------------------------------------------------------


def test_haar_matrix_is_orthogonal_and_trace_has_haar_moments():
    rng = np.random.default_rng(1)
    n, reps = 6, 4000
    traces = np.empty(reps)
    for k in range(reps):
        A = mech.haar_orthogonal(n, rng)
        traces[k] = np.trace(A)
    assert np.allclose(A.T @ A, np.eye(n), atol=1e-12)
    # For Haar O(n), E[tr A] = 0 and E[(tr A)^2] = 1 (Diaconis–Shahshahani).
    se = traces.std() / np.sqrt(reps)
    assert abs(traces.mean()) < 5 * se
    se2 = (traces**2).std() / np.sqrt(reps)
    assert abs((traces**2).mean() - 1) < 5 * se2


def test_stiefel_frame_coordinates_follow_the_beta_law():
    rng = np.random.default_rng(2)
    n, p, reps = 7, 3, 3000
    first = np.empty(reps)
    for k in range(reps):
        U = mech.stiefel_frame(n, p, rng)
        first[k] = U[0, 2]
    assert np.allclose(U.T @ U, np.eye(p), atol=1e-12)
    # A column of a uniform frame is uniform on the sphere: u^2 ~ Beta(1/2, (n-1)/2).
    assert stats.kstest(first**2, stats.beta(0.5, (n - 1) / 2).cdf).pvalue > ALPHA
    # and the sign is symmetric
    assert abs(np.mean(first > 0) - 0.5) < 5 * 0.5 / np.sqrt(reps)


# --- Setting A -----------------------------------------------------------------------------


def test_release_a_is_data_plus_gaussian_noise():
    X = _data(400, 3)
    Y = mech.release_a(X, 2.0, rng=3)
    assert stats.kstest(((Y - X) / 2.0).ravel(), "norm").pvalue > ALPHA


# --- Setting B: frame path against closed forms and the dense path -------------------------


@pytest.mark.parametrize("method", ["frame", "dense"])
def test_release_b_keeps_the_gram_matrix_of_x_plus_c(method):
    X, sigma, seed = _data(30, 4), 0.7, 11
    Y = mech.release_b(X, sigma, rng=seed, method=method)
    # the noise is the first draw from the generator
    C = sigma * np.random.default_rng(seed).standard_normal(X.shape)
    assert np.allclose(Y.T @ Y, (X + C).T @ (X + C), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("method", ["frame", "dense"])
def test_release_b_moments(method):
    X, sigma, reps = _data(8, 2, seed=5), 0.5, 3000
    rng = np.random.default_rng(6)
    grams = np.empty((reps, 2, 2))
    rows = np.empty((reps, 2))
    for k in range(reps):
        Y = mech.release_b(X, sigma, rng, method=method)
        grams[k] = Y.T @ Y
        rows[k] = Y[0]
    n = X.shape[0]
    expected = X.T @ X + n * sigma**2 * np.eye(2)  # E[Y^T Y] = X^T X + n sigma^2 I
    se = grams.std(axis=0) / np.sqrt(reps)
    assert np.all(np.abs(grams.mean(axis=0) - expected) < 5 * se)
    # Haar masking makes every row mean zero, with E[Y_1^T Y_1] = E[Y^T Y] / n.
    assert np.all(np.abs(rows.mean(axis=0)) < 5 * rows.std(axis=0) / np.sqrt(reps))
    outer = rows[:, :, None] * rows[:, None, :]
    se_o = outer.std(axis=0) / np.sqrt(reps)
    assert np.all(np.abs(outer.mean(axis=0) - expected / n) < 5 * se_o)


def test_release_b_of_zero_data_is_pure_gaussian_noise():
    # Rotation invariance: A C has i.i.d. N(0, sigma^2) entries when X = 0.
    Y = mech.release_b(np.zeros((200, 3)), 1.5, rng=8)
    assert stats.kstest(Y.ravel() / 1.5, "norm").pvalue > ALPHA


def _statistics(sample):
    """A few scalar statistics of a release's first row, for two-sample comparisons."""
    return {
        "y11": sample[:, 0, 0],
        "y12": sample[:, 0, 1],
        "row_norm": np.sum(sample[:, 0, :] ** 2, axis=1),
        "cross": sample[:, 0, 0] * sample[:, 0, 1],
    }


def _draw(fn, X, sigma, reps, seed, **kw):
    rng = np.random.default_rng(seed)
    return np.stack([fn(X, sigma, rng, **kw) for _ in range(reps)])


def test_frame_and_dense_paths_agree_in_distribution():
    X = _data(6, 2, seed=9)
    X[0] = [1.0, -1.0]  # a row far from the rest makes the row law non-trivial
    frame = _statistics(_draw(mech.release_b, X, 0.4, 3000, 10, method="frame"))
    dense = _statistics(_draw(mech.release_b, X, 0.4, 3000, 11, method="dense"))
    for key in frame:
        assert stats.ks_2samp(frame[key], dense[key]).pvalue > ALPHA, key


def test_settings_b_and_c_agree_in_distribution():
    # Lemma A.4: A(X + C) and A X + C have the same density.
    X = _data(6, 2, seed=12)
    b = _statistics(_draw(mech.release_b, X, 0.6, 3000, 13))
    c = _statistics(_draw(mech.release_c, X, 0.6, 3000, 14))
    c_dense = _statistics(_draw(mech.release_c, X, 0.6, 3000, 15, method="dense"))
    for key in b:
        assert stats.ks_2samp(b[key], c[key]).pvalue > ALPHA, key
        assert stats.ks_2samp(c[key], c_dense[key]).pvalue > ALPHA, key


def test_release_c_accepts_rank_deficient_data():
    X = np.zeros((10, 3))
    X[:, 0] = 0.5
    Y = mech.release_c(X, 1.0, rng=1)
    assert Y.shape == (10, 3) and np.all(np.isfinite(Y))


# --- block-diagonal masking ---------------------------------------------------------------


def test_release_block_keeps_each_blocks_gram_matrix():
    X, sigma, seed = _data(25, 2, seed=3), 0.3, 21
    sizes = [10, 7, 8]
    Y = mech.release_block(X, sigma, sizes, rng=seed)
    C = sigma * np.random.default_rng(seed).standard_normal(X.shape)
    M = X + C
    start = 0
    for size in sizes:
        blk = slice(start, start + size)
        assert np.allclose(Y[blk].T @ Y[blk], M[blk].T @ M[blk], atol=1e-10)
        start += size


def test_release_block_rows_stay_in_their_block():
    # Rows of a block are mixed only among themselves: a block of zero data and zero-ish noise
    # stays tiny while a block with large entries does not leak into it.
    X = np.zeros((12, 1))
    X[6:] = 1.0
    Y = mech.release_block(X, 1e-9, [6, 6], rng=4)
    assert np.max(np.abs(Y[:6])) < 1e-7
    assert np.sum(Y[6:] ** 2) == pytest.approx(6.0, rel=1e-6)


def test_same_seed_same_release():
    X = _data(20, 3)
    for fn in (mech.release_a, mech.release_b, mech.release_c):
        assert np.array_equal(fn(X, 1.0, 42), fn(X, 1.0, 42))
