"""Tests of dpmask.paper.bounds against the paper's Table 1, mpmath, and the theorems' own inequalities."""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpmask.exact import best as exact_best
from dpmask.paper import bounds
from dpmask.paper.table import PAPER_TABLE1

# --- independent truth: the paper's printed Table 1 ------------------------------------------


@pytest.mark.parametrize("row", PAPER_TABLE1, ids=lambda r: f"eps{r[0]}-d{r[1]}-p{r[2]}-n{r[3]}")
def test_table1_values_match_the_paper(row):
    eps, delta, p, n, a_nec, a_suf, b_suf, _ = row
    assert round(bounds.sigma_a_necessary(eps, delta), 1) == a_nec
    assert round(bounds.sigma_a_sufficient(eps, delta), 1) == a_suf
    assert round(bounds.sigma_b(eps, delta, n, p), 1) == b_suf


# --- independent truth: mpmath ---------------------------------------------------------------


def _mp_ncx2_sf(x, k, lam):
    """Upper tail of the noncentral chi-square as a Poisson mixture of central ones (mpmath)."""
    x, k, lam = mp.mpf(x), mp.mpf(k), mp.mpf(lam)
    total = mp.mpf(0)
    j = 0
    while True:
        w = mp.exp(-lam / 2) * (lam / 2) ** j / mp.factorial(j)
        term = w * mp.gammainc((k + 2 * j) / 2, x / 2, mp.inf, regularized=True)
        total += term
        if j > 10 and w < mp.mpf(10) ** (-40):
            return total
        j += 1


@pytest.mark.parametrize(
    "eps, delta, n, p",
    [(0.1, 0.01, 100, 1), (0.001, 0.001, 100, 20), (0.5, 1e-8, 1000, 7), (3.0, 0.2, 30, 2), (0.01, 1e-12, 50, 3)],
)
def test_sigma_b_is_the_root_in_high_precision(eps, delta, n, p):
    mp.mp.dps = 40
    sigma = bounds.sigma_b(eps, delta, n, p)
    s2 = sigma**2
    c = (2 * math.sqrt(p) + 1) / (2 * (n - p))
    # the quantile implied by g(sigma) = 0 must have tail probability delta under mpmath
    gamma = (s2 * eps - math.sqrt(p)) / c
    tail = _mp_ncx2_sf(gamma, 2 * (n - p), p / s2)
    assert float(tail) == pytest.approx(delta, rel=1e-8)


def test_gaussian_quantile_against_mpmath():
    mp.mp.dps = 30
    for delta in [0.4, 0.01, 1e-5, 1e-15, 1e-100]:
        # solve log Phi(-x) = log delta (well scaled in the far tail)
        target = mp.log(mp.mpf(delta))
        exact = mp.findroot(lambda x: mp.log(mp.ncdf(-x)) - target, mp.sqrt(2 * mp.log(1 / mp.mpf(delta))))
        assert bounds.gaussian_upper_quantile(delta) == pytest.approx(float(exact), rel=1e-12)


# --- ufunc behaviour and vectorisation -------------------------------------------------------


def test_scalar_in_float_out_and_broadcasting():
    assert isinstance(bounds.sigma_b(0.1, 0.01, 100, 5), float)
    assert isinstance(bounds.sigma_a_sufficient(0.1, 0.01), float)
    eps = np.array([[0.1], [0.01]])
    n = np.array([100, 1000, 10000])
    out = bounds.sigma_b(eps, 0.01, n, 5)
    assert out.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            assert out[i, j] == pytest.approx(bounds.sigma_b(float(eps[i, 0]), 0.01, int(n[j]), 5), rel=1e-12)


