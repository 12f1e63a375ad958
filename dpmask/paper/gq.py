r"""The function :math:`G_q` of Lemmas 5.4 and 5.5, computed accurately in log space.

The proof of Theorem 3.4 reduces the density ratio of the masked release to a
ratio of

.. math::

    G_q(t) = \int_{-1}^{1} e^{tu} (1-u^2)^{(q-2)/2}\, du
           = \sqrt{\pi}\,\Gamma(q/2)\,(2/t)^{\nu} I_{\nu}(t),
    \qquad \nu = \frac{q-1}{2},

where :math:`I_\nu` is the modified Bessel function of the first kind.  The
paper needs :math:`q` and :math:`t` up to the number of rows of a data set, so
this module evaluates :math:`\log G_q(t)` and :math:`G_q'(t)/G_q(t)` without
under- or overflow.

Domain and accuracy (the rule of the package): every public function accepts
:math:`1 \le q \le 10^{12}` (``Q_MAX``) and :math:`0 \le t \le 10^{300}`
(``T_MAX``) and returns a finite value there (``G`` and ``ratio_bound``
may return ``inf`` where the true value exceeds the float range, as they
say), within 1e-12 relative error (absolute where :math:`|\log G_q| < 1`) of
40-digit mpmath values; the largest error measured on the test grids is about
1.5e-14 for ``log_G`` and 4e-16 for ``dlog_G``.  Outside the domain, or for
NaN, infinite, complex or non-numeric input, a ``ValueError`` (``TypeError``
for complex) names the argument and the range.  For small orders and
:math:`t \ge 10^5` :func:`log_G` uses Hankel's large-argument expansion,
:math:`\log G_q(t) = \log(\sqrt\pi\,\Gamma(q/2)) + \nu\log(2/t) + t
- \tfrac12\log(2\pi t) + \log(1 - (4\nu^2-1)/(8t) + \dots)`.

Public functions behave like ufuncs: arguments broadcast, a scalar call returns
a Python float.

References
----------
A. A. Ding, S. S. Wu, G. Miao and S. Chen, "Reducing Noise Level in
Differential Privacy through Matrix Masking", Lemmas 5.4 and 5.5.

NIST Digital Library of Mathematical Functions, sections 10.25, 10.33, 10.41
and 5.11 (bib key ``dlmf``).

D. E. Amos, "Computation of modified Bessel functions and their ratios",
Math. Comp. 28 (1974) 239-251 (bib key ``amos1974computation``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from scipy import special

from .._validate import as_float_array, as_rng, broadcast_named, check_int, scalar_or_array

try:  # Perron continued fraction for I_v/I_{v-1}; private, so keep a fallback.
    from scipy.special._ufuncs import _iv_ratio as _scipy_iv_ratio
except ImportError:  # pragma: no cover - depends on the scipy version
    _scipy_iv_ratio = None

__all__ = [
    "G",
    "log_G",
    "dlog_G",
    "c_bar",
    "log_c_bar",
    "ratio_bound",
    "log_ratio_bound",
    "sphere_coordinate_pdf",
    "sample_sphere_coordinate",
]

#: Smallest q accepted by G, log_G, dlog_G and the ratio bounds.  The paper
#: states Lemma 5.5 for q = n - p >= 2; the corrected proof of Theorem 3.4
#: needs G_{n-p-1}, which is G_1 when n = p + 2, and the closed form, the
#: integration by parts and the numerics below all hold for q >= 1.
Q_MIN = 1.0

#: Largest q accepted (and tested against mpmath): beyond it the Stirling and Debye
#: expansions still hold, but q itself is a count of rows and 1e12 is far beyond any use.
Q_MAX = 1.0e12
#: Largest t accepted: log G_q(t) <= t + log 2 stays finite up to here.
T_MAX = 1.0e300
#: Most draws sample_sphere_coordinate makes in one call (800 MB of float64).
SAMPLE_MAX = 10**8
#: Below the Debye order, arguments at or above this use Hankel's expansion for large t
#: (scipy's ``ive`` returns NaN from about t = 1e10 at small orders).
_T_HANKEL = 1.0e5
#: Terms of Hankel's expansion; with nu < 20 and t >= 1e5 each term is below 2e-3 times the last.
_N_HANKEL = 10

#: Orders nu = (q-1)/2 at or above this use the Debye expansion for large t.
_NU_DEBYE = 20.0
#: Number of Debye terms U_1..U_K; |U_{K+1}(p)| / 20**(K+1) < 3e-17 on [0, 1].
_K_DEBYE = 14
#: Terms of the power series; with t^2/4 <= nu + 1 the k-th term is <= 1/k!.
_N_SERIES = 22


# ---------------------------------------------------------------------------
# Debye polynomials (DLMF 10.41.10, 10.41.11), built exactly at import time.
# ---------------------------------------------------------------------------

def _poly_mul(a, b):
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def _poly_add(a, b):
    n = max(len(a), len(b))
    a = a + [Fraction(0)] * (n - len(a))
    b = b + [Fraction(0)] * (n - len(b))
    return [x + y for x, y in zip(a, b)]


def _poly_deriv(a):
    return [i * a[i] for i in range(1, len(a))] or [Fraction(0)]


def _debye_polynomials(k_max):
    r"""Return exact coefficient lists (ascending powers of p) of U_k and E_k.

    ``U_{k+1} = p^2 (1-p^2) U_k'/2 + (1/8) \int_0^p (1-5s^2) U_k(s) ds``
    (DLMF 10.41.10).  ``E_k = p U_{k-1}/2 + p^2 U_{k-1}'`` is the factor in
    ``V_k - U_k = -(1-p^2) E_k`` (DLMF 10.41.11), which keeps the expansion of
    the ratio I_{nu+1}/I_nu free of cancellation.
    """
    u_polys = [[Fraction(1)]]
    for _ in range(k_max):
        u = u_polys[-1]
        first = [c / 2 for c in _poly_mul([0, 0, 1, 0, -1], _poly_deriv(u))]
        integrand = _poly_mul([1, 0, -5], u)
        second = [Fraction(0)] + [c / (8 * (i + 1)) for i, c in enumerate(integrand)]
        u_polys.append(_poly_add(first, second))
    e_polys = [None]
    for k in range(1, k_max + 2):
        u = u_polys[k - 1]
        e_polys.append(_poly_add([Fraction(0)] + [c / 2 for c in u],
                                 [Fraction(0), Fraction(0)] + _poly_deriv(u)))
    return u_polys, e_polys


def _even_part(coeffs, k):
    """Coefficients (ascending in y = p^2) of P with poly(p) = p^k P(p^2)."""
    coeffs = list(coeffs)
    assert all(c == 0 for i, c in enumerate(coeffs) if i < k or (i - k) % 2)
    return np.array([float(c) for c in coeffs[k::2]][::-1])  # descending for Horner


_U_EXACT, _E_EXACT = _debye_polynomials(_K_DEBYE + 1)
_U_COEFFS = [_even_part(_U_EXACT[k], k) for k in range(_K_DEBYE + 1)]
_E_COEFFS = [None] + [_even_part(_E_EXACT[k], k) for k in range(1, _K_DEBYE + 2)]

# Stirling series S(x) = log Gamma(x) - (x - 1/2) log x + x - log(2 pi)/2
# (DLMF 5.11.1): B_{2k} / (2k (2k-1) x^{2k-1}), k = 1..8.
_STIRLING = np.array([1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188,
                      -691 / 360360, 1 / 156, -3617 / 122400])
_STIRLING_MIN = 10.0
_LOG_SQRT_PI = 0.5 * np.log(np.pi)


def _horner(coeffs, y):
    out = np.full_like(y, coeffs[0])
    for c in coeffs[1:]:
        out = out * y + c
    return out


def _stirling_tail(x):
    """S(x) for x >= 10, absolute error below 1e-18."""
    inv2 = 1.0 / (x * x)
    return _horner(_STIRLING[::-1], inv2) / x


def _log_beta_half(x):
    r"""log B(1/2, x) = log Gamma(1/2) + log Gamma(x) - log Gamma(x + 1/2), x > 0.

    ``scipy.special.betaln`` subtracts two large log-gammas for large x and
    loses about log10(x log x) digits; the Stirling form below does not.
    """
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    big = x >= _STIRLING_MIN
    xs = x[~big]
    out[~big] = _LOG_SQRT_PI + special.gammaln(xs) - special.gammaln(xs + 0.5)
    xb = x[big]
    # log Gamma(x + 1/2) - log Gamma(x) = x log1p(1/(2x)) - 1/2 + log(x)/2 + S(x+1/2) - S(x)
    diff = (xb * np.log1p(0.5 / xb) - 0.5) + 0.5 * np.log(xb) \
        + (_stirling_tail(xb + 0.5) - _stirling_tail(xb))
    out[big] = _LOG_SQRT_PI - diff
    return out


def _beta_half(x):
    """B(1/2, x) = sqrt(pi) Gamma(x)/Gamma(x + 1/2); gamma quotient below x = 10 (exact at x = 1)."""
    x = np.asarray(x, dtype=float)
    small = x < _STIRLING_MIN
    xs = np.where(small, x, 1.0)
    return np.where(small, np.sqrt(np.pi) * special.gamma(xs) / special.gamma(xs + 0.5),
                    np.exp(_log_beta_half(np.where(small, _STIRLING_MIN, x))))


# ---------------------------------------------------------------------------
# The three regions.  F(nu, t) = Gamma(nu+1) (2/t)^nu I_nu(t) = 0F1(; nu+1; t^2/4),
# so that log G_q(t) = log B(1/2, q/2) + log F(nu, t) and F(nu, 0) = 1.
# ---------------------------------------------------------------------------

def _series_sum(nu, x):
    """sum_{k>=1} x^k / (k! (nu+1)_k), all terms positive (x = t^2/4 <= nu+1)."""
    term = np.ones_like(x)
    total = np.zeros_like(x)
    for k in range(1, _N_SERIES + 1):
        term = term * x / (k * (nu + k))
        total = total + term
    return total


def _log_f_series(nu, t):
    return np.log1p(_series_sum(nu, 0.25 * t * t))


def _ratio_series(nu, t):
    """I_{nu+1}(t)/I_nu(t) = t/(2(nu+1)) * 0F1(;nu+2;t^2/4) / 0F1(;nu+1;t^2/4)."""
    x = 0.25 * t * t
    return t / (2.0 * (nu + 1.0)) * (1.0 + _series_sum(nu + 1.0, x)) / (1.0 + _series_sum(nu, x))


def _debye_parts(nu, t):
    z = t / nu
    s = np.hypot(1.0, z)            # sqrt(1 + z^2)
    w = z * (z / (1.0 + s))         # s - 1 without cancellation (nor overflow of z^2)
    p = 1.0 / s
    return z, s, w, p


def _log_f_debye(nu, t):
    r"""log F from the uniform expansion of I_nu(nu z) (DLMF 10.41.3).

    Combining it with Stirling's series for Gamma(nu+1) cancels the large
    terms analytically: log F = nu (w - log1p(w/2)) + S(nu) - log1p(z^2)/4
    + log sum_k U_k(p)/nu^k with w = sqrt(1+z^2) - 1, p = 1/sqrt(1+z^2).
    """
    z, s, w, p = _debye_parts(nu, t)
    y = p * p
    x = p / nu
    acc = np.zeros_like(t)
    for k in range(_K_DEBYE, 0, -1):   # nested Horner in x = p/nu
        acc = (acc + _horner(_U_COEFFS[k], y)) * x
    with np.errstate(over="ignore"):
        log1p_z2 = np.where(z < 1e100, np.log1p(np.minimum(z, 1e100) ** 2), 2.0 * np.log(z))
    return (nu * (w - np.log1p(0.5 * w)) + _stirling_tail(nu)
            - 0.25 * log1p_z2 + np.log1p(acc))


def _ratio_debye(nu, t):
    r"""I_{nu+1}(t)/I_nu(t) = z [1/(1+s) - sum E_k/nu^k / (s sum U_k/nu^k)] (DLMF 10.41.3-4)."""
    z, s, w, p = _debye_parts(nu, t)
    y = p * p
    x = p / nu
    acc_u = np.zeros_like(t)
    for k in range(_K_DEBYE, 0, -1):
        acc_u = (acc_u + _horner(_U_COEFFS[k], y)) * x
    acc_e = np.zeros_like(t)
    for k in range(_K_DEBYE + 1, 0, -1):
        acc_e = (acc_e + _horner(_E_COEFFS[k], y)) * x
    return z * (1.0 / (1.0 + s) - acc_e / (s * (1.0 + acc_u)))


def _log_f_ive(nu, t):
    """log F via the exponentially scaled Bessel function (Amos' algorithm)."""
    return special.gammaln(nu + 1.0) + nu * np.log(2.0 / t) + np.log(special.ive(nu, t)) + t


def _log_f_hankel(nu, t):
    r"""log F for nu < 20 and t >= 1e5 from Hankel's expansion (DLMF 10.40.1).

    :math:`e^{-t} I_\nu(t) \sim (2\pi t)^{-1/2} \sum_k (-1)^k a_k(\nu) t^{-k}` with
    :math:`a_k(\nu) = \prod_{j=1}^k (4\nu^2 - (2j-1)^2) / (k!\, 8^k)`.  For these
    orders and arguments each term is below 2e-3 times the previous one, so ten
    terms leave a relative error far below rounding.
    """
    mu = 4.0 * nu * nu
    term = np.ones_like(t)
    total = np.ones_like(t)
    for k in range(1, _N_HANKEL + 1):
        term = -term * (mu - (2.0 * k - 1.0) ** 2) / (8.0 * k * t)
        total = total + term
    return (special.gammaln(nu + 1.0) + nu * (np.log(2.0) - np.log(t)) + t
            - 0.5 * (np.log(2.0 * np.pi) + np.log(t)) + np.log(total))


def _ratio_bessel(nu, t, use_private=True):
    """I_{nu+1}/I_nu for moderate order: scipy's Perron fraction, else a ratio of ive."""
    if use_private and _scipy_iv_ratio is not None:
        return _scipy_iv_ratio(nu + 1.0, t)
    return special.ive(nu + 1.0, t) / special.ive(nu, t)


def _regions(nu, t):
    series = t <= 2.0 * np.sqrt(nu + 1.0)
    debye = ~series & (nu >= _NU_DEBYE)
    bessel = ~series & ~debye
    return series, debye, bessel


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------

def _check_q(q, name="q", minimum=Q_MIN, strict=False):
    arr = as_float_array(q, name)
    bad = ~np.isfinite(arr) | ((arr <= minimum) if strict else (arr < minimum)) | (arr > Q_MAX)
    if np.any(bad):
        rel = ">" if strict else ">="
        raise ValueError(f"{name} must be finite and {rel} {minimum:g} and <= {Q_MAX:g}, got {arr[bad].flat[0]!r}")
    return arr


def _check_t(t, name="t"):
    arr = as_float_array(t, name)
    bad = ~np.isfinite(arr) | (arr < 0) | (arr > T_MAX)
    if np.any(bad):
        raise ValueError(f"{name} must be finite and >= 0 and <= {T_MAX:g}, got {arr[bad].flat[0]!r}")
    return arr


def _q_t(q, t):
    q = _check_q(q)
    t = _check_t(t)
    q, t = broadcast_named(q=q, t=t)
    return np.array(q, dtype=float), np.array(t, dtype=float)


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------

def _log_g_array(q, t):
    nu = 0.5 * (q - 1.0)
    out = _log_beta_half(0.5 * q)
    series, debye, bessel = _regions(nu, t)
    out[series] += _log_f_series(nu[series], t[series])
    out[debye] += _log_f_debye(nu[debye], t[debye])
    hankel = bessel & (t >= _T_HANKEL)
    bessel &= ~hankel
    out[bessel] += _log_f_ive(nu[bessel], t[bessel])
    out[hankel] += _log_f_hankel(nu[hankel], t[hankel])
    return out


def log_G(q, t):
    r"""Logarithm of :math:`G_q(t)` (Lemmas 5.4 and 5.5), without overflow.

    Parameters
    ----------
    q : array_like
        Dimension parameter, finite and >= 1 (the paper uses q = n - p, the
        corrected proof of Theorem 3.4 q = n - p - 1).
    t : array_like
        Argument, finite and >= 0.

    Returns
    -------
    float or ndarray
        :math:`\log G_q(t)`; tested to 1e-12 relative error (absolute where
        :math:`|\log G_q(t)| < 1`) against mpmath for :math:`1 \le q \le 10^{12}`,
        :math:`0 \le t \le 10^{300}` (the accepted domain; outside it a
        ``ValueError`` names the argument).

    Notes
    -----
    With :math:`\nu = (q-1)/2`,

    .. math::

        G_q(t) = \int_{-1}^{1} e^{tu}(1-u^2)^{(q-2)/2}\,du
               = \sqrt{\pi}\,\Gamma(q/2)\,(2/t)^{\nu} I_\nu(t)
               = B(\tfrac12, \tfrac q2)\; {}_0F_1(;\nu+1;t^2/4),

    so :math:`\log G_q(t) = \log B(1/2, q/2) + \log F` with
    :math:`F = {}_0F_1(;\nu+1;t^2/4) \ge 1`.  The log-beta term comes from
    Stirling's series for :math:`q \ge 20`, which avoids subtracting two huge
    log-gammas (DLMF 5.11.1).  :math:`\log F` is taken from one of three
    regions:

    * :math:`t^2 \le 4(\nu+1)`: the power series of :math:`{}_0F_1`
      (DLMF 10.25.2); all terms are positive and the k-th is at most
      :math:`1/k!`, so 22 terms reach machine precision.  This covers
      :math:`t = 0` exactly and tiny :math:`t` without cancellation.
    * :math:`\nu \ge 20`, larger t: the uniform (Debye) expansion of
      :math:`I_\nu(\nu z)` (DLMF 10.41.3) with the polynomials
      :math:`U_1, \dots, U_{14}` (DLMF 10.41.10, generated exactly at import),
      merged with Stirling's series for :math:`\Gamma(\nu+1)` so that the
      terms of size :math:`\nu\log\nu` cancel on paper, not in floating
      point.  The first omitted term is below 3e-17 relative.
    * :math:`\nu < 20`, larger t up to 1e5: ``scipy.special.ive`` (Amos'
      algorithm), whose relative error there is about 1e-14, plus ``gammaln``;
      beyond 1e5 (where ``ive`` returns NaN from about 1e10) Hankel's
      expansion (DLMF 10.40.1), ten terms.

    Everything is vectorised: each region is evaluated once on the points
    that fall in it (loops run over series terms, never over points).

    References
    ----------
    * :cite:t:`dlmf`, 5.11.1 (Stirling), 10.25.2 (power series),
      10.41.3 and 10.41.10 (uniform expansion and its polynomials).
    * :cite:t:`amos1974computation` (the algorithm behind ``scipy.special.ive``).

    Examples
    --------
    >>> round(log_G(2, 0.0), 12)  # G_2(0) = 2
    0.69314718056
    >>> round(log_G(1e7, 1e7), 4)  # G itself would overflow
    3774273.4603
    """
    q, t = _q_t(q, t)
    return scalar_or_array(_log_g_array(q, t))


def _log_G(q, t):
    """:func:`log_G` without its checks, for callers that have checked q and t already
    (the G_q explorer's door, ``dpmask.widgets.gq.gq_numbers``): floats or arrays in the domain."""
    q, t = np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(t, dtype=float))
    return scalar_or_array(_log_g_array(np.array(q), np.array(t)))


