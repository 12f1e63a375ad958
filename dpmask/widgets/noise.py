"""The noise explorer: Theorem 3.2 (Setting A) against Theorem 3.4 (Setting B), chapters 1, 3 and 4."""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validate import check_scalar
from .._style import color, series
from ._shared import LivePlot, analytic_sigma, data_range, explorer, int_slider, key, log_range, log_slider, n_grid
from ._shared import new_figure, panel, plain_log_ticks, sigma0, whole


def noise_numbers(eps, delta, n, p):
    """The numbers the noise explorer shows, from :mod:`dpmask.paper.bounds`.

    Parameters
    ----------
    eps : float
        Privacy parameter, 0 < eps < 1 (Theorem 3.2's range).
    delta : float
        Privacy parameter, 0 < delta < 1/2.
    n, p : int
        Rows and columns, n > p >= 1, n <= 2**53.

    Each a single number; outside these ranges a ValueError names the argument.

    Returns
    -------
    dict
        ``a_necessary`` and ``a_sufficient`` (Theorem 3.2, equations
        (DP-boundA.nec) and (DP-boundA.suf)), ``b_sufficient`` (the root of
        Theorem 3.4's g), ``b_corrected`` (the same with 2(n - p - 1) in place
        of 2(n - p); None when n = p + 1, where it is undefined: the panel shows a dash), ``a_exact`` (the tight
        (eps, delta)-DP sigma of Setting A, the analytic Gaussian; Theorem 3.2's
        two values concern the paper's stronger criterion) and ``ratio`` =
        a_sufficient / b_sufficient, the last column of the paper's Table 1 (a
        ratio of two sufficient bounds, not the noise masking saves: chapter 7).
    """
    return _noise_values(*_noise_door(eps, delta, n, p))


def _noise_door(eps, delta, n, p):
    """:func:`noise_numbers`' checks, once: (eps, delta) as floats and (n, p) as ints, or a ValueError."""
    from ..paper import bounds
    from .._validate import check_n_p

    for name, value in (("eps", eps), ("delta", delta), ("n", n), ("p", p)):
        check_scalar(value, name)
    n_arr, p_arr = check_n_p(n, p)
    n, p = int(n_arr), int(p_arr)
    # The door, checked once in the order the bounds would (Theorem 3.2's hypotheses, then Theorem
    # 3.4's domain, which holds the analytic Gaussian's); below, the bounds' unvalidated cores.
    eps, delta = bounds._setting_a_args(eps, delta, 0.5, bounds._THM32)
    bounds._check_b_args(eps, delta, n, p, False)
    return float(eps), float(delta), n, p


def _noise_values(eps, delta, n, p):
    """:func:`noise_numbers` for arguments its door has checked: the bounds' cores.

    Theorem 3.4's two roots (2(n - p) and, where defined, 2(n - p - 1)) come from :func:`sigma0`,
    which the explorer fills ahead with the plot's grid (:func:`_solve_ahead`)."""
    from ..paper import bounds

    a_nec = bounds._sigma_a_necessary(eps, delta)
    a_suf = bounds._sigma_a_sufficient(eps, delta)
    # the conservative variant's 2(n - p - 1) degrees of freedom vanish at n = p + 1: no value
    b_suf, *b_cor = sigma0([(eps, delta, n, p, False)] + ([(eps, delta, n, p, True)] if n > p + 1 else []))
    return {
        "a_necessary": a_nec,
        "a_sufficient": a_suf,
        "b_sufficient": b_suf,
        "b_corrected": b_cor[0] if b_cor else None,
        "a_exact": analytic_sigma(eps, delta),
        "ratio": a_suf / b_suf,
    }


def _solve_ahead(eps, delta, n, p):
    """Theorem 3.4's sigma_0 at n and on the plot's grid of n, both variants, for checked arguments.

    One root solve per variant for everything an update shows and draws (issue 30: four solves
    before, each a scalar or a grid); what was solved before comes from :func:`sigma0`'s cache."""
    grid = n_grid(p)
    sigma0([(eps, delta, m, p, corrected) for corrected in (False, True)
            for m in (n, *grid) if m > p + 1 or not corrected])


@functools.lru_cache(maxsize=256)
def _curves(eps, delta, p):
    """sigma against n for one (eps, delta, p): the n slider only moves the marker.

    Drawn after :func:`noise_numbers` has checked (eps, delta, n, p), on a grid of n > p + 1: the
    bounds' cores, unvalidated."""
    from ..paper import bounds

    grid = n_grid(p)
    return (
        grid,
        np.array(sigma0([(eps, delta, m, p, False) for m in grid])),
        np.array(sigma0([(eps, delta, m, p, True) for m in grid])),
        bounds._sigma_a_sufficient(eps, delta),
        bounds._sigma_a_necessary(eps, delta),
        analytic_sigma(eps, delta),
    )


# n from 3 (p + 2 at p = 1) to 10^6: one range for every p, so that moving p keeps the static picture
_N_RANGE = log_range(3, 10**6, per_decade=20)


