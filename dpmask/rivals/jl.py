r"""The Johnson-Lindenstrauss projection as a rival of masking, calibrated to the book's neighbours.

Masking's closest relative: a random Gaussian matrix multiplies the data and
privacy comes from the projection itself, after a public alteration that
raises the smallest singular value (Blocki, Blum, Datta and Sheffet 2012);
Sheffet (2017) adds a private test of the smallest singular value and the
least-squares intervals.  :func:`jl_release` draws the r x p table ``R A'``,
:func:`jl_ols` fits least squares with intervals from it, and :func:`jl_w` /
:func:`jl_delta` give a calibration derived and computed here (its argument is
in :func:`jl_delta`).  Exported from :mod:`dpmask.rivals` as well.

References
----------
J. Blocki, A. Blum, A. Datta, O. Sheffet, "The Johnson-Lindenstrauss transform
itself preserves differential privacy", FOCS 2012.
O. Sheffet, "Differentially private ordinary least squares", ICML 2017.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy import integrate, optimize, stats

from ..paper import _ncx2
from .._validate import (as_float_array, as_rng, check_delta, check_eps, check_flag, check_matrix, check_scalar,
                        check_sigma)
from ._args import P_MAX, _one_eps_delta, _whole
from ..inference import _check_column, _check_gram
from ..paper.mechanisms import FRAME_MAX_ENTRIES, check_data

__all__ = [
    "jl_delta",
    "jl_delta_worst_pair",
    "jl_pair_delta",
    "jl_w",
    "jl_w_sheffet",
    "JLRelease",
    "jl_release",
    "JLFit",
    "jl_ols",
    "jl_ols_from_gram",
]

#: Largest number of projected rows r (the release is r x p; privacy curves stay accurate).
R_MAX = 10**9


def _logsumexp_diff(log_a, log_b):
    """log(a - b) for a >= b >= 0 given their logs (-inf where a <= b)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(log_a > log_b, log_a + np.log(-np.expm1(np.minimum(log_b - log_a, 0.0))), -np.inf)


_ULP = float(np.finfo(float).eps)
#: Relative error allowed for the chi-square tails of :func:`_chi2_log_tail` above 1e-300: 1e-10,
#: three times the largest error measured against 40-digit mpmath (3.3e-11, the quadrature at
#: r = 1e9 and a tail of 1e-300; scipy's own tails, where they are used, within 6e-12).
#: tests/test_safe_side.py checks the bounds that rest on it.
TAIL_RTOL = 1e-10
#: scipy's regularized incomplete gamma function is used for a chi-square log tail above this
#: value (or for r < 1000); below it, for r >= 1000, the log-space quadrature of
#: :mod:`dpmask.paper._ncx2`.  scipy's lower tail is wrong from r of about 1e6 on (by 8e-9 relative at
#: r = 1e6, by a factor 2 at r = 1e9, 5 standard deviations out: its large-a expansion).
_SCIPY_LOG_TAIL = -6.0
#: Smallest delta reported: below it the tails are not computed (a bound, not an estimate).
DELTA_FLOOR = 1e-300
_LOG_FLOOR = float(np.log(DELTA_FLOOR))


def _chi2_log_tail(x, r, upper):
    """log P[Q > x] (*upper*) or log P[Q <= x] for Q ~ chi2_r: scipy where it is accurate, else the quadrature."""
    with np.errstate(divide="ignore"):
        val = float(stats.chi2.logsf(x, r) if upper else stats.chi2.logcdf(x, r))
    if r >= 1000 and x > 0 and not val > _SCIPY_LOG_TAIL:
        args = (np.array([float(x)]), np.array([float(r)]), np.array([0.0]))
        with np.errstate(all="ignore"):
            far = float((_ncx2._far_upper if upper else _ncx2._far_lower)(*args)[0])
        if np.isfinite(far) or far == -np.inf:
            val = far
    return val


