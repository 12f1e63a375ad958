"""The exact privacy the paper does not compute: tight curves, worst neighbours, lower bounds (chapters 7, 7a).

The family's modules, each named for the setting it makes exact:

* :mod:`dpmask.exact.gaussian` -- Setting A: the classical Gaussian calibration of Dwork and
  Roth, the exact (analytic) curve of the Gaussian mechanism (Balle and Wang, 2018), and the
  paper's own criterion (DP-bound0) computed exactly;
* :mod:`dpmask.exact.one_column` -- Setting B with p = 1, where the masked release carries
  exactly the information of a noncentral chi-square: the hockey stick between two noncentral
  chi-square laws, the worst neighbours, and the mechanism's delta and sigma;
* :mod:`dpmask.exact.two_columns` -- Setting B with p = 2 (chapter 7a): the noncentral Wishart
  likelihood, its exact privacy loss and delta by Monte Carlo (import it by name);
* :mod:`dpmask.exact.audit` -- lower bounds on sigma and Monte Carlo audits of Setting B
  (import it by name);
* :mod:`dpmask.exact.best` -- the smallest sigma proven sufficient by any result in the book
  (the paper's Theorem 3.4 or the analytic Gaussian).

This package's face re-exports the names of ``gaussian``, ``one_column`` and ``best`` under the
one name the book and the tests call (``dpmask.exact.<name>``).  The family imports
:mod:`dpmask.paper` (the noncentral chi-square tails, the releases) and never
:mod:`dpmask.rivals`.  Each module states its domain, accuracy and safe side.
"""

from __future__ import annotations

from ..paper import _ncx2
from .best import best_sufficient_sigma, best_sufficient_source
from .gaussian import (DELTA_SOLVE_MAX, EPS_GAUSS, LOG_DELTA_FLOOR, SIGMA_GAUSS, analytic_gaussian_delta,
                              analytic_gaussian_log_delta, analytic_gaussian_sigma, classical_gaussian_sigma,
                              setting_a_criterion_delta, setting_a_criterion_sigma)
from .one_column import (DELTA_NCX2_MIN, EPS_NCX2, LAM_MAX, N_MAX, SIGMA_NCX2_MAX, masked_p1_delta, masked_p1_log_delta,
                         masked_p1_sigma, masked_p1_worst_pair, ncx2_hockey_stick_log_delta)

__all__ = [
    # dpmask.exact.gaussian
    "classical_gaussian_sigma", "analytic_gaussian_delta", "analytic_gaussian_log_delta", "analytic_gaussian_sigma",
    "setting_a_criterion_delta", "setting_a_criterion_sigma", "EPS_GAUSS", "SIGMA_GAUSS", "DELTA_SOLVE_MAX",
    "LOG_DELTA_FLOOR",
    # dpmask.exact.one_column
    "masked_p1_worst_pair", "masked_p1_delta", "masked_p1_log_delta", "masked_p1_sigma", "ncx2_hockey_stick_log_delta",
    "N_MAX", "EPS_NCX2", "DELTA_NCX2_MIN", "SIGMA_NCX2_MAX", "LAM_MAX",
    # dpmask.exact.best
    "best_sufficient_sigma", "best_sufficient_source",
]

#: log 0F1(; b; z) (Lemma 5.4's G_q in another normalisation); chapter 7a and the tests call it here.
_log0f1 = _ncx2._log0f1
