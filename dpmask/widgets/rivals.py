"""The rivals explorer: masking against the Gaussian mechanism on X^T X, first-order errors (chapter 9)."""

from __future__ import annotations

import functools
import math

import numpy as np

from .._style import NEUTRAL, color, series
from ._shared import LivePlot, decade_ticks, dropdown, explorer, int_slider, key, log_range, log_slider
from ._shared import new_figure, panel, sigma0, single, whole

_ESTIMANDS = {"ols": "OLS slopes", "corr": "correlations", "angle": "leading PC angle (rad)"}
_KINDS = ("A", "B0", "Blow", "gram")
_PLAIN = {"A": "A, σ_A", "B0": "B, σ_0 (Thm 3.4)", "Blow": "B, σ_low", "gram": "Gram mechanism, τ"}
_LABELS = {
    "A": r"A, $\sigma_A$",
    "B0": r"B, $\sigma_0$ (Thm 3.4)",
    "Blow": r"B, $\sigma_{\mathrm{low}}$",
    "gram": r"Gram mechanism, $\tau$",
}


@functools.lru_cache(maxsize=16)
def _coefficients(p):
    from ..rivals import gram as rivals

    return rivals.error_coefficients(rivals.example_moments(p))


@functools.lru_cache(maxsize=256)
def _sigmas(eps, delta, p):
    """(tau, sigma_A) for one (eps, delta, p): the only root solves the explorer needs.

    For (eps, delta, p) that :func:`rivals_numbers` has checked: the analytic Gaussian's core, once
    (tau is sigma_A times the Gram matrix's sensitivity, as :func:`dpmask.rivals.sigma_gram` computes it)."""
    from ..exact.gaussian import _analytic_gaussian_sigma
    from ..rivals import gram as rivals

    s_a = float(_analytic_gaussian_sigma(eps, delta))
    return s_a * float(rivals._gram_sensitivity(p)), s_a


#: The plot's rows (the curves' grid, whole numbers) and the first step of the rows search for B0.
_GRID = np.logspace(3, 8, 16)
_GRID_N = tuple(float(v) for v in np.round(_GRID))
_ROWS_START = 10.0**6
def _sigma0(settings):
    """Theorem 3.4's sigma_0 at each (eps, delta, n, p) of *settings*, arguments the caller has checked.

    The explorers' shared solve and cache, :func:`._shared.sigma0` (uncorrected variance bound): the
    settings it has not seen are solved in one vectorised root solve, so each value is, bit for bit,
    what :func:`dpmask.paper.bounds.sigma_b` gives for that setting alone (``tests/test_doors.py``).

    Returns
    -------
    list of float
        sigma_0 for each setting, in order.
    """
    return sigma0([(e, d, n, p, False) for e, d, n, p in settings])


def _rows_b0(eps_values, delta, p, estimand, target):
    """Rows at which Setting B at sigma_0 reaches *target*, for each eps: three fixed-point steps.

    n <- (b sigma_0(n)^2 + c sigma_0(n)^4) / target^2 from n = 10^6, sigma_0 evaluated at the whole
    number nearest n within [p + 2, 10^9] (sigma_0 changes by well under 1 % beyond 10^9 rows); the
    third step changes n by far less than 0.1 % (sigma_0 is nearly flat in n).  Each step's roots,
    one per eps, are solved together (:func:`_sigma0`).
    """
    b, c = _coefficients(p)[estimand]
    ns = [_ROWS_START] * len(eps_values)
    for _ in range(3):
        sigmas = _sigma0([(e, delta, min(max(round(n), p + 2), 10**9), p) for e, n in zip(eps_values, ns)])
        ns = [(b * s**2 + c * s**4) / target**2 for s in sigmas]
    return [float(n) for n in ns]