def G(q, t):
    r""":math:`G_q(t) = \int_{-1}^{1} e^{tu}(1-u^2)^{(q-2)/2}\,du` (Lemma 5.4).

    Parameters
    ----------
    q : array_like
        Dimension parameter, finite and >= 1.
    t : array_like
        Argument, finite and >= 0.

    Returns
    -------
    float or ndarray
        :math:`G_q(t) = \exp(\log G_q(t))`.  It is ``inf`` exactly where the
        true value exceeds the largest float (about 1.8e308, i.e.
        :math:`\log G_q(t) > 709.78`, from t of about 710 at small q, later
        for large q); it never underflows, since :math:`G_q(t) \ge G_q(0) > 0`.

    Notes
    -----
    Closed form :math:`\sqrt{\pi}\,\Gamma(q/2)(2/t)^{(q-1)/2}I_{(q-1)/2}(t)`,
    with :math:`G_q(0) = B(1/2, q/2)`.  Ratios such as
    :math:`G_q(t_2)/G_q(t_1)` should be formed as
    ``exp(log_G(q, t2) - log_G(q, t1))``: :func:`log_G` is the safe API and
    this function is only its exponential (so its relative error is
    :math:`|\log G|` times that of :func:`log_G`).

    References
    ----------
    * :cite:t:`dlmf`, 10.32.2 (the integral representation of :math:`I_\nu`).

    Examples
    --------
    >>> round(G(2, 0.0), 12)  # the length of [-1, 1]
    2.0
    >>> round(G(2, 1.0), 12)  # int e^u du over [-1, 1] = 2 sinh(1)
    2.350402387288
    >>> round(G(3, 0.0), 12)  # half the area of the unit disc
    1.570796326795
    """
    q, t = _q_t(q, t)
    with np.errstate(over="ignore"):
        return scalar_or_array(np.exp(_log_g_array(q, t)))


