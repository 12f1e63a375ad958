"""Masking's rivals (chapter 9): the mechanisms a reader who knows the field would put beside masking.

The family's modules, one idea each:

* :mod:`dpmask.rivals.gram` -- the Gaussian mechanism on the Gram matrix ("Analyze Gauss"): its
  sensitivity and calibration, the release, and the first-order errors of the analyses;
* :mod:`dpmask.rivals.gram_to_table` -- the rival as a table (Lemma 9.1, Proposition 9.5);
* :mod:`dpmask.rivals.ssp` -- AdaSSP, sufficient statistics perturbation (Wang 2018);
* :mod:`dpmask.rivals.wishart` -- the Wishart mechanism (Jiang, Xie and Zhang 2016);
* :mod:`dpmask.rivals.jl` -- the Johnson-Lindenstrauss projection;
* :mod:`dpmask.rivals.trust` -- the trust models and the distributed rival;
* :mod:`dpmask.rivals.compare` -- the comparison engine (every mechanism, one data set).

This package's face re-exports their public names, as the book and the design call them
(``dpmask.rivals.<name>``).  The family stands on :mod:`dpmask.paper` and
:mod:`dpmask.exact`; neither imports it.
"""

from .compare import (JL_CAP, MARGIN_MIN, MECHANISMS, NOT_PD_MAX, compare_from_gram, compare_mechanisms,
                      first_order_margin, first_order_rmse, noise_levels, rmse_reported)
from .ssp import AdasspResult, adassp, adassp_from_gram, adassp_joint_sum, adassp_noise, cross_sensitivity
from .gram_to_table import gram_table, psd_projection
from .gram import (COV_P_MAX, GRAM_P_MAX, NOISE_ENTRIES_MAX, TAU_MAX, error_coefficients, example_moments,
                   first_order_errors, gram_noise, gram_noise_cov, gram_sensitivity, mask_noise_cov, release_gram,
                   sigma_gram, sigma_low_large_n)
from .jl import (JLFit, JLRelease, jl_delta, jl_delta_worst_pair, jl_ols, jl_ols_from_gram, jl_pair_delta, jl_release,
                 jl_w, jl_w_sheffet)
from .trust import DistributedGram, distributed_delta, distributed_gram, distributed_tau, trust_costs
from .wishart import wishart_delta, wishart_mechanism, wishart_scale

__all__ = [
    # dpmask.rivals.gram
    "COV_P_MAX", "GRAM_P_MAX", "NOISE_ENTRIES_MAX", "TAU_MAX",
    "gram_sensitivity", "sigma_gram", "gram_noise", "release_gram", "gram_noise_cov", "mask_noise_cov",
    "first_order_errors", "error_coefficients", "example_moments", "sigma_low_large_n",
    # dpmask.rivals.gram_to_table
    "psd_projection", "gram_table",
    # dpmask.rivals.ssp
    "cross_sensitivity", "adassp_noise", "AdasspResult", "adassp", "adassp_from_gram", "adassp_joint_sum",
    # dpmask.rivals.wishart
    "wishart_scale", "wishart_delta", "wishart_mechanism",
    # dpmask.rivals.jl
    "jl_delta", "jl_delta_worst_pair", "jl_pair_delta", "jl_w", "jl_w_sheffet", "JLRelease", "jl_release", "JLFit", "jl_ols", "jl_ols_from_gram",
    # dpmask.rivals.trust
    "DistributedGram", "distributed_tau", "distributed_delta", "distributed_gram", "trust_costs",
    # dpmask.rivals.compare
    "MECHANISMS", "JL_CAP", "MARGIN_MIN", "NOT_PD_MAX", "noise_levels", "first_order_rmse", "first_order_margin",
    "rmse_reported", "compare_mechanisms", "compare_from_gram",
]
