"""Tests for dpmask.paper.gq: G_q of Lemmas 5.4 and 5.5 against mpmath, quadrature and Monte Carlo.

Independent truths used here:

* mpmath at 40 digits: ``mp.besseli`` in the closed form, and, where mpmath's
  Bessel series does not converge in reasonable time (order and argument both
  in the millions), ``mp.quad`` of the defining integral, split around the
  peak of its integrand.  The two mpmath routes are checked against each other
  on a few points.
* ``scipy.integrate.quad`` of the defining integrals (G_q, c_bar, the density).
* The law of a coordinate of a normalised Gaussian vector (seeded Monte Carlo,
  Kolmogorov-Smirnov test at level 0.001).
"""

from __future__ import annotations

import functools

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, stats

from dpmask.paper import gq

DPS = 40
RTOL = 1e-12

# The spec's grid, plus q = 1 and 1.5 (the corrected proof of Theorem 3.4 needs G_{n-p-1}).
Q_GRID = [1, 1.5, 2, 2.5, 3, 7, 10, 50, 99.5, 1e3, 1e4, 1e5, 1e6, 1e7]
T_GRID = [0, 1e-12, 1e-9, 1e-8, 1e-3, 0.5, 1, 10, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7]


def _switch_points():
    """Points on both sides of every switch between regions of gq."""
    pts = []
    # power series <-> Bessel/Debye at t^2 = 4(nu + 1) = 2(q + 1)
    for q in [1, 2, 2.5, 7, 39, 40.5, 41, 43, 99.5, 1e3, 1e5, 1e7]:
        tc = float(np.sqrt(2.0 * (q + 1.0)))
        pts += [(q, tc * (1 - 1e-9)), (q, np.nextafter(tc, 0.0)), (q, tc),
                (q, np.nextafter(tc, np.inf)), (q, tc * (1 + 1e-9))]
    # Amos/Perron <-> Debye at nu = 20, i.e. q = 41
    for t in [0.3, 7.0, 30.0, 1e3, 1e6]:
        pts += [(np.nextafter(41.0, 0.0), t), (41.0, t), (41.000001, t)]
    # gammaln <-> Stirling inside log B(1/2, q/2) at q/2 = 10
    for t in [0.0, 1.0, 10.0]:
        pts += [(np.nextafter(20.0, 0.0), t), (20.0, t), (20.5, t)]
    return pts


POINTS = [(float(q), float(t)) for q in Q_GRID for t in T_GRID] + _switch_points()


# ---------------------------------------------------------------------------
# mpmath oracles
# ---------------------------------------------------------------------------

def _mp_bessel(q, t):
    """(log G_q(t), G_q'/G_q) from mp.besseli; NoConvergence where the series is too long."""
    with mp.workdps(DPS):
        q, t = mp.mpf(q), mp.mpf(t)
        nu = (q - 1) / 2
        if t == 0:
            return mp.log(mp.beta(mp.mpf(1) / 2, q / 2)), mp.mpf(0)
        i0 = mp.besseli(nu, t, maxterms=3000)
        i1 = mp.besseli(nu + 1, t, maxterms=3000)
        log_g = mp.log(mp.sqrt(mp.pi)) + mp.loggamma(q / 2) + nu * mp.log(2 / t) + mp.log(i0)
        return log_g, i1 / i0


def _mp_quad(q, t):
    """(log G_q(t), G_q'/G_q) by mp.quad of the integrals, for q >= 2.

    The integrand exp(t u) (1-u^2)^a, a = (q-2)/2, peaks at
    u* = t / (a + sqrt(a^2 + t^2)) with width (1-u*^2)/sqrt(2a(1+u*^2));
    the interval is split there so that tanh-sinh sees smooth pieces.
    """
    with mp.workdps(DPS):
        q, t = mp.mpf(q), mp.mpf(t)
        a = (q - 2) / 2
        if t == 0:
            return mp.log(mp.beta(mp.mpf(1) / 2, q / 2)), mp.mpf(0)
        u_star = t / (a + mp.sqrt(a * a + t * t))
        width = (1 - u_star**2) / mp.sqrt(2 * a * (1 + u_star**2)) if a > 0 else 1 / t
        log_peak = t * u_star + (a * mp.log1p(-u_star**2) if a != 0 else 0)
        nodes = {mp.mpf(-1), mp.mpf(1)}
        for k in (-200, -40, -10, -3, -1, 0, 1, 3, 10, 40, 200):
            x = u_star + k * width
            if -1 < x < 1:
                nodes.add(x)
        nodes = sorted(nodes)

        def f(u):
            return mp.exp(t * u + (a * mp.log1p(-u * u) if a != 0 else 0) - log_peak)

        i0 = mp.quad(f, nodes)
        i1 = mp.quad(lambda u: u * f(u), nodes)
        return log_peak + mp.log(i0), i1 / i0


