r"""The paper's noise bounds: how large sigma must be for (eps, delta)-DP.

Setting A (noise only) is covered by Theorem 3.2 and Corollary 3.3, Setting B
(noise, then a Haar-random orthogonal mask) by Theorem 3.4 and Corollary 3.5,
block-diagonal masking by the remark closing Section 4.  Those are "what the paper
proves" (:func:`sufficient_sigma` keeps to them).  The smallest sigma proven
sufficient by any result in the book, which adds the analytic Gaussian mechanism,
is :func:`dpmask.exact.best.best_sufficient_sigma`: it needs the exact family.  Every
function behaves like a ufunc: arguments broadcast, a scalar call returns a Python float.

Domain and accuracy (the rule of the package).  Every function accepts
eps in [1e-100, 1e4], the package's domain of eps (and eps < 1 where a
theorem assumes it), delta in (0, 1) (less where a theorem assumes it; in
[1e-300, 1 - 1e-8) for Theorem 3.4), whole numbers n, p with n > p >= 1 and
n <= 2**53, and, for :func:`g_b`, sigma in [1e-100, 1e100]; inside this
domain the result is finite.  Outside it a ``ValueError`` names the argument
and the range, a ``TypeError`` an argument of the wrong kind (complex, text,
a bool for a number, a flag that is not a bool); arguments that do not
broadcast together are named too.

The bounds are claims of privacy, so where they are not exact they err upward
only, and a sufficient sigma is never below the root it solves.  Theorem 3.4
needs the upper delta-quantile :math:`\gamma_{\delta;k,\lambda}` of the
noncentral chi-square law, and its root is where the tail beyond
:math:`x(\sigma) = (\sigma^2\varepsilon - \sqrt p)/c` equals delta.  For
:math:`k \le 2\cdot10^9` and :math:`\lambda \le 10^6` that tail is computed
accurately: by ``scipy.stats.ncx2`` (Boost's series) down to a log tail of
-40, where it agrees with mpmath to about 1e-12 for every df up to 2e9, and
below by a Gauss-Laguerre quadrature of the log density (``dpmask.paper._ncx2``),
because there scipy's series loses accuracy at large df (1e-7 in the log at
df = 2e9) and under-states the far tail by up to a factor 1e300 (its
quantile at delta = 1e-300 is about the 1e-191 quantile).  The computed tail
is compared with delta moved by an error allowance (1e-10 relative; the
measured error is below 1e-12), taken 8 ulp short of x (which covers the
rounding of sigma and of x itself), the root is found to 4 ulp and then
raised until the computed tail is below that target, so the returned sigma
satisfies g <= 0 with the true quantile.  Beyond that
range (huge n, or tiny sigma in :func:`g_b`) Birge's rigorous upper bound on
the tail replaces it,
:math:`\gamma_{\delta;k,\lambda} \le k + \lambda + 2\sqrt{(k+2\lambda)x} + 2x`
with :math:`x = \ln(1/\delta)` :cite:p:`birge2001alternative` (Lemma 8.1),
which only raises g: the root stays sufficient, approaches the large-n limit
:math:`\sigma_0^2 \to (3\sqrt p + 1)/\varepsilon` from above and exceeds the
root with the exact quantile by at most 1.4e-5 relative where both are
available (measured on a grid of 36 (eps, delta, p) at the switch,
n - p = 1e9).  ``tests/test_safe_side.py`` recomputes every sufficient sigma's
criterion with mpmath over the corners of the domain.

References
----------
A. A. Ding, S. S. Wu, G. Miao and S. Chen, "Reducing Noise Level in
Differential Privacy through Matrix Masking".
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.optimize import elementwise

from . import _ncx2
from .._safe import nudge_up

from .._validate import (
    EPS_DOMAIN,
    broadcast_named,
    check_block_sizes,
    check_delta,
    check_eps,
    check_flag,
    check_n_p,
    check_sigma,
    scalar_or_array,
)

__all__ = [
    "gaussian_upper_quantile",
    "sigma_a_necessary",
    "sigma_a_sufficient",
    "sigma_a_corollary",
    "g_b",
    "sigma_b",
    "sigma_b_corollary",
    "sigma_b_block",
    "sufficient_sigma",
]

_THM32 = " (Theorem 3.2 assumes eps < 1 and delta < 1/2)"
_COR33 = " (Corollary 3.3 assumes eps < 1 and delta < 0.05)"
_COR35 = " (Corollary 3.5 assumes eps < 1)"

#: Numerical domain of eps (the package's, ``dpmask._validate.EPS_DOMAIN``) and of sigma.
EPS_RANGE = EPS_DOMAIN
SIGMA_RANGE = (1e-100, 1e100)
#: Largest delta for Theorem 3.4: nearer 1 scipy's lower quantile of the noncentral
#: chi-square loses its accuracy (the theorem is vacuous there anyway).
DELTA_B_MAX = 1.0 - 1e-8
DELTA_B_MIN = 1e-300
_NEAR_ONE = " (nearer 1 the noncentral chi-square quantile is not accurate)"
#: Where the accurate noncentral chi-square tail (scipy, and beyond its reach the quadrature of
#: dpmask.paper._ncx2) is used; beyond, Birge's rigorous bound.
_EXACT_DF_MAX = 2e9
_EXACT_NC_MAX = 1e6
#: Relative allowance for the error of a computed log tail (see _slack).
_TAIL_RTOL = 1e-10
#: Factor by which rigorous bracket ends are raised so that they stay on the safe side of the
#: criterion evaluated 8 ulp short of x.
_ULP_UP = 1.0 + 64.0 * np.finfo(float).eps
_CLIP = 1e4


def _eps(eps, **kw):
    return check_eps(eps, lower=EPS_RANGE[0], top=EPS_RANGE[1], **kw)


def _delta_b(delta):
    """delta for Theorem 3.4: in [1e-300, 1 - 1e-8] (scipy's quantile overflows on subnormal delta)."""
    return check_delta(delta, upper=DELTA_B_MAX, hypothesis=_NEAR_ONE, lower=DELTA_B_MIN,
                       lower_reason=" for Theorem 3.4 (the quantile overflows below)")


def _birge_log_tail(x, df, nc):
    """Birge's rigorous upper bound on log P[T > x], T ~ chi2_df(nc) (Lemma 8.1 of birge2001alternative).

    P[T >= k + l + 2 sqrt((k + 2 l) y) + 2 y] <= e^-y, solved for y at x: with m = k + l and
    v = k + 2 l, y = (sqrt(v + 2 (x - m)) - sqrt(v))^2 / 4 for x >= m (else the bound is 0).
    """
    m, v = df + nc, df + 2.0 * nc
    with np.errstate(invalid="ignore"):
        y = np.where(x > m, (2.0 * (x - m)) / (np.sqrt(v + 2.0 * np.maximum(x - m, 0.0)) + np.sqrt(v)), 0.0)
    return -0.25 * y * y


def _birge_quantile(log_delta, df, nc):
    """Birge's upper bound on the upper quantile: k + l + 2 sqrt((k + 2 l) y) + 2 y, y = -log delta."""
    y = -log_delta
    return df + nc + 2.0 * np.sqrt((df + 2.0 * nc) * y) + 2.0 * y


def _slack(log_target):
    """Allowance for the error of a computed log tail near log_target (df up to 2e9).

    Against mpmath the log tails of dpmask.paper._ncx2 were within 1e-12 relative (3e-11 absolute)
    over df from 2 to 2e9; the allowance is 1e-10 relative, at least 1e-10.
    """
    return _TAIL_RTOL * np.maximum(1.0, np.abs(log_target))


def _tail_excess(x, delta, df, nc):
    """> 0 where P[T > x] may exceed delta; <= 0 only where P[T > x] <= delta for sure.

    T ~ chi2_df(nc).  Where the accurate log tail (:mod:`dpmask.paper._ncx2`) is used, its value is
    compared with the target moved by a slack that covers its error: log P[T > x] against
    log delta for delta <= 1/2, log P[T <= x] against log(1 - delta) above (where the upper
    tail is within rounding of 1).  Beyond ``_EXACT_DF_MAX`` / ``_EXACT_NC_MAX`` Birge's
    rigorous bound replaces the tail.  The value is decreasing in x and increasing in nc.
    """
    x, delta, df, nc = np.broadcast_arrays(*(np.asarray(v, float) for v in (x, delta, df, nc)))
    # the tail is taken 8 ulp short of x: x = (sigma^2 eps - sqrt p)/c carries the rounding of sigma,
    # of sigma^2 and of the arithmetic, which at n = 2**53 moves the tail by more than delta's own ulp
    x = x * (1.0 - 8.0 * np.finfo(float).eps)
    out = np.empty(x.shape)
    exact = (df <= _EXACT_DF_MAX) & (nc <= _EXACT_NC_MAX)
    upper = delta <= 0.5
    log_d, log_c = np.log(delta), np.log1p(-delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = exact & upper
        if np.any(m):
            out[m] = _ncx2.logsf(x[m], df[m], nc[m]) - log_d[m] + _slack(log_d[m])
        m = exact & ~upper
        if np.any(m):
            out[m] = log_c[m] + _slack(log_c[m]) - _ncx2.logcdf(x[m], df[m], nc[m])
        far = ~exact
        if np.any(far):
            bound = _birge_log_tail(x[far], df[far], nc[far])
            out[far] = np.where(upper[far], bound - log_d[far], log_c[far] - np.log(-np.expm1(bound)))
    # x <= 0: the whole law lies above x, an excess of +inf; keep the root finders finite
    return np.clip(np.nan_to_num(out, nan=_CLIP, posinf=_CLIP), -_CLIP, _CLIP)


def _ncx2_isf_upper(delta, df, nc):
    """Upper delta-quantile of chi2_df(nc), never below the true one.

    The root in x of :func:`_tail_excess` (an accurate log tail compared with a target moved
    to the safe side by its error allowance), nudged up until the computed excess is <= 0;
    beyond the accurate route's range, Birge's rigorous bound.  The bracket is rigorous:
    Birge's upper bound from above, his lower-tail bound from below.
    """
    delta, df, nc = np.broadcast_arrays(*(np.asarray(v, float) for v in (delta, df, nc)))
    out = np.array(_birge_quantile(np.log(delta), df, nc), dtype=float)
    exact = (df <= _EXACT_DF_MAX) & (nc <= _EXACT_NC_MAX)
    if not np.any(exact):
        return out
    d, k, lam = delta[exact], df[exact], nc[exact]
    hi = _birge_quantile(np.log(d) - _slack(np.log(d)), k, lam) * _ULP_UP
    # P[T <= k + l - 2 sqrt((k + 2 l) y)] <= e^-y with e^-y = 1 - delta: a point with tail >= delta
    y = -np.log1p(-d)
    lo = np.maximum(k + lam - 2.0 * np.sqrt((k + 2.0 * lam) * y), 0.0)
    res = elementwise.find_root(
        _tail_excess, (lo, hi), args=(d, k, lam),
        tolerances=dict(xrtol=4 * np.finfo(float).eps, xatol=0.0, fatol=0.0),
    )
    x = np.where(res.status >= 0, np.clip(res.x, lo, hi), hi)
    x = nudge_up(_tail_excess, x, hi, (d, k, lam))
    out[exact] = x
    return out


def gaussian_upper_quantile(delta):
    r"""Upper delta-quantile :math:`\bar\gamma_\delta` of the standard normal.

    Parameters
    ----------
    delta : array_like
        Tail probability, in (0, 1).

    Returns
    -------
    float or ndarray
        :math:`\bar\gamma_\delta` with :math:`P[Z > \bar\gamma_\delta] = \delta`,
        computed by ``scipy.stats.norm.isf`` (accurate in the far tail, unlike
        an inversion through ``erf``).

    Examples
    --------
    >>> round(gaussian_upper_quantile(0.01), 4)
    2.3263
    """
    delta = check_delta(delta)
    return scalar_or_array(stats.norm.isf(delta))


def _setting_a_args(eps, delta, upper_delta, hypothesis):
    """eps < 1 and delta < *upper_delta* (the theorem's *hypothesis*), validated and broadcast together."""
    eps = _eps(eps, upper=1.0, hypothesis=hypothesis)
    delta = check_delta(delta, upper=upper_delta, hypothesis=hypothesis)
    return broadcast_named(eps=eps, delta=delta)


def sigma_a_necessary(eps, delta):
    r"""Necessary noise for condition (DP-bound0) in Setting A, Theorem 3.2.

    Implements equation (DP-boundA.nec): :math:`\sigma \ge \bar\gamma_\delta/\varepsilon`.

    Parameters
    ----------
    eps : array_like
        Privacy parameter, 1e-100 <= eps < 1 (the theorem assumes eps < 1).
    delta : array_like
        Privacy parameter, 0 < delta < 1/2.

    Returns
    -------
    float or ndarray
        The smallest sigma that the necessary condition allows.

    Notes
    -----
    The condition is necessary for the paper's criterion (DP-bound0), the
    probability that the privacy loss exceeds eps, not for (eps, delta)-DP
    itself; :mod:`dpmask.exact` gives the tight (eps, delta) curve.

    Examples
    --------
    >>> round(sigma_a_necessary(0.1, 0.01), 1)
    23.3
    """
    eps, delta = _setting_a_args(eps, delta, 0.5, _THM32)
    return _sigma_a_necessary(eps, delta)


def _sigma_a_necessary(eps, delta):
    """The core of :func:`sigma_a_necessary`, for arguments its door has validated and broadcast."""
    return scalar_or_array(stats.norm.isf(delta) / eps)


def sigma_a_sufficient(eps, delta):
    r"""Sufficient noise for Setting A, Theorem 3.2, equation (DP-boundA.suf).

    :math:`\sigma \ge \frac{\bar\gamma_\delta}{\varepsilon}\left(1 + \frac{1}{2\bar\gamma_\delta^2}\right)`.

    Parameters
    ----------
    eps, delta : array_like
        As in :func:`sigma_a_necessary` (1e-100 <= eps < 1, 0 < delta < 1/2).

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(sigma_a_sufficient(0.1, 0.01), 1)
    25.4
    """
    eps, delta = _setting_a_args(eps, delta, 0.5, _THM32)
    return _sigma_a_sufficient(eps, delta)


def _sigma_a_sufficient(eps, delta):
    """The core of :func:`sigma_a_sufficient`, for arguments its door has validated and broadcast."""
    gamma = stats.norm.isf(delta)
    return scalar_or_array(gamma / eps * (1.0 + 0.5 / gamma**2))


def sigma_a_corollary(eps, delta, kind="sufficient"):
    r"""Corollary 3.3: explicit Setting A bounds in terms of :math:`\ln(1/\delta)`.

    Parameters
    ----------
    eps : array_like
        Privacy parameter, 1e-100 <= eps < 1 (the theorem assumes eps < 1).
    delta : array_like
        Privacy parameter, 0 < delta < 0.05.
    kind : {"sufficient", "necessary"}
        ``"sufficient"`` gives :math:`1.7\sqrt{\ln(1/\delta)}/\varepsilon`,
        ``"necessary"`` gives :math:`\sqrt{\ln(1/\delta)}/\varepsilon`.

    Returns
    -------
    float or ndarray

    Notes
    -----
    The necessary half rests on Lemma A.1's lower bound
    :math:`\sqrt{\ln(1/\delta)} < \bar\gamma_\delta`, which the book shows to
    fail for delta between about 0.032 and 0.05 (chapter A).

    Examples
    --------
    >>> round(sigma_a_corollary(0.1, 0.01), 2)
    36.48
    """
    if kind not in ("sufficient", "necessary"):
        raise ValueError(f"kind must be 'sufficient' or 'necessary', got {kind!r}")
    eps, delta = _setting_a_args(eps, delta, 0.05, _COR33)
    factor = 1.7 if kind == "sufficient" else 1.0
    return scalar_or_array(factor * np.sqrt(-np.log(delta)) / eps)


def _b_coefficient(n, p, corrected):
    """(2 sqrt(p) + 1) / (2 q) with q = n - p, or n - p - 1 when *corrected*."""
    q = n - p - (1.0 if corrected else 0.0)
    return (2.0 * np.sqrt(p) + 1.0) / (2.0 * q)


def _g_b_raw(sigma, eps, delta, n, p, corrected=False):
    nc = p / sigma**2
    quantile = _ncx2_isf_upper(delta, 2.0 * (n - p), nc)
    return _b_coefficient(n, p, corrected) * quantile + np.sqrt(p) - sigma**2 * eps


def _check_b_args(eps, delta, n, p, corrected):
    corrected = check_flag(corrected, "corrected")
    eps = _eps(eps)
    delta = _delta_b(delta)
    n, p = check_n_p(n, p, margin=1 if corrected else 0)
    eps, delta, n, p = broadcast_named(eps=eps, delta=delta, n=n, p=p)
    return eps, delta, n, p


def g_b(sigma, eps, delta, n, p, *, corrected=False):
    r"""Theorem 3.4's function :math:`g(\sigma)` whose root is the Setting B bound.

    .. math::

        g(\sigma) = \frac{2\sqrt p + 1}{2(n-p)}\,
        \gamma_{\delta;\,2(n-p),\,p/\sigma^2} + \sqrt p - \sigma^2\varepsilon,

    where :math:`\gamma_{\delta; k, \lambda}` is the upper delta-quantile of the
    noncentral chi-square law with k degrees of freedom and noncentrality
    :math:`\lambda` (computed as the module docstring says: accurate where it can
    be, an upper bound beyond, never below the true quantile).

    Parameters
    ----------
    sigma : array_like
        Noise standard deviation, in [1e-100, 1e100].
    eps, delta : array_like
        Privacy parameters, eps in [1e-100, 1e4], delta in [1e-300, 1 - 1e-8).
    n, p : array_like
        Rows and columns of the data, whole numbers with n > p >= 1, n <= 2**53.
    corrected : bool
        If true, replace the factor 2(n - p) in the denominator by
        2(n - p - 1).  The proof's inner integral is :math:`G_{n-p-1}`, not
        :math:`G_{n-p}` as the paper writes; with Lemma 5.5 as the paper
        states it (:math:`G_q'/G_q < t/q`) that slip costs this factor.  The
        book's sharper Lemma 5.5(ii), :math:`G_q'/G_q < t/(q+1)`, recovers
        the paper's constant, so the default (``False``) is proven too; the
        flag gives the conservative variant for comparison.  Needs n > p + 1.

    Returns
    -------
    float or ndarray
    """
    sigma = check_sigma(sigma, lower=SIGMA_RANGE[0], top=SIGMA_RANGE[1])
    eps, delta, n, p = _check_b_args(eps, delta, n, p, corrected)
    sigma, eps, delta, n, p = broadcast_named(sigma=sigma, eps=eps, delta=delta, n=n, p=p)
    return scalar_or_array(_g_b_raw(sigma, eps, delta, n, p, corrected))


def _solve_sigma_b(eps, delta, n, p, corrected):
    """Vectorised root of g(sigma) = 0 in s = sigma**2 (all inputs validated), on the safe side.

    g(sigma) <= 0 holds exactly when the quantile term is at most sigma^2 eps - sqrt(p), i.e.
    when the tail of chi2_{2(n-p)}(p/s) beyond x(s) = (s eps - sqrt p)/c is at most delta.  So
    the root solves :func:`_tail_excess` (x(s), delta) = 0, an accurate log tail against a target
    moved by its error allowance, with no inner quantile search; the excess decreases in s.
    A bracket comes in closed form: at s_lo = sqrt(p)/eps, x = 0 and the excess is positive;
    s_hi = (c * B + sqrt(p))/eps with B Birge's rigorous quantile bound at noncentrality
    p/s_lo has a non-positive excess.  The root is then raised until the computed excess is
    <= 0, so that the true tail at the returned sigma is at most delta.
    """
    eps, delta, n, p = np.broadcast_arrays(eps, delta, n, p)
    c = _b_coefficient(n, p, corrected)
    df = 2.0 * (n - p)
    root_p = np.sqrt(p)
    log_d = np.log(delta)
    s_lo = root_p / eps
    # (the quantile bound raised by 64 ulp: the tail is taken 8 ulp short of x, see _tail_excess)
    s_hi = (c * _birge_quantile(log_d - _slack(log_d), df, p / s_lo) * _ULP_UP + root_p) / eps * _ULP_UP

    def h(s, eps, delta, p, df, c):
        return _tail_excess((s * eps - np.sqrt(p)) / c, delta, df, p / s)

    args = (eps, delta, p, df, c)
    res = elementwise.find_root(h, (s_lo, s_hi), args=args,
                                tolerances=dict(xrtol=4 * np.finfo(float).eps, xatol=0.0, fatol=0.0))
    s = np.where(res.status >= 0, np.clip(res.x, s_lo, s_hi), s_hi)
    s = nudge_up(h, s, s_hi, args)
    if not np.all(np.isfinite(s)):
        raise RuntimeError("sigma_b: root finding did not converge; please report the arguments")
    return np.sqrt(s)


def sigma_b(eps, delta, n, p, *, corrected=False):
    r"""Sufficient noise for Setting B, Theorem 3.4: the root of :func:`g_b`.

    Parameters
    ----------
    eps : array_like
        Privacy parameter, in [1e-100, 1e4] (the package's domain of eps;
        Theorem 3.4 itself needs no upper limit).
    delta : array_like
        Privacy parameter, in [1e-300, 1 - 1e-8).
    n, p : array_like
        Rows and columns, whole numbers with n > p >= 1, n <= 2**53.
    corrected : bool
        Use 2(n - p - 1) in place of 2(n - p), the conservative variant
        discussed in :func:`g_b`.  Must be a bool.

    Returns
    -------
    float or ndarray
        :math:`\sigma_0`, the unique root of :math:`g(\sigma) = 0`, never
        below it: within about 1e-10 relative above it where the tail is
        computed accurately (the error allowance of the module docstring),
        and within 1e-4 above it for n - p > 1e9, where Birge's upper bound
        on the quantile keeps it sufficient.

    Notes
    -----
    Why the root is unique: the noncentral chi-square family is stochastically
    increasing in its noncentrality, so its upper quantile
    :math:`\gamma_{\delta; 2(n-p), \lambda}` increases with
    :math:`\lambda = p/\sigma^2`, which decreases in sigma; the term
    :math:`-\sigma^2\varepsilon` strictly decreases.  Hence g is strictly
    decreasing, with :math:`g \to +\infty` as :math:`\sigma \to 0` and
    :math:`g \to -\infty` as :math:`\sigma \to \infty`: exactly one root, and
    :math:`g(\sigma) \le 0` (the condition of the theorem) for every larger sigma.

    All points are solved at once by ``scipy.optimize.elementwise.find_root``
    on a bracket computed in closed form (no Python loop over the grid).

    Examples
    --------
    >>> round(sigma_b(0.1, 0.01, 100, 1), 1)
    6.9
    """
    eps, delta, n, p = _check_b_args(eps, delta, n, p, corrected)
    return scalar_or_array(_solve_sigma_b(eps, delta, n, p, corrected))


def _sigma_b(eps, delta, n, p, corrected=False):
    """The core of :func:`sigma_b` for arguments a public door has validated (by :func:`_check_b_args`).

    Inside the package a function that has checked eps, delta, n and p calls this, not
    :func:`sigma_b`, so that one public call validates its arguments once (issue 30).
    """
    eps, delta, n, p = (np.asarray(x, dtype=float) for x in (eps, delta, n, p))
    return scalar_or_array(_solve_sigma_b(eps, delta, n, p, corrected))


def sigma_b_corollary(eps, delta, n, p):
    r"""Corollary 3.5: an explicit sufficient sigma for Setting B.

    .. math::

        \sigma \ge \sqrt{\frac{2n - p + \ln(1/\delta)}{2(n-p)}}\;
        \frac{3\,p^{1/4}}{\sqrt{\varepsilon}}.

    Parameters
    ----------
    eps : array_like
        Privacy parameter, 1e-100 <= eps < 1 (the theorem assumes eps < 1).
    delta : array_like
        0 < delta < 1.
    n, p : array_like
        Whole numbers, n > p >= 1.

    Returns
    -------
    float or ndarray
    """
    eps = _eps(eps, upper=1.0, hypothesis=_COR35)
    delta = check_delta(delta)
    n, p = check_n_p(n, p)
    eps, delta, n, p = broadcast_named(eps=eps, delta=delta, n=n, p=p)
    value = np.sqrt((2 * n - p - np.log(delta)) / (2 * (n - p))) * 3 * p**0.25 / np.sqrt(eps)
    return scalar_or_array(value)


def sigma_b_block(eps, delta, block_sizes, p, *, corrected=False):
    r"""Sufficient noise for block-diagonal masking (Section 4).

    With blocks of sizes :math:`n_1, \dots, n_k`, Theorem 3.4 holds with n
    replaced by the smallest block :math:`n_s`, which must exceed p.

    Parameters
    ----------
    eps, delta : float
        Privacy parameters, as for :func:`sigma_b`.
    block_sizes : sequence of int
        Sizes of the diagonal blocks, whole numbers <= 2**53; each must be
        larger than p.
    p : int
        Number of columns.
    corrected : bool
        See :func:`g_b`.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> sigma_b_block(0.1, 0.01, [100, 100, 250], 5) == sigma_b(0.1, 0.01, 100, 5)
    True
    """
    check_flag(corrected, "corrected")
    sizes = check_block_sizes(block_sizes, p)
    return sigma_b(eps, delta, sizes.min(), p, corrected=corrected)


def sufficient_sigma(eps, delta, n, p, setting="B"):
    """Smallest sigma the paper proves sufficient for a setting, from the paper's own theorems.

    This is "what the paper proves", with Theorems 3.2 and 3.4 only.  It is
    not the smallest sigma known to be sufficient: the analytic Gaussian
    mechanism (Balle and Wang 2018) is tight for Setting A and, by Lemma 2.3,
    sufficient for Settings B and C, and it is smaller than both theorems in
    many cases (12 of the 36 rows of Table 1 for Setting B).  For the smallest
    sigma proven sufficient by any result in the book use
    :func:`dpmask.exact.best.best_sufficient_sigma`.

    Parameters
    ----------
    eps : array_like
        Privacy parameter, in [1e-100, 1e4] (Theorem 3.2 is used only where
        eps < 1; setting "A" needs eps < 1).
    delta : array_like
        Privacy parameter, in [1e-300, 1 - 1e-8) (setting "A" needs delta < 1/2).
    n, p : array_like
        Rows and columns, whole numbers with n > p >= 1, n <= 2**53.
    setting : {"A", "B", "C"}
        ``"A"``: Theorem 3.2's sufficient sigma (needs eps < 1, delta < 1/2).
        ``"B"`` and ``"C"``: the smaller of Theorem 3.4's root and Theorem
        3.2's bound, since by Lemma 2.3 any sigma that makes Setting A private
        makes Setting B private too, and Setting C has Setting B's density
        (Lemma A.4).  Where Theorem 3.2 does not apply (eps >= 1 or
        delta >= 1/2), Theorem 3.4 alone is used.

    Returns
    -------
    float or ndarray
    """
    setting = _check_setting(setting)
    eps_arr = _eps(eps)
    delta_arr = _delta_b(delta)
    n_arr, p_arr = check_n_p(n, p)
    if setting == "A":
        sigma_a_sufficient(eps_arr, delta_arr)  # raises outside Theorem 3.2's hypotheses
    eps_arr, delta_arr, n_arr, p_arr = broadcast_named(eps=eps_arr, delta=delta_arr, n=n_arr, p=p_arr)
    ok = (eps_arr < 1) & (delta_arr < 0.5)
    a = np.full(eps_arr.shape, np.inf)
    if np.any(ok):
        gamma = stats.norm.isf(delta_arr[ok])
        a[ok] = gamma / eps_arr[ok] * (1.0 + 0.5 / gamma**2)
    if setting == "A":
        return scalar_or_array(a)
    b = _solve_sigma_b(eps_arr, delta_arr, n_arr, p_arr, False)
    return scalar_or_array(np.minimum(b, a))


_SETTINGS = ("A", "B", "C")


def _check_setting(setting):
    if not isinstance(setting, str) or setting.upper() not in _SETTINGS:
        raise ValueError(f"setting must be 'A', 'B' or 'C', got {setting!r}")
    return setting.upper()
