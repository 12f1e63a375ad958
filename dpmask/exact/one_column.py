"""The exact privacy curve of Setting B when p = 1: noncentral chi-square pairs (chapter 7).

With one column the masked release carries exactly the information of a
noncentral chi-square statistic, so the privacy of a pair of neighbours is the
hockey-stick divergence between two noncentral chi-square laws
(:func:`ncx2_hockey_stick_log_delta`), and that of the mechanism its supremum
over neighbouring pairs (the worst neighbours, :func:`masked_p1_worst_pair`,
:func:`masked_p1_delta`, :func:`masked_p1_sigma`).

Every function behaves like a ufunc: arguments broadcast, a scalar call returns
a Python float; the curves are evaluated in log space.  Domain: eps in
[1e-4, 100], sigma in (0, 1e100], 2 <= n <= 1e6 (``N_MAX``; above it the
worst-pair search takes many seconds); outside it a ``ValueError`` names the
argument and the range.  Their tails come from ``dpmask.paper._ncx2``: scipy's where
it is accurate, a log-space quadrature of the density in the far tail, where
scipy's series under-states it; where P(T > c) - e^eps Q(T > c) would cancel
more than two digits the hockey stick is integrated directly.  Safe sides: a
mechanism's delta is an upper bound (``masked_p1_delta``: exactly 1 where a
rigorous bound puts it within 2**-54 of 1, 1e-300 where it underflows, never 0)
and ``masked_p1_sigma`` is raised after its root search until the computed
delta is below the target by more than its own error (1e-11 abs(log delta)),
so that the true delta is at most the target (``tests/test_safe_side.py``
checks this against mpmath); as sigma -> 0 delta -> 1 for every fixed eps.
The Gaussian curves of Setting A are in :mod:`dpmask.exact.gaussian`;
:mod:`dpmask.exact` gathers both.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats
from scipy.optimize import elementwise

from ..paper import _ncx2
from .._validate import as_float_array, broadcast_named, check_delta, check_eps, check_int, check_sigma, scalar_or_array
from .gaussian import _NEAR_ONE, _TOL, DELTA_SOLVE_MAX, LOG_DELTA_FLOOR, _solve_gauss_sigma

__all__ = [
    "masked_p1_worst_pair",
    "masked_p1_delta",
    "masked_p1_log_delta",
    "masked_p1_sigma",
    "ncx2_hockey_stick_log_delta",
]

#: Largest n (rows, or degrees of freedom) of the noncentral chi-square curves.
N_MAX = 10**6
#: Domain of eps for the noncentral chi-square curves (Setting B, p = 1, and the audits).
EPS_NCX2 = (1e-4, 100.0)
#: Smallest delta the noncentral chi-square sigma solvers accept: their threshold search
#: treats tails below 1e-300 as 0, which must stay far below the target.
DELTA_NCX2_MIN = 1e-250
#: Largest sigma of the noncentral chi-square curves (sigma^2 must not overflow).
SIGMA_NCX2_MAX = 1e100
#: Largest noncentrality accepted by ncx2_hockey_stick_log_delta.
LAM_MAX = 1e12


# --------------------------------------------------------------------------- noncentral chi-square pairs


#: log 0F1(; b; z) (Lemma 5.4's G_q in another normalisation).
_log0f1 = _ncx2._log0f1


def _ncx2_log_ratio(t, df, lam_p, lam_q):
    """log of the density ratio p_{lam_p}(t) / p_{lam_q}(t) of ncx2(df, .).

    The noncentral chi-square density is the central one times
    exp(-lam/2) 0F1(; df/2; lam t/4), so the central part cancels.
    """
    b = 0.5 * df
    return -0.5 * (lam_p - lam_q) + _log0f1(b, 0.25 * lam_p * t) - _log0f1(b, 0.25 * lam_q * t)


def _ncx2_logsf(c, df, lam):
    """log P[T > c], T ~ chi2_df(lam): scipy where it is accurate, a log-space quadrature in the far tail."""
    return _ncx2.logsf(c, df, lam)


def _ncx2_logcdf(c, df, lam):
    """log P[T <= c], T ~ chi2_df(lam), as :func:`_ncx2_logsf`."""
    return _ncx2.logcdf(c, df, lam)


def _log_diff(log_x, log_y):
    """log(x - y) for x >= y >= 0 given logs; -inf where y >= x."""
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.minimum(log_y - log_x, 0.0)
        out = log_x + np.log(-np.expm1(d))
    return np.where(np.isfinite(log_x), out, -np.inf)


#: Where the difference P - e^eps Q loses more than two digits (log(P/delta) > log 100) and
#: the tail is beyond e^-10, the hockey stick is integrated instead (:func:`_hs_tail_integral`).
_LOG_CANCEL = np.log(100.0)
_FAR_LOG_TAIL = -10.0


def _hs_tail_integral(c, eps, df, lam_p, lam_q):
    """log of int_c^inf p(t) (1 - e^(eps - L(t))) dt, L = log p/q, by Gauss-Laguerre from c.

    The hockey stick for lam_p > lam_q with threshold c, without the cancellation of
    P(T > c) - e^eps Q(T > c): the integrand is non-negative, vanishes at c like L'(c) (t - c)
    and decays like the tail of p.  With kappa = -d log p/dt at c and t = c + v/kappa, the rule of
    :mod:`dpmask.paper._ncx2` (exact to rounding for log tails beyond about -10, checked against
    mpmath) integrates it.  NaN where c is not past the mode of p.
    """
    kappa = -_ncx2._dlogpdf(c, df, lam_p)
    out = np.full(c.shape, np.nan)
    ok = kappa > 0
    if np.any(ok):
        x, e, k, lp, lq, kap = (v[ok] for v in (c, eps, df, lam_p, lam_q, kappa))
        t = x[:, None] + _ncx2._LAG_X[None, :] / kap[:, None]
        log_p = _ncx2._logpdf_rows(t, k[:, None], lp[:, None])
        excess = _ncx2_log_ratio(t, k[:, None], lp[:, None], lq[:, None]) - e[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            vals = _ncx2._LOG_LAG_W + log_p + _ncx2._LAG_X + np.log(-np.expm1(-np.maximum(excess, 0.0)))
        out[ok] = _ncx2._logsumexp_rows(vals) - np.log(kap)
    return out


def _hs_log_delta(eps, df, lam_p, lam_q):
    """log of the hockey-stick divergence H_{e^eps}(ncx2(df, lam_p) || ncx2(df, lam_q)).

    Validated, broadcast arrays.  The family has a monotone likelihood ratio
    in t, so the set {p > e^eps q} is a half-line: {T > c} when lam_p > lam_q
    and {T < c} when lam_p < lam_q, with c the root of the log density ratio
    = eps (it exists for lam_p > lam_q; for lam_p < lam_q only when the ratio
    at t = 0, exp((lam_q - lam_p)/2), exceeds e^eps, else delta = 0).
    """
    eps, df, lam_p, lam_q = np.broadcast_arrays(*(np.asarray(v, float) for v in (eps, df, lam_p, lam_q)))
    out = np.full(eps.shape, -np.inf)
    up = lam_p > lam_q
    down = (lam_p < lam_q) & (0.5 * (lam_q - lam_p) > eps)
    for mask, sign in ((up, 1.0), (down, -1.0)):
        if not np.any(mask):
            continue
        e, k, lp, lq = eps[mask], df[mask], lam_p[mask], lam_q[mask]

        def f(x, e, k, lp, lq):
            return sign * (_ncx2_log_ratio(np.exp(x), k, lp, lq) - e)

        x0 = np.log(k + 0.5 * (lp + lq))
        # Search t in [e^-50, t_max]: above t_max both laws have tail mass below 1e-300
        # (the noncentral chi-square tail is lighter than exp(-(sqrt t - sqrt lam)^2 / 2)
        # once t is past twice its mean), so a threshold there means delta = 0 in doubles.
        lmax = np.maximum(lp, lq)
        xmax = np.log(2.0 * (k + lmax) + (np.sqrt(lmax) + 45.0) ** 2 + 3000.0)
        br = elementwise.bracket_root(f, x0 - 0.1, x0 + 0.1, xmin=-50.0, xmax=xmax, args=(e, k, lp, lq))
        found = br.status == 0
        if np.any(~found & ~((br.status == -1) & (f(xmax, e, k, lp, lq) < 0))):
            raise RuntimeError("ncx2 hockey stick: threshold search failed; please report the arguments")
        val = np.full(e.shape, -np.inf)  # no threshold below t_max: the set {p > e^eps q} has no mass
        if np.any(found):
            args = (e[found], k[found], lp[found], lq[found])
            res = elementwise.find_root(f, (br.bracket[0][found], br.bracket[1][found]), args=args, tolerances=_TOL)
            if np.any(res.status < 0):
                raise RuntimeError("ncx2 hockey stick: threshold search failed; please report the arguments")
            c = np.exp(res.x)
            e_, k_, lp_, lq_ = args
            if sign > 0:
                tail_p = _ncx2_logsf(c, k_, lp_)
                v = _log_diff(tail_p, e_ + _ncx2_logsf(c, k_, lq_))
                # P(T > c) - e^eps Q(T > c) keeps 1/F of P(T > c): where F > 100 and the tail is
                # far enough for the Laguerre rule, integrate p (1 - e^(eps - log p/q)) instead
                severe = (tail_p - v > _LOG_CANCEL) & (tail_p < _FAR_LOG_TAIL)
                if np.any(severe):
                    w = _hs_tail_integral(c[severe], e_[severe], k_[severe], lp_[severe], lq_[severe])
                    v[severe] = np.where(np.isnan(w), v[severe], w)
                val[found] = v
            else:
                val[found] = _log_diff(_ncx2_logcdf(c, k_, lp_), e_ + _ncx2_logcdf(c, k_, lq_))
        out[mask] = val
    return out


def ncx2_hockey_stick_log_delta(eps, df, lam_p, lam_q):
    r"""log delta(eps) between two noncentral chi-square laws with equal df.

    .. math::

        \delta = \sup_S P(S) - e^\varepsilon Q(S),\quad
        P = \chi^2_{df}(\lambda_P),\; Q = \chi^2_{df}(\lambda_Q).

    Parameters
    ----------
    eps : array_like
        In [1e-4, 100].
    df : array_like
        Degrees of freedom, whole number in [2, 1e6].
    lam_p, lam_q : array_like
        Noncentralities, in [0, 1e12].

    Returns
    -------
    float or ndarray
        log delta (``-inf`` where delta = 0 or lies below about 1e-300 with
        the threshold beyond floating range); exactly 0 where a rigorous
        bound shows delta within 2**-54 of 1 (separated laws).

    Notes
    -----
    The family has a monotone likelihood ratio in t, so the optimal set is
    a half-line whose end c solves :math:`\log p_{\lambda_P}(c) - \log
    p_{\lambda_Q}(c) = \varepsilon`; then
    :math:`\delta = P(T > c) - e^\varepsilon Q(T > c)` (or with ``<`` when
    :math:`\lambda_P < \lambda_Q`), from ``scipy.stats.ncx2`` in log space.
    """
    eps = check_eps(eps, lower=EPS_NCX2[0], top=EPS_NCX2[1])
    df = check_int(df, "df", minimum=2, maximum=N_MAX)
    lams = {}
    for name, lam in (("lam_p", lam_p), ("lam_q", lam_q)):
        arr = as_float_array(lam, name)
        bad = ~np.isfinite(arr) | (arr < 0) | (arr > LAM_MAX)
        if np.any(bad):
            raise ValueError(f"{name} must be finite, >= 0 and <= {LAM_MAX:g}, got {arr[bad].flat[0]!r}")
        lams[name] = arr
    eps, df, lp, lq = broadcast_named(eps=eps, df=df, **lams)
    # separated laws: delta = 1 to double precision by the rigorous bound of _log_gap_upper,
    # applied to the pair in its own scale (sigma = 1, bound = sqrt(lam) of the larger law)
    hi, lo = np.maximum(lp, lq), np.minimum(lp, lq)
    sp, sq = np.sqrt(hi), np.sqrt(lo)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(sp > sq, sp - sq, 1.0)
        gap = np.where(sp > sq, _log_gap_upper(eps, 1.0 / d, df, sp / d), np.inf)
    sep = (gap < _LOG_HALF_ULP) & (lp > lq)
    out = np.zeros(eps.shape)
    rest = ~sep
    if np.any(rest):
        out[rest] = _hs_log_delta(eps[rest], df[rest], lp[rest], lq[rest])
    return scalar_or_array(out)


# --------------------------------------------------------------------------- worst neighbours


_S_FRACTIONS = np.array([0.0, 1e-4, 1e-3, 1e-2, 0.05, 0.2, 0.5, 1.0])
_LOG_FLOOR = -1.0e5  # stands in for log(0) inside root finders, far below any target


def _pair_from(r, s):
    return r**2 + s, max(r - 1.0, 0.0) ** 2 + s


def _grid_log_delta(eps, sigma, df, n_rows, bound):
    """log delta on the candidate grid for many (eps, sigma, df, n_rows) at once.

    Returns ``(vals, a, b, r, s)``, each of shape (elements, 2 * grid size):
    the first half of the columns are the pairs (hi, lo), the second (lo, hi).
    """
    eps, sigma, df, n_rows, bound = (
        np.asarray(v, float).ravel() for v in np.broadcast_arrays(eps, sigma, df, n_rows, bound)
    )
    lin, frac = (g.ravel() for g in np.meshgrid(np.linspace(0.0, 1.0, 7), _S_FRACTIONS, indexing="ij"))
    r = 1.0 + (np.maximum(bound, 1.0) - 1.0)[:, None] * lin[None, :]
    s = frac[None, :] * ((n_rows - 1.0) * bound**2)[:, None]
    hi = r**2 + s
    lo = np.maximum(r - 1.0, 0.0) ** 2 + s
    a = np.concatenate([hi, lo], axis=1)
    b = np.concatenate([lo, hi], axis=1)
    s2 = (sigma**2)[:, None]
    shape = a.shape
    vals = _hs_log_delta(
        np.broadcast_to(eps[:, None], shape), np.broadcast_to(df[:, None], shape), a / s2, b / s2
    )
    rr = np.concatenate([r, r], axis=1)
    ss = np.concatenate([s, s], axis=1)
    return vals, a, b, rr, ss


def _refine(eps, sigma, df, n_rows, bound, r0, s0, swap, start):
    """Bounded local search in (r, s) from a grid point; scalar arguments."""
    from scipy.optimize import minimize

    smax = (n_rows - 1.0) * bound**2
    rspan = max(bound - 1.0, 0.0)
    s2 = sigma**2

    def pair(z):
        aa, bb = _pair_from(1.0 + rspan * z[0], smax * z[1])
        return (bb, aa) if swap else (aa, bb)

    def neg(z):
        aa, bb = pair(z)
        v = _hs_log_delta(np.array([eps]), np.array([float(df)]), np.array([aa / s2]), np.array([bb / s2]))[0]
        return -max(v, _LOG_FLOOR)

    z0 = [(r0 - 1.0) / rspan if rspan > 0 else 0.0, s0 / smax if smax > 0 else 0.0]
    res = minimize(neg, z0, method="L-BFGS-B", bounds=[(0.0, 1.0 if rspan > 0 else 0.0), (0.0, 1.0)])
    if -res.fun > start[0]:
        return (float(-res.fun),) + tuple(float(v) for v in pair(res.x))
    return start


def _log_gap_upper(eps, sigma, df, bound):
    """log of an upper bound on 1 - delta for the corner pair, rigorous and overflow-free.

    For the pair a = bound^2, b = (bound - 1)^2 (squared norms) at noise sigma,
    with sqrt-noncentralities s_p = bound/sigma > s_q = (bound - 1)/sigma and any
    threshold c with s_q <= sqrt(c) <= s_p: under P, T <= c forces the coordinate
    along the mean below sqrt(c) - s_p, so P(T <= c) <= Phi(sqrt(c) - s_p); under
    Q, T > c forces ||Z|| > sqrt(c) - s_q, so Q(T > c) <= P(chi2_df > (sqrt(c) - s_q)^2).
    Hence delta >= 1 - Phi(sqrt(c) - s_p) - e^eps P(chi2_df > (sqrt(c) - s_q)^2).
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        sp = bound / sigma  # may be inf for sigma near 5e-324: the bounds below then give 1 - delta <= 0
        sq = np.maximum(bound - 1.0, 0.0) / sigma
        best = np.full(np.shape(sp), np.inf)
        for frac in (0.2, 0.35, 0.5, 0.65, 0.8, 0.9):
            sc = sq + frac * (sp - sq)
            miss_p = special.log_ndtr(sc - sp)
            over_q = eps + stats.chi2.logsf(np.square(sc - sq), df)
            best = np.minimum(best, np.logaddexp(miss_p, np.where(np.isnan(over_q), np.inf, over_q)))
        # Birge's tail bounds for noncentral chi-square (Lemma 8.1 of birge2001alternative):
        # P[T >= k + l + 2 sqrt((k + 2l) x) + 2x] <= e^-x and P[T <= k + l - 2 sqrt((k + 2l) x)] <= e^-x,
        # tighter than the above when df is large.
        k = df
        lp, lq = sp * sp, sq * sq
        vp, vq = np.sqrt(k + 2.0 * lp), np.sqrt(k + 2.0 * lq)
        for frac in (0.3, 0.5, 0.7, 0.85):
            c = k + lq + frac * (lp - lq)
            x_p = np.where(c < k + lp, ((k + lp - c) / (2.0 * vp)) ** 2, 0.0)
            u = c - k - lq
            root = (np.sqrt(vq * vq + 2.0 * u) - vq) / 2.0
            x_q = np.where(u > 0, root * root, 0.0)
            cand = np.logaddexp(-x_p, eps - x_q)
            best = np.minimum(best, np.where(np.isnan(cand), np.inf, cand))
    return best