@functools.lru_cache(maxsize=None)
def mp_reference(q, t):
    """40-digit (log G, dlog G) as floats: mp.besseli, else mp.quad of the integral."""
    try:
        log_g, ratio = _mp_bessel(q, t)
    except mp.libmp.NoConvergence:
        log_g, ratio = _mp_quad(q, t)
    return float(log_g), float(ratio)


@pytest.fixture(scope="module")
def reference():
    q = np.array([p[0] for p in POINTS])
    t = np.array([p[1] for p in POINTS])
    ref = np.array([mp_reference(*p) for p in POINTS])
    return q, t, ref[:, 0], ref[:, 1]


def _log_g_errors(got, want):
    """Relative error where |log G| >= 1, absolute error elsewhere.

    log G_q(t) changes sign (e.g. near q = 6.7 at t = 0, or at t ~ sqrt(q log q)
    for large q), and at a sign change a relative error is meaningless: any
    rounding in the last bit of the ~1-sized terms that are added is a huge
    fraction of a result near zero.  An absolute error of 1e-12 there is the
    same statement as relative 1e-12 on a value of size 1.
    """
    return np.abs(got - want) / np.maximum(1.0, np.abs(want))


def _ratio_errors(got, want):
    """Relative error; at t = 0 the ratio is exactly 0 and must be returned as 0."""
    return np.where(want == 0, np.abs(got), np.abs(got - want) / np.where(want == 0, 1.0, want))


# ---------------------------------------------------------------------------
# Accuracy against mpmath
# ---------------------------------------------------------------------------

def test_mpmath_oracles_agree():
    """The two mpmath routes (closed form, integral) agree: checks the oracle and the closed form."""
    for q, t in [(2, 3.0), (2.5, 10.0), (7, 0.5), (50, 100.0), (1e3, 1e3), (1e5, 1e4), (1e7, 1e5)]:
        b_log, b_ratio = _mp_bessel(q, t)
        i_log, i_ratio = _mp_quad(q, t)
        with mp.workdps(DPS):
            assert abs(b_log - i_log) < mp.mpf(10) ** -30 * max(1, abs(b_log))
            assert abs(b_ratio / i_ratio - 1) < mp.mpf(10) ** -30


def test_log_G_matches_mpmath(reference):
    q, t, ref_log, _ = reference
    got = gq.log_G(q, t)
    assert np.all(np.isfinite(got))
    err = _log_g_errors(got, ref_log)
    worst = int(np.argmax(err))
    assert err[worst] < RTOL, f"q={q[worst]!r}, t={t[worst]!r}: error {err[worst]:.2e}"


def test_log_G_at_zero_is_log_beta():
    """G_q(0) = B(1/2, q/2) exactly at t = 0, for q up to 1e7 (large q: no log-gamma cancellation)."""
    q = np.array([1, 2, 3, 7.5, 19.999, 20, 20.001, 1e3, 123456.7, 1e7])
    with mp.workdps(DPS):
        want = np.array([float(mp.log(mp.beta(mp.mpf(1) / 2, mp.mpf(x) / 2))) for x in q])
    assert np.all(_log_g_errors(gq.log_G(q, 0.0), want) < RTOL)


def test_dlog_G_matches_mpmath(reference):
    q, t, _, ref_ratio = reference
    got = gq.dlog_G(q, t)
    err = _ratio_errors(got, ref_ratio)
    worst = int(np.argmax(err))
    assert err[worst] < RTOL, f"q={q[worst]!r}, t={t[worst]!r}: error {err[worst]:.2e}"


