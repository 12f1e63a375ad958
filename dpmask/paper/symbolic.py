"""Symbolic (sympy) checks of the algebra in the paper's proofs.

Each public function ``lemma_*``, ``theorem_*`` or ``corollary_*`` redoes the
algebra of one statement of Ding, Wu, Miao and Chen, "Reducing Noise Level in
Differential Privacy through Matrix Masking", and returns a plain ``dict``
mapping names to sympy objects.

Convention
----------
* A key starting with ``check_`` holds an *identity to verify*: either a sympy
  expression that must simplify to ``0``, or a sympy relational / boolean that
  must evaluate to ``True``.  The checks ARE the mathematical statements, so a
  test that calls :func:`verify` tests the mathematics, not earlier output.
* Every other key holds an expression a chapter may want to display (the
  closed form of a constant, an intermediate integrand, a numerical value).

:func:`verify` simplifies every check of a dict and returns ``{name: bool}``;
:func:`all_checks` runs every function of this module and returns the
combined result.

Examples
--------
>>> from dpmask.paper import symbolic
>>> d = symbolic.theorem_3_2()
>>> all(symbolic.verify(d).values())
True
"""

from __future__ import annotations

import sympy as sp

__all__ = [
    "verify",
    "all_checks",
    "checks_of",
    "lemma_3_1",
    "theorem_3_2",
    "corollary_3_3",
    "corollary_3_5",
    "lemma_5_4",
    "lemma_5_5",
    "lemma_5_5_sharp",
    "lemma_5_6",
    "lemma_a_1",
    "lemma_a_3",
    "lemma_a_4",
    "c_bar_closed_form",
    "G_integrand",
]

CHECK_PREFIX = "check_"


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def _is_zero_or_true(obj) -> bool:
    """True when *obj* simplifies to 0 (expression) or to True (boolean)."""
    if isinstance(obj, bool):
        return obj
    if obj is sp.true:
        return True
    if obj is sp.false:
        return False
    if isinstance(obj, (sp.logic.boolalg.Boolean, sp.core.relational.Relational)):
        value = sp.simplify(obj)
        if value in (sp.true, sp.false):
            return bool(value)
        # a relational between numbers that simplify() left alone
        try:
            return bool(value.doit())
        except TypeError:
            return False
    expr = sp.sympify(obj)
    if expr == 0:
        return True
    simplified = sp.simplify(expr)
    if simplified == 0:
        return True
    simplified = sp.simplify(sp.powsimp(sp.expand(simplified), force=True))
    if simplified == 0:
        return True
    if sp.expand(sp.gammasimp(simplified)) == 0:
        return True
    return bool(sp.simplify(sp.expand_func(simplified)) == 0)


def checks_of(d: dict) -> dict:
    """Return only the ``check_`` entries of a derivation dict."""
    return {k: v for k, v in d.items() if k.startswith(CHECK_PREFIX)}


def verify(d: dict) -> dict:
    """Simplify each ``check_`` entry of *d*.

    Parameters
    ----------
    d : dict
        A dict returned by one of this module's derivation functions.

    Returns
    -------
    dict
        ``{name: bool}``, True where the identity holds (expression simplifies
        to zero, or relational evaluates to True).
    """
    return {k: _is_zero_or_true(v) for k, v in checks_of(d).items()}


def all_checks() -> dict:
    """Run every derivation of the module; ``{"function.check": bool}``."""
    out = {}
    for fn in (lemma_3_1, theorem_3_2, corollary_3_3, corollary_3_5, lemma_5_4,
               lemma_5_5, lemma_5_6, lemma_a_1, lemma_a_3, lemma_a_4):
        for k, v in verify(fn()).items():
            out[f"{fn.__name__}.{k}"] = v
    return out


def _fro2(m: sp.Matrix):
    """Squared Frobenius norm ``tr(m m^T)``."""
    return (m * m.T).trace()


def _sym_matrix(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i + 1}{j + 1}", real=True))


def _sym_row(name: str, p: int) -> sp.Matrix:
    return sp.Matrix(1, p, lambda i, j: sp.Symbol(f"{name}_{j + 1}", real=True))


def c_bar_closed_form(q):
    r"""Closed form :math:`\bar c_q = \Gamma(1/2)\Gamma((q-1)/2)/\Gamma(q/2)` (Lemma 5.4)."""
    q = sp.sympify(q)
    return sp.gamma(sp.Rational(1, 2)) * sp.gamma((q - 1) / 2) / sp.gamma(q / 2)


def G_integrand(q, t, u):
    r"""Integrand :math:`e^{tu}(1-u^2)^{(q-2)/2}` of :math:`G_q(t)` (paper's eq. for G_q)."""
    return sp.exp(t * u) * (1 - u**2) ** ((sp.sympify(q) - 2) / 2)


