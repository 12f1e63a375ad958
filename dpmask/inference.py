"""Statistics from a masked release: what the Gram matrix keeps, and how to use it.

A masked release ``Y = A (X + C)`` (Setting B) satisfies
``Y^T Y = (X + C)^T (X + C)`` because ``A`` is orthogonal, so any method that
sees the data only through the Gram matrix and the number of rows -- least
squares, principal components, correlations -- gives on ``Y`` exactly what it
gives on the noisy data ``X + C``.  Setting A releases ``X + C`` itself, so the
same functions apply there too.  What masking loses is everything else: row
identity (no residual plots, no joins, no subgroups, no robust or weighted
fits), and the column means unless the data carried a constant column.

The noise still biases the Gram matrix: ``E[Y^T Y] = X^T X + n sigma^2 I``.
Subtracting ``n sigma^2 I`` (the method of moments for an errors-in-variables
model with known noise variance) removes that bias; this module does it, and
gives standard errors that account for the noise.

Everything here is a plain function of numpy arrays; the core works on the
Gram matrix and n alone (:func:`ols_from_gram`), and :func:`simulate_gram`
draws the Gram matrix of a release directly (O(p^3) per draw, whatever n is),
which is what makes the book's simulations up to n = 10^9 cheap.

Two noise models are handled (argument ``noise``): ``"mask"``, the Gram
matrix of a release ``(X + C)^T (X + C)`` with data noise sigma, and
``"gram"``, the rival Gaussian mechanism on the Gram matrix
(:mod:`dpmask.rivals.gram`), ``X^T X + E`` with symmetric noise of standard
deviation tau on the diagonal and tau/sqrt(2) off it.
"""

from __future__ import annotations

import operator
import warnings
from typing import NamedTuple

import numpy as np
from scipy import stats

from ._validate import (COUNT_MAX, as_float_array, as_rng, check_flag, check_int, check_matrix, check_sigma,
                        check_single_sigma)

__all__ = [
    "OLSResult",
    "gram",
    "corrected_gram",
    "ols_from_gram",
    "ols_from_release",
    "correlation_from_gram",
    "correlation_from_release",
    "pca_from_gram",
    "pca_from_release",
    "simulate_gram",
]


class OLSResult(NamedTuple):
    """Result of :func:`ols_from_gram` / :func:`ols_from_release` (a named tuple).

    Its fields:

    * ``coef`` -- coefficients of the predictors, in the order of ``predictors``
      (shape ``(k,)``, or ``(..., k)`` for a stack of Gram matrices);
    * ``se`` -- standard errors, the square roots of the diagonal of ``cov``;
    * ``cov`` -- estimated covariance matrix of ``coef`` (``(k, k)``);
    * ``sigma2_resid`` -- estimated variance of the regression error in the
      *raw* data (noise removed) when the noise is corrected, the residual mean
      square of the noisy data otherwise.  With correction it can come out
      negative when the privacy noise swamps the signal; it is returned as
      computed;
    * ``df`` -- residual degrees of freedom, n - k;
    * ``gram`` -- the Gram matrix the fit used (corrected when the noise was);
    * ``response`` -- column index of the response;
    * ``predictors`` -- column indices of the predictors;
    * ``corrected`` -- whether the noise was accounted for: for ``noise="mask"``
      its contribution ``n sigma^2 I`` was removed; for ``noise="gram"`` (mean
      zero, nothing to remove) the standard errors include its variance.
    """

    coef: np.ndarray
    se: np.ndarray
    cov: np.ndarray
    sigma2_resid: float
    df: int
    gram: np.ndarray
    response: int
    predictors: np.ndarray
    corrected: bool