#: Where the rigorous lower bound puts 1 - delta below this, delta is 1 in double precision.
_LOG_HALF_ULP = np.log(2.0**-54)


def _worst_pairs(eps, sigma, df, n_rows, bound):
    """Worst (log delta, a, b) for many points: the grid, then local refinement
    wherever the best grid point is not the corner r = bound, s = 0.

    Points where the corner pair alone already has delta = 1 to double
    precision (tiny sigma: the two laws are separated) are answered by that
    rigorous bound (:func:`_log_gap_upper`) without the numerical search,
    which would overflow there: log delta = 0 exactly, the truth lying within
    2**-54 of it.
    """
    eps, sigma, df, n_rows, bound = (
        np.asarray(v, float).ravel() for v in np.broadcast_arrays(eps, sigma, df, n_rows, bound)
    )
    # delta decreases in sigma, so separation at max(sigma, 1e-150) implies it at sigma
    # (and keeps 1/sigma finite); at 1e-150 every point of the domain is separated.
    sep = _log_gap_upper(eps, np.maximum(sigma, 1e-150), df, bound) < _LOG_HALF_ULP
    if np.any(sep):
        best_v = np.zeros(eps.shape)
        best_a = bound**2
        best_b = np.maximum(bound - 1.0, 0.0) ** 2
        rest = ~sep
        if np.any(rest):
            v, aa, bb = _worst_pairs(eps[rest], sigma[rest], df[rest], n_rows[rest], bound[rest])
            best_v[rest], best_a[rest], best_b[rest] = v, aa, bb
        return best_v, best_a, best_b
    vals, a, b, r, s = _grid_log_delta(eps, sigma, df, n_rows, bound)
    i = np.argmax(vals, axis=1)
    rows = np.arange(eps.size)
    best_v, best_a, best_b = vals[rows, i], a[rows, i], b[rows, i]
    corner = (r[rows, i] == r.max(axis=1)) & (s[rows, i] == 0.0)
    half = vals.shape[1] // 2
    for k in np.flatnonzero(~corner & np.isfinite(best_v)):
        v, aa, bb = _refine(eps[k], sigma[k], df[k], n_rows[k], bound[k], r[k, i[k]], s[k, i[k]],
                            i[k] >= half, (best_v[k], best_a[k], best_b[k]))
        best_v[k], best_a[k], best_b[k] = v, aa, bb
    return best_v, best_a, best_b