def test_grid_of_ten_thousand_points_is_solved():
    eps, delta = np.meshgrid(np.logspace(-3, 1, 100), np.logspace(-12, -0.5, 100))
    out = bounds.sigma_b(eps, delta, 500, 4)
    assert out.shape == (100, 100) and np.all(np.isfinite(out))
    g = bounds.g_b(out[::17, ::13], eps[::17, ::13], delta[::17, ::13], 500, 4)
    assert np.max(np.abs(g) / (out[::17, ::13] ** 2 * eps[::17, ::13])) < 1e-10


def test_g_b_sign_change_at_root():
    s0 = bounds.sigma_b(0.05, 1e-4, 200, 3)
    assert bounds.g_b(s0 * (1 - 1e-6), 0.05, 1e-4, 200, 3) > 0
    assert bounds.g_b(s0 * (1 + 1e-6), 0.05, 1e-4, 200, 3) < 0


# --- properties the theorems imply -----------------------------------------------------------

eps_small = st.floats(1e-4, 0.999)
delta_small = st.floats(1e-12, 0.0499)
n_p = st.tuples(st.integers(1, 40), st.integers(2, 5000)).map(lambda t: (t[0] + t[1], t[0]))


@settings(max_examples=60, deadline=None)
@given(eps=eps_small, delta=delta_small, np_=n_p, factor=st.floats(1.01, 5))
def test_sigma_falls_as_eps_or_delta_grow(eps, delta, np_, factor):
    n, p = np_
    assert bounds.sigma_b(min(eps * factor, 50), delta, n, p) < bounds.sigma_b(eps, delta, n, p)
    d2 = min(delta * factor, 0.9)
    assert bounds.sigma_b(eps, d2, n, p) < bounds.sigma_b(eps, delta, n, p)
    assert bounds.sigma_a_sufficient(min(eps * factor, 0.9999), delta) <= bounds.sigma_a_sufficient(eps, delta)
    assert bounds.sigma_a_sufficient(eps, min(delta * factor, 0.49)) < bounds.sigma_a_sufficient(eps, delta)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(1e-4, 20), delta=st.floats(1e-12, 0.5), n=st.integers(10, 100000), p=st.integers(1, 8))
def test_theorem_3_4_sigma_grows_with_p(eps, delta, n, p):
    # For delta <= 1/2.  (With delta near 1 and n - p tiny the quantile sits below the mean and the
    # bound can fall with p: e.g. eps=1, delta=0.875, n=10, p=7 -> 8; the paper never goes there.)
    assert bounds.sigma_b(eps, delta, n, p + 1) > bounds.sigma_b(eps, delta, n, p)


@settings(max_examples=60, deadline=None)
@given(eps=eps_small, delta=delta_small, np_=n_p)
def test_corollaries_are_weaker_than_their_theorems(eps, delta, np_):
    n, p = np_
    # Corollary 3.3 (sufficient) asks for at least Theorem 3.2's sufficient sigma,
    assert bounds.sigma_a_corollary(eps, delta) >= bounds.sigma_a_sufficient(eps, delta)
    # Theorem 3.2: necessary <= sufficient,
    assert bounds.sigma_a_necessary(eps, delta) < bounds.sigma_a_sufficient(eps, delta)
    # Corollary 3.5 asks for at least Theorem 3.4's sigma (the proof's chain of inequalities),
    assert bounds.sigma_b_corollary(eps, delta, n, p) >= bounds.sigma_b(eps, delta, n, p)
    # and the proven Setting B noise never exceeds Setting A's (Lemma 2.3).
    assert bounds.sufficient_sigma(eps, delta, n, p, "B") <= bounds.sigma_a_sufficient(eps, delta)


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(1e-4, 10), delta=st.floats(1e-12, 0.9), n=st.integers(5, 10000), p=st.integers(1, 3))
def test_corrected_bound_is_slightly_larger(eps, delta, n, p):
    plain = bounds.sigma_b(eps, delta, n, p)
    corrected = bounds.sigma_b(eps, delta, n, p, corrected=True)
    assert plain < corrected
    assert corrected / plain < 1 + 1.0 / (n - p - 1)


