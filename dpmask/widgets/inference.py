"""The inference explorer: error of a slope fitted from a release, Setting A against Setting B (chapter 6)."""

from __future__ import annotations

import functools
import math

import numpy as np

from .._style import NEUTRAL, color, series
from ._shared import LivePlot, analytic_sigma, data_range, decade_ticks, explorer, key, log_range, log_slider
from ._shared import new_figure, panel, sigma0, single, whole

# Second moments of the chapter's example: z uniform on [-1, 1], y = 0.5 z + e, e uniform on [-0.5, 0.5].
_SLOPE_MOMENTS = np.array([[1 / 3, 1 / 6], [1 / 6, 1 / 6]])


def _slope_rmse(sigma, n):
    """First-order RMSE of the corrected slope (privacy noise only), Proposition 6.3 at E[G]."""
    from ..inference import ols_from_gram

    sigma, n = np.broadcast_arrays(np.asarray(sigma, float), np.asarray(n, float))
    out = np.empty(sigma.shape)
    for idx in np.ndindex(sigma.shape):
        nn, s = int(n[idx]), float(sigma[idx])
        G = nn * _SLOPE_MOMENTS + nn * s**2 * np.eye(2)
        out[idx] = ols_from_gram(G, nn, 1, s, conditional=True).se[0]
    return out if out.ndim else float(out)


def inference_numbers(eps, delta, n, target=0.05):
    """The numbers the inference explorer shows (chapter 6's one-predictor example).

    Parameters
    ----------
    eps, delta : float
        Privacy parameters, eps > 0, 0 < delta < 1.
    n : int
        Rows, 3 <= n <= 2**53.
    target : float
        Target root mean square error of the slope, > 0.

    Each a single number; outside these ranges, or where an RMSE or row count
    would leave the float range, a ValueError names the argument.

    Returns
    -------
    dict
        ``sigma_a`` (analytic Gaussian mechanism), ``sigma_b`` (Theorem 3.4,
        p = 2), ``rmse_a``, ``rmse_b`` (first-order RMSE of the corrected slope
        at n), ``rows_a``, ``rows_b`` (rows for an RMSE of *target*, from the
        1/sqrt(n) law at n = 10^9) and ``rows_ratio``.
    """
    return _inference_values(*_inference_door(eps, delta, n, target))


def _inference_door(eps, delta, n, target):
    """:func:`inference_numbers`' checks of each argument alone: (eps, delta, n, target), or a ValueError.

    Theorem 3.4's domain is checked by :func:`_inference_values`, whose errors name the slope's."""
    from .._validate import check_delta, check_eps, check_int, check_positive

    eps = single(check_eps(eps), "eps")
    delta = single(check_delta(delta), "delta")
    n = int(single(check_int(n, "n", minimum=3), "n"))
    target = single(check_positive(target, "target"), "target")
    return eps, delta, n, target


def _solve_ahead(eps, delta, n):
    """Theorem 3.4's sigma_0 at n, at 10^9 and on the plot's grid, for arguments the door has checked.

    One root solve for everything an update shows and draws (issue 30: three before), into
    :func:`sigma0`'s cache; as in :func:`._shared`'s other explorers it runs before the values.
    Outside Theorem 3.4's domain, or should the grid fail where n and 10^9 do not, it leaves them
    to :func:`_inference_values`, which solves n and 10^9 alone and says what failed."""
    from ..paper import bounds

    try:
        with np.errstate(over="raise", divide="raise", invalid="raise"):
            bounds._check_b_args(eps, delta, n, 2, False)
            sigma0([(eps, delta, m, 2, False) for m in (n, 10**9, *_GRID)])
    except (ValueError, FloatingPointError, RuntimeError):
        pass


def _inference_values(eps, delta, n, target):
    """:func:`inference_numbers` after :func:`_inference_door`."""
    from ..paper import bounds

    try:
        with np.errstate(over="raise", divide="raise", invalid="raise"):
            bounds._check_b_args(eps, delta, n, 2, False)  # the door of the roots below (Theorem 3.4's
            s_a = analytic_sigma(eps, delta)                # domain holds the analytic Gaussian's): once
            big = 10**9
            s_b, s_big = sigma0([(eps, delta, n, 2, False), (eps, delta, big, 2, False)])
            rows_a = big * (_slope_rmse(s_a, big) / target) ** 2
            rows_b = big * (_slope_rmse(s_big, big) / target) ** 2
            out = {
                "sigma_a": s_a,
                "sigma_b": s_b,
                "rmse_a": _slope_rmse(s_a, n),
                "rmse_b": _slope_rmse(s_b, n),
                "rows_a": rows_a,
                "rows_b": rows_b,
                "rows_ratio": rows_a / rows_b,
            }
        finite = all(math.isfinite(float(v)) for v in out.values())
    except (OverflowError, ZeroDivisionError, FloatingPointError):
        finite = False
    except ValueError as exc:  # e.g. sigma_A = 3e101 at eps = 1e-100: beyond inference's sigma domain
        raise ValueError(f"eps={eps!r} and delta={delta!r} need a noise level outside the domain of the slope's "
                         f"error ({exc})") from exc
    if not finite:
        raise ValueError(f"eps, delta and target give an RMSE or a row count beyond the float range (eps={eps!r}, "
                         f"delta={delta!r}, target={target!r})")
    return out


