"""Tests for dpmask.paper.symbolic: every derivation's identities simplify to zero / True.

The ``check_`` entries are the mathematical identities themselves (the algebra
of the paper's proofs), so these tests check mathematics, not earlier output.
Numbers (f(1.645), c_bar_q, G_q) are compared against mpmath quadrature.
"""

import mpmath as mp
import pytest
import sympy as sp

from dpmask.paper import symbolic

DERIVATIONS = [
    symbolic.lemma_3_1,
    symbolic.theorem_3_2,
    symbolic.corollary_3_3,
    symbolic.corollary_3_5,
    symbolic.lemma_5_4,
    symbolic.lemma_5_5,
    symbolic.lemma_5_6,
    symbolic.lemma_a_1,
    symbolic.lemma_a_3,
    symbolic.lemma_a_4,
]


_CACHE = {}


def derive(fn):
    """Each derivation takes up to a few seconds; compute it once per test session."""
    if fn not in _CACHE:
        _CACHE[fn] = fn()
    return _CACHE[fn]


@pytest.fixture(scope="module", params=DERIVATIONS, ids=lambda f: f.__name__)
def derivation(request):
    return request.param.__name__, derive(request.param)


def test_every_check_holds(derivation):
    name, d = derivation
    result = symbolic.verify(d)
    assert result, f"{name} returned no checks"
    failed = [k for k, ok in result.items() if not ok]
    assert not failed, f"{name}: identities that do not simplify to 0/True: {failed}"


def test_checks_are_sympy_objects(derivation):
    _, d = derivation
    for key, value in symbolic.checks_of(d).items():
        assert isinstance(value, (sp.Basic, bool)), key


@pytest.mark.parametrize(
    "fn, keys",
    [
        (symbolic.lemma_5_4, ["check_normalisation", "check_reduction_exponent", "check_archimedes",
                              "check_slice_area", "check_substitution"]),
        (symbolic.lemma_5_5, ["check_d_du", "check_integration_by_parts", "check_boundary_plus",
                              "check_log_integral", "check_second_moment", "check_bessel_form",
                              "check_riccati", "check_touching"]),
        (symbolic.lemma_3_1, ["check_norm_expansion", "check_norm_difference", "check_ratio_exponent"]),
        (symbolic.theorem_3_2, ["check_sufficiency_identity", "check_margin_nonnegative", "check_exact_root"]),
        (symbolic.lemma_5_6, ["check_expansion_p2", "check_expansion_p3", "check_charpoly_p3",
                              "check_final_gap"]),
        (symbolic.corollary_3_5, ["check_split", "check_3sqrtp_ge_2sqrtp_plus_1", "check_ratio_ge_one",
                                  "check_a3_amgm", "check_a3_final_sum", "check_repair_identity",
                                  "check_repair_positive", "check_a3_general_bound"]),
        (symbolic.lemma_a_1, ["check_f_prime", "check_f_1645_positive", "check_ibp_first",
                              "check_ibp_second", "check_gordon_derivative"]),
        (symbolic.lemma_a_4, ["check_orthogonal", "check_expansion", "check_B_equals_C"]),
    ],
)
def test_required_checks_present(fn, keys):
    d = derive(fn)
    missing = [k for k in keys if k not in d]
    assert not missing


def test_verify_detects_a_false_identity():
    # The paper's index: G_q's integrand is NOT the sphere integrand of Lemma 5.4.
    d = derive(symbolic.lemma_5_4)
    assert not symbolic.verify({"check_paper": d["paper_minus_correct_integrand"]})["check_paper"]
    x = sp.Symbol("x")
    assert symbolic.verify({"check_a": x - x, "check_b": sp.Gt(2, 1)}) == {"check_a": True, "check_b": True}
    assert symbolic.verify({"check_c": x + 1, "check_d": sp.Gt(1, 2)}) == {"check_c": False, "check_d": False}
    # non-check keys are ignored
    assert symbolic.verify({"display": x + 1}) == {}


def test_f_1645_matches_mpmath():
    mp.mp.dps = 30
    x = mp.mpf("1.645")
    f = -x**2 / 2 + mp.log(mp.sqrt(2 * mp.pi)) + mp.log(x) + mp.log(x**2 / (x**2 - 1))
    value = float(derive(symbolic.lemma_a_1)["f_at_1645_value"])
    assert abs(value - float(f)) < 1e-12
    assert value > 0.5  # the paper claims f(1.645) < 0