def _check_gram(G, name="G", *, batch=False):
    """Validate a symmetric p x p matrix (or, with *batch*, a stack of them); complex -> TypeError."""
    arr = as_float_array(G, name)
    if arr.ndim < 2 or (arr.ndim > 2 and not batch):
        shape = "(..., p, p)" if batch else "(p, p)"
        raise ValueError(f"{name} must have shape {shape}, got {arr.ndim} dimension(s)")
    if arr.shape[-1] != arr.shape[-2] or arr.shape[-1] < 1:
        raise ValueError(f"{name} must be square (p x p), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    swapped = np.swapaxes(arr, -1, -2)
    scale = float(np.max(np.abs(arr))) if arr.size else 0.0
    if not np.allclose(arr, swapped, rtol=1e-10, atol=1e-10 * scale):
        raise ValueError(f"{name} must be symmetric")
    return 0.5 * arr + 0.5 * swapped   # not 0.5 (arr + swapped): entries near 1e308 would overflow


def _check_n(n, p):
    n_arr = check_int(n, "n", minimum=1)
    if n_arr.ndim != 0:
        raise ValueError("n must be a single whole number >= 1")
    return int(n_arr)


def _check_column(value, p, name):
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a column index in [-{p}, {p - 1}], got {value!r}")
    try:
        idx = operator.index(value)
    except TypeError as exc:
        raise ValueError(f"{name} must be a column index in [-{p}, {p - 1}], got {value!r}") from exc
    if not -p <= idx < p:
        raise ValueError(f"{name} must be a column index in [-{p}, {p - 1}], got {idx}")
    return idx % p


#: Largest noise standard deviation (sigma or tau) accepted: n sigma^2 stays far inside the float range.
SIGMA_MAX = 1e100
#: Largest number of matrix entries one call of simulate_gram draws (2**26 floats, 512 MB).
DRAW_ENTRIES_MAX = 2**26


def _check_sigma_scalar(sigma):
    """The release's noise standard deviation: one number, 0 < sigma <= SIGMA_MAX."""
    return check_single_sigma(sigma, top=SIGMA_MAX)


def _check_noise(noise, sigma, tau, correct_noise):
    """The noise model and its parameter: ``(noise, sigma, tau)``.

    The parameter of the other model must be None; with *correct_noise* the
    model's own one (sigma for "mask", tau for "gram") is required and
    returned as a validated float.
    """
    check_flag(correct_noise, "correct_noise")
    if noise not in ("mask", "gram"):
        raise ValueError(f"noise must be 'mask' (a release's Gram matrix) or 'gram' (the Gaussian mechanism "
                         f"on the Gram matrix), got {noise!r}")
    if noise == "gram" and sigma is not None:
        raise ValueError("sigma must be None with noise='gram' (the rival's noise is given by tau)")
    if noise == "mask" and tau is not None:
        raise ValueError("tau must be None with noise='mask' (the release's noise is given by sigma)")
    if correct_noise and noise == "mask":
        if sigma is None:
            raise ValueError("sigma (the release's noise standard deviation, > 0) is required when correct_noise=True")
        sigma = _check_sigma_scalar(sigma)
    if correct_noise and noise == "gram":
        if tau is None:
            raise ValueError("tau (the Gram noise's standard deviation on the diagonal, > 0) is required "
                             "when noise='gram' and correct_noise=True")
        tau = _check_tau_scalar(tau)
    return noise, sigma, tau


def _check_tau_scalar(tau):
    """The rival's Gram-noise standard deviation on the diagonal: one number, 0 < tau <= SIGMA_MAX."""
    return check_single_sigma(tau, "tau", top=SIGMA_MAX)


def _check_constant(constant, p, *, name="constant", allow_true=False):
    """None/False -> None; an int -> the column index; True -> error with advice."""
    if constant is None or constant is False:
        return None
    if constant is True:
        raise ValueError(
            f"{name}=True cannot be honoured: a column of ones added after masking is not the "
            f"masked ones column (A 1 is unknown). Put a constant column of ones in X before the "
            f"release and pass its index, {name}=<column>, in [-{p}, {p - 1}]"
        )
    return _check_column(constant, p, name)


def gram(Y):
    """Gram matrix ``Y^T Y`` of a release.

    For a masked release ``Y = A (X + C)`` this equals ``(X + C)^T (X + C)``
    exactly (A is orthogonal): the Gram matrix is what masking keeps.

    Parameters
    ----------
    Y : array_like, shape (n, p)
        A release (Setting A, B or C), finite entries.

    Returns
    -------
    ndarray, shape (p, p)

    Examples
    --------
    >>> gram([[1.0, 0.0], [1.0, 2.0]])
    array([[2., 2.],
           [2., 4.]])
    """
    Y = check_matrix(Y, "Y")
    return Y.T @ Y


def corrected_gram(G, n, sigma):
    r"""Remove the noise's expected contribution from a Gram matrix.

    For ``M = X + C`` with ``C`` i.i.d. N(0, sigma^2),
    :math:`E[M^T M] = X^T X + n\sigma^2 I`, so
    :math:`\hat K = M^T M - n\sigma^2 I` is an unbiased estimate of
    :math:`X^T X` (method of moments).

    Parameters
    ----------
    G : array_like, shape (p, p) or (..., p, p)
        Gram matrix of a release (or a stack of them), symmetric, finite,
        real (complex input is a TypeError naming G).
    n : int
        Number of rows of the release, 1 <= n <= 2**53.
    sigma : float
        Noise standard deviation used by the release, 0 < sigma <= 1e100
        (``SIGMA_MAX``; then n sigma^2 stays inside the float range).
        Outside these ranges a ValueError names the argument.

    Returns
    -------
    ndarray, shape of G
        May fail to be positive definite when the noise is large for n.

    Examples
    --------
    >>> corrected_gram(np.eye(2) * 10.0, 4, 1.0)
    array([[6., 0.],
           [0., 6.]])
    """
    G = _check_gram(G, batch=True)
    n = _check_n(n, G.shape[-1])
    sigma = _check_sigma_scalar(sigma)
    return G - n * sigma**2 * np.eye(G.shape[-1])


def _check_pd(H, what, hint=None):
    """Refuse a (stack of) matrices that is not positive definite, saying how many fail."""
    smallest = np.linalg.eigvalsh(H)[..., 0]
    bad = ~(smallest > 0)
    if np.any(bad):
        count = f" ({int(bad.sum())} of {bad.size})" if bad.size > 1 else ""
        if hint is None:
            hint = ("the noise's contribution n*sigma^2 "
                    "is too large for this release to estimate the coefficients (more rows, less noise, "
                    "or fewer predictors are needed); pass correct_noise=False to get the attenuated, "
                    "uncorrected fit instead")
        raise ValueError(f"the {what} is not positive definite{count}: {hint}")


def ols_from_gram(G, n, response, sigma=None, *, correct_noise=True, intercept=None, conditional=False,
                  noise="mask", tau=None):
    r"""Least squares from the Gram matrix of a release.

    Regress column ``response`` on all other columns.  Without correction
    this is ordinary least squares on ``M = X + C``; with correction it is the
    method-of-moments (errors-in-variables) estimator

    .. math::

        \hat\beta = (G_{ZZ} - n\sigma^2 I)^{-1} G_{Zy},

    which is consistent for the coefficients of the raw data because
    :math:`E[G] = X^T X + n\sigma^2 I` (noise in the response column adds
    nothing to :math:`E[G_{Zy}]`; it only inflates :math:`G_{yy}`, which the
    correction also removes before the residual variance is computed).

    Parameters
    ----------
    G : array_like, shape (p, p) or (..., p, p)
        Gram matrix ``Y^T Y`` of the release (:func:`gram`), or a stack of
        them (e.g. from :func:`simulate_gram`); every result then gains the
        leading axes. Real (complex G is a TypeError naming G) and finite; a fit
        whose numbers would leave the float range (entries of G or n sigma^2
        beyond about 1e150) is a ValueError naming G, n and sigma.
    n : int
        Number of rows of the release; n > k = p - 1.
    response : int
        Column index of the response, in [-p, p-1].
    sigma : float, optional
        Noise standard deviation of the release, 0 < sigma <= 1e100
        (``SIGMA_MAX``); required when ``correct_noise`` is true, ignored
        otherwise.  Outside these ranges a ValueError names the argument.
    correct_noise : bool
        Remove ``n sigma^2 I`` from the Gram matrix (default) or not.  With
        ``noise="gram"`` nothing is removed either way; true (default) makes
        the standard errors include the Gram noise, false gives the textbook
        errors that ignore it.
    intercept : int or None
        Index of a column that held the constant 1 in ``X`` before the
        release, if any.  Its corrected Gram entry is then set to the known
        value n.  ``True`` is refused: a column of ones cannot be added after
        masking (the masked ones column is ``A 1``, unknown).
    conditional : bool
        With correction: if false (default) the standard errors are for the
        population coefficients of the model ``y = Z beta + e`` (they cover
        the regression error and the privacy noise); if true they cover the
        privacy noise only, given the data (target: the raw data's own
        least-squares coefficients).
    noise : {"mask", "gram"}
        The noise model of ``G``.  ``"mask"`` (default): the Gram matrix of a
        release, ``E[G] = X^T X + n sigma^2 I``.  ``"gram"``: the rival
        Gaussian mechanism on the Gram matrix (:func:`dpmask.rivals.gram.release_gram`),
        ``G = X^T X + E`` with ``E`` symmetric, ``Var E_ii = tau^2``,
        ``Var E_ij = tau^2/2``; its mean is zero, so nothing is subtracted, and
        the standard errors add the noise's variance (Notes).
    tau : float, optional
        With ``noise="gram"`` and correction: the standard deviation of the
        Gram noise on the diagonal, > 0 (:func:`dpmask.rivals.gram.sigma_gram`; not
        a data-noise sigma).  Must be None with ``noise="mask"``.

    Returns
    -------
    OLSResult

    Raises
    ------
    ValueError
        On malformed input, ``sigma`` missing when ``correct_noise`` is true,
        n <= k, or when the (corrected) predictor Gram block is not positive
        definite (for a stack: when any of them is not; the message counts
        them).  Nothing is returned as NaN.

    Notes
    -----
    Standard errors, corrected case: the sandwich :math:`\hat K_{ZZ}^{-1} V \hat K_{ZZ}^{-1}`
    of the estimating equation :math:`\sum_i w_i (v_i - w_i^T\beta) + \sigma^2\beta = 0`
    (rows :math:`(w_i, v_i)` of ``M``), its meat V from Gram quantities by Isserlis' theorem:

    .. math::

        V = Z^T Z\,(\omega^2 + s_g^2) + n\sigma^2(s_g^2 + \bar e^2)\,I
            + n\sigma^4\beta\beta^T,\qquad s_g^2 = \sigma^2(1 + \|\beta\|^2)

    (regression error variance :math:`\omega^2`, mean squared raw-data residual
    :math:`\bar e^2`; ``conditional=True`` drops the sampling term :math:`Z^T Z\omega^2`).
    Rival noise (``noise="gram"``): :math:`\hat\beta - \beta \approx K_{ZZ}^{-1} E_{Z\cdot} v`,
    :math:`v = (1 \text{ at the response}, -\beta)`, of covariance
    :math:`\tfrac{\tau^2}{2}\bigl((1 + \|\beta\|^2) I + \beta\beta^T\bigr)`, no first-order
    bias.  Uncorrected: the textbook ``s^2 G_ZZ^{-1}``, which ignores the attenuation.  The
    derivations and plug-ins are in ``_mask_noise_meat`` and ``_gram_noise_meat`` (chapters 6
    and 9 derive them too); the book checks the coverage of these errors by Monte Carlo.

    Examples
    --------
    >>> M = np.array([[1.0, 2.0], [2.0, 4.1], [3.0, 5.9]])
    >>> fit = ols_from_gram(M.T @ M, 3, response=1, correct_noise=False)
    >>> round(float(fit.coef[0]), 4)
    1.9929
    """
    G = _check_gram(G, batch=True)
    check_flag(conditional, "conditional")
    p = G.shape[-1]
    n = _check_n(n, p)
    response = _check_column(response, p, "response")
    intercept = _check_constant(intercept, p, name="intercept")
    predictors, df = _regression_design(n, p, response, intercept)
    noise, sigma, tau = _check_noise(noise, sigma, tau, correct_noise)
    Gc = _fit_gram(G, n, sigma, intercept, noise, correct_noise)
    Gzz = Gc[..., predictors[:, None], predictors[None, :]]
    _check_predictor_block(Gzz, noise, correct_noise)
    with np.errstate(over="ignore", invalid="ignore"):
        Hinv, coef, sigma2_resid = _ols_coefficients(Gc, Gzz, predictors, response, df)
        cov = _ols_covariance(Hinv, Gzz, coef, sigma2_resid, n, df, noise, sigma, tau, predictors, intercept,
                              correct_noise, conditional)
    _check_fit_finite(coef, cov, sigma2_resid)
    se = np.sqrt(np.clip(np.diagonal(cov, axis1=-2, axis2=-1), 0.0, None))
    sigma2_resid = float(sigma2_resid) if np.ndim(sigma2_resid) == 0 else sigma2_resid
    return OLSResult(coef, se, cov, sigma2_resid, df, Gc, response, predictors, bool(correct_noise))


def _regression_design(n, p, response, intercept):
    """The predictor columns and the residual degrees of freedom n - k; refuse a fit that cannot be made."""
    if intercept is not None and intercept == response:
        raise ValueError(f"intercept must differ from response (both are column {response})")
    if p < 2:
        raise ValueError(f"a regression needs at least two columns (a response and a predictor), got p={p}")
    predictors = np.array([j for j in range(p) if j != response])
    k = predictors.size
    if n <= k:
        raise ValueError(f"n must exceed the number of predictors k={k}, got n={n}")
    return predictors, n - k


def _fit_gram(G, n, sigma, intercept, noise, correct_noise):
    """The Gram matrix the fit uses (a new array).

    With correction, the mask noise's expected share ``n sigma^2 I`` is removed (the rival's Gram
    noise has mean zero: nothing to remove), and the intercept column's entry is set to its known
    value n.  Without correction, G itself.
    """
    Gc = G - n * sigma**2 * np.eye(G.shape[-1]) if correct_noise and noise == "mask" else G.copy()
    if correct_noise and intercept is not None:
        Gc[..., intercept, intercept] = float(n)
    return Gc


def _check_predictor_block(Gzz, noise, correct_noise):
    """Refuse a predictor Gram block that is not positive definite, in the words of its noise model."""
    what = ("corrected predictor Gram block (G_ZZ - n sigma^2 I)" if correct_noise and noise == "mask"
            else "predictor Gram block G_ZZ")
    hint = None
    if noise == "gram":
        hint = ("the Gram noise (or collinear predictors) leaves no positive definite block to invert; "
                "more rows, less noise or fewer predictors are needed")
    _check_pd(Gzz, what, hint)


def _ols_coefficients(Gc, Gzz, predictors, response, df):
    """``(H^{-1}, beta, s^2)``: the inverse predictor block (symmetrised), the coefficients and the residual variance."""
    gzy = Gc[..., predictors, response]
    Hinv = np.linalg.inv(Gzz)
    Hinv = 0.5 * (Hinv + np.swapaxes(Hinv, -1, -2))
    coef = np.einsum("...ij,...j->...i", Hinv, gzy)
    rss = Gc[..., response, response] - np.einsum("...i,...i->...", gzy, coef)
    return Hinv, coef, rss / df


def _mask_noise_meat(Gzz, coef, omega2, n, df, sigma):
    r"""The privacy noise's part of the sandwich's meat V for the corrected fit on a masked release.

    The estimator solves :math:`\sum_i \psi_i(\beta) = 0` with
    :math:`\psi_i = w_i (v_i - w_i^T\beta) + \sigma^2\beta`, where :math:`(w_i, v_i)` is row i of
    ``M = X + C``; its sandwich covariance is :math:`\hat K_{ZZ}^{-1} V \hat K_{ZZ}^{-1}`.  The meat
    V would need the rows, which masking hides; but for Gaussian noise independent of the data and
    a homoscedastic regression error (variance :math:`\omega^2`), Isserlis' theorem gives it in
    terms of Gram quantities:

    .. math::

        V = Z^T Z\,(\omega^2 + s_g^2) + n\sigma^2(s_g^2 + \bar e^2)\,I
            + n\sigma^4\beta\beta^T,\qquad s_g^2 = \sigma^2(1 + \|\beta\|^2),

    with :math:`\bar e^2` the mean squared raw-data residual.  This returns V without the ordinary
    sampling term :math:`Z^T Z\omega^2` (the caller adds it unless ``conditional``).  Plug-in:
    :math:`Z^T Z \to \hat K_{ZZ}` (``Gzz``), :math:`\omega^2` (``omega2``) and
    :math:`\bar e^2 = \omega^2 (n - k)/n` from the corrected residual variance (clipped at 0),
    :math:`\beta \to \hat\beta` (``coef``).
    """
    s2 = sigma**2
    sg2 = s2 * (1.0 + np.einsum("...i,...i->...", coef, coef))[..., None, None]
    ebar2 = omega2 * df / n
    outer = coef[..., :, None] * coef[..., None, :]
    return Gzz * sg2 + n * s2 * (sg2 + ebar2) * np.eye(coef.shape[-1]) + n * s2**2 * outer


def _gram_noise_meat(coef, tau, predictors, intercept):
    r"""The rival Gram noise's part of the sandwich's meat, :math:`\operatorname{Cov}(\xi)`.

    For ``G = X^T X + E`` (:func:`dpmask.rivals.gram.release_gram`), to first order
    :math:`\hat\beta - \beta \approx K_{ZZ}^{-1}\xi` with :math:`\xi = E_{Z\cdot} v`,
    :math:`v = (1 \text{ at the response}, -\beta)`.  Writing :math:`E = (W + W^T)/2` with i.i.d.
    :math:`W_{ij} \sim N(0, \tau^2)` gives :math:`\operatorname{Cov}(\xi) = \tfrac{\tau^2}{2}
    \bigl((1 + \|\beta\|^2) I + \beta\beta^T\bigr)`, minus :math:`\tau^2\beta_c^2` in entry (c, c)
    when the intercept's Gram entry c is set to its known value n (its noise E_cc is gone).  The
    covariance is then :math:`\hat K_{ZZ}^{-1}\bigl(\operatorname{Cov}(\xi) + \hat K_{ZZ} s^2\bigr)\hat K_{ZZ}^{-1}`,
    the sampling term :math:`\hat K_{ZZ} s^2` added by the caller unless ``conditional``.
    """
    bb = np.einsum("...i,...i->...", coef, coef)[..., None, None]
    outer = coef[..., :, None] * coef[..., None, :]
    meat = 0.5 * tau**2 * ((1.0 + bb) * np.eye(coef.shape[-1]) + outer)
    if intercept is not None:
        c = int(np.flatnonzero(predictors == intercept)[0])
        meat[..., c, c] -= tau**2 * coef[..., c] ** 2
    return meat


def _ols_covariance(Hinv, Gzz, coef, sigma2_resid, n, df, noise, sigma, tau, predictors, intercept, correct_noise,
                    conditional):
    """The coefficients' covariance (symmetrised).

    Uncorrected: the textbook ``s^2 G_ZZ^{-1}``.  Corrected: the sandwich ``H^{-1} V H^{-1}`` with the
    noise's meat (:func:`_mask_noise_meat` or :func:`_gram_noise_meat`) plus, unless *conditional*,
    the ordinary sampling term ``G_ZZ omega^2``, omega^2 the residual variance clipped at 0.
    """
    omega2 = np.clip(sigma2_resid, 0.0, None)[..., None, None]
    if not correct_noise:
        cov = omega2 * Hinv
    else:
        if noise == "gram":
            meat = _gram_noise_meat(coef, tau, predictors, intercept)
        else:
            meat = _mask_noise_meat(Gzz, coef, omega2, n, df, sigma)
        if not conditional:
            meat = meat + Gzz * omega2
        cov = Hinv @ meat @ Hinv
    return 0.5 * (cov + np.swapaxes(cov, -1, -2))


def _check_fit_finite(coef, cov, sigma2_resid):
    """Refuse a fit whose numbers left the float range (nothing is returned as NaN or inf)."""
    if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(cov)) and np.all(np.isfinite(sigma2_resid))):
        raise ValueError("G, n and sigma give a fit beyond the float range (entries of G, n sigma^2 and their "
                         "squares must stay below about 1e308); rescale the data")


