"""Tight privacy curves that the paper does not give: the yardsticks of chapter 7.

This module gathers the two families under the name the book and the tests call
(``dpmask.exact.<name>``); it defines nothing itself:

* :mod:`dpmask.gaussian_curves` -- Setting A: the classical Gaussian calibration
  of Dwork and Roth, the exact (analytic) curve of the Gaussian mechanism
  (Balle and Wang, 2018), and the paper's own criterion (DP-bound0) computed
  exactly;
* :mod:`dpmask.ncx2_pairs` -- Setting B with p = 1, where the masked release
  carries exactly the information of a noncentral chi-square: the hockey stick
  between two noncentral chi-square laws, the worst neighbours, and the
  mechanism's delta and sigma.

Each module states its domain, accuracy and safe side.
"""

from __future__ import annotations

from . import _ncx2
from .gaussian_curves import (DELTA_SOLVE_MAX, EPS_GAUSS, LOG_DELTA_FLOOR, SIGMA_GAUSS, analytic_gaussian_delta,
                              analytic_gaussian_log_delta, analytic_gaussian_sigma, classical_gaussian_sigma,
                              setting_a_criterion_delta, setting_a_criterion_sigma)
from .ncx2_pairs import (DELTA_NCX2_MIN, EPS_NCX2, LAM_MAX, N_MAX, SIGMA_NCX2_MAX, masked_p1_delta, masked_p1_log_delta,
                         masked_p1_sigma, masked_p1_worst_pair, ncx2_hockey_stick_log_delta)

__all__ = [
    # dpmask.gaussian_curves
    "classical_gaussian_sigma", "analytic_gaussian_delta", "analytic_gaussian_log_delta", "analytic_gaussian_sigma",
    "setting_a_criterion_delta", "setting_a_criterion_sigma", "EPS_GAUSS", "SIGMA_GAUSS", "DELTA_SOLVE_MAX",
    "LOG_DELTA_FLOOR",
    # dpmask.ncx2_pairs
    "masked_p1_worst_pair", "masked_p1_delta", "masked_p1_log_delta", "masked_p1_sigma", "ncx2_hockey_stick_log_delta",
    "N_MAX", "EPS_NCX2", "DELTA_NCX2_MIN", "SIGMA_NCX2_MAX", "LAM_MAX",
]

#: log 0F1(; b; z) (Lemma 5.4's G_q in another normalisation); chapter 7a and the tests call it here.
_log0f1 = _ncx2._log0f1
