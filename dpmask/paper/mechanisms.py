"""The releases of the paper: Settings A, B, C and block-diagonal masking.

Setting A publishes ``X + C``; Setting B publishes ``A (X + C)`` with ``A`` a
Haar-distributed n x n orthogonal matrix; Setting C publishes ``A X + C``;
block-diagonal masking (Section 4) uses a block-diagonal ``A`` whose blocks are
independent Haar matrices.  ``C`` has i.i.d. N(0, sigma^2) entries throughout.

The frame identity
------------------
Setting B never needs the n x n matrix.  Write ``M = X + C = Q R`` (thin QR,
``Q`` an n x p matrix with orthonormal columns).  For Haar ``A`` independent
of ``M``, ``A Q`` is a uniformly distributed n x p frame, whatever ``Q`` is,
so ``A M = (A Q) R`` has the law of ``U R`` with ``U`` a uniform frame drawn
independently of ``R``.  Only ``R`` (any p x p factor with ``R^T R = M^T M``)
and a uniform frame are needed: O(n p^2) time and O(n p) memory instead of
O(n^3) and O(n^2).  The uniform frame is ``Z (chol(Z^T Z))^{-1}`` for a
Gaussian n x p matrix ``Z``, which is the Q factor of ``Z`` with the signs of
R's diagonal made positive (Mezzadri 2007), computed without a second QR.

Domain (the rule of the package)
--------------------------------
Data are finite real 2-D arrays with entries in [-1, 1] (complex data raise a
``TypeError`` naming ``X``: the imaginary part is never dropped silently);
sigma lies in (0, 1e100] (``SIGMA_MAX``).  Functions that allocate a matrix of their own
refuse sizes beyond a documented cap with a ``ValueError`` naming the
argument: :func:`haar_orthogonal` (and the ``"dense"`` method, which calls
it) takes n <= ``HAAR_MAX_N`` = 8192 (an n x n matrix of 512 MiB),
:func:`stiefel_frame` takes n * p <= ``FRAME_MAX_ENTRIES`` = 2**26
(512 MiB).  The releases allocate only arrays of the data's own shape.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .._validate import COUNT_MAX, as_rng, check_block_sizes, check_int, check_matrix, check_single_sigma

#: Largest sigma the releases accept (noise and Gram matrices stay far from overflow).
SIGMA_MAX = 1e100
#: Largest n accepted by haar_orthogonal (n x n float64: 512 MiB).
HAAR_MAX_N = 8192
#: Largest n * p accepted by stiefel_frame (512 MiB of float64).
FRAME_MAX_ENTRIES = 2**26

__all__ = [
    "check_data",
    "haar_orthogonal",
    "stiefel_frame",
    "release_a",
    "release_b",
    "release_c",
    "release_block",
]


def check_data(X, *, name="X"):
    """Validate a data matrix: 2-D, finite, every entry in [-1, 1].

    Parameters
    ----------
    X : array_like
        The n x p data set (rows are individuals), scaled so that
        ``|x_ij| <= 1`` as the paper's equation (XboundedOne) assumes.
    name : str
        Name used in error messages.

    Returns
    -------
    ndarray
        ``X`` as a float64 array.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, has a non-finite entry, or an entry outside
        [-1, 1]; the message names the first offending row and column.
    """
    arr = check_matrix(X, name)
    outside = np.abs(arr) > 1
    if outside.any():
        i, j = np.argwhere(outside)[0]
        raise ValueError(
            f"every entry of {name} must lie in [-1, 1]; row {i}, column {j} is {arr[i, j]!r}"
        )
    return arr


def _check_masked_shape(X, name="X"):
    n, p = X.shape
    if n <= p:
        raise ValueError(f"{name} must have more rows than columns (n > p) for masking, got n={n}, p={p}")
    return n, p


def _check_size(value, name, minimum=1, maximum=COUNT_MAX):
    arr = check_int(value, name, minimum=minimum, maximum=maximum)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a single whole number >= {minimum}")
    return int(arr)


def haar_orthogonal(n, rng=None):
    """Draw an n x n orthogonal matrix from the Haar (uniform) distribution.

    QR of a Gaussian matrix, with the columns of Q multiplied by the signs of
    R's diagonal: without that fix Q is not Haar distributed
    (Mezzadri 2007).  O(n^3) time, O(n^2) memory: the reference path.

    Parameters
    ----------
    n : int
        Size, 1 <= n <= ``HAAR_MAX_N`` (8192: the matrix alone takes
        512 MiB; beyond, a ValueError names n).
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    ndarray, shape (n, n)

    Examples
    --------
    >>> A = haar_orthogonal(4, rng=0)
    >>> bool(np.allclose(A.T @ A, np.eye(4)))
    True
    """
    n = _check_size(n, "n", maximum=HAAR_MAX_N)
    rng = as_rng(rng)
    Z = rng.standard_normal((n, n))
    Q, R = np.linalg.qr(Z)
    return Q * np.sign(np.diag(R))


def stiefel_frame(n, p, rng=None):
    """Draw a uniformly distributed n x p matrix with orthonormal columns.

    Computed as ``Z R^{-1}`` with ``Z`` Gaussian and ``R`` the Cholesky factor
    of ``Z^T Z`` (upper triangular, positive diagonal): this is the Q factor
    of ``Z`` with the sign fix, so its law is uniform on the Stiefel manifold,
    at the cost of one n x p x p product instead of a QR.

    Parameters
    ----------
    n, p : int
        Shape, n >= p >= 1, n * p <= ``FRAME_MAX_ENTRIES`` (2**26
        entries, 512 MiB; beyond, a ValueError names n and p).
    rng : numpy.random.Generator, int or None

    Returns
    -------
    ndarray, shape (n, p)
    """
    n = _check_size(n, "n")
    p = _check_size(p, "p")
    if p > n:
        raise ValueError(f"p must be <= n for an n x p frame, got n={n}, p={p}")
    if n * p > FRAME_MAX_ENTRIES:
        raise ValueError(f"n * p must be <= {FRAME_MAX_ENTRIES} (512 MiB), got n={n}, p={p}")
    rng = as_rng(rng)
    Z = rng.standard_normal((n, p))
    return _orthonormalise(Z)


def _orthonormalise(Z):
    """Q factor (positive-diagonal R) of a full-rank tall matrix Z."""
    try:
        R = linalg.cholesky(Z.T @ Z, lower=False)
    except linalg.LinAlgError:  # practically never for Gaussian Z; stay exact anyway
        Q, Rq = np.linalg.qr(Z)
        return Q * np.sign(np.diag(Rq))
    # Z R^{-1} through the p x p inverse: one gemm, no n x p triangular solve (which is
    # slow on small blocks when BLAS threads compete).
    return Z @ linalg.solve_triangular(R, np.eye(R.shape[0]), lower=False)


def _dense_mask(X, rng):
    """The explicit n x n Haar mask of the ``"dense"`` method, named by X's rows when too large."""
    if X.shape[0] > HAAR_MAX_N:
        raise ValueError(f"method='dense' needs n <= {HAAR_MAX_N} rows of X (an n x n mask), got n={X.shape[0]}")
    return haar_orthogonal(X.shape[0], rng)


