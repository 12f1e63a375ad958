"""An independent mpmath reference shared by the tests of the noncentral chi-square pairs.

Not the package's code: the threshold is found by plain bisection on mpmath's own 0F1.
"""

from __future__ import annotations

import mpmath as mp


def log_ratio_threshold(eps, n, la, lb=0):
    """The t at which log f_a(t)/f_b(t) = eps, for the laws chi2_n(la) and chi2_n(lb), la > lb >= 0.

    The log density ratio -(la - lb)/2 + log 0F1(n/2; la t/4) - log 0F1(n/2; lb t/4) increases in
    t, so bisection finds it; to the caller's working precision (``mp.workdps``), at most 400 halvings.
    """
    e, la, lb, half = mp.mpf(eps), mp.mpf(la), mp.mpf(lb), mp.mpf(n) / 2

    def log_ratio(t):
        r = -(la - lb) / 2 + mp.log(mp.hyp0f1(half, la * t / 4))
        return r - mp.log(mp.hyp0f1(half, lb * t / 4)) if lb > 0 else r

    lo, hi = mp.mpf(0), mp.mpf(n) + la + 10
    while log_ratio(hi) < e:
        hi *= 2
    for _ in range(400):
        mid = (lo + hi) / 2
        if log_ratio(mid) < e:
            lo = mid
        else:
            hi = mid
        if hi - lo < hi * mp.mpf(10) ** (5 - mp.mp.dps):
            break
    return (lo + hi) / 2
