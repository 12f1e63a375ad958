r"""The smallest sigma proven sufficient by any result in the book: the paper's bounds or the exact Gaussian.

:func:`best_sufficient_sigma` takes the smaller of what the paper proves (Theorem 3.4,
:func:`dpmask.paper.bounds.sigma_b`) and the analytic Gaussian mechanism of Balle and Wang
(2018, :func:`dpmask.exact.gaussian.analytic_gaussian_sigma`), tight for Setting A and, by
Lemma 2.3, sufficient for Settings B and C; :func:`best_sufficient_source` names the result
attaining it.  It stands on both the paper's family and the exact one, hence its place here
(chapter 7 compares the two; the command line ``python -m dpmask sigma`` prints it).
Arguments, domain and errors are those of :mod:`dpmask.paper.bounds`.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_flag, scalar_or_array
from ..paper.bounds import _check_b_args, _check_setting, _sigma_b, sigma_b  # noqa: F401  (sigma_b: the doctests)
from .gaussian import _analytic_gaussian_sigma

__all__ = ["best_sufficient_sigma", "best_sufficient_source"]

_ANALYTIC = "analytic Gaussian (Balle & Wang 2018), Setting A"
_VIA_LEMMA = {
    "A": "",
    "B": ", valid for B by Lemma 2.3",
    "C": ", valid for C by Lemma 2.3 (Setting C has Setting B's law, Lemma A.4)",
}


def _check_corrected(corrected):
    return check_flag(corrected, "corrected")


def _best_parts(eps, delta, n, p, setting, corrected):
    """(analytic sigma, Theorem 3.4 sigma or None), validated and broadcast together."""
    setting = _check_setting(setting)
    corrected = _check_corrected(corrected)
    eps, delta, n, p = _check_b_args(eps, delta, n, p, corrected)  # validated and broadcast, by name
    # Theorem 3.4's domain holds the analytic Gaussian's: from here on the unvalidated cores (issue 30).
    analytic = np.asarray(_analytic_gaussian_sigma(eps, delta), dtype=float)
    if setting == "A":
        return setting, corrected, analytic, None
    return setting, corrected, analytic, np.asarray(_sigma_b(eps, delta, n, p, corrected), dtype=float)


def best_sufficient_sigma(eps, delta, n, p, setting="B", *, corrected=False):
    r"""Smallest sigma PROVEN sufficient for (eps, delta)-DP by any result in the book.

    Unlike :func:`~dpmask.paper.bounds.sufficient_sigma`, which keeps to what the paper proves
    (Theorems 3.2 and 3.4), this takes every proven sufficient bound the book
    knows:

    - Setting ``"A"``: the analytic Gaussian sigma
      (:func:`dpmask.exact.analytic_gaussian_sigma`, Balle and Wang 2018),
      which is tight, hence below Theorem 3.2's and Corollary 3.3's
      sufficient values (those are sufficient for the paper's stronger
      criterion).
    - Settings ``"B"`` and ``"C"``: the smaller of Theorem 3.4's root
      :math:`\sigma_0` (:func:`sigma_b`) and the analytic Gaussian sigma,
      which is sufficient for B by Lemma 2.3 (masking after a private release
      is post-processing), with no restriction to eps < 1.  Setting C releases
      Setting B's law (Lemma A.4), so its value is Setting B's.  Corollary
      3.5 is never smaller than Theorem 3.4, so it never attains the minimum.

    The exact sigma of Setting B for p = 1
    (:func:`dpmask.exact.masked_p1_sigma`) is far smaller, but it rests on a
    numerical search for the worst pair of neighbours, not on a proof, so it
    is not used here.  :func:`best_sufficient_source` names the result that
    attains the minimum.

    Parameters
    ----------
    eps : array_like
        Privacy parameter, in [1e-100, 1e4] (the package's domain of eps).
    delta : array_like
        Privacy parameter, in [1e-300, 1 - 1e-8) (Theorem 3.4's range).
    n, p : array_like
        Rows and columns, whole numbers with n > p >= 1 (n > p + 1 when
        *corrected*), n <= 2**53.  Setting A does not depend on them, but they are
        validated and broadcast all the same.
    setting : {"A", "B", "C"}
        Which release.
    corrected : bool
        Use the conservative 2(n - p - 1) variant of Theorem 3.4 (see
        :func:`~dpmask.paper.bounds.g_b`).  Must be a bool.

    Returns
    -------
    float or ndarray
        The smallest proven sufficient sigma; arguments broadcast like a ufunc.
        Each candidate is on its safe side (the analytic Gaussian sigma has
        delta at most the target, Theorem 3.4's root is not below the root),
        so their minimum is sufficient.

    Examples
    --------
    At eps = 0.001, delta = 0.01, p = 1, n = 100 the analytic Gaussian needs
    less noise than Theorem 3.4 (68.9 in the paper's Table 1):

    >>> round(best_sufficient_sigma(0.001, 0.01, 100, 1), 1)
    38.0
    >>> round(sigma_b(0.001, 0.01, 100, 1), 1)
    68.9
    >>> round(best_sufficient_sigma(0.1, 0.01, 100, 1), 2) == round(sigma_b(0.1, 0.01, 100, 1), 2)
    True
    """
    setting, corrected, analytic, thm34 = _best_parts(eps, delta, n, p, setting, corrected)
    if thm34 is None:
        return scalar_or_array(analytic)
    return scalar_or_array(np.minimum(analytic, thm34))


def best_sufficient_source(eps, delta, n, p, setting="B", *, corrected=False):
    """Name of the result attaining :func:`best_sufficient_sigma`.

    Parameters
    ----------
    eps, delta, n, p, setting, corrected
        As for :func:`best_sufficient_sigma`.

    Returns
    -------
    str or ndarray of str
        One of ``"analytic Gaussian (Balle & Wang 2018), Setting A"`` (Setting
        A), ``"analytic Gaussian (Balle & Wang 2018), Setting A, valid for B by
        Lemma 2.3"`` (and its Setting C form), ``"Theorem 3.4"`` or
        ``"Theorem 3.4 (conservative 2(n-p-1) variant)"``.  On an exact tie
        the analytic Gaussian is named.  Arguments broadcast like a ufunc.

    Examples
    --------
    >>> best_sufficient_source(0.001, 0.01, 100, 1)
    'analytic Gaussian (Balle & Wang 2018), Setting A, valid for B by Lemma 2.3'
    >>> best_sufficient_source(0.1, 0.01, 100, 1, "C")
    'Theorem 3.4'
    """
    setting, corrected, analytic, thm34 = _best_parts(eps, delta, n, p, setting, corrected)
    gauss = _ANALYTIC + _VIA_LEMMA[setting]
    if thm34 is None:
        names = np.full(analytic.shape, gauss, dtype=object)
    else:
        theorem = "Theorem 3.4 (conservative 2(n-p-1) variant)" if corrected else "Theorem 3.4"
        names = np.where(analytic <= thm34, gauss, theorem).astype(object)
    return names.item() if names.ndim == 0 else names
