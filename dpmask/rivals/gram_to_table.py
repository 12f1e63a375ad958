r"""The rival as a table: the noisy Gram matrix turned into an n x p table (chapter 9, Lemma 9.1).

:func:`gram_table` takes the rival's noisy Gram matrix ``K̂`` (:mod:`dpmask.rivals.gram`) and
draws an n x p table with the law of a masked release given its Gram matrix (Lemma 9.1) where
``K̂`` is positive definite (Proposition 9.5; elsewhere its rank is below p): post-processing,
so no privacy is spent.  :func:`psd_projection` is the nearest positive semidefinite matrix,
which the table's Gram matrix equals.  Rows are the book's neighbours (``x = (z, y)`` in
[-1, 1]^p, one row replaced by another at Euclidean distance at most 1, Definition 2.1).
"""

from __future__ import annotations

import numpy as np

from .._validate import as_rng
from ..inference import _check_gram
from ..paper.mechanisms import FRAME_MAX_ENTRIES, stiefel_frame
from ._args import P_MAX, _whole

__all__ = ["psd_projection", "gram_table"]


# --------------------------------------------------------------------------- the rival as a table


def psd_projection(K):
    r"""Nearest positive semidefinite matrix in Frobenius norm (negative eigenvalues set to 0).

    .. math::

        K_+ = V \max(\Lambda, 0) V^\top \quad\text{for}\quad K = V \Lambda V^\top .

    Parameters
    ----------
    K : array_like, shape (p, p) or (..., p, p)
        Symmetric and finite.

    Returns
    -------
    ndarray, the shape of K

    Examples
    --------
    >>> psd_projection(np.diag([2.0, -1.0]))
    array([[2., 0.],
           [0., 0.]])
    """
    K = _check_gram(K, "K", batch=True)
    scale = float(np.max(np.abs(K))) if K.size else 0.0
    scale = scale or 1.0                    # eigh of entries near 1e308 overflows: scale first
    w, V = np.linalg.eigh(K / scale)
    out = (V * np.clip(w, 0.0, None)[..., None, :]) @ np.swapaxes(V, -1, -2)
    out = 0.5 * out + 0.5 * np.swapaxes(out, -1, -2)
    with np.errstate(over="ignore"):
        out = out * scale
    if not np.all(np.isfinite(out)):
        raise ValueError("K is too large: its PSD projection has entries beyond the float range")
    return out


def gram_table(K_tilde, n, rng=None):
    r"""The rival as a table: an n x p table whose Gram matrix is the PSD projection of ``K̂``.

    .. math::

        T = U\,K̂_+^{1/2},\qquad K̂_+ = \text{PSD projection of } K̂,\quad
        U \text{ a uniformly distributed } n \times p \text{ frame},

    with the symmetric (eigen) square root, so that ``T^T T = K̂_+``.  By
    Lemma 9.1 a masked release given its Gram matrix ``S`` is ``U R_S``
    (``R_S`` the Cholesky factor); any factor ``F`` with ``F^T F = S`` gives
    the same law, because ``F = O R_S`` for an orthogonal ``O`` and ``U O``
    is again a uniform frame.  So ``T`` has, given its Gram matrix, the law of
    a masked release on the event that ``K̂`` is positive definite (a masked
    release's Gram matrix is positive definite almost surely; where ``K̂`` is
    not, ``T`` has rank below p, Proposition 9.5, and
    :func:`dpmask.rivals.gram.gram_pd_probability` gives the event's probability), and
    it is a post-processing of ``K̂``: it is exactly as
    private as ``K̂`` (the Gaussian mechanism on ``X^T X``,
    :func:`dpmask.rivals.gram.release_gram`).  The square root also exists when the
    projection is singular, where a Cholesky factor does not.

    Parameters
    ----------
    K_tilde : array_like, shape (p, p)
        The rival's noisy Gram matrix ``K̂`` (symmetric, finite), 1 <= p <= 64.
    n : int
        Rows of the table, p <= n and n p <= 2**26.
    rng : numpy.random.Generator, int or None
        Randomness of the frame (fresh entropy when None).

    Returns
    -------
    ndarray, shape (n, p)

    Examples
    --------
    >>> K_hat = np.array([[4.0, 1.0], [1.0, -1.0]])       # not PSD: the projection is singular
    >>> T = gram_table(K_hat, 50, rng=0)
    >>> T.shape, bool(np.allclose(T.T @ T, psd_projection(K_hat)))
    ((50, 2), True)
    """
    K = _check_gram(K_tilde, "K_tilde")
    p = K.shape[0]
    if p > P_MAX:
        raise ValueError(f"K_tilde must be at most {P_MAX} x {P_MAX}, got shape {K.shape}")
    n = _whole(n, "n", p, FRAME_MAX_ENTRIES // p)
    scale = float(np.max(np.abs(K))) or 1.0       # eigh of entries near 1e308 overflows: scale first
    w, V = np.linalg.eigh(K / scale)
    root = (V * (np.sqrt(np.clip(w, 0.0, None)) * np.sqrt(scale))) @ V.T   # symmetric square root of K_+
    root = 0.5 * root + 0.5 * root.T
    return stiefel_frame(n, p, as_rng(rng)) @ root

