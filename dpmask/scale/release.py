"""Masking data that do not fit in memory: block-diagonal and full Setting B on Dask.

Two releases work on a Dask array (``dask.array.Array``) whose row chunks are blocks
of rows, with memory bounded by a few chunks whatever the number of rows n:

* :func:`release_block_dask` -- block-diagonal masking (Section 4 of the
  paper): every row chunk is a block, masked on its own by an independent
  Haar matrix through the frame identity (see :mod:`dpmask.paper.mechanisms`).
  Its noise is :func:`dpmask.paper.bounds.sigma_b_block` of the chunk sizes.
* :func:`release_b_dask` -- full Setting B, one Haar matrix over all n rows.
  The release ``A (X + C)`` has the law of ``U R`` where ``R`` is the
  p x p triangular factor of ``M = X + C`` and ``U`` a uniform n x p frame
  independent of ``R``.  Both p x p factors (``R`` of ``M`` and the factor
  that turns a Gaussian n x p array into a frame) come from a tall-skinny QR
  (TSQR, Demmel et al. 2012) that keeps only the R factors: each chunk sends
  a p x p matrix up a tree, so nothing of size n x n, and no n x p array,
  is ever held.  A chunk of M is reduced by Householder QR (stable for any
  data); a Gaussian chunk, well conditioned, by Cholesky of its Gram matrix,
  which is several times faster.  Output chunks regenerate their Gaussian chunk from its
  seed rather than keeping it from the first pass.

Randomness is keyed by block: block ``i`` draws its noise from
``SeedSequence(root, spawn_key=(0, i))`` and its frame from
``SeedSequence(root, spawn_key=(1, i))``, where ``root`` is drawn once from
``rng``.  The result depends on the seed and the chunking only, never on the
scheduler or the order in which chunks run.  :func:`noisy_data_dask` returns
the ``X + C`` that both releases mask (same ``rng``, same ``C``), for checks.

Writing a release (:mod:`dpmask.scale.write`, re-exported here): :func:`~dpmask.scale.write.write_npy` (one ``.npy`` file) and :func:`~dpmask.scale.write.write_zarr`
(a Zarr array, one file per chunk) write chunk by chunk to a hidden temporary
file or directory beside the target, each task opening it by name, and put it in
place only when every chunk is written (``os.replace``, atomic for a file).
A computation that fails leaves no output and any previous file untouched.
A write whose process is killed (SIGKILL, SIGTERM) runs no clean-up; its hidden
temporary, which it held under an advisory lock, is removed by the next write
to the same target (a temporary still locked by a running write is left alone).

Domains.  Every public function states its valid domain in its docstring;
outside it a ``ValueError`` names the argument and the allowed range, before any
work is done (data entries outside [-1, 1] are found chunk by chunk when the
release is computed, and the message names the row and column).  Sizes are
capped because building a Dask graph costs time per chunk (about 10 s per
10^5 chunks for :func:`random_data_dask`, twice that for :func:`release_b_dask`):
at most ``MAX_CHUNKS`` = 100 000 row chunks, at most
``MAX_CHUNK_ENTRIES`` = 2^27 entries (1 GiB) in a chunk this module
generates, and at most ``MAX_ROWS`` = 2^53 rows.  Inputs must be real
(bool, integer or float dtype); complex arrays are refused, not truncated.  The
noise level is one number with 0 < sigma <= ``MAX_SIGMA`` = 1e150 (at 1e307
the release overflows); inside these ranges every release is finite.

On a cluster.  Nothing here assumes one machine: a task's randomness comes
from its block index and the root seed, never from shared state, and the
writers hand workers a path, not an open file.  The tests
(``tests/test_cluster.py``) run the releases on a
``dask.distributed.LocalCluster`` with two worker processes and check that

* :func:`release_block_dask`, :func:`release_b_dask` and
  :func:`noisy_data_dask` give results bit-identical to the threaded scheduler;
* they stay bit-identical when a worker process is killed in the middle of
  the computation (Dask recomputes the lost chunks, and a chunk's seed does
  not depend on where or when it runs);
* :func:`~dpmask.scale.write.write_npy` and :func:`~dpmask.scale.write.write_zarr`, run on the cluster, store exactly
  the in-memory release;
* a computation that fails half-way (a chunk holding an entry outside
  [-1, 1]) leaves a previous file at the target byte for byte as it was, and
  no output at all where there was none.

To use a real cluster, connect a client before computing; every function here
then runs on it unchanged::

    from dask.distributed import Client
    client = Client("tcp://scheduler-address:8786")   # or a dask-jobqueue/Kubernetes cluster
    X = dask.array.from_zarr("/shared/data.zarr")       # data every worker can read
    Y = release_b_dask(X, sigma, rng=None)              # fresh entropy: see below
    write_zarr(Y, "/shared/release.zarr")               # or write_npy(Y, "/shared/release.npy")

The workers must be able to import ``dpmask`` and to read the data and write
the target path: for :func:`~dpmask.scale.write.write_npy` and :func:`~dpmask.scale.write.write_zarr` it must be on a
file system every worker mounts (the final rename runs on the client's
machine).  Object stores (``s3://``) have no atomic rename; write there with
``dask.array.to_zarr`` and treat the store as unfinished until the call returns.

Seeds.  A fixed ``rng`` makes the book reproducible and voids privacy: anyone
who knows it regenerates the noise and the mask.  Publish only releases made
with ``rng=None`` (fresh entropy from the operating system), and see the
book's page "Privacy in practice" for what a release does not promise.

Dask is an optional dependency (extra ``scale``, with ``distributed`` and
``zarr``); it is imported only here and in :mod:`dpmask.scale.write`, on first use
(``dpmask.scale._dask``).
"""

