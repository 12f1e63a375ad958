r"""Masking's rivals from the literature: the rival as a table, AdaSSP and the Wishart mechanism.

Chapter 9 compares masking with the Gaussian mechanism on the Gram matrix
(:mod:`dpmask.gram`).  This module adds what a reader who knows the
field would put beside it, each calibrated to the book's neighbours (rows
``x = (z, y)`` in [-1, 1]^p, one row replaced by another at Euclidean distance
at most 1, Definition 2.1):

* :func:`gram_table` -- the rival's noisy Gram matrix ``K̂`` turned into an
  n x p table with the law of a masked release given its Gram matrix
  (Lemma 9.1) where ``K̂`` is positive definite (Proposition 9.5; elsewhere its
  rank is below p): post-processing, so no privacy is spent;
* :func:`adassp` -- sufficient statistics perturbation with an adaptive ridge
  (Wang 2018), the usual baseline for private least squares;
* :func:`wishart_mechanism` -- the Wishart mechanism (Jiang, Xie and Zhang 2016), a positive
  definite noisy Gram matrix, calibrated here to (eps, delta) (:func:`wishart_delta`);
* the Johnson-Lindenstrauss projection lives in :mod:`dpmask.jl`.

The functions are exported from :mod:`dpmask.rivals` as well (the names the
design gives them); this module keeps them out of that file so that each stays
small.

References
----------
Y.-X. Wang, "Revisiting differentially private linear regression: optimal and
adaptive prediction & estimation in unbounded domain", UAI 2018.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ._validate import as_float_array, as_rng, check_delta, check_eps, check_int, check_matrix, check_scalar
from .exact import analytic_gaussian_sigma
from .inference import _check_gram
from ._safe import nudge_up
from .mechanisms import FRAME_MAX_ENTRIES, check_data, stiefel_frame

_ULP = np.finfo(float).eps

__all__ = [
    "psd_projection",
    "gram_table",
    "cross_sensitivity",
    "adassp_noise",
    "AdasspResult",
    "adassp",
    "adassp_from_gram",
    "adassp_joint_sum",
    "wishart_scale",
    "wishart_delta",
    "wishart_mechanism",
    "WISHART_C_DOMAIN",
]

#: Largest p of the functions here (p x p eigen-decompositions; the book uses p <= 6).
P_MAX = 64


def _one_eps_delta(eps, delta):
    eps = float(check_scalar(check_eps(eps, lower=1e-6, top=10.0), "eps"))
    delta = float(check_scalar(check_delta(delta, upper=0.5, hypothesis=" (these calibrations split it)"),
                               "delta"))
    return eps, delta


def _whole(value, name, minimum, maximum):
    arr = check_int(value, name, minimum=minimum, maximum=maximum)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a single whole number in [{minimum}, {maximum}]")
    return int(arr)


# --------------------------------------------------------------------------- the rival as a table


def psd_projection(K):
    r"""Nearest positive semidefinite matrix in Frobenius norm (negative eigenvalues set to 0).

    .. math::

        K_+ = V \max(\Lambda, 0) V^\top \quad\text{for}\quad K = V \Lambda V^\top .

    Parameters
    ----------
    K : array_like, shape (p, p) or (..., p, p)
        Symmetric and finite.

    Returns
    -------
    ndarray, the shape of K

    Examples
    --------
    >>> psd_projection(np.diag([2.0, -1.0]))
    array([[2., 0.],
           [0., 0.]])
    """
    K = _check_gram(K, "K", batch=True)
    scale = float(np.max(np.abs(K))) if K.size else 0.0
    scale = scale or 1.0                    # eigh of entries near 1e308 overflows: scale first
    w, V = np.linalg.eigh(K / scale)
    out = (V * np.clip(w, 0.0, None)[..., None, :]) @ np.swapaxes(V, -1, -2)
    out = 0.5 * out + 0.5 * np.swapaxes(out, -1, -2)
    with np.errstate(over="ignore"):
        out = out * scale
    if not np.all(np.isfinite(out)):
        raise ValueError("K is too large: its PSD projection has entries beyond the float range")
    return out


def gram_table(K_tilde, n, rng=None):
    r"""The rival as a table: an n x p table whose Gram matrix is the PSD projection of ``K̂``.

    .. math::

        T = U\,K̂_+^{1/2},\qquad K̂_+ = \text{PSD projection of } K̂,\quad
        U \text{ a uniformly distributed } n \times p \text{ frame},

    with the symmetric (eigen) square root, so that ``T^T T = K̂_+``.  By
    Lemma 9.1 a masked release given its Gram matrix ``S`` is ``U R_S``
    (``R_S`` the Cholesky factor); any factor ``F`` with ``F^T F = S`` gives
    the same law, because ``F = O R_S`` for an orthogonal ``O`` and ``U O``
    is again a uniform frame.  So ``T`` has, given its Gram matrix, the law of
    a masked release on the event that ``K̂`` is positive definite (a masked
    release's Gram matrix is positive definite almost surely; where ``K̂`` is
    not, ``T`` has rank below p, Proposition 9.5, and
    :func:`dpmask.gram.gram_pd_probability` gives the event's probability), and
    it is a post-processing of ``K̂``: it is exactly as
    private as ``K̂`` (the Gaussian mechanism on ``X^T X``,
    :func:`dpmask.gram.release_gram`).  The square root also exists when the
    projection is singular, where a Cholesky factor does not.

    Parameters
    ----------
    K_tilde : array_like, shape (p, p)
        The rival's noisy Gram matrix ``K̂`` (symmetric, finite), 1 <= p <= 64.
    n : int
        Rows of the table, p <= n and n p <= 2**26.
    rng : numpy.random.Generator, int or None
        Randomness of the frame (fresh entropy when None).

    Returns
    -------
    ndarray, shape (n, p)

    Examples
    --------
    >>> K_hat = np.array([[4.0, 1.0], [1.0, -1.0]])       # not PSD: the projection is singular
    >>> T = gram_table(K_hat, 50, rng=0)
    >>> T.shape, bool(np.allclose(T.T @ T, psd_projection(K_hat)))
    ((50, 2), True)
    """
    K = _check_gram(K_tilde, "K_tilde")
    p = K.shape[0]
    if p > P_MAX:
        raise ValueError(f"K_tilde must be at most {P_MAX} x {P_MAX}, got shape {K.shape}")
    n = _whole(n, "n", p, FRAME_MAX_ENTRIES // p)
    scale = float(np.max(np.abs(K))) or 1.0       # eigh of entries near 1e308 overflows: scale first
    w, V = np.linalg.eigh(K / scale)
    root = (V * (np.sqrt(np.clip(w, 0.0, None)) * np.sqrt(scale))) @ V.T   # symmetric square root of K_+
    root = 0.5 * root + 0.5 * root.T
    return stiefel_frame(n, p, as_rng(rng)) @ root


# --------------------------------------------------------------------------- AdaSSP


def cross_sensitivity(k):
    r"""L2 sensitivity of ``Z^T y`` under the book's neighbours (k predictors, p = k + 1).

    .. math::

        \Delta_{zy}(k) = \sup\{\lVert z y - z' y'\rVert :
        (z, y), (z', y') \in [-1, 1]^{k+1},\ \lVert (z, y) - (z', y')\rVert \le 1\}
        = \sqrt k,

    attained at ``z = z' = (1, ..., 1)``, ``y = 1``, ``y' = 0``.

    Proof.  With midpoints ``m`` and differences ``d`` (of z and of y),
    ``z y - z' y' = m_z d_y + d_z m_y``.  The cube asks ``|m_i| + |d_i|/2 <= 1``
    coordinate by coordinate; taking absolute values and then each ``m`` at
    its top ``1 - |d|/2`` does not decrease the norm, which leaves the entries
    ``t + d_i (1 - t)``, ``t = |d_y|``.  Their squared norm is
    ``k t^2 + 2 t (1 - t) S + (1 - t)^2 D`` with ``S = sum d_i <= sqrt(k D)`` and
    ``D = ||d_z||^2 <= 1 - t^2``, increasing in both, so at most
    ``f(t) = k t^2 + 2 t (1 - t) sqrt(k (1 - t^2)) + (1 - t)^2 (1 - t^2)``.  Then
    ``f(t) - k = (1 - t) [-k (1 + t) + 2 t sqrt(k) s + (1 - t) s^2]`` with
    ``s = sqrt(1 - t^2)``.  For k >= 2, ``2 t sqrt(k) s <= k t^2 + s^2`` makes the
    bracket at most ``-k (1 + t - t^2) + s^2 (2 - t) <= -3t + t^3 <= 0``.  For
    k = 1 the bracket is ``2 t s - t (1 + t)(2 - t)``, and
    ``2 s <= 2 <= (1 + t)(2 - t)`` on [0, 1].  So ``f <= k``, with equality at
    ``t = 1``.  The tests confirm it by a search over the cube.

    Parameters
    ----------
    k : int
        Number of predictors, 1 <= k <= 64.

    Returns
    -------
    float

    Examples
    --------
    >>> cross_sensitivity(4)
    2.0
    """
    k = _whole(k, "k", 1, P_MAX)
    return float(np.sqrt(k))


def adassp_noise(eps, delta, p, *, composition="basic"):
    r"""The three noise levels of AdaSSP at (eps, delta) under the book's neighbours.

    The budget is split in three equal shares, ``(eps/3, delta/3)`` each, and
    each share is spent by a Gaussian mechanism with the tight analytic
    Gaussian noise (:func:`dpmask.exact.analytic_gaussian_sigma`, Balle and
    Wang 2018) times its sensitivity (k = p - 1 predictors):

    * ``tau_lambda`` for ``lambda_min(Z^T Z)``: Weyl's inequality bounds its
      change by the operator norm of ``z z^T - z' z'^T``, at most its Frobenius
      norm, at most ``2 sqrt(k) - 1`` (Lemma 9.2 in k columns); the collinear
      pair attains it (a rank-one change), so the sensitivity is ``2 sqrt(k) - 1``;
    * ``tau_gram`` for ``Z^T Z``, noise of the book's shape (variance
      ``tau^2`` on the diagonal, ``tau^2/2`` off it: the Gaussian mechanism on
      ``(K_ii, sqrt(2) K_ij)``): sensitivity ``2 sqrt(k) - 1`` (Lemma 9.2);
    * ``tau_cross`` for ``Z^T y``, i.i.d. noise: sensitivity
      :func:`cross_sensitivity` ``(k) = sqrt(k)``.

    Basic composition of the three gives (eps, delta)-DP (``composition="basic"``,
    the split of Wang 2018).  ``composition="gaussian"`` calibrates the three
    together instead: with noise ``s * sensitivity`` on each, the release scaled
    block by block is one Gaussian mechanism whose squared L2 sensitivity is the
    supremum ``S_k`` of the summed squared normalised changes over neighbouring
    pairs, divided by ``s^2`` (:func:`adassp_joint_sum`: 3 for k = 1, about 2.53
    for k = 2 and 2.30 for k = 4, never the 3 of three worst cases at once), so
    ``s = sqrt(S_k) * analytic_gaussian_sigma(eps, delta)`` is (eps, delta)-DP
    (the exact composition of Gaussian mechanisms, Dong, Roth and Su 2022).  It
    needs 0.5 to 0.6 times the noise of the split at Table 1's levels.

    Parameters
    ----------
    eps : float
        1e-6 <= eps <= 10.
    delta : float
        0 < delta < 0.5.
    p : int
        Columns (predictors and the response), 2 <= p <= 64.
    composition : {"basic", "gaussian"}
        How the three releases share the budget (above).

    Returns
    -------
    dict
        ``tau_lambda``, ``tau_gram``, ``tau_cross`` and the sensitivities
        ``sens_lambda``, ``sens_gram``, ``sens_cross``.

    Examples
    --------
    >>> t = adassp_noise(0.1, 0.01, 2)
    >>> round(t["sens_gram"], 6), round(t["sens_cross"], 6)
    (1.0, 1.0)
    """
    eps, delta = _one_eps_delta(eps, delta)
    p = _whole(p, "p", 2, P_MAX)
    if composition not in ("basic", "gaussian"):
        raise ValueError(f"composition must be 'basic' or 'gaussian', got {composition!r}")
    return dict(_adassp_noise(eps, delta, p, composition))


@lru_cache(maxsize=1024)
def _adassp_noise(eps, delta, p, composition):
    """adassp_noise on validated Python scalars, as a tuple of pairs (cached)."""
    k = p - 1
    if composition == "basic":
        s = float(analytic_gaussian_sigma(eps / 3.0, delta / 3.0))
    else:
        s = float(np.sqrt(adassp_joint_sum(k)) * analytic_gaussian_sigma(eps, delta))
    sens_gram = float(2.0 * np.sqrt(k) - 1.0)
    sens_cross = cross_sensitivity(k)
    return tuple({"tau_lambda": s * sens_gram, "tau_gram": s * sens_gram, "tau_cross": s * sens_cross,
                  "sens_lambda": sens_gram, "sens_gram": sens_gram, "sens_cross": sens_cross,
                  "sigma_share": s}.items())


class AdasspResult(NamedTuple):
    """Result of :func:`adassp` (a named tuple).

    * ``coef`` -- the private coefficients, shape ``(k,)`` (or ``(size, k)``);
    * ``ridge`` -- the ridge ``lambda`` that was added;
    * ``lambda_min_noisy`` -- the released lower estimate of ``lambda_min(Z^T Z)``;
    * ``gram`` -- the released ``Z^T Z`` (noisy), ``cross`` -- the released ``Z^T y``;
    * ``noise`` -- the dict of :func:`adassp_noise`.
    """

    coef: np.ndarray
    ridge: np.ndarray
    lambda_min_noisy: np.ndarray
    gram: np.ndarray
    cross: np.ndarray
    noise: dict


def adassp_from_gram(K, eps, delta, rng=None, *, size=None, rho=0.05, composition="basic"):
    r"""AdaSSP computed from the data's Gram matrix ``K = X^T X``, ``X = [Z, y]`` (response last).

    The same mechanism as :func:`adassp` (its law depends on the data only
    through ``K``); with ``size`` it draws that many independent releases at
    once (for simulations).

    Parameters
    ----------
    K : array_like, shape (p, p)
        ``X^T X`` of data with rows in [-1, 1]^p, the response in the last column.
    eps, delta, rho, composition
        As in :func:`adassp`.
    rng : numpy.random.Generator, int or None
    size : int or None
        Number of independent releases (None: one), at most 10**6.

    Returns
    -------
    AdasspResult
    """
    K = _check_gram(K, "K")
    p = K.shape[0]
    noise = adassp_noise(eps, delta, p, composition=composition)
    eps, delta = _one_eps_delta(eps, delta)
    rho = float(check_scalar(check_eps(rho, "rho", upper=1.0), "rho"))
    m = 1 if size is None else _whole(size, "size", 1, 10**6)
    rng = as_rng(rng)
    k = p - 1
    Kzz, Kzy = K[:k, :k], K[:k, k]
    lam_min = float(np.linalg.eigvalsh(Kzz)[0])
    tl, tg, tc = noise["tau_lambda"], noise["tau_gram"], noise["tau_cross"]
    # Wang (2018), Algorithm 2: a high-probability lower estimate of lambda_min ...
    lam_noisy = np.maximum(lam_min + tl * rng.standard_normal(m) - tl * np.sqrt(np.log(6.0 / delta)), 0.0)
    # ... and the ridge that covers the Gram noise's operator norm with probability 1 - rho
    ridge = np.maximum(0.0, tg * np.sqrt(k * np.log(2.0 * k**2 / rho)) - lam_noisy)
    W = rng.standard_normal((m, k, k)) * tg
    gram = Kzz + 0.5 * (W + np.swapaxes(W, -1, -2))
    cross = Kzy + tc * rng.standard_normal((m, k))
    H = gram + ridge[:, None, None] * np.eye(k)
    coef = np.linalg.solve(H, cross[..., None])[..., 0]
    if size is None:
        return AdasspResult(coef[0], float(ridge[0]), float(lam_noisy[0]), gram[0], cross[0], noise)
    return AdasspResult(coef, ridge, lam_noisy, gram, cross, noise)


def adassp(Z, y, eps, delta, rng=None, *, rho=0.05, composition="basic"):
    r"""AdaSSP: private least squares by sufficient statistics perturbation with an adaptive ridge.

    Wang (2018), Algorithm 2 ("AdaSSP"), calibrated to the book's neighbours:

    1. release ``λ̃ = max(λ_min(Z^T Z) + τ_λ N - τ_λ sqrt(log(6/δ)), 0)``, a lower
       estimate of the smallest eigenvalue that holds with probability about
       ``1 - δ/6``;
    2. set the ridge ``λ = max(0, τ_gram sqrt(k log(2k^2/ρ)) - λ̃)``: the noise's
       operator norm is below the first term with probability ``1 - ρ``,
       so ``Z^T Z + noise + λ I`` stays positive definite;
    3. release ``Z^T Z + E`` (``E`` of the book's shape, :func:`dpmask.gram.gram_noise`,
       standard deviation ``τ_gram`` on the diagonal) and ``Z^T y + τ_cross N(0, I)``;
    4. return ``(Z^T Z + E + λ I)^{-1} (Z^T y + noise)``.

    Privacy.  Steps 1 and 3 are three Gaussian mechanisms; each spends
    ``(ε/3, δ/3)`` with the tight analytic Gaussian noise times its L2
    sensitivity under the book's relation (:func:`adassp_noise` derives the
    sensitivities ``2 sqrt(k) - 1``, ``2 sqrt(k) - 1`` and
    :func:`cross_sensitivity`); steps 2 and 4 are post-processing; basic
    composition gives (ε, δ)-DP.  Wang's paper writes each noise as
    ``sqrt(log(6/δ))/(ε/3)`` times a norm bound, a classical-Gaussian
    calibration for rows in a ball; the analytic Gaussian here is smaller and
    exact for each share.  Wang symmetrises i.i.d. noise on the Gram matrix
    with equal variances on and off the diagonal; this module uses the
    shape whose L2 sensitivity is the Frobenius sensitivity (Lemma 9.2), the
    same as the rival's.

    Parameters
    ----------
    Z : array_like, shape (n, k)
        Predictors, entries in [-1, 1].
    y : array_like, shape (n,)
        Response, entries in [-1, 1].
    eps : float
        1e-6 <= eps <= 10.
    delta : float
        0 < delta < 0.5.
    rng : numpy.random.Generator, int or None
    rho : float
        Failure probability of the ridge's cover, 0 < rho < 1 (Wang's 0.05).
    composition : {"basic", "gaussian"}
        ``"basic"`` (default): ``(ε/3, δ/3)`` for each release, as Wang;
        ``"gaussian"``: the three calibrated together (:func:`adassp_noise`).

    Returns
    -------
    AdasspResult

    References
    ----------
    Y.-X. Wang, UAI 2018, Algorithm 2.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.uniform(-1, 1, (20000, 1))
    >>> y = 0.5 * z[:, 0] + rng.uniform(-0.5, 0.5, 20000)
    >>> fit = adassp(z, y, 1.0, 1e-5, rng=1)
    >>> bool(abs(fit.coef[0] - 0.5) < 0.05)
    True
    """
    Z = check_matrix(Z, "Z")
    y = as_float_array(y, "y")
    if y.ndim != 1 or y.shape[0] != Z.shape[0]:
        raise ValueError(f"y must be a 1-D array with one entry per row of Z ({Z.shape[0]}), got shape {y.shape}")
    X = check_data(np.column_stack([Z, y]), name="[Z, y]")
    return adassp_from_gram(X.T @ X, eps, delta, rng, rho=rho, composition=composition)


# --------------------------------------------------------------------------- AdaSSP joint: the sensitivity sum

#: Grid points of the certified maximisation in :func:`adassp_joint_sum` (over an angle in [0, pi/2]).
_JOINT_GRID = 2**18


def _joint_sum_curve(theta, k):
    """g_k(theta): the summed squared normalised changes of the collinear pair at angle theta."""
    t, s = np.sin(theta), np.cos(theta)          # t = |y - y'|, s = ||z - z'||, t^2 + s^2 = 1
    fro = 2.0 * np.sqrt(k) * s - s**2            # ||z z^T - z' z'^T||_F bound (Lemma 9.2's proof, k columns)
    cross = k * t**2 + 2.0 * t * (1.0 - t) * np.sqrt(k) * s + (1.0 - t) ** 2 * s**2
    return 2.0 * fro**2 / (2.0 * np.sqrt(k) - 1.0) ** 2 + cross / k


def adassp_joint_sum(k):
    r"""Supremum of AdaSSP's summed squared normalised sensitivities, a certified upper bound.

    For neighbouring rows ``(z, y)``, ``(z', y')`` (Definition 2.1 in k + 1 columns), with
    ``D = z z^T - z' z'^T`` and ``c = z y - z' y'``,

    .. math::

        S_k = \sup \Bigl(\frac{\lVert D\rVert_{op}^2 + \lVert D\rVert_F^2}{\Delta_F(k)^2}
        + \frac{\lVert c\rVert^2}{k}\Bigr)
        = \max_{0 \le \theta \le \pi/2} g_k(\theta),\qquad
        g_k = \frac{2 (2\sqrt k\,s - s^2)^2}{\Delta_F(k)^2}
        + \frac{k t^2 + 2 t (1 - t) \sqrt k\, s + (1 - t)^2 s^2}{k},

    with ``t = sin(theta) = |y - y'|`` and ``s = cos(theta)``.  Upper bound: with
    ``s = ||z - z'||``, ``||D||_op <= ||D||_F <= 2 sqrt(k) s - s^2`` (the proof of Lemma 9.2),
    ``||c||^2`` is at most the cross term of ``g_k`` (the proof of :func:`cross_sensitivity`,
    given ``t`` and ``||z - z'||^2``), both increase in ``s`` and ``s^2 <= 1 - t^2``.
    Attained: ``z = (1, ..., 1)``, ``z' = (1 - s/sqrt(k)) z``, ``y = 1``, ``y' = 1 - t`` (a collinear,
    rank-one change, where the operator and Frobenius norms agree) gives exactly ``g_k(theta)``;
    ``lambda_min`` moves by ``||D||_op`` when the data's bottom eigenvector is ``z``.  So the
    supremum is the maximum of a smooth function of one angle.  The maximum is computed on a grid
    of 2**18 angles and raised by ``L h / 2`` (``h`` the grid step, ``L`` a bound on ``|g_k'|``:
    ``16 k / Delta_F(k)^2 + (k + 2.5 sqrt(k) + 4)/k``), so the value returned is never below the
    supremum and exceeds it by at most that margin (below 1e-4).  k = 1 gives 3 (the three worst
    cases at once, ``theta = 0``); k = 2 about 2.533, k = 4 about 2.297.

    Parameters
    ----------
    k : int
        Predictors, 1 <= k <= 64.

    Returns
    -------
    float

    Examples
    --------
    >>> round(adassp_joint_sum(4), 3)
    2.297
    """
    k = _whole(k, "k", 1, P_MAX)
    return _adassp_joint_sum(k)


@lru_cache(maxsize=128)
def _adassp_joint_sum(k):
    theta = np.linspace(0.0, np.pi / 2, _JOINT_GRID + 1)
    h = theta[1] - theta[0]
    lip = 16.0 * k / (2.0 * np.sqrt(k) - 1.0) ** 2 + (k + 2.5 * np.sqrt(k) + 4.0) / k
    return float(np.max(_joint_sum_curve(theta, k)) + 0.5 * lip * h)


# --------------------------------------------------------------------------- the Wishart mechanism


#: The scales :func:`wishart_delta` accepts (and :func:`wishart_scale` returns): 1e-300 <= c <= 1e300.
WISHART_C_DOMAIN = (1e-300, 1e300)


def _wishart_delta(c, p):
    """delta of the Wishart mechanism at scale c, p columns (unvalidated; see :func:`wishart_delta`).

    ``1 - exp(-Delta/(2c))``, rounded up: the exponent ``a = Delta/(2c)`` carries at most about
    3 ulp of rounding (the square root, the subtraction, the division) and is raised by 4 ulp
    before use; ``-expm1`` (within 1 ulp, relative condition number at most 1 in ``a``) is raised
    by 4 ulp after.  So the value returned is never below the exact one.
    """
    a = (2.0 * np.sqrt(p) - 1.0) / (2.0 * c) * (1.0 + 4.0 * _ULP)
    return np.minimum(-np.expm1(-a) * (1.0 + 4.0 * _ULP), 1.0)


def wishart_scale(eps, delta, p, *, calibration="delta"):
    r"""Scale ``c`` of the Wishart mechanism's noise ``W ~ Wishart_p(p + 1, c I)`` (Gram units).

    Jiang, Xie and Zhang (2016) release ``A + W`` for the covariance ``A = X^T X / n`` of rows of
    norm at most 1, with ``W ~ Wishart_p(p + 1, C)``, ``C = 3/(2 n eps) I``, and state
    (eps, 0)-DP; in Gram units (``X^T X + n W``) the scale is ``3/(2 eps)``.  Their argument is the
    density ratio: with p + 1 degrees of freedom the density of ``W`` is proportional to
    ``exp(-tr(W)/(2c))`` on the positive definite cone, so where both neighbours' releases have
    a density the ratio is ``exp((tr K' - tr K)/(2c))``, at most ``e^{Delta/(2c)}`` with
    ``Delta = sup |‖x‖^2 - ‖x'‖^2|`` (1 for rows in the unit ball, ``2 sqrt(p) - 1`` for the
    book's neighbours).  The supports differ, though (:func:`wishart_delta`), so the release is
    not (eps, 0)-DP for any scale.

    * ``calibration="paper"``: ``c = 3 Delta/(2 eps)``, the paper's constant with its trace
      bound 1 replaced by the book's ``Delta = 2 sqrt(p) - 1``; it has the delta of
      :func:`wishart_delta`, ``1 - exp(-eps/3)``, whatever the target (``delta`` is ignored);
    * ``calibration="delta"`` (default): the smallest ``c`` with :func:`wishart_delta` at most
      ``delta``, ``c = Delta / (2 (-log(1 - delta)))``, raised by a few ulp so that the exact
      delta at the returned ``c`` never exceeds the target (nudged like the package's other
      calibrations, :func:`dpmask._safe.nudge_up`).  It does not depend on ``eps``: the
      mechanism's delta is the same at every eps (:func:`wishart_delta`).

    Parameters
    ----------
    eps : float
        1e-6 <= eps <= 10.
    delta : float
        0 < delta < 0.5, and large enough that the scale stays within ``WISHART_C_DOMAIN``
        (``delta`` >= about ``(2 sqrt(p) - 1)/2e300``).
    p : int
        Columns, 1 <= p <= 64.
    calibration : {"delta", "paper"}

    Returns
    -------
    float
        A scale that :func:`wishart_delta` accepts.

    Examples
    --------
    >>> round(wishart_scale(0.1, 0.01, 1), 3)    # 1 / (2 * -log(0.99))
    49.75
    """
    eps, delta = _one_eps_delta(eps, delta)
    p = _whole(p, "p", 1, P_MAX)
    if calibration not in ("delta", "paper"):
        raise ValueError(f"calibration must be 'delta' or 'paper', got {calibration!r}")
    sens = 2.0 * np.sqrt(p) - 1.0
    if calibration == "paper":
        return float(3.0 * sens / (2.0 * eps))
    c = sens / (2.0 * -np.log1p(-delta))
    if not c <= WISHART_C_DOMAIN[1] / 2.0:
        raise ValueError(f"delta must be large enough that the Wishart scale stays below "
                         f"{WISHART_C_DOMAIN[1] / 2:g} (about delta >= {sens / WISHART_C_DOMAIN[1]:.1e} "
                         f"for p = {p}), got {delta!r}")
    # c above carries at most ~4 ulp of rounding; 64 ulp above it is a rigorous safe end
    c = nudge_up(lambda cs: _wishart_delta(cs, p) - delta, np.array(c), c * (1.0 + 64.0 * _ULP))
    return float(c)


def wishart_delta(eps, c, p):
    r"""delta(eps) of the Wishart mechanism ``K + W``, ``W ~ Wishart_p(p + 1, c I)``, book's neighbours.

    For a pair ``K``, ``K' = K + D`` (``D = x' x'^T - x x^T``) the release from ``K`` has the
    density ``f(S - K)`` on ``S - K > 0`` and the one from ``K'`` on ``S - K' > 0``, with the ratio
    ``exp(tr(D)/(2c))`` where both are positive.  Hence, exactly,

    .. math::

        \delta_{K\|K'}(\varepsilon) = P_1 + (1 - P_1)\,\bigl(1 - e^{\varepsilon + \operatorname{tr} D/(2c)}\bigr)_+,
        \qquad P_1 = P(W - D \not\succ 0).

    ``D`` has rank at most 2, one eigenvalue ``lambda_+ >= 0`` (unit vector ``u``) and one
    ``lambda_- <= 0``.  Since ``W - D >= W - lambda_+ u u^T`` and ``1/(u^T W^{-1} u) ~ c chi^2_2``
    (p + 1 degrees of freedom), ``1 - P_1 >= exp(-lambda_+/(2c))``.  Where the second term is
    positive, ``tr D = lambda_+ + lambda_-`` gives

    .. math::

        \delta_{K\|K'}(\varepsilon) \le 1 - e^{-\lambda_+/(2c)} e^{\varepsilon + \operatorname{tr} D/(2c)}
        = 1 - e^{\varepsilon - |\lambda_-|/(2c)} \le 1 - e^{-|\lambda_-|/(2c)},

    and where it is zero, ``delta = P_1 <= 1 - exp(-lambda_+/(2c))``.  Both eigenvalues are at
    most ``||D||_F <= Delta = 2 sqrt(p) - 1`` in size (Lemma 9.2), and the collinear worst pair of
    Lemma 9.2 (``D = Delta u u^T``) attains ``P_1 = 1 - exp(-Delta/(2c))`` with the second term
    zero.  So, for every eps >= 0,

    .. math:: \delta(\varepsilon) = 1 - e^{-\Delta/(2c)}\quad\text{(exact, attained)}:

    the mass the release from ``K`` puts where the neighbour's release cannot be.  The mechanism
    is even (0, delta)-DP; eps buys nothing.  At the paper's scale ``c = 3 Delta/(2 eps)`` it is
    (eps, 1 - e^{-eps/3})-DP, not (eps, 0)-DP.  (Until issue 32 this function added
    ``1 - exp(eps - Delta/(2c))`` for ``eps < Delta/(2c)``, a valid but loose bound that the
    argument above shows unnecessary.)

    The value is rounded up (never below the exact delta).

    Parameters
    ----------
    eps : float
        1e-6 <= eps <= 10 (checked; delta does not depend on it).
    c : float
        The scale of ``W``, 1e-300 <= c <= 1e300 (``WISHART_C_DOMAIN``).
    p : int
        Columns, 1 <= p <= 64.

    Returns
    -------
    float

    Examples
    --------
    >>> round(wishart_delta(0.1, 3 / (2 * 0.1), 1), 5)      # the paper's scale at p = 1
    0.03278
    """
    check_scalar(check_eps(eps, lower=1e-6, top=10.0), "eps")
    c = float(check_scalar(check_eps(c, "c", lower=WISHART_C_DOMAIN[0], top=WISHART_C_DOMAIN[1]), "c"))
    p = _whole(p, "p", 1, P_MAX)
    return float(_wishart_delta(c, p))


def wishart_mechanism(K, eps, delta, rng=None, *, size=None, calibration="delta"):
    r"""The Wishart mechanism (Jiang, Xie and Zhang 2016): publish ``K + W``, ``W ~ Wishart_p(p + 1, c I)``.

    ``W = c G^T G`` with ``G`` a (p + 1) x p matrix of i.i.d. N(0, 1) entries, so the release is
    positive definite; ``c = wishart_scale(eps, delta, p, calibration=calibration)``.  With the
    default calibration it is (eps, delta)-DP under the book's neighbours (:func:`wishart_delta`);
    with ``calibration="paper"`` it is the paper's (eps, 0) claim, which holds only with
    ``delta = 1 - exp(-eps/3)``.  ``E[W] = (p + 1) c I`` and
    ``Cov(W_ab, W_cd) = (p + 1) c^2 (d_ac d_bd + d_ad d_bc)``: the debiased ``K + W - (p + 1) c I``
    has the noise covariance of the rival's with ``tau^2 = 2 (p + 1) c^2``.

    Parameters
    ----------
    K : array_like, shape (p, p)
        ``X^T X`` of rows in [-1, 1]^p, 1 <= p <= 64.
    eps, delta : float
        1e-6 <= eps <= 10, 0 < delta < 0.5.
    rng : numpy.random.Generator, int or None
    size : int or None
        Independent releases (None: one), at most 10**6.
    calibration : {"delta", "paper"}
        See :func:`wishart_scale`.

    Returns
    -------
    ndarray, shape (p, p) or (size, p, p)

    References
    ----------
    W. Jiang, C. Xie, Z. Zhang, "Wishart mechanism for differentially private principal
    components analysis", AAAI 2016 (arXiv:1511.05680).

    Examples
    --------
    >>> S = wishart_mechanism(np.eye(2) * 100.0, 0.1, 0.01, rng=0)
    >>> bool(np.all(np.linalg.eigvalsh(S - 100.0 * np.eye(2)) > 0))
    True
    """
    K = _check_gram(K, "K")
    p = K.shape[0]
    if p > P_MAX:
        raise ValueError(f"K must be at most {P_MAX} x {P_MAX}, got shape {K.shape}")
    c = wishart_scale(eps, delta, p, calibration=calibration)
    m = 1 if size is None else _whole(size, "size", 1, 10**6)
    G = as_rng(rng).standard_normal((m, p + 1, p))
    S = K + c * np.einsum("mia,mib->mab", G, G)
    return S[0] if size is None else S