def _dlog_g_array(q, t, use_private=True):
    nu = 0.5 * (q - 1.0)
    out = np.empty_like(t)
    series, debye, bessel = _regions(nu, t)
    out[series] = _ratio_series(nu[series], t[series])
    out[debye] = _ratio_debye(nu[debye], t[debye])
    out[bessel] = _ratio_bessel(nu[bessel], t[bessel], use_private)
    return out


def dlog_G(q, t):
    r"""Logarithmic derivative :math:`G_q'(t)/G_q(t)` (Lemma 5.5).

    Parameters
    ----------
    q, t : array_like
        As in :func:`G` (q >= 1, t >= 0, finite).

    Returns
    -------
    float or ndarray
        :math:`G_q'(t)/G_q(t) = I_{\nu+1}(t)/I_\nu(t)`, :math:`\nu = (q-1)/2`,
        in :math:`[0, 1)` (it rounds to 1.0 where :math:`1 - G_q'/G_q \approx q/(2t)`
        is below half an ulp, t above about 1e16 q); zero at t = 0.  Lemma 5.5 says it lies in
        :math:`(0, t/q)` for t > 0.

    Notes
    -----
    Differentiating the closed form gives
    :math:`G_q'/G_q = I_\nu'(t)/I_\nu(t) - \nu/t = I_{\nu+1}(t)/I_\nu(t)`
    (DLMF 10.29.2); integrating by parts as in the paper gives the
    equivalent :math:`G_q'(t) = (t/q) G_{q+2}(t)`.  Regions as in
    :func:`log_G`:

    * :math:`t^2 \le 4(\nu+1)`: the ratio of two positive power series,
      :math:`\frac{t}{2(\nu+1)}\,{}_0F_1(;\nu+2;t^2/4)/{}_0F_1(;\nu+1;t^2/4)`.
    * :math:`\nu \ge 20`: the Debye expansions of :math:`I_\nu` and
      :math:`I_\nu'` (DLMF 10.41.3-4).  Writing
      :math:`V_k - U_k = -(1-p^2)E_k` (DLMF 10.41.11) turns
      :math:`(s\sum V_k/\nu^k)/(\sum U_k/\nu^k) - 1` into
      :math:`z^2[1/(1+s) - \sum E_k\nu^{-k}/(s\sum U_k\nu^{-k})]`, two terms
      that never cancel by more than a factor :math:`1 - 1/\nu`.
    * otherwise: the Perron continued fraction of scipy's private
      ``_iv_ratio`` when it exists (scipy >= 1.15), else
      ``ive(nu+1, t)/ive(nu, t)``; for :math:`\nu < 20` both agree with
      mpmath to about 1e-14.  The plain ratio of ``ive`` is not used for
      large orders, where the uniform expansion is both faster and exact to
      the last bits.

    References
    ----------
    * :cite:t:`dlmf`, 10.29.2, 10.41.3-4, 10.41.10-11.
    * :cite:t:`amos1974computation` (ratios of modified Bessel functions).

    Examples
    --------
    >>> round(dlog_G(2, 1.0), 12)  # I_{3/2}(1)/I_{1/2}(1) = coth(1) - 1
    0.313035285499
    """
    q, t = _q_t(q, t)
    return scalar_or_array(_dlog_g_array(q, t))