from __future__ import annotations

import math

import numpy as np

from ._dask import import_dask
from .._validate import as_rng, check_int, check_sigma
from .write import compute, write_npy, write_zarr

__all__ = [
    "balanced_chunks",
    "random_data_dask",
    "noisy_data_dask",
    "release_block_dask",
    "release_b_dask",
    "stiefel_frame_dask",
    "compute",
    "write_npy",
    "write_zarr",
    "MAX_CHUNKS",
    "MAX_CHUNK_ENTRIES",
    "MAX_ROWS",
    "MAX_SIGMA",
]

MAX_CHUNKS = 100_000
"""Most row chunks a Dask array in this module may have (building the graph of
:func:`release_b_dask` on 10^5 chunks takes about 20 s on one core)."""

MAX_CHUNK_ENTRIES = 2**27
"""Most entries (rows x columns) of one generated chunk: 2^27 float64 entries are 1 GiB."""

MAX_ROWS = 2**53
"""Most rows n: every whole number up to 2^53 is exact in float64."""

MAX_SIGMA = 1e150
"""Largest noise standard deviation: far above any useful sigma, far below overflow
(the p x p factors of a release hold numbers of size about sqrt(n) sigma)."""

_NOISE, _FRAME = 0, 1
_FAN_IN = 16  # R factors combined per node of the TSQR tree


def _root_entropy(rng):
    """One 63-bit integer from ``rng``: the root of every block's seed."""
    return int(as_rng(rng).integers(0, 2**63 - 1))


def _block_rng(root, stream, i):
    return np.random.default_rng(np.random.SeedSequence(root, spawn_key=(stream, i)))


def _as_dask_matrix(X, name="X"):
    """A 2-D float Dask array with one column chunk and known row chunks."""
    _, da = import_dask()
    if not isinstance(X, da.Array):
        raise ValueError(f"{name} must be a dask.array.Array (use dpmask.paper.mechanisms for in-memory arrays)")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n rows x p columns), got {X.ndim} dimension(s)")
    if any(math.isnan(c) for c in X.chunks[0]):
        raise ValueError(f"{name} has unknown row chunk sizes; call {name}.compute_chunk_sizes() first")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers (bool, integer or float dtype), got dtype {X.dtype}")
    _check_chunk_count(
        len(X.chunks[0]), name,
        f"rechunk to larger row chunks, e.g. {name}.rechunk({{0: {-(-X.shape[0] // MAX_CHUNKS)}}})",
    )
    if len(X.chunks[1]) != 1:  # a block is a set of whole rows: join the column chunks
        X = X.rechunk({1: -1})
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    return X


def _check_blocks_exceed_p(chunks, p, name="X"):
    for i, size in enumerate(chunks):
        if size <= p:
            raise ValueError(
                f"every row chunk of {name} must have more rows than p={p} columns "
                f"(each chunk is a masking block); chunk {i} has {size} rows: "
                f"rechunk, e.g. {name}.rechunk({{0: {max(2 * p, 1000)}}})"
            )


