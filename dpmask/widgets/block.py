"""The block explorer: the price in noise of block-diagonal masking (Section 4, chapter 8)."""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validate import check_scalar
from .._style import color, series
from ._shared import LivePlot, data_range, explorer, int_slider, key, linear_range, log_range, log_slider
from ._shared import new_figure, panel, plain_log_ticks, sigma0, whole


def block_numbers(eps, delta, n, p, block):
    """The numbers the block explorer shows: noise and cost of masking in blocks.

    Parameters
    ----------
    eps, delta : float
        Privacy parameters, eps > 0, 0 < delta < 1.
    n, p : int
        Rows and columns, n > p >= 1, n <= 2**53.
    block : int
        Wanted rows per block, p < block <= n; the rows are cut as
        :func:`dpmask.scale.balanced_chunks` does (sizes differ by at most
        one), and the smallest block must still have more than p rows.

    Each a single number; outside these ranges a ValueError names the argument.

    Returns
    -------
    dict
        ``blocks`` (how many), ``smallest`` (n_s), ``sigma_full`` (Theorem
        3.4 with all n rows), ``sigma_block`` (:func:`dpmask.paper.bounds.sigma_b_block`,
        n replaced by n_s), ``price`` = sigma_block / sigma_full, and
        ``dense_flops_per_row`` ~ 8 n_s^2 / 3 + 2 n_s p (an explicit Haar
        block: Householder QR of an n_s x n_s Gaussian matrix, 4 n_s^3 / 3,
        forming its Q, another 4 n_s^3 / 3, then the product) against
        ``frame_flops_per_row`` ~ 6 p^2 (the frame identity: the Gram matrix of
        Z, the QR of M and the product U R), leading terms as in chapter 8.
    """
    return _block_values(*_block_door(eps, delta, n, p, block))


def _block_door(eps, delta, n, p, block):
    """:func:`block_numbers`' checks, once: (eps, delta, n, p, k, n_s) with k blocks, the smallest n_s rows."""
    from ..paper import bounds
    from .._validate import check_int, check_n_p

    for name, value in (("eps", eps), ("delta", delta), ("n", n), ("p", p), ("block", block)):
        check_scalar(value, name)
    n_arr, p_arr = check_n_p(n, p)
    n, p = int(n_arr), int(p_arr)
    block = int(check_int(block, "block", minimum=1))
    if block <= p or block > n:
        raise ValueError(f"block must satisfy p={p} < block <= n={n} (rows per block), got {block}")
    # dpmask.scale.balanced_chunks(n, block) without building its tuple (n / block blocks can be
    # 10^15): k = max(1, round(n / block)) blocks of n // k or n // k + 1 rows
    k = max(1, int(round(n / block)))
    n_s = n // k
    if n_s <= p:
        raise ValueError(f"block={block} cuts n={n} rows into {k} blocks whose smallest has {n_s} <= p={p} rows; "
                         f"Theorem 3.4 needs more rows than columns in every block: choose a larger block")
    bounds._check_b_args(eps, delta, n, p, False)  # the door for eps and delta; below, Theorem 3.4's core
    return float(eps), float(delta), n, p, k, n_s


def _solve_ahead(eps, delta, n, p, k, n_s):
    """Theorem 3.4's sigma_0 at n, at n_s and on the plot's grid, for arguments the door has checked.

    One root solve for everything an update shows and draws (issue 30: four before), into
    :func:`sigma0`'s cache, before :func:`_block_values` reads it (as the noise and inference
    explorers do)."""
    sigma0([(eps, delta, m, p, False) for m in (n, n_s, *_grid(p, n))])


def _block_values(eps, delta, n, p, k, n_s):
    """:func:`block_numbers` for arguments its door has checked.

    Theorem 3.4's sigma_0 at n and at n_s (= sigma_b_block on the balanced sizes, which uses the
    smallest) from :func:`sigma0`, which the explorer fills ahead with the plot's grid (:func:`_solve_ahead`)."""
    full, blk = sigma0([(eps, delta, n, p, False), (eps, delta, n_s, p, False)])
    return {
        "blocks": k,
        "smallest": n_s,
        "sigma_full": full,
        "sigma_block": blk,
        "price": blk / full,
        "dense_flops_per_row": 8.0 * n_s**2 / 3.0 + 2.0 * n_s * p,
        "frame_flops_per_row": 6.0 * p**2,
    }


def _grid(p, n):
    grid = np.unique(np.round(np.logspace(math.log10(p + 1), math.log10(n), 60)))
    return grid[grid > p]