class _Plot(LivePlot):
    def __init__(self):
        super().__init__(r"rows $n$", r"noise standard deviation $\sigma$", "xy", margins=(0.11, 0.98, 0.13, 0.91))
        ax = self.ax
        # each line its own style as well as its colour (dpmask._style): readable without colour
        self.b = self.line(**series(0, 0, marker=False), label=r"B, Theorem 3.4 ($2(n-p)$)")
        self.b_cor = self.line(**series(0, 2, marker=False), label=r"B, conservative variant ($2(n-p-1)$)")
        self.a_suf = self.hline(**series(3, 1, marker=False), label="A, Thm 3.2 sufficient (criterion)")
        self.a_nec = self.hline(**series(3, 3, marker=False), label="A, Thm 3.2 necessary (criterion only)")
        self.a_ex = self.hline(**series(1, 4, marker=False), label="A, exact for (ε, δ)-DP (analytic Gaussian)")
        self.dot = self.line("o", color=color(0))
        plain_log_ticks(ax.yaxis)
        ax.legend(fontsize="small", loc="center right")

    def draw(self, eps, delta, n, p, sigma_n):
        grid, b, b_cor, a_suf, a_nec, a_ex = _curves(eps, delta, p)
        self.b.set_data(grid, b)
        self.b_cor.set_data(grid, b_cor)
        self.a_suf.set_ydata([a_suf, a_suf])
        self.a_nec.set_ydata([a_nec, a_nec])
        self.a_ex.set_ydata([a_ex, a_ex])
        self.dot.set_data([n], [sigma_n])
        self.title(f"ε = {eps:.3g},  δ = {delta:.2g},  p = {p}")
        ylim = log_range(*data_range(b, b_cor, a_suf, a_nec, a_ex, sigma_n))
        return self.png(_N_RANGE, ylim)


_PANEL = (
    ("A necessary σ (Thm 3.2, the paper's criterion only)", "a_necessary"),
    ("A sufficient σ (Thm 3.2)", "a_sufficient"),
    ("A exact σ for (ε, δ)-DP (analytic Gaussian)", "a_exact"),
    ("B sufficient σ (Thm 3.4)", "b_sufficient"),
    ("B conservative σ, 2(n−p−1)", "b_corrected"),
    ("ratio A sufficient / B (two bounds, not the saving)", "ratio"),
)


def noise_explorer(eps=0.1, delta=0.01, n=100, p=1):
    """Sliders for eps, delta, n and p showing the Setting A and B noise bounds.

    The panel lists Theorem 3.2's necessary and sufficient sigma (Setting A),
    Theorem 3.4's sufficient sigma (Setting B; also its conservative variant with
    2(n - p - 1)), and the ratio A/B as in Table 1.  The plot shows sigma
    against n for the chosen eps, delta and p; Setting A does not depend on n,
    so it is a flat line.

    Parameters
    ----------
    eps : float
        Initial eps, in [1e-3, 0.99].
    delta : float
        Initial delta, in [1e-8, 0.04].
    n : int
        Initial number of rows, in [10, 10**6].
    p : int
        Initial number of columns, in [1, 50].

    Returns
    -------
    ipywidgets.VBox
        children: the four sliders (in a ``VBox``), the ``HTML`` panel and the
        ``Image`` with the plot.
    """
    controls = [
        log_slider("ε", eps, -3, math.log10(0.99), 0.01, ".3g"),
        log_slider("δ", delta, -8, math.log10(0.04), 0.05, ".2g"),
        log_slider("n", n, 1, 6, 0.05, ".0f"),
        int_slider("p", p, 1, 50),
    ]
    plot = _Plot()

    def refuse(e, d, nn, pp):
        return f"<p>Theorem 3.4 needs more rows than columns: n = {nn} ≤ p = {pp}.</p>" if nn <= pp else None

    def render(e, d, nn, pp):
        args = _noise_door(e, d, nn, pp)
        _solve_ahead(*args)
        vals = _noise_values(*args)
        return panel(_PANEL, vals, note=f"n = {nn}"), plot.draw(e, d, nn, pp, vals["b_sufficient"])

    return explorer(controls, (key, key, whole, int), render, refuse)


def noise_figure(eps_values=(0.1, 0.01, 0.001), p_values=(1, 5, 20), delta=0.01, n_max=10**6):
    """Static companion of :func:`noise_explorer`: the ratio A/B against n.

    One line per (eps, p): Theorem 3.2's sufficient sigma divided by Theorem
    3.4's, for n from p + 2 to *n_max* (log axes).  Colour codes eps, line
    style codes p, and each eps has its own marker as well as its colour.

    Parameters
    ----------
    eps_values : tuple of float
        Values of eps, each in (0, 1).
    p_values : tuple of int
        Column counts; four line styles are distinct.
    delta : float
        Privacy parameter, 0 < delta < 1/2.
    n_max : int
        Largest n on the axis.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..paper import bounds

    fig = new_figure(figsize=(7.6, 4.2))
    ax = fig.add_subplot()
    for i, eps in enumerate(eps_values):
        a = bounds.sigma_a_sufficient(eps, delta)
        for j, p in enumerate(p_values):
            grid = n_grid(p, n_max)
            ax.plot(grid, a / bounds.sigma_b(eps, delta, grid, p), **series(i, j),
                    label=rf"$\varepsilon={eps:g}$, $p={p}$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"rows $n$")
    ax.set_ylabel(r"Thm 3.2 sufficient $\sigma$ / Thm 3.4 $\sigma_0$")
    ax.set_title(rf"Ratio of the paper's two sufficient bounds, $\delta={delta:g}$")
    plain_log_ticks(ax.yaxis)
    fig.legend(fontsize="small", loc="outside right upper")
    return fig