def test_dlog_G_fallback_without_private_scipy(reference, monkeypatch):
    """The fallback used when scipy lacks _iv_ratio meets the same accuracy."""
    monkeypatch.setattr(gq, "_scipy_iv_ratio", None)
    q, t, _, ref_ratio = reference
    err = _ratio_errors(gq.dlog_G(q, t), ref_ratio)
    worst = int(np.argmax(err))
    assert err[worst] < RTOL, f"q={q[worst]!r}, t={t[worst]!r}: error {err[worst]:.2e}"


@pytest.mark.skipif(gq._scipy_iv_ratio is None, reason="scipy has no private _iv_ratio")
def test_private_scipy_ratio_is_used_and_accurate():
    """Small order, large t: the region that calls scipy's _iv_ratio."""
    q = np.array([1.0, 2.0, 3.0, 10.0, 40.0])
    t = np.array([20.0, 1e3, 1e5, 1e7, 50.0])
    want = np.array([mp_reference(a, b)[1] for a, b in zip(q, t)])
    assert np.all(_ratio_errors(gq.dlog_G(q, t), want) < RTOL)


def test_random_points_match_mpmath():
    """A seeded scatter over the whole domain catches gaps between the fixed grid points."""
    rng = np.random.default_rng(2026)
    q = np.exp(rng.uniform(0.0, np.log(1e7), 40))
    t = np.exp(rng.uniform(np.log(1e-6), np.log(1e7), 40))
    ref = np.array([mp_reference(float(a), float(b)) for a, b in zip(q, t)])
    assert np.all(_log_g_errors(gq.log_G(q, t), ref[:, 0]) < RTOL)
    assert np.all(_ratio_errors(gq.dlog_G(q, t), ref[:, 1]) < RTOL)


def test_debye_polynomials_match_dlmf():
    """U_1..U_3 (DLMF 10.41.10) and V_1, V_2 (DLMF 10.41.11) as printed there."""
    from fractions import Fraction as Fr

    def poly(terms):  # {power: coefficient} -> ascending list
        out = [Fr(0)] * (max(terms) + 1)
        for k, c in terms.items():
            out[k] = Fr(c)
        return out

    def trim(c):
        c = list(c)
        while len(c) > 1 and c[-1] == 0:
            c.pop()
        return c

    u1 = poly({1: Fr(3, 24), 3: Fr(-5, 24)})
    u2 = poly({2: Fr(81, 1152), 4: Fr(-462, 1152), 6: Fr(385, 1152)})
    u3 = poly({3: Fr(30375, 414720), 5: Fr(-369603, 414720), 7: Fr(765765, 414720),
               9: Fr(-425425, 414720)})
    assert [trim(gq._U_EXACT[k]) for k in (1, 2, 3)] == [u1, u2, u3]
    v1 = poly({1: Fr(-9, 24), 3: Fr(7, 24)})
    v2 = poly({2: Fr(-135, 1152), 4: Fr(594, 1152), 6: Fr(-455, 1152)})
    one_minus_p2 = [Fr(1), Fr(0), Fr(-1)]
    for k, v in ((1, v1), (2, v2)):
        e_term = gq._poly_mul(one_minus_p2, gq._E_EXACT[k])
        assert trim(gq._poly_add(gq._U_EXACT[k], [-c for c in e_term])) == v


# ---------------------------------------------------------------------------
# Closed form against scipy quadrature of the definitions
# ---------------------------------------------------------------------------

def _quad_G(q, t, power=0):
    """int_{-1}^{1} u^power e^{tu} (1-u^2)^{(q-2)/2} du with QUADPACK's algebraic end-point weight."""
    a = (q - 2.0) / 2.0
    # integrate e^{t(u-1)} to keep the integrand O(1), then put e^t back
    # full_output: QUADPACK flags "roundoff" for the u-moment at (q, t) = (30, 20) although
    # its own error estimate is ~1e-11 relative; we check that estimate instead of the flag.
    value, abserr, *_ = integrate.quad(lambda u: u**power * np.exp(t * (u - 1.0)), -1.0, 1.0,
                                       weight="alg", wvar=(a, a), epsabs=0.0, epsrel=1e-12,
                                       limit=200, full_output=1)
    assert abserr < 1e-10 * abs(value)
    return value * np.exp(t)