def ols_from_release(Y, response, sigma=None, *, correct_noise=True, intercept=None, conditional=False):
    """Least squares on a release: :func:`ols_from_gram` applied to ``Y^T Y``.

    Parameters
    ----------
    Y : array_like, shape (n, p)
        The release (Setting A ``X + C`` or Setting B ``A (X + C)``), finite
        and real, with n > p - 1 rows (more rows than predictors).
    response : int
        Column index of the response.
    sigma : float, optional
        The release's noise standard deviation, 0 < sigma <= 1e100; required
        for the correction.  Outside these ranges a ValueError names the argument.
    correct_noise, intercept, conditional
        See :func:`ols_from_gram`.

    Returns
    -------
    OLSResult

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.ones(400), rng.uniform(-1, 1, 400)])
    >>> X = np.column_stack([X, 0.2 + 0.5 * X[:, 1]])
    >>> from dpmask.paper.mechanisms import release_b
    >>> fit = ols_from_release(release_b(X, 0.05, rng=1), response=2, sigma=0.05, intercept=0)
    >>> np.round(fit.coef, 1)
    array([0.2, 0.5])
    """
    Y = check_matrix(Y, "Y")
    if Y.shape[1] >= 2 and Y.shape[0] <= Y.shape[1] - 1:
        raise ValueError(f"Y must have more rows than predictors (n > p - 1 = {Y.shape[1] - 1}), "
                         f"got shape {Y.shape}")
    return ols_from_gram(
        Y.T @ Y,
        Y.shape[0],
        response,
        sigma,
        correct_noise=correct_noise,
        intercept=intercept,
        conditional=conditional,
    )