# ---------------------------------------------------------------------------
# Section 3
# ---------------------------------------------------------------------------
def lemma_3_1(n: int = 3, p: int = 2) -> dict:
    r"""Trace algebra behind Lemma 3.1 (eqs. denRatioA0, denRatioA1, DenB).

    Uses explicit symbolic ``n x p`` matrices; the neighbours differ in row 1.

    Returns
    -------
    dict
        ``check_norm_expansion``: :math:`\|Y-X\|^2-(\|Y\|^2+\|X\|^2-2\,tr(YX^T))`;
        ``check_norm_difference``: :math:`\|X'\|^2-\|X\|^2-(\|\Delta_1\|^2+2X_1\Delta_1^T)`;
        ``check_trace_shift``: :math:`tr(YX'^T)-tr(YX^T)-Y_1\Delta_1^T`;
        ``check_ratio_exponent``: the log density ratio of Setting A minus the
        exponent of (denRatioA1);
        ``check_log_ratio_from_densities``: the same starting from the Gaussian
        densities themselves;
        ``check_orthogonal_invariance``: :math:`\|A^TY\|^2-\|Y\|^2` for a
        rotation ``A`` (Setting B, n = 2);
        ``log_ratio``: the exponent :math:`(\|\Delta_1\|^2-2(Y_1-X_1)\Delta_1^T)/(2\sigma^2)`.
    """
    sigma = sp.Symbol("sigma", positive=True)
    Y = _sym_matrix("y", n, p)
    X = _sym_matrix("x", n, p)
    D1 = _sym_row("d", p)
    Delta = sp.zeros(n, p)
    Delta[0, :] = D1
    Xp = X + Delta
    X1, Y1 = X[0, :], Y[0, :]

    norm_exp = _fro2(Y - X) - (_fro2(Y) + _fro2(X) - 2 * (Y * X.T).trace())
    norm_diff = _fro2(Xp) - _fro2(X) - ((D1 * D1.T)[0] + 2 * (X1 * D1.T)[0])
    trace_shift = (Y * Xp.T).trace() - (Y * X.T).trace() - (Y1 * D1.T)[0]
    log_ratio_041 = ((D1 * D1.T)[0] - 2 * ((Y1 - X1) * D1.T)[0]) / (2 * sigma**2)
    log_ratio_040 = ((_fro2(Xp) - _fro2(X)) / (2 * sigma**2)
                     + (Y * X.T).trace() / sigma**2 - (Y * Xp.T).trace() / sigma**2)
    log_ratio_dens = -_fro2(Y - X) / (2 * sigma**2) + _fro2(Y - Xp) / (2 * sigma**2)

    theta = sp.Symbol("theta", real=True)
    A = sp.Matrix([[sp.cos(theta), -sp.sin(theta)], [sp.sin(theta), sp.cos(theta)]])
    Y2 = _sym_matrix("y", 2, p)
    orth = _fro2(A.T * Y2) - _fro2(Y2)

    return {
        "log_ratio": log_ratio_041,
        "check_norm_expansion": sp.expand(norm_exp),
        "check_norm_difference": sp.expand(norm_diff),
        "check_trace_shift": sp.expand(trace_shift),
        "check_ratio_exponent": sp.expand(log_ratio_040 - log_ratio_041),
        "check_log_ratio_from_densities": sp.expand(log_ratio_dens - log_ratio_041),
        "check_orthogonal_invariance": sp.simplify(orth),
    }


def theorem_3_2() -> dict:
    r"""Algebra of the proof of Theorem 3.2 (Setting A, eqs. DP-bound0A.nec/suf).

    With :math:`d=\|\Delta\|`, :math:`\gamma=\bar\gamma_\delta` and
    :math:`\sigma=\gamma(1+1/(2\gamma^2))d/\varepsilon`:

    Returns
    -------
    dict
        ``check_sufficiency_identity``:
        :math:`\sigma\varepsilon/d-d/(2\sigma)-\gamma-\frac{1}{2\gamma}(1-\frac{\varepsilon}{1+1/(2\gamma^2)})`;
        ``check_margin_nonnegative``: that margin is >= 0 for 0 < eps <= 1
        (eps written as 1 - s, s >= 0);
        ``check_increasing_in_sigma``: derivative of the criterion in sigma is > 0;
        ``check_unit_variance``: the standardised statistic
        :math:`-C_1\Delta_1^T/(\sigma\|\Delta_1\|)` has variance 1 (p = 3);
        ``check_exact_root``: :math:`\sigma_{\mathrm{crit}}=(\gamma+\sqrt{\gamma^2+2\varepsilon})/(2\varepsilon)`
        solves :math:`\sigma\varepsilon-1/(2\sigma)=\gamma` (d = 1), the exact
        smallest sigma of condition (DP-bound0A);
        ``sigma_exact``: that root; ``margin``: the margin expression.
    """
    gamma, eps, d, sigma, s = sp.symbols("gamma epsilon d sigma s", positive=True)
    rho = 1 + 1 / (2 * gamma**2)  # the book's rho (chapter 5, proof of Theorem 3.2)
    sig_suf = gamma * rho * d / eps
    crit = sigma * eps / d - d / (2 * sigma)
    margin = (1 / (2 * gamma)) * (1 - eps / rho)
    identity = crit.subs(sigma, sig_suf) - gamma - margin
    margin_s = sp.simplify(margin.subs(eps, 1 - s))
    deriv = sp.diff(crit, sigma)

    # variance of -C_1 Delta_1^T / (sigma ||Delta_1||): sum of Delta_j^2 sigma^2 / (sigma^2 ||Delta||^2)
    dvec = sp.symbols("d1:4", positive=True)
    var = sum(dj**2 * sigma**2 for dj in dvec) / (sigma**2 * sum(dj**2 for dj in dvec))

    sigma_exact = (gamma + sp.sqrt(gamma**2 + 2 * eps)) / (2 * eps)
    root = (sigma * eps - 1 / (2 * sigma) - gamma).subs(sigma, sigma_exact)
    return {
        "criterion": crit,
        "sigma_sufficient": sig_suf,
        "margin": margin,
        "sigma_exact": sigma_exact,
        "check_sufficiency_identity": identity,
        "check_margin_nonnegative": sp.Ge(margin_s, 0) if margin_s.is_nonnegative is None
        else sp.sympify(bool(margin_s.is_nonnegative)),
        "check_increasing_in_sigma": sp.sympify(bool(deriv.is_positive)),
        "check_unit_variance": var - 1,
        "check_exact_root": root,
    }


