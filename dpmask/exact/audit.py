"""Lower bounds on the noise Setting B needs when p > 1, and Monte Carlo audits.

Post-processing cannot create privacy: if the release Y = A(X + C) is
(eps, delta)-DP, so is every statistic F(Y).  A statistic whose law we know
exactly therefore yields a *lower* bound on the sigma that Setting B needs:
any sigma at which F(Y) fails (eps, delta)-DP for some pair of neighbours is
too small for Y itself.  Two such statistics are exact here:

* ``"frobenius"``: :math:`\\|Y\\|_F^2/\\sigma^2 = \\|X + C\\|_F^2/\\sigma^2`, a
  noncentral chi-square with n p degrees of freedom and noncentrality
  :math:`\\|X\\|_F^2/\\sigma^2`;
* ``"projection"``: :math:`\\|Y w\\|^2/\\sigma^2` for the fixed unit vector
  :math:`w = (1, \\dots, 1)/\\sqrt p`.  Since :math:`Y w = A(Xw + Cw)` with
  :math:`Cw \\sim N(0, \\sigma^2 I_n)`, it is a noncentral chi-square with n
  degrees of freedom and noncentrality :math:`\\|Xw\\|^2/\\sigma^2`; the
  entries of :math:`Xw` lie in :math:`[-\\sqrt p, \\sqrt p]` and a neighbour
  moves one of them by at most 1, so the squared norm can jump by
  :math:`2\\sqrt p - 1` while the chi-square keeps only n degrees of freedom.

Both reduce to the one-dimensional worst-pair problem solved in
:mod:`dpmask.exact` (monotone likelihood ratio, half-line optimal sets).

Domain and safe side (the rule of the package).  The exact functions take
eps in [1e-4, 100], sigma in (0, 1e100], whole numbers n > p >= 1 with
n <= 1e6 (n p <= 1e6 for the Frobenius statistic, whose chi-square has n p degrees
of freedom), and for :func:`sigma_lower_bound` delta in [1e-250, 1 - 1e-12];
outside, a ``ValueError`` names the argument.  They claim a limit of privacy,
so they may only err downward: a delta that a rigorous bound shows within
2**-54 of 1 (tiny sigma) is returned as 1; a log delta that cannot be
computed is returned as ``-inf`` (a trivial lower bound); a sigma is nudged
down until its delta is at least the target.
:func:`mc_delta` estimates delta(eps) for any statistic by simulation, with a
Clopper-Pearson interval, to cross-check the exact curves.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..paper import mechanisms
from .._validate import (
    as_float_array,
    as_rng,
    broadcast_named,
    check_delta,
    check_eps,
    check_int,
    check_n_p,
    check_scalar,
    check_sigma,
    scalar_or_array,
)
from .one_column import (
    EPS_NCX2,
    N_MAX,
    SIGMA_NCX2_MAX,
    _check_solver_delta,
    _worst_log_delta,
    _worst_pair,
    _worst_sigma,
)

__all__ = [
    "STATISTICS",
    "statistic_log_delta",
    "statistic_delta",
    "statistic_worst_pair",
    "sigma_lower_bound",
    "mc_delta",
]

#: Most draws per data set mc_delta accepts (each draw is one n x p release).
MC_MAX_SAMPLES = 10**7

#: statistic name -> (degrees of freedom as a function of n, p; bound on the moved entry)
STATISTICS = ("projection", "frobenius")


def _stat_params(statistic, n, p):
    """(df, rows, bound) of the one-dimensional problem for a statistic."""
    if statistic == "projection":
        return n, n, np.sqrt(p)
    if statistic == "frobenius":
        # rows of X with squared norm <= p; a neighbour moves one row's norm by <= 1
        return n * p, n, np.sqrt(p)
    raise ValueError(f"statistic must be one of {STATISTICS + ('best',)}, got {statistic!r}")


def _check(eps, n, p, statistic="projection"):
    """Validate; the chi-square curves hold for df <= N_MAX: df = n (projection), n p (Frobenius)."""
    eps = check_eps(eps, lower=EPS_NCX2[0], top=EPS_NCX2[1])
    n, p = check_n_p(n, p)
    if statistic not in STATISTICS + ("best",):
        raise ValueError(f"statistic must be one of {STATISTICS + ('best',)}, got {statistic!r}")
    df = n * p if statistic == "frobenius" else n
    bad = np.asarray(df > N_MAX)
    if np.any(bad):
        what = "n * p" if statistic == "frobenius" else "n"
        raise ValueError(f"{what} must be <= {N_MAX:g} for the {statistic} statistic (the domain of the "
                         f"noncentral chi-square curves), got n={np.broadcast_to(n, bad.shape)[bad].flat[0]:g}, "
                         f"p={np.broadcast_to(p, bad.shape)[bad].flat[0]:g}")
    return eps, n, p


def statistic_worst_pair(eps, sigma, n, p, statistic="projection"):
    r"""Worst neighbours for a statistic of the Setting B release (scalars).

    Domain as :func:`statistic_log_delta`.

    Returns
    -------
    tuple of float
        ``(log_delta, a, b)`` with a and b the squared norms (of Xw for
        ``"projection"``, of X for ``"frobenius"``) under X and X'.
    """
    eps, n, p = _check(eps, n, p, statistic)
    sigma = check_sigma(sigma, top=SIGMA_NCX2_MAX)
    if any(np.ndim(v) for v in (eps, sigma, n, p)):
        raise ValueError("statistic_worst_pair takes scalar eps, sigma, n and p")
    df, rows, bound = _stat_params(statistic, float(n), float(p))
    v, a, b = _worst_pair(float(eps), float(sigma), df, rows, float(bound))
    return (-np.inf if np.isnan(v) else v), a, b  # a lower bound: -inf where scipy failed


def statistic_log_delta(eps, sigma, n, p, statistic="projection"):
    r"""log delta(eps) of a statistic of the Setting B release, worst neighbours.

    Parameters
    ----------
    eps : array_like
        Privacy parameter, in [1e-4, 100] (``EPS_NCX2``).
    sigma : array_like
        Noise standard deviation, in (0, 1e100] (``SIGMA_NCX2_MAX``).
    n, p : array_like
        Rows and columns, whole numbers, n > p >= 1; n <= 1e6 for the
        projection statistic, n p <= 1e6 for the Frobenius one.
    statistic : {"projection", "frobenius"}
        See the module docstring.

    Returns
    -------
    float or ndarray
        A lower bound on log delta(eps) of the whole release (Setting B,
        equation ``eq-setting-b``), by post-processing; in [-inf, 0].
    """
    eps, n, p = _check(eps, n, p, statistic)
    sigma = check_sigma(sigma, top=SIGMA_NCX2_MAX)
    eps, sigma, n, p = broadcast_named(eps=eps, sigma=sigma, n=n, p=p)
    df, rows, bound = _stat_params(statistic, n, p)
    out = _worst_log_delta(eps, sigma, df, rows, bound)
    # a lower bound: where scipy failed (NaN), log delta >= -inf holds trivially
    return scalar_or_array(np.where(np.isnan(out), -np.inf, out))


def statistic_delta(eps, sigma, n, p, statistic="projection"):
    """delta(eps) of a statistic of the release, in [0, 1]; see :func:`statistic_log_delta` (same domain)."""
    return scalar_or_array(np.exp(np.asarray(statistic_log_delta(eps, sigma, n, p, statistic))))


def sigma_lower_bound(eps, delta, n, p, statistic="best"):
    r"""A sigma below which Setting B cannot be (eps, delta)-DP.

    The smallest sigma at which the chosen statistic of the release is
    (eps, delta)-DP for all neighbours; the release needs at least as much.

    Parameters
    ----------
    eps : array_like
        Privacy parameter, in [1e-4, 100] (``EPS_NCX2``).
    delta : array_like
        In [1e-250, 1 - 1e-12].
    n, p : array_like
        Rows and columns, whole numbers, n > p >= 1; n <= 1e6 (n p <= 1e6
        for the Frobenius statistic).
    statistic : {"best", "projection", "frobenius"}
        ``"best"`` returns the larger of the two bounds (the projection bound
        alone where n p > 1e6, still a valid lower bound).

    Returns
    -------
    float or ndarray

    Notes
    -----
    For p = 1 both statistics equal :func:`dpmask.exact.masked_p1_sigma`,
    which is then exact up to its numerical worst-pair search (the pair
    (1, 0) is found by search, not proved worst).  Compare with Theorem 3.4
    (:func:`dpmask.paper.bounds.sigma_b`), an upper bound: the truth lies between.

    Examples
    --------
    >>> lo = sigma_lower_bound(0.1, 0.01, 100, 5)
    >>> from dpmask.paper.bounds import sigma_b
    >>> bool(lo < sigma_b(0.1, 0.01, 100, 5))
    True
    """
    eps, n, p = _check(eps, n, p, statistic)
    delta = _check_solver_delta(delta)
    eps, delta, n, p = broadcast_named(eps=eps, delta=delta, n=n, p=p)
    if statistic == "best":
        best = np.asarray(sigma_lower_bound(eps, delta, n, p, "projection"), dtype=float)
        # The Frobenius statistic (n p degrees of freedom) only where its curves hold; elsewhere the
        # projection bound alone is still a valid lower bound (it errs downward, the safe side).
        fro = np.asarray(n * p <= N_MAX)
        if np.any(fro):
            e, d, nn, pp = (np.broadcast_to(v, fro.shape)[fro] for v in (eps, delta, n, p))
            best = np.array(np.broadcast_to(best, fro.shape), dtype=float)
            best[fro] = np.maximum(best[fro], np.asarray(sigma_lower_bound(e, d, nn, pp, "frobenius")))
        return scalar_or_array(best)
    df, rows, bound = _stat_params(statistic, n, p)
    eps, delta, df, rows, bound = np.broadcast_arrays(eps, delta, df, rows, bound)
    return scalar_or_array(_worst_sigma(eps, delta, df, rows, bound, side="lower"))


def _sigma_lower_bounds(eps, delta, n, p, statistics):
    """:func:`sigma_lower_bound` at many points, each with its own statistic, in one search.

    *statistics* holds "projection" or "frobenius" per point (1-d, like the other arguments).  The
    searches of :func:`dpmask.exact.one_column._worst_sigma` treat every element on its own, so each value
    is bit for bit that of ``sigma_lower_bound(eps[i], delta[i], n[i], p[i], statistics[i])``; one
    call instead of one per statistic halves the fixed cost of a search (about 0.15 s of scipy's
    iteration set-up at small n), which is what the tightness explorer waits for.
    """
    statistics = np.asarray(statistics)
    eps, delta, n, p = (np.asarray(v, float).ravel() for v in np.broadcast_arrays(eps, delta, n, p))
    if statistics.shape != eps.shape:
        raise ValueError(f"statistics must have one entry per point ({eps.size}), got shape {statistics.shape}")
    df, rows, bound = np.empty_like(eps), np.empty_like(eps), np.empty_like(eps)
    for statistic in np.unique(statistics):
        at = statistics == statistic
        _, nn, pp = _check(eps[at], n[at], p[at], str(statistic))
        df[at], rows[at], bound[at] = _stat_params(str(statistic), nn, pp)
    return _worst_sigma(eps, _check_solver_delta(delta), df, rows, bound, side="lower")


def _batch_release_b(X, sigma, m, rng, chunk=4096):
    """m independent Setting B releases of X at once, by the frame identity.

    As in :func:`dpmask.paper.mechanisms.release_b` (method "frame"): with
    M = X + C and Z Gaussian, A M has the law of Z R_Z^{-1} R_M where
    R^T R is the Cholesky factorisation of the Gram matrix; here the p x p
    algebra is batched over draws, which is what makes Monte Carlo audits of
    thousands of releases cheap.
    """
    n, p = X.shape
    for start in range(0, m, chunk):
        k = min(chunk, m - start)
        M = X + sigma * rng.standard_normal((k, n, p))
        Z = rng.standard_normal((k, n, p))
        L_z = np.linalg.cholesky(np.swapaxes(Z, 1, 2) @ Z)
        L_m = np.linalg.cholesky(np.swapaxes(M, 1, 2) @ M)
        yield from Z @ np.linalg.solve(np.swapaxes(L_z, 1, 2), np.swapaxes(L_m, 1, 2))


def _clopper_pearson(k, m, alpha):
    lo = stats.beta.ppf(alpha / 2, k, m - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - alpha / 2, k + 1, m - k) if k < m else 1.0
    return float(lo), float(hi)


def _best_threshold(s_p, s_q, eps):
    """Threshold and direction maximising the empirical P(S) - e^eps Q(S)."""
    best = (-np.inf, 0.0, ">")
    grid = np.unique(np.quantile(np.concatenate([s_p, s_q]), np.linspace(0.0, 1.0, 401)))
    sp, sq = np.sort(s_p), np.sort(s_q)
    above_p = 1.0 - np.searchsorted(sp, grid, side="right") / sp.size
    above_q = 1.0 - np.searchsorted(sq, grid, side="right") / sq.size
    for direction, fp, fq in ((">", above_p, above_q), ("<=", 1.0 - above_p, 1.0 - above_q)):
        gain = fp - np.exp(eps) * fq
        i = int(np.argmax(gain))
        if gain[i] > best[0]:
            best = (float(gain[i]), float(grid[i]), direction)
    return best[1], best[2]


def mc_delta(stat_fn, X, X_prime, sigma, eps, n_samples, rng, method="frame", *,
             threshold=None, direction=">", confidence=0.95):
    r"""Monte Carlo estimate of P_X(S) - e^eps P_X'(S) for a statistic of Setting B.

    Releases :math:`Y = A(X + C)` are drawn with
    :func:`dpmask.paper.mechanisms.release_b` under X and under X'; ``stat_fn(Y)``
    reduces each to a number and S is a half-line of its values.  Without a
    given threshold, the first half of the draws picks the threshold and
    direction that maximise the empirical difference and the second half
    estimates it, so the interval is honest; the estimand is then a lower bound
    on the release's delta(eps).  With the Neyman-Pearson threshold of a
    statistic whose law is known, the estimand is that statistic's delta(eps).

    Parameters
    ----------
    stat_fn : callable
        Maps one release (n x p array) to a finite float; a NaN or infinite
        value raises a ValueError naming ``stat_fn`` (it would otherwise fall
        silently outside every threshold set and bias delta toward 0).
    X, X_prime : array_like
        Neighbouring data sets, entries in [-1, 1].
    sigma : float
        Noise standard deviation, in (0, 1e100].
    eps : float
        0 < eps <= 700 (so that e^eps is a finite float).
    n_samples : int
        Draws under each data set, 20 <= n_samples <= 1e7.
    rng : numpy.random.Generator or int
        Source of randomness (seed it).
    method : {"frame", "dense", "batch"}
        ``"frame"`` and ``"dense"`` draw each release with
        :func:`dpmask.paper.mechanisms.release_b`; ``"batch"`` draws them all at
        once by the same frame identity (much faster for many draws).
    threshold : float, optional
        Fixed threshold c; all draws then estimate.
    direction : {">", "<="}
        With a fixed threshold: S = {stat > c} or {stat <= c}.
    confidence : float
        Level of the interval (Clopper-Pearson on each probability, Bonferroni).

    Returns
    -------
    dict
        ``delta`` (point estimate), ``ci_low``, ``ci_high``, ``se`` (normal
        standard error), ``threshold``, ``direction``, ``n_used``.
    """
    X, X_prime, sigma, eps, n_samples, confidence, threshold = _check_mc_args(
        stat_fn, X, X_prime, sigma, eps, n_samples, confidence, threshold, direction, method)
    rng = as_rng(rng)
    mechanisms._check_masked_shape(X)
    s_p, s_q = _draw_statistics(stat_fn, X, X_prime, sigma, n_samples, rng, method)
    if threshold is None:
        half = n_samples // 2
        threshold, direction = _best_threshold(s_p[:half], s_q[:half], eps)
        s_p, s_q = s_p[half:], s_q[half:]
    return _half_line_delta(s_p, s_q, threshold, direction, eps, confidence)


def _check_mc_args(stat_fn, X, X_prime, sigma, eps, n_samples, confidence, threshold, direction, method):
    """:func:`mc_delta`'s arguments checked, in its order of refusal.

    Returns ``(X, X_prime, sigma, eps, n_samples, confidence, threshold)`` as arrays and floats
    (``threshold`` stays None when not given).
    """
    X = mechanisms.check_data(X)
    X_prime = mechanisms.check_data(X_prime, name="X_prime")
    if X.shape != X_prime.shape:
        raise ValueError(f"X and X_prime must have the same shape, got {X.shape} and {X_prime.shape}")
    diff = X - X_prime
    rows = np.flatnonzero(np.any(diff != 0, axis=1))
    if rows.size > 1 or (rows.size == 1 and np.linalg.norm(diff[rows[0]]) > 1 + 1e-12):
        raise ValueError("X and X_prime must be neighbours: differ in one row by an L2 distance <= 1")
    sigma = mechanisms._scalar_sigma(sigma)
    eps = float(check_scalar(check_eps(eps, top=700.0), "eps"))  # e^eps stays finite
    n_samples = check_int(n_samples, "n_samples", minimum=20)
    if n_samples.ndim:
        raise ValueError(f"n_samples must be a single whole number, got an array of shape {n_samples.shape}")
    n_samples = int(n_samples)
    if not callable(stat_fn):
        raise TypeError(f"stat_fn must be callable (one release -> a float), got {stat_fn!r}")
    if n_samples > MC_MAX_SAMPLES:
        raise ValueError(f"n_samples must be <= {MC_MAX_SAMPLES:g} draws per data set, got {n_samples}")
    confidence = float(as_float_array(confidence, "confidence"))
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if threshold is not None:
        threshold = float(as_float_array(threshold, "threshold"))
        if np.isnan(threshold):
            raise ValueError("threshold must be a number (not NaN) or None")
    if direction not in (">", "<="):
        raise ValueError(f"direction must be '>' or '<=', got {direction!r}")
    if method not in ("frame", "dense", "batch"):
        raise ValueError(f"method must be 'frame', 'dense' or 'batch', got {method!r}")
    return X, X_prime, sigma, eps, n_samples, confidence, threshold


def _draw_statistics(stat_fn, X, X_prime, sigma, n_samples, rng, method):
    """``stat_fn`` on n_samples Setting B releases of X, then of X_prime: two float arrays, all finite.

    A value that is not a real number is a TypeError, a NaN or infinite one a ValueError, each
    naming ``stat_fn`` (a NaN would fall silently outside every threshold set).
    """
    def stat(Y):
        value = stat_fn(Y)
        try:
            return float(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"stat_fn must return a real number for each release, got {value!r}") from exc

    if method == "batch":
        s_p = np.array([stat(Y) for Y in _batch_release_b(X, sigma, n_samples, rng)], float)
        s_q = np.array([stat(Y) for Y in _batch_release_b(X_prime, sigma, n_samples, rng)], float)
    else:
        s_p = np.array([stat(mechanisms.release_b(X, sigma, rng, method=method)) for _ in range(n_samples)], float)
        s_q = np.array(
            [stat(mechanisms.release_b(X_prime, sigma, rng, method=method)) for _ in range(n_samples)], float
        )
    for name, vals in (("X", s_p), ("X_prime", s_q)):
        bad = ~np.isfinite(vals)
        if np.any(bad):
            raise ValueError(f"stat_fn returned a non-finite value ({vals[bad][0]!r}) on a release of {name}; "
                             "it must map every release to a finite number")
    return s_p, s_q


def _half_line_delta(s_p, s_q, threshold, direction, eps, confidence):
    """Estimate and interval of P(S) - e^eps Q(S) for the half-line S of the statistic's values.

    The interval is Clopper-Pearson on each probability at level ``1 - (1 - confidence)/2``
    (Bonferroni over the two); ``se`` is the normal standard error.
    """
    m = s_p.size
    in_p = s_p > threshold if direction == ">" else s_p <= threshold
    in_q = s_q > threshold if direction == ">" else s_q <= threshold
    kp, kq = int(in_p.sum()), int(in_q.sum())
    alpha = (1.0 - confidence) / 2.0  # Bonferroni over the two probabilities
    p_lo, p_hi = _clopper_pearson(kp, m, alpha)
    q_lo, q_hi = _clopper_pearson(kq, m, alpha)
    fp, fq = kp / m, kq / m
    e = np.exp(eps)  # finite: eps <= 700
    se = float(np.hypot(np.sqrt(fp * (1 - fp) / m), e * np.sqrt(fq * (1 - fq) / m)))
    return {
        "delta": fp - e * fq,
        "ci_low": p_lo - e * q_hi,
        "ci_high": p_hi - e * q_lo,
        "se": se,
        "threshold": float(threshold),
        "direction": direction,
        "n_used": m,
    }
