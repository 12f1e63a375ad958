r"""The comparison engine of chapter 9: every mechanism, one data set, one (eps, delta).

For data with Gram matrix ``K = X^T X`` (n rows, p columns, the response last)
and one privacy level, :func:`compare_mechanisms` draws ``reps`` releases of
each mechanism and reports the error of the least-squares slopes against the
data's own (uncentred) least-squares slopes ``K_zz^{-1} K_zy``:

* ``"A"``: Setting A at the analytic Gaussian ``sigma_A`` (tight, unmasked);
* ``"B0"``: Setting B at Theorem 3.4's ``sigma_0`` (:func:`dpmask.bounds.sigma_b`);
* ``"Blow"``: Setting B at the projection lower bound ``sigma_low``
  (:func:`dpmask.audit.sigma_lower_bound` for n <= 10^6, its large-n form
  :func:`dpmask.gram.sigma_low_large_n` above), below which masking cannot go;
* ``"gram"``: the Gaussian mechanism on ``X^T X`` (:func:`dpmask.gram.release_gram`);
* ``"gram_table"``: the same noisy Gram matrix made a table
  (:func:`dpmask.field.gram_table`), analysed by row software as if it were data;
* ``"adassp"``: :func:`dpmask.field.adassp` (Wang's split of the budget in three);
* ``"adassp_joint"``: the same with the three releases calibrated together
  (``composition="gaussian"``);
* ``"jl"``: the JL projection with Sheffet's private test (:func:`dpmask.jl.jl_release`),
  ``r = n`` rows, debiased least squares with intervals (:func:`dpmask.jl.jl_ols`);
* ``"jl_always"``: the same, always appending ``w I`` (no test, the whole budget
  on the projection).

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

from . import audit, bounds, field, gram, jl
from ._validate import as_rng, check_delta, check_eps, check_flag, check_int, check_scalar
from .exact import analytic_gaussian_sigma
from .inference import _check_gram, ols_from_gram, simulate_gram
from .mechanisms import check_data

__all__ = [
    "MECHANISMS",
    "noise_levels",
    "simulate_slopes",
    "first_order_rmse",
    "summarise",
    "compare_mechanisms",
    "compare_from_gram",
]

#: The mechanisms compared, in the order of the book's table (see the module docstring).
MECHANISMS = ("A", "B0", "Blow", "gram", "gram_table", "adassp", "adassp_joint", "jl", "jl_always")
#: Largest n at which sigma_low is the exact projection bound (the audit's domain).
N_EXACT_LOW = 10**6
_Z975 = float(stats.norm.ppf(0.975))


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
    gram_table (Gram noise, diagonal); the :func:`dpmask.field.adassp_noise`
    dict for adassp; ``w`` (and r) for the JL variants.
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
            out[kind] = field.adassp_noise(eps, delta, p, composition="basic" if kind == "adassp" else "gaussian")
        elif kind in ("jl", "jl_always"):
            test = kind == "jl"
            _, eps_p, delta_p, _ = jl._jl_budget(eps, delta, test)
            rr = _jl_rows(n, r)
            out[kind] = {"w": jl.jl_w(eps_p, delta_p, rr, p), "r": rr, "test": test}
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
            Gp = field.psd_projection(G)          # the Gram matrix of gram_table's output, exactly
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
        out["coef"] = field.adassp_from_gram(K, eps, delta, rng, size=reps, composition=comp).coef
    elif kind in ("jl", "jl_always"):
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


def first_order_rmse(kind, K, n, eps, delta, *, r=None, level=None):
    r"""First-order (delta-method) RMSE of the least-squares slopes for one mechanism.

    Masking: :func:`dpmask.gram.mask_noise_cov`; the rival and its table:
    :func:`dpmask.gram.gram_noise_cov`; AdaSSP: the tensor of its two noises
    (``tau_gram`` on ``Z^T Z`` in the book's shape, ``tau_cross^2`` on each
    entry of ``Z^T y``) plus the squared bias of its ridge at the noiseless
    ``lambda_min`` (the ridge's value when the noise in step 1 is zero); JL:
    the Wishart covariance ``(G_ac G_bd + G_ad G_bc)/r`` of ``S/r``,
    ``G = K + w^2 I`` on the branch the test takes when its noise is zero.
    """
    K = _check_gram(K, "K")
    p = K.shape[0]
    k = p - 1
    lv = noise_levels(eps, delta, n, p, r=r, kinds=(kind,))[kind] if level is None else level
    if kind in ("A", "B0", "Blow"):
        return gram.first_order_errors(K, gram.mask_noise_cov(K, n, lv["sigma"]))["ols"]
    if kind in ("gram", "gram_table"):
        return gram.first_order_errors(K, gram.gram_noise_cov(p, lv["tau"]))["ols"]
    if kind in ("adassp", "adassp_joint"):
        cov = np.zeros((p, p, p, p))
        tg, tc = lv["tau_gram"], lv["tau_cross"]
        eye = np.eye(k)
        cov[:k, :k, :k, :k] = 0.5 * tg**2 * (np.einsum("ac,bd->abcd", eye, eye) + np.einsum("ad,bc->abcd", eye, eye))
        for a in range(k):
            for c in range(k):
                if a == c:
                    cov[a, k, c, k] = cov[k, a, c, k] = cov[a, k, k, c] = cov[k, a, k, c] = tc**2
        var = gram.first_order_errors(K, cov)["ols"] ** 2
        lam_min = float(np.linalg.eigvalsh(K[:k, :k])[0])
        tl = lv["tau_lambda"]
        lam_noisy = max(lam_min - tl * np.sqrt(np.log(6.0 / delta)), 0.0)
        ridge = max(0.0, tg * np.sqrt(k * np.log(2.0 * k**2 / 0.05)) - lam_noisy)
        beta = np.linalg.solve(K[:k, :k], K[:k, k])
        bias = np.linalg.solve(K[:k, :k] + ridge * eye, K[:k, k]) - beta
        return float(np.sqrt(var + np.mean(bias**2)))
    if kind in ("jl", "jl_always"):
        w, rr, test = lv["w"], lv["r"], lv["test"]
        altered = True
        if test:
            eps_t = eps / 2.0
            sens = 2.0 * np.sqrt(p) - 1.0
            shift = sens / eps_t * np.log(1.0 / delta)   # b ln(1/(2 delta_bad)), delta_bad = delta/2
            altered = not (float(np.linalg.eigvalsh(K)[0]) - shift >= w**2)
        G = K + (w**2 * np.eye(p) if altered else 0.0)
        return gram.first_order_errors(K, _wishart_cov(G, rr))["ols"]
    raise ValueError(f"kind must be one of {MECHANISMS}, got {kind!r}")


def summarise(sim, beta):
    """Summary numbers of :func:`simulate_slopes`' output against the target slopes ``beta``.

    Returns a dict: ``rmse`` (root mean square over draws and slopes) and its
    standard error ``rmse_se`` (delta method on the per-draw mean squared
    error), ``median_abs`` (median absolute error over draws and slopes),
    ``coverage`` (fraction of intervals that exist and cover, or NaN),
    ``coverage_se``, ``not_pd``, ``not_pd_block`` (fractions, or NaN), ``reps``.
    """
    err = sim["coef"] - beta
    reps = err.shape[0]
    per_draw = np.mean(err**2, axis=1)
    mse = float(np.mean(per_draw))
    rmse = float(np.sqrt(mse))
    rmse_se = float(np.std(per_draw, ddof=1) / np.sqrt(reps) / (2 * rmse)) if rmse > 0 else 0.0
    out = {"rmse": rmse, "rmse_se": rmse_se, "median_abs": float(np.median(np.abs(err))), "reps": reps}
    cov = sim.get("covered")
    out["coverage"] = float(np.mean(cov)) if cov is not None else float("nan")
    out["coverage_se"] = float(np.sqrt(0.95 * 0.05 / cov.size)) if cov is not None else float("nan")
    for key in ("not_pd", "not_pd_block"):
        v = sim.get(key)
        out[key] = float(np.mean(v)) if v is not None else float("nan")
    if sim.get("altered") is not None:
        out["altered"] = float(np.mean(sim["altered"]))
    return out


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