def log_c_bar(q):
    r"""Logarithm of :math:`\bar c_q` (see :func:`c_bar`), accurate for huge q.

    Parameters
    ----------
    q : array_like
        Dimension, finite and > 1.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(log_c_bar(3), 12)  # log 2
    0.69314718056
    """
    q = _check_q(q, minimum=1.0, strict=True)
    return scalar_or_array(_log_beta_half(0.5 * (q - 1.0)))


def c_bar(q):
    r"""Normalising constant :math:`\bar c_q` of Lemma 5.4.

    Parameters
    ----------
    q : array_like
        Dimension of the sphere's ambient space, finite and > 1.

    Returns
    -------
    float or ndarray
        :math:`\bar c_q = \int_{-1}^{1}(1-u^2)^{(q-3)/2}\,du
        = \Gamma(1/2)\Gamma(\tfrac{q-1}{2})/\Gamma(\tfrac q2)
        = B(\tfrac12, \tfrac{q-1}{2})`.

    Notes
    -----
    :math:`\bar c_q = G_{q-1}(0)`, which is the source of the off-by-one in the
    proof of Theorem 3.4: the inner integral over a sphere in a q-dimensional
    subspace is :math:`G_{q-1}(t)/\bar c_q`.  Below q = 21 it is a quotient of
    ``scipy.special.gamma`` values (exact at q = 3); above, the exponential of
    :func:`log_c_bar`, which uses Stirling's series to avoid overflow.

    References
    ----------
    * :cite:t:`dlmf`, 5.12.1 (the beta integral).

    Examples
    --------
    >>> round(c_bar(2), 12)  # pi: int (1-u^2)^(-1/2) du
    3.14159265359
    >>> round(c_bar(3), 12)
    2.0
    """
    q = _check_q(q, minimum=1.0, strict=True)
    return scalar_or_array(_beta_half(0.5 * (q - 1.0)))