def corollary_3_3() -> dict:
    r"""Algebra of Corollary 3.3 (explicit Setting A bounds), proof steps.

    With :math:`L=\ln(1/\delta)` and :math:`h(x)=x(1+1/(2x^2))=x+1/(2x)`:

    Returns
    -------
    dict
        ``check_two_ln20_gt_5``: :math:`2\ln 20>5` (so :math:`1+1/(2L)<1.2` when delta < 0.05);
        ``check_1p2_bound``: :math:`1+1/5=1.2`;
        ``check_1p7_gt_1p2_sqrt2``: :math:`1.7>1.2\sqrt2`;
        ``check_h_derivative``: :math:`h'(x)-(1-1/(2x^2))`;
        ``check_h_increasing``: :math:`h'(x)>0` for :math:`x>1/\sqrt2` (:math:`x^2=1/2+s`);
        ``check_paper_factor_dominates``: :math:`\sqrt{2L}(1+1/(2L))\ge h(\sqrt{2L})`
        (the paper's factor is the larger one).
    """
    x, s, L = sp.symbols("x s L", positive=True)
    h = x * (1 + 1 / (2 * x**2))
    hprime = sp.diff(h, x)
    h_incr = sp.simplify(hprime.subs(x, sp.sqrt(sp.Rational(1, 2) + s)))
    r = sp.sqrt(2 * L)
    dominate = sp.simplify(r * (1 + 1 / (2 * L)) - h.subs(x, r))
    return {
        "h": h,
        "h_prime": hprime,
        "check_two_ln20_gt_5": sp.Gt(2 * sp.log(20), 5),
        "check_1p2_bound": 1 + sp.Rational(1, 5) - sp.Rational(6, 5),
        "check_1p7_gt_1p2_sqrt2": sp.Gt(sp.Rational(17, 10), sp.Rational(6, 5) * sp.sqrt(2)),
        "check_h_derivative": hprime - (1 - 1 / (2 * x**2)),
        "check_h_increasing": sp.sympify(bool(h_incr.is_positive)),
        "paper_minus_h": dominate,
        "check_paper_factor_dominates": sp.sympify(bool(dominate.is_positive)),
    }


def lemma_a_3() -> dict:
    r"""Lemma A.3 (paper's lem:gamma_delta_Bound): the chi-square quantile bound.

    With :math:`a=2(n-p)+p`, :math:`L=\ln(1/\delta)`:

    Returns
    -------
    dict
        ``check_amgm``: :math:`a+L-2\sqrt{aL}-(\sqrt a-\sqrt L)^2` (so :math:`2\sqrt{aL}\le a+L`);
        ``check_tail_at_x_eq_L``: :math:`e^{-L}-\delta` with :math:`L=\ln(1/\delta)`;
        ``check_final_sum``: :math:`a+(a+L)+2L-(2(2n-p)+3L)` (the paper's chain,
        which puts :math:`k+\nu^2` where Birge's bound has :math:`k+2\nu^2` under the root);
        ``check_general_bound``: with the exact factor, for noncentrality ``c``
        (Birge's :math:`\nu^2`) and :math:`k=2(n-p)`:
        :math:`(k+c)+(k+2c+L)+2L-(4(n-p)+3c+3L)`, i.e.
        :math:`\gamma_{\delta;2(n-p),c}\le 4(n-p)+3c+3L` for every :math:`c\ge0`;
        ``check_paper_form_for_sqrtp``: at :math:`c=\sqrt p` that bound is below the
        paper's :math:`2(2n-p)+3L` by :math:`2p-3\sqrt p` (>= 0 once p >= 9/4);
        ``birge_threshold``: :math:`a+2\sqrt{aL}+2L` (paper's form),
        ``birge_threshold_exact``: :math:`(k+c)+2\sqrt{(k+2c)L}+2L`.
    """
    n, p, L, delta, alpha, lam = sp.symbols("n p L delta alpha lambda", positive=True)
    a = 2 * (n - p) + p
    k = 2 * (n - p)
    c = sp.Symbol("c", nonnegative=True)
    amgm = (alpha**2 + lam**2 - 2 * alpha * lam) - (alpha - lam) ** 2  # a = alpha^2, L = lambda^2
    return {
        "birge_threshold": a + 2 * sp.sqrt(a * L) + 2 * L,
        "check_amgm": sp.expand(amgm),
        "check_amgm_sqrt_form": sp.simplify(
            (alpha**2 + lam**2 - 2 * sp.sqrt(alpha**2 * lam**2)) - (alpha - lam) ** 2),
        "check_tail_at_x_eq_L": sp.exp(-sp.log(1 / delta)) - delta,
        "check_final_sum": sp.expand(a + (a + L) + 2 * L - (2 * (2 * n - p) + 3 * L)),
        "birge_threshold_exact": (k + c) + 2 * sp.sqrt((k + 2 * c) * L) + 2 * L,
        "check_general_bound": sp.expand((k + c) + (k + 2 * c + L) + 2 * L - (4 * (n - p) + 3 * c + 3 * L)),
        "check_paper_form_for_sqrtp": sp.expand((2 * (2 * n - p) + 3 * L)
                                                - (4 * (n - p) + 3 * sp.sqrt(p) + 3 * L)
                                                - (2 * p - 3 * sp.sqrt(p))),
    }


