"""Tight privacy curves of the Gaussian mechanism (Setting A): the yardsticks of chapter 7.

* the classical Gaussian calibration of Dwork and Roth,
* the exact (analytic) (eps, delta) curve of the Gaussian mechanism
  (Balle and Wang, 2018), which is what Setting A really needs,
* the paper's own criterion (DP-bound0) for Setting A, computed exactly.

Every function behaves like a ufunc: arguments broadcast, a scalar call returns
a Python float.  Privacy curves are evaluated in log space so that tiny deltas
keep their relative accuracy and large eps does not overflow ``exp(eps)``.

Domain and accuracy (the rule of the package).  Each function states its
domain; inside it the result is finite and accurate to about 1e-11 relative;
outside it a ``ValueError`` names the argument and the range (``TypeError``
for complex input, text or bools), including arguments that do not broadcast
together.  The curves take eps in [1e-100, 1e4], the package's domain, and
sigma in [1e-100, 1e102] (every sigma that :func:`analytic_gaussian_sigma`
returns, up to 3.0e101 at eps = 1e-100, delta = 1e-300).  Safe side:
``analytic_gaussian_sigma`` is raised after its root search until the computed
delta is below the target by more than its own error (by 5e-14 max(1, abs(log
delta))), so that the true delta is at most the target
(``tests/test_safe_side.py`` checks this against mpmath).  The noncentral
chi-square curves of Setting B with p = 1 are in :mod:`dpmask.exact.one_column`;
:mod:`dpmask.exact` gathers both.

References
----------
B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential
privacy: analytical calibration and optimal denoising", ICML 2018.
C. Dwork and A. Roth, "The algorithmic foundations of differential privacy",
2014, Theorem A.1.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats
from scipy.optimize import elementwise

from .._safe import nudge_up
from .._validate import EPS_DOMAIN, broadcast_named, check_delta, check_eps, check_sigma, scalar_or_array

__all__ = [
    "classical_gaussian_sigma",
    "analytic_gaussian_delta",
    "analytic_gaussian_log_delta",
    "analytic_gaussian_sigma",
    "setting_a_criterion_delta",
    "setting_a_criterion_sigma",
]

_SQRT2 = np.sqrt(2.0)
_SQRT_PI = np.sqrt(np.pi)
# 16-point Gauss-Legendre rule on [-1, 1], for the difference of two erfcx values.
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_TOL = dict(xrtol=4 * np.finfo(float).eps, xatol=0.0, fatol=0.0, frtol=0.0)
#: Margin, relative to max(1, abs(log delta)), by which a solved Gaussian sigma keeps the computed
#: log delta under the target: over three times the largest error measured against 400-digit
#: mpmath (1.5e-14 on a grid of 256 (eps, delta) over the whole domain).
_GAUSS_LOG_SLACK = 5e-14

#: Allowance, relative to max(1, abs(log delta)), by which a reported Gaussian delta is raised so that
#: it is an upper bound: over six times the largest error below 60-digit mpmath measured on 300
#: points over the whole domain (3.1e-15, at eps = 1e4; the error is in -a^2/2, a few ulp of log delta).
_GAUSS_LOG_UP = 2e-14

#: Domain of eps and sigma for the Gaussian curves (Setting A).
EPS_GAUSS = EPS_DOMAIN
#: Largest delta the sigma solvers accept: nearer 1, 1 - delta is within a few ulp of
#: rounding and delta(sigma) is too flat in floating point to invert.
DELTA_SOLVE_MAX = 1.0 - 1e-12
_NEAR_ONE = " (nearer 1 the target is lost to rounding)"
#: (up to 1e102: the largest sigma analytic_gaussian_sigma returns, 3.0e101 at eps = 1e-100,
#: delta = 1e-300, must be accepted by analytic_gaussian_delta)
SIGMA_GAUSS = (1e-100, 1e102)
#: log of the bound reported by a mechanism's delta where it lies below 1e-300.
LOG_DELTA_FLOOR = float(np.log(1e-300))


# --------------------------------------------------------------------------- classical


def classical_gaussian_sigma(eps, delta):
    r"""Classical Gaussian-mechanism calibration (Dwork and Roth, Theorem A.1).

    :math:`\sigma = \sqrt{2\ln(1.25/\delta)}/\varepsilon` for L2 sensitivity 1.

    Parameters
    ----------
    eps : array_like
        Privacy parameter, 1e-100 <= eps < 1 (the theorem is proved only below 1).
    delta : array_like
        Privacy parameter, 0 < delta < 1.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(classical_gaussian_sigma(0.1, 1e-5), 3)
    48.448
    """
    eps = check_eps(eps, upper=1.0, hypothesis=" (the classical Gaussian mechanism is proved for eps < 1 only)",
                    lower=EPS_GAUSS[0])
    delta = check_delta(delta)
    eps, delta = broadcast_named(eps=eps, delta=delta)
    return scalar_or_array(np.sqrt(2.0 * (np.log(1.25) - np.log(delta))) / eps)


# --------------------------------------------------------------------------- analytic Gaussian


def _erfcx_slope(x):
    """-erfcx'(x) = 2/sqrt(pi) - 2 x erfcx(x) for x >= 0, without cancellation at large x.

    For x >= 15 the asymptotic series (DLMF 7.12.1)
    (2/sqrt(pi)) sum_{k>=1} (-1)^(k+1) (2k-1)!! / (2x^2)^k, twelve terms, whose
    first omitted term is below 1e-19 relative there; below 15 the direct form,
    which loses fewer than log10(2 x^2) < 2.7 digits to cancellation (about
    1e-13 relative, measured against mpmath).
    """
    x = np.asarray(x, float)
    big = x >= 15.0
    out = 2.0 / _SQRT_PI - 2.0 * x * special.erfcx(x)
    if np.any(big):
        y = 1.0 / (2.0 * x[big] ** 2)
        term = np.ones_like(y)
        total = np.zeros_like(y)
        for k in range(1, 13):
            term = term * (2 * k - 1) * y * (1.0 if k == 1 else -1.0)
            total = total + term
        out = np.array(out)
        out[big] = 2.0 / _SQRT_PI * total
    return out


def _erfcx_difference(lo, width):
    """erfcx(lo) - erfcx(lo + width) for lo >= 0, width > 0, without cancellation.

    For a short interval the difference is the integral of -erfcx'(x) =
    2/sqrt(pi) - 2 x erfcx(x) > 0, taken by 16-point Gauss-Legendre (the
    integrand is analytic and varies on a scale >= 1, so the rule is exact to
    rounding when hi - lo <= 1).  For a long interval the two values differ by
    a large factor and the plain difference is accurate.
    """
    lo, width = np.broadcast_arrays(lo, width)
    short = width <= 1.0
    out = special.erfcx(lo) - special.erfcx(lo + width)
    if np.any(short):
        # the width is passed, not the upper end: hi - lo would lose digits
        a, half = lo[short][..., None], 0.5 * width[short][..., None]
        x = a + half * (_GL_X + 1.0)
        integrand = _erfcx_slope(x)
        out = np.array(out, dtype=float)
        out[short] = half[..., 0] * np.sum(_GL_W * integrand, axis=-1)
    return out


def _gauss_log_delta(eps, sigma):
    r"""log delta(eps) of the Gaussian mechanism, validated inputs, broadcast.

    delta = Phi(a) - e^eps Phi(b) with a = 1/(2 sigma) - eps sigma and
    b = a - 1/sigma.  Because b^2/2 - a^2/2 = eps, for a < 0 the two terms share
    the factor exp(-a^2/2) exactly:

        delta = exp(-a^2/2) [erfcx(-a/sqrt2) - erfcx(-b/sqrt2)] / 2,

    which removes e^eps (no overflow) and the subtraction of two tiny tails;
    the remaining difference of erfcx values is taken by quadrature of its
    derivative when the points are close (large sigma).  For a >= 0 the
    log-space form with ``log_ndtr`` has no cancellation to speak of.
    """
    eps, sigma = np.broadcast_arrays(np.asarray(eps, float), np.asarray(sigma, float))
    a = 0.5 / sigma - eps * sigma
    out = np.empty(a.shape)
    neg = a < 0
    if np.any(neg):
        lo = -a[neg] / _SQRT2
        width = 1.0 / (_SQRT2 * sigma[neg])
        diff = _erfcx_difference(lo, width)
        with np.errstate(divide="ignore"):
            out[neg] = -0.5 * a[neg] ** 2 + np.log(0.5 * diff)
    pos = ~neg
    if np.any(pos):
        x = special.log_ndtr(a[pos])
        y = eps[pos] + special.log_ndtr(a[pos] - 1.0 / sigma[pos])
        with np.errstate(divide="ignore"):
            out[pos] = x + np.log(-np.expm1(np.minimum(y - x, 0.0)))
    # Large sigma with a >= 0: a and b = a - 1/sigma are close and x, y above nearly
    # cancel.  There delta = [Phi(a) - Phi(b)] - expm1(eps) Phi(b), the bracket by
    # 16-point Gauss-Legendre quadrature of the normal density over [b, a] (width
    # 1/sigma <= 1, analytic integrand: exact to rounding); the subtraction is then
    # benign because eps <= 1/(2 sigma^2) makes the second term at most 1/(4 sigma^2)
    # against a first of about 1/(sigma sqrt(2 pi)).
    close = pos & (sigma >= 1.0) & (a < 5.0)
    if np.any(close):
        aa, w = a[close], 1.0 / sigma[close]
        half = 0.5 * w[..., None]
        u = aa[..., None] - w[..., None] + half * (_GL_X + 1.0)
        dens = np.exp(-0.5 * u * u) / np.sqrt(2.0 * np.pi)
        mass = half[..., 0] * np.sum(_GL_W * dens, axis=-1)
        val = mass - np.expm1(eps[close]) * special.ndtr(aa - w)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[close] = np.where(val > 0, np.log(np.maximum(val, 1e-300)), out[close])
    return out


def analytic_gaussian_log_delta(eps, sigma):
    r"""Natural log of :func:`analytic_gaussian_delta` (stays finite below 1e-308).

    Parameters
    ----------
    eps : array_like
        Privacy parameter, in [1e-100, 1e4].
    sigma : array_like
        Noise standard deviation (L2 sensitivity 1), in [1e-100, 1e102].

    Returns
    -------
    float or ndarray
        Finite, an upper bound: the computed value raised by its error
        allowance, 2e-14 max(1, abs(log delta)) (within about 1e-11 relative
        of 60-digit mpmath, of delta where delta > 1e-300, of log delta below).
    """
    eps = check_eps(eps, lower=EPS_GAUSS[0], top=EPS_GAUSS[1])
    sigma = check_sigma(sigma, lower=SIGMA_GAUSS[0], top=SIGMA_GAUSS[1])
    eps, sigma = broadcast_named(eps=eps, sigma=sigma)
    return scalar_or_array(_gauss_log_delta_up(eps, sigma))


def _gauss_log_delta_up(eps, sigma):
    """:func:`_gauss_log_delta` raised by its allowance ``_GAUSS_LOG_UP`` max(1, abs(log delta)), at most 0."""
    out = _gauss_log_delta(eps, sigma)
    return np.minimum(out + _GAUSS_LOG_UP * np.maximum(1.0, np.abs(out)), 0.0)


def analytic_gaussian_delta(eps, sigma):
    r"""Exact delta(eps) of the Gaussian mechanism with L2 sensitivity 1.

    .. math::

        \delta(\varepsilon) = \Phi\!\Big(\frac{1}{2\sigma} - \varepsilon\sigma\Big)
        - e^{\varepsilon}\,\Phi\!\Big(-\frac{1}{2\sigma} - \varepsilon\sigma\Big),

    Balle and Wang (2018), Theorem 8: the mechanism is (eps, delta)-DP if and
    only if delta is at least this value.  In the book this is the tight
    privacy curve of Setting A (equation ``eq-setting-a``), whose release is
    the Gaussian mechanism applied to the whole matrix.

    Parameters
    ----------
    eps : array_like
        Privacy parameter, in [1e-100, 1e4] (e^eps is never formed; above 1e4
        the form 1/(2 sigma) - eps sigma cancels catastrophically).
    sigma : array_like
        Noise standard deviation, in [1e-100, 1e102].

    Returns
    -------
    float or ndarray
        delta in (0, 1], an upper bound within about 1e-11 relative (the
        computed value raised by its error allowance, as
        :func:`analytic_gaussian_log_delta`); never 0: below the normal range
        (2.2e-308) it is rounded up to the next float, at least 5e-324 (use
        :func:`analytic_gaussian_log_delta` there).

    Notes
    -----
    Computed in log space: for :math:`a = 1/(2\sigma) - \varepsilon\sigma < 0`
    both terms carry the factor :math:`e^{-a^2/2}` (because
    :math:`b^2 - a^2 = 2\varepsilon`), and what is left is a difference of
    scaled complementary error functions taken without cancellation.

    Examples
    --------
    >>> round(analytic_gaussian_delta(1.0, 1.0), 6)
    0.126937
    """
    out = np.exp(np.asarray(analytic_gaussian_log_delta(eps, sigma)))
    tiny = out < np.finfo(float).tiny      # subnormal or 0: rounded to nearest, so step up once
    return scalar_or_array(np.where(tiny, np.nextafter(out, np.inf), out))


def _criterion_tail_excess(sigma, eps, log_delta):
    """log P[Z > sigma eps - 1/(2 sigma)] minus log delta, with a margin of 1e-14 max(1, abs(log delta))."""
    return special.log_ndtr(0.5 / sigma - eps * sigma) - log_delta + 1e-14 * np.maximum(1.0, np.abs(log_delta))


def _criterion_sigma(eps, delta):
    gamma = stats.norm.isf(delta)
    root = np.sqrt(gamma**2 + 2.0 * eps)
    # the positive root of eps s^2 - gamma s - 1/2, in the form without cancellation:
    # (gamma + root) / (2 eps) for gamma >= 0, 1 / (root - gamma) for gamma < 0 (delta > 1/2)
    sigma = np.where(gamma >= 0, (gamma + root) / (2.0 * eps), 1.0 / (root - np.minimum(gamma, 0.0)))
    # gamma carries an ulp or two, which moves the tail by gamma^2 ulp (1e-13 at delta = 1e-300):
    # raise sigma until the tail, from log_ndtr, is below delta (the root's safe side)
    return nudge_up(_criterion_tail_excess, sigma, np.inf, (eps, np.log(delta)))


def _solve_gauss_sigma(eps, delta):
    """Vectorised root in log sigma of log delta(eps, sigma) = log delta.

    Bracket in closed form.  Upper end: delta(eps) <= P[L > eps] (the paper's
    criterion), so the criterion's sigma is sufficient.  Lower end: for any
    t > 0, delta(eps) >= (1 - e^{-t}) P[L > eps + t]; with
    t = ln(2 / (1 - delta)) this exceeds delta as soon as
    P[L > eps + t] >= 2 delta / (1 + delta), a quadratic in sigma.
    """
    eps, delta = np.broadcast_arrays(eps, delta)
    hi = _criterion_sigma(eps, delta)
    t = np.log(2.0) - np.log1p(-delta)
    g = stats.norm.ppf(2.0 * delta / (1.0 + delta))
    lo = (-g + np.sqrt(g**2 + 2.0 * (eps + t))) / (2.0 * (eps + t))
    log_delta = np.log(delta)

    def f(x, eps, log_delta):
        return _gauss_log_delta(eps, np.exp(x)) - log_delta

    res = elementwise.find_root(f, (np.log(lo), np.log(hi)), args=(eps, log_delta), tolerances=_TOL)
    if np.any(res.status < 0) or not np.all(np.isfinite(res.x)):
        raise RuntimeError("analytic_gaussian_sigma: root finding failed; please report the arguments")
    # The root is within a few ulp of log sigma, which moves delta by up to 1e-11 relative
    # (the slope of log delta in log sigma reaches ~1e3): raise sigma until the computed delta,
    # whose own error is below 1.5e-14 * max(1, |log delta|) against 400-digit mpmath, sits under
    # the target by over three times that, so that the true delta is at most the target.
    target = log_delta - _GAUSS_LOG_SLACK * np.maximum(1.0, np.abs(log_delta))
    return nudge_up(lambda s, e, t: _gauss_log_delta(e, s) - t, np.exp(res.x), hi, (eps, target))


def analytic_gaussian_sigma(eps, delta):
    r"""Smallest sigma making the Gaussian mechanism (eps, delta)-DP (Balle and Wang).

    The inverse in sigma of :func:`analytic_gaussian_delta`: the tight Setting A
    noise level, against which the paper's Theorem 3.2 and Theorem 3.4 are
    measured in chapter 7.

    Parameters
    ----------
    eps : array_like
        Privacy parameter, in [1e-100, 1e4].
    delta : array_like
        Privacy parameter, 0 < delta < 1 - 1e-12 (nearer 1 the target is lost
        to rounding).

    Returns
    -------
    float or ndarray
        Solved to 4 ulp in log sigma, then raised until the computed delta is
        below the target by 5e-14 max(1, abs(log delta)), more than three times
        its error: at the returned sigma the true delta (400-digit mpmath)
        never exceeds the target, and lies within about 1e-10 relative of it.

    Notes
    -----
    delta(eps, sigma) is strictly decreasing in sigma, so the root is unique.
    All points are solved at once with ``scipy.optimize.elementwise.find_root``
    in log sigma, on a bracket known in closed form (see the source).

    Examples
    --------
    >>> round(analytic_gaussian_sigma(1.0, 1e-5), 4)
    3.7306
    """
    eps, delta = _check_sigma_args(eps, delta)
    return scalar_or_array(_solve_gauss_sigma(eps, delta))


def _check_sigma_args(eps, delta):
    """The door of :func:`analytic_gaussian_sigma`: eps and delta validated and broadcast, by name."""
    eps = check_eps(eps, lower=EPS_GAUSS[0], top=EPS_GAUSS[1])
    delta = check_delta(delta, upper=DELTA_SOLVE_MAX, hypothesis=_NEAR_ONE)
    return broadcast_named(eps=eps, delta=delta)


def _analytic_gaussian_sigma(eps, delta):
    """The core of :func:`analytic_gaussian_sigma` for arguments a public door has validated.

    Inside the package a function that has checked eps and delta (at least as strictly as
    :func:`_check_sigma_args`) calls this, so that one public call validates once (issue 30).
    """
    eps, delta = np.broadcast_arrays(np.asarray(eps, dtype=float), np.asarray(delta, dtype=float))
    return scalar_or_array(_solve_gauss_sigma(eps, delta))


# --------------------------------------------------------------------------- paper's criterion


def setting_a_criterion_delta(eps, sigma):
    r"""The paper's criterion (DP-bound0) for Setting A, computed exactly.

    For neighbours at Frobenius distance 1 the privacy loss of Setting A is
    :math:`L \sim N(1/(2\sigma^2), 1/\sigma^2)`, so

    .. math:: P[L > \varepsilon] = P\big[Z > \sigma\varepsilon - 1/(2\sigma)\big].

    Lemma 2.4 (the paper's lem:DPdensity) shows that this probability below
    delta is *sufficient* for (eps, delta)-DP; it is always at least the exact
    delta of :func:`analytic_gaussian_delta`.

    Parameters
    ----------
    eps : array_like
        In [1e-100, 1e4].
    sigma : array_like
        In [1e-100, 1e102].

    Returns
    -------
    float or ndarray
        In [0, 1], to the accuracy of ``scipy.special.ndtr``.

    Examples
    --------
    >>> round(setting_a_criterion_delta(1.0, 1.0), 6)
    0.308538
    """
    eps = check_eps(eps, lower=EPS_GAUSS[0], top=EPS_GAUSS[1])
    sigma = check_sigma(sigma, lower=SIGMA_GAUSS[0], top=SIGMA_GAUSS[1])
    eps, sigma = broadcast_named(eps=eps, sigma=sigma)
    return scalar_or_array(special.ndtr(0.5 / sigma - eps * sigma))


def setting_a_criterion_sigma(eps, delta):
    r"""Smallest sigma with :math:`P[L > \varepsilon] \le \delta` in Setting A.

    Solving :math:`\sigma\varepsilon - 1/(2\sigma) = \bar\gamma_\delta`, i.e.
    :math:`\varepsilon\sigma^2 - \bar\gamma_\delta\sigma - 1/2 = 0`, for its
    positive root:

    .. math::

        \sigma = \frac{\bar\gamma_\delta + \sqrt{\bar\gamma_\delta^2 + 2\varepsilon}}{2\varepsilon}.

    It lies between Theorem 3.2's necessary value :math:`\bar\gamma_\delta/\varepsilon`
    and its sufficient value
    :math:`\bar\gamma_\delta(1 + 1/(2\bar\gamma_\delta^2))/\varepsilon`.

    Parameters
    ----------
    eps : array_like
        In [1e-100, 1e4].
    delta : array_like
        0 < delta < 1.

    Returns
    -------
    float or ndarray
        The root in the form without cancellation (the rationalised one when
        delta > 1/2), to a few ulp.

    Examples
    --------
    >>> round(setting_a_criterion_sigma(0.1, 0.01), 4)
    23.4765
    """
    eps = check_eps(eps, lower=EPS_GAUSS[0], top=EPS_GAUSS[1])
    delta = check_delta(delta)
    eps, delta = broadcast_named(eps=eps, delta=delta)
    return scalar_or_array(_criterion_sigma(eps, delta))


def _setting_a_criterion_sigma(eps, delta):
    """The core of :func:`setting_a_criterion_sigma` for arguments a public door has validated."""
    eps, delta = np.broadcast_arrays(np.asarray(eps, dtype=float), np.asarray(delta, dtype=float))
    return scalar_or_array(_criterion_sigma(eps, delta))