def _checked_block(X_b, offset):
    """The check of :func:`dpmask.paper.mechanisms.check_data` on one chunk, rows numbered globally."""
    arr = np.asarray(X_b, dtype=np.float64)
    bad = ~np.isfinite(arr) | (np.abs(arr) > 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"every entry of X must be finite and lie in [-1, 1]; "
            f"row {offset + i}, column {j} is {float(arr[i, j])!r}"
        )
    return arr


def _check_sigma(sigma):
    """One number with 0 < sigma <= MAX_SIGMA."""
    if np.ndim(sigma) != 0:
        raise ValueError(f"sigma must be a single number, got an array of shape {np.shape(sigma)}")
    sigma = float(check_sigma(sigma))
    if sigma > MAX_SIGMA:
        raise ValueError(f"sigma must be <= 1e150 (MAX_SIGMA; beyond it the release overflows), got {sigma!r}")
    return sigma


def _check_rows(n, name="n"):
    value = int(check_int(n, name, minimum=1))
    if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
        value = int(n)  # the float check rounds integers beyond 2**53
    n = value
    if n > MAX_ROWS:
        raise ValueError(f"{name} must be <= 2**53 (rows exact in float64), got {n}")
    return n


def _check_chunk_count(count, name, hint):
    if count > MAX_CHUNKS:
        raise ValueError(
            f"{name} gives {count} row chunks, more than MAX_CHUNKS={MAX_CHUNKS} "
            f"(a Dask graph that large takes minutes to build): {hint}"
        )


def _offsets(chunks):
    return np.concatenate([[0], np.cumsum(chunks)[:-1]]).astype(int)


def balanced_chunks(n, target):
    """Row chunk sizes near ``target`` that sum to n and differ by at most one.

    The noise of block-diagonal masking is set by the smallest block
    (:func:`dpmask.paper.bounds.sigma_b_block`), so a short remainder chunk, as
    ``chunks=target`` leaves when ``target`` does not divide n, costs
    privacy.  Use ``X.rechunk({0: balanced_chunks(n, target)})``.

    Parameters
    ----------
    n : int
        Number of rows, 1 <= n <= 2**53 (``MAX_ROWS``).
    target : int
        Wanted rows per chunk, ``ceil(n / MAX_CHUNKS) <= target <= n``: at
        most ``MAX_CHUNKS`` (100 000) chunks.

    Returns
    -------
    tuple of int
        ``k = max(1, round(n / target))`` sizes, each ``n // k`` or ``n // k + 1``.

    Raises
    ------
    ValueError
        Naming ``n`` or ``target`` when either is outside its range.

    Examples
    --------
    >>> balanced_chunks(10, 3)
    (4, 3, 3)
    """
    n = _check_rows(n)
    target = int(check_int(target, "target", minimum=1))
    if target > n:
        raise ValueError(f"target must be <= n={n} (rows per chunk), got {target}")
    k = max(1, int(round(n / target)))
    _check_chunk_count(k, "target", f"target must be >= {-(-n // MAX_CHUNKS)} for n={n}, got {target}")
    small, extra = divmod(n, k)
    return (small + 1,) * extra + (small,) * (k - extra)


# ---------------------------------------------------------------------------
# data and noise
# ---------------------------------------------------------------------------

def random_data_dask(n, p, *, chunks=100_000, rng=None, distribution="uniform"):
    """Lazily generated data with entries in [-1, 1], for benchmarks and examples.

    Parameters
    ----------
    n, p : int
        Shape, 1 <= n <= 2**53, p >= 1.
    chunks : int
        Rows per chunk (the last chunk may be shorter), at least
        ``ceil(n / MAX_CHUNKS)`` (at most 100 000 chunks) and with
        ``min(chunks, n) * p <= MAX_CHUNK_ENTRIES`` (2^27 entries, 1 GiB a chunk).
    rng : numpy.random.Generator, int or None
        Seed; the same seed gives the same array.
    distribution : {"uniform", "normal"}
        ``"uniform"``: i.i.d. uniform on [-1, 1]; ``"normal"``: standard
        normal entries clipped to [-1, 1].

    Returns
    -------
    dask.array.Array, shape (n, p), one column chunk

    Raises
    ------
    ValueError
        Naming ``n``, ``p``, ``chunks`` or ``distribution`` outside its range.
    """
    _, da = import_dask()
    n = _check_rows(n)
    p = int(check_int(p, "p", minimum=1))
    chunks = _check_chunk_rows(n, p, chunks)
    if distribution not in ("uniform", "normal"):
        raise ValueError(f"distribution must be 'uniform' or 'normal', got {distribution!r}")
    gen = da.random.default_rng(_root_entropy(rng))
    if distribution == "uniform":
        return gen.uniform(-1.0, 1.0, size=(n, p), chunks=(chunks, p))
    return da.clip(gen.standard_normal(size=(n, p), chunks=(chunks, p)), -1.0, 1.0)