def corollary_3_5() -> dict:
    r"""Algebra of Corollary 3.5 (explicit Setting B bound), eq. (sigma2ep.ge).

    With :math:`L=\ln(1/\delta)`, :math:`n=p+m` (m > 0), :math:`p=r^2` (r >= 1):

    Returns
    -------
    dict
        ``check_square_of_bound``: :math:`\sigma^2\varepsilon` at the bound (sigma.bound.new1)
        equals :math:`9\sqrt p[(2n-p)+L]/(2(n-p))`;
        ``check_split``: :math:`9\sqrt p[(2n-p)+L]/(2(n-p))` equals
        :math:`\{3\sqrt p[2(2n-p)+3L]+3\sqrt p(2n-p)\}/(2(n-p))`;
        ``check_3sqrtp_ge_2sqrtp_plus_1``: :math:`3\sqrt p-(2\sqrt p+1)=\sqrt p-1\ge0`;
        ``check_ratio_ge_one``: :math:`(2n-p)/(n-p)-1=n/(n-p)>0`;
        ``check_noncentrality``: :math:`p/\sigma^2\le\sqrt p` once :math:`\sigma^2\ge\sqrt p/\varepsilon`
        and :math:`\varepsilon\le 1` (written as an identity plus a sign);
        ``check_repair_identity`` / ``check_repair_positive``: the corollary also
        follows from the *corrected* quantile bound :math:`\gamma\le4(n-p)+3\sqrt p+3L`
        (noncentrality :math:`\sqrt p`): with :math:`m=n-p`, :math:`p=r^2`,
        :math:`9r(2m+r^2+L)-[(2r+1)(4m+3r+3L)+2rm]=m(8r-4)+3r(3r+1)(r-1)+3L(r-1)`,
        positive for r >= 1, m > 0;
        plus the checks of :func:`lemma_a_3` under the prefix ``check_a3_``.
    """
    p, n, m, L, eps, r, s = sp.symbols("p n m L epsilon r s", positive=True)
    sig = sp.sqrt((2 * n - p + L) / (2 * (n - p))) * 3 * p ** sp.Rational(1, 4) / sp.sqrt(eps)
    lhs = 9 * sp.sqrt(p) * ((2 * n - p) + L) / (2 * (n - p))
    rhs = (3 * sp.sqrt(p) * (2 * (2 * n - p) + 3 * L) + 3 * sp.sqrt(p) * (2 * n - p)) / (2 * (n - p))
    gap = (3 * r - (2 * r + 1)).subs(r, 1 + s)
    ratio = ((2 * n - p) / (n - p) - 1).subs(n, p + m)
    # p/sigma^2 = sqrt(p) * (sqrt(p)/sigma^2) and sqrt(p)/sigma^2 <= eps <= 1
    sigma2 = sp.Symbol("sigma2", positive=True)
    nc_identity = p / sigma2 - sp.sqrt(p) * (sp.sqrt(p) / sigma2)
    mm = sp.Symbol("m", positive=True)
    lhs_r = 9 * r * (2 * mm + r**2 + L)
    rhs_r = (2 * r + 1) * (4 * mm + 3 * r + 3 * L) + 2 * r * mm
    repair = sp.expand(lhs_r - rhs_r)
    repair_s = sp.expand(repair.subs(r, 1 + s))
    out = {
        "sigma_bound": sig,
        "repair_gap": sp.factor(repair),
        "check_repair_identity": sp.expand(repair - (mm * (8 * r - 4) + 3 * r * (3 * r + 1) * (r - 1) + 3 * L * (r - 1))),
        "check_repair_positive": sp.sympify(bool(repair_s.is_positive)),
        "check_square_of_bound": sp.simplify(sig**2 * eps - lhs),
        "check_split": sp.simplify(lhs - rhs),
        "check_3sqrtp_ge_2sqrtp_plus_1": sp.sympify(bool(sp.simplify(gap).is_nonnegative)),
        "sqrtp_minus_1": sp.simplify(3 * sp.sqrt(p) - (2 * sp.sqrt(p) + 1)),
        "check_ratio_ge_one": sp.sympify(bool(sp.simplify(ratio).is_positive)),
        "check_ratio_value": sp.simplify(ratio - (p + m) / m),
        "check_noncentrality": nc_identity,
    }
    for k, v in checks_of(lemma_a_3()).items():
        out["check_a3_" + k[len(CHECK_PREFIX):]] = v
    return out


