"""dpmask: Gaussian noise plus random orthogonal masking for (eps, delta)-differential privacy.

The package under the book "Less noise through masking", which derives and
checks the paper by Ding, Wu, Miao and Chen, "Reducing Noise Level in
Differential Privacy through Matrix Masking".  Its folders are the book's three
families, each importing only the ones above it in this list:

paper       what the paper states: bounds, gq, mechanisms, table, symbolic (chapters 2-5, A)
exact       the exact privacy the paper does not compute: gaussian (Setting A), one_column
            and two_columns (Setting B with p = 1, 2), audit (lower bounds), best (chapters 7, 7a)
rivals      the rival mechanisms of chapter 9: gram, gram_to_table, ssp (AdaSSP), wishart,
            jl, trust, compare
scale       masking on Dask arrays (chapter 8; optional extra ``scale``)

Beside them: inference (models fitted from a release or a noisy Gram matrix, chapter 6),
data (public real data), book (numbers and figures for the chapters), selfcheck (the
course page), widgets (ipywidgets explorers; optional extra ``book``).  This top level
keeps the paper's short names (``dpmask.sigma_b``, ``dpmask.release_b``, ...) and
:func:`best_sufficient_sigma`.

Examples
--------
>>> import dpmask
>>> round(dpmask.sigma_b(0.1, 0.01, n=100, p=5), 1)
9.5
"""

from .exact.best import best_sufficient_sigma, best_sufficient_source
from .paper.bounds import (
    g_b,
    gaussian_upper_quantile,
    sigma_a_corollary,
    sigma_a_necessary,
    sigma_a_sufficient,
    sigma_b,
    sigma_b_block,
    sigma_b_corollary,
    sufficient_sigma,
)
from .paper.mechanisms import (
    check_data,
    haar_orthogonal,
    release_a,
    release_b,
    release_block,
    release_c,
    stiefel_frame,
)
from .paper.table import table1
from . import exact, paper  # noqa: E402  (the families, as dpmask.paper.gq etc.)

__version__ = "0.1.0"

__all__ = [
    "best_sufficient_sigma",
    "best_sufficient_source",
    "g_b",
    "gaussian_upper_quantile",
    "sigma_a_corollary",
    "sigma_a_necessary",
    "sigma_a_sufficient",
    "sigma_b",
    "sigma_b_block",
    "sigma_b_corollary",
    "sufficient_sigma",
    "check_data",
    "haar_orthogonal",
    "release_a",
    "release_b",
    "release_block",
    "release_c",
    "stiefel_frame",
    "table1",
]