def _scalar_sigma(sigma):
    return check_single_sigma(sigma, top=SIGMA_MAX)


def _noise(shape, sigma, rng):
    noise = rng.standard_normal(shape)
    noise *= sigma
    return noise


def release_a(X, sigma, rng=None):
    """Setting A, equation (modelA): publish ``Y = X + C``.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Data with entries in [-1, 1].
    sigma : float
        Noise standard deviation, > 0.
    rng : numpy.random.Generator, int or None
        ``None`` (the default) draws fresh entropy from the operating system,
        as every published release must.  A fixed seed or Generator is for
        teaching and tests only: anyone who knows it regenerates the noise
        and the mask and tells neighbouring data sets apart with certainty
        (see the book's page "Privacy in practice").

    Returns
    -------
    ndarray, shape (n, p)
    """
    X = check_data(X)
    sigma = _scalar_sigma(sigma)
    rng = as_rng(rng)
    return X + _noise(X.shape, sigma, rng)


def _r_factor(M):
    """A p x p upper-triangular R with R^T R = M^T M.

    Cholesky of the Gram matrix (one BLAS-3 pass over M); if M is so close to
    rank deficient that the Gram matrix is not numerically positive definite,
    fall back to Householder QR, which needs no such condition.
    """
    try:
        return linalg.cholesky(M.T @ M, lower=False)
    except linalg.LinAlgError:
        return np.linalg.qr(M, mode="r")


def _mask_frame(M, rng):
    """Law of A M for Haar A, via the frame identity (module docstring).

    With Z Gaussian and R_Z = chol(Z^T Z), U = Z R_Z^{-1} is a uniform frame,
    so U R_M = Z (R_Z^{-1} R_M): one p x p triangular solve and one n x p x p
    product, no second factorisation of a tall matrix.
    """
    n, p = M.shape
    Z = rng.standard_normal((n, p))
    R_z = linalg.cholesky(Z.T @ Z, lower=False)
    return Z @ linalg.solve_triangular(R_z, _r_factor(M), lower=False)