def _second_moments(G, n, sigma, correct_noise, constant, noise="mask", tau=None):
    """Covariance-type matrix of the non-constant columns from a (stack of) Gram matrices."""
    G = _check_gram(G, batch=True)
    p = G.shape[-1]
    n = _check_n(n, p)
    constant = _check_constant(constant, p)
    noise, sigma, tau = _check_noise(noise, sigma, tau, correct_noise)
    tau2 = 0.0
    if correct_noise and noise == "mask":
        G = G - n * sigma**2 * np.eye(p)
    elif correct_noise:
        tau2 = tau**2
    keep = np.array([j for j in range(p) if j != constant])
    if keep.size == 0:
        raise ValueError("the Gram matrix needs at least one column besides the constant one")
    S = G[..., keep[:, None], keep[None, :]]
    if constant is None:
        return S / n, keep
    if n < 2:
        raise ValueError(f"centring needs n >= 2 rows, got n={n}")
    # Column sums are the Gram entries with the constant column: G[c, j] = sum_i x_ij (+ noise).
    # Under the rival's noise each sum carries independent N(0, tau^2/2) noise, whose
    # contribution tau^2/2 I to E[sums sums^T] is removed.
    sums = G[..., constant, keep]
    outer = sums[..., :, None] * sums[..., None, :] - 0.5 * tau2 * np.eye(keep.size)
    return (S - outer / n) / (n - 1), keep