def test_corollary_3_3_necessary_half_fails_between_0_032_and_0_05():
    # Lemma A.1's lower bound sqrt(ln 1/delta) < gamma_delta fails near delta = 0.05, so the
    # corollary's "necessary" sigma exceeds Theorem 3.2's necessary sigma there (book, appendix A).
    eps = 0.01
    assert bounds.sigma_a_corollary(eps, 0.045, "necessary") > bounds.sigma_a_necessary(eps, 0.045)
    assert bounds.sigma_a_corollary(eps, 0.01, "necessary") < bounds.sigma_a_necessary(eps, 0.01)


def test_block_bound_uses_smallest_block():
    assert bounds.sigma_b_block(0.1, 0.01, [300, 120, 500], 5) == bounds.sigma_b(0.1, 0.01, 120, 5)


def test_sufficient_sigma_settings():
    a = bounds.sufficient_sigma(0.1, 0.01, 100, 5, "A")
    assert a == bounds.sigma_a_sufficient(0.1, 0.01)
    b = bounds.sufficient_sigma(0.1, 0.01, 100, 5, "B")
    assert b == bounds.sigma_b(0.1, 0.01, 100, 5) == bounds.sufficient_sigma(0.1, 0.01, 100, 5, "c")
    # For p close to n Theorem 3.4 is worse than Theorem 3.2 and Lemma 2.3 takes over.
    assert bounds.sufficient_sigma(0.9, 0.4, 3, 2, "B") == pytest.approx(bounds.sigma_a_sufficient(0.9, 0.4))
    assert bounds.sigma_b(0.9, 0.4, 3, 2) > bounds.sigma_a_sufficient(0.9, 0.4)
    # eps >= 1: only Theorem 3.4 applies
    assert bounds.sufficient_sigma(2.0, 0.01, 100, 5) == bounds.sigma_b(2.0, 0.01, 100, 5)


# --- best proven sufficient sigma: analytic Gaussian (dp-accounting) against Table 1 ----------

from dp_accounting import gaussian_mechanism as dpa  # noqa: E402

_GAUSS = "analytic Gaussian (Balle & Wang 2018), Setting A"


def _dpa_sigma(eps, delta):
    return dpa.get_sigma_gaussian(float(eps), float(delta), tol=1e-15)


def test_best_sufficient_sigma_at_the_issue_example():
    # eps = 0.001, delta = 0.01, p = 1, n = 100: Theorem 3.4 prints 68.9, the analytic Gaussian 38.0.
    ref = _dpa_sigma(0.001, 0.01)
    assert round(ref, 1) == 38.0
    assert exact_best.best_sufficient_sigma(0.001, 0.01, 100, 1) == pytest.approx(ref, rel=1e-9)
    assert exact_best.best_sufficient_source(0.001, 0.01, 100, 1) == _GAUSS + ", valid for B by Lemma 2.3"
    assert exact_best.best_sufficient_sigma(0.001, 0.01, 100, 1, "A") == pytest.approx(ref, rel=1e-9)
    assert exact_best.best_sufficient_source(0.001, 0.01, 100, 1, "A") == _GAUSS
    # sufficient_sigma keeps to the paper's theorems
    assert round(bounds.sufficient_sigma(0.001, 0.01, 100, 1), 1) == 68.9