def _worst_pair(eps, sigma, df, n_rows, bound):
    """(log delta, a, b) for the worst ordered pair, scalar arguments."""
    v, a, b = _worst_pairs(eps, sigma, df, n_rows, bound)
    return float(v[0]), float(a[0]), float(b[0])


def _worst_log_delta(eps, sigma, df, n_rows, bound):
    eps, sigma, df, n_rows, bound = np.broadcast_arrays(eps, sigma, df, n_rows, bound)
    return _worst_pairs(eps, sigma, df, n_rows, bound)[0].reshape(eps.shape)


def _pair_sigma(eps, log_delta, df, a, b):
    """Vectorised sigma solving log delta(eps; a/sigma^2, b/sigma^2) = log_delta."""
    eps, log_delta, df, a, b = np.broadcast_arrays(eps, log_delta, df, a, b)
    shift = np.abs(a - b)
    guess = np.sqrt(shift * _solve_gauss_sigma(eps, np.exp(log_delta)) / np.sqrt(2.0 * df))
    x0 = np.log(guess)

    def f(x, eps, log_delta, df, a, b):
        s2 = np.exp(2.0 * x)
        return np.maximum(_hs_log_delta(eps, df, a / s2, b / s2), _LOG_FLOOR) - log_delta

    args = (eps, log_delta, df, a, b)
    br = elementwise.bracket_root(f, x0 - 0.3, x0 + 0.3, xmin=x0 - 12.0, xmax=x0 + 12.0, args=args)
    if np.any(br.status != 0):
        raise RuntimeError("sigma search: no bracket found; please report the arguments")
    res = elementwise.find_root(f, br.bracket, args=args, tolerances=dict(xrtol=1e-13, xatol=0.0))
    if np.any(res.status < 0):
        raise RuntimeError("sigma search did not converge; please report the arguments")
    return np.exp(res.x)