def correlation_from_gram(G, n, sigma=None, *, correct_noise=True, constant=None, noise="mask", tau=None):
    r"""Correlation matrix of the data's columns, estimated from a noisy Gram matrix.

    With ``S`` the (corrected) covariance-type matrix of the non-constant
    columns -- ``(G - n sigma^2 I)/n`` for a release (``noise="mask"``),
    ``G/n`` for the rival (``noise="gram"``), centred through the constant
    column when one is given -- the estimate is

    .. math::

        \hat R = D^{-1/2} S_+ D^{-1/2},\qquad D = \operatorname{diag}(S_+),

    where :math:`S_+` is ``S`` itself when it is positive semidefinite and
    otherwise its projection onto the positive semidefinite cone (negative
    eigenvalues set to 0, the nearest PSD matrix in Frobenius norm), with a
    ``RuntimeWarning``.  The projection keeps every entry of :math:`\hat R`
    in [-1, 1]: without it a bias-corrected ``S`` that the noise has pushed
    out of the cone gives "correlations" such as 1.003.  Since
    :math:`S_+ - S` is PSD, the projection never lowers a variance.

    Parameters
    ----------
    G : array_like, shape (p, p) or (..., p, p)
        Noisy Gram matrix (or a stack of them).
    n : int
        Number of rows of the data, >= 1 (>= 2 with a constant column).
    sigma : float, optional
        ``noise="mask"``: the release's noise standard deviation,
        0 < sigma <= 1e100; required for the correction.  A corrected
        variance <= 0 (sigma too large for the release) is a ValueError
        naming sigma.
    correct_noise : bool
        Remove the noise's mean (``n sigma^2 I``; nothing for the rival
        apart from the tau^2/2 in the centring) first (default).
    constant : int or None
        Index of a column that held the constant 1 before the release (see
        :func:`correlation_from_release`); None: uncentred correlation.
    noise : {"mask", "gram"}
        Noise model of ``G`` (see :func:`ols_from_gram`).
    tau : float, optional
        ``noise="gram"``: standard deviation of the Gram noise on the
        diagonal, > 0 (not a data-noise sigma); required for the correction.

    Returns
    -------
    ndarray, shape (m, m) or (..., m, m)
        Correlation matrix of the m non-constant columns, in their order.

    Raises
    ------
    ValueError
        On malformed input or if a (corrected) variance is not positive.

    Warns
    -----
    RuntimeWarning
        When a (corrected) covariance matrix is not PSD and is projected.

    Examples
    --------
    >>> X = np.array([[1.0, 0.2], [0.5, 0.4], [-0.3, -0.1]])
    >>> R = correlation_from_gram(X.T @ X, 3, correct_noise=False)
    >>> round(float(R[0, 1]), 4)
    0.8106
    """
    S, _ = _second_moments(G, n, sigma, correct_noise, constant, noise, tau)
    var = np.diagonal(S, axis1=-2, axis2=-1)
    if np.any(var <= 0):
        j = int(np.argmax((var <= 0).reshape(-1, var.shape[-1]).any(axis=0)))
        bad = var[..., j].min()
        if correct_noise and noise == "mask":
            raise ValueError(
                f"sigma is too large for this release to estimate a correlation: the corrected variance of "
                f"column {j} (its variance minus sigma^2) is {bad:.3g} <= 0"
            )
        raise ValueError(f"column {j} of the data (G, Y) has variance {bad:.3g} <= 0: a correlation needs "
                         "columns that vary")
    w, V = np.linalg.eigh(S)
    neg = w[..., 0] < 0
    if np.any(neg):
        count = f" ({int(neg.sum())} of {neg.size})" if neg.size > 1 else ""
        warnings.warn(
            f"the (corrected) covariance matrix is not positive semidefinite{count}; it was projected "
            "onto the positive semidefinite cone so that the correlations stay in [-1, 1]",
            RuntimeWarning,
            stacklevel=2,
        )
        S = np.where(neg[..., None, None], (V * np.clip(w, 0.0, None)[..., None, :]) @ np.swapaxes(V, -1, -2), S)
    d = 1.0 / np.sqrt(np.diagonal(S, axis1=-2, axis2=-1))
    R = S * d[..., :, None] * d[..., None, :]
    R = np.clip(0.5 * (R + np.swapaxes(R, -1, -2)), -1.0, 1.0)
    idx = np.arange(R.shape[-1])
    R[..., idx, idx] = 1.0
    return R


