r"""The rival of masking: the Gaussian mechanism on the Gram matrix ("Analyze Gauss").

A Setting B release ``Y = A (X + C)`` depends on the data only through
``K = X^T X`` (its law is that of a uniform frame times a factor of
``(X + C)^T (X + C)``), so every analysis of it is an analysis of a noisy Gram
matrix.  The natural rival releases ``K`` itself with symmetric Gaussian noise
(Dwork, Talwar, Thakurta and Zhang 2014):

.. math::

    \tilde K = K + E,\qquad E = (W + W^T)/2,\quad W_{ij} \text{ i.i.d. } N(0, \tau^2),

so ``E_ii ~ N(0, tau^2)`` and ``E_ij = E_ji ~ N(0, tau^2/2)`` for i < j, all
independent.  This is the Gaussian mechanism on the vector
``(K_ii, sqrt(2) K_ij for i < j)``, whose Euclidean norm is the Frobenius norm
of ``K``; its L2 sensitivity is therefore the Frobenius sensitivity
:func:`gram_sensitivity`, and the analytic Gaussian calibration (Balle and
Wang 2018) gives the tight ``tau`` (:func:`sigma_gram`).

Notation: ``tau`` is the standard deviation of the rival's Gram noise on the
diagonal (it is *not* the data noise ``sigma`` of Settings A and B); ``K`` is
a Gram matrix of the data.

The module also gives the first-order (delta-method) errors of the three
analyses the book compares -- least-squares slopes, the correlation matrix
and the leading principal direction -- under either noise model
(:func:`mask_noise_cov`, :func:`gram_noise_cov`, :func:`first_order_errors`).

Chapter 9 calls these functions under :mod:`dpmask.rivals`, which gathers this
module with the field's other rivals.

References
----------
C. Dwork, K. Talwar, A. Thakurta, L. Zhang, "Analyze Gauss: optimal bounds for
privacy-preserving principal component analysis", STOC 2014.
B. Balle, Y.-X. Wang, "Improving the Gaussian mechanism for differential
privacy: analytical calibration and optimal denoising", ICML 2018.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._validate import (COUNT_MAX, as_float_array, as_rng, broadcast_named, check_delta, check_eps, check_int, check_sigma,
                        check_single_sigma, scalar_or_array)
from ..exact.gaussian import DELTA_SOLVE_MAX, _analytic_gaussian_sigma
from ..inference import _check_column, _check_gram, _check_n, _check_sigma_scalar
from ..paper.mechanisms import check_data

#: Largest p for :func:`gram_noise` (a p x p draw) and for the p**4 tensors of
#: :func:`gram_noise_cov` / :func:`mask_noise_cov`; largest count of numbers one
#: call of :func:`gram_noise` draws (2**26 floats, 512 MB).
GRAM_P_MAX = 4096
COV_P_MAX = 32
NOISE_ENTRIES_MAX = 2**26
#: Largest tau accepted by the functions that take it (the noise and its square stay finite).
TAU_MAX = 1e100

__all__ = [
    "gram_sensitivity",
    "sigma_gram",
    "gram_noise",
    "release_gram",
    "gram_noise_cov",
    "mask_noise_cov",
    "first_order_errors",
    "error_coefficients",
    "example_moments",
    "sigma_low_large_n",
    "PDProbability",
    "gram_pd_probability",
]


def gram_sensitivity(p):
    r"""Frobenius sensitivity of the Gram matrix under the paper's neighbours.

    .. math::

        \Delta_F(p) = \sup\{\|x x^T - x' x'^T\|_F :
        x, x' \in [-1, 1]^p,\ \|x - x'\| \le 1\} = 2\sqrt p - 1.

    Changing one row of ``X`` from ``x'`` to ``x`` changes ``K = X^T X`` by
    ``x x^T - x' x'^T``; the supremum is attained at ``x = (1, ..., 1)``,
    ``x' = (1 - 1/sqrt(p)) (1, ..., 1)``.

    Parameters
    ----------
    p : array_like
        Number of columns, a whole number >= 1.

    Returns
    -------
    float or ndarray
        ``2 sqrt(p) - 1``, broadcast over ``p``.

    Raises
    ------
    ValueError
        If ``p`` is not a whole number >= 1.

    Notes
    -----
    Proof (chapter 9, Lemma 9.2).  With the midpoint ``m = (x + x')/2`` and
    ``d = x - x'``, ``x x^T - x' x'^T = m d^T + d m^T`` and
    ``||m d^T + d m^T||_F^2 = 2 ||m||^2 ||d||^2 + 2 (m.d)^2``.  The cube
    constraint is ``|m_i| + |d_i|/2 <= 1``.  Replacing ``m_i, d_i`` by their
    absolute values keeps feasibility and does not decrease the norm; then
    raising ``m_i`` to ``1 - d_i/2`` increases it.  With ``D = ||d||^2 <= 1``
    and ``S = sum_i d_i`` the square becomes ``2 (S - D)^2 + 2 p D - D^2``,
    increasing in ``S`` on ``S >= sqrt(D) >= D``; Cauchy-Schwarz gives
    ``S <= sqrt(p D)`` and the bound ``(2 sqrt(p D) - D)^2``, largest at
    ``D = 1``.

    References
    ----------
    Dwork, Talwar, Thakurta, Zhang (2014) use the same mechanism with
    sensitivity 1 for rows in the unit ball; here rows lie in the cube.

    Examples
    --------
    >>> gram_sensitivity(1)
    1.0
    >>> round(gram_sensitivity(5), 4)
    3.4721
    """
    return _gram_sensitivity(check_int(p, "p", minimum=1))


def _gram_sensitivity(p):
    """The core of :func:`gram_sensitivity` for a p its caller has checked: 2 sqrt(p) - 1."""
    return scalar_or_array(2.0 * np.sqrt(np.asarray(p, dtype=float)) - 1.0)


def sigma_gram(eps, delta, p):
    r"""Standard deviation ``tau`` of the rival's Gram noise for (eps, delta)-DP.

    .. math::

        \tau = \sigma_A(\varepsilon, \delta)\,(2\sqrt p - 1),

    the tight analytic Gaussian multiplier (:func:`dpmask.exact.analytic_gaussian_sigma`,
    Balle and Wang 2018) times the L2 sensitivity of ``(K_ii, sqrt(2) K_ij)``
    (:func:`gram_sensitivity`).  ``tau`` is the standard deviation of the
    noise on each *diagonal* entry of the released Gram matrix (off the
    diagonal it is ``tau / sqrt(2)``); it is not the standard deviation of a
    noise added to the data's entries, and it does not depend on n.

    Parameters
    ----------
    eps : array_like
        Privacy parameter, in [1e-100, 1e4] (the package's domain of eps).
    delta : array_like
        Privacy parameter, 0 < delta < 1 - 1e-12.
    p : array_like
        Number of columns, a whole number in [1, 2**53].

    Returns
    -------
    float or ndarray
        Broadcast over the arguments; never below the sufficient value: the analytic
        Gaussian multiplier is itself nudged so that its delta is at most the target.

    Raises
    ------
    ValueError
        On eps or delta outside these ranges or p not a whole number in range.
    TypeError
        On text or a bool where a number belongs.

    Examples
    --------
    >>> round(sigma_gram(1.0, 1e-5, 1), 4)
    3.7306
    """
    eps = check_eps(eps)
    delta = check_delta(delta, upper=DELTA_SOLVE_MAX, hypothesis=" (nearer 1 the target is lost to rounding)")
    sens = np.asarray(gram_sensitivity(p))
    eps, delta, sens = broadcast_named(eps=eps, delta=delta, p=sens)
    s = np.asarray(_analytic_gaussian_sigma(eps, delta))  # eps and delta checked above: the core
    return scalar_or_array(s * sens)


def _check_tau(tau):
    """One Gram-noise standard deviation, 0 < tau <= TAU_MAX."""
    return check_single_sigma(tau, "tau", top=TAU_MAX)


def gram_noise(p, tau, size=None, rng=None):
    r"""Draw the rival's symmetric Gram noise ``E = (W + W^T)/2``, ``W_ij ~ N(0, tau^2)``.

    ``E_ii ~ N(0, tau^2)``, ``E_ij = E_ji ~ N(0, tau^2/2)`` (i < j), independent.

    Parameters
    ----------
    p : int
        Size of the matrix, 1 <= p <= ``GRAM_P_MAX`` (4096).
    tau : float
        Standard deviation on the diagonal, 0 < tau <= ``TAU_MAX`` (1e100)
        (:func:`sigma_gram`).
    size : int or None
        Number of draws; None for one; 1 <= size and size * p**2 <=
        ``NOISE_ENTRIES_MAX`` (2**26 numbers, 512 MB): beyond these caps a
        ValueError names the argument instead of a MemoryError.
    rng : numpy.random.Generator, int or None

    Returns
    -------
    ndarray, shape (p, p) or (size, p, p)

    Examples
    --------
    >>> E = gram_noise(3, 1.0, rng=0)
    >>> bool(np.allclose(E, E.T))
    True
    """
    p_arr = check_int(p, "p", minimum=1, maximum=GRAM_P_MAX)
    if p_arr.ndim != 0:
        raise ValueError(f"p must be a single whole number in [1, {GRAM_P_MAX}]")
    p = int(p_arr)
    tau = _check_tau(tau)
    if size is not None:
        s = check_int(size, "size", minimum=1, maximum=NOISE_ENTRIES_MAX // (p * p))
        if s.ndim != 0:
            raise ValueError("size must be a single whole number >= 1 or None")
        size = int(s)
    rng = as_rng(rng)
    m = 1 if size is None else size
    W = rng.standard_normal((m, p, p))
    W *= tau
    E = 0.5 * (W + np.swapaxes(W, -1, -2))
    return E[0] if size is None else E


def release_gram(X, tau, rng=None):
    r"""The Gaussian mechanism on the Gram matrix: publish ``X^T X + E``.

    .. math::

        \tilde K = X^T X + E,\qquad E = E^T,\ E_{ii} \sim N(0, \tau^2),\
        E_{ij} \sim N(0, \tau^2/2)\ (i < j),

    the Gaussian mechanism on ``(K_ii, sqrt(2) K_ij)``; with
    ``tau = sigma_gram(eps, delta, p)`` it is (eps, delta)-DP for neighbours
    that differ in one row by at most 1 in Euclidean norm, rows in [-1, 1]^p
    (Dwork, Talwar, Thakurta and Zhang 2014; chapter 9).

    Parameters
    ----------
    X : array_like, shape (n, p)
        Data with entries in [-1, 1].
    tau : float
        Standard deviation of the Gram noise on the diagonal, > 0 (NOT the
        data-noise sigma of Settings A and B).
    rng : numpy.random.Generator, int or None

    Returns
    -------
    ndarray, shape (p, p)
        Symmetric; not necessarily positive semidefinite.

    Raises
    ------
    ValueError
        If X is not a finite 2-D array with entries in [-1, 1] or tau <= 0.

    Examples
    --------
    >>> K = release_gram(np.full((100, 2), 0.5), 1.0, rng=1)
    >>> K.shape
    (2, 2)
    """
    X = check_data(X)
    tau = _check_tau(tau)
    return X.T @ X + gram_noise(X.shape[1], tau, rng=rng)


# --------------------------------------------------------------------------- first-order errors


def _sym_identity(p):
    """The 4-tensor (delta_ac delta_bd + delta_ad delta_bc)."""
    eye = np.eye(p)
    return np.einsum("ac,bd->abcd", eye, eye) + np.einsum("ad,bc->abcd", eye, eye)


def gram_noise_cov(p, tau):
    r"""Covariance tensor of the rival's Gram noise: ``Cov(E_ab, E_cd)``.

    .. math::

        \operatorname{Cov}(E_{ab}, E_{cd}) = \tfrac{\tau^2}{2}
        (\delta_{ac}\delta_{bd} + \delta_{ad}\delta_{bc}).

    Parameters
    ----------
    p : int
        Columns, 1 <= p <= ``COV_P_MAX`` (32: the tensor has p**4 entries).
    tau : float
        Standard deviation on the diagonal, 0 < tau <= ``TAU_MAX`` (1e100).

    Returns
    -------
    ndarray, shape (p, p, p, p)
    """
    p_arr = check_int(p, "p", minimum=1, maximum=COV_P_MAX)
    if p_arr.ndim != 0:
        raise ValueError(f"p must be a single whole number in [1, {COV_P_MAX}]")
    tau = _check_tau(tau)
    return 0.5 * tau**2 * _sym_identity(int(p_arr))


def mask_noise_cov(K, n, sigma):
    r"""Covariance tensor of the noise in the corrected Gram matrix of a release.

    For ``M = X + C`` with ``C`` i.i.d. N(0, sigma^2) (Settings A and B alike:
    masking keeps ``M^T M``), ``E = M^T M - n sigma^2 I - K`` has

    .. math::

        \operatorname{Cov}(E_{ab}, E_{cd}) = \sigma^2 (K_{ac}\delta_{bd} + K_{ad}\delta_{bc}
        + K_{bc}\delta_{ad} + K_{bd}\delta_{ac})
        + n\sigma^4 (\delta_{ac}\delta_{bd} + \delta_{ad}\delta_{bc})

    (the cross terms ``X^T C + C^T X`` give the first part, ``C^T C`` the
    second; their covariance vanishes because odd Gaussian moments do).

    Parameters
    ----------
    K : array_like, shape (p, p)
        ``X^T X``, symmetric, finite, p <= ``COV_P_MAX`` (32).
    n : int
        Rows, 1 <= n <= 2**53.
    sigma : float
        Data-noise standard deviation, > 0.

    Domain: the ranges above, with every entry of the tensor finite (sigma^2 max|K|
    and n sigma^4 below about 1e308); outside it a ValueError names the argument.

    Returns
    -------
    ndarray, shape (p, p, p, p)
    """
    K = _check_gram(K, "K")
    if K.shape[0] > COV_P_MAX:
        raise ValueError(f"K must be at most {COV_P_MAX} x {COV_P_MAX} (the tensor has p**4 entries), "
                         f"got shape {K.shape}")
    n = _check_n(n, K.shape[0])
    sigma = _check_sigma_scalar(sigma)
    eye = np.eye(K.shape[0])
    lin = (np.einsum("ac,bd->abcd", K, eye) + np.einsum("ad,bc->abcd", K, eye)
           + np.einsum("bc,ad->abcd", K, eye) + np.einsum("bd,ac->abcd", K, eye))
    with np.errstate(over="ignore", invalid="ignore"):
        s2 = np.float64(sigma) ** 2
        out = s2 * lin + np.float64(n) * s2 * s2 * _sym_identity(K.shape[0])
    if not np.all(np.isfinite(out)):
        raise ValueError(f"sigma, n and K give a covariance beyond the float range: need sigma^2 * 4 max|K| and "
                         f"n sigma^4 below 1e308, got sigma={sigma!r}, n={n}")
    return out


def _statistics(K, response, v0):
    """OLS slopes, off-diagonal correlations and the leading direction's component off v0."""
    p = K.shape[0]
    pred = [j for j in range(p) if j != response]
    beta = np.linalg.solve(K[np.ix_(pred, pred)], K[pred, response])
    d = np.sqrt(np.diag(K))
    R = K / np.outer(d, d)
    iu = np.triu_indices(p, 1)
    w, V = np.linalg.eigh(K)
    v = V[:, -1] * np.sign(V[:, -1] @ v0)
    return beta, R[iu], v - (v @ v0) * v0


def first_order_errors(K, cov, response=-1):
    r"""First-order (delta-method) errors of three analyses of a noisy Gram matrix.

    For a smooth statistic ``f`` of ``K + E`` with ``E`` of mean zero and
    covariance tensor ``cov``, ``f(K + E) - f(K) ~ J vec(E)``; the root mean
    square error is ``sqrt(trace(J Cov J^T) / m)`` over the ``m`` components.
    The statistics (no constant column: uncentred, as the book's comparison):

    * ``"ols"``: slopes of column ``response`` on the others, RMS over the slopes;
    * ``"corr"``: the correlation matrix ``K_ij / sqrt(K_ii K_jj)``, RMS over i < j;
    * ``"angle"``: angle (radians) between the leading eigenvector and its
      noiseless value, RMS: ``sqrt(E ||P_perp dv||^2)``.

    The Jacobian is taken by central differences on the p(p+1)/2 symmetric
    directions (step ``1e-6`` times the largest entry of ``K``).

    Parameters
    ----------
    K : array_like, shape (p, p)
        Noiseless Gram matrix, positive definite, p >= 2.
    cov : array_like, shape (p, p, p, p)
        From :func:`gram_noise_cov` or :func:`mask_noise_cov`.
    response : int
        Column of the response, in [-p, p-1].

    Returns
    -------
    dict
        ``ols``, ``corr``, ``angle`` (floats).  Accurate when they are small
        (the chapter checks them against simulation).
    """
    K = _check_gram(K, "K")
    p = K.shape[0]
    if p < 2:
        raise ValueError(f"K must be at least 2 x 2 (a response and a predictor), got p={p}")
    if np.linalg.eigvalsh(K)[0] <= 0:
        raise ValueError("K must be positive definite")
    cov = as_float_array(cov, "cov")
    if cov.shape != (p, p, p, p) or not np.all(np.isfinite(cov)):
        raise ValueError(f"cov must be a finite array of shape {(p, p, p, p)}, got {cov.shape}")
    response = _check_column(response, p, "response")
    v0 = np.linalg.eigh(K)[1][:, -1]
    h = 1e-6 * np.max(np.abs(K))
    iu = np.triu_indices(p)
    cols = {"ols": [], "corr": [], "angle": []}
    for a, b in zip(*iu):
        D = np.zeros((p, p))
        D[a, b] = D[b, a] = 1.0  # direction of the symmetric pair (E_ab = E_ba)
        plus = _statistics(K + h * D, response, v0)
        minus = _statistics(K - h * D, response, v0)
        for key, hi, lo in zip(("ols", "corr", "angle"), plus, minus):
            cols[key].append((hi - lo) / (2 * h))
    # covariance of the free coordinates (E_ab, a <= b)
    C = cov[iu[0], iu[1]][:, iu[0], iu[1]]
    out = {}
    for key, c in cols.items():
        J = np.column_stack(c)
        with np.errstate(over="ignore", invalid="ignore"):
            out[key] = float(np.sqrt(np.trace(J @ C @ J.T) / (J.shape[0] if key != "angle" else 1)))
    if not all(np.isfinite(v) for v in out.values()):
        raise ValueError("K is too badly scaled for cov: the first-order errors overflow the float range "
                         f"(max|K| = {np.max(np.abs(K)):g}; scale the data)")
    return out


def error_coefficients(M, response=-1):
    r"""Constants of the first-order errors when ``K = n M`` (M: second moments per row).

    OLS slopes, correlations and eigenvectors do not change when ``K`` is
    scaled, so their Jacobian at ``K = n M`` is ``J(M)/n``.  With
    :func:`mask_noise_cov` and :func:`gram_noise_cov` this gives, for each
    statistic of :func:`first_order_errors`,

    .. math::

        \text{RMSE}_{\text{mask}}(n, \sigma) = \sqrt{(b\sigma^2 + c\sigma^4)/n},\qquad
        \text{RMSE}_{\text{Gram}}(n, \tau) = \tau\sqrt{c/2}\,/\,n,

    with :math:`b = \operatorname{tr}(J L J^T)/m` for the cross terms'
    tensor ``L`` (the ``sigma^2`` part of :func:`mask_noise_cov` at n = 1,
    sigma = 1) and :math:`c = \operatorname{tr}(J I_2 J^T)/m` for
    :math:`(I_2)_{abcd} = \delta_{ac}\delta_{bd} + \delta_{ad}\delta_{bc}`.
    Masking's error falls like :math:`n^{-1/2}` at fixed sigma, the rival's
    like :math:`n^{-1}`.

    Parameters
    ----------
    M : array_like, shape (p, p)
        Second-moment matrix ``X^T X / n``, positive definite, 2 <= p <= 32;
        otherwise a ValueError names M.
    response : int
        Column of the response for the slopes.

    Returns
    -------
    dict
        ``{"ols": (b, c), "corr": (b, c), "angle": (b, c)}``.

    Examples
    --------
    >>> M = np.array([[1 / 3, 1 / 6], [1 / 6, 1 / 6]])
    >>> b, c = error_coefficients(M)["ols"]
    >>> bool(b > 0 and c > 0)
    True
    """
    M = _check_gram(M, "M")
    p = M.shape[0]
    if p < 2 or p > COV_P_MAX:
        raise ValueError(f"M must be p x p with 2 <= p <= {COV_P_MAX}, got shape {M.shape}")
    if np.linalg.eigvalsh(M)[0] <= 0:
        raise ValueError("M must be positive definite")
    eye2 = _sym_identity(p)
    cross = mask_noise_cov(M, 1, 1.0) - eye2
    try:
        eb = first_order_errors(M, cross, response)
        ec = first_order_errors(M, eye2, response)
    except ValueError as exc:
        raise ValueError(f"M is too badly scaled: {exc}") from exc
    with np.errstate(over="ignore"):
        out = {key: (eb[key] ** 2, ec[key] ** 2) for key in eb}
    if not all(np.isfinite(v).all() for v in out.values()):
        raise ValueError(f"M is too badly scaled: its error coefficients overflow (max|M| = {np.max(np.abs(M)):g})")
    return out


def example_moments(p):
    r"""Second moments per row, ``M = E[x x^T]``, of the book's example data (p >= 2).

    * p = 2: chapter 6's example, ``z ~ U[-1, 1]``, ``y = 0.5 z + e``,
      ``e ~ U[-0.5, 0.5]``: ``M = [[1/3, 1/6], [1/6, 1/6]]``.
    * p >= 3: k = p - 1 predictors ``z_j = (u_0 + u_j)/2`` with i.i.d.
      ``u ~ U[-1, 1]`` (variance 1/6, correlation 1/2), response
      ``y = beta^T z + e`` with ``beta`` the first k entries of
      ``(0.3, -0.2, 0.2, 0.1, -0.1)`` and ``e ~ U[-0.2, 0.2]``; every entry
      lies in [-1, 1] because ``sum |beta_j| + 0.2 <= 1``.

    The response is the last column.  ``K = n M`` is the Gram matrix of a
    typical data set of n such rows.

    Parameters
    ----------
    p : int
        Columns, 2 <= p <= 6.

    Returns
    -------
    ndarray, shape (p, p)

    Examples
    --------
    >>> float(example_moments(2)[0, 1])
    0.16666666666666666
    """
    p_arr = check_int(p, "p", minimum=2)
    if p_arr.ndim != 0 or p_arr > 6:
        raise ValueError(f"p must be a single whole number in [2, 6], got {p!r}")
    p = int(p_arr)
    if p == 2:
        return np.array([[1 / 3, 1 / 6], [1 / 6, 1 / 6]])
    k = p - 1
    beta = np.array([0.3, -0.2, 0.2, 0.1, -0.1])[:k]
    Sz = np.full((k, k), 1 / 12) + np.eye(k) / 12
    M = np.empty((p, p))
    M[:k, :k] = Sz
    M[:k, k] = M[k, :k] = Sz @ beta
    M[k, k] = beta @ Sz @ beta + 0.2**2 / 3
    return M


def sigma_low_large_n(eps, delta, n, p):
    r"""Large-n form of the projection lower bound on Setting B's sigma.

    .. math::

        \sigma_{\mathrm{low}} \approx \Bigl(\frac{\tau^2}{2n}\Bigr)^{1/4},\qquad
        \tau = \sigma_A(\varepsilon,\delta)\,(2\sqrt p - 1) = \text{sigma\_gram}(\varepsilon, \delta, p).

    The projection statistic ``||Y w||^2 / sigma^2`` of
    :func:`dpmask.exact.audit.sigma_lower_bound` is a noncentral chi-square with n
    degrees of freedom whose noncentrality moves by at most
    ``(2 sqrt(p) - 1)/sigma^2`` between neighbours; for large n it is close to
    a normal of standard deviation ``sqrt(2n)``, i.e. a Gaussian mechanism with
    sensitivity ``(2 sqrt(p) - 1)/(sigma^2 sqrt(2n))``, which is (eps,
    delta)-DP exactly when this is at most ``1/sigma_A``.  A heuristic, not a
    bound: chapter 9 checks it against the exact computation (relative error
    below 1 % for n >= 1000 over Table 1).

    Parameters
    ----------
    eps, delta : array_like
        As in :func:`sigma_gram`.
    n : array_like
        Rows, 0 < n <= 2**53 (need not be whole: a grid of n is allowed).
    p : array_like
        Columns, whole number >= 1.

    The arguments broadcast like a ufunc; a shape mismatch or a value outside
    these ranges is a ValueError naming the argument.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(sigma_low_large_n(0.1, 0.01, 10**4, 2), 3)
    0.351
    """
    n = np.asarray(check_sigma(n, "n", top=COUNT_MAX))
    tau = np.asarray(sigma_gram(eps, delta, p))
    tau, n = broadcast_named(**{"eps, delta, p": tau, "n": n})
    return scalar_or_array(_sigma_low_from_tau(tau, n))


def _sigma_low_from_tau(tau, n):
    """(tau^2 / 2n)^(1/4) for a computed tau (the explorer's hot path: no second root solve)."""
    return np.sqrt(tau / np.sqrt(2 * n))


# --------------------------------------------------------------------------- the PD event of Proposition 9.5

#: Largest number of Monte Carlo draws :func:`gram_pd_probability` accepts in one call.
PD_DRAWS_MAX = 10**7


class PDProbability(NamedTuple):
    """The probability that the rival's ``K + E`` is positive definite (:func:`gram_pd_probability`)."""

    estimate: float
    se: float
    lower: float
    upper: float
    draws: int


def gram_pd_probability(K, tau, *, draws=20_000, rng=None):
    r"""Probability that the rival's noisy Gram matrix ``K + E`` is positive definite.

    Proposition 9.5 (the rival as a table, chapter 9) gives the rival's table ``Y_E`` the law of a
    masked release given its Gram matrix only on the event that ``K_E = K + E`` is positive
    definite: a masked release has full rank with probability one, while ``Y_E`` has rank below p
    whenever ``K_E`` has an eigenvalue <= 0.  This function measures that event, with ``E`` the
    noise of Definition 9.3 (``E_ii ~ N(0, tau^2)``, ``E_ij ~ N(0, tau^2/2)``, independent).

    It returns a Monte Carlo estimate with its binomial standard error, and two bounds that hold
    exactly (no sampling):

    * ``lower``: ``||E||_op <= ||E||_F`` and ``||E||_F^2 / tau^2`` is chi-square with
      ``p (p + 1)/2`` degrees of freedom (the coordinates of ``svec(E)`` are i.i.d.
      ``N(0, tau^2)``), so ``P[PD] >= P[chi2_{p(p+1)/2} < lambda_min(K)^2 / tau^2]`` when
      ``lambda_min(K) > 0`` (0 otherwise);
    * ``upper``: a positive definite matrix has a positive diagonal, and the diagonal entries are
      independent, so ``P[PD] <= prod_i Phi(K_ii / tau)``.

    Parameters
    ----------
    K : array_like, shape (p, p)
        A symmetric matrix (the data's Gram matrix ``X^T X``), 1 <= p <= ``COV_P_MAX`` (32).
    tau : float
        The rival's diagonal noise standard deviation, 0 < tau <= ``TAU_MAX``
        (:func:`sigma_gram`).
    draws : int
        Monte Carlo draws, 100 <= draws <= ``PD_DRAWS_MAX`` (10**7).
    rng : numpy.random.Generator, int or None

    Returns
    -------
    PDProbability
        ``estimate`` (fraction of draws with every eigenvalue > 0), ``se`` (its binomial standard
        error, ``sqrt(estimate (1 - estimate) / draws)``; 0 when every draw or none is PD, in which
        case the bounds say more), ``lower``, ``upper`` (the exact bounds above) and ``draws``.

    Raises
    ------
    ValueError
        On a K that is not a finite symmetric square matrix with p in range, a tau outside
        (0, TAU_MAX] or draws outside [100, PD_DRAWS_MAX].

    Examples
    --------
    >>> r = gram_pd_probability(np.eye(2) * 1e3, 1.0, rng=0)
    >>> r.estimate, r.lower > 0.999999
    (1.0, True)
    """
    from scipy import stats

    K = _check_gram(K, "K")
    p = K.shape[0]
    if p > COV_P_MAX:
        raise ValueError(f"K must be at most {COV_P_MAX} x {COV_P_MAX}, got p = {p}")
    tau = _check_tau(tau)
    d = check_int(draws, "draws", minimum=100, maximum=PD_DRAWS_MAX)
    if d.ndim != 0:
        raise ValueError("draws must be a single whole number in [100, 10**7]")
    draws = int(d)
    rng = as_rng(rng)
    chunk = max(1, 2**20 // (p * p))   # about 8 MB of noise per batch
    pd_count, left = 0, draws
    while left:
        m = min(chunk, left)
        lam = np.linalg.eigvalsh(K + gram_noise(p, tau, size=m, rng=rng))
        pd_count += int(np.count_nonzero(lam[:, 0] > 0))
        left -= m
    est = pd_count / draws
    lam_min = float(np.linalg.eigvalsh(K)[0])
    if lam_min <= 0:
        lower = 0.0
    elif lam_min > 1e100 * tau:   # the chi-square cdf is 1 to double precision (and z**2 would overflow)
        lower = 1.0
    else:
        lower = float(stats.chi2.cdf((lam_min / tau) ** 2, p * (p + 1) // 2))
    with np.errstate(over="ignore"):   # K_ii / tau = +-inf is fine: Phi is 0 or 1 there
        upper = float(np.exp(np.sum(stats.norm.logcdf(np.diag(K) / tau))))
    return PDProbability(est, float(np.sqrt(est * (1 - est) / draws)), lower, upper, draws)
