r"""Privacy of Setting B with two columns: the exact likelihood ratio, delta estimated by Monte Carlo.

The privacy loss is computed exactly (noncentral Wishart likelihood ratios); delta is an
estimate with a confidence interval, and the worst pair is found by a search, so the sigma of
:func:`masked_sigma_search` is an estimate, not a certified bound (chapter 7a says which end of
its interval is sufficient).

A Setting B release :math:`Y = A(X + C)` (A Haar on O(n), C Gaussian) has the
density, given X,

.. math::

    f_X(Y) \propto e^{-(\|Y\|^2 + \|X\|^2)/(2\sigma^2)}
    \int_{O(n)} e^{\operatorname{tr}(A^\top Y X^\top)/\sigma^2}\,dA
    = e^{-(\|Y\|^2 + \|X\|^2)/(2\sigma^2)}\;
      {}_0F_1\bigl(\tfrac n2; \tfrac14\,\Lambda T\bigr),

with :math:`T = Y^\top Y/\sigma^2` and :math:`\Lambda = K/\sigma^2`,
:math:`K = X^\top X` (Herz 1955; James 1964; Muirhead 1982, Chapter 7).
So T is sufficient, it follows the noncentral Wishart law
:math:`W_p(n, I, \Lambda)`, and the privacy loss between data sets with Gram
matrices K and K' is

.. math::

    \mathcal L(T) = -\tfrac12\operatorname{tr}(\Lambda - \Lambda')
      + \log {}_0F_1(\tfrac n2; \tfrac14\Lambda T)
      - \log {}_0F_1(\tfrac n2; \tfrac14\Lambda' T).

This module evaluates it for p = 2:

* :func:`log_hyp0f1_2x2`: :math:`\log {}_0F_1(b; Z)` for a 2 x 2 argument from
  a one-dimensional integral of two scalar Bessel factors (derived in the
  docstring), on a Laplace-scaled Gauss-Legendre rule, in log space.
* :func:`masked_pair_log_delta`: the hockey-stick divergence
  :math:`\delta = E_K[(1 - e^{\varepsilon - \mathcal L})_+]` of one ordered pair
  of Gram matrices, by importance-sampled Monte Carlo with a confidence interval.
* :func:`masked_sigma_search`: the sigma at which the worst pair found by a
  search over neighbours reaches a target delta.

What is proved and what is only computed is said in each docstring and in
chapter 7a of the book.

References
----------
C. S. Herz, "Bessel functions of matrix argument", Ann. Math. 61 (1955).
A. T. James, "Distributions of matrix variates and latent roots derived from
normal samples", Ann. Math. Statist. 35 (1964).
R. J. Muirhead, "Aspects of Multivariate Statistical Theory", Wiley 1982,
Chapter 7 (zonal polynomials, 0F1 of a matrix argument) and Chapter 10
(the noncentral Wishart law).
P. Koev and A. Edelman, "The efficient evaluation of the hypergeometric
function of a matrix argument", Math. Comp. 75 (2006).
"""

from __future__ import annotations

import numpy as np
from scipy import special
from scipy.optimize import brentq

from ..paper import gq
from . import audit, one_column
from .._validate import (as_float_array, as_rng, broadcast_named, check_delta, check_eps, check_int, check_scalar,
                        check_sigma, scalar_or_array)
from .one_column import _check_p1, _check_solver_delta, _pair_sigma

__all__ = [
    "log_hyp0f1_2x2",
    "wishart_log_ratio",
    "sample_wishart_2x2",
    "gram_pair",
    "masked_pair_log_delta",
    "masked_sigma_search",
    "projection_pair",
    "orthogonal_pair",
    "orthogonal_family_sigma",
]

#: Gauss-Legendre rule on [0, 1] used on the Laplace window of the angle integral.
_N_NODES = 32
_GL_X, _GL_W = np.polynomial.legendre.leggauss(_N_NODES)
_GL_X = 0.5 * (_GL_X + 1.0)
_GL_W = 0.5 * _GL_W
_LOG_GL_W = np.log(_GL_W)
#: Laplace window: the integrand has fallen by about e^{-W^2/2} = e^{-85} at its end.
_WINDOW = 13.0
#: Largest Bessel argument 2 sqrt(z) (the range on which dpmask.paper.gq is tested).
_H_MAX = 1.0e7
_Q_MAX = 1.0e7
#: Largest number of draws of one call of sample_wishart_2x2.
_SIZE_MAX = 2**23


#: Largest entry of the noncentrality K / sigma^2 that the privacy functions accept.
_LAMBDA_MAX = 1.0e12


def _single(value, name):
    """A validated 0-d array as a float; an array argument is refused by name."""
    return float(check_scalar(value, name))