def correlation_from_release(Y, sigma=None, *, correct_noise=True, constant=None):
    """Correlation matrix of the data's columns, estimated from a release.

    :func:`correlation_from_gram` applied to ``Y^T Y`` and n rows (noise model
    ``"mask"``); a corrected covariance outside the PSD cone is projected
    onto it with a ``RuntimeWarning`` (see there).

    Parameters
    ----------
    Y : array_like, shape (n, p)
        The release.
    sigma : float, optional
        The release's noise standard deviation, 0 < sigma <= 1e100; required
        for the correction (a corrected variance <= 0 is a ValueError naming sigma).
    correct_noise : bool
        Remove ``n sigma^2 I`` from the Gram matrix first (default).
    constant : int or None
        Index of a column that held the constant 1 before the release.  With
        it the columns are centred (their sums are the Gram entries with the
        constant column) and the result is Pearson's correlation of the other
        columns; without it, masking hides the means and the result is the
        uncentred correlation (cosine similarity) of all columns.

    Returns
    -------
    ndarray
        Correlation matrix of the non-constant columns, in their order.

    Raises
    ------
    ValueError
        If a (corrected) variance is not positive.

    Examples
    --------
    >>> X = np.column_stack([np.ones(5), [0.1, 0.4, -0.3, 0.9, 0.0], [0.2, 0.5, -0.1, 0.7, 0.1]])
    >>> bool(np.allclose(correlation_from_release(X, correct_noise=False, constant=0),
    ...                  np.corrcoef(X[:, 1:].T)))
    True
    """
    Y = check_matrix(Y, "Y")
    return correlation_from_gram(Y.T @ Y, Y.shape[0], sigma, correct_noise=correct_noise, constant=constant)