#: Relative tolerance on log delta when the worst-pair search checks a solved sigma
#: (the hockey stick is computed to about 1e-10 relative in log delta at tiny deltas).
_LOG_RTOL = 1e-8
#: Margin, relative to abs(log delta) (plus 1e-15), by which a solved sigma keeps the computed hockey
#: stick on the safe side of the target: it covers the error against mpmath (below 2e-12 in
#: log delta, 3e-13 relative), and near delta = 1, where log delta is tiny, stays below 1 - delta.
_HS_LOG_SLACK = 1e-11


def _hs_slack(log_delta):
    return _HS_LOG_SLACK * np.abs(log_delta) + 1e-15


def _to_safe_side(sigma, eps, log_delta, df, a, b, side):
    """Nudge each sigma until the pair's log delta is on the safe side of the target.

    The target is moved by ``_HS_LOG_SLACK`` abs(log delta) + 1e-15, which covers the error of the
    computed hockey stick, so that the true delta is on the safe side too.
    Relative steps 1e-12, 1e-11, ..., 1e-1; delta is monotone in sigma, so they get there.
    """
    sigma = np.array(sigma, float)
    sign = 1.0 if side == "upper" else -1.0
    target = log_delta - sign * _hs_slack(log_delta)
    for k in range(-12, 0):
        val = np.maximum(_hs_log_delta(eps, df, a / sigma**2, b / sigma**2), _LOG_FLOOR)
        unsafe = (val > target) if side == "upper" else (val < target)
        if not np.any(unsafe):
            return sigma
        sigma[unsafe] *= 1.0 + sign * 10.0**k
    raise RuntimeError("sigma search: could not reach the safe side; please report the arguments")


