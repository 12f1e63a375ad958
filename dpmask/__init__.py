"""dpmask: Gaussian noise plus random orthogonal masking for (eps, delta)-differential privacy.

The package under the book "Less noise through masking", which derives and
checks the paper by Ding, Wu, Miao and Chen, "Reducing Noise Level in
Differential Privacy through Matrix Masking".

Modules
-------
bounds      the paper's noise bounds (Theorems 3.2, 3.4; Corollaries 3.3, 3.5; Section 4)
gq          the function G_q of Lemmas 5.4 and 5.5, accurately in log space
mechanisms  the releases: Settings A, B, C and block-diagonal masking
table       Table 1 of the paper
exact       tight privacy curves the paper does not give
audit       lower bounds and Monte Carlo audits of the privacy of Setting B
inference   linear models fitted from a masked release (or a noisy Gram matrix)
rivals      the Gaussian mechanism on X^T X, masking's rival (chapter 9); re-exports the three below
field       the rival as a table, AdaSSP and the Wishart mechanism
jl          the Johnson-Lindenstrauss projection and its least squares
trust       trust models: the distributed rival under dropouts, what each party sends
compare     the comparison engine of chapter 9 (every mechanism, one data set, one (eps, delta))
data        public real data shipped in a pip wheel, scaled into [-1, 1] by a public bound
symbolic    SymPy derivations checked by the book and the tests
scale       masking on Dask arrays (optional extra ``scale``)
widgets     ipywidgets explorers (optional extra ``book``)

Examples
--------
>>> import dpmask
>>> round(dpmask.sigma_b(0.1, 0.01, n=100, p=5), 1)
9.5
"""

from .bounds import (
    best_sufficient_sigma,
    best_sufficient_source,
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
from .mechanisms import (
    check_data,
    haar_orthogonal,
    release_a,
    release_b,
    release_block,
    release_c,
    stiefel_frame,
)
from .table import table1
from . import bounds, gq, mechanisms, table  # noqa: E402  (the submodules, as dpmask.gq etc.)

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