def pca_from_gram(G, n, sigma=None, *, correct_noise=True, constant=None, noise="mask", tau=None):
    """Principal components of the data's columns, estimated from a noisy Gram matrix.

    Eigen-decomposition of the (corrected) covariance matrix ``S`` of
    :func:`correlation_from_gram` (centred when a constant column is given,
    the second-moment matrix otherwise), without any projection: corrected
    eigenvalues can be negative when the noise dominates and are returned as
    computed.

    Parameters
    ----------
    G : array_like, shape (p, p) or (..., p, p)
    n : int
    sigma : float, optional
        ``noise="mask"``: the release's noise standard deviation.
    correct_noise : bool
    constant : int or None
    noise : {"mask", "gram"}
    tau : float, optional
        ``noise="gram"``: the Gram noise's standard deviation on the diagonal.

    Returns
    -------
    eigenvalues : ndarray
        In decreasing order (last axis).
    eigenvectors : ndarray
        Columns are the principal directions (sign fixed so that the largest
        entry of each is positive), in the order of the eigenvalues.

    Examples
    --------
    >>> values, vectors = pca_from_gram(np.diag([3.0, 1.0]), 1, correct_noise=False)
    >>> values
    array([3., 1.])
    """
    S, _ = _second_moments(G, n, sigma, correct_noise, constant, noise, tau)
    values, vectors = np.linalg.eigh(S)
    values, vectors = values[..., ::-1], vectors[..., :, ::-1]
    big = np.argmax(np.abs(vectors), axis=-2)
    lead = np.take_along_axis(vectors, big[..., None, :], axis=-2)
    signs = np.where(lead >= 0, 1.0, -1.0)
    return values, vectors * signs


