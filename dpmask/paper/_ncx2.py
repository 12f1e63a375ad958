r"""Tails of the noncentral chi-square law in log space, accurate where scipy's are not.

``scipy.stats.ncx2`` (Boost) sums its Poisson mixture in floating point: it is
accurate to about 1e-12 in the log of an upper tail down to about 1e-100 for
df up to 1e6, but at df = 2e9 only down to e^-40 (beyond, its log tail is off
by up to 1e-7), and further out the terms it sums underflow or its series stops
early: it under-states the tail by factors up to 1e300 (``ncx2.isf(1e-300, 2,
1825)`` is the quantile of about 1e-191; ``ncx2.logsf`` of a point whose tail
is 1e-260 may be ``-inf``).  A privacy bound built on such a quantile comes out
too small.  (``ncx2.logpdf`` fails too, e.g. ``-inf`` at (1000, 1000, 10.5);
this module computes its own log density.)

This module keeps scipy where it was measured accurate (a log upper tail above
``TRUST_LOG`` = -40, a log lower tail above ``TRUST_LOG_LOWER`` = -150) and
replaces it further out by a quadrature of the density written in log space:

.. math::

    P[T > x] = \frac{f(x)}{\kappa} \int_0^\infty e^{-v}\,
        \exp\bigl(\ell(x + v/\kappa) - \ell(x) + v\bigr)\, dv,
    \qquad \ell = \log f,\ \kappa = -\ell'(x) > 0,

by 20-point Gauss-Laguerre (the lower tail likewise, from x towards 0, or
64-point Gauss-Legendre over [0, x] where x is small).  The density of
:math:`\chi^2_k(\lambda)` is log-concave (k >= 2), so the bracket is at most 1
and, in the far tail, flat to within a relative curvature of about
:math:`1/z^2` (z the standard score): against mpmath the rule is within
3e-11 of the log tail from -5 outward (checked for df from 2 to 2e9).  The density is

.. math::

    \ell(t) = \log f_{\chi^2_k}(t) - \lambda/2 + \log {}_0F_1(; k/2; \lambda t/4),

with the central part written without cancellation
(:math:`-a\,(u - \log(1+u)) + \dots` with a = k/2, u = t/k - 1) and the
hypergeometric part from :mod:`dpmask.paper.gq` (uniform asymptotic expansion for
large orders).  Its error is a few ulp of :math:`\lambda + |\ell|` (the terms
:math:`-\lambda/2` and the hypergeometric one cancel).

Private: :mod:`dpmask.paper.bounds` and :mod:`dpmask.exact` use it; its accuracy is
checked against mpmath in ``tests/test_safe_side.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import special, stats

from . import gq

#: scipy's log upper tail is used above this value, where it agrees with mpmath to about 1e-12
#: for df up to 2e9; below it Boost's series loses up to 1e-7 at df = 2e9 (log tail -60 to -300)
#: and under-states the tail by up to e^300 beyond e^-460, while the quadrature stays within
#: 3e-11 of mpmath from a log tail of -5 outward.
TRUST_LOG = -40.0
#: scipy's (cdflib's) log lower tail is used above this value; it underflows or fails below.
TRUST_LOG_LOWER = -150.0
_LAG_X, _LAG_W = np.polynomial.laguerre.laggauss(20)
_LOG_LAG_W = np.log(_LAG_W)
_LEG_X, _LEG_W = np.polynomial.legendre.leggauss(64)
_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)


def _quiet(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args)


def _log1pmx_neg(u):
    """u - log(1 + u) >= 0 for u > -1, without cancellation near 0.

    For |u| < 0.1, with s = u/(2 + u): log(1 + u) = 2 atanh(s) and u - 2 s = u^2/(2 + u), so
    u - log(1 + u) = u^2/(2 + u) - 2 (s^3/3 + s^5/5 + ...); |s| < 0.053 and eight terms
    leave a relative error below 1e-18.
    """
    u = np.asarray(u, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = u - np.log1p(u)
        s = u / (2.0 + u)
        s2 = s * s
        series = np.zeros_like(s)
        for j in range(8, 0, -1):
            series = series * s2 + 1.0 / (2 * j + 1)
        small = u * u / (2.0 + u) - 2.0 * s * s2 * series
    return np.where(np.abs(u) < 0.1, small, direct)


def _central_parts(k):
    """Constants of the chi-square log density that depend on k only (a = k/2 >= 10: Stirling form)."""
    a = 0.5 * np.asarray(k, float)
    big = a >= 10.0
    const = np.where(big, 0.5 * np.log(a) - _HALF_LOG_2PI - gq._stirling_tail(np.maximum(a, 10.0)) - np.log(2.0),
                     -special.gammaln(a) - np.log(2.0))
    return a, big, const


def _log_central_pdf(t, k, parts=None):
    """log of the chi-square density with k degrees of freedom at t > 0, no cancellation for large k.

    For a = k/2 >= 10, (a-1) log(t/2) - t/2 - lgamma(a) - log 2 is regrouped with Stirling's
    lgamma as -a (u - log(1 + u)) - log(t/2) + log(a)/2 - log(2 pi)/2 - S(a) - log 2 with
    u = t/k - 1, which has no cancellation of large terms.
    """
    a, big, const = _central_parts(k) if parts is None else parts
    t = np.asarray(t, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if np.all(big):
            return -a * _log1pmx_neg((0.5 * t - a) / a) - np.log(0.5 * t) + const
        plain = special.xlogy(a - 1.0, 0.5 * t) - 0.5 * t + const
        if not np.any(big):
            return plain
        stirling = -a * _log1pmx_neg((0.5 * t - a) / a) - np.log(0.5 * t) + const
    return np.where(big, stirling, plain)


def _log0f1(b, z):
    """log 0F1(; b; z) for b >= 1, z >= 0: log F(b - 1, 2 sqrt z) of :mod:`dpmask.paper.gq`.

    F(nu, t) = Gamma(nu + 1) (2/t)^nu I_nu(t) = 0F1(; nu + 1; t^2/4) is what gq evaluates in
    its three regions (series, Debye's uniform expansion for large order, Bessel functions);
    Lemma 5.4's G_q(t) is B(1/2, q/2) F((q - 1)/2, t).
    """
    nu = np.asarray(b, float) - 1.0
    t = np.minimum(2.0 * np.sqrt(np.asarray(z, float)), gq.T_MAX)
    nu, t = (np.array(v, float) for v in np.broadcast_arrays(nu, t))
    out = np.zeros(t.shape)
    series, debye, bessel = gq._regions(nu, t)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out[series] = gq._log_f_series(nu[series], t[series])
        out[debye] = gq._log_f_debye(nu[debye], t[debye])
        hankel = bessel & (t >= gq._T_HANKEL)
        bessel &= ~hankel
        out[bessel] = gq._log_f_ive(nu[bessel], t[bessel])
        out[hankel] = gq._log_f_hankel(nu[hankel], t[hankel])
    return out


def logpdf(t, k, lam):
    """log density of the noncentral chi-square law chi2_k(lam) at t > 0 (k >= 2, lam >= 0)."""
    t, k, lam = np.broadcast_arrays(*(np.asarray(v, float) for v in (t, k, lam)))
    return _logpdf_rows(t, k, lam)


def _logpdf_rows(t, k, lam):
    """:func:`logpdf` with t of shape (N, m) against k, lam of shape (N, 1) (or all equal shapes):
    the parts that depend on k only are computed once per row."""
    kk = np.asarray(k, float)
    out = _log_central_pdf(t, kk)
    lam = np.asarray(lam, float)
    nc = np.broadcast_to(lam > 0, out.shape)
    if np.any(nc):
        z = 0.25 * lam * t
        kf, lf, zf = (np.broadcast_to(v, out.shape)[nc] for v in (kk, lam, z))
        out = np.array(out)
        out[nc] += -0.5 * lf + _log0f1(0.5 * kf, zf)
    return out


def _dlogpdf(t, k, lam):
    """d/dt of :func:`logpdf`: (k/2 - 1)/t - 1/2 + sqrt(lam/t)/2 * I_{k/2}(s)/I_{k/2-1}(s), s = sqrt(lam t)."""
    t, k, lam = np.broadcast_arrays(*(np.asarray(v, float) for v in (t, k, lam)))
    out = (0.5 * k - 1.0) / t - 0.5
    nc = lam > 0
    if np.any(nc):
        s = np.sqrt(lam[nc] * t[nc])
        ratio = gq._dlog_g_array(np.array(k[nc] - 1.0), np.array(np.minimum(s, gq.T_MAX)))
        out[nc] += 0.5 * np.sqrt(lam[nc] / t[nc]) * ratio
    return out


def _logsumexp_rows(vals):
    top = np.max(vals, axis=-1)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return top + np.log(np.sum(np.exp(vals - top[..., None]), axis=-1))


def _far_upper(x, k, lam):
    """log P[T > x] by Gauss-Laguerre from x outward; NaN where x is not past the mode."""
    l0 = logpdf(x, k, lam)
    kappa = -_dlogpdf(x, k, lam)
    ok = kappa > 0
    out = np.full(x.shape, np.nan)
    if np.any(ok):
        xo, ko, lo, kap, l0o = x[ok], k[ok], lam[ok], kappa[ok], l0[ok]
        t = xo[:, None] + _LAG_X[None, :] / kap[:, None]
        lt = _logpdf_rows(t, ko[:, None], lo[:, None])
        vals = _LOG_LAG_W + (lt - l0o[:, None] + _LAG_X)
        out[ok] = l0o - np.log(kap) + _logsumexp_rows(vals)
    return out


def _far_lower(x, k, lam):
    """log P[T <= x] by quadrature from x towards 0; NaN where x is not below the mode."""
    l0 = logpdf(x, k, lam)
    kappa = _dlogpdf(x, k, lam)
    ok = kappa > 0
    out = np.full(x.shape, np.nan)
    lag = ok & (kappa * x >= 60.0)
    if np.any(lag):
        xo, ko, lo, kap, l0o = x[lag], k[lag], lam[lag], kappa[lag], l0[lag]
        inside = _LAG_X[None, :] < (kap * xo)[:, None]
        t = np.maximum(xo[:, None] - _LAG_X[None, :] / kap[:, None], xo[:, None] * 1e-300)
        lt = _logpdf_rows(t, ko[:, None], lo[:, None])
        vals = np.where(inside, _LOG_LAG_W + (lt - l0o[:, None] + _LAG_X), -np.inf)
        out[lag] = l0o - np.log(kap) + _logsumexp_rows(vals)
    leg = ok & ~lag
    if np.any(leg):
        # integral over [0, x] with t = x u^2 (smooth in u for every k >= 2), 64-point Gauss-Legendre
        xo, ko, lo = x[leg], k[leg], lam[leg]
        u = 0.5 * (_LEG_X + 1.0)
        t = xo[:, None] * u[None, :] ** 2
        lt = _logpdf_rows(t, ko[:, None], lo[:, None])
        vals = lt + np.log(0.5 * _LEG_W * 2.0 * u)[None, :]
        out[leg] = np.log(xo) + _logsumexp_rows(vals)
    return out


def _contained(fn, other, x, k, lam):
    """``fn(x, k, lam)``, but a point where Boost raises (``ncx2.sf`` raises OverflowError from
    ``tgamma`` at x near 0 with noncentrality above about 1500) is taken as ``1 - other(...)`` (the
    complementary tail), or NaN (then the quadrature decides) where that raises as well: scipy
    is asked point by point only after the whole call failed."""
    try:
        return _quiet(fn, x, k, lam)
    except (ArithmeticError, ValueError, RuntimeError):
        pass
    out = np.empty(x.shape)
    for i, args in enumerate(zip(x, k, lam)):
        try:
            out[i] = _quiet(fn, *args)
        except (ArithmeticError, ValueError, RuntimeError):
            try:
                out[i] = 1.0 - _quiet(other, *args)
            except (ArithmeticError, ValueError, RuntimeError):
                out[i] = np.nan
    return out


def _scipy_log(noncentral, central, x, k, lam):
    """log of scipy's tail (``ncx2.sf`` is Boost's series, ``ncx2.cdf`` cdflib's ``chndtr``).

    The plain log of the probability: scipy's own ``logsf`` / ``logcdf`` first locate the
    median by a quantile search, which costs ten times the tail itself.  Near the targets the
    callers solve for (a tail below 1/2) the log of the probability loses nothing.
    """
    nc = lam > 0
    p = np.empty(x.shape)
    if np.any(nc):
        other = stats.ncx2.cdf if noncentral == stats.ncx2.sf else stats.ncx2.sf
        p[nc] = _contained(noncentral, other, x[nc], k[nc], lam[nc])
    if np.any(~nc):
        p[~nc] = _quiet(central, x[~nc], k[~nc])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.array(np.log(p), dtype=float)


def _log_tail(x, k, lam, noncentral, central, trust, far_tail):
    """log of one tail: scipy's (*noncentral* / *central*) where it is at least *trust*, else *far_tail*'s."""
    x, k, lam = np.broadcast_arrays(*(np.asarray(v, float) for v in (x, k, lam)))
    out = _scipy_log(noncentral, central, x, k, lam)
    far = ~(out >= trust) & (x > 0)
    if np.any(far):
        v = far_tail(x[far], k[far], lam[far])
        out[far] = np.where(np.isnan(v), out[far], v)
    return out


def logsf(x, k, lam):
    """log P[T > x] for T ~ chi2_k(lam): scipy above ``TRUST_LOG`` (-40), the quadrature below."""
    return _log_tail(x, k, lam, stats.ncx2.sf, stats.chi2.sf, TRUST_LOG, _far_upper)


def logcdf(x, k, lam):
    """log P[T <= x] for T ~ chi2_k(lam): scipy above ``TRUST_LOG_LOWER`` (-150), the quadrature below."""
    return _log_tail(x, k, lam, stats.ncx2.cdf, stats.chi2.cdf, TRUST_LOG_LOWER, _far_lower)