def log_ratio_bound(q, t1, t2):
    r"""Logarithm of Lemma 5.5's bound on :math:`G_q(t_2)/G_q(t_1)`.

    Parameters
    ----------
    q : array_like
        Dimension parameter, finite and >= 1.
    t1, t2 : array_like
        Arguments, finite and >= 0.

    Returns
    -------
    float or ndarray
        :math:`|t_1^2 - t_2^2|/(2q)`, computed as
        :math:`|t_1 - t_2|(t_1 + t_2)/(2q)` to avoid cancellation.

    Notes
    -----
    Integrating :math:`0 < (\log G_q)' < t/q` from :math:`t_1` to
    :math:`t_2` gives :math:`\log G_q(t_2) - \log G_q(t_1) \le
    |t_1^2 - t_2^2|/(2q)` (equation (Gratio1) of the paper).

    Examples
    --------
    >>> log_ratio_bound(4, 1.0, 3.0)
    1.0
    """
    q = _check_q(q)
    t1 = _check_t(t1, "t1")
    t2 = _check_t(t2, "t2")
    q, t1, t2 = broadcast_named(q=q, t1=t1, t2=t2)
    return scalar_or_array(_log_ratio_bound(q, t1, t2))


def _log_ratio_bound(q, t1, t2):
    """:func:`log_ratio_bound` without its checks (arguments already checked, broadcastable)."""
    with np.errstate(over="ignore"):  # +inf only where the bound exceeds the float range
        return np.abs(t1 - t2) * (t1 + t2) / (2.0 * q)