def pca_from_release(Y, sigma=None, *, correct_noise=True, constant=None):
    """Principal components of the data's columns, estimated from a release.

    :func:`pca_from_gram` applied to ``Y^T Y`` and n rows (noise model
    ``"mask"``).  Masking leaves these unchanged, up to the noise, because
    they are functions of the Gram matrix.

    Parameters
    ----------
    Y : array_like, shape (n, p)
        Finite and real.
    sigma : float, optional
        0 < sigma <= 1e100 (``SIGMA_MAX``: beyond it n sigma^2 could leave the
        float range); outside, a ValueError names sigma.
    correct_noise : bool
    constant : int or None

    Returns
    -------
    eigenvalues : ndarray
        In decreasing order.
    eigenvectors : ndarray
        Columns are the principal directions (sign fixed so that the largest
        entry of each is positive), in the order of the eigenvalues.
    """
    Y = check_matrix(Y, "Y")
    return pca_from_gram(Y.T @ Y, Y.shape[0], sigma, correct_noise=correct_noise, constant=constant)


def simulate_gram(XtX, n, sigma, size=None, rng=None):
    r"""Draw the Gram matrix ``(X + C)^T (X + C)`` of a release without forming it.

    Its law (noncentral Wishart) depends on X only through ``X^T X``: with
    ``X = Q R`` (thin QR) split the noise into its part in the column space
    of X and the rest, ``C = Q C_1 + Q_\perp C_2``; then

    .. math::

        M^T M = (R + C_1)^T (R + C_1) + C_2^T C_2,

    with ``C_1`` a p x p Gaussian matrix and ``C_2^T C_2`` an independent
    Wishart(n - p, sigma^2 I) matrix (Bartlett decomposition,
    ``scipy.stats.wishart``).  Cost O(p^3) per draw, independent of n; the
    Gram matrix of a masked release is the same (Setting B keeps it).

    Parameters
    ----------
    XtX : array_like, shape (p, p)
        ``X^T X`` of the data, symmetric positive semidefinite.
    n : int
        Rows of the data; p < n <= 2**53.
    sigma : float
        Noise standard deviation, 0 < sigma <= 1e100 (``SIGMA_MAX``).
    size : int or None
        Number of draws; None for one; at most ``DRAW_ENTRIES_MAX // p**2``
        (2**26 numbers in all, 512 MB).
    rng : numpy.random.Generator, int or None

    Outside these ranges, and for complex input, a ValueError or TypeError
    names the argument (no MemoryError, no ComplexWarning).

    Returns
    -------
    ndarray, shape (p, p) or (size, p, p)
    """
    XtX = _check_gram(XtX, "XtX")
    p = XtX.shape[0]
    n = _check_n(n, p)
    if n <= p:
        raise ValueError(f"n must exceed p={p} (a release has more rows than columns), got n={n}")
    sigma = _check_sigma_scalar(sigma)
    if size is not None:
        size = check_int(size, "size", minimum=1, maximum=max(1, DRAW_ENTRIES_MAX // (p * p)))
        if size.ndim != 0:
            raise ValueError("size must be a single whole number >= 1 or None")
        size = int(size)
    elif p * p > DRAW_ENTRIES_MAX:
        raise ValueError(f"XtX must be at most {int(DRAW_ENTRIES_MAX ** 0.5)} x {int(DRAW_ENTRIES_MAX ** 0.5)}")
    rng = as_rng(rng)
    # Any R with R^T R = X^T X will do (the law depends on R only through R^T R).
    w, V = np.linalg.eigh(XtX)
    if w.min() < -1e-9 * max(w.max(), 1.0):
        raise ValueError("XtX must be positive semidefinite")
    R = (V * np.sqrt(np.clip(w, 0.0, None))).T
    m = 1 if size is None else size
    C1 = sigma * rng.standard_normal((m, p, p))
    RC = R + C1
    if n - p >= p:
        # sigma^2 times a Wishart(n - p, I) draw: the same law, and no Cholesky of a matrix that
        # underflows to 0 when sigma is tiny
        W = stats.wishart(df=n - p, scale=np.eye(p)).rvs(size=m, random_state=rng)
        W = sigma**2 * np.asarray(W).reshape(m, p, p)
    else:  # too few degrees of freedom for scipy's Wishart: draw C_2 itself
        C2 = sigma * rng.standard_normal((m, n - p, p))
        W = np.einsum("mij,mik->mjk", C2, C2)
    out = np.einsum("mij,mik->mjk", RC, RC) + W
    return out[0] if size is None else out