def _worst_sigma(eps, delta, df, n_rows, bound, max_rounds=6, side="upper"):
    """Smallest sigma with delta(worst pair) <= delta.

    Start from the corner pair (r = bound, s = 0), solve for sigma, look for a
    worse pair at that sigma with the full search, and re-solve for it if one
    exists.  Each round can only raise sigma, and the answer is the largest of
    the per-pair sigmas, so it stops at the supremum over the searched pairs.
    The result is then moved to its safe side (*side* "upper": a sufficient
    sigma, with delta(sigma) <= delta as computed, for the worst pair the full
    search finds at the final sigma; "lower": a lower bound, with
    delta(sigma) >= delta for the pair found) by relative steps 1e-12, 1e-11, ....
    """
    shape = np.broadcast_shapes(*(np.shape(v) for v in (eps, delta, df, n_rows, bound)))
    eps, delta, df, n_rows, bound = (
        np.array(v, float).ravel() for v in np.broadcast_arrays(eps, delta, df, n_rows, bound)
    )
    log_delta = np.log(delta)
    a = bound**2
    b = np.maximum(bound - 1.0, 0.0) ** 2
    sigma = _pair_sigma(eps, log_delta, df, a, b)
    for _ in range(max_rounds):
        v, aa, bb = _worst_pairs(eps, sigma, df, n_rows, bound)
        worse = v > log_delta + _LOG_RTOL * np.maximum(1.0, np.abs(log_delta))
        a[worse], b[worse] = aa[worse], bb[worse]
        if not np.any(worse):
            break
        sigma[worse] = np.maximum(
            sigma[worse], _pair_sigma(eps[worse], log_delta[worse], df[worse], a[worse], b[worse])
        )
    else:
        raise RuntimeError("worst-pair search did not settle; please report the arguments")
    sigma = _to_safe_side(sigma, eps, log_delta, df, a, b, side)
    if side == "upper":
        # a pair within _LOG_RTOL of the target was not re-solved: check the full search at the
        # final sigma, and nudge on whichever pair it finds above the target
        for _ in range(3):
            v, aa, bb = _worst_pairs(eps, sigma, df, n_rows, bound)
            over = v > log_delta - _hs_slack(log_delta)
            if not np.any(over):
                break
            a[over], b[over] = aa[over], bb[over]
            sigma = _to_safe_side(sigma, eps, log_delta, df, a, b, side)
    return sigma.reshape(shape)