@pytest.mark.parametrize("q", [2, 3, 5.5, 10, 41])
def test_c_bar_matches_quadrature(q):
    closed = float(symbolic.c_bar_closed_form(sp.nsimplify(q)))
    quad = mp.quad(lambda u: (1 - u**2) ** ((mp.mpf(q) - 3) / 2), [-1, 0, 1])
    assert closed == pytest.approx(float(quad), rel=1e-9)


def test_second_moment_matches_quadrature():
    expr = derive(symbolic.lemma_5_5)["second_moment"]
    q = next(iter(expr.free_symbols))
    for qq in (1, 2, 7):
        w = lambda u: (1 - u**2) ** ((mp.mpf(qq) - 2) / 2)  # noqa: E731
        m2 = mp.quad(lambda u: u**2 * w(u), [-1, 0, 1]) / mp.quad(w, [-1, 0, 1])
        assert float(expr.subs(q, qq)) == pytest.approx(float(m2), rel=1e-9)


def test_exact_root_matches_bisection():
    d = derive(symbolic.theorem_3_2)
    g, e = sp.symbols("gamma epsilon", positive=True)
    root = float(d["sigma_exact"].subs({g: 1.695, e: 0.01}))
    f = lambda s: s * 0.01 - 1 / (2 * s) - 1.695  # noqa: E731
    assert float(mp.findroot(f, (1.0, 1000.0), solver="bisect")) == pytest.approx(root, rel=1e-10)


def test_lambda_max_exact_matches_numpy_eigenvalues():
    import numpy as np

    rng = np.random.default_rng(0)
    expr = derive(symbolic.lemma_5_6)["lambda_max_exact"]
    syms = sorted(expr.free_symbols, key=lambda s: s.name)
    for _ in range(5):
        x1 = rng.uniform(-1, 1, 4)
        dlt = rng.normal(size=4)
        dlt /= 2 * np.linalg.norm(dlt)
        xp = x1 + dlt
        m = np.outer(xp, xp) - np.outer(x1, x1)
        lam = np.abs(np.linalg.eigvalsh(m)).max()
        subs = {}
        for s in syms:
            if s.name == "X_1'X_1^T":
                subs[s] = xp @ x1
            elif s.name == "\\|X_1'\\|^2":
                subs[s] = xp @ xp
            elif s.name == "\\|X_1\\|^2":
                subs[s] = x1 @ x1
        assert len(subs) == 3, syms
        assert float(expr.subs(subs)) == pytest.approx(lam, rel=1e-10)
        assert lam <= 2 * np.linalg.norm(x1) + 1


def test_sharp_ratio_rate_holds_numerically():
    # Lemma 5.5 sharpened: G_q'/G_q = I_{nu+1}/I_nu <= t/(q+1), nu = (q-1)/2 (scipy, not dpmask.paper.gq).
    import numpy as np
    from scipy.special import ive

    for q in (1, 2, 3, 7.5, 40, 401):
        # ive underflows for large order and small t; keep t where both values are normal floats
        t = np.logspace(-3, 3, 300) if q <= 40 else np.logspace(1.7, 3, 100)
        nu = (q - 1) / 2
        ratio = ive(nu + 1, t) / ive(nu, t)
        assert np.all(np.isfinite(ratio))
        assert np.all(ratio <= t / (q + 1) * (1 + 1e-12))
    # and t/q (the paper's rate) is not sharp: near t = 0 the ratio is t/(q+1)
    r = ive(3.0, 1e-4) / ive(2.0, 1e-4)  # q = 5
    assert abs(r / (1e-4 / 6) - 1) < 1e-6


def test_bessel_ratio_matches_mpmath():
    mp.mp.dps = 30
    d = derive(symbolic.lemma_5_5)
    expr = d["bessel_ratio"]
    nu, t = sorted(expr.free_symbols, key=lambda s: s.name)
    for nv, tv in ((0.5, 1.0), (3.0, 7.0)):
        ref = mp.besseli(nv + 1, tv) / mp.besseli(nv, tv)
        assert float(expr.subs({nu: nv, t: tv}).evalf(20)) == pytest.approx(float(ref), rel=1e-12)
