r"""The Wishart mechanism (Jiang, Xie and Zhang 2016), a rival of chapter 9, calibrated to (eps, delta).

:func:`wishart_mechanism` releases ``K + W`` with ``W ~ Wishart_p(p + 1, c I)``, a positive
definite noisy Gram matrix; :func:`wishart_scale` gives the scale ``c`` and
:func:`wishart_delta` the delta it spends under the book's neighbours (rows ``x = (z, y)`` in
[-1, 1]^p, one row replaced by another at Euclidean distance at most 1, Definition 2.1).  Not to
be confused with :mod:`dpmask.exact.two_columns`, the noncentral Wishart law of *masking* with
two columns (chapter 7a).

References
----------
W. Jiang, C. Xie, Z. Zhang, "Wishart mechanism for differentially private principal
components analysis", AAAI 2016 (arXiv:1511.05680).
"""

from __future__ import annotations

import numpy as np

from .._safe import nudge_up
from .._validate import as_rng, check_eps, check_scalar
from ..inference import _check_gram
from ._args import P_MAX, _one_eps_delta, _whole

__all__ = ["wishart_scale", "wishart_delta", "wishart_mechanism"]

_ULP = np.finfo(float).eps

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
      calibrations, ``dpmask._safe.nudge_up``).  It does not depend on ``eps``: the
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