def _rmse(kind, eps, delta, n, p, estimand):
    """First-order RMSE of *estimand* for one mechanism, vectorised over n."""
    from ..rivals import gram as rivals

    b, c = _coefficients(int(p))[estimand]
    tau, s_a = _sigmas(float(eps), float(delta), int(p))
    n = np.asarray(n, dtype=float)
    if kind == "gram":
        return tau * math.sqrt(c / 2) / n
    if kind == "A":
        s = s_a
    elif kind == "B0":
        s = np.array(_sigma0([(eps, delta, m, p) for m in np.round(n).ravel()])).reshape(n.shape)
    else:  # the large-n projection bound (tau^2 / 2n)^(1/4) of dpmask.rivals.sigma_low_large_n
        s = rivals._sigma_low_from_tau(tau, n)
    return np.sqrt((b * s**2 + c * s**4) / n)


@functools.lru_cache(maxsize=1024)
def _rows(kind, eps, delta, p, estimand, target):
    """Rows at which the first-order RMSE falls to *target* (closed form or a few iterations)."""
    from scipy.optimize import brentq

    b, c = _coefficients(p)[estimand]
    tau, s_a = _sigmas(eps, delta, p)
    if kind == "gram":
        return tau * math.sqrt(c / 2) / target
    if kind == "A":
        return (b * s_a**2 + c * s_a**4) / target**2
    if kind == "B0":
        return _rows_b0((eps,), delta, p, estimand, target)[0]
    # sigma_low = (tau^2/2n)^(1/4): RMSE^2 = c tau^2 x^4 / 2 + b tau x^3 / sqrt(2), x = n^(-1/2)
    f = lambda x: c * tau**2 * x**4 / 2 + b * tau * x**3 / math.sqrt(2) - target**2
    if f(1.0 / math.sqrt(p + 2)) <= 0 and f(1.0) <= 0:
        return float(p + 2)  # the target is met already at the fewest rows the panel allows
    x = brentq(f, 0.0, 1.0 / math.sqrt(p + 2) if f(1.0 / math.sqrt(p + 2)) > 0 else 1.0, xtol=1e-300, rtol=1e-13)
    return max(float(p + 2), 1.0 / x**2)