@pytest.mark.parametrize("row", PAPER_TABLE1, ids=lambda r: f"eps{r[0]}-d{r[1]}-p{r[2]}-n{r[3]}")
def test_best_sufficient_sigma_is_the_minimum_of_printed_theorem_3_4_and_dp_accounting(row):
    eps, delta, p, n, _, a_suf, b_suf, _ = row
    ref_a = _dpa_sigma(eps, delta)
    for setting in ("B", "C"):
        best = exact_best.best_sufficient_sigma(eps, delta, n, p, setting)
        source = exact_best.best_sufficient_source(eps, delta, n, p, setting)
        # printed Theorem 3.4 values carry +-0.05 of rounding
        assert best == pytest.approx(min(ref_a, b_suf), abs=0.05 + 1e-9)
        assert best <= ref_a * (1 + 1e-9)
        if ref_a < b_suf - 0.05:
            assert source.startswith(_GAUSS) and f"valid for {setting} by Lemma 2.3" in source
        elif ref_a > b_suf + 0.05:
            assert source == "Theorem 3.4"
    # Setting A: the analytic value, below Theorem 3.2's sufficient column (the paper's criterion)
    best_a = exact_best.best_sufficient_sigma(eps, delta, n, p, "A")
    assert best_a == pytest.approx(ref_a, rel=1e-9)
    assert best_a < a_suf


def _analytic_beats_theorem_3_4(eps, delta, n, p, corrected=False):
    """Independent: is the analytic sigma below Theorem 3.4's root?  g is decreasing, so
    sigma_A < sigma_0 iff g(sigma_A) > 0 iff the mpmath tail at the implied quantile exceeds delta."""
    mp.mp.dps = 30
    sa = _dpa_sigma(eps, delta)
    q = n - p - (1 if corrected else 0)
    c = (2 * math.sqrt(p) + 1) / (2 * q)
    gamma = (sa**2 * eps - math.sqrt(p)) / c
    if gamma <= 0:
        return True
    return _mp_ncx2_sf(gamma, 2 * (n - p), p / sa**2) > delta


def test_analytic_gaussian_attains_the_minimum_in_12_of_36_rows_13_with_the_conservative_variant():
    rows = [r[:4] for r in PAPER_TABLE1]
    for corrected, expected in ((False, 12), (True, 13)):
        truth = [_analytic_beats_theorem_3_4(e, d, n, p, corrected) for e, d, p, n in rows]
        assert sum(truth) == expected
        eps, delta, p, n = (np.array(c) for c in zip(*rows))
        names = exact_best.best_sufficient_source(eps, delta, n, p, corrected=corrected)
        assert [str(x).startswith(_GAUSS) for x in names] == truth
        if corrected:
            assert set(names[~np.array(truth)]) == {"Theorem 3.4 (conservative 2(n-p-1) variant)"}
    # all twelve have delta = 0.01; the thirteenth is the near-tie (0.1, 0.01, 5, 100)
    assert all(d == 0.01 for (e, d, p, n) in rows if _analytic_beats_theorem_3_4(e, d, n, p))
    assert _analytic_beats_theorem_3_4(0.1, 0.01, 100, 5, True) and not _analytic_beats_theorem_3_4(0.1, 0.01, 100, 5)