# --------------------------------------------------------------------------- Setting B, p = 1


def _check_p1(eps, n):
    eps = check_eps(eps, lower=EPS_NCX2[0], top=EPS_NCX2[1])
    n = check_int(n, "n", minimum=2, maximum=N_MAX)
    return eps, n


def _check_solver_delta(delta):
    """delta for the noncentral chi-square sigma solvers: in [1e-250, 1 - 1e-12]."""
    return check_delta(delta, upper=DELTA_SOLVE_MAX, hypothesis=_NEAR_ONE, lower=DELTA_NCX2_MIN,
                       lower_reason=" for this solver (its threshold search treats tails below 1e-300 as 0)")


def _upper_side(log_delta):
    """A mechanism's log delta errs upward: -inf (delta below 1e-300, no threshold in range) -> log 1e-300."""
    return np.where(np.isneginf(log_delta), LOG_DELTA_FLOOR, log_delta)


def masked_p1_worst_pair(eps, sigma, n):
    r"""The neighbours that maximise delta(eps) in Setting B with p = 1.

    Parameters
    ----------
    eps : float
        In [1e-4, 100].
    sigma : float
        In (0, 1e100].
    n : int
        Rows, whole number in [2, 1e6].

    Returns
    -------
    tuple of float
        ``(log_delta, a, b)`` (log_delta as in :func:`masked_p1_log_delta`): the worst :math:`\log\delta` and the squared
        norms :math:`a = \|X\|^2`, :math:`b = \|X'\|^2` of the pair (the
        distribution is that of X, the comparison law that of X').
    """
    eps, n = _check_p1(eps, n)
    sigma = check_sigma(sigma, top=SIGMA_NCX2_MAX)
    if eps.ndim or n.ndim or np.ndim(sigma):
        raise ValueError("masked_p1_worst_pair takes scalar eps, sigma and n")
    v, a, b = _worst_pair(float(eps), float(sigma), float(n), float(n), 1.0)
    if np.isnan(v):
        raise ValueError("masked_p1_worst_pair: scipy's noncentral chi-square failed at these (eps, sigma, n); "
                         "no bound on delta can be given there (try n <= 1e5)")
    return float(_upper_side(v)), a, b