def _noisy_block(X_b, sigma, root, i, offset):
    X_b = _checked_block(X_b, offset)
    return X_b + sigma * _block_rng(root, _NOISE, i).standard_normal(X_b.shape)


def noisy_data_dask(X, sigma, rng=None):
    """Setting A on Dask, ``X + C``: the matrix that the Dask releases mask.

    With the same ``rng`` (the same seed, or a Generator in the same state),
    :func:`release_block_dask` and :func:`release_b_dask` mask exactly this
    ``X + C``, so ``Y^T Y`` of a release can be checked against it.

    Parameters
    ----------
    X : dask.array.Array, shape (n, p)
        Data with entries in [-1, 1] (checked chunk by chunk at compute time),
        real dtype, at most ``MAX_CHUNKS`` row chunks.
    sigma : float
        Noise standard deviation, 0 < sigma <= 1e150 (``MAX_SIGMA``).
    rng : numpy.random.Generator, int or None
        As in :func:`dpmask.paper.mechanisms.release_a`: ``None`` (the default, fresh entropy) for
        every published release; a fixed seed only for teaching and tests.

    Returns
    -------
    dask.array.Array, shape (n, p)
    """
    X = _as_dask_matrix(X)
    sigma = _check_sigma(sigma)
    root = _root_entropy(rng)
    return _map_rows(X, _noisy_block, sigma, root, name="dpmask-noisy")


def _map_rows(X, func, *args, name):
    """Apply ``func(X_b, *args, i, offset)`` to every row chunk ``i``."""
    dask, da = import_dask()
    token = dask.base.tokenize(X, func.__name__, *args)
    return X.map_blocks(
        _call_with_block_index, func, *args, dtype=np.float64, name=f"{name}-{token}",
    )


def _call_with_block_index(X_b, func, *args, block_info=None):
    info = block_info[0]
    return func(X_b, *args, info["chunk-location"][0], info["array-location"][0][0])


# ---------------------------------------------------------------------------
# block-diagonal masking
# ---------------------------------------------------------------------------

def _mask_block(X_b, sigma, root, i, offset):
    M_b = _noisy_block(X_b, sigma, root, i, offset)
    n_b, p = M_b.shape
    Z_b = _block_rng(root, _FRAME, i).standard_normal((n_b, p))
    return Z_b @ (np.linalg.inv(_r_gram(Z_b)) @ _r_of(M_b))


def release_block_dask(X, sigma, rng=None):
    """Block-diagonal masking (Section 4) of a Dask array, one block per row chunk.

    Block ``i`` (the i-th row chunk, of size ``n_i``) is released as
    ``A_i (X_i + C_i)`` with ``A_i`` an independent n_i x n_i Haar matrix,
    drawn through the frame identity as ``U_i R_i`` (O(n_i p^2) time), so
    the whole release costs O(n p^2) and holds a few chunks in memory.
    The noise that makes this (eps, delta)-DP is
    ``dpmask.paper.bounds.sigma_b_block(eps, delta, X.chunks[0], p)``: Theorem 3.4
    with n replaced by the smallest chunk.

    Parameters
    ----------
    X : dask.array.Array, shape (n, p)
        Data with entries in [-1, 1] (checked chunk by chunk when computed),
        real dtype, at most ``MAX_CHUNKS`` row chunks.
        Its row chunks are the blocks and must each have more than p rows;
        several column chunks are joined into one.
    sigma : float
        Noise standard deviation, 0 < sigma <= 1e150 (``MAX_SIGMA``).
    rng : numpy.random.Generator, int or None
        Seed of every block's noise and Haar matrix (keyed by block index,
        so the result does not depend on scheduling).
        As in :func:`dpmask.paper.mechanisms.release_a`: ``None`` (the default, fresh entropy) for
        every published release; a fixed seed only for teaching and tests.

    Returns
    -------
    dask.array.Array, shape (n, p), same chunks as ``X`` (lazy: compute it
    with :func:`~dpmask.scale.write.compute` or write it with :func:`~dpmask.scale.write.write_npy`).

    Raises
    ------
    ValueError
        If a row chunk has p rows or fewer, or sigma is not > 0.

    Notes
    -----
    For every block, ``Y_i^T Y_i = (X_i + C_i)^T (X_i + C_i)``: masking keeps
    each block's Gram matrix, and ``E[Y^T Y] = X^T X + n sigma^2 I``.

    Examples
    --------
    >>> import dask.array as da
    >>> X = da.full((300, 2), 0.5, chunks=(100, 2))
    >>> Y = release_block_dask(X, 1.0, rng=0)
    >>> Y.chunks
    ((100, 100, 100), (2,))
    """
    X = _as_dask_matrix(X)
    _check_blocks_exceed_p(X.chunks[0], X.shape[1])
    sigma = _check_sigma(sigma)
    root = _root_entropy(rng)
    return _map_rows(X, _mask_block, sigma, root, name="dpmask-block")


