"""Masking on Dask (chapter 8): releases of data that do not fit in memory, and how they are written.

* :mod:`dpmask.scale.release` -- block-diagonal and full Setting B on a Dask array, with the
  seeds, domains and cluster behaviour they promise;
* :mod:`dpmask.scale.write` -- computing a Dask release and writing it atomically to ``.npy``
  or Zarr.

This package's face gathers both, as chapter 8 calls them (``scale.release_b_dask``,
``scale.write_npy``).  Dask is the optional extra ``scale``; it is imported on first use only
(``dpmask.scale._dask``), so ``import dpmask.scale`` works without it.
"""

from __future__ import annotations

from .release import (MAX_CHUNK_ENTRIES, MAX_CHUNKS, MAX_ROWS, MAX_SIGMA, balanced_chunks, noisy_data_dask,
                      random_data_dask, release_b_dask, release_block_dask, stiefel_frame_dask)
from .write import compute, write_npy, write_zarr

__all__ = [
    # dpmask.scale.release
    "balanced_chunks", "random_data_dask", "noisy_data_dask", "release_block_dask", "release_b_dask",
    "stiefel_frame_dask", "MAX_CHUNKS", "MAX_CHUNK_ENTRIES", "MAX_ROWS", "MAX_SIGMA",
    # dpmask.scale.write
    "compute", "write_npy", "write_zarr",
]
