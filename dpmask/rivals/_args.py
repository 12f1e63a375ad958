"""The argument checks the rivals of chapter 9 share: one (eps, delta) pair, one whole number, p's cap.

The rivals' public functions call these at their doors (:mod:`dpmask.rivals.gram_to_table`,
:mod:`dpmask.rivals.ssp`, :mod:`dpmask.rivals.wishart`, :mod:`dpmask.rivals.jl`).
"""

from __future__ import annotations

from .._validate import check_delta, check_eps, check_int, check_scalar

#: Largest p of the rivals' functions (p x p eigen-decompositions; the book uses p <= 6).
P_MAX = 64


def _one_eps_delta(eps, delta):
    eps = float(check_scalar(check_eps(eps, lower=1e-6, top=10.0), "eps"))
    delta = float(check_scalar(check_delta(delta, upper=0.5, hypothesis=" (these calibrations split it)"),
                               "delta"))
    return eps, delta


def _whole(value, name, minimum, maximum):
    arr = check_int(value, name, minimum=minimum, maximum=maximum)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a single whole number in [{minimum}, {maximum}]")
    return int(arr)