# ---------------------------------------------------------------------------
# full Setting B: R-only TSQR and a blockwise uniform frame
# ---------------------------------------------------------------------------

def _r_of(A):
    """Householder triangular factor of a tall or short block (rows min(n_b, p))."""
    return np.linalg.qr(A, mode="r")


def _r_gram(Z):
    """Upper-triangular R with positive diagonal and R^T R = Z^T Z, for a Gaussian block.

    Cholesky of the Gram matrix (Cholesky QR): a Gaussian block is well
    conditioned, so this is accurate, and it is many times faster than
    Householder QR for tall blocks.  Householder with the sign fix takes
    over if the Gram matrix is numerically singular (a block with fewer
    rows than columns).
    """
    try:
        return np.linalg.cholesky(Z.T @ Z).T
    except np.linalg.LinAlgError:
        return _positive_diagonal(_r_of(Z))


def _r_noisy(X_b, sigma, root, i, offset):
    return _r_of(_noisy_block(X_b, sigma, root, i, offset))


def _r_gaussian(n_b, p, root, i):
    return _r_gram(_block_rng(root, _FRAME, i).standard_normal((n_b, p)))


def _r_stack(*factors):
    return _r_of(np.vstack(factors))


def _tsqr_r(leaves):
    """Combine per-chunk R factors up a tree of fan-in ``_FAN_IN``."""
    dask, _ = import_dask()
    level = list(leaves)
    while len(level) > 1:
        level = [
            dask.delayed(_r_stack, pure=True)(*level[j:j + _FAN_IN])
            for j in range(0, len(level), _FAN_IN)
        ]
    return dask.delayed(_r_stack, pure=True)(level[0])


def _positive_diagonal(R_z):
    """Positive-diagonal version of R_z: Z = (Z R_z^{-1}) R_z is then Z's unique thin QR."""
    signs = np.sign(np.diag(R_z))
    signs[signs == 0] = 1.0
    return R_z * signs[:, None]


def _frame_times(index_block, root, R_z, R_m, row_chunks, p, block_info=None):
    """Output chunk i of U R_m with U = Z R_z^{-1}, Z regenerated from its seed."""
    i = block_info[None]["chunk-location"][0]
    Z_b = _block_rng(root, _FRAME, i).standard_normal((row_chunks[i], p))
    # p x p inverse, then one n_b x p x p product (scipy's triangular solve is
    # slow for many small calls when BLAS threads compete with Dask's)
    S = np.linalg.inv(_positive_diagonal(R_z))
    return Z_b @ (S if R_m is None else S @ R_m)


def _frame_array(row_chunks, p, root, R_m):
    """Lazy U (R_m None) or U R_m: Gaussian TSQR with sign fix, built blockwise."""
    dask, da = import_dask()
    row_chunks = tuple(int(c) for c in row_chunks)
    R_z = _tsqr_r(dask.delayed(_r_gaussian, pure=True)(n_b, p, root, i)
                  for i, n_b in enumerate(row_chunks))
    index = da.arange(len(row_chunks), chunks=1)
    token = dask.base.tokenize(root, R_z, R_m, row_chunks, p)
    return index.map_blocks(
        _frame_times, root, R_z, R_m, row_chunks, p,
        chunks=(row_chunks, (p,)), new_axis=1, dtype=np.float64, name=f"dpmask-frame-{token}",
    )