def masked_p1_log_delta(eps, sigma, n):
    r"""log of :func:`masked_p1_delta`, finite: floored at log(1e-300), an upper bound.

    Same domain as :func:`masked_p1_delta`; never ``-inf``: where delta lies
    below 1e-300 with no threshold in floating range it returns log(1e-300),
    an upper bound (a mechanism's delta errs upward only).
    """
    eps, n = _check_p1(eps, n)
    sigma = check_sigma(sigma, top=SIGMA_NCX2_MAX)
    eps, sigma, n = broadcast_named(eps=eps, sigma=sigma, n=n)
    out = _upper_side(_worst_log_delta(eps, sigma, n, n, 1.0))
    if np.any(np.isnan(out)):
        raise ValueError("masked_p1_log_delta: scipy's noncentral chi-square failed at these (eps, sigma, n); "
                         "no bound on delta can be given there (try n <= 1e5)")
    return scalar_or_array(out)


def masked_p1_delta(eps, sigma, n):
    r"""Exact delta(eps) of Setting B (noise, then a Haar mask) for p = 1.

    With one column the release :math:`Y = A(X + C)` is uniform on the sphere
    of radius :math:`\|X + C\|` whatever X is, so it carries exactly the
    information of :math:`T = \|X + C\|^2/\sigma^2 \sim
    \chi^2_n(\|X\|^2/\sigma^2)`.  Neighbours change one entry of
    :math:`X \in [-1, 1]^n` by at most 1, so the reachable pairs of squared
    norms are :math:`(a, b)` with :math:`a, b \in [0, n]`, :math:`|a - b| \le 1`.

    Parameters
    ----------
    eps : array_like
        In [1e-4, 100].
    sigma : array_like
        In (0, 1e100].  As sigma -> 0, delta -> 1: where a rigorous lower
        bound puts delta within 2**-54 of 1 the answer is exactly 1.0.
    n : array_like
        Rows, whole number in [2, 1e6] (above, the search takes many seconds).

    Returns
    -------
    float or ndarray
        :math:`\sup_{X \sim X'} \sup_S P_X(S) - e^\varepsilon P_{X'}(S)`,
        in (0, 1]; agrees with an mpmath quadrature of the worst pair to 1e-8
        relative (tests); never 0: below 1e-300 it reports the bound 1e-300.

    Notes
    -----
    The noncentral chi-square family has a monotone likelihood ratio in T, so
    for each pair the optimal set is a half-line and
    :math:`\delta = P_a(T > c) - e^\varepsilon P_b(T > c)` (for a > b) with
    c the root of the log density ratio :math:`= \varepsilon`; the hockey stick
    grows as a and b move apart, so the worst pair has :math:`|a - b| = 1`.
    The remaining position :math:`\min(a, b) \in [0, n - 1]` and the ordering
    are searched numerically (:func:`masked_p1_worst_pair`); the book's
    checks find the pair :math:`(\|X\|^2, \|X'\|^2) = (1, 0)` worst throughout.

    Examples
    --------
    >>> round(masked_p1_delta(1.0, 1.0, 10), 9)
    6.4877e-05
    """
    return scalar_or_array(np.exp(np.asarray(masked_p1_log_delta(eps, sigma, n))))