@pytest.mark.parametrize("q", [1.0, 1.5, 2.0, 3.0, 4.5, 10.0, 30.0])
@pytest.mark.parametrize("t", [0.0, 0.7, 5.0, 20.0])
def test_G_closed_form_vs_quadrature(q, t):
    assert gq.G(q, t) == pytest.approx(_quad_G(q, t), rel=1e-11)
    if t > 0:
        assert gq.dlog_G(q, t) == pytest.approx(_quad_G(q, t, power=1) / _quad_G(q, t), rel=1e-10)


def test_G_elementary_cases():
    """G_2(t) = 2 sinh(t)/t, G_3(0) = pi/2, G_1(t) = pi I_0(t)."""
    t = np.array([1e-3, 0.5, 3.0, 40.0])
    assert np.allclose(gq.G(2, t), 2 * np.sinh(t) / t, rtol=1e-13, atol=0)
    assert gq.G(2, 0.0) == 2.0
    assert gq.G(3, 0.0) == pytest.approx(np.pi / 2, rel=1e-15)
    from scipy.special import i0
    assert np.allclose(gq.G(1, t), np.pi * i0(t), rtol=1e-13, atol=0)


def test_integration_by_parts_identity():
    """The paper's G_q'(t) = (t/q) G_{q+2}(t), across all regions."""
    q = np.array([1.0, 2.0, 7.0, 39.0, 40.0, 41.0, 1e3, 1e6])[:, None]
    t = np.array([1e-9, 0.3, 2.0, 9.0, 50.0, 400.0])[None, :]
    lhs = gq.dlog_G(q, t)
    rhs = t / q * np.exp(gq.log_G(q + 2.0, t) - gq.log_G(q, t))
    assert np.allclose(lhs, rhs, rtol=1e-12, atol=0)


# ---------------------------------------------------------------------------
# Lemma 5.5
# ---------------------------------------------------------------------------

LEMMA_Q = np.array([1.0, 2.0, 2.5, 5.0, 41.0, 99.5, 1e3, 1e5, 1e7])[:, None]
LEMMA_T = np.geomspace(1e-10, 1e7, 120)[None, :]


def test_G_increasing_in_t():
    log_g = gq.log_G(LEMMA_Q, np.concatenate([[[0.0]], LEMMA_T], axis=1))
    assert np.all(np.diff(log_g, axis=1) >= 0)
    assert np.all(log_g[:, -1] > log_g[:, 0])
    # strictly: the derivative is positive for every t > 0
    assert np.all(gq.dlog_G(LEMMA_Q, LEMMA_T) > 0)


def test_lemma_5_5_derivative_bound():
    """0 < G_q'/G_q < t/q for t > 0 (first claim of Lemma 5.5)."""
    ratio = gq.dlog_G(LEMMA_Q, LEMMA_T)
    assert np.all(ratio > 0)
    assert np.all(ratio < LEMMA_T / LEMMA_Q)
    # and the bound is sharp to first order at small t: ratio ~ t/(q+1)
    small = gq.dlog_G(LEMMA_Q[:, 0], 1e-6)
    assert np.allclose(small, 1e-6 / (LEMMA_Q[:, 0] + 1.0), rtol=1e-10)


def test_ratio_bound_dominates_exact_ratio():
    """G_q(t2)/G_q(t1) <= exp(|t1^2 - t2^2|/(2q)) (eq. Gratio1), with mpmath's log G as truth."""
    ts = [0.0, 1e-3, 1.0, 10.0, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7]
    for q in [1.0, 2.0, 7.0, 50.0, 1e3, 1e5, 1e7]:
        log_g = np.array([mp_reference(q, t)[0] for t in ts])
        t1, t2 = np.meshgrid(ts, ts, indexing="ij")
        exact = log_g[None, :] - log_g[:, None]           # log G(t2) - log G(t1)
        bound = gq.log_ratio_bound(q, t1, t2)
        slack = 1e-13 * np.maximum(1.0, np.abs(log_g[None, :]) + np.abs(log_g[:, None]))
        assert np.all(exact <= bound + slack)
        # the float version agrees wherever it does not overflow
        with np.errstate(over="ignore"):
            assert np.allclose(gq.ratio_bound(q, t1, t2), np.exp(bound), rtol=1e-15)