@functools.lru_cache(maxsize=256)
def _curve(eps, delta, n, p):
    """sigma(n_s) / sigma(n) against n_s: the block slider only moves the marker.

    Drawn after :func:`block_numbers` has checked (eps, delta, n, p): Theorem 3.4's core."""
    grid = _grid(p, n)
    return grid, np.array(sigma0([(eps, delta, m, p, False) for m in grid])) / sigma0([(eps, delta, n, p, False)])[0]


class _Plot(LivePlot):
    def __init__(self):
        super().__init__(r"smallest block $n_s$", r"$\sigma(n_s) / \sigma(n)$, Theorem 3.4", "x",
                         margins=(0.1, 0.98, 0.13, 0.91))
        ax = self.ax
        self.curve = self.line(**series(0, 0, marker=False))
        self.dot = self.line("o", color=color(3))

    def draw(self, eps, delta, n, p, smallest, price):
        grid, ratio = _curve(eps, delta, n, p)
        self.curve.set_data(grid, ratio)
        self.dot.set_data([smallest], [price])
        self.title(f"price of blocks: ε = {eps:.3g},  δ = {delta:.2g},  n = {n},  p = {p}")
        return self.png(log_range(*data_range(grid, smallest)), linear_range(*data_range(ratio, price)))


_PANEL = (
    ("blocks", "blocks"),
    ("smallest block n_s", "smallest"),
    ("σ, one Haar matrix (Thm 3.4)", "sigma_full"),
    ("σ, blocks (n_s for n)", "sigma_block"),
    ("price σ_block / σ", "price"),
    ("flops per row, Haar blocks", "dense_flops_per_row"),
    ("flops per row, frame identity", "frame_flops_per_row"),
)


def block_explorer(eps=0.1, delta=1e-3, n=10**6, p=10, block=1000):
    """Sliders for eps, delta, p and the block size: the noise price of block-diagonal masking.

    Parameters
    ----------
    eps, delta, n, p, block : initial values (eps in [1e-3, 1], delta in
        [1e-9, 0.04], p in [1, 50], block from p + 1 to n; n is fixed).

    Returns
    -------
    ipywidgets.VBox
        children: the sliders (in a ``VBox``), the ``HTML`` panel, the ``Image``.
    """
    controls = [
        log_slider("ε", eps, -3, 0, 0.05, ".3g", "4em"),
        log_slider("δ", delta, -9, math.log10(0.04), 0.1, ".2g", "4em"),
        int_slider("p", p, 1, 50, "4em"),
        log_slider("block", block, math.log10(2), math.log10(n), 0.05, ".0f", "4em"),
    ]
    plot = _Plot()

    def refuse(e, d, pp, bb):
        return f"<p>Every block needs more rows than columns: block = {bb} ≤ p = {pp}.</p>" if bb <= pp else None

    def render(e, d, pp, bb):
        args = _block_door(e, d, n, pp, bb)
        _solve_ahead(*args)
        vals = _block_values(*args)
        return panel(_PANEL, vals, note=f"n = {n}"), plot.draw(e, d, n, pp, vals["smallest"], vals["price"])

    return explorer(controls, (key, key, int, whole), render, refuse)


def block_figure(p_values=(1, 10, 50), delta_values=(1e-3, 1e-9), eps=0.1, n=10**7):
    """Static companion of :func:`block_explorer`: sigma(n_s) / sigma(n) against n_s.

    One line per (p, delta): Theorem 3.4's sufficient sigma with n replaced
    by the smallest block n_s, divided by its value with all n rows (log
    axes).  Colour and marker code p, line style codes delta; eps matters little.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..paper import bounds

    fig = new_figure()
    ax = fig.add_subplot()
    for i, p in enumerate(p_values):
        grid = _grid(p, n)
        for j, delta in enumerate(delta_values):
            ax.plot(grid, bounds.sigma_b(eps, delta, grid, p) / bounds.sigma_b(eps, delta, n, p),
                    **series(i, j), label=rf"$p={p}$, $\delta={delta:g}$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"smallest block $n_s$")
    ax.set_ylabel(r"$\sigma(n_s) / \sigma(n)$")
    n_text = f"{n:,}".replace(",", r"\,")
    ax.set_title(rf"Noise price of blocks, $\varepsilon={eps:g}$, $n={n_text}$")
    plain_log_ticks(ax.yaxis)
    ax.legend(fontsize="small")
    return fig