def ratio_bound(q, t1, t2):
    r"""Lemma 5.5's bound :math:`\exp(|t_1^2 - t_2^2|/(2q)) \ge G_q(t_2)/G_q(t_1)`.

    Parameters
    ----------
    q, t1, t2 : array_like
        As in :func:`log_ratio_bound`.

    Returns
    -------
    float or ndarray
        The bound; ``inf`` where it exceeds the float range (use
        :func:`log_ratio_bound` then).

    Examples
    --------
    >>> round(ratio_bound(4, 1.0, 3.0), 12)  # e
    2.718281828459
    """
    with np.errstate(over="ignore"):
        return scalar_or_array(np.exp(np.asarray(log_ratio_bound(q, t1, t2), dtype=float)))


def sphere_coordinate_pdf(u, q):
    r"""Density of one coordinate of a uniform point on the unit sphere in :math:`R^q`.

    Parameters
    ----------
    u : array_like
        Point(s) at which to evaluate the density; any finite real.
    q : array_like
        Dimension of the ambient space (the sphere is :math:`S^{q-1}`),
        finite and > 1.

    Returns
    -------
    float or ndarray
        :math:`(1-u^2)^{(q-3)/2}/\bar c_q` for :math:`|u| < 1`, 0 otherwise
        (Lemma 5.4).  For q < 3 it is unbounded near :math:`\pm 1`; for q = 3
        it is the uniform density 1/2.

    Notes
    -----
    The kernel is computed as :math:`\exp(\frac{q-3}{2}[\log(1-u) +
    \log(1+u)])`, which keeps its digits near the poles; for q >= 21 the
    division by :math:`\bar c_q` is done in log space as well.
    Equivalently :math:`(1 + u)/2` has the Beta((q-1)/2, (q-1)/2) law.

    Examples
    --------
    >>> sphere_coordinate_pdf(0.3, 3)
    0.5
    >>> sphere_coordinate_pdf(1.5, 10)
    0.0
    """
    u = as_float_array(u, "u")
    if np.any(~np.isfinite(u)):
        raise ValueError(f"u must be finite, got {u[~np.isfinite(u)].flat[0]!r}")
    q = _check_q(q, minimum=1.0, strict=True)
    u, q = broadcast_named(u=u, q=q)
    inside = np.abs(u) < 1.0
    out = np.zeros(u.shape)
    ui, qi = u[inside], q[inside]
    log_kernel = 0.5 * (qi - 3.0) * (np.log1p(-ui) + np.log1p(ui))
    small = qi < 2.0 * _STIRLING_MIN + 1.0
    out[inside] = np.where(
        small,
        np.exp(log_kernel) / _beta_half(np.where(small, 0.5 * (qi - 1.0), 1.0)),
        np.exp(log_kernel - _log_beta_half(np.where(small, 1.0, 0.5 * (qi - 1.0)))),
    )
    return scalar_or_array(out)