def test_ratio_bound_values():
    assert gq.log_ratio_bound(4, 1.0, 3.0) == 1.0
    assert gq.ratio_bound(4, 3.0, 1.0) == pytest.approx(np.e, rel=1e-15)
    assert gq.ratio_bound(10, 2.0, 2.0) == 1.0
    # |t1^2 - t2^2| formed without cancellation
    assert gq.log_ratio_bound(1.0, 1e8 + 1.0, 1e8) == pytest.approx((2e8 + 1.0) / 2.0, rel=1e-15)
    assert gq.ratio_bound(1.0, 0.0, 1e3) == np.inf
    assert gq.log_ratio_bound(1.0, 0.0, 1e3) == 5e5


# ---------------------------------------------------------------------------
# c_bar and the density of Lemma 5.4
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("q", [1.5, 2.0, 3.0, 4.5, 10.0, 100.0])
def test_c_bar_vs_quadrature(q):
    a = (q - 3.0) / 2.0
    value, _ = integrate.quad(lambda u: 1.0, -1.0, 1.0, weight="alg", wvar=(a, a), epsrel=1e-13)
    assert gq.c_bar(q) == pytest.approx(value, rel=1e-12)


def test_c_bar_closed_form_large_q():
    q = np.array([1.01, 2.0, 3.0, 21.0, 1e4, 1e7, 1e12])
    with mp.workdps(DPS):
        want = np.array([float(mp.log(mp.gamma(0.5) * mp.gamma((mp.mpf(x) - 1) / 2) / mp.gamma(mp.mpf(x) / 2)))
                         for x in q])
    assert np.allclose(gq.log_c_bar(q), want, rtol=1e-13, atol=1e-14)
    assert gq.c_bar(2) == pytest.approx(np.pi, rel=1e-15)
    assert gq.c_bar(3) == pytest.approx(2.0, rel=1e-15)


@pytest.mark.parametrize("q", [2.0, 2.5, 3.0, 5.0, 20.0, 21.0, 1e4])
def test_sphere_pdf_integrates_to_one(q):
    # u = cos(phi) turns the density into c * sin(phi)^(q-2), bounded for q >= 2
    value = integrate.quad(lambda phi: gq.sphere_coordinate_pdf(np.cos(phi), q) * np.sin(phi),
                           0.0, np.pi, points=[np.pi / 2], epsabs=1e-14, limit=200)[0]
    assert value == pytest.approx(1.0, rel=1e-10)


def test_sphere_pdf_values():
    assert gq.sphere_coordinate_pdf(0.3, 3) == 0.5
    assert gq.sphere_coordinate_pdf([-1.0, 1.0, 1.5, -7.0], 10) .tolist() == [0.0] * 4
    assert gq.sphere_coordinate_pdf(0.0, 2) == pytest.approx(1 / np.pi, rel=1e-15)
    u = np.array([-0.999999, -0.5, 0.0, 0.25, 0.999])
    # c_bar_7 = B(1/2, 3) = 16/15; (1-u)(1+u) keeps the digits of 1-u^2 near the poles
    assert np.allclose(gq.sphere_coordinate_pdf(u, 7), ((1 - u) * (1 + u)) ** 2 / (16 / 15), rtol=1e-13, atol=0)
    assert np.isfinite(gq.sphere_coordinate_pdf(1e-3, 1e7))


def _pdf_cdf(q):
    """CDF of sphere_coordinate_pdf by trapezoid integration on a fine grid (q >= 3: bounded)."""
    u = np.linspace(-1.0, 1.0, 40001)
    cdf = integrate.cumulative_trapezoid(gq.sphere_coordinate_pdf(u, q), u, initial=0.0)
    return lambda x: np.interp(x, u, cdf)


KS_LEVEL = 1e-3  # the seeded sample is fixed, so this is a fixed pass/fail threshold