def _check_chunk_rows(n, p, chunks):
    """Rows per generated chunk: at most MAX_CHUNKS chunks, at most MAX_CHUNK_ENTRIES entries each."""
    chunks = int(check_int(chunks, "chunks", minimum=1))
    if p > MAX_CHUNK_ENTRIES:
        raise ValueError(f"p must be <= 2**27 (MAX_CHUNK_ENTRIES, entries per chunk), got {p}")
    if chunks > MAX_ROWS:
        raise ValueError(f"chunks must be <= 2**53 (rows per chunk), got {chunks}")
    count = -(-n // chunks)
    _check_chunk_count(count, "chunks", f"chunks must be >= {-(-n // MAX_CHUNKS)} for n={n}, got {chunks}")
    if min(chunks, n) * p > MAX_CHUNK_ENTRIES:
        raise ValueError(
            f"chunks must be <= {max(MAX_CHUNK_ENTRIES // p, 1)} for p={p} (at most "
            f"MAX_CHUNK_ENTRIES=2**27 entries, 1 GiB, per chunk), got {chunks}"
        )
    return chunks


def _row_chunks(n, p, chunks):
    chunks = _check_chunk_rows(n, p, chunks)
    full, rest = divmod(n, chunks)
    return (chunks,) * full + ((rest,) if rest else ())


def stiefel_frame_dask(n, p, rng=None, *, chunks=100_000):
    """A uniformly distributed n x p frame (orthonormal columns), built blockwise.

    ``U = Z R^{-1}`` where ``Z`` is an n x p standard Gaussian array and ``R``
    its TSQR factor with a positive diagonal, i.e. ``U`` is the Q factor of
    ``Z`` with Mezzadri's sign fix, so its law is uniform on the Stiefel
    manifold.  Only p x p factors are combined; ``Z`` is generated twice
    from per-chunk seeds instead of being held.

    Parameters
    ----------
    n, p : int
        Shape, 2**53 >= n >= p >= 1.
    rng : numpy.random.Generator, int or None
    chunks : int
        Rows per chunk, in the range of :func:`random_data_dask`.

    Returns
    -------
    dask.array.Array, shape (n, p)
    """
    n = _check_rows(n)
    p = int(check_int(p, "p", minimum=1))
    if p > n:
        raise ValueError(f"p must be <= n for an n x p frame, got n={n}, p={p}")
    return _frame_array(_row_chunks(n, p, chunks), p, _root_entropy(rng), None)


def release_b_dask(X, sigma, rng=None):
    """Setting B, equation (modelB), on a Dask array: ``Y = A (X + C)``, one Haar A.

    By the frame identity (:mod:`dpmask.paper.mechanisms`), ``A (X + C)`` has the
    law of ``U R`` with ``R`` the p x p TSQR factor of ``M = X + C`` and
    ``U`` a uniform n x p frame independent of ``M``
    (:func:`stiefel_frame_dask`).  Two passes over the rows: the first
    reduces every chunk of ``M`` and of a Gaussian array to p x p factors,
    the second writes ``U_i R`` chunk by chunk.  O(n p^2) time, a few chunks
    of memory, no n x n matrix; the noise needed is
    :func:`dpmask.paper.bounds.sigma_b` with the full n.

    Parameters
    ----------
    X : dask.array.Array, shape (n, p)
        Data with entries in [-1, 1] (checked chunk by chunk when computed),
        real dtype, n > p, at most ``MAX_CHUNKS`` row chunks.  Row chunks
        may have any size (even fewer rows than p);
        several column chunks are joined into one.
    sigma, rng
        As in :func:`noisy_data_dask` (0 < sigma <= ``MAX_SIGMA``; ``rng=None`` for a
        published release).

    Returns
    -------
    dask.array.Array, shape (n, p), with the row chunks of ``X`` (lazy).

    Notes
    -----
    ``Y^T Y = (X + C)^T (X + C)`` exactly (up to rounding), with ``X + C``
    given by :func:`noisy_data_dask` with the same ``rng``.
    """
    dask, _ = import_dask()
    X = _as_dask_matrix(X)
    n, p = X.shape
    if n <= p:
        raise ValueError(f"X must have more rows than columns (n > p) for masking, got n={n}, p={p}")
    sigma = _check_sigma(sigma)
    root = _root_entropy(rng)
    offsets = _offsets(X.chunks[0])
    leaves = [
        dask.delayed(_r_noisy, pure=True)(X_b, sigma, root, i, int(offsets[i]))
        for i, X_b in enumerate(X.to_delayed(optimize_graph=False).ravel())
    ]
    R_m = _tsqr_r(leaves)
    return _frame_array(X.chunks[0], p, root, R_m)
