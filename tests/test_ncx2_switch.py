"""The far lower tail of the noncentral chi-square law switches between two quadratures (dpmask/paper/_ncx2.py).

``_ncx2.logcdf`` uses scipy down to a log tail of -150 and below that ``_far_lower``: 20-point
Gauss-Laguerre from x towards 0 where kappa x >= 60 (kappa the slope of the log density at x),
64-point Gauss-Legendre over [0, x] below.  Here the switch is crossed in both directions, at
points on each side of kappa x = 60 and far out on each side, against an independent mpmath
value: the density written with mpmath's Bessel I, integrated by mpmath's tanh-sinh quadrature.

Measured (26 Nov 2026): both rules agree with mpmath to 1e-15 between kappa x of about 12 and
about 400, so the switch at 60 sits in their overlap; Laguerre is off by 4e-12 at kappa x = 10
and 3e-5 at 2, Legendre by 3.5e-9 at 600 and 9e-7 at 1000.  A switch moved below 5 or above 600,
or a broken rule on either side, fails this test.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from dpmask.paper import _ncx2


def _mp_logcdf(x, k, lam, dps=30):
    """log P[chi2_k(lam) <= x] and kappa x, in mpmath: the density
    f(t) = exp(-(t + lam)/2) (t/lam)^(nu/2) I_nu(sqrt(lam t)) / 2, nu = k/2 - 1, integrated over
    [0, x] with breakpoints at x - m/kappa (the integrand falls like exp(-kappa (x - t)))."""
    with mp.workdps(dps):
        x, k, lam = mp.mpf(x), mp.mpf(k), mp.mpf(lam)
        nu = (k - 2) / 2

        def logpdf(t):
            return mp.log(mp.besseli(nu, mp.sqrt(lam * t))) - (t + lam) / 2 + nu / 2 * mp.log(t / lam) - mp.log(2)

        l0, kappa = logpdf(x), mp.diff(logpdf, x)
        cuts = [x - m / kappa for m in (200, 80, 40, 20, 10, 5, 2) if x - m / kappa > 0]
        points = [mp.mpf(0), *([x / 2] if not cuts or cuts[0] > x / 2 else []), *cuts, x]
        return float(l0 + mp.log(mp.quad(lambda t: mp.exp(logpdf(t) - l0), points))), float(kappa * x)


SWITCH = 60.0  # kappa x where _far_lower changes rule


@pytest.mark.parametrize("k, lam, x, side", [
    (2, 1000.0, 0.0207805, "legendre"),   # kappa x = 2
    (2, 1000.0, 0.112912, "legendre"),    # 5
    (2, 1000.0, 18.8711, "legendre"),     # 59: just below the switch
    (3, 800.0, 25.875, "legendre"),       # 59, odd degrees of freedom
    (2, 1000.0, 20.4289, "laguerre"),     # 61: just above it
    (2, 1e4, 194.642, "laguerre"),        # 600
    (20, 1e4, 753.488, "laguerre"),       # 1000
])
def test_far_lower_tail_on_both_sides_of_the_quadrature_switch(k, lam, x, side):
    truth, kx = _mp_logcdf(x, k, lam)
    assert truth < _ncx2.TRUST_LOG_LOWER  # the far tail, not scipy, answers here
    assert (kx < SWITCH) == (side == "legendre"), kx  # the point is on the side it claims (mpmath's slope)
    got = float(_ncx2.logcdf(x, k, lam))
    assert math.isfinite(got)
    assert abs(got - truth) <= 1e-12 * abs(truth), (side, kx, got, truth)