def sample_sphere_coordinate(q, size=None, rng=None):
    r"""Draw the first coordinate of uniform points on the unit sphere :math:`S^{q-1}`.

    Parameters
    ----------
    q : float
        Dimension of the ambient space, finite and > 1.
    size : int or tuple of ints, optional
        Output shape, at most ``SAMPLE_MAX`` (1e8) draws; ``None`` gives
        one Python float.
    rng : numpy.random.Generator or int or None
        Generator or seed.

    Returns
    -------
    float or ndarray
        Draws with density :func:`sphere_coordinate_pdf`, via
        :math:`u = 2B - 1`, :math:`B \sim \mathrm{Beta}((q-1)/2, (q-1)/2)`.

    Examples
    --------
    >>> u = sample_sphere_coordinate(5, size=4, rng=1)
    >>> bool(((-1 < u) & (u < 1)).all())
    True
    """
    q = _check_q(q, minimum=1.0, strict=True)
    if q.ndim:
        raise ValueError(f"q must be a single number, got an array of shape {q.shape}")
    if size is not None:
        shape = (size,) if np.ndim(size) == 0 else tuple(size)
        try:
            dims = [int(check_int(d, "size", minimum=0)) for d in shape]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"size must be None, a whole number >= 0 or a tuple of them, got {size!r}") from exc
        if int(np.prod(dims, dtype=float)) > SAMPLE_MAX:
            raise ValueError(f"size must ask for at most {SAMPLE_MAX:g} draws, got {size!r}")
        size = tuple(dims) if np.ndim(size) else dims[0]
    a = 0.5 * (float(q) - 1.0)
    draws = 2.0 * as_rng(rng).beta(a, a, size=size) - 1.0
    return scalar_or_array(draws)