# ---------------------------------------------------------------------------
# Section 5: Lemmas 5.4, 5.5, 5.6
# ---------------------------------------------------------------------------
def lemma_5_4(concrete_q=range(2, 9)) -> dict:
    r"""Lemma 5.4 (paper's lem:int_unif): a coordinate of a uniform point on a sphere.

    The first coordinate ``u`` of a uniform point on the unit sphere of a
    q-dimensional space has density :math:`(1-u^2)^{(q-3)/2}/\bar c_q`.

    Returns
    -------
    dict
        ``check_slice_area``: the slice of the sphere at height ``u`` is a
        (q-2)-sphere of radius :math:`\sqrt{1-u^2}`, and arc length along the
        meridian is :math:`du/\sqrt{1-u^2}`, so the density is proportional to
        :math:`(1-u^2)^{(q-2)/2}/\sqrt{1-u^2}=(1-u^2)^{(q-3)/2}`;
        ``check_substitution``: with :math:`u=\sqrt s` and symmetry,
        :math:`2(1-u^2)^{(q-3)/2}\,du/ds=s^{-1/2}(1-s)^{(q-3)/2}`;
        ``check_normalisation``: the Beta integral :math:`\int_0^1 s^{-1/2}(1-s)^{a-1}ds`,
        done by sympy for symbolic :math:`a=(q-1)/2>0` (q > 1), divided by
        :math:`\bar c_q`, minus 1;
        ``check_normalisation_q<k>``: the same integral done directly in ``u`` for
        concrete q;
        ``check_reduction_exponent``: the lemma's integrand with :math:`g=\exp(t\cdot)`
        is the integrand of :math:`G_{q-1}` (exponent :math:`(q-1-2)/2=(q-3)/2`),
        so the sphere integral equals :math:`G_{q-1}(t)/\bar c_q`, not :math:`G_q(t)`;
        ``check_archimedes``: for q = 3 (sphere in 3-space) the integral is
        :math:`\sinh(t)/t`, which is :math:`G_2(t)/\bar c_3`;
        ``paper_G3_over_correct_q3``: :math:`G_3(1)/(G_2(1))` evaluated, not 1 (the
        paper's index would give a different function);
        ``c_bar``: the closed form; ``beta_integral``: the integral sympy found.
    """
    u, t = sp.symbols("u t", real=True)
    q = sp.Symbol("q", positive=True)
    a, s = sp.symbols("a s", positive=True)

    density = (1 - u**2) ** ((q - 3) / 2)
    slice_area = sp.sqrt(1 - u**2) ** (q - 2) / sp.sqrt(1 - u**2)

    # substitution u = sqrt(s): du = ds / (2 sqrt(s)); factor 2 from symmetry
    subst = 2 * density.subs(u, sp.sqrt(s)) * sp.diff(sp.sqrt(s), s) - s ** sp.Rational(-1, 2) * (1 - s) ** ((q - 3) / 2)

    beta_int = sp.hyperexpand(sp.integrate(s ** sp.Rational(-1, 2) * (1 - s) ** (a - 1), (s, 0, 1)))
    beta_int_q = beta_int.subs(a, (q - 1) / 2)
    cbar = c_bar_closed_form(q)

    out = {
        "density": density / sp.Symbol(r"\bar{c}_q"),
        "c_bar": cbar,
        "beta_integral": beta_int_q,
        "check_slice_area": sp.powsimp(slice_area - density, force=True),
        "check_substitution": subst,
        "check_normalisation": sp.gammasimp(beta_int_q / cbar - 1),
    }
    for qq in concrete_q:
        val = sp.integrate((1 - u**2) ** sp.Rational(qq - 3, 2), (u, -1, 1))
        out[f"check_normalisation_q{qq}"] = sp.simplify(val - c_bar_closed_form(qq))

    lemma_integrand = sp.exp(t * u) * density
    out["sphere_integrand"] = lemma_integrand / sp.Symbol(r"\bar{c}_q")
    out["check_reduction_exponent"] = sp.simplify(G_integrand(q - 1, t, u) - lemma_integrand)
    out["paper_minus_correct_integrand"] = sp.simplify(G_integrand(q, t, u) - lemma_integrand)

    tp = sp.Symbol("t", positive=True)
    arch = sp.integrate(sp.exp(tp * u) * (1 - u**2) ** 0, (u, -1, 1)) / c_bar_closed_form(3)
    out["check_archimedes"] = sp.simplify(arch - sp.sinh(tp) / tp)
    G2_at_1 = sp.integrate(G_integrand(2, 1, u), (u, -1, 1))
    G3_at_1 = sp.Integral(G_integrand(3, 1, u), (u, -1, 1))
    out["paper_G3_over_correct_q3"] = sp.N(G3_at_1 / G2_at_1, 15)
    out["check_paper_index_differs"] = sp.Ne(sp.N(G3_at_1 / G2_at_1, 15), 1)
    return out