def _check_lambda(K, sigma, name):
    """K / sigma^2, refused (naming sigma) when an entry is beyond _LAMBDA_MAX."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        O = K / (sigma * sigma)
    if not np.all(np.isfinite(O)) or np.abs(O).max() > _LAMBDA_MAX:
        raise ValueError(f"sigma must be large enough that {name} / sigma^2 has entries <= 1e12 "
                         f"(the noncentrality range), got sigma={sigma!r}, max|{name}|={np.abs(K).max():g}")
    return O


# --------------------------------------------------------------------------- 0F1 of a 2 x 2 matrix


def _log_G(q, t):
    q, t = np.broadcast_arrays(np.asarray(q, float), np.asarray(t, float))
    shape = q.shape
    return gq._log_g_array(q.ravel().copy(), t.ravel().copy()).reshape(shape)


def _dlog_G(q, t):
    q, t = np.broadcast_arrays(np.asarray(q, float), np.asarray(t, float))
    shape = q.shape
    return gq._dlog_g_array(q.ravel().copy(), t.ravel().copy()).reshape(shape)


def _log_beta(a, b):
    return special.gammaln(a) + special.gammaln(b) - special.gammaln(a + b)


def _log0f1_2x2(q, h1, h2):
    """log 0F1(b; diag(h1^2, h2^2)/4), q = 2b - 2 >= 1; validated, broadcast arrays."""
    q, h1, h2 = np.broadcast_arrays(np.asarray(q, float), np.asarray(h1, float), np.asarray(h2, float))
    # Laplace scale: -phi''(0) = q + h1 G'/G(h1) + h2 G'/G(h2) at the peak psi = 0
    curv = q + h1 * _dlog_G(q, h1) + h2 * _dlog_G(q, h2)
    upper = np.minimum(0.5 * np.pi, _WINDOW / np.sqrt(curv))
    psi = upper[..., None] * _GL_X                      # nodes on [0, upper]
    c = np.cos(psi)
    qq = q[..., None]
    phi = qq * np.log(c) + _log_G(qq, h1[..., None] * c) + _log_G(qq, h2[..., None] * c)
    log_int = special.logsumexp(phi + _LOG_GL_W, axis=-1) + np.log(upper)
    # theta in (0, pi) is twice the half range; normalise so that Z = 0 gives 1
    norm = 2.0 * _log_G(q, 0.0) + _log_beta(0.5, 0.5 * (q + 1.0))
    return np.log(2.0) + log_int - norm


def log_hyp0f1_2x2(b, z1, z2):
    r"""Natural log of :math:`{}_0F_1(b; Z)` for a 2 x 2 matrix Z with eigenvalues z1, z2.

    The hypergeometric function of a matrix argument (Herz 1955; James 1964;
    Muirhead 1982, Definition 7.3.1) is a symmetric function of the
    eigenvalues of Z; here Z is 2 x 2 and positive semi-definite.

    Parameters
    ----------
    b : array_like
        Parameter, :math:`3/2 \le b \le 5\cdot 10^6` (for the masked release
        b = n/2 with n >= 3 rows).
    z1, z2 : array_like
        Eigenvalues of Z, :math:`0 \le z_i \le 2.5\cdot 10^{13}` (any order).

    Returns
    -------
    float or ndarray
        :math:`\log {}_0F_1(b; \operatorname{diag}(z_1, z_2))`.

    Notes
    -----
    With :math:`q = 2b - 2`, :math:`h_i = 2\sqrt{z_i}` and
    :math:`G_q(t) = \int_{-1}^1 e^{tu}(1-u^2)^{(q-2)/2}du` (Lemma 5.4's
    function, :mod:`dpmask.paper.gq`),

    .. math::

        {}_0F_1(b; Z) = \frac{\int_0^\pi \sin^{q}\theta\,
            G_q(h_1\sin\theta)\,G_q(h_2\sin\theta)\,d\theta}
            {G_q(0)^2\,B(\tfrac12, \tfrac{q+1}2)}.

    *Derivation* (for b = n/2; both sides are analytic in b, and the check
    against the zonal series is made at non-integer 2b too).
    :math:`{}_0F_1(\tfrac n2; H^\top H/4) = \int_{O(n)} e^{\operatorname{tr}(HA)}dA`
    (James 1964), and for H with singular values :math:`h_1, h_2` this is
    :math:`E\,e^{h_1 a_{11} + h_2 a_{22}}` over a Haar matrix A. The first
    column :math:`a_1` is uniform on the sphere; given it, :math:`a_{22}` is
    :math:`\sqrt{1 - a_{21}^2}` times one coordinate of a uniform point of the
    sphere of :math:`a_1^\perp` (dimension n - 1), whose moment generating
    function is :math:`G_{n-2}(t)/G_{n-2}(0)`. The first two coordinates of
    :math:`a_1` have density proportional to
    :math:`(1 - u_1^2 - u_2^2)^{(n-4)/2}`; integrating :math:`u_1` out at
    fixed :math:`u_2 = \cos\theta` gives the factor
    :math:`\sin^{n-3}\theta\,G_{n-2}(h_1\sin\theta)`, and
    :math:`du_2 = \sin\theta\,d\theta`.

    *Numerics.* Every factor grows with :math:`\sin\theta`, so the integrand
    peaks at :math:`\theta = \pi/2`; Laplace's method gives its width
    :math:`w = (q + h_1 G_q'/G_q(h_1) + h_2 G_q'/G_q(h_2))^{-1/2}`. The
    integral is taken on :math:`|\theta - \pi/2| \le \min(\pi/2, 13 w)` by a
    32-point Gauss-Legendre rule in log space (log-sum-exp), with
    :math:`\log G_q` from :func:`dpmask.paper.gq.log_G` (power series, Debye
    expansion or Amos' algorithm). No term overflows at any size of z; the
    rule is uniform in z because the window follows the Laplace width.
    When 2b is a whole number (the masked release: b = n/2) the integrand is
    analytic and the error is at rounding level (about 1e-14 relative); for
    other b the factor :math:`\sin^{2b-2}\theta` is not smooth at the ends of
    the range and the error rises to about 1e-11 (absolute) where the window is
    the whole range (small z).
    Tested against the zonal-polynomial series (mpmath, small z), a 40-digit
    mpmath quadrature of the same integral (z up to 1e12), and the rank-one
    case :math:`z_2 = 0`, where it equals the scalar
    :math:`{}_0F_1(b; z_1) = G_{2b-1}(2\sqrt{z_1})/G_{2b-1}(0)`.

    References
    ----------
    Herz (1955); James (1964); Muirhead (1982), Chapter 7; Koev and Edelman
    (2006) for the zonal series used as a check.

    Examples
    --------
    >>> round(log_hyp0f1_2x2(2.5, 1.0, 0.0), 10)  # scalar 0F1(2.5; 1)
    0.3795140161
    """
    b = as_float_array(b, "b")
    if np.any(~np.isfinite(b) | (b < 1.5) | (b > 0.5 * _Q_MAX + 1.0)):
        raise ValueError(f"b must lie in [1.5, 5e6] (b = n/2 with n >= 3 rows), got {b!r}")
    zs = []
    for name, z in (("z1", z1), ("z2", z2)):
        z = as_float_array(z, name)
        if np.any(~np.isfinite(z) | (z < 0) | (z > 0.25 * _H_MAX**2)):
            raise ValueError(f"{name} must lie in [0, 2.5e13], got {z!r}")
        zs.append(z)
    b, z1, z2 = broadcast_named(b=b, z1=zs[0], z2=zs[1])
    return scalar_or_array(_log0f1_2x2(2.0 * b - 2.0, 2.0 * np.sqrt(z1), 2.0 * np.sqrt(z2)))


# --------------------------------------------------------------------------- the Wishart likelihood ratio


def _eig_product(O, T):
    """Eigenvalues (z1 >= z2 >= 0) of O @ T for PSD 2 x 2 O, T (broadcast over T)."""
    tr = (O[..., 0, 0] * T[..., 0, 0] + 2.0 * O[..., 0, 1] * T[..., 0, 1] + O[..., 1, 1] * T[..., 1, 1])
    det = np.maximum((O[..., 0, 0] * O[..., 1, 1] - O[..., 0, 1] ** 2), 0.0) * np.maximum(
        T[..., 0, 0] * T[..., 1, 1] - T[..., 0, 1] ** 2, 0.0)
    tr = np.maximum(tr, 0.0)
    z1 = 0.5 * (tr + np.sqrt(np.maximum(tr * tr - 4.0 * det, 0.0)))
    with np.errstate(invalid="ignore", divide="ignore"):
        z2 = np.where(z1 > 0, det / z1, 0.0)
    return z1, np.clip(z2, 0.0, z1)


def _log0f1_ot(n, O, T):
    z1, z2 = _eig_product(O, T)
    return _log0f1_2x2(float(n) - 2.0, np.sqrt(z1), np.sqrt(z2))  # h = 2 sqrt(z/4)


def _log_ratio(n, O, Op, T):
    return (-0.5 * (np.trace(O) - np.trace(Op)) + _log0f1_ot(n, O, T) - _log0f1_ot(n, Op, T))


def _check_gram(K, name):
    K = as_float_array(K, name)
    if K.shape != (2, 2) or not np.all(np.isfinite(K)):
        raise ValueError(f"{name} must be a finite 2 x 2 matrix, got shape {K.shape}")
    if abs(K[0, 1] - K[1, 0]) > 1e-12 * max(1.0, np.abs(K).max()):
        raise ValueError(f"{name} must be symmetric")
    K = 0.5 * (K + K.T)
    if np.linalg.eigvalsh(K)[0] < -1e-12 * max(1.0, np.abs(K).max()):
        raise ValueError(f"{name} must be positive semi-definite (a Gram matrix X^T X)")
    return K


def wishart_log_ratio(T, n, K, K_prime, sigma):
    r"""Privacy loss :math:`\mathcal L(T)` of Setting B with p = 2 at statistics T.

    .. math::

        \mathcal L = -\tfrac12\operatorname{tr}(\Lambda - \Lambda')
        + \log {}_0F_1(\tfrac n2; \tfrac14\Lambda T) - \log {}_0F_1(\tfrac n2; \tfrac14\Lambda' T),
        \quad \Lambda = K/\sigma^2,\ \Lambda' = K'/\sigma^2.

    Parameters
    ----------
    T : array_like, shape (..., 2, 2)
        Values of :math:`Y^\top Y/\sigma^2` (positive semi-definite).
    n : int
        Rows, 3 <= n <= 1e7.
    K, K_prime : array_like, shape (2, 2)
        Gram matrices :math:`X^\top X`, :math:`X'^\top X'`.
    sigma : float
        0 < sigma <= 1e100, with the entries of K / sigma^2 and K' / sigma^2 at most 1e12
        and the eigenvalues of :math:`K T/\sigma^2`, :math:`K' T/\sigma^2` at most
        1e14 (where :func:`log_hyp0f1_2x2` is tested); outside this domain a
        ValueError names the arguments.

    Returns
    -------
    ndarray, shape (...)
        :math:`\log f_X(Y) - \log f_{X'}(Y)`.
    """
    n = int(_single(check_int(n, "n", minimum=3, maximum=_Q_MAX), "n"))
    sigma = _single(check_sigma(sigma, top=1e100), "sigma")
    K, Kp = _check_gram(K, "K"), _check_gram(K_prime, "K_prime")
    T = as_float_array(T, "T")
    if T.shape[-2:] != (2, 2) or not np.all(np.isfinite(T)):
        raise ValueError("T must be finite with shape (..., 2, 2)")
    O, Op = _check_lambda(K, sigma, "K"), _check_lambda(Kp, sigma, "K_prime")
    with np.errstate(over="ignore", invalid="ignore"):
        z = np.concatenate([np.ravel(_eig_product(O, T)[0]), np.ravel(_eig_product(Op, T)[0])])
    if not np.all(np.isfinite(z)) or np.any(np.sqrt(z) > _H_MAX):
        raise ValueError("T, K, K_prime and sigma must keep the eigenvalues of K T / sigma^2 and K_prime T / sigma^2 "
                         "within [0, 1e14] (the tested range of the 0F1 evaluation)")
    return _log_ratio(n, O, Op, T)


# --------------------------------------------------------------------------- sampling


def _sqrt_psd(O):
    w, V = np.linalg.eigh(O)
    return (V * np.sqrt(np.maximum(w, 0.0))) @ V.T


def _base_draws(n, m, rng):
    """Standard draws from which T is built: Z (m, 2, 2) and the central part W (m, 2, 2)."""
    Z = rng.standard_normal((m, 2, 2))
    k = n - 2  # rows that carry no mean
    if k >= 2:  # Bartlett decomposition of W_2(k, I)
        c1 = np.sqrt(rng.chisquare(k, m))
        c2 = np.sqrt(rng.chisquare(k - 1, m))
        z = rng.standard_normal(m)
        W = np.empty((m, 2, 2))
        W[:, 0, 0] = c1 * c1
        W[:, 0, 1] = W[:, 1, 0] = c1 * z
        W[:, 1, 1] = z * z + c2 * c2
    else:
        g = rng.standard_normal((m, k, 2))
        W = np.einsum("mki,mkj->mij", g, g)
    return Z, W


def _build_T(O, Z, W):
    """T = (R + Z)^T (R + Z) + W with R^T R = O: a draw of W_2(n, I, O)."""
    M = _sqrt_psd(O) + Z
    return np.einsum("mki,mkj->mij", M, M) + W


def sample_wishart_2x2(n, Lambda, size, rng=None):
    r"""Draws of the noncentral Wishart law :math:`W_2(n, I, \Lambda)`.

    :math:`T = (M + Z)^\top(M + Z)` with :math:`Z` an n x 2 standard normal
    matrix and :math:`M^\top M = \Lambda`. Only the first two rows of M are
    non-zero, so the other n - 2 rows form a central :math:`W_2(n-2, I)`,
    drawn by Bartlett's decomposition; the cost is O(1) per draw.

    Parameters
    ----------
    n : int
        Degrees of freedom (rows), 3 <= n <= 2**53.
    Lambda : array_like, shape (2, 2)
        Noncentrality, positive semi-definite, finite.
    size : int
        Number of draws, 1 <= size <= 2**23 (a cap on memory: about 1 GB of
        draws); beyond it a ValueError names size.
    rng : numpy.random.Generator, int or None

    Returns
    -------
    ndarray, shape (size, 2, 2)
    """
    n = int(_single(check_int(n, "n", minimum=3), "n"))
    size = int(_single(check_int(size, "size", minimum=1, maximum=_SIZE_MAX), "size"))
    O = _check_gram(Lambda, "Lambda")
    Z, W = _base_draws(n, size, as_rng(rng))
    return _build_T(O, Z, W)


# --------------------------------------------------------------------------- neighbours


def gram_pair(x, x_prime, shared=None):
    r"""Gram matrices :math:`(K, K')` of two neighbouring data sets with p = 2.

    The data sets share n - 1 rows, whose Gram matrix is ``shared``
    (:math:`S = \sum_{j \ne i} x_j x_j^\top`), and differ in row i:
    :math:`K = S + x x^\top`, :math:`K' = S + x' x'^\top`.

    Parameters
    ----------
    x, x_prime : array_like, shape (2,)
        The differing rows, entries in [-1, 1], :math:`\|x - x'\| \le 1`
        (Definition 2.1).
    shared : array_like, shape (2, 2), optional
        Gram matrix S of the shared rows (default 0), symmetric positive
        semi-definite. Only S = sum of n - 1 outer products of rows in the
        square are reachable (for instance ``k * outer(v, v)`` with v in the
        square and k <= n - 1 a whole number); the function checks S only for
        symmetry and semi-definiteness, and delta is defined for any such S.

    Returns
    -------
    tuple of ndarray
        ``(K, K_prime)``.
    """
    x = as_float_array(x, "x")
    xp = as_float_array(x_prime, "x_prime")
    for name, v in (("x", x), ("x_prime", xp)):
        if v.shape != (2,) or not np.all(np.isfinite(v)) or np.any(np.abs(v) > 1 + 1e-12):
            raise ValueError(f"{name} must be a length-2 row with entries in [-1, 1], got {v!r}")
    if np.linalg.norm(x - xp) > 1 + 1e-12:
        raise ValueError("x and x_prime must be neighbours: ||x - x_prime|| <= 1")
    S = np.zeros((2, 2)) if shared is None else _check_gram(shared, "shared")
    return S + np.outer(x, x), S + np.outer(xp, xp)


def projection_pair():
    r"""The pair of Proposition 7.4 of the book (``prop-7-4``) for p = 2: rank one along :math:`w = (1,1)/\sqrt2`.

    Returns ``(K, K')`` for :math:`x = (1, 1)`, :math:`x' = (1 - 1/\sqrt2)(1, 1)`,
    no shared rows: :math:`K = 2ww^\top`, :math:`K' = (\sqrt2 - 1)^2 ww^\top`.
    """
    x = np.array([1.0, 1.0])
    return gram_pair(x, (1.0 - 1.0 / np.sqrt(2.0)) * x)


def orthogonal_pair(n, s=1.0):
    r"""The projection pair plus shared rows orthogonal to it (the worst pair found for p = 2).

    :math:`x = (1, 1)`, :math:`x' = (1 - 1/\sqrt2)(1, 1)` and
    :math:`S = s(n-1)\,vv^\top` with :math:`v = (1, -1)`: for s = 1 every
    shared row is (1, -1), which lies in the cube. Then
    :math:`K = 2ww^\top + 2s(n-1)\,w_\perp w_\perp^\top` and
    :math:`K' = (\sqrt2 - 1)^2 ww^\top + 2s(n-1)\,w_\perp w_\perp^\top`.

    Parameters
    ----------
    n : int
        Rows, 3 <= n <= 2**53.
    s : float
        Fraction of the n - 1 shared rows equal to (1, -1), in [0, 1].

    Returns
    -------
    tuple of ndarray
        ``(K, K_prime)``.
    """
    n = int(_single(check_int(n, "n", minimum=3), "n"))
    s = _single(as_float_array(s, "s"), "s")
    if not 0.0 <= s <= 1.0:
        raise ValueError(f"s must lie in [0, 1], got {s!r}")
    v = np.array([1.0, -1.0])
    x = np.array([1.0, 1.0])
    return gram_pair(x, (1.0 - 1.0 / np.sqrt(2.0)) * x, s * (n - 1) * np.outer(v, v))


def orthogonal_family_sigma(eps, delta, n):
    r"""Exact sigmas bracketing the orthogonal family of pairs, p = 2.

    For pairs whose differing rows lie along :math:`w = (1,1)/\sqrt2` and whose
    shared rows are orthogonal to w (:func:`orthogonal_pair`), the book proves
    (chapter 7a, Proposition 7.6)

    .. math::

        H_{e^\varepsilon}\bigl(\chi^2_n(a/\sigma^2)\,\|\,\chi^2_n(b/\sigma^2)\bigr)
        \le \delta_{K,K'}(\varepsilon)
        \le H_{e^\varepsilon}\bigl(\chi^2_{n-1}(a/\sigma^2)\,\|\,\chi^2_{n-1}(b/\sigma^2)\bigr),

    a = 2, b = (sqrt 2 - 1)^2. This returns the sigmas at which the two ends
    equal delta.

    Parameters
    ----------
    eps : array_like
        1e-4 <= eps <= 100 (the domain of the noncentral chi-square curves of
        :mod:`dpmask.exact`).
    delta : array_like
        1e-250 <= delta <= 1 - 1e-12 (the domain of those curves' sigma solvers).
    n : array_like
        Rows, whole number, 3 <= n <= 1e6.

    Outside these ranges a ValueError names the argument.

    Returns
    -------
    tuple of float or ndarray
        ``(sigma_n, sigma_n_minus_1)``: the first is the projection lower bound
        of Proposition 7.4 at its worst pair, the second the sigma needed by
        every pair of the family.
    """
    eps, n = _check_p1(eps, n)
    n = check_int(n, "n", minimum=3)
    delta = _check_solver_delta(delta)
    eps, delta, n = broadcast_named(eps=eps, delta=delta, n=n)
    a, b = 2.0, (np.sqrt(2.0) - 1.0) ** 2
    out = [_pair_sigma(eps, np.log(delta), df, np.full(eps.shape, a), np.full(eps.shape, b)) for df in (n, n - 1.0)]
    return scalar_or_array(out[0]), scalar_or_array(out[1])


# --------------------------------------------------------------------------- delta of one pair


def _pair_estimate(eps, n, O, Op, Z, W, Zt, Wt, pilot, tilt=None):
    """Importance-sampled estimate of E_O[(1 - e^{eps - L})_+] from given base draws.

    Proposal: the defensive mixture (P_O + P_O~)/2 with O~ = O + t (O - O')
    (made PSD), half of the draws from each component; weights p/q_mix <= 2.
    t is set from the pilot draws so that L has mean about eps + its sd under P_O~
    (normal approximation). Returns (estimate, standard error).
    """
    if tilt is None:
        L_pilot = _log_ratio(n, O, Op, _build_T(O, *pilot))
        m = max(float(np.mean(L_pilot)), 1e-12)
        t = float(np.clip((eps + np.sqrt(2.0 * m) - m) / (2.0 * m), 0.0, 50.0))
    else:
        t = float(tilt)
    w, V = np.linalg.eigh(O + t * (O - Op))
    Ot = (V * np.maximum(w, 0.0)) @ V.T
    parts = []
    for T in (_build_T(O, Z, W), _build_T(Ot, Zt, Wt)):
        L = _log_ratio(n, O, Op, T)
        g = np.zeros(L.shape)
        pos = L > eps
        if np.any(pos):
            Tp = T[pos]
            # log p~/p at T, then the mixture weight p / ((p + p~)/2)
            lr = -0.5 * (np.trace(Ot) - np.trace(O)) + _log0f1_ot(n, Ot, Tp) - _log0f1_ot(n, O, Tp)
            weight = 2.0 / (1.0 + np.exp(np.minimum(lr, 700.0)))
            g[pos] = -np.expm1(eps - L[pos]) * weight
        parts.append(g)
    est = 0.5 * (parts[0].mean() + parts[1].mean())
    se = 0.5 * np.sqrt(parts[0].var(ddof=1) / parts[0].size + parts[1].var(ddof=1) / parts[1].size)
    return est, se, t, parts


class _Draws:
    """Base draws shared by every evaluation (common random numbers)."""

    def __init__(self, n, n_samples, rng):
        rng = as_rng(rng)
        half = n_samples // 2
        self.main = _base_draws(n, half, rng)
        self.tilt = _base_draws(n, half, rng)
        self.pilot = _base_draws(n, min(2000, max(200, half // 4)), rng)


def _delta_from(eps, sigma, n, K, Kp, draws, z, tilt=None):
    O, Op = K / sigma**2, Kp / sigma**2
    est, se, t, parts = _pair_estimate(eps, n, O, Op, *draws.main, *draws.tilt, draws.pilot, tilt)
    lo, hi = max(est - z * se, 0.0), est + z * se
    with np.errstate(divide="ignore"):
        return {"delta": est, "ci_low": lo, "ci_high": hi, "se": se,
                "log_delta": float(np.log(est)) if est > 0 else -np.inf,
                "log_ci_low": float(np.log(lo)) if lo > 0 else -np.inf,
                "log_ci_high": float(np.log(hi)) if hi > 0 else -np.inf,
                "tilt": t, "_parts": parts}


def masked_pair_log_delta(eps, sigma, n, K, K_prime, n_samples=40000, rng=0, confidence=0.95):
    r"""log delta(eps) of Setting B, p = 2, for one ordered pair of Gram matrices.

    .. math::

        \delta(\varepsilon) = \sup_{\mathcal S} P_K[T \in \mathcal S]
          - e^\varepsilon P_{K'}[T \in \mathcal S]
        = E_K\bigl[(1 - e^{\varepsilon - \mathcal L(T)})_+\bigr],
        \qquad T \sim W_2(n, I, K/\sigma^2),

    with :math:`\mathcal L` of :func:`wishart_log_ratio`. Because T is
    sufficient, this is exactly the hockey-stick divergence of the release
    itself between any two data sets with Gram matrices K and K'. It is not
    symmetric: swap the arguments for the other order.

    Parameters
    ----------
    eps : float
        1e-4 <= eps <= 100.
    sigma : float
        0 < sigma <= 1e100, with every entry of K / sigma^2 and K' / sigma^2 at most
        1e12 (the noncentrality range).
    n : int
        Rows, 3 <= n <= 1e7 (p = 2 columns).
    K, K_prime : array_like, shape (2, 2)
        Gram matrices :math:`X^\top X` and :math:`X'^\top X'` (symmetric,
        positive semi-definite; see :func:`gram_pair` for neighbours).
    n_samples : int
        Monte Carlo draws (half from each mixture component), 200 <= n_samples <= 2**23.
    rng : numpy.random.Generator or int
        Seed; the same seed gives the same draws (common random numbers), so
        the estimate is a smooth function of sigma, K and K'.
    confidence : float
        Level of the normal-approximation interval, in (0, 1).

    Outside these ranges a ValueError names the argument.

    Returns
    -------
    dict
        ``log_delta``, ``log_ci_low``, ``log_ci_high`` (logs of the estimate
        and of the interval's ends; ``-inf`` for 0), ``delta``, ``ci_low``,
        ``ci_high``, ``se`` and ``tilt`` (the proposal's shift t).

    Notes
    -----
    *Estimator.* Importance sampling from the defensive mixture
    :math:`\tfrac12 W_2(n, I, \Lambda) + \tfrac12 W_2(n, I, \tilde\Lambda)`,
    :math:`\tilde\Lambda = \Lambda + t(\Lambda - \Lambda')` (negative eigenvalues
    set to 0), with t chosen from a pilot sample so that the loss has mean
    about :math:`\varepsilon` plus one standard deviation under the shifted
    law. The weights :math:`p/q \le 2` are bounded, so the variance is at
    most twice that of plain Monte Carlo whatever t is, and the estimator is
    unbiased for every t. The interval is the normal one from the two strata's
    sample variances.

    *Which end to use.* A claim that the release IS (eps, delta)-DP for this
    pair at sigma needs the upper end ``ci_high`` below delta; a claim that it
    is NOT (and hence a lower bound on the sigma it needs) uses the lower end
    ``ci_low`` above delta.

    *Error of L.* :func:`log_hyp0f1_2x2` is accurate to about 1e-12 relative;
    the Monte Carlo error dominates by many orders.
    """
    eps = _single(check_eps(eps, lower=1e-4, top=100.0), "eps")
    sigma = _single(check_sigma(sigma, top=1e100), "sigma")
    n = int(_single(check_int(n, "n", minimum=3, maximum=_Q_MAX), "n"))
    n_samples = int(_single(check_int(n_samples, "n_samples", minimum=200, maximum=_SIZE_MAX), "n_samples"))
    confidence = _single(as_float_array(confidence, "confidence"), "confidence")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    K, Kp = _check_gram(K, "K"), _check_gram(K_prime, "K_prime")
    _check_lambda(K, sigma, "K"), _check_lambda(Kp, sigma, "K_prime")
    z = float(special.ndtri(0.5 + 0.5 * confidence))
    out = _delta_from(eps, sigma, n, K, Kp, _Draws(n, n_samples, rng), z)
    del out["_parts"]
    return out


# --------------------------------------------------------------------------- worst pair and sigma


def _candidate_pairs(n, xs=None, n_angles=16, shared_scales=(0.01, 0.1, 0.3, 1.0)):
    """Ordered neighbouring pairs (K, K') for p = 2, up to the symmetries of the square.

    * No shared rows: x on a grid of the triangle 0 <= x2 <= x1 <= 1 (every row
      of the square is mapped there by sign changes and a swap of the columns,
      orthogonal maps that leave delta unchanged) and x' = x + u for unit u at
      ``n_angles`` angles (the boundary |x - x'| = 1), kept inside the square.
    * Shared rows at the projection pair: S = s (n - 1) v v^T for
      v in {(1, 1), (1, -1), (1, 0)} and s in ``shared_scales``; s (n - 1) v v^T
      is the Gram matrix of s (n - 1) rows equal to v (for whole numbers; the
      search treats s as continuous).

    Both orders of every pair are listed. Returns a list of (K, K', label).
    """
    if xs is None:
        xs = [(1.0, 1.0), (1.0, 0.5), (1.0, 0.0), (0.75, 0.75), (0.75, 0.25), (0.5, 0.5)]
    out = []
    for x in xs:
        x = np.asarray(x, float)
        for ang in np.linspace(0.0, 2 * np.pi, n_angles, endpoint=False):
            xp = x + np.array([np.cos(ang), np.sin(ang)])
            if np.any(np.abs(xp) > 1.0 + 1e-12):
                continue
            K, Kp = gram_pair(x, np.clip(xp, -1.0, 1.0))
            label = f"x=({x[0]:.3g}, {x[1]:.3g}), x'=({xp[0]:.3g}, {xp[1]:.3g}), S=0"
            out.append((K, Kp, label))
            out.append((Kp, K, label + " (reversed)"))
    w = np.array([1.0, 1.0])
    for v, vname in ((w, "(1,1)"), (np.array([1.0, -1.0]), "(1,-1)"), (np.array([1.0, 0.0]), "(1,0)")):
        for s in shared_scales:
            S = s * (n - 1) * np.outer(v, v)
            K, Kp = gram_pair(w, (1.0 - 1.0 / np.sqrt(2.0)) * w, S)
            label = f"projection pair, S={s:g}(n-1)vv^T, v={vname}"
            out.append((K, Kp, label))
            out.append((Kp, K, label + " (reversed)"))
    return out


def masked_sigma_search(eps, delta, n, p=2, pairs=None, n_samples=10000, rng=0, confidence=0.95,
                        screen_samples=3000, top=1):
    r"""Noise at which the worst neighbouring pair found reaches delta, Setting B, p = 2.

    Each ordered pair (K, K') has its own root :math:`\sigma_{K,K'}` of
    :math:`\delta_{K,K'}(\varepsilon;\sigma) = \delta`. The pairs are screened
    at the projection bound :math:`\sigma_{\mathrm{low}}` by their paired
    difference from the projection pair; for the best ``top`` pairs the root
    is solved with the control-variate estimate
    :math:`\delta_{\mathrm{proj}}(\sigma) + [\hat\delta_{K,K'}(\sigma) - \hat\delta_{\mathrm{proj}}(\sigma)]`
    (the projection pair's delta is exact, :func:`dpmask.exact.ncx2_hockey_stick_log_delta`;
    the bracket is the difference of two Monte Carlo estimates on the same
    draws), whose error is that of the difference only.
    Setting B needs at least :math:`\max \sigma_{K,K'}` over all neighbours;
    this function returns the largest over the pairs searched, which is a
    lower bound on the needed sigma up to Monte Carlo error, and equals it if
    the search contains the worst pair (not proved).

    Cost: about half a minute per configuration with the defaults (one core).
    Resolution: for the pair with every shared row (1, -1) and 10 000 draws,
    the relative half-width of ``sigma_ci`` was about 3e-4 to 5e-4 at n = 100 (it varies
    between seeds by up to a factor 2: the paired difference is heavy tailed) and
    5e-5 to 1e-4 at n = 10 000 over Table 1's (eps, delta); the screen
    (3000 draws, one comparison per pair) is coarser, and its first place is
    only meaningful when the paired difference is several standard errors.

    Parameters
    ----------
    eps : float
        1e-4 <= eps <= 100 (the domain of :func:`masked_pair_log_delta`).
    delta : float
        0 < delta < 1.
    n : int
        Rows, 3 <= n <= 1e7.
    p : int
        Columns; only p = 2 is implemented.
    pairs : list of (K, K') or (K, K', label), or None
        Ordered pairs to search; default: the projection pair of
        Proposition 7.4 and about a hundred :func:`gram_pair` pairs (changed
        rows on the edge :math:`\|x - x'\| = 1` from a grid of the triangle
        :math:`0 \le x_2 \le x_1 \le 1`, and the projection change with shared
        rows of four sizes along (1, 1), (1, -1) and (1, 0)), both orders.
    n_samples : int
        Draws for the final roots, 200 <= n_samples <= 2**23.
    rng : int
        Seed (common random numbers throughout).
    confidence : float
        Level of the interval on each delta, 0 < confidence < 1; the returned interval on sigma
        comes from solving with the interval's ends.
    screen_samples : int
        Draws for the screen (200 to 2**23): every pair's delta at the projection sigma,
        ranked by its paired difference from the projection pair's (same
        base draws), which is far more precise than either estimate.
    top : int
        How many of the screened pairs get a root of their own, top >= 1.

    Returns
    -------
    dict
        ``sigma`` (best found), ``sigma_ci`` (from the ends of the delta
        interval: below ``sigma_ci[0]`` the pair is non-private at the stated
        confidence), ``K``, ``K_prime`` (the pair), ``sigma_low`` (the
        projection bound, :func:`dpmask.exact.audit.sigma_lower_bound`),
        ``screen`` (one dict per pair at sigma_low, largest ``diff`` first: the
        estimate, its se and interval, ``diff`` and ``diff_se``, the paired
        difference from the projection pair on the same draws, ``label``),
        ``n_pairs``, ``is_projection_pair`` (whether the best pair is the
        projection pair) and ``delta_projection_exact`` (its exact delta at
        sigma_low, which is the target delta up to root-finding error).
    """
    eps = _single(check_eps(eps, lower=1e-4, top=100.0), "eps")
    delta = _single(check_delta(delta), "delta")
    n = int(_single(check_int(n, "n", minimum=3, maximum=_Q_MAX), "n"))
    if int(_single(check_int(p, "p", minimum=1), "p")) != 2:
        raise ValueError(f"p must be 2 (the only case implemented), got {p!r}")
    n_samples = int(_single(check_int(n_samples, "n_samples", minimum=200, maximum=_SIZE_MAX), "n_samples"))
    screen_samples = int(_single(check_int(screen_samples, "screen_samples", minimum=200, maximum=_SIZE_MAX),
                                 "screen_samples"))
    confidence = _single(as_float_array(confidence, "confidence"), "confidence")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    as_rng(rng)  # a named error for a bad seed before the search starts (the draws take the seed itself)
    if pairs is not None and (isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__len__") or len(pairs) == 0):
        raise ValueError(f"pairs must be None or a non-empty list of (K, K_prime[, label]), got {pairs!r}")
    top = int(_single(check_int(top, "top", minimum=1), "top"))
    sigma_low = float(audit.sigma_lower_bound(eps, delta, n, 2, "projection"))
    K0, K0p = projection_pair()
    if pairs is None:
        pairs = [(K0, K0p, "projection pair")] + _candidate_pairs(n)
    if any(not isinstance(c, (tuple, list)) or len(c) not in (2, 3) for c in pairs):
        raise ValueError("pairs must hold tuples (K, K_prime) or (K, K_prime, label)")
    pairs = [(_check_gram(c[0], "pairs"), _check_gram(c[1], "pairs"), c[2] if len(c) > 2 else str(i))
             for i, c in enumerate(pairs)]
    z = float(special.ndtri(0.5 + 0.5 * confidence))
    screen = _screen_pairs(eps, sigma_low, n, pairs, _Draws(n, screen_samples, rng), z)
    draws = _Draws(n, n_samples, rng)
    best = None
    for entry in screen[:top]:
        K, Kp, label = pairs[entry["index"]]
        roots = _pair_sigma_roots(eps, delta, n, K, Kp, draws, z, sigma_low)
        if best is None or (np.isfinite(roots[0]) and roots[0] > best["sigma"]):
            best = {"sigma": roots[0], "sigma_ci": (roots[1], roots[2]), "K": K, "K_prime": Kp, "label": label}
    rank_one = np.allclose(best["K"], K0) and np.allclose(best["K_prime"], K0p)
    best.update(sigma_low=sigma_low, screen=screen, n_pairs=len(pairs), is_projection_pair=bool(rank_one),
                delta_projection_exact=_projection_pair_delta(eps, n, sigma_low))
    return best


def _paired_difference(parts, ref_parts):
    """Mean and standard error of the paired difference of two estimates on the same draws.

    ``parts`` and ``ref_parts`` are the two strata's per-draw terms of :func:`_delta_from` for a pair
    and for the projection pair; the difference of the means is far more precise than either.
    """
    d = [a - b for a, b in zip(parts, ref_parts)]
    diff = 0.5 * (d[0].mean() + d[1].mean())
    se = 0.5 * np.sqrt(d[0].var(ddof=1) / d[0].size + d[1].var(ddof=1) / d[1].size)
    return diff, se


def _screen_pairs(eps, sigma_low, n, pairs, screen_draws, z):
    """Every pair's delta at the projection sigma, largest paired difference from the projection pair first."""
    K0, K0p = projection_pair()
    ref_all = _delta_from(eps, sigma_low, n, K0, K0p, screen_draws, z)
    ref, tilt = ref_all["_parts"], ref_all["tilt"]
    screen = []
    for i, (K, Kp, label) in enumerate(pairs):
        # the projection pair's proposal shift for every pair keeps the draws coupled
        r = _delta_from(eps, sigma_low, n, K, Kp, screen_draws, z, tilt=tilt)
        # paired difference with the projection pair on the same base draws
        diff, diff_se = _paired_difference(r["_parts"], ref)
        screen.append({"delta": r["delta"], "se": r["se"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                       "diff": float(diff), "diff_se": float(diff_se), "index": i, "label": label,
                       "is_projection_pair": bool(np.allclose(K, K0) and np.allclose(Kp, K0p))})
    screen.sort(key=lambda d: -d["diff"])
    return screen


def _projection_pair_delta(eps, n, sigma):
    """Exact delta(eps) of the projection pair at sigma (:func:`dpmask.exact.ncx2_hockey_stick_log_delta`)."""
    return float(np.exp(one_column.ncx2_hockey_stick_log_delta(
        eps, n, 2.0 / sigma**2, (np.sqrt(2.0) - 1.0) ** 2 / sigma**2)))


def _pair_sigma_roots(eps, delta, n, K, Kp, draws, z, sigma_low):
    """``[sigma, sigma_ci_low, sigma_ci_high]``: the roots in sigma of the pair's delta = *delta*.

    The pair's delta is the control-variate estimate: the projection pair's exact delta plus the
    paired Monte Carlo difference (same draws).  The roots of the estimate and of its ends
    ``estimate -/+ z se`` are sought within a factor e^0.2 of ``sigma_low``; a root that is not
    bracketed there is NaN.
    """
    K0, K0p = projection_pair()
    memo = {}  # the three searches share their brackets' ends: estimate each sigma once

    def estimate(sig):
        if sig not in memo:
            # control variate: exact projection-pair delta plus the paired difference
            ref_sig = _delta_from(eps, sig, n, K0, K0p, draws, z)
            parts = _delta_from(eps, sig, n, K, Kp, draws, z, tilt=ref_sig["tilt"])["_parts"]
            diff, se = _paired_difference(parts, ref_sig["_parts"])
            memo[sig] = (_projection_pair_delta(eps, n, sig) + diff, se)
        return memo[sig]

    roots = []
    for shift in (0.0, -z, z):
        def f(ls, shift=shift):
            est, se = estimate(float(np.exp(ls)))
            return np.log(max(est + shift * se, 1e-300)) - np.log(delta)
        a, b = np.log(sigma_low) - 0.2, np.log(sigma_low) + 0.2
        if f(a) < 0 or f(b) > 0:
            roots.append(np.nan)
            continue
        roots.append(float(np.exp(brentq(f, a, b, xtol=1e-7))))
    return roots