def _check_method(method):
    if method not in ("frame", "dense"):
        raise ValueError(f"method must be 'frame' or 'dense', got {method!r}")


def release_b(X, sigma, rng=None, method="frame"):
    """Setting B, equation (modelB): publish ``Y = A (X + C)``.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Data with entries in [-1, 1], n > p.
    sigma : float
        Noise standard deviation, > 0.
    rng : numpy.random.Generator, int or None
        As in :func:`dpmask.paper.mechanisms.release_a`: ``None`` (the default, fresh entropy) for
        every published release; a fixed seed only for teaching and tests.
    method : {"frame", "dense"}
        ``"frame"`` (default) draws the release through the frame identity,
        O(n p^2); ``"dense"`` forms the Haar matrix explicitly, O(n^3), and
        serves as the reference.  Both have the same distribution.

    Returns
    -------
    ndarray, shape (n, p)

    Notes
    -----
    ``Y^T Y = (X + C)^T (X + C)`` in both paths: masking keeps the Gram matrix.

    Examples
    --------
    >>> X = np.full((50, 2), 0.5)
    >>> Y = release_b(X, 1.0, rng=1)
    >>> Y.shape
    (50, 2)
    """
    _check_method(method)
    X = check_data(X)
    _check_masked_shape(X)
    sigma = _scalar_sigma(sigma)
    rng = as_rng(rng)
    M = _noise(X.shape, sigma, rng)
    M += X
    if method == "dense":
        return _dense_mask(X, rng) @ M
    return _mask_frame(M, rng)


def release_c(X, sigma, rng=None, method="frame"):
    """Setting C, equation (modelC): publish ``Y = A X + C``.

    By Lemma A.4 its density equals Setting B's.  The frame path draws
    ``A X`` as ``U R_X`` with ``X = Q_X R_X`` (valid also when X is rank
    deficient: Householder QR still gives orthonormal columns).

    Parameters
    ----------
    X : array_like, shape (n, p)
    sigma : float
    rng : numpy.random.Generator, int or None
        As in :func:`dpmask.paper.mechanisms.release_a`: ``None`` (the default, fresh entropy) for
        every published release; a fixed seed only for teaching and tests.
    method : {"frame", "dense"}

    Returns
    -------
    ndarray, shape (n, p)
    """
    _check_method(method)
    X = check_data(X)
    _check_masked_shape(X)
    sigma = _scalar_sigma(sigma)
    rng = as_rng(rng)
    if method == "dense":
        AX = _dense_mask(X, rng) @ X
    else:
        AX = _mask_frame(X, rng)
    return AX + _noise(X.shape, sigma, rng)


def _is_dask_array(X):
    return type(X).__module__.startswith("dask.")


def release_block(X, sigma, block_sizes=None, rng=None):
    """Block-diagonal masking (Section 4): mask each block of rows independently.

    ``A = diag(A_1, ..., A_k)`` with independent Haar blocks of sizes
    ``n_1, ..., n_k``; the release is ``A (X + C)``.  Each block is drawn
    through the frame identity, so the cost is O(n p^2) whatever the block
    sizes.  The noise this needs is :func:`dpmask.paper.bounds.sigma_b_block`
    (Theorem 3.4 with n replaced by the smallest block).

    Parameters
    ----------
    X : array_like or dask.array.Array, shape (n, p)
        Data with entries in [-1, 1].  A Dask array is masked chunk by chunk
        (its row chunks are the blocks; see :mod:`dpmask.scale`).
    sigma : float
        Noise standard deviation, > 0.
    block_sizes : sequence of int
        Sizes of the blocks; they must sum to n and each must exceed p.
        Ignored (taken from the row chunks) for a Dask array.
    rng : numpy.random.Generator, int or None
        As in :func:`dpmask.paper.mechanisms.release_a`: ``None`` (the default, fresh entropy) for
        every published release; a fixed seed only for teaching and tests.

    Returns
    -------
    ndarray or dask.array.Array, shape (n, p)
    """
    if _is_dask_array(X):
        from ..scale import release_block_dask

        return release_block_dask(X, sigma, rng=rng)
    X = check_data(X)
    n, p = X.shape
    if block_sizes is None:
        raise ValueError("block_sizes is required for an in-memory array (sizes summing to n, each > p)")
    sizes = check_block_sizes(block_sizes, p, n)
    sigma = _scalar_sigma(sigma)
    rng = as_rng(rng)
    M = X + _noise(X.shape, sigma, rng)
    out = np.empty_like(M)
    start = 0
    for size in sizes:
        stop = start + size
        out[start:stop] = _mask_frame(M[start:stop], rng)
        start = stop
    return out