def _log_hockey_up(eps, log_a, log_eb, log_x, log_pdf_b, log_b):
    """Upper bound on log(a - e^eps b) from the computed logs of a and e^eps b.

    The allowance: each tail carries ``TAIL_RTOL`` plus the rounding of its log
    (8 ulp of ``|log|``), and the second tail's argument, divided by ``1 + mu``
    apart from the first, carries 4 ulp, i.e. ``4 ulp x f(x)/F(x)`` of the tail
    (F the tail, f the density at x).  The mismatch of the threshold itself
    costs nothing: any threshold gives a valid test set.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        kappa = np.exp(np.minimum(log_x + log_pdf_b - log_b, 700.0)) if np.isfinite(log_b) else 0.0
        eta_a = TAIL_RTOL + 8.0 * _ULP * (1.0 + abs(log_a))
        eta_b = TAIL_RTOL + 8.0 * _ULP * (1.0 + abs(log_eb) + abs(eps)) + 4.0 * _ULP * kappa
        terms = [float(_logsumexp_diff(log_a, log_eb)), log_a + np.log(eta_a), log_eb + np.log(eta_b)]
        return float(np.logaddexp.reduce([t for t in terms if t > -np.inf] or [-np.inf]))


def _mu_up(rho):
    """A mechanism parameter rounded up (delta grows with it): evaluating there is an upper bound."""
    return rho * (1.0 + 4.0 * _ULP)


def _log_delta_up(eps, mu, r):
    """log of an upper bound on delta(eps) of N(0, 1)^r against N(0, 1 + mu)^r, mu > 0 (P the first law).

    L = (r/2) log(1 + mu) - mu Q / (2 (1 + mu)), Q ~ chi2_r under P and
    Q = (1 + mu) Q' under the second law; L > eps iff Q < q*.
    """
    mu = _mu_up(mu)
    q = (r * np.log1p(mu) - 2.0 * eps) * (1.0 + mu) / mu
    if not q > 0:
        return -np.inf
    qb = q / (1.0 + mu)
    log_a = _chi2_log_tail(q, r, False)
    log_b = _chi2_log_tail(qb, r, False)
    if log_a < _LOG_FLOOR - 1.0:      # delta <= P(Q < q) < 1e-300 / e
        return -np.inf
    return _log_hockey_up(eps, log_a, eps + log_b, np.log(qb), float(stats.chi2.logpdf(qb, r)), log_b)


def _log_delta_down(eps, nu, r):
    """log of an upper bound on delta(eps) of N(0, 1)^r against N(0, 1 - nu)^r, 0 < nu < 1 (P the first law)."""
    nu = min(_mu_up(nu), 1.0 - _ULP)
    q = (2.0 * eps - r * np.log1p(-nu)) * (1.0 - nu) / nu
    qb = q / (1.0 - nu)
    log_a = _chi2_log_tail(q, r, True)
    log_b = _chi2_log_tail(qb, r, True)
    if log_a < _LOG_FLOOR - 1.0:      # delta <= P(Q > q) < 1e-300 / e
        return -np.inf
    return _log_hockey_up(eps, log_a, eps + log_b, np.log(qb), float(stats.chi2.logpdf(qb, r)), log_b)


def _as_delta(log_delta):
    """A reported delta: at most 1, never 0 (below 1e-300 the bound 1e-300)."""
    return float(min(1.0, max(np.exp(log_delta), DELTA_FLOOR)))


def _delta_up(eps, mu, r):
    """An upper bound on delta(eps) of N(0, 1)^r against N(0, 1 + mu)^r (:func:`_log_delta_up`)."""
    return _as_delta(_log_delta_up(eps, mu, r))


def _delta_down(eps, nu, r):
    """An upper bound on delta(eps) of N(0, 1)^r against N(0, 1 - nu)^r (:func:`_log_delta_down`)."""
    return _as_delta(_log_delta_down(eps, nu, r))


def jl_pair_delta(eps, mu1, mu2, r):
    r"""delta(eps) between ``r`` i.i.d. rows of ``N(0, I)`` and of ``N(0, I + diag(mu1, mu2))``.

    After whitening by the Gram matrix ``G`` of the first data set, one
    projected row of the JL release is ``N(0, I)`` under it and
    ``N(0, I + F)`` under its neighbour, ``F = G^{-1/2} (G' - G) G^{-1/2}`` of
    rank at most 2 with eigenvalues ``mu1 >= 0 >= mu2``.  The privacy loss of
    the r rows is

    .. math::

        L = \tfrac r2 \sum_k \log(1 + \mu_k) - \tfrac12 \sum_k \frac{\mu_k}{1 + \mu_k} Q_k,
        \qquad Q_k \sim \chi^2_r \text{ i.i.d.},

    and :math:`\delta = P(L > \varepsilon) - e^\varepsilon P'(L > \varepsilon)`.
    With one eigenvalue zero this is a chi-square tail in closed form; with two,
    one quadrature over ``Q_2`` of a chi-square distribution function (within
    about 2e-9 absolute where checked: 2.0e-9 at r = 2, whose integrand has a kink
    where the distribution function leaves 0; 3e-13 or better at r from 1 to 1000
    otherwise).  One direction only (the first law is the data set's own);
    the other direction is the pair ``(-mu2/(1+mu2), -mu1/(1+mu1))``.

    Parameters
    ----------
    eps : float
        1e-6 <= eps <= 10 (as :func:`jl_delta`).
    mu1, mu2 : float
        ``mu1 >= 0``, ``-1 < mu2 <= 0``.
    r : int
        Rows of the projection, 1 <= r <= 1e9.

    Returns
    -------
    float
        With one eigenvalue zero an upper bound (as :func:`jl_delta`, never 0);
        with two an *estimate* (the quadrature, within about 2e-9 absolute, clipped
        at 0), used by the tests to compare the arc's interior with its ends.
    """
    eps = float(check_scalar(check_eps(eps, lower=1e-6, top=10.0), "eps"))
    r = _whole(r, "r", 1, R_MAX)
    mu1 = float(check_scalar(as_float_array(mu1, "mu1"), "mu1"))
    mu2 = float(check_scalar(as_float_array(mu2, "mu2"), "mu2"))
    if not (np.isfinite(mu1) and np.isfinite(mu2) and mu1 >= 0 and -1 < mu2 <= 0):
        raise ValueError(f"need mu1 >= 0 and -1 < mu2 <= 0, got mu1={mu1!r}, mu2={mu2!r}")
    if mu1 == 0 and mu2 == 0:
        return 0.0
    if mu2 == 0:
        return _delta_up(eps, mu1, r)
    if mu1 == 0:
        return _delta_down(eps, -mu2, r)
    c = 0.5 * r * (np.log1p(mu1) + np.log1p(mu2))
    t = 2.0 * (c - eps)

    def prob(a1, a2):
        # P(a1 Q1 + a2 Q2 < t) = E_{Q2} F_r((t - a2 Q2)/a1), a1 > 0 > a2
        sd = np.sqrt(2.0 * r)
        lo, hi = max(0.0, r - 40 * sd), r + 40 * sd
        edges = np.linspace(lo, hi, 17)

        def f(q):
            return stats.chi2.cdf(max((t - a2 * q) / a1, 0.0), r) * stats.chi2.pdf(q, r)

        return sum(integrate.quad(f, a, b, epsabs=1e-13, epsrel=1e-11, limit=200)[0]
                   for a, b in zip(edges[:-1], edges[1:]))

    a1, a2 = mu1 / (1 + mu1), mu2 / (1 + mu2)
    return max(prob(a1, a2) - np.exp(eps) * prob(mu1, mu2), 0.0)


def _log_delta_worst(eps, rho, r):
    """log of an upper bound on the worst delta over the rank-one ends of the arc of radius rho."""
    if rho >= 1:
        return 0.0
    rho = max(rho, 1e-150)      # delta grows with rho: a larger rho bounds it (and 1/rho stays finite)
    mu = _mu_up(rho) / (1.0 - _mu_up(rho))
    return min(0.0, max(_log_delta_down(eps, rho, r), _log_delta_up(eps, mu, r)))


def jl_delta(eps, w, r, p):
    r"""delta(eps) of the JL release ``R A'`` with ``A'^T A' ⪰ w^2 I``, book's neighbours.

    Privacy argument.  The calibration rests on the derivation below, not on a
    theorem of the papers: it follows the structure of the argument of Blocki,
    Blum, Datta and Sheffet (2012), whose constant is a bound, and computes the
    constant instead.  The r rows of ``R A'`` are i.i.d. ``N(0, G)``,
    ``G = A'^T A'``.  A neighbour changes ``G`` by ``E = x x^T - x' x'^T``, so
    in coordinates whitened by ``G`` the neighbour's rows are
    ``N(0, I + F)``, ``F = G^{-1/2} E G^{-1/2}``, of rank <= 2.  Since
    ``G ⪰ w^2 I``, ``||F||_F <= ||E||_F / w^2 <= (2 sqrt(p) - 1)/w^2`` (Lemma 9.2),
    so ``(mu1, -mu2)`` lies in the quarter disc of radius
    ``rho = (2 sqrt(p) - 1)/w^2``.  Adding independent Gaussian noise to one
    whitened coordinate (and rescaling it) turns ``mu_k`` into any smaller
    ``|mu_k|`` of the same sign under both laws, so delta is monotone in each
    ``|mu_k|`` and its supremum over the disc lies on the arc.  On the arc
    the book's tests find the maximum at its ends (a rank-one change), by
    quadrature over a grid of the arc (:func:`jl_pair_delta`); this function
    returns the ends' value, the larger of the two directions of the pair
    ``N(0, 1)^r`` against ``N(0, 1 - rho)^r``, computed exactly from chi-square
    tails.  It is an upper bound, not attained: ``G`` contains the changed row's own
    ``x x^T``, so ``G`` is not ``w^2 I`` along the change.  The worst collinear pair
    (:func:`jl_delta_worst_pair`, ``G = x x^T + w^2 I``) has ``rho_up = Delta/(w^2 + (sqrt(p) - 1)^2)``
    and ``rho_down = Delta/(w^2 + p)`` and a smaller delta: chapter 9 reports by how much the
    calibration misses its target there.  What is proved: the disc and the
    monotonicity; what is computed: delta at the ends; what is checked
    numerically rather than proved: that no interior point of the arc is worse
    (tests/test_field.py checks it by quadrature for r from 100 to 10^4).

    Parameters
    ----------
    eps : float
        1e-6 <= eps <= 10.
    w : float
        The floor of the singular values of ``A'``, 0 < w <= 1e150 (every floor
        :func:`jl_w` returns).
    r : int
        Rows of the projection, 1 <= r <= 1e9.
    p : int
        Columns, 1 <= p <= 64.

    Returns
    -------
    float
        delta in [1e-300, 1] (1 when ``w^2 <= 2 sqrt(p) - 1``), an upper bound:
        the chi-square tails' computed difference plus its error allowance
        (``TAIL_RTOL`` = 1e-10 of each tail, the rounding of their logs and of
        the threshold), at ``rho`` rounded up; where a tail that bounds delta is
        below 1e-300, the bound 1e-300 (never 0).

    Examples
    --------
    >>> round(jl_delta(1.0, 20.0, 100, 2), 6) < 1e-3
    True
    """
    eps = float(check_scalar(check_eps(eps, lower=1e-6, top=10.0), "eps"))
    w = float(check_scalar(check_sigma(w, "w", top=W_MAX), "w"))
    r = _whole(r, "r", 1, R_MAX)
    p = _whole(p, "p", 1, P_MAX)
    return _delta_of_w(eps, w, r, p)


#: Largest floor w accepted by :func:`jl_delta` (w^2 stays finite; :func:`jl_w` returns at most about 3.5e6).
W_MAX = 1e150


def _log_delta_of_w(eps, w, r, p):
    """log of jl_delta's bound; rho = (2 sqrt(p) - 1)/w^2 rounded up (delta grows with rho)."""
    return _log_delta_worst(eps, _mu_up((2.0 * np.sqrt(p) - 1.0) / (w * w)), r)


def _delta_of_w(eps, w, r, p):
    return _as_delta(_log_delta_of_w(eps, w, r, p))


def jl_delta_worst_pair(eps, w, r, p):
    r"""delta(eps) of the JL release (altered branch) at the worst collinear pair of neighbours.

    The bound :func:`jl_delta` takes the whitening matrix at its floor ``w^2 I``; a real pair
    cannot reach it, because the release's Gram matrix ``G = A'^T A'`` contains the changed
    row.  Adding the other rows' ``K_rest`` to both data sets' ``G`` is a post-processing of the
    projected rows (independent ``N(0, K_rest)`` noise added to each), so the worst pair has
    ``K_rest = 0``: ``G = x x^T + w^2 I`` against ``G' = x' x'^T + w^2 I``.  For a collinear pair
    along a unit ``u`` with ``|x| = a``, ``|x'| = b`` the laws differ only along ``u``, variances
    ``w^2 + a^2`` and ``w^2 + b^2``; their ratio is largest at ``a = sqrt(p) - 1``, ``b = sqrt(p)``
    (``u = (1, ..., 1)/sqrt(p)``, Lemma 9.2's pair), so

    .. math::

        \delta = \max\bigl(\delta_{\uparrow}(\mu), \delta_{\downarrow}(\mu/(1 + \mu))\bigr),
        \qquad \mu = \frac{2\sqrt p - 1}{w^2 + (\sqrt p - 1)^2},

    the two orders of ``N(0, 1)^r`` against ``N(0, 1 + mu)^r``, exact chi-square tails.  This is
    a lower bound on the release's delta (a pair of neighbours attains it); non-collinear pairs
    are checked numerically in the tests, not proved to be less private.

    Parameters
    ----------
    eps, w, r, p
        As in :func:`jl_delta`.

    Returns
    -------
    float

    Examples
    --------
    >>> w = jl_w(0.1, 0.01, 1000, 2)
    >>> bool(jl_delta_worst_pair(0.1, w, 1000, 2) < 0.01)
    True
    """
    eps = float(check_scalar(check_eps(eps, lower=1e-6, top=10.0), "eps"))
    w = float(check_scalar(check_eps(w, "w"), "w"))
    r = _whole(r, "r", 1, R_MAX)
    p = _whole(p, "p", 1, P_MAX)
    mu = (2.0 * np.sqrt(p) - 1.0) / (w**2 + (np.sqrt(p) - 1.0) ** 2)
    return max(_delta_up(eps, mu, r), _delta_down(eps, mu / (1.0 + mu), r))


def jl_w(eps, delta, r, p):
    r"""Smallest floor ``w`` of the singular values for which the JL release is (eps, delta)-DP.

    The book's own calibration, not Sheffet's (2017): it is (eps, delta)-DP if Conjecture 9.1
    holds (the ends of the arc are worst, :func:`jl_delta`), and meets its target at the bound,
    not at a real pair of neighbours (:func:`jl_delta_worst_pair`, within 2 % of it).

    Solves :func:`jl_delta` ``(eps, w, r, p) = delta`` for ``w`` (delta falls
    as ``w`` grows) and returns a ``w`` at which the delta :func:`jl_delta`
    reports, an upper bound with its error allowance (``TAIL_RTOL`` and the
    rounding, see :func:`jl_delta`), is at most the target: the true delta of
    the returned floor is at or below the target.  For large r, ``w^2 ≈ (2 sqrt(p) - 1) z sqrt(r/2) / eps``
    roughly, with ``z`` a normal quantile of delta: ``w^2`` grows like
    ``sqrt(r)``.

    Parameters
    ----------
    eps, delta : float
        The target: 1e-6 <= eps <= 10, 1e-300 <= delta < 0.5 (below 1e-300 the
        chi-square tails are not computed).
    r, p : int
        As in :func:`jl_delta`.

    Returns
    -------
    float
        At most about 3.5e6 (3.4998e6 at eps = 1e-6, delta = 1e-300, r = 1e9, p = 64), inside
        :func:`jl_delta`'s domain of w.

    Examples
    --------
    >>> w = jl_w(0.1, 0.01, 1000, 2)
    >>> bool(jl_delta(0.1, w, 1000, 2) <= 0.01)
    True
    """
    eps, delta = _one_eps_delta(eps, delta)
    _check_delta_floor(delta)
    r = _whole(r, "r", 1, R_MAX)
    p = _whole(p, "p", 1, P_MAX)
    return _jl_w(eps, delta, r, p)


def _check_delta_floor(delta, lower=DELTA_FLOOR):
    """Refuse a target delta below *lower*: jl_delta reports no delta below 1e-300."""
    if delta < lower:
        raise ValueError(f"delta must be >= {lower:g} (jl_delta reports no delta below 1e-300: its chi-square "
                         f"tails stop there), got {delta!r}")


@lru_cache(maxsize=1024)
def _jl_w(eps, delta, r, p):
    """jl_w on validated Python scalars (cached: the engine and the release call it repeatedly).

    A root of log delta_worst(rho) = log delta in log rho (bracket widened at most 60 times,
    a named error if it cannot be), then w raised by relative steps 2**-52, 2**-51, ... (at
    most 80) until the bound :func:`jl_delta` reports at w is at most delta.
    """
    sens = 2.0 * np.sqrt(p) - 1.0
    log_target = np.log(delta)

    def f(log_rho):
        return max(_log_delta_worst(eps, np.exp(log_rho), r), -1e5) - log_target

    # delta -> 0 as rho -> 0; at rho close to 1 it is near 1
    lo, hi = np.log(1e-12), np.log(0.999)
    for _ in range(60):
        if f(lo) <= 0:
            break
        lo -= 10.0
    else:  # pragma: no cover - delta stays above the target down to rho = e^-628
        raise ValueError(f"jl_w found no floor w for eps={eps!r}, delta={delta!r}, r={r}: delta stays above "
                         "the target as w grows (outside the domain where the chi-square tails are accurate)")
    log_rho = hi if f(hi) <= 0 else optimize.brentq(f, lo, hi, xtol=1e-13, rtol=1e-13)
    w = float(np.sqrt(sens / np.exp(log_rho)))
    for j in range(80):  # stay on the safe side of the root, by the value jl_delta reports
        if _delta_of_w(eps, w, r, p) <= delta:
            return w
        w *= 1.0 + _ULP * 2.0**j
    raise ValueError(f"jl_w could not reach delta={delta!r} at eps={eps!r}, r={r}, p={p}")  # pragma: no cover


def jl_w_sheffet(eps, delta, r, p):
    r"""The floor ``w`` of a recalled closed-form calibration in Sheffet's style, for comparison only.

    Provenance: recalled, not reconstructed.  No copy of Sheffet (2017) was at hand, so this is
    NOT verified to be the published constant; the book's own calibration is :func:`jl_w`
    (conditional on Conjecture 9.1), and nothing in the comparison uses this one.

    .. math::

        w^2 = \frac{4 \Delta}{\varepsilon}\Bigl(\sqrt{2 r \ln(4/\delta)} + \ln(4/\delta)\Bigr),
        \qquad \Delta = 2\sqrt p - 1,

    the form recalled (without the paper at hand, so possibly not the paper's
    exact constant) from Sheffet's (2017) private JL algorithm, with the squared
    row-norm bound ``B^2``
    replaced by the Frobenius sensitivity of the book's neighbours.  The book
    does not rely on it: :func:`jl_w` is computed, and the tests measure how
    much larger this one is (its delta, :func:`jl_delta`, is far below the
    target).

    Parameters
    ----------
    eps, delta, r, p
        As in :func:`jl_w`.

    Returns
    -------
    float
    """
    eps, delta = _one_eps_delta(eps, delta)
    r = _whole(r, "r", 1, R_MAX)
    p = _whole(p, "p", 1, P_MAX)
    sens = 2.0 * np.sqrt(p) - 1.0
    L = np.log(4.0 / delta)
    return float(np.sqrt(4.0 * sens / eps * (np.sqrt(2.0 * r * L) + L)))


class JLRelease(NamedTuple):
    """Result of :func:`jl_release` (a named tuple).

    * ``table`` -- the r x p projected table ``R A'``;
    * ``w`` -- the floor of the singular values the projection was calibrated for;
    * ``altered`` -- True when ``A' = [A; w I]`` (rows ``w I`` appended), False when
      the private test passed and ``A' = A``;
    * ``eps_test``, ``eps_projection``, ``delta_projection`` -- how the budget was spent.
    """

    table: np.ndarray
    w: float
    altered: bool
    eps_test: float
    eps_projection: float
    delta_projection: float


def _jl_budget(eps, delta, test):
    """(eps_test, eps_proj, delta_proj, delta_bad) of the release."""
    if test:
        return eps / 2.0, eps / 2.0, delta / 2.0, delta / 2.0
    return 0.0, eps, delta, 0.0


def _jl_gram_law(K, eps, delta, r, test, rng, size):
    """Gram matrix G of the projected rows' law, w, and whether A was altered (for each draw)."""
    p = K.shape[0]
    eps_t, eps_p, delta_p, delta_bad = _jl_budget(eps, delta, test)
    w = jl_w(eps_p, delta_p, r, p)
    sens = 2.0 * np.sqrt(p) - 1.0
    if test:
        lam_min = float(np.linalg.eigvalsh(K)[0])
        b = sens / eps_t                       # Laplace scale: lambda_min(A^T A) has sensitivity 2 sqrt(p) - 1
        shift = b * np.log(1.0 / (2.0 * delta_bad))  # P(Lap(b) > shift) = delta_bad
        noisy = lam_min + rng.laplace(0.0, b, size) - shift
        altered = ~(noisy >= w**2)
    else:
        altered = np.ones(size, dtype=bool)
    return w, altered


def jl_release(X, eps, delta, r=None, rng=None, *, test=True, method="gram"):
    r"""The Johnson-Lindenstrauss projection of the data: an r x p table ``R A'``.

    Sheffet (2017), Algorithm 1, after Blocki, Blum, Datta and Sheffet (2012):

    1. (``test=True``) privately test whether the smallest singular value of
       ``A = X`` is already large: release
       ``λ̃ = λ_min(A^T A) + Lap(Δ/ε_1) - (Δ/ε_1) ln(1/(2 δ_1))`` with
       ``ε_1 = ε/2``, ``δ_1 = δ/2`` and ``Δ = 2 sqrt(p) - 1`` (by Weyl's inequality the
       change of ``λ_min`` is at most the operator norm of ``x x^T - x' x'^T``,
       at most ``Δ``, Lemma 9.2);
    2. if ``λ̃ >= w^2`` set ``A' = A``; otherwise append the public rows
       ``w I_p``: ``A' = [A; w I_p]``, so that ``A'^T A' = A^T A + w^2 I ⪰ w^2 I``;
    3. draw ``R`` (r x (n or n + p)) with i.i.d. N(0, 1) entries and publish ``R A'``.

    ``w = jl_w(ε_2, δ_2, r, p)`` with ``ε_2 = ε/2``, ``δ_2 = δ/2`` (``ε``, ``δ``
    with ``test=False``).  Privacy: step 3 is (ε_2, δ_2)-DP whenever
    ``A'^T A' ⪰ w^2 I`` (:func:`jl_delta` states the argument).  The test is
    (ε_1, 0)-DP (Laplace) and passes while ``λ_min(A^T A) < w^2`` with
    probability at most ``δ_1``; so the release is
    ``(ε_1 + ε_2, e^{ε_2}·0 + δ_2 + δ_1) = (ε, δ)``-DP (the test's pure DP
    composes with the projection, and the bad event adds its probability).

    Parameters
    ----------
    X : array_like, shape (n, p)
        Data with entries in [-1, 1] (the response, if any, among the columns).
    eps : float
        1e-6 <= eps <= 10 (2e-6 <= eps with ``test=True``: the projection gets half).
    delta : float
        2e-300 <= delta < 0.5 (the projection's half at least 1e-300, :func:`jl_w`).
    r : int or None
        Rows of the projection, 1 <= r <= 1e9; None: r = n.  The table takes
        r p floats (r p <= 2**26).
    rng : numpy.random.Generator, int or None
    test : bool
        Spend half the budget on the test of step 1 (default, as Sheffet),
        or always append ``w I`` and spend everything on the projection.
    method : {"gram", "dense"}
        ``"gram"`` (default): the rows of ``R A'`` are i.i.d. ``N(0, A'^T A')``,
        so draw them as ``N G^{1/2}`` with an r x p Gaussian ``N`` (O(n p^2 + r p^2),
        the same law); ``"dense"`` forms ``R`` (r (n + p) numbers, at most 2**26),
        the reference.

    Returns
    -------
    JLRelease

    Examples
    --------
    >>> X = np.random.default_rng(0).uniform(-1, 1, (500, 2))
    >>> rel = jl_release(X, 0.1, 1e-3, r=200, rng=1)   # lambda_min(X^T X) is about 170 < w^2
    >>> rel.table.shape, rel.altered, round(rel.w**2)
    ((200, 2), True, 671)
    """
    X = check_data(X)
    n, p = X.shape
    if p > P_MAX:
        raise ValueError(f"X must have at most {P_MAX} columns, got {p}")
    eps, delta = _one_eps_delta(eps, delta)
    _check_delta_floor(delta, 2 * DELTA_FLOOR)
    r = n if r is None else _whole(r, "r", 1, R_MAX)
    if r * p > FRAME_MAX_ENTRIES:
        raise ValueError(f"r * p must be <= {FRAME_MAX_ENTRIES} (the table's size), got r={r}, p={p}")
    if method not in ("gram", "dense"):
        raise ValueError(f"method must be 'gram' or 'dense', got {method!r}")
    test = check_flag(test, "test")
    if test and eps < 2e-6:
        raise ValueError(f"eps must be >= 2e-06 with test=True (the projection gets eps/2, and jl_w needs "
                         f">= 1e-06), got {eps!r}")
    rng = as_rng(rng)
    K = X.T @ X
    w, altered = _jl_gram_law(K, eps, delta, r, test, rng, 1)
    altered = bool(altered[0])
    eps_t, eps_p, delta_p, _ = _jl_budget(eps, delta, test)
    if method == "dense":
        A = np.vstack([X, w * np.eye(p)]) if altered else X
        if r * A.shape[0] > FRAME_MAX_ENTRIES:
            raise ValueError(f"method='dense' needs r (n + p) <= {FRAME_MAX_ENTRIES}, got r={r}, n={n}")
        table = rng.standard_normal((r, A.shape[0])) @ A
    else:
        G = K + (w**2 * np.eye(p) if altered else 0.0)
        vals, V = np.linalg.eigh(G)
        root = (V * np.sqrt(np.clip(vals, 0.0, None))) @ V.T
        table = rng.standard_normal((r, p)) @ root
    return JLRelease(table, w, altered, eps_t, eps_p, delta_p)


class JLFit(NamedTuple):
    """Result of :func:`jl_ols` (a named tuple).

    * ``coef``, ``se``, ``lower``, ``upper`` -- estimates, standard errors and
      the interval at the requested level, shape ``(k,)`` or ``(..., k)``;
    * ``target`` -- ``"ols"`` (the data's own least-squares coefficients,
      ``debias=True``) or ``"ridge"`` (``(Z^T Z + w^2 I)^{-1} Z^T y`` when
      altered, the data's OLS otherwise);
    * ``df`` -- the t distribution's degrees of freedom (``r - k``; ``inf``
      for the normal intervals of the debiased fit).
    """

    coef: np.ndarray
    se: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    target: str
    df: float


#: Largest entry of the Gram matrix S of a JL table (the fit's covariance multiplies two of them).
S_MAX = 1e150


def jl_ols_from_gram(S, r, w, altered, response=-1, *, debias=True, level=0.95):
    r"""Least squares with intervals from the Gram matrix ``S = T^T T`` of a JL table ``T``.

    The r rows of ``T = R A'`` are i.i.d. ``N(0, G)``, ``G = A'^T A'``.

    * ``debias=False`` (Sheffet 2017): ordinary least squares on ``T``,
      ``b = S_zz^{-1} S_zy``.  Regressing one coordinate of a Gaussian vector
      on the others is an exact Gaussian linear model, so the textbook t
      intervals with ``r - k`` degrees of freedom are exact for its
      coefficient ``G_zz^{-1} G_zy``, which is the ridge solution
      ``(Z^T Z + w^2 I)^{-1} Z^T y`` when ``w I`` was appended, and the data's own
      least squares when it was not.
    * ``debias=True`` (default): ``b = (S_zz/r - w^2 I)^{-1} S_zy/r`` removes the
      known ``w^2 I`` (consistent for the data's own least squares as r grows);
      first-order covariance, with ``v = (-b, 1)`` and ``H = S_zz/r - w^2 I``,

      .. math::

          \operatorname{Cov}(b) \approx H^{-1}\bigl(\hat G_{zz}\, v^\top \hat G v
          + (\hat G v)_z (\hat G v)_z^\top\bigr) H^{-1} / r,\quad \hat G = S/r,

      from the Wishart covariance ``Cov(S_ab, S_cd) = r (G_ac G_bd + G_ad G_bc)``;
      normal intervals.

    Parameters
    ----------
    S : array_like, shape (p, p) or (..., p, p)
        ``T^T T`` (a stack for simulations), entries at most 1e150 in absolute value.
    r : int
        Rows of the table, r > k = p - 1.
    w : float
        The floor used by the release (``JLRelease.w``), >= 0.
    altered : bool or array of bool
        Whether ``w I`` was appended (per matrix of the stack).
    response : int
        Column of the response, in [-p, p - 1].
    debias : bool
    level : float
        Interval level, 0 < level < 1.

    Returns
    -------
    JLFit
        A coefficient whose (debiased) predictor block is not positive definite
        is returned as computed (the solve may still succeed); ``se`` is NaN where
        the covariance is not finite.
    """
    S = _check_gram(S, "S", batch=True)
    if np.max(np.abs(S)) > S_MAX:
        raise ValueError(f"S must have entries at most {S_MAX:g} in absolute value (the debiased covariance "
                         f"squares them), got {np.max(np.abs(S)):g}")
    p = S.shape[-1]
    if p < 2:
        raise ValueError(f"a regression needs p >= 2 columns, got p={p}")
    response = _check_column(response, p, "response")
    k = p - 1
    r = _whole(r, "r", k + 1, R_MAX)
    w = float(check_scalar(as_float_array(w, "w"), "w"))
    if not np.isfinite(w) or w < 0:
        raise ValueError(f"w must be finite and >= 0, got {w!r}")
    level = float(check_scalar(as_float_array(level, "level"), "level"))
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    if not isinstance(altered, (bool, np.bool_)) and np.asarray(altered).dtype.kind != "b":
        raise TypeError(f"altered must be True or False (or an array of bools), got {altered!r}")
    debias = check_flag(debias, "debias")
    try:
        altered = np.broadcast_to(np.asarray(altered, dtype=bool), S.shape[:-2])
    except ValueError as exc:
        raise ValueError(f"altered must broadcast to the stack's shape {S.shape[:-2]}, got shape "
                         f"{np.shape(altered)}") from exc
    pred = np.array([j for j in range(p) if j != response])
    Szz = S[..., pred[:, None], pred[None, :]]
    Szy = S[..., pred, response]
    if not debias:
        b = np.linalg.solve(Szz, Szy[..., None])[..., 0]
        rss = S[..., response, response] - np.einsum("...i,...i->...", Szy, b)
        s2 = rss / (r - k)
        cov = s2[..., None, None] * np.linalg.inv(Szz)
        df = float(r - k)
        q = stats.t.ppf(0.5 + level / 2, df)
        target = "ridge"
    else:
        Gh = S / r
        shift = np.where(altered, w**2, 0.0)[..., None, None] * np.eye(k)
        H = Gh[..., pred[:, None], pred[None, :]] - shift
        b = np.linalg.solve(H, Gh[..., pred, response][..., None])[..., 0]
        v = np.zeros(S.shape[:-1])
        v[..., response] = 1.0
        v[..., pred] = -b
        Gv = np.einsum("...ij,...j->...i", Gh, v)
        vGv = np.einsum("...i,...i->...", v, Gv)
        Gvz = Gv[..., pred]
        meat = Gh[..., pred[:, None], pred[None, :]] * vGv[..., None, None] + Gvz[..., :, None] * Gvz[..., None, :]
        with np.errstate(invalid="ignore", over="ignore"):
            Hinv = np.linalg.inv(H)
            cov = Hinv @ meat @ Hinv / r
        df = np.inf
        q = stats.norm.ppf(0.5 + level / 2)
        target = "ols"
    se = np.sqrt(np.clip(np.diagonal(cov, axis1=-2, axis2=-1), 0.0, None))
    return JLFit(b, se, b - q * se, b + q * se, target, df)


def jl_ols(release, response=-1, *, debias=True, level=0.95):
    """Least squares with confidence intervals from a JL release (Sheffet 2017).

    :func:`jl_ols_from_gram` applied to ``T^T T`` of ``release.table``.

    Parameters
    ----------
    release : JLRelease
        From :func:`jl_release`.
    response, debias, level
        See :func:`jl_ols_from_gram`.

    Returns
    -------
    JLFit

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.uniform(-1, 1, 20000)
    >>> X = np.column_stack([z, 0.5 * z + rng.uniform(-0.5, 0.5, 20000)])
    >>> beta_data = (X[:, 0] @ X[:, 1]) / (X[:, 0] @ X[:, 0])   # the data's own slope
    >>> fit = jl_ols(jl_release(X, 1.0, 1e-3, rng=1))
    >>> bool(fit.lower[0] < beta_data < fit.upper[0]), fit.target
    (True, 'ols')
    """
    if not isinstance(release, JLRelease):
        raise TypeError("release must be the JLRelease returned by jl_release")
    T = check_matrix(release.table, "release.table")
    return jl_ols_from_gram(T.T @ T, T.shape[0], release.w, release.altered, response, debias=debias, level=level)