def test_best_sufficient_sigma_has_no_eps_limit_and_broadcasts():
    # eps >= 1 and delta >= 1/2: Theorem 3.2 does not apply, the analytic Gaussian still does
    for eps, delta, n, p in [(2.0, 0.01, 100, 5), (5.0, 0.6, 10, 3), (0.9, 0.4, 3, 2)]:
        ref = _dpa_sigma(eps, delta)
        want = min(ref, bounds.sigma_b(eps, delta, n, p))
        assert exact_best.best_sufficient_sigma(eps, delta, n, p) == pytest.approx(want, rel=1e-9)
        assert exact_best.best_sufficient_sigma(eps, delta, n, p, "a") == pytest.approx(ref, rel=1e-9)
    out = exact_best.best_sufficient_sigma([0.1, 0.001], 0.01, 100, [[1], [5]])
    names = exact_best.best_sufficient_source([0.1, 0.001], 0.01, 100, [[1], [5]], "B")
    assert out.shape == names.shape == (2, 2)
    assert isinstance(exact_best.best_sufficient_sigma(0.1, 0.01, 100, 1), float)
    assert isinstance(exact_best.best_sufficient_source(0.1, 0.01, 100, 1), str)
    np.testing.assert_array_equal(exact_best.best_sufficient_sigma(0.1, 0.01, 100, 5, "C"),
                                  exact_best.best_sufficient_sigma(0.1, 0.01, 100, 5, "B"))


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: bounds.sigma_b(0, 0.01, 100, 5), "eps must be finite and > 0"),
        (lambda: bounds.sigma_b(np.inf, 0.01, 100, 5), "eps must be finite"),
        (lambda: bounds.sigma_b(np.nan, 0.01, 100, 5), "eps must be finite"),
        (lambda: bounds.sigma_b(0.1, 0, 100, 5), r"delta must lie in the open interval \(0, 1\)"),
        (lambda: bounds.sigma_b(0.1, 1, 100, 5), "delta must lie"),
        (lambda: bounds.sigma_b(0.1, 0.01, 5, 5), "n must exceed p"),
        (lambda: bounds.sigma_b(0.1, 0.01, 100, 0), "p must be a whole number >= 1"),
        (lambda: bounds.sigma_b(0.1, 0.01, 100.5, 5), "n must be a whole number"),
        (lambda: bounds.sigma_b(0.1, 0.01, 6, 5, corrected=True), r"n must exceed p \+ 1"),
        (lambda: bounds.g_b(-1.0, 0.1, 0.01, 100, 5), "sigma must be finite and > 0"),
        (lambda: bounds.sigma_a_sufficient(1.0, 0.01), "Theorem 3.2 assumes eps < 1"),
        (lambda: bounds.sigma_a_necessary(0.5, 0.6), "Theorem 3.2 assumes"),
        (lambda: bounds.sigma_a_corollary(0.5, 0.06), "Corollary 3.3 assumes"),
        (lambda: bounds.sigma_a_corollary(0.5, 0.01, kind="maybe"), "kind must be"),
        (lambda: bounds.sigma_b_corollary(1.5, 0.01, 100, 5), "Corollary 3.5 assumes eps < 1"),
        (lambda: bounds.sigma_b_block(0.1, 0.01, [100, 5], 5), "every block must have more rows than p"),
        (lambda: bounds.sigma_b_block(0.1, 0.01, [], 5), "block_sizes must be a non-empty"),
        (lambda: bounds.sufficient_sigma(0.1, 0.01, 100, 5, "D"), "setting must be"),
        (lambda: bounds.sufficient_sigma(1.5, 0.01, 100, 5, "A"), "Theorem 3.2 assumes"),
        (lambda: bounds.sigma_b("x", 0.01, 100, 5), "eps must be a real number or an array of real numbers, got the text"),
        (lambda: exact_best.best_sufficient_sigma(0.1, 0.01, 100, 5, "D"), "setting must be"),
        (lambda: exact_best.best_sufficient_source(0.1, 0.01, 100, 5, 2), "setting must be"),
        (lambda: exact_best.best_sufficient_sigma(0.1, 0.01, 100, 5, corrected="yes"), "corrected must be"),
        (lambda: exact_best.best_sufficient_sigma(0, 0.01, 100, 5, "A"), "eps must be finite and > 0"),
        (lambda: exact_best.best_sufficient_source(0.1, 1.5, 100, 5), "delta must lie"),
        (lambda: exact_best.best_sufficient_sigma(0.1, 0.01, 5, 5), "n must exceed p"),
        (lambda: exact_best.best_sufficient_sigma([0.1, 0.2], 0.01, [100, 200, 300], 5), r"arguments eps, delta, n, p must broadcast together.*eps \(2,\).*n \(3,\)"),
    ],
)
def test_bad_input_raises_a_clear_value_error(call, match):
    """A value out of range is a ValueError; text for a number or a non-bool flag a TypeError."""
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_bad_entry_inside_an_array_is_reported():
    with pytest.raises(ValueError, match=r"got -0\.5"):
        bounds.sigma_b(np.array([0.1, -0.5]), 0.01, 100, 5)