def rivals_numbers(eps, delta, n, p, estimand="ols", target=0.01):
    r"""The numbers the rivals explorer shows (chapter 9), first-order errors.

    For the example data of :func:`dpmask.rivals.example_moments` with
    ``K = n M``: the first-order RMSE of *estimand* from (A) Setting A at
    sigma_A, (B0) Setting B at Theorem 3.4's sigma_0, (Blow) Setting B at the
    large-n projection lower bound (:func:`dpmask.rivals.sigma_low_large_n`)
    and (gram) the Gaussian mechanism on X^T X with ``tau``
    (:func:`dpmask.rivals.sigma_gram`; tau is the standard deviation of the
    Gram noise, not of the data's entries).  Masking's RMSE is
    ``sqrt((b sigma^2 + c sigma^4)/n)``, the rival's ``tau sqrt(c/2)/n``
    (:func:`dpmask.rivals.error_coefficients`).

    Parameters
    ----------
    eps, delta : float
        eps > 0, 0 < delta < 1.
    n : int
        Rows, p + 2 <= n <= 2**53.
    p : int
        Columns, 2 to 6.
    estimand : {"ols", "corr", "angle"}
    target : float
        Target RMSE for the rows needed, > 0.

    Domain: the ranges above, each a single number; outside them a
    ValueError names the argument; inside, every number returned is finite.

    Returns
    -------
    dict
        ``tau``, ``sigma_a``, ``sigma_0``, ``sigma_low``; ``rmse_<kind>``,
        ``ratio_<kind>`` (masking RMSE / rival RMSE) and ``rows_<kind>`` for
        kind in A, B0, Blow, gram.
    """
    from ..paper import bounds
    from .._validate import check_delta, check_eps, check_int, check_positive

    eps = single(check_eps(eps), "eps")
    delta = single(check_delta(delta), "delta")
    p = int(single(check_int(p, "p", minimum=2, maximum=6), "p"))
    n = int(single(check_int(n, "n", minimum=p + 2), "n"))
    if not isinstance(estimand, str) or estimand not in _ESTIMANDS:
        raise ValueError(f"estimand must be one of {tuple(_ESTIMANDS)}, got {estimand!r}")
    target = single(check_positive(target, "target"), "target")
    # The door for the roots below, checked once (sigma_gram's and the analytic Gaussian's delta
    # range, then Theorem 3.4's domain); inside, the unvalidated cores (issue 30).
    from ..exact.gaussian import _check_sigma_args

    _check_sigma_args(eps, delta)
    bounds._check_b_args(eps, delta, n, p, False)
    try:
        with np.errstate(over="raise", divide="raise", invalid="raise"):
            tau, s_a = _sigmas(eps, delta, p)
            # sigma_0 at n, at the rows search's first step and on the plot's grid: one root solve
            # for all (the explorer draws the grid next), instead of one per setting (issue 30).
            # Should the grid fail where n does not, n alone decides, as before.
            try:
                _sigma0([(eps, delta, m, p) for m in (n, _ROWS_START, *_GRID_N)])
            except (FloatingPointError, RuntimeError):
                pass
            (sigma_0,) = _sigma0([(eps, delta, n, p)])
            out = {
                "tau": tau,
                "sigma_a": s_a,
                "sigma_0": sigma_0,
                "sigma_low": math.sqrt(tau / math.sqrt(2 * n)),
            }
            gram = float(_rmse("gram", eps, delta, n, p, estimand))
            for kind in _KINDS:
                rmse = float(_rmse(kind, eps, delta, n, p, estimand))
                out[f"rmse_{kind}"] = rmse
                out[f"ratio_{kind}"] = rmse / gram
                out[f"rows_{kind}"] = float(_rows(kind, eps, delta, p, estimand, target))
        finite = all(math.isfinite(v) and v > 0 for v in out.values())
    except (OverflowError, ZeroDivisionError, FloatingPointError):
        finite = False
    if not finite:
        raise ValueError(
            f"eps, delta and target give an RMSE or a row count beyond the float range (eps={eps!r}, "
            f"delta={delta!r}, target={target!r}); the panel's domain needs sigma_A(eps, delta)^4 and "
            f"sigma_A^4 / target^2 below 1e308 (e.g. eps >= 1e-60, target >= 1e-100)"
        )
    return out


@functools.lru_cache(maxsize=64)
def _curves(eps, delta, p, estimand):
    return {k: _rmse(k, eps, delta, _GRID, p, estimand) for k in _KINDS}


class _Plot(LivePlot):
    """One figure drawn once; an update draws the four lines, the n marker and the title on it."""

    def __init__(self):
        super().__init__("rows n", "first-order RMSE", "xy", figsize=(5.6, 3.4), dpi=72,
                         margins=(0.15, 0.97, 0.14, 0.91))
        self.lines = {kind: self.line(**series(i, i, marker=False), label=_PLAIN[kind]) for i, kind in enumerate(_KINDS)}
        self.n_line = self.vline(color=NEUTRAL, lw=0.8)
        decade_ticks(self.ax, numticks=12)  # tick labels without mathtext
        self.ax.legend(fontsize="x-small", loc="lower left")

    def draw(self, eps, delta, n, p, estimand):
        curves = _curves(float(eps), float(delta), int(p), estimand)
        for kind in _KINDS:
            self.lines[kind].set_data(_GRID, curves[kind])
        lo = min(float(np.min(c)) for c in curves.values())
        hi = max(float(np.max(c)) for c in curves.values())
        self.n_line.set_xdata([n, n])
        self.ax.set_ylabel(f"first-order RMSE, {_ESTIMANDS[estimand]}")
        self.title(f"ε = {eps:.3g}, δ = {delta:.2g}, p = {p}", fontsize="medium")
        return self.png((_GRID[0], _GRID[-1]), log_range(lo, hi), extra=estimand)


