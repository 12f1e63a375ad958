"""Masking's rivals, gathered under one name for chapter 9 (a facade: it defines nothing).

The book and the design call every rival ``dpmask.rivals.<name>``; each lives in the module
of its idea, which this one re-exports:

* :mod:`dpmask.gram` -- the Gaussian mechanism on the Gram matrix ("Analyze Gauss"): its
  sensitivity and calibration, the release, and the first-order errors of the analyses;
* :mod:`dpmask.field` -- the rival as a table, AdaSSP and the Wishart mechanism;
* :mod:`dpmask.jl` -- the Johnson-Lindenstrauss projection;
* :mod:`dpmask.trust` -- the trust models and the distributed rival;
* :mod:`dpmask.compare` -- the comparison engine (every mechanism, one data set).

Nothing imports this module inside the package except the command line and the explorers:
the modules above import :mod:`dpmask.gram` (and each other) directly, so the import graph
has no cycle.
"""

from .compare import (JL_CAP, MARGIN_MIN, MECHANISMS, NOT_PD_MAX, compare_from_gram, compare_mechanisms,
                      first_order_margin, first_order_rmse, noise_levels, rmse_reported)
from .field import (AdasspResult, adassp, adassp_from_gram, adassp_joint_sum, adassp_noise, cross_sensitivity,
                    gram_table, psd_projection, wishart_delta, wishart_mechanism, wishart_scale)
from .gram import (COV_P_MAX, GRAM_P_MAX, NOISE_ENTRIES_MAX, TAU_MAX, error_coefficients, example_moments,
                   first_order_errors, gram_noise, gram_noise_cov, gram_sensitivity, mask_noise_cov, release_gram,
                   sigma_gram, sigma_low_large_n)
from .jl import (JLFit, JLRelease, jl_delta, jl_delta_worst_pair, jl_ols, jl_ols_from_gram, jl_pair_delta, jl_release,
                 jl_w, jl_w_sheffet)
from .trust import DistributedGram, distributed_delta, distributed_gram, distributed_tau, trust_costs

__all__ = [
    # dpmask.gram
    "COV_P_MAX", "GRAM_P_MAX", "NOISE_ENTRIES_MAX", "TAU_MAX",
    "gram_sensitivity", "sigma_gram", "gram_noise", "release_gram", "gram_noise_cov", "mask_noise_cov",
    "first_order_errors", "error_coefficients", "example_moments", "sigma_low_large_n",
    # dpmask.field
    "psd_projection", "gram_table", "cross_sensitivity", "adassp_noise", "AdasspResult", "adassp", "adassp_from_gram",
    "adassp_joint_sum", "wishart_scale", "wishart_delta", "wishart_mechanism",
    # dpmask.jl
    "jl_delta", "jl_delta_worst_pair", "jl_pair_delta", "jl_w", "jl_w_sheffet", "JLRelease", "jl_release", "JLFit", "jl_ols", "jl_ols_from_gram",
    # dpmask.trust
    "DistributedGram", "distributed_tau", "distributed_delta", "distributed_gram", "trust_costs",
    # dpmask.compare
    "MECHANISMS", "JL_CAP", "MARGIN_MIN", "NOT_PD_MAX", "noise_levels", "first_order_rmse", "first_order_margin",
    "rmse_reported", "compare_mechanisms", "compare_from_gram",
]