@pytest.mark.parametrize("q", [3, 5, 20])
def test_sphere_pdf_matches_normalised_gaussians(q):
    """Lemma 5.4: the first coordinate of Z/|Z|, Z ~ N(0, I_q), has density (1-u^2)^{(q-3)/2}/c_bar_q."""
    rng = np.random.default_rng(202605 + q)
    z = rng.standard_normal((4000, q))
    first = z[:, 0] / np.linalg.norm(z, axis=1)
    assert stats.kstest(first, _pdf_cdf(q)).pvalue > KS_LEVEL
    # the test has power: the density of a different dimension is rejected
    assert stats.kstest(first, _pdf_cdf(q + 4)).pvalue < KS_LEVEL


@pytest.mark.parametrize("q", [3, 7.5, 50])
def test_sample_sphere_coordinate(q):
    draws = gq.sample_sphere_coordinate(q, size=4000, rng=11)
    assert draws.shape == (4000,)
    assert np.all(np.abs(draws) < 1)
    assert stats.kstest(draws, _pdf_cdf(q)).pvalue > KS_LEVEL
    assert np.array_equal(draws, gq.sample_sphere_coordinate(q, size=4000, rng=np.random.default_rng(11)))
    assert isinstance(gq.sample_sphere_coordinate(q, rng=1), float)


# ---------------------------------------------------------------------------
# ufunc behaviour, overflow, bad input
# ---------------------------------------------------------------------------

def test_scalars_and_broadcasting():
    for f in (gq.G, gq.log_G, gq.dlog_G):
        assert isinstance(f(5, 1.0), float)
        out = f(np.array([[2.0], [50.0], [1e6]]), [0.0, 1.0, 1e3, 1e7])
        assert out.shape == (3, 4)
        assert np.all(np.isfinite(out) | (f is gq.G))
    assert isinstance(gq.c_bar(4), float)
    assert gq.c_bar([3, 4]).shape == (2,)
    assert gq.ratio_bound([1, 2], 1.0, [[0.0], [2.0]]).shape == (2, 2)
    assert gq.sphere_coordinate_pdf(np.zeros((2, 3)), 4).shape == (2, 3)


def test_G_overflows_only_beyond_float_range():
    log_g = gq.log_G(2.0, [700.0, 720.0])
    g = gq.G(2.0, [700.0, 720.0])
    assert np.isfinite(g[0]) and g[0] == pytest.approx(np.exp(log_g[0]), rel=1e-15)
    assert log_g[1] > np.log(np.finfo(float).max) and g[1] == np.inf
    assert gq.G(1e7, 0.0) > 0  # never underflows


@pytest.mark.parametrize("call, match", [
    (lambda: gq.log_G(0.5, 1.0), "q must be finite and >= 1"),
    (lambda: gq.G(np.nan, 1.0), "q must be finite"),
    (lambda: gq.dlog_G(np.inf, 1.0), "q must be finite"),
    (lambda: gq.log_G(3, -1e-300), "t must be finite and >= 0"),
    (lambda: gq.G(3, np.inf), "t must be finite"),
    (lambda: gq.dlog_G(3, [1.0, np.nan]), "t must be finite"),
    (lambda: gq.log_G("three", 1.0), "q must be a real number"),
    (lambda: gq.c_bar(1.0), "q must be finite and > 1"),
    (lambda: gq.log_c_bar(0.0), "q must be finite and > 1"),
    (lambda: gq.ratio_bound(0.0, 1.0, 2.0), "q must be finite and >= 1"),
    (lambda: gq.ratio_bound(3.0, -1.0, 2.0), "t1 must be finite and >= 0"),
    (lambda: gq.log_ratio_bound(3.0, 1.0, np.nan), "t2 must be finite"),
    (lambda: gq.sphere_coordinate_pdf(np.nan, 3.0), "u must be finite"),
    (lambda: gq.sphere_coordinate_pdf(0.1, 1.0), "q must be finite and > 1"),
    (lambda: gq.sample_sphere_coordinate(0.9, 3, rng=0), "q must be finite and > 1"),
    (lambda: gq.sample_sphere_coordinate([3, 4], 3, rng=0), "q must be a single number"),
    (lambda: gq.sample_sphere_coordinate(3, 3, rng="seed"), "rng must be"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