def lemma_5_5() -> dict:
    r"""Lemma 5.5 (paper's lem:GRatio): derivative and ratio bound of :math:`G_q`.

    Returns
    -------
    dict
        ``check_diff_under_integral``: :math:`\partial_t` of the integrand of
        :math:`G_q` is :math:`u` times it;
        ``check_odd_part``: folding :math:`[-1,1]` onto :math:`[0,1]`:
        :math:`f(u)+f(-u)=(e^{tu}-e^{-tu})u(1-u^2)^{(q-2)/2}` for the integrand of :math:`G_q'`;
        ``check_d_du``: :math:`\frac{d}{du}(1-u^2)^{q/2}+qu(1-u^2)^{(q-2)/2}`;
        ``check_integration_by_parts``: pointwise, :math:`ue^{tu}(1-u^2)^{(q-2)/2}=
        \frac{d}{du}[-e^{tu}(1-u^2)^{q/2}/q]+\frac tq e^{tu}(1-u^2)^{q/2}`;
        ``check_boundary_plus``/``minus``: :math:`(1-u^2)^{q/2}` vanishes at :math:`u=\pm1`
        for q > 0;
        ``check_weight_ratio``: :math:`(1-u^2)^{q/2}/(1-u^2)^{(q-2)/2}=1-u^2\in[0,1]`;
        ``check_log_integral``: :math:`\int_{t_1}^{t_2}t/q\,dt-(t_2^2-t_1^2)/(2q)`;
        ``check_q2_closed_form``: for q = 2, :math:`G_2=2\sinh t/t` and
        :math:`G_2'=(t/2)\int e^{tu}(1-u^2)du`;
        ``check_second_moment``: under the weight :math:`(1-u^2)^{(q-2)/2}`,
        :math:`E[u^2]=1/(q+1)` (Beta integrals, symbolic q), so
        :math:`\log G_q(t)-\log G_q(0)=t^2/(2(q+1))+O(t^4)`: near t = 0 the
        ratio bound holds with :math:`2(q+1)` in place of :math:`2q`;
        ``check_bessel_form``: :math:`G_q'/G_q=r_\nu(t)=I_{\nu+1}(t)/I_\nu(t)`,
        :math:`\nu=(q-1)/2`, from the closed form
        :math:`G_q\propto t^{-\nu}I_\nu(t)` (derivative of its log minus :math:`r_\nu`);
        ``check_riccati``: :math:`r_\nu'=1-r_\nu^2-(2\nu+1)r_\nu/t`;
        ``check_touching``: at a point where :math:`r_\nu=f:=t/(2\nu+2)`, the
        Riccati right side minus :math:`f'` equals :math:`-t^2/(2\nu+2)^2<0`, so
        :math:`r_\nu` can never cross :math:`f` from below; with
        :math:`r_\nu<f` near 0 this gives the sharp bound
        :math:`G_q'/G_q<t/(q+1)` for all t > 0 (Lemma 5.5 with q+1).
    """
    u, t, t1, t2 = sp.symbols("u t t_1 t_2", real=True)
    q = sp.Symbol("q", positive=True)
    ig = G_integrand(q, t, u)
    w = (1 - u**2) ** (q / 2)
    ibp = u * ig - (sp.diff(-sp.exp(t * u) * w / q, u) + t / q * sp.exp(t * u) * w)
    fold = (u * ig + (u * ig).subs(u, -u)) - (sp.exp(t * u) - sp.exp(-t * u)) * u * (1 - u**2) ** ((q - 2) / 2)

    tp = sp.Symbol("t", positive=True)
    G2 = sp.integrate(G_integrand(2, tp, u), (u, -1, 1))
    G2p_ibp = tp / 2 * sp.integrate(sp.exp(tp * u) * (1 - u**2), (u, -1, 1))

    a, s = sp.symbols("a s", positive=True)
    # E[u^2] with weight (1-u^2)^{a-1}, a = q/2: substitute u^2 = s as in Lemma 5.4
    num = sp.hyperexpand(sp.integrate(s ** sp.Rational(1, 2) * (1 - s) ** (a - 1), (s, 0, 1)))
    den = sp.hyperexpand(sp.integrate(s ** sp.Rational(-1, 2) * (1 - s) ** (a - 1), (s, 0, 1)))
    second_moment = sp.simplify(sp.expand_func(sp.gammasimp((num / den).subs(a, q / 2))))

    return {
        **lemma_5_5_sharp(),
        "G_prime_integrand": sp.diff(ig, t),
        "G_prime_ibp": t / q * sp.Integral(sp.exp(t * u) * w, (u, -1, 1)),
        "log_ratio_bound": (t2**2 - t1**2) / (2 * q),
        "second_moment": second_moment,
        "check_diff_under_integral": sp.diff(ig, t) - u * ig,
        "check_odd_part": sp.simplify(fold),
        "check_d_du": sp.diff(w, u) + q * u * (1 - u**2) ** ((q - 2) / 2),
        "check_integration_by_parts": ibp,
        "check_boundary_plus": w.subs(u, 1),
        "check_boundary_minus": w.subs(u, -1),
        "check_weight_ratio": sp.powsimp(w / (1 - u**2) ** ((q - 2) / 2), force=True) - (1 - u**2),
        "check_log_integral": sp.integrate(t / q, (t, t1, t2)) - (t2**2 - t1**2) / (2 * q),
        "check_q2_G": sp.simplify(G2 - 2 * sp.sinh(tp) / tp),
        "check_q2_closed_form": sp.simplify(sp.diff(G2, tp) - G2p_ibp),
        "check_second_moment": sp.simplify(second_moment - 1 / (q + 1)),
    }


def lemma_5_5_sharp() -> dict:
    r"""The sharp form of Lemma 5.5: :math:`G_q'(t)/G_q(t) < t/(q+1)` for t > 0.

    Returns
    -------
    dict
        ``bessel_ratio``: :math:`r_\nu=I_{\nu+1}(t)/I_\nu(t)`, :math:`\nu=(q-1)/2`;
        ``sharp_log_ratio_bound``: :math:`(t_2^2-t_1^2)/(2(q+1))`;
        ``check_bessel_form``, ``check_riccati``, ``check_touching``: as described
        in :func:`lemma_5_5`.
    """
    t1, t2 = sp.symbols("t_1 t_2", real=True)
    q = sp.Symbol("q", positive=True)
    nu = sp.Symbol("nu", positive=True)
    tt = sp.Symbol("t", positive=True)
    r = sp.besseli(nu + 1, tt) / sp.besseli(nu, tt)
    log_closed = sp.log(tt ** (-nu) * sp.besseli(nu, tt))
    bessel_form = sp.diff(log_closed, tt) - r
    riccati = sp.diff(r, tt) - (1 - r**2 - (2 * nu + 1) * r / tt)
    f = tt / (2 * nu + 2)
    touching = (1 - f**2 - (2 * nu + 1) * f / tt) - sp.diff(f, tt) + tt**2 / (2 * nu + 2) ** 2

    def _bessel_zero(expr):
        # eliminate I_{nu-1} and I_{nu+2} with the recurrence I_{mu-1} - I_{mu+1} = (2 mu / t) I_mu
        # (DLMF 10.29.1), then cancel the rational function in I_nu, I_{nu+1}
        i_m1, i_0, i_1, i_2 = (sp.besseli(nu + k, tt) for k in (-1, 0, 1, 2))
        expr = expr.subs({i_m1: i_1 + 2 * nu / tt * i_0})
        expr = expr.subs({i_2: i_0 - 2 * (nu + 1) / tt * i_1})
        return sp.cancel(sp.together(expr))

    return {
        "bessel_ratio": r,
        "sharp_log_ratio_bound": (t2**2 - t1**2) / (2 * (q + 1)),
        "check_bessel_form": _bessel_zero(bessel_form),
        "check_riccati": _bessel_zero(riccati),
        "check_touching": sp.simplify(touching),
    }


