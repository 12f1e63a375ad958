r"""The comparison engine of chapter 9: every mechanism, one data set, one (eps, delta).

For data with Gram matrix ``K = X^T X`` (n rows, p columns, the response last)
and one privacy level, :func:`compare_mechanisms` draws ``reps`` releases of
each mechanism and reports the error of the least-squares slopes against the
data's own (uncentred) least-squares slopes ``K_zz^{-1} K_zy``:

* ``"A"``: Setting A at the analytic Gaussian ``sigma_A`` (tight, unmasked);
* ``"B0"``: Setting B at Theorem 3.4's ``sigma_0`` (:func:`dpmask.paper.bounds.sigma_b`);
* ``"Blow"``: Setting B at the projection lower bound ``sigma_low``
  (:func:`dpmask.exact.audit.sigma_lower_bound` for n <= 10^6, its large-n form
  :func:`dpmask.rivals.gram.sigma_low_large_n` above), below which masking cannot go;
* ``"gram"``: the Gaussian mechanism on ``X^T X`` (:func:`dpmask.rivals.gram.release_gram`);
* ``"gram_table"``: the same noisy Gram matrix made a table
  (:func:`dpmask.rivals.gram_to_table.gram_table`), analysed by row software as if it were data;
* ``"adassp"``: :func:`dpmask.rivals.ssp.adassp` (Wang's split of the budget in three);
* ``"adassp_joint"``: the same with the three releases calibrated together
  (``composition="gaussian"``);
* ``"jl"``: the JL projection with Sheffet's private test (:func:`dpmask.rivals.jl.jl_release`),
  ``r = n`` rows unless ``r`` is given, debiased least squares with intervals
  (:func:`dpmask.rivals.jl.jl_ols`), calibrated by the book's own :func:`dpmask.rivals.jl.jl_w`;
* ``"jl_always"``: the same, always appending ``w I`` (no test, the whole budget
  on the projection);
* ``"jl_best"``: the always variant at ``r = JL_CAP * n`` rows, the best r under the cap
  ``r <= 100 n``: its first-order error falls with r at every n (chapter 9's figure), because
  ``w^2`` grows like ``sqrt(r)`` while the Wishart noise falls like ``1/sqrt(r)``;
* ``"wishart"``: the Wishart mechanism of Jiang, Xie and Zhang (2016)
  (:func:`dpmask.rivals.wishart.wishart_mechanism`, calibrated to (eps, delta)), slopes from the
  debiased ``K + W - (p + 1) c I``.

An RMSE exists only where the estimator has a second moment: :func:`rmse_reported` gives it
where the corrected matrix the slopes are solved from is positive definite in more than
99 % of the draws (``NOT_PD_MAX``), and None elsewhere, where the median and the 90 %
quantile of the absolute error (:func:`summarise`) and the not-PD rate are the numbers to report.

Every mechanism here depends on the data only through ``K`` (Lemma 9.1 for
masking; the JL rows are i.i.d. ``N(0, A'^T A')``), so the draws are made at
the p x p level: :func:`dpmask.inference.simulate_gram` for masking, Wishart
matrices for JL; cost O(p^3) per draw whatever n is.

Masking's slopes are chapter 6's method-of-moments estimate
``(G_zz - n sigma^2 I)^{-1} G_zy``, computed in every draw (even where the
corrected block is not positive definite, so its errors are heavy-tailed there);
intervals come from :func:`dpmask.inference.ols_from_gram` (``conditional=True``,
target the data's own slopes) and exist only where the corrected block is
positive definite: a draw without an interval counts as not covering.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from ..exact import audit
from ..paper import bounds
from . import gram, gram_to_table, jl, ssp, wishart
from .._validate import as_rng, check_delta, check_eps, check_flag, check_int, check_scalar
from ..exact.gaussian import analytic_gaussian_sigma
from ..inference import _check_gram, ols_from_gram, simulate_gram
from ..paper.mechanisms import check_data

__all__ = [
    "MECHANISMS",
    "noise_levels",
    "simulate_slopes",
    "first_order_rmse",
    "first_order_margin",
    "summarise",
    "rmse_reported",
    "compare_mechanisms",
    "compare_from_gram",
]

#: The mechanisms compared, in the order of the book's table (see the module docstring).
MECHANISMS = ("A", "B0", "Blow", "gram", "gram_table", "adassp", "adassp_joint", "jl", "jl_always", "jl_best",
              "wishart")
#: The cap on the JL projection's rows for ``"jl_best"``: r <= JL_CAP * n (a release 100 times the data's size).
JL_CAP = 100
#: Largest not-positive-definite rate at which an RMSE is reported (:func:`rmse_reported`).
NOT_PD_MAX = 0.01
#: Smallest :func:`first_order_margin` at which chapter 9 reports a first-order RMSE.
MARGIN_MIN = 5.0
#: Largest n at which sigma_low is the exact projection bound (the audit's domain).
N_EXACT_LOW = 10**6
_Z975 = float(stats.norm.ppf(0.975))
_Z99 = float(stats.norm.ppf(0.99))


def _sigma_low(eps, delta, n, p, low="exact"):
    if low not in ("exact", "large_n"):
        raise ValueError(f"low must be 'exact' or 'large_n', got {low!r}")
    if low == "exact" and n <= N_EXACT_LOW:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # scipy's ncx2 series at large n
            return float(audit.sigma_lower_bound(eps, delta, n, p, statistic="projection"))
    return float(gram.sigma_low_large_n(eps, delta, n, p))


def _jl_rows(n, r):
    return n if r is None else int(r)


def _check_levels(eps, delta, n, p, r, kinds):
    """The shared arguments of the engine, each a single number of its kind (a named error otherwise)."""
    eps = float(check_scalar(check_eps(eps), "eps"))
    delta = float(check_scalar(check_delta(delta), "delta"))
    p = int(check_scalar(check_int(p, "p", minimum=1), "p"))
    n = int(check_scalar(check_int(n, "n", minimum=p + 1), "n"))
    r = None if r is None else int(check_scalar(check_int(r, "r", minimum=1, maximum=jl.R_MAX), "r"))
    if isinstance(kinds, (str, bytes)) or not all(isinstance(k, str) for k in np.ravel(np.asarray(kinds, object))):
        raise TypeError(f"kinds must be a sequence of mechanism names among {MECHANISMS}, got {kinds!r}")
    return eps, delta, n, p, r


def noise_levels(eps, delta, n, p, *, r=None, kinds=MECHANISMS, low="exact"):
    """The noise parameter of each mechanism at (eps, delta), n rows, p columns.

    ``low="exact"`` takes sigma_low from the exact projection bound where n <= 10^6 (a second or
    more per call); ``low="large_n"`` from its large-n form everywhere (within 1 % for n >= 1000,
    slightly below, chapter 9), which is what a page that must run fast should use.

    Returns a dict: ``sigma`` for A, B0, Blow (data noise); ``tau`` for gram and
    gram_table (Gram noise, diagonal); the :func:`dpmask.rivals.ssp.adassp_noise`
    dict for adassp; ``w`` (and r) for the JL variants; ``c`` (the scale) for wishart.

    Raises ValueError naming delta where the Wishart mechanism's scale, which grows like 1/delta,
    passes 1e100 / sqrt(2 (p + 1)) (delta below about 1e-100): its errors have no finite
    first-order description there.
    """
    eps, delta, n, p, r = _check_levels(eps, delta, n, p, r, kinds)
    out = {}
    for kind in kinds:
        if kind == "A":
            out[kind] = {"sigma": float(analytic_gaussian_sigma(eps, delta))}
        elif kind == "B0":
            out[kind] = {"sigma": float(bounds.sigma_b(eps, delta, n, p))}
        elif kind == "Blow":
            out[kind] = {"sigma": _sigma_low(eps, delta, n, p, low)}
        elif kind in ("gram", "gram_table"):
            out[kind] = {"tau": float(gram.sigma_gram(eps, delta, p))}
        elif kind in ("adassp", "adassp_joint"):
            out[kind] = ssp.adassp_noise(eps, delta, p, composition="basic" if kind == "adassp" else "gaussian")
        elif kind in ("jl", "jl_always", "jl_best"):
            test = kind == "jl"
            _, eps_p, delta_p, _ = jl._jl_budget(eps, delta, test)
            rr = JL_CAP * int(n) if kind == "jl_best" else _jl_rows(n, r)
            out[kind] = {"w": jl.jl_w(eps_p, delta_p, rr, p), "r": rr, "test": test}
        elif kind == "wishart":
            c = wishart.wishart_scale(eps, delta, p)
            # its noise in Gram units, tau = sqrt(2 (p + 1)) c, must stay in the covariances' domain
            # (tau <= 1e100): the scale grows like 1/delta, past it for delta below about 1e-100
            if np.sqrt(2.0 * (p + 1)) * c > 1e100:
                raise ValueError(f"delta must be large enough for the Wishart mechanism's noise scale to stay "
                                 f"below 1e100 in the comparison (its scale grows like 1/delta); got delta={delta!r}, "
                                 f"scale {c:.3g}")
            out[kind] = {"c": c}
        else:
            raise ValueError(f"kind must be one of {MECHANISMS}, got {kind!r}")
    return out


def _solve_all(H, b):
    """Solve a stack H x = b; draws with a singular H get a least-squares (pseudo-inverse) answer."""
    try:
        return np.linalg.solve(H, b[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return np.einsum("...ij,...j->...i", np.linalg.pinv(H), b)


def _fit_corrected(Gc, G, n, k, beta, **noise_model):
    """Slopes, positive-definiteness flags and 95 % coverage from a stack of noisy Gram matrices.

    ``Gc`` are the corrected Gram matrices the slopes are solved from; ``G`` the released ones
    that :func:`~dpmask.inference.ols_from_gram` takes, with ``noise_model`` (``sigma=`` for
    masking, ``noise="gram", tau=`` for the rival) for its conditional intervals, computed where
    the predictor block of ``Gc`` is positive definite (elsewhere the interval counts as a miss).
    """
    not_pd_block = np.linalg.eigvalsh(Gc[:, :k, :k])[:, 0] <= 0
    covered = np.zeros((len(Gc), k), dtype=bool)
    ok = ~not_pd_block
    if ok.any():
        fit = ols_from_gram(G[ok], n, k, conditional=True, **noise_model)
        covered[ok] = np.abs(fit.coef - beta) <= _Z975 * fit.se
    return {"coef": _solve_all(Gc[:, :k, :k], Gc[:, :k, k]), "not_pd": np.linalg.eigvalsh(Gc)[:, 0] <= 0,
            "not_pd_block": not_pd_block, "covered": covered}


def simulate_slopes(kind, K, n, eps, delta, reps, rng, *, r=None, level=None):
    """Draw ``reps`` releases of one mechanism and fit the slopes of the last column.

    Returns a dict with ``coef`` (reps, k), ``covered`` (reps, k) booleans or
    None (no intervals), ``not_pd`` and ``not_pd_block`` (reps,) booleans or
    None (the corrected p x p Gram matrix, and its predictor block, not
    positive definite).
    """
    p = K.shape[0]
    k = p - 1
    beta = np.linalg.solve(K[:k, :k], K[:k, k])
    lv = noise_levels(eps, delta, n, p, r=r, kinds=(kind,))[kind] if level is None else level
    out = {"coef": None, "covered": None, "not_pd": None, "not_pd_block": None}
    if kind in ("A", "B0", "Blow"):
        s = lv["sigma"]
        G = simulate_gram(K, n, s, size=reps, rng=rng)
        out.update(_fit_corrected(G - n * s**2 * np.eye(p), G, n, k, beta, sigma=s))
    elif kind in ("gram", "gram_table"):
        tau = lv["tau"]
        G = K + gram.gram_noise(p, tau, size=reps, rng=rng)
        if kind == "gram":
            out.update(_fit_corrected(G, G, n, k, beta, noise="gram", tau=tau))
        else:
            Gp = gram_to_table.psd_projection(G)          # the Gram matrix of gram_table's output, exactly
            out["coef"] = _solve_all(Gp[:, :k, :k], Gp[:, :k, k])
            out["not_pd"] = np.linalg.eigvalsh(G)[:, 0] <= 0   # where the projection acted
            # what row software reports: textbook OLS intervals on the table
            b = out["coef"]
            rss = Gp[:, k, k] - np.einsum("mi,mi->m", Gp[:, :k, k], b)
            with np.errstate(invalid="ignore", divide="ignore"):
                inv_diag = np.diagonal(np.linalg.pinv(Gp[:, :k, :k]), axis1=1, axis2=2)
                se = np.sqrt(np.clip(rss, 0, None)[:, None] / (n - k) * inv_diag)
            out["covered"] = np.abs(b - beta) <= stats.t.ppf(0.975, n - k) * se
    elif kind in ("adassp", "adassp_joint"):
        comp = "basic" if kind == "adassp" else "gaussian"
        fit = ssp.adassp_from_gram(K, eps, delta, rng, size=reps, composition=comp)
        out["coef"] = fit.coef
        H = fit.gram + fit.ridge[:, None, None] * np.eye(k)     # the matrix AdaSSP solves with
        out["not_pd"] = out["not_pd_block"] = np.linalg.eigvalsh(H)[:, 0] <= 0
    elif kind == "wishart":
        c = lv["c"]
        S = wishart.wishart_mechanism(K, eps, delta, rng, size=reps) - (p + 1) * c * np.eye(p)
        out["coef"] = _solve_all(S[:, :k, :k], S[:, :k, k])
        out["not_pd"] = np.linalg.eigvalsh(S)[:, 0] <= 0
        out["not_pd_block"] = np.linalg.eigvalsh(S[:, :k, :k])[:, 0] <= 0
    elif kind in ("jl", "jl_always", "jl_best"):
        w, rr, test = lv["w"], lv["r"], lv["test"]
        altered = jl._jl_gram_law(K, eps, delta, rr, test, rng, reps)[1]
        S = np.empty((reps, p, p))
        for flag in (True, False):
            idx = np.flatnonzero(altered == flag)
            if idx.size:
                G = K + (w**2 * np.eye(p) if flag else 0.0)
                draws = stats.wishart(df=rr, scale=G).rvs(size=idx.size, random_state=rng)
                S[idx] = np.asarray(draws).reshape(idx.size, p, p)
        fit = jl.jl_ols_from_gram(S, rr, w, altered, debias=True)
        out["coef"] = fit.coef
        out["covered"] = (fit.lower <= beta) & (beta <= fit.upper)
        H = S[:, :k, :k] / rr - np.where(altered, w**2, 0.0)[:, None, None] * np.eye(k)
        out["not_pd_block"] = np.linalg.eigvalsh(H)[:, 0] <= 0
        out["altered"] = altered
    else:
        raise ValueError(f"kind must be one of {MECHANISMS}, got {kind!r}")
    return out


def _wishart_cov(G, r):
    return (np.einsum("ac,bd->abcd", G, G) + np.einsum("ad,bc->abcd", G, G)) / r


#: Quantile nodes over AdaSSP's step-1 noise in :func:`first_order_rmse` (midpoint rule in probability).
_ADASSP_NODES = 2001


def _adassp_first_order(K, lv, delta, rho=0.05):
    r"""First-order RMSE of AdaSSP's ridged slopes, exact in the ridge's own noise (see first_order_rmse)."""
    p = K.shape[0]
    k = p - 1
    tl, tg, tc = lv["tau_lambda"], lv["tau_gram"], lv["tau_cross"]
    Kzz, Kzy = K[:k, :k], K[:k, k]
    beta = np.linalg.solve(Kzz, Kzy)
    lam, V = np.linalg.eigh(Kzz)
    N = stats.norm.ppf((np.arange(_ADASSP_NODES) + 0.5) / _ADASSP_NODES)   # the step-1 noise, by its quantiles
    lam_noisy = np.maximum(lam[0] + tl * N - tl * np.sqrt(np.log(6.0 / delta)), 0.0)
    ridge = np.maximum(0.0, tg * np.sqrt(k * np.log(2.0 * k**2 / rho)) - lam_noisy)
    inv = 1.0 / (lam[None, :] + ridge[:, None])          # eigenvalues of H^{-1}, H = K_zz + ridge I
    b_c = inv * (V.T @ Kzy)                               # the ridge solution in the eigenbasis
    bias2 = np.sum((b_c - V.T @ beta) ** 2, axis=1)
    nb2 = np.sum(b_c**2, axis=1)
    # tr(H^{-1} M H^{-1}), M = tau_g^2/2 (|b|^2 I + b b^T) + tau_c^2 I (Exercise 9.3's covariance, and the cross noise)
    var = np.sum(inv**2 * ((0.5 * tg**2 * nb2 + tc**2)[:, None] + 0.5 * tg**2 * b_c**2), axis=1)
    return float(np.sqrt(np.mean(bias2 + var) / k))


def _solve_matrix_and_noise(kind, K, n, eps, delta, lv):
    """The noiseless predictor block the slopes are solved from, and its noise covariance tensor."""
    p = K.shape[0]
    k = p - 1
    if kind in ("A", "B0", "Blow"):
        return K[:k, :k], gram.mask_noise_cov(K, n, lv["sigma"])[:k, :k, :k, :k]
    if kind in ("gram", "gram_table"):
        return K[:k, :k], gram.gram_noise_cov(k, lv["tau"])
    if kind == "wishart":
        return K[:k, :k], gram.gram_noise_cov(k, np.sqrt(2.0 * (p + 1)) * lv["c"])
    if kind in ("adassp", "adassp_joint"):
        tg = lv["tau_gram"]
        lam_noisy = max(float(np.linalg.eigvalsh(K[:k, :k])[0]) - lv["tau_lambda"] * np.sqrt(np.log(6.0 / delta)), 0.0)
        lam_noisy += lv["tau_lambda"] * _Z99     # the smallest ridge of 99 % of draws
        ridge = max(0.0, tg * np.sqrt(k * np.log(2.0 * k**2 / 0.05)) - lam_noisy)
        return K[:k, :k] + ridge * np.eye(k), gram.gram_noise_cov(k, tg)
    if kind in ("jl", "jl_always", "jl_best"):
        w, rr = lv["w"], lv["r"]
        G = K + w**2 * np.eye(p)      # the altered branch (the test alters in every cell of chapter 9)
        return K[:k, :k], _wishart_cov(G, rr)[:k, :k, :k, :k]
    raise ValueError(f"kind must be one of {MECHANISMS}, got {kind!r}")


def first_order_margin(kind, K, n, eps, delta, *, r=None, level=None):
    r"""How many noise standard deviations the slopes' matrix is from singularity: where first order holds.

    ``lambda_min(H) / sd(v^T E v)``, with ``H`` the noiseless predictor block the slopes are solved
    from (``K_zz``; AdaSSP's ``K_zz + lam I`` at the ridge's 1 % quantile), ``v`` its bottom eigenvector
    and ``E`` the mechanism's noise in that block (the covariances of :func:`first_order_rmse`).
    First order linearises ``(H + E)^{-1}``; it describes the errors when this margin is large,
    and fails, or has no moment to describe, when it is small: chapter 9 reports a first-order
    RMSE only where the margin is at least ``MARGIN_MIN``, and the tests compare every such
    cell with simulation.

    Returns
    -------
    float
    """
    K = _check_gram(K, "K")
    p = K.shape[0]
    lv = noise_levels(eps, delta, n, p, r=r, kinds=(kind,))[kind] if level is None else level
    H, cov = _solve_matrix_and_noise(kind, K, n, eps, delta, lv)
    lam, V = np.linalg.eigh(H)
    v = V[:, 0]
    var = float(np.einsum("a,b,c,d,abcd->", v, v, v, v, cov))
    return float(lam[0] / np.sqrt(var)) if var > 0 else float("inf")


def first_order_rmse(kind, K, n, eps, delta, *, r=None, level=None):
    r"""First-order (delta-method) RMSE of the least-squares slopes for one mechanism.

    Masking: :func:`dpmask.rivals.gram.mask_noise_cov`; the rival and its table:
    :func:`dpmask.rivals.gram.gram_noise_cov`; JL: the Wishart covariance
    ``(G_ac G_bd + G_ad G_bc)/r`` of ``S/r``, ``G = K + w^2 I`` when altered and ``G = K``
    when the test passes, the mean square error averaged over the test's exact (Laplace)
    probabilities; the Wishart mechanism: the rival's with ``tau^2 = 2 (p + 1) c^2``.

    AdaSSP (derivation).  Its slopes are ``b = (K_zz + E + lam I)^{-1} (K_zy + e)`` with ``E``
    of the book's shape (``tau_gram``), ``e`` i.i.d. (``tau_cross``) and the ridge ``lam`` a
    function of the independent step-1 noise ``N``.  Given ``lam``, write ``H = K_zz + lam I``
    and ``b_lam = H^{-1} K_zy``; to first order in ``(E, e)``

    .. math::

        b - \beta \approx (b_\lambda - \beta) + H^{-1}(e - E\,b_\lambda),

    a bias plus a noise shrunk by the ridge (``H^{-1}``, not ``K_zz^{-1}``), whose covariance is
    ``H^{-1} [tau_gram^2/2 (|b_lam|^2 I + b_lam b_lam^T) + tau_cross^2 I] H^{-1}`` (Exercise 9.3).
    The mean square error over the k slopes, ``(|b_lam - beta|^2 + tr Cov)/k``, is then averaged
    over the ridge's law (2001 quantiles of ``N``; the ridge is exact, not linearised, because it
    has kinks at 0).  Checked against simulation over the whole table of chapter 9 (tests).
    Where ``K_zz + E + lam I`` is not positive definite in 1 % of draws or more (k = 1 at small
    n), the slopes have no second moment and no first order describes them.
    """
    K = _check_gram(K, "K")
    p = K.shape[0]
    lv = noise_levels(eps, delta, n, p, r=r, kinds=(kind,))[kind] if level is None else level
    if kind in ("A", "B0", "Blow"):
        return gram.first_order_errors(K, gram.mask_noise_cov(K, n, lv["sigma"]))["ols"]
    if kind in ("gram", "gram_table"):
        return gram.first_order_errors(K, gram.gram_noise_cov(p, lv["tau"]))["ols"]
    if kind == "wishart":
        return gram.first_order_errors(K, gram.gram_noise_cov(p, np.sqrt(2.0 * (p + 1)) * lv["c"]))["ols"]
    if kind in ("adassp", "adassp_joint"):
        return _adassp_first_order(K, lv, float(check_scalar(check_delta(delta), "delta")))
    if kind in ("jl", "jl_always", "jl_best"):
        w, rr, test = lv["w"], lv["r"], lv["test"]
        p_alt = 1.0
        if test:   # the test alters unless lambda_min + Lap(b) - shift >= w^2: its exact probability
            b = (2.0 * np.sqrt(p) - 1.0) / (eps / 2.0)
            x = w**2 + b * np.log(1.0 / delta) - float(np.linalg.eigvalsh(K)[0])   # Lap(b) must exceed x
            p_keep = 0.5 * np.exp(-x / b) if x >= 0 else 1.0 - 0.5 * np.exp(x / b)
            p_alt = 1.0 - p_keep
        mse = p_alt * gram.first_order_errors(K, _wishart_cov(K + w**2 * np.eye(p), rr))["ols"] ** 2
        if p_alt < 1.0:
            mse += (1.0 - p_alt) * gram.first_order_errors(K, _wishart_cov(K, rr))["ols"] ** 2
        return float(np.sqrt(mse))
    raise ValueError(f"kind must be one of {MECHANISMS}, got {kind!r}")


def summarise(sim, beta):
    """Summary numbers of :func:`simulate_slopes`' output against the target slopes ``beta``.

    Returns a dict: ``rmse`` (root mean square over draws and slopes) and its
    standard error ``rmse_se`` (delta method on the per-draw mean squared
    error), ``median_abs`` (median absolute error over draws and slopes), ``q90_abs`` (its 90 %
    quantile),
    ``coverage`` (fraction of intervals that exist and cover, or NaN),
    ``coverage_se``, ``not_pd``, ``not_pd_block`` (fractions, or NaN), ``reps``.
    """
    err = sim["coef"] - beta
    reps = err.shape[0]
    per_draw = np.mean(err**2, axis=1)
    mse = float(np.mean(per_draw))
    rmse = float(np.sqrt(mse))
    rmse_se = float(np.std(per_draw, ddof=1) / np.sqrt(reps) / (2 * rmse)) if rmse > 0 else 0.0
    out = {"rmse": rmse, "rmse_se": rmse_se, "median_abs": float(np.median(np.abs(err))),
           "q90_abs": float(np.quantile(np.abs(err), 0.9)), "reps": reps}
    cov = sim.get("covered")
    out["coverage"] = float(np.mean(cov)) if cov is not None else float("nan")
    out["coverage_se"] = float(np.sqrt(0.95 * 0.05 / cov.size)) if cov is not None else float("nan")
    for key in ("not_pd", "not_pd_block"):
        v = sim.get(key)
        out[key] = float(np.mean(v)) if v is not None else float("nan")
    if sim.get("altered") is not None:
        out["altered"] = float(np.mean(sim["altered"]))
    return out


def rmse_reported(row):
    """The RMSE of a :func:`summarise` row where it exists, None where it does not.

    An RMSE needs a finite second moment; the slopes solved from a corrected matrix that is not
    positive definite in a fraction of the draws are heavy tailed (their RMSE over 400 draws
    ranged from 7.5 to 177 for one cell of chapter 9).  So the RMSE is returned only when the
    not-PD rate (``not_pd``, or ``not_pd_block`` where the mechanism has no full matrix) is below
    ``NOT_PD_MAX`` (1 %); the mechanisms without a corrected matrix (NaN rates) have one.
    """
    rate = row.get("not_pd", float("nan"))
    if not np.isfinite(rate):
        rate = row.get("not_pd_block", float("nan"))
    if np.isfinite(rate) and rate >= NOT_PD_MAX:
        return None
    return row["rmse"]


def compare_from_gram(K, n, eps, delta, reps, rng=None, *, kinds=MECHANISMS, r=None, first_order=True,
                      low="exact"):
    """:func:`compare_mechanisms` for data given by its Gram matrix ``K`` and row count ``n``.

    Parameters
    ----------
    K : array_like, shape (p, p)
        ``X^T X``, positive definite, the response last, 2 <= p <= 32.
    n : int
        Rows, n > p (n <= 10^6 for the exact sigma_low; above it the large-n form).
    eps, delta : float
        The privacy level (0 < delta < 0.5).
    reps : int
        Draws per mechanism, 2 <= reps <= 10**6.
    rng : numpy.random.Generator, int or None
    kinds : sequence of str
        Mechanisms among :data:`MECHANISMS`.
    r : int or None
        Rows of the JL projection (None: n).
    first_order : bool
        Add each mechanism's first-order RMSE (key ``first_order``).
    low : {"exact", "large_n"}
        How sigma_low is computed (:func:`noise_levels`).

    Returns
    -------
    dict
        kind -> :func:`summarise` dict plus ``level`` (the noise parameters) and
        ``first_order``.
    """
    K = _check_gram(K, "K")
    p = K.shape[0]
    if p < 2 or p > gram.COV_P_MAX:
        raise ValueError(f"K must be p x p with 2 <= p <= {gram.COV_P_MAX}, got shape {K.shape}")
    if np.linalg.eigvalsh(K)[0] <= 0:
        raise ValueError("K must be positive definite")
    n = int(check_scalar(check_int(n, "n", minimum=p + 1), "n"))
    eps, delta, n, p, r = _check_levels(eps, delta, n, p, r, kinds)
    reps = int(check_scalar(check_int(reps, "reps", minimum=2, maximum=10**6), "reps"))
    first_order = check_flag(first_order, "first_order")
    rng = as_rng(rng)
    k = p - 1
    beta = np.linalg.solve(K[:k, :k], K[:k, k])
    levels = noise_levels(eps, delta, n, p, r=r, kinds=kinds, low=low)
    out = {}
    for kind in kinds:
        sim = simulate_slopes(kind, K, n, eps, delta, reps, rng, r=r, level=levels[kind])
        row = summarise(sim, beta)
        row["level"] = levels[kind]
        if first_order:
            row["first_order"] = first_order_rmse(kind, K, n, eps, delta, r=r, level=levels[kind])
        out[kind] = row
    return out


def compare_mechanisms(X, eps, delta, reps, rng=None, *, kinds=MECHANISMS, r=None, first_order=True, low="exact"):
    """Run every mechanism on one data set at one (eps, delta): slope RMSE, median error, coverage, PD.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Data in [-1, 1]^p, the response in the last column.
    eps, delta, reps, rng, kinds, r, first_order, low
        See :func:`compare_from_gram`.

    Returns
    -------
    dict
        See :func:`compare_from_gram`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.uniform(-1, 1, 2000)
    >>> X = np.column_stack([z, 0.5 * z + rng.uniform(-0.5, 0.5, 2000)])
    >>> res = compare_mechanisms(X, 1.0, 1e-3, 50, rng=1, kinds=("gram", "adassp"))
    >>> res["gram"]["rmse"] < 0.05
    True
    """
    X = check_data(X)
    return compare_from_gram(X.T @ X, X.shape[0], eps, delta, reps, rng, kinds=kinds, r=r, first_order=first_order,
                             low=low)