# Whole decades: the error curves are straight lines on log-log axes, and Theorem 3.4's sigma
# costs most at large n (the noncentral chi-square quantile), so few points there.
_GRID = np.logspace(3, 10, 8)


@functools.lru_cache(maxsize=256)
def _curves(eps, delta):
    """Error of the slope against n under both settings: the n slider only moves the marker."""
    s_b = np.array(sigma0([(eps, delta, n, 2, False) for n in _GRID]))  # drawn after the door checked (eps, delta)
    return _slope_rmse(analytic_sigma(eps, delta), _GRID), _slope_rmse(s_b, _GRID)


class _Plot(LivePlot):
    def __init__(self):
        super().__init__("rows n", "first-order RMSE of the slope", "xy", margins=(0.12, 0.98, 0.13, 0.91))
        ax = self.ax
        # Plain-text labels: mathtext would be laid out again at every move.
        self.a = self.line(**series(3, 1, marker=False), label="Setting A, σ of the analytic Gaussian")
        self.b = self.line(**series(0, 0, marker=False), label="Setting B, σ of Theorem 3.4")
        self.n_line = self.vline(color=NEUTRAL, lw=0.8)
        ax.axhline(0.05, color="0.8", lw=0.8)
        decade_ticks(ax)  # seven decades of n and as many of error: no minor ticks
        ax.legend(fontsize="small", loc="upper right")

    def draw(self, eps, delta, n):
        rmse_a, rmse_b = _curves(eps, delta)
        self.a.set_data(_GRID, rmse_a)
        self.b.set_data(_GRID, rmse_b)
        self.n_line.set_xdata([n, n])
        self.title(f"ε = {eps:.3g},  δ = {delta:.2g},  p = 2")
        return self.png(log_range(_GRID[0], _GRID[-1]), log_range(*data_range(rmse_a, rmse_b, 0.05)))


_PANEL = (
    ("σ_A (analytic Gaussian)", "sigma_a"),
    ("σ_0 (Theorem 3.4, p = 2)", "sigma_b"),
    ("RMSE of slope, A", "rmse_a"),
    ("RMSE of slope, B", "rmse_b"),
    ("rows for RMSE 0.05, A", "rows_a"),
    ("rows for RMSE 0.05, B", "rows_b"),
    ("ratio of rows A / B", "rows_ratio"),
)


def inference_explorer(eps=0.1, delta=1e-3, n=10**6):
    """Sliders for eps, delta and n: how well a slope can be fitted from each release.

    Parameters
    ----------
    eps, delta, n : initial slider values (eps in [1e-3, 1], delta in
        [1e-8, 0.1], n in [1e3, 1e10]).

    Returns
    -------
    ipywidgets.VBox
        children: the sliders (in a ``VBox``), the ``HTML`` panel and the
        ``Image`` with the plot.
    """
    controls = [
        log_slider("ε", eps, -3, 0, 0.01, ".3g"),
        log_slider("δ", delta, -8, -1, 0.05, ".2g"),
        log_slider("n", n, 3, 10, 0.1, ".3g"),
    ]
    plot = _Plot()

    def render(e, d, nn):
        note = f"n = {nn}; first-order errors, unreliable where they exceed the slope (0.5)"
        args = _inference_door(e, d, nn, 0.05)
        _solve_ahead(*args[:3])
        vals = _inference_values(*args)
        return panel(_PANEL, vals, note), plot.draw(e, d, nn)

    return explorer(controls, (key, key, whole), render)


def inference_figure(eps_values=None, delta_values=(1e-3, 1e-6), target=0.05):
    """Static companion of :func:`inference_explorer`: rows needed against eps.

    Rows for a first-order slope RMSE of *target* in chapter 6's example,
    under Setting A's and Setting B's noise, one line per (setting, delta): the setting by
    colour and marker (A squares, B circles), delta by line style.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if eps_values is None:
        eps_values = np.logspace(-2, 0, 13)
    fig = new_figure()
    ax = fig.add_subplot()
    for j, delta in enumerate(delta_values):
        rows = [inference_numbers(float(e), delta, 10**6, target) for e in eps_values]
        ax.loglog(eps_values, [r["rows_a"] for r in rows], **{**series(3, j), "marker": "s"},
                  label=rf"A, $\delta={delta:g}$")
        ax.loglog(eps_values, [r["rows_b"] for r in rows], **{**series(0, j), "marker": "o"},
                  label=rf"B, $\delta={delta:g}$")
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(f"rows for slope RMSE {target:g}")
    ax.set_title("Rows a regression needs, Setting A against Setting B")
    ax.legend(fontsize="small")
    return fig