def lemma_5_6(ps=(2, 3)) -> dict:
    r"""Lemma 5.6 (paper's lem:W.probHigh): the bound on :math:`\lambda_{max}` of M.

    :math:`M=X_1'^TX_1'-X_1^TX_1` with :math:`X_1'=X_1+\Delta_1` (row p-vectors).

    Returns
    -------
    dict
        For each p in *ps*, with explicit symbolic vectors:
        ``check_trace_form_p<p>``: :math:`\|M\|_F^2-[(X_1'X_1'^T)^2-2(X_1'X_1^T)^2+(X_1X_1^T)^2]`;
        ``check_expansion_p<p>``: :math:`\|M\|_F^2-[2\|X_1\|^2\|\Delta\|^2+2(X_1\Delta^T)^2
        +4(X_1\Delta^T)\|\Delta\|^2+\|\Delta\|^4]`;
        ``check_lagrange_p<p>``: Cauchy-Schwarz via Lagrange's identity
        :math:`\|X_1\|^2\|\Delta\|^2-(X_1\Delta^T)^2=\sum_{i<j}(x_id_j-x_jd_i)^2`;
        ``check_charpoly_p<p>``: the characteristic polynomial of M is
        :math:`\lambda^{p-2}(\lambda^2-\tau\lambda+\det_2)` with :math:`\tau=\|X_1'\|^2-\|X_1\|^2`,
        :math:`\det_2=(X_1'X_1^T)^2-\|X_1'\|^2\|X_1\|^2` (rank two, one eigenvalue of each sign);
        ``check_eig_squares_p<p>``: :math:`\lambda_1^2+\lambda_2^2=\|M\|_F^2`;
        and, with scalars :math:`x=\|X_1\|\ge0`, :math:`d=\|\Delta\|`:
        ``check_final_gap``: :math:`(2x+1)^2-(4x^2d^2+4xd^3+d^4)=4x^2(1-d^2)+4x(1-d^3)+(1-d^4)`,
        each term >= 0 when :math:`d\le1`;
        ``check_square``: :math:`4x^2+4x+1-(2x+1)^2`;
        ``lambda_max_exact``: :math:`\tfrac12(|\tau|+\sqrt{(\|X_1'\|^2+\|X_1\|^2)^2-4(X_1'X_1^T)^2})`;
        ``frobenius_expansion``: the right side of ``check_expansion`` for display.
    """
    out = {}
    lam = sp.Symbol("lambda")
    for p in ps:
        X1 = _sym_row("x", p)
        D = _sym_row("d", p)
        Xp = X1 + D
        M = Xp.T * Xp - X1.T * X1
        fro2 = sp.expand(_fro2(M))
        dot = lambda a, b: (a * b.T)[0]  # noqa: E731
        nx2, nd2, xd = dot(X1, X1), dot(D, D), dot(X1, D)
        trace_form = dot(Xp, Xp) ** 2 - 2 * dot(Xp, X1) ** 2 + dot(X1, X1) ** 2
        expansion = 2 * nx2 * nd2 + 2 * xd**2 + 4 * xd * nd2 + nd2**2
        lagrange = nx2 * nd2 - xd**2 - sum((X1[i] * D[j] - X1[j] * D[i]) ** 2
                                          for i in range(p) for j in range(i + 1, p))
        tau = dot(Xp, Xp) - nx2
        det2 = dot(Xp, X1) ** 2 - dot(Xp, Xp) * nx2
        charpoly = M.charpoly(lam).as_expr()
        out[f"check_trace_form_p{p}"] = sp.expand(fro2 - trace_form)
        out[f"check_expansion_p{p}"] = sp.expand(fro2 - expansion)
        out[f"check_lagrange_p{p}"] = sp.expand(lagrange)
        out[f"check_charpoly_p{p}"] = sp.expand(charpoly - lam ** (p - 2) * (lam**2 - tau * lam + det2))
        out[f"check_eig_squares_p{p}"] = sp.expand(tau**2 - 2 * det2 - fro2)
    x, dd = sp.symbols("x d", nonnegative=True)
    bound = 4 * x**2 * dd**2 + 4 * x * dd**3 + dd**4
    out["check_final_gap"] = sp.expand((2 * x + 1) ** 2 - bound
                                       - (4 * x**2 * (1 - dd**2) + 4 * x * (1 - dd**3) + (1 - dd**4)))
    out["check_square"] = sp.expand(4 * x**2 + 4 * x + 1 - (2 * x + 1) ** 2)
    na2, nb2, ab = sp.symbols(r"\|X_1'\|^2 \|X_1\|^2 X_1'X_1^T", real=True)
    out["lambda_max_exact"] = (sp.Abs(na2 - nb2) + sp.sqrt((na2 + nb2) ** 2 - 4 * ab**2)) / 2
    nx, nd, xd = sp.symbols(r"\|X_1\| \|\Delta_1\| X_1\Delta_1^T", real=True)
    out["frobenius_expansion"] = 2 * nx**2 * nd**2 + 2 * xd**2 + 4 * xd * nd**2 + nd**4
    return out