_PANEL = (
    ("τ, Gram noise sd (diagonal; not a data σ)", "tau"),
    ("σ_A (Setting A)", "sigma_a"),
    ("σ_0 (Theorem 3.4)", "sigma_0"),
    ("σ_low (large-n lower bound)", "sigma_low"),
    *((f"RMSE, {name}", f"rmse_{kind}") for kind, name in
      [("A", "A at σ_A"), ("B0", "B at σ_0"), ("Blow", "B at σ_low"), ("gram", "Gram mechanism")]),
    *((f"RMSE ratio {name} / Gram", f"ratio_{kind}") for kind, name in
      [("A", "A"), ("B0", "B at σ_0"), ("Blow", "B at σ_low")]),
    *((f"rows for RMSE 0.01, {name}", f"rows_{kind}") for kind, name in
      [("A", "A"), ("B0", "B at σ_0"), ("Blow", "B at σ_low"), ("gram", "Gram")]),
)


def rivals_explorer(eps=0.1, delta=0.01, n=10**5, p=2, estimand="ols"):
    """Sliders for eps, delta, n, p and the estimand: masking against the Gram mechanism.

    Parameters
    ----------
    eps, delta, n, p, estimand : initial values (eps in [1e-3, 1], delta in
        [1e-8, 0.1], n in [1e3, 1e8], p in 2..6, estimand one of "ols",
        "corr", "angle").

    Returns
    -------
    ipywidgets.VBox
        children: the controls (in a ``VBox``), the ``HTML`` panel and the
        ``Image`` with the plot.  Curves are cached per (eps, delta, p,
        estimand); moving n only redraws.
    """
    controls = [
        log_slider("ε", eps, -3, 0, 0.01, ".3g", "4.5em"),
        log_slider("δ", delta, -8, -1, 0.05, ".2g", "4.5em"),
        log_slider("n", n, 3, 8, 0.1, ".3g", "4.5em"),
        int_slider("p", p, 2, 6, "4.5em"),
        dropdown("estimand", [(v, k) for k, v in _ESTIMANDS.items()], estimand, "4.5em"),
    ]
    plot = _Plot()

    def render(e, d, nn, pp, est):
        note = f"n = {nn}, p = {pp}; first-order errors of chapter 9's example data"
        return panel(_PANEL, rivals_numbers(e, d, nn, pp, est), note), plot.draw(e, d, nn, pp, est)

    return explorer(controls, (key, key, whole, int, str), render)


def rivals_figure(eps_values=(0.1, 0.01, 0.001), delta=0.001, p_values=(2, 5), target=0.01):
    """Static companion of :func:`rivals_explorer`: rows needed against eps.

    Rows at which the first-order RMSE of the OLS slopes reaches *target*,
    for the four mechanisms (each its own colour, line style and marker), one panel per p.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..exact.gaussian import _check_sigma_args
    from ..paper import bounds
    from ..rivals import gram

    # The door: the rows below come from the unvalidated cores (issue 30), so check here what
    # sigma_gram, the analytic Gaussian and Theorem 3.4 would check.
    for p in p_values:
        gram.gram_sensitivity(p)
        for e in eps_values:
            _check_sigma_args(e, delta)
            bounds._check_b_args(e, delta, int(p) + 2, p, False)
    eps_grid = np.logspace(math.log10(min(eps_values)), math.log10(max(eps_values)), 13)
    fig = new_figure(figsize=(8.8, 3.8))
    axes = np.atleast_1d(fig.subplots(1, len(p_values), sharey=True))
    for ax, p in zip(axes, p_values):
        # the B0 rows for every eps at once: three root solves for the panel, not three per eps
        b0 = _rows_b0([float(e) for e in eps_grid], float(delta), int(p), "ols", float(target))
        for i, kind in enumerate(_KINDS):
            rows = b0 if kind == "B0" else [_rows(kind, float(e), float(delta), int(p), "ols", float(target))
                                             for e in eps_grid]
            ax.loglog(eps_grid, rows, **series(i, i), label=_LABELS[kind])
        ax.set_xlabel(r"$\varepsilon$")
        ax.set_title(rf"$p={p}$, $\delta={delta:g}$", fontsize="medium")
    axes[0].set_ylabel(f"rows for slope RMSE {target:g}")
    axes[0].legend(fontsize="small")
    return fig
