"""The G_q explorer: Lemma 5.5, G_q(t2) / G_q(t1) against exp(|t1^2 - t2^2| / (2q)), chapter 5."""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validate import check_scalar
from .._style import NEUTRAL, color, series
from ._shared import LivePlot, data_range, explorer, float_slider, int_slider, key, linear_range, new_figure, panel


def gq_numbers(q, t1, t2):
    """Exact log ratio ``log G_q(t2) - log G_q(t1)`` and Lemma 5.5's bound ``|t1**2 - t2**2| / (2q)``.

    Uses :func:`dpmask.paper.gq.log_G`, imported here so this module loads before it.

    Parameters
    ----------
    q : float
        In [1, 1e12] (``dpmask.paper.gq.Q_MAX``).
    t1, t2 : float
        In [0, 1e300] (``dpmask.paper.gq.T_MAX``).  Outside these ranges, or for
        arrays, a ``ValueError`` names the argument.

    Returns
    -------
    dict
        ``log_ratio``, ``log_bound`` (``inf`` only where it exceeds the float
        range), ``ratio`` = exp(log_ratio), ``bound`` = exp(log_bound) (inf if
        it overflows) and ``holds`` (log_ratio <= log_bound, up to rounding).
    """
    from ..paper.gq import _check_q, _check_t, _log_G, _log_ratio_bound

    for name, value in (("q", q), ("t1", t1), ("t2", t2)):
        check_scalar(value, name)
    # the door: q, t1, t2 checked once, as log_G and log_ratio_bound check them (naming the
    # argument); the cores below repeat no check
    q, t1, t2 = float(_check_q(q)), float(_check_t(t1, "t1")), float(_check_t(t2, "t2"))
    log_bound = float(_log_ratio_bound(q, t1, t2))
    log_g1, log_g2 = float(_log_G(q, t1)), float(_log_G(q, t2))
    log_ratio = log_g2 - log_g1
    # log_G has relative error <= 1e-12 in each term: allow that much on each side
    slack = 1e-12 * (abs(log_g2) + abs(log_g1)) + 1e-300
    return {
        "log_ratio": log_ratio,
        "log_bound": log_bound,
        "ratio": math.exp(log_ratio) if log_ratio < 700 else math.inf,
        "bound": math.exp(log_bound) if log_bound < 700 else math.inf,
        "holds": log_ratio <= log_bound * (1 + 1e-12) + slack,
    }


def _t_max(t1, t2):
    """Right end of the t axis: 1.5 max(t1, t2, 1) rounded up to a round number (few distinct ranges)."""
    want = 1.5 * max(t1, t2, 1.0)
    unit = 10.0 ** math.floor(math.log10(want))
    for m in (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0):
        if m * unit >= want:
            return m * unit
    return 10.0 * unit


@functools.lru_cache(maxsize=256)
def _curves(q, t1, t_max):
    """Both log ratios against t for one (q, t1) up to t_max: the t2 slider only moves the marker.
    Called with what :func:`gq_numbers` has just checked, so it uses the unchecked core."""
    from ..paper.gq import _log_G

    t = np.linspace(0.0, t_max, 200)
    return t, np.asarray(_log_G(q, t)) - float(_log_G(q, t1)), np.abs(t**2 - t1**2) / (2.0 * q)


class _Plot(LivePlot):
    def __init__(self):
        super().__init__(r"$t$", "log ratio", margins=(0.1, 0.98, 0.13, 0.91))
        ax = self.ax
        self.exact = self.line(**series(0, 0, marker=False), label=r"$\ln G_q(t) - \ln G_q(t_1)$")
        self.bound = self.line(**series(1, 1, marker=False), label=r"$|t^2 - t_1^2| / (2q)$ (Lemma 5.5)")
        self.t1_line = self.vline(color=NEUTRAL, lw=0.8)
        self.dot = self.line("o", color=color(0))
        ax.legend(fontsize="small", loc="lower right")

    def draw(self, q, t1, t2, log_ratio):
        t_max = _t_max(t1, t2)
        t, exact, bound = _curves(q, t1, t_max)
        self.exact.set_data(t, exact)
        self.bound.set_data(t, bound)
        self.t1_line.set_xdata([t1, t1])
        self.dot.set_data([t2], [log_ratio])
        self.title(f"q = {q},  t₁ = {t1:.3g}")
        return self.png((-0.05 * t_max, 1.05 * t_max), linear_range(*data_range(exact, bound, log_ratio)))


_PANEL = (
    ("exact ln G_q(t₂) − ln G_q(t₁)", "log_ratio"),
    ("Lemma 5.5 bound |t₁² − t₂²| / (2q)", "log_bound"),
    ("exact ratio G_q(t₂)/G_q(t₁)", "ratio"),
    ("bound exp(|t₁² − t₂²| / (2q))", "bound"),
)


def gq_explorer(q=10, t1=1.0, t2=3.0):
    """Sliders q, t1, t2: the exact ratio G_q(t2)/G_q(t1) against Lemma 5.5's bound.

    Parameters
    ----------
    q : int
        Initial q, in [1, 500].
    t1, t2 : float
        Initial arguments, in [0, 50].

    Returns
    -------
    ipywidgets.VBox
        children: the sliders (in a ``VBox``), the ``HTML`` panel and the
        ``Image`` with the plot of both log ratios against t.
    """
    controls = [
        int_slider("q", q, 1, 500),
        float_slider("t₁", t1, 0.0, 50.0, 0.1),
        float_slider("t₂", t2, 0.0, 50.0, 0.1),
    ]
    plot = _Plot()

    def render(qq, a, b):
        vals = gq_numbers(qq, a, b)
        note = "bound holds" if vals["holds"] else "<b>bound violated</b>"
        return panel(_PANEL, vals, note), plot.draw(qq, a, b, vals["log_ratio"])

    return explorer(controls, (int, key, key), render)


def gq_figure(q_values=(2, 5, 20, 100), t_max=1000.0):
    """Static companion of :func:`gq_explorer`: how much room Lemma 5.5 leaves.

    For each q, the exact :math:`\\ln G_q(t) - \\ln G_q(0)` (solid) and the
    bound :math:`t^2/(2q)` (dashed) against t on log-log axes, i.e. the
    explorer with t1 = 0.  For small t both grow like a multiple of t^2 (the
    exact one like :math:`t^2/(2(q+1))`), for large t the exact one grows only
    like t, so the bound is tight near 0 and loose far out.  Each q has its own colour and
    marker.

    Parameters
    ----------
    q_values : tuple of int
        Values of q >= 1.
    t_max : float
        Largest t on the axis (the smallest is 0.1).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..paper.gq import log_G

    fig = new_figure()
    ax = fig.add_subplot()
    t = np.logspace(-1.0, math.log10(t_max), 200)
    for i, q in enumerate(q_values):
        ax.plot(t, np.asarray(log_G(q, t)) - float(log_G(q, 0.0)), **series(i, 0), label=rf"$q={q}$")
        ax.plot(t, t**2 / (2.0 * q), **series(i, 1))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"$t$")
    ax.set_ylabel(r"$\ln G_q(t) - \ln G_q(0)$")
    ax.set_title(r"Lemma 5.5: exact log ratio (solid) and bound $t^2/(2q)$ (dashed)", fontsize="medium")
    ax.legend(fontsize="small", loc="lower right")
    return fig