# ---------------------------------------------------------------------------
# Appendix
# ---------------------------------------------------------------------------
def lemma_a_1() -> dict:
    r"""Lemma A.1 (paper's lem:GaussianQuantile): the Gaussian tail bounds and f.

    Returns
    -------
    dict
        ``check_ibp_first``: :math:`\varphi(z)=\frac{d}{dz}[-\varphi(z)/z]-\varphi(z)/z^2`
        (first integration by parts: :math:`P[Z>t]=\varphi(t)/t-\int_t^\infty\varphi/z^2`);
        ``check_ibp_second``: :math:`\varphi(z)=\frac{d}{dz}[\varphi(z)(1/z^3-1/z)]+3\varphi(z)/z^4`
        (second one: :math:`P[Z>t]=\varphi(t)(1/t-1/t^3)+3\int_t^\infty\varphi/z^4`);
        ``check_f_prime``: :math:`f'(x)-(-x+1/x-2/(x(x^2-1)))`;
        ``check_f_prime_factored``: :math:`f'(x)+((x^2-1)^2+2)/(x(x^2-1))`, so
        :math:`f'<0` for x > 1 (that part of the paper's proof is right);
        ``check_f_1645_positive``: :math:`f(1.645)>0`, contradicting the paper's
        :math:`f(1.645)<0`;
        ``check_gordon_derivative``: with :math:`g(x)=\bar\Phi(x)-x\varphi(x)/(1+x^2)`,
        :math:`g'(x)=-2\varphi(x)/(1+x^2)^2<0`; since :math:`g(\infty)=0`, Gordon's
        inequality :math:`\bar\Phi(x)>x\varphi(x)/(1+x^2)` follows, i.e. the inverse
        Mills ratio is below :math:`x+1/x`;
        ``check_h_slope``: :math:`h(x)=x^2-\ln(1/\bar\Phi(x))` has
        :math:`h'(x)=2x-\varphi/\bar\Phi>2x-(x+1/x)=x-1/x>0` for x > 1, so the
        corrected threshold :math:`\delta^*` is the unique root (identity
        :math:`2x-(x+1/x)-(x-1/x)=0`);
        ``f``, ``f_prime``, ``f_at_1645`` (exact), ``f_at_1645_value`` (30 digits).
    """
    x = sp.Symbol("x", positive=True)
    z = sp.Symbol("z", positive=True)
    phi = sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi)
    f = -x**2 / 2 + sp.log(sp.sqrt(2 * sp.pi)) + sp.log(x) + sp.log(x**2 / (x**2 - 1))
    fp = sp.diff(f, x)
    f1645 = f.subs(x, sp.Rational(1645, 1000))
    return {
        "phi": phi,
        "f": f,
        "f_prime": sp.simplify(fp),
        "f_at_1645": f1645,
        "f_at_1645_value": sp.N(f1645, 30),
        "check_ibp_first": sp.simplify(sp.diff(-phi / z, z) - phi / z**2 - phi),
        "check_ibp_second": sp.simplify(sp.diff(phi * (1 / z**3 - 1 / z), z) + 3 * phi / z**4 - phi),
        "check_f_prime": sp.simplify(fp - (-x + 1 / x - 2 / (x * (x**2 - 1)))),
        "check_f_prime_factored": sp.simplify(fp + ((x**2 - 1) ** 2 + 2) / (x * (x**2 - 1))),
        "check_f_1645_positive": sp.Gt(sp.N(f1645, 30), 0),
        "check_gordon_derivative": sp.simplify(
            -phi - sp.diff(z * phi / (1 + z**2), z) + 2 * phi / (1 + z**2) ** 2),
        "check_h_slope": sp.simplify(2 * x - (x + 1 / x) - (x - 1 / x)),
        "gordon_lower_bound": z * phi / (1 + z**2),
    }


def lemma_a_4(n: int = 3, p: int = 2) -> dict:
    r"""Lemma A.4 (paper's lem:DenC): the density under Setting C equals Setting B's.

    Uses an exactly orthogonal ``n x n`` matrix from the Cayley transform
    :math:`A=(I-K)(I+K)^{-1}` of a symbolic skew-symmetric ``K``.

    Returns
    -------
    dict
        ``check_orthogonal``: :math:`A^TA-I` (every entry);
        ``check_expansion``: :math:`\|Y-AX\|^2-(\|Y\|^2+\|X\|^2-2\,tr(A^TYX^T))`;
        ``check_B_equals_C``: :math:`\|A^TY-X\|^2-\|Y-AX\|^2` (Setting B's exponent
        equals Setting C's).
    """
    ks = sp.symbols(f"k1:{n * (n - 1) // 2 + 1}", real=True)
    K = sp.zeros(n, n)
    idx = 0
    for i in range(n):
        for j in range(i + 1, n):
            K[i, j], K[j, i] = ks[idx], -ks[idx]
            idx += 1
    eye = sp.eye(n)
    A = (eye - K) * (eye + K).inv()
    A = A.applyfunc(sp.cancel)
    Y = _sym_matrix("y", n, p)
    X = _sym_matrix("x", n, p)
    orth = (A.T * A - eye).applyfunc(sp.cancel)
    expansion = sp.cancel(_fro2(Y - A * X) - (_fro2(Y) + _fro2(X) - 2 * (A.T * Y * X.T).trace()))
    b_eq_c = sp.cancel(_fro2(A.T * Y - X) - _fro2(Y - A * X))
    return {
        "A": A,
        "check_orthogonal": sum(e**2 for e in orth),
        "check_expansion": expansion,
        "check_B_equals_C": b_eq_c,
    }