def masked_p1_sigma(eps, delta, n):
    r"""Smallest sigma making Setting B (eps, delta)-DP when p = 1, exactly.

    The inverse in sigma of :func:`masked_p1_delta`, which decreases in sigma
    (more noise is a post-processing: :math:`A(X + C) + C'` with independent
    :math:`C'` is the release at a larger sigma).  Compare with Theorem 3.4
    (:func:`dpmask.paper.bounds.sigma_b` with p = 1), a sufficient value.

    Parameters
    ----------
    eps : array_like
        In [1e-4, 100].
    delta : array_like
        In [1e-250, 1 - 1e-12].
    n : array_like
        Rows, whole number in [2, 1e6].

    Returns
    -------
    float or ndarray
        delta(sigma) matches delta to 1e-8 relative and lies on the safe side:
        the computed delta of the worst pair the search finds at the returned
        sigma is below the target by 1e-11 abs(log delta) + 1e-15 in log delta,
        more than its error against mpmath (below 2e-12 in log delta, 3e-13
        relative).

    Examples
    --------
    >>> round(masked_p1_sigma(0.1, 0.01, 100), 3)
    0.836
    """
    eps, n = _check_p1(eps, n)
    delta = _check_solver_delta(delta)
    eps, delta, n = broadcast_named(eps=eps, delta=delta, n=n)
    return scalar_or_array(_worst_sigma(eps, delta, n, n, 1.0))
