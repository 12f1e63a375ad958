"""Interactive explorers (ipywidgets) for the book, each with a static companion figure.

Every explorer returns its top-level widget (a ``VBox``): sliders, an ``HTML``
panel with the numbers, and an ``Image`` holding a matplotlib figure redrawn
when a slider moves.  Rendering the figure into an ``Image`` (rather than an
``Output`` area) keeps the last picture inside the saved widget state, so a
static page still shows it.  Every explorer has a static companion,
``<name>_figure(...)``, that returns a ``matplotlib.figure.Figure`` over
the whole parameter range for pages read without a kernel.

ipywidgets and matplotlib are imported inside the functions so that
``import dpmask`` stays light.  Other modules' explorers are added to this file
below the existing ones.
"""

from __future__ import annotations

import functools
import io
import math

import numpy as np

from ._validate import check_scalar

__all__ = [
    "noise_numbers",
    "noise_explorer",
    "noise_figure",
    "gq_numbers",
    "gq_explorer",
    "gq_figure",
    "block_numbers",
    "block_explorer",
    "block_figure",
    "inference_numbers",
    "inference_explorer",
    "inference_figure",
    "tightness_numbers",
    "tightness_explorer",
    "tightness_figure",
]


# ---------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------

def _new_figure(figsize=(6.4, 4.0)):
    """A pyplot-free Figure (no global state, nothing left open)."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def _plain_log_ticks(axis):
    """Write log-axis ticks as 2, 5, 10, 20 rather than powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def _fmt(value):
    """Format a number for the HTML panel, or an em dash when it does not exist."""
    if value is None or not np.isfinite(value):
        return "&mdash;"
    return f"{value:.5g}"


def _html_table(rows, note=""):
    """rows: (label, key, value); each value cell carries data-key for tests and scrapers."""
    cells = "".join(
        f"<tr><td style='padding-right:1em'>{label}</td>"
        f"<td data-key='{key}' style='text-align:right'>{_fmt(value)}</td></tr>"
        for label, key, value in rows
    )
    extra = f"<p>{note}</p>" if note else ""
    return f"<table>{cells}</table>{extra}"


def _slider_options(description_width="3em"):
    """Keyword arguments shared by every explorer's sliders (update on release only)."""
    import ipywidgets as w

    return {
        "continuous_update": False,
        "style": {"description_width": description_width},
        "layout": w.Layout(width="26em"),
    }


def _wire(sliders, update, panel, image):
    """Call *update* whenever a slider moves, draw once, and stack sliders, panel and plot."""
    import ipywidgets as w

    for slider in sliders:
        slider.observe(update, names="value")
    update()
    return w.VBox([w.VBox(list(sliders)), panel, image])


def _n_grid(p, n_max=10**6, num=60):
    """Whole numbers from p + 2 to n_max, evenly spread on a log scale."""
    lo = math.log10(p + 2)
    grid = np.unique(np.round(np.logspace(lo, math.log10(n_max), num)))
    return grid[grid > p + 1]


# Keeping up with a class: an explorer's update must come back well under a tenth of a second.
# Each explorer therefore (1) draws into one figure kept for its lifetime, changing line data
# and titles instead of building a new figure, with fixed margins (no layout pass) on a kept
# Agg canvas at 80 dpi, PNG-encoded with light compression; (2) caches the curves that do not
# depend on every slider (e.g. sigma against n does not depend on n) and its finished
# (panel, picture) pairs, keyed by the slider values, so revisiting a setting is free.


def _key(value):
    """A slider value as a cache key: 12 significant digits (log sliders compute 10**x)."""
    return float(f"{float(value):.12g}")


class _LivePlot:
    """One figure drawn again in place on every slider move."""

    def __init__(self, figsize=(6.4, 4.0), dpi=80, left=0.12, right=0.97, bottom=0.13, top=0.91):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.fig = Figure(figsize=figsize, dpi=dpi)
        self.fig.subplots_adjust(left=left, right=right, bottom=bottom, top=top)
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax = self.fig.add_subplot()

    def rescale(self):
        self.ax.relim()
        self.ax.autoscale_view()

    def title(self, text):
        # Plain text (no mathtext to parse for every new value) at a fixed height, which spares
        # matplotlib the search for a title position clear of the tick labels.
        self.ax.set_title(text, y=1.01)

    def png(self):
        from PIL import Image

        self.canvas.draw()
        width, height = self.canvas.get_width_height()
        img = Image.frombuffer("RGBA", (width, height), self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        buf = io.BytesIO()
        img.convert("RGB").save(buf, format="png", compress_level=1)
        return buf.getvalue()


# ---------------------------------------------------------------------------
# noise bounds: Theorem 3.2 (Setting A) against Theorem 3.4 (Setting B)
# ---------------------------------------------------------------------------

def noise_numbers(eps, delta, n, p):
    """The numbers the noise explorer shows, from :mod:`dpmask.bounds`.

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
    from . import bounds
    from .exact import analytic_gaussian_sigma

    from ._validate import check_n_p

    for name, value in (("eps", eps), ("delta", delta), ("n", n), ("p", p)):
        check_scalar(value, name)
    n_arr, p_arr = check_n_p(n, p)
    n, p = int(n_arr), int(p_arr)
    a_nec = bounds.sigma_a_necessary(eps, delta)
    a_suf = bounds.sigma_a_sufficient(eps, delta)
    b_suf = bounds.sigma_b(eps, delta, n, p)
    # the conservative variant's 2(n - p - 1) degrees of freedom vanish at n = p + 1: no value
    b_cor = bounds.sigma_b(eps, delta, n, p, corrected=True) if n > p + 1 else None
    return {
        "a_necessary": a_nec,
        "a_sufficient": a_suf,
        "b_sufficient": b_suf,
        "b_corrected": b_cor,
        "a_exact": analytic_gaussian_sigma(eps, delta),
        "ratio": a_suf / b_suf,
    }


@functools.lru_cache(maxsize=256)
def _noise_curves(eps, delta, p):
    """sigma against n for one (eps, delta, p): the n slider only moves the marker."""
    from . import bounds

    from .exact import analytic_gaussian_sigma

    grid = _n_grid(p)
    return (
        grid,
        bounds.sigma_b(eps, delta, grid, p),
        bounds.sigma_b(eps, delta, grid, p, corrected=True),
        bounds.sigma_a_sufficient(eps, delta),
        bounds.sigma_a_necessary(eps, delta),
        analytic_gaussian_sigma(eps, delta),
    )


class _NoisePlot(_LivePlot):
    def __init__(self):
        super().__init__(left=0.11, right=0.98)
        ax = self.ax
        (self.b,) = ax.plot([], [], color="C0", label=r"B, Theorem 3.4 ($2(n-p)$)")
        (self.b_cor,) = ax.plot([], [], color="C0", ls=":", label=r"B, conservative variant ($2(n-p-1)$)")
        self.a_suf = ax.axhline(1.0, color="C3", label="A, Thm 3.2 sufficient (criterion)")
        self.a_nec = ax.axhline(1.0, color="C3", ls="--", label="A, Thm 3.2 necessary (criterion only)")
        self.a_ex = ax.axhline(1.0, color="C1", ls="-.", label="A, exact for (ε, δ)-DP (analytic Gaussian)")
        (self.dot,) = ax.plot([], [], "o", color="C0")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"rows $n$")
        ax.set_ylabel(r"noise standard deviation $\sigma$")
        _plain_log_ticks(ax.yaxis)
        ax.legend(fontsize="small", loc="center right")

    def draw(self, eps, delta, n, p, sigma_n):
        grid, b, b_cor, a_suf, a_nec, a_ex = _noise_curves(eps, delta, p)
        self.b.set_data(grid, b)
        self.b_cor.set_data(grid, b_cor)
        self.a_suf.set_ydata([a_suf, a_suf])
        self.a_nec.set_ydata([a_nec, a_nec])
        self.a_ex.set_ydata([a_ex, a_ex])
        self.dot.set_data([n], [sigma_n])
        self.title(f"ε = {eps:.3g},  δ = {delta:.2g},  p = {p}")
        self.rescale()
        return self.png()


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
    import ipywidgets as w

    opts = _slider_options("3em")
    eps_s = w.FloatLogSlider(value=eps, base=10, min=-3, max=math.log10(0.99), step=0.01,
                             description="ε", readout_format=".3g", **opts)
    delta_s = w.FloatLogSlider(value=delta, base=10, min=-8, max=math.log10(0.04), step=0.05,
                               description="δ", readout_format=".2g", **opts)
    n_s = w.FloatLogSlider(value=n, base=10, min=1, max=6, step=0.05, description="n",
                           readout_format=".0f", **opts)
    p_s = w.IntSlider(value=p, min=1, max=50, description="p", **opts)
    panel = w.HTML()
    image = w.Image(format="png")
    plot = _NoisePlot()

    @functools.lru_cache(maxsize=256)
    def render(e, d, nn, pp):
        vals = noise_numbers(e, d, nn, pp)
        html = _html_table(
            [
                ("A necessary σ (Thm 3.2, the paper's criterion only)", "a_necessary", vals["a_necessary"]),
                ("A sufficient σ (Thm 3.2)", "a_sufficient", vals["a_sufficient"]),
                ("A exact σ for (ε, δ)-DP (analytic Gaussian)", "a_exact", vals["a_exact"]),
                ("B sufficient σ (Thm 3.4)", "b_sufficient", vals["b_sufficient"]),
                ("B conservative σ, 2(n−p−1)", "b_corrected", vals["b_corrected"]),
                ("ratio A sufficient / B (two bounds, not the saving)", "ratio", vals["ratio"]),
            ],
            note=f"n = {nn}",
        )
        return html, plot.draw(e, d, nn, pp, vals["b_sufficient"])

    def update(change=None):
        e, d, nn, pp = _key(eps_s.value), _key(delta_s.value), int(round(n_s.value)), int(p_s.value)
        if nn <= pp:
            panel.value = f"<p>Theorem 3.4 needs more rows than columns: n = {nn} ≤ p = {pp}.</p>"
            image.value = b""
            return
        panel.value, image.value = render(e, d, nn, pp)

    return _wire([eps_s, delta_s, n_s, p_s], update, panel, image)


def noise_figure(eps_values=(0.1, 0.01, 0.001), p_values=(1, 5, 20), delta=0.01, n_max=10**6):
    """Static companion of :func:`noise_explorer`: the ratio A/B against n.

    One line per (eps, p): Theorem 3.2's sufficient sigma divided by Theorem
    3.4's, for n from p + 2 to *n_max* (log axes).  Colour codes eps, line
    style codes p.

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
    from . import bounds

    fig = _new_figure(figsize=(7.6, 4.2))
    ax = fig.add_subplot()
    styles = ["-", "--", ":", "-."]
    for i, eps in enumerate(eps_values):
        a = bounds.sigma_a_sufficient(eps, delta)
        for j, p in enumerate(p_values):
            grid = _n_grid(p, n_max)
            ax.plot(grid, a / bounds.sigma_b(eps, delta, grid, p), color=f"C{i}",
                    ls=styles[j % len(styles)], label=rf"$\varepsilon={eps:g}$, $p={p}$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"rows $n$")
    ax.set_ylabel(r"Thm 3.2 sufficient $\sigma$ / Thm 3.4 $\sigma_0$")
    ax.set_title(rf"Ratio of the paper's two sufficient bounds, $\delta={delta:g}$")
    _plain_log_ticks(ax.yaxis)
    fig.legend(fontsize="small", loc="outside right upper")
    return fig


# ---------------------------------------------------------------------------
# Lemma 5.5: G_q(t2) / G_q(t1) against exp(|t1^2 - t2^2| / (2q))
# ---------------------------------------------------------------------------

def gq_numbers(q, t1, t2):
    """Exact log ratio ``log G_q(t2) - log G_q(t1)`` and Lemma 5.5's bound ``|t1**2 - t2**2| / (2q)``.

    Uses :func:`dpmask.gq.log_G`, imported here so this module loads before it.

    Parameters
    ----------
    q : float
        In [1, 1e12] (``dpmask.gq.Q_MAX``).
    t1, t2 : float
        In [0, 1e300] (``dpmask.gq.T_MAX``).  Outside these ranges, or for
        arrays, a ``ValueError`` names the argument.

    Returns
    -------
    dict
        ``log_ratio``, ``log_bound`` (``inf`` only where it exceeds the float
        range), ``ratio`` = exp(log_ratio), ``bound`` = exp(log_bound) (inf if
        it overflows) and ``holds`` (log_ratio <= log_bound, up to rounding).
    """
    from .gq import log_G, log_ratio_bound

    for name, value in (("q", q), ("t1", t1), ("t2", t2)):
        check_scalar(value, name)
    log_bound = float(log_ratio_bound(q, t1, t2))  # validates q, t1, t2 (names the argument)
    log_ratio = float(log_G(q, t2) - log_G(q, t1))
    # log_G has relative error <= 1e-12 in each term: allow that much on each side
    slack = 1e-12 * (abs(float(log_G(q, t2))) + abs(float(log_G(q, t1)))) + 1e-300
    return {
        "log_ratio": log_ratio,
        "log_bound": log_bound,
        "ratio": math.exp(log_ratio) if log_ratio < 700 else math.inf,
        "bound": math.exp(log_bound) if log_bound < 700 else math.inf,
        "holds": log_ratio <= log_bound * (1 + 1e-12) + slack,
    }


class _GqPlot(_LivePlot):
    def __init__(self):
        super().__init__(left=0.1, right=0.98)
        ax = self.ax
        (self.exact,) = ax.plot([], [], color="C0", label=r"$\ln G_q(t) - \ln G_q(t_1)$")
        (self.bound,) = ax.plot([], [], color="C1", ls="--", label=r"$|t^2 - t_1^2| / (2q)$ (Lemma 5.5)")
        self.t1_line = ax.axvline(0.0, color="0.6", lw=0.8)
        (self.dot,) = ax.plot([], [], "o", color="C0")
        ax.set_xlabel(r"$t$")
        ax.set_ylabel("log ratio")
        ax.legend(fontsize="small")

    def draw(self, q, t1, t2, log_ratio):
        from .gq import log_G

        t = np.linspace(0.0, max(t1, t2, 1.0) * 1.5, 200)
        self.exact.set_data(t, np.asarray(log_G(q, t)) - float(log_G(q, t1)))
        self.bound.set_data(t, np.abs(t**2 - t1**2) / (2.0 * q))
        self.t1_line.set_xdata([t1, t1])
        self.dot.set_data([t2], [log_ratio])
        self.title(f"q = {q},  t₁ = {t1:.3g}")
        self.rescale()
        return self.png()


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
    import ipywidgets as w

    opts = _slider_options("3em")
    q_s = w.IntSlider(value=q, min=1, max=500, description="q", **opts)
    t1_s = w.FloatSlider(value=t1, min=0.0, max=50.0, step=0.1, description="t₁",
                         **opts)
    t2_s = w.FloatSlider(value=t2, min=0.0, max=50.0, step=0.1, description="t₂",
                         **opts)
    panel = w.HTML()
    image = w.Image(format="png")
    plot = _GqPlot()

    @functools.lru_cache(maxsize=256)
    def render(qq, a, b):
        vals = gq_numbers(qq, a, b)
        html = _html_table(
            [
                ("exact ln G_q(t₂) − ln G_q(t₁)", "log_ratio", vals["log_ratio"]),
                ("Lemma 5.5 bound |t₁² − t₂²| / (2q)", "log_bound", vals["log_bound"]),
                ("exact ratio G_q(t₂)/G_q(t₁)", "ratio", vals["ratio"]),
                ("bound exp(|t₁² − t₂²| / (2q))", "bound", vals["bound"]),
            ],
            note="bound holds" if vals["holds"] else "<b>bound violated</b>",
        )
        return html, plot.draw(qq, a, b, vals["log_ratio"])

    def update(change=None):
        panel.value, image.value = render(int(q_s.value), _key(t1_s.value), _key(t2_s.value))

    return _wire([q_s, t1_s, t2_s], update, panel, image)


def gq_figure(q_values=(2, 5, 20, 100), t_max=1000.0):
    """Static companion of :func:`gq_explorer`: how much room Lemma 5.5 leaves.

    For each q, the exact :math:`\\ln G_q(t) - \\ln G_q(0)` (solid) and the
    bound :math:`t^2/(2q)` (dashed) against t on log-log axes, i.e. the
    explorer with t1 = 0.  For small t both grow like a multiple of t^2 (the
    exact one like :math:`t^2/(2(q+1))`), for large t the exact one grows only
    like t, so the bound is tight near 0 and loose far out.

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
    from .gq import log_G

    fig = _new_figure()
    ax = fig.add_subplot()
    t = np.logspace(-1.0, math.log10(t_max), 200)
    for i, q in enumerate(q_values):
        ax.plot(t, np.asarray(log_G(q, t)) - float(log_G(q, 0.0)), color=f"C{i}",
                label=rf"$q={q}$")
        ax.plot(t, t**2 / (2.0 * q), color=f"C{i}", ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"$t$")
    ax.set_ylabel(r"$\ln G_q(t) - \ln G_q(0)$")
    ax.set_title(r"Lemma 5.5: exact log ratio (solid) and bound $t^2/(2q)$ (dashed)", fontsize="medium")
    ax.legend(fontsize="small", loc="upper left")
    return fig


# ---------------------------------------------------------------------------
# block-diagonal masking (Section 4, chapter 8): the price in noise of a block size
# ---------------------------------------------------------------------------

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
        3.4 with all n rows), ``sigma_block`` (:func:`dpmask.bounds.sigma_b_block`,
        n replaced by n_s), ``price`` = sigma_block / sigma_full, and
        ``dense_flops_per_row`` ~ 8 n_s^2 / 3 + 2 n_s p (an explicit Haar
        block: Householder QR of an n_s x n_s Gaussian matrix, 4 n_s^3 / 3,
        forming its Q, another 4 n_s^3 / 3, then the product) against
        ``frame_flops_per_row`` ~ 6 p^2 (the frame identity: the Gram matrix of
        Z, the QR of M and the product U R), leading terms as in chapter 8.
    """
    from . import bounds
    from ._validate import check_int, check_n_p

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
    full = bounds.sigma_b(eps, delta, n, p)
    blk = bounds.sigma_b(eps, delta, n_s, p)  # = sigma_b_block on the balanced sizes (it uses the smallest)
    return {
        "blocks": k,
        "smallest": n_s,
        "sigma_full": full,
        "sigma_block": blk,
        "price": blk / full,
        "dense_flops_per_row": 8.0 * n_s**2 / 3.0 + 2.0 * n_s * p,
        "frame_flops_per_row": 6.0 * p**2,
    }


def _block_grid(p, n):
    grid = np.unique(np.round(np.logspace(math.log10(p + 1), math.log10(n), 60)))
    return grid[grid > p]


@functools.lru_cache(maxsize=256)
def _block_curve(eps, delta, n, p):
    """sigma(n_s) / sigma(n) against n_s: the block slider only moves the marker."""
    from . import bounds

    grid = _block_grid(p, n)
    return grid, bounds.sigma_b(eps, delta, grid, p) / bounds.sigma_b(eps, delta, n, p)


class _BlockPlot(_LivePlot):
    def __init__(self):
        super().__init__(left=0.1, right=0.98)
        ax = self.ax
        (self.curve,) = ax.plot([], [], color="C0")
        (self.dot,) = ax.plot([], [], "o", color="C3")
        ax.set_xscale("log")
        ax.set_xlabel(r"smallest block $n_s$")
        ax.set_ylabel(r"$\sigma(n_s) / \sigma(n)$, Theorem 3.4")

    def draw(self, eps, delta, n, p, smallest, price):
        self.curve.set_data(*_block_curve(eps, delta, n, p))
        self.dot.set_data([smallest], [price])
        self.title(f"price of blocks: ε = {eps:.3g},  δ = {delta:.2g},  n = {n},  p = {p}")
        self.rescale()
        return self.png()


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
    import ipywidgets as w

    opts = _slider_options("4em")
    eps_s = w.FloatLogSlider(value=eps, base=10, min=-3, max=0, step=0.05, description="ε",
                             readout_format=".3g", **opts)
    delta_s = w.FloatLogSlider(value=delta, base=10, min=-9, max=math.log10(0.04), step=0.1,
                               description="δ", readout_format=".2g", **opts)
    p_s = w.IntSlider(value=p, min=1, max=50, description="p", **opts)
    b_s = w.FloatLogSlider(value=block, base=10, min=math.log10(2), max=math.log10(n), step=0.05,
                           description="block", readout_format=".0f", **opts)
    panel = w.HTML()
    image = w.Image(format="png")
    plot = _BlockPlot()

    @functools.lru_cache(maxsize=256)
    def render(e, d, pp, bb):
        vals = block_numbers(e, d, n, pp, bb)
        html = _html_table(
            [
                ("blocks", "blocks", vals["blocks"]),
                ("smallest block n_s", "smallest", vals["smallest"]),
                ("σ, one Haar matrix (Thm 3.4)", "sigma_full", vals["sigma_full"]),
                ("σ, blocks (n_s for n)", "sigma_block", vals["sigma_block"]),
                ("price σ_block / σ", "price", vals["price"]),
                ("flops per row, Haar blocks", "dense_flops_per_row", vals["dense_flops_per_row"]),
                ("flops per row, frame identity", "frame_flops_per_row", vals["frame_flops_per_row"]),
            ],
            note=f"n = {n}",
        )
        return html, plot.draw(e, d, n, pp, vals["smallest"], vals["price"])

    def update(change=None):
        e, d, pp, bb = _key(eps_s.value), _key(delta_s.value), int(p_s.value), int(round(b_s.value))
        if bb <= pp:
            panel.value = f"<p>Every block needs more rows than columns: block = {bb} ≤ p = {pp}.</p>"
            image.value = b""
            return
        panel.value, image.value = render(e, d, pp, bb)

    return _wire([eps_s, delta_s, p_s, b_s], update, panel, image)


def block_figure(p_values=(1, 10, 50), delta_values=(1e-3, 1e-9), eps=0.1, n=10**7):
    """Static companion of :func:`block_explorer`: sigma(n_s) / sigma(n) against n_s.

    One line per (p, delta): Theorem 3.4's sufficient sigma with n replaced
    by the smallest block n_s, divided by its value with all n rows (log
    axes).  Colour codes p, line style codes delta; eps matters little.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from . import bounds

    fig = _new_figure()
    ax = fig.add_subplot()
    styles = ["-", "--", ":", "-."]
    for i, p in enumerate(p_values):
        grid = _block_grid(p, n)
        for j, delta in enumerate(delta_values):
            ax.plot(grid, bounds.sigma_b(eps, delta, grid, p) / bounds.sigma_b(eps, delta, n, p),
                    color=f"C{i}", ls=styles[j % len(styles)], label=rf"$p={p}$, $\delta={delta:g}$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"smallest block $n_s$")
    ax.set_ylabel(r"$\sigma(n_s) / \sigma(n)$")
    n_text = f"{n:,}".replace(",", r"\,")
    ax.set_title(rf"Noise price of blocks, $\varepsilon={eps:g}$, $n={n_text}$")
    _plain_log_ticks(ax.yaxis)
    ax.legend(fontsize="small")
    return fig


# ---------------------------------------------------------------------------
# chapter 6: error of a slope fitted from a release, Setting A against Setting B
# ---------------------------------------------------------------------------

# Second moments of the chapter's example: z uniform on [-1, 1], y = 0.5 z + e, e uniform on [-0.5, 0.5].
_SLOPE_MOMENTS = np.array([[1 / 3, 1 / 6], [1 / 6, 1 / 6]])


def _slope_rmse(sigma, n):
    """First-order RMSE of the corrected slope (privacy noise only), Proposition 6.3 at E[G]."""
    from .inference import ols_from_gram

    sigma, n = np.broadcast_arrays(np.asarray(sigma, float), np.asarray(n, float))
    out = np.empty(sigma.shape)
    for idx in np.ndindex(sigma.shape):
        nn, s = int(n[idx]), float(sigma[idx])
        G = nn * _SLOPE_MOMENTS + nn * s**2 * np.eye(2)
        out[idx] = ols_from_gram(G, nn, 1, s, conditional=True).se[0]
    return out if out.ndim else float(out)


@functools.lru_cache(maxsize=1024)
def _analytic_sigma(eps, delta):
    from .exact import analytic_gaussian_sigma

    return float(analytic_gaussian_sigma(eps, delta))


_SIGMA_B2 = {}


def _sigma_b2(eps, delta, n):
    """Theorem 3.4's sigma for p = 2, remembered: the explorer asks for n = 10^9 at every move,
    and its curves have already computed it at every whole decade of n."""
    from . import bounds

    key = (eps, delta, n)
    if key not in _SIGMA_B2:
        if len(_SIGMA_B2) > 8192:
            _SIGMA_B2.clear()
        _SIGMA_B2[key] = float(bounds.sigma_b(eps, delta, n, 2))
    return _SIGMA_B2[key]


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
    from ._validate import check_delta, check_eps, check_int, check_positive

    eps = _single(check_eps(eps), "eps")
    delta = _single(check_delta(delta), "delta")
    n = int(_single(check_int(n, "n", minimum=3), "n"))
    target = _single(check_positive(target, "target"), "target")
    try:
        with np.errstate(over="raise", divide="raise", invalid="raise"):
            s_a = _analytic_sigma(eps, delta)
            s_b = _sigma_b2(eps, delta, n)
            big = 10**9
            rows_a = big * (_slope_rmse(s_a, big) / target) ** 2
            rows_b = big * (_slope_rmse(_sigma_b2(eps, delta, big), big) / target) ** 2
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
_INFERENCE_GRID = np.logspace(3, 10, 8)


@functools.lru_cache(maxsize=256)
def _inference_curves(eps, delta):
    """Error of the slope against n under both settings: the n slider only moves the marker."""
    from . import bounds

    grid = _INFERENCE_GRID
    s_b = bounds.sigma_b(eps, delta, grid, 2)
    for n, value in zip(grid, s_b):
        _SIGMA_B2[(eps, delta, int(n))] = float(value)
    return grid, _slope_rmse(_analytic_sigma(eps, delta), grid), _slope_rmse(s_b, grid)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten(value, _pos=None):
    """10⁵ in plain text (no mathtext to lay out at every draw)."""
    if value <= 0:
        return ""
    k = math.log10(value)
    if abs(k - round(k)) > 1e-9:
        return f"{value:g}"
    return "10" + str(int(round(k))).translate(_SUPERSCRIPT)


class _InferencePlot(_LivePlot):
    def __init__(self):
        super().__init__(left=0.12, right=0.98)
        ax = self.ax
        # Plain-text labels: mathtext would be laid out again at every move.
        (self.a,) = ax.plot([], [], color="C3", label="Setting A, σ of the analytic Gaussian")
        (self.b,) = ax.plot([], [], color="C0", label="Setting B, σ of Theorem 3.4")
        self.n_line = ax.axvline(1e6, color="0.6", lw=0.8)
        ax.axhline(0.05, color="0.8", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rows n")
        ax.set_ylabel("first-order RMSE of the slope")
        # Seven decades of n and as many of error: minor ticks would be a hundred more artists
        # to draw at every move.
        from matplotlib.ticker import FuncFormatter, NullLocator

        for axis in (ax.xaxis, ax.yaxis):
            axis.set_minor_locator(NullLocator())
            axis.set_major_formatter(FuncFormatter(_power_of_ten))
        ax.legend(fontsize="small")

    def draw(self, eps, delta, n):
        grid, rmse_a, rmse_b = _inference_curves(eps, delta)
        self.a.set_data(grid, rmse_a)
        self.b.set_data(grid, rmse_b)
        self.n_line.set_xdata([n, n])
        self.title(f"ε = {eps:.3g},  δ = {delta:.2g},  p = 2")
        self.rescale()
        return self.png()


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
    import ipywidgets as w

    opts = _slider_options("3em")
    eps_s = w.FloatLogSlider(value=eps, base=10, min=-3, max=0, step=0.01, description="ε",
                             readout_format=".3g", **opts)
    delta_s = w.FloatLogSlider(value=delta, base=10, min=-8, max=-1, step=0.05, description="δ",
                               readout_format=".2g", **opts)
    n_s = w.FloatLogSlider(value=n, base=10, min=3, max=10, step=0.1, description="n",
                           readout_format=".3g", **opts)
    panel = w.HTML()
    image = w.Image(format="png")
    plot = _InferencePlot()

    @functools.lru_cache(maxsize=256)
    def render(e, d, nn):
        vals = inference_numbers(e, d, nn)
        html = _html_table(
            [
                ("σ_A (analytic Gaussian)", "sigma_a", vals["sigma_a"]),
                ("σ_0 (Theorem 3.4, p = 2)", "sigma_b", vals["sigma_b"]),
                ("RMSE of slope, A", "rmse_a", vals["rmse_a"]),
                ("RMSE of slope, B", "rmse_b", vals["rmse_b"]),
                ("rows for RMSE 0.05, A", "rows_a", vals["rows_a"]),
                ("rows for RMSE 0.05, B", "rows_b", vals["rows_b"]),
                ("ratio of rows A / B", "rows_ratio", vals["rows_ratio"]),
            ],
            note=f"n = {nn}; first-order errors, unreliable where they exceed the slope (0.5)",
        )
        return html, plot.draw(e, d, nn)

    def update(change=None):
        panel.value, image.value = render(_key(eps_s.value), _key(delta_s.value), int(round(n_s.value)))

    return _wire([eps_s, delta_s, n_s], update, panel, image)


def inference_figure(eps_values=None, delta_values=(1e-3, 1e-6), target=0.05):
    """Static companion of :func:`inference_explorer`: rows needed against eps.

    Rows for a first-order slope RMSE of *target* in chapter 6's example,
    under Setting A's and Setting B's noise, one line per (setting, delta).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if eps_values is None:
        eps_values = np.logspace(-2, 0, 13)
    fig = _new_figure()
    ax = fig.add_subplot()
    styles = ["-", "--", ":"]
    for j, delta in enumerate(delta_values):
        rows = [inference_numbers(float(e), delta, 10**6, target) for e in eps_values]
        ax.loglog(eps_values, [r["rows_a"] for r in rows], color="C3", ls=styles[j % 3],
                  label=rf"A, $\delta={delta:g}$")
        ax.loglog(eps_values, [r["rows_b"] for r in rows], color="C0", ls=styles[j % 3],
                  label=rf"B, $\delta={delta:g}$")
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(f"rows for slope RMSE {target:g}")
    ax.set_title("Rows a regression needs, Setting A against Setting B")
    ax.legend(fontsize="small")
    return fig


# ---------------------------------------------------------------------------
# tightness: the paper's bounds against exact curves and lower bounds (chapter 7)
# ---------------------------------------------------------------------------

_TIGHT_P = (1, 2, 3, 5, 8, 12, 20, 30, 50)


def tightness_numbers(eps, delta, n, p):
    """The numbers the tightness explorer shows, from :mod:`dpmask.exact` and :mod:`dpmask.audit`.

    Parameters
    ----------
    eps : float
        eps > 0.
    delta : float
        0 < delta < 1.
    n, p : int
        Rows and columns, n > p + 1.

    Returns
    -------
    dict
        ``a_sufficient`` (Theorem 3.2; NaN outside eps < 1, delta < 1/2),
        ``a_criterion`` (the exact sigma for the paper's criterion),
        ``analytic`` (the exact Setting A sigma, Balle and Wang),
        ``b_sufficient`` and ``b_corrected`` (Theorem 3.4, as printed and with
        2(n - p - 1)), ``b_lower`` (a sigma below which Setting B fails; exact
        when p = 1) and ``gap`` = b_sufficient / b_lower.
    """
    from . import audit, bounds, exact

    ok_a = eps < 1 and delta < 0.5
    lower = audit.sigma_lower_bound(eps, delta, n, p)
    b_suf = bounds.sigma_b(eps, delta, n, p)
    return {
        "a_sufficient": bounds.sigma_a_sufficient(eps, delta) if ok_a else float("nan"),
        "a_criterion": exact.setting_a_criterion_sigma(eps, delta),
        "analytic": exact.analytic_gaussian_sigma(eps, delta),
        "b_sufficient": b_suf,
        "b_corrected": bounds.sigma_b(eps, delta, n, p, corrected=True),
        "b_lower": lower,
        "gap": b_suf / lower,
    }


def _tightness_curves(eps, delta, n, p_values):
    from . import audit, bounds

    ps = np.array([pp for pp in p_values if pp < n - 1], float)
    # the projection statistic gives the larger of the two audit bounds on this range
    lower = audit.sigma_lower_bound(eps, delta, n, ps, statistic="projection")
    return ps, bounds.sigma_b(eps, delta, n, ps), lower


# Audit lower bounds already computed, per (eps, delta, n): {statistic: {p: sigma}}.  Each is
# a nested root search (exact._worst_sigma) whose cost hardly depends on how many points it
# solves at once, so every update asks for all it lacks in one call.
_TIGHT_LOWER = {}
_TIGHT_LOWER_MAX = 512


def _tightness_lower(eps, delta, n, need):
    """Audit lower bounds for the (statistic, p) pairs in *need*, at (eps, delta, n)."""
    from .audit import _stat_params
    from .exact import _worst_sigma

    store = _TIGHT_LOWER.pop((eps, delta, n), None) or {"projection": {}, "frobenius": {}}
    _TIGHT_LOWER[(eps, delta, n)] = store  # most recently used last
    while len(_TIGHT_LOWER) > _TIGHT_LOWER_MAX:
        del _TIGHT_LOWER[next(iter(_TIGHT_LOWER))]
    missing = sorted({(st, p) for st, p in need if p not in store[st]})
    if missing:
        df, rows, bound = (np.array(v, float) for v in zip(*(_stat_params(st, float(n), float(p)) for st, p in missing)))
        k = len(missing)
        sigma = np.atleast_1d(_worst_sigma(np.full(k, eps), np.full(k, delta), df, rows, bound))
        for (st, p), value in zip(missing, sigma):
            store[st][p] = float(value)
    return [store[st][p] for st, p in need]


def _tightness_need(n, p):
    """The p values on the plot, and the (statistic, p) lower bounds one setting needs."""
    ps = [q for q in sorted(set(_TIGHT_P) | {p}) if q < n - 1]
    return ps, [("projection", q) for q in ps] + [("frobenius", p)]


def _tightness_ready(eps, delta, n, p):
    """True when every lower bound for this setting is already known."""
    store = _TIGHT_LOWER.get((eps, delta, n))
    return store is not None and all(q in store[st] for st, q in _tightness_need(n, p)[1])


def _tightness_state(eps, delta, n, p, lower=True):
    """The panel's numbers (as :func:`tightness_numbers`) and the plot's bracket, sharing one search.

    With ``lower=False`` the audit lower bound (the slow part) is left out: NaN in the panel,
    no lower curve.
    """
    from . import bounds, exact

    ps, need = _tightness_need(n, p)
    if lower:
        found = _tightness_lower(eps, delta, n, need)
        proj = dict(zip(ps, found[:-1]))
        b_lower = max(proj[p], found[-1])
    else:
        proj, b_lower = None, float("nan")
    upper = bounds.sigma_b(eps, delta, n, np.array(ps, float))
    b_suf = float(upper[ps.index(p)])
    analytic = _analytic_sigma(eps, delta)
    vals = {
        "a_sufficient": bounds.sigma_a_sufficient(eps, delta) if eps < 1 and delta < 0.5 else float("nan"),
        "a_criterion": exact.setting_a_criterion_sigma(eps, delta),
        "analytic": analytic,
        "b_sufficient": b_suf,
        "b_corrected": bounds.sigma_b(eps, delta, n, p, corrected=True),
        "b_lower": b_lower,
        "gap": b_suf / b_lower,
    }
    lower_curve = None if proj is None else np.array([proj[q] for q in ps])
    return vals, (np.array(ps, float), upper, lower_curve, analytic)


class _TightnessPlot(_LivePlot):
    def __init__(self):
        super().__init__(left=0.11, right=0.98)
        ax = self.ax
        self.fill = None
        (self.upper,) = ax.plot([], [], "o-", color="C0", label="B, Theorem 3.4 (sufficient)")
        (self.lower,) = ax.plot([], [], "s--", color="C2", label="B, lower bound (exact at p = 1)")
        self.analytic = ax.axhline(1.0, color="C3", label="A, exact (analytic Gaussian)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"columns $p$")
        ax.set_ylabel(r"noise standard deviation $\sigma$")
        _plain_log_ticks(ax.xaxis)
        _plain_log_ticks(ax.yaxis)
        from matplotlib.patches import Patch

        handles = [Patch(color="C0", alpha=0.15, label="where the truth lies"), self.upper, self.lower, self.analytic]
        ax.legend(handles=handles, fontsize="small")

    def draw(self, eps, delta, n, curves):
        ps, upper, lower, analytic = curves
        if self.fill is not None:
            self.fill.remove()
            self.fill = None
        if lower is not None:
            self.fill = self.ax.fill_between(ps, lower, upper, color="C0", alpha=0.15)
            self.lower.set_data(ps, lower)
        else:
            self.lower.set_data([], [])
        self.upper.set_data(ps, upper)
        self.analytic.set_ydata([analytic, analytic])
        self.title(f"ε = {eps:.3g},  δ = {delta:.2g},  n = {n}")
        self.rescale()
        return self.png()


def tightness_explorer(eps=0.1, delta=0.01, n=100, p=5):
    """Sliders for eps, delta, n and p: the bracket around Setting B's true sigma.

    The panel lists the Setting A values (Theorem 3.2, the paper's criterion
    solved exactly, the exact analytic Gaussian) and the Setting B bracket
    (Theorem 3.4 above, the best audit lower bound below, see
    :func:`tightness_numbers`).  The plot shows the bracket against p.

    The audit lower bound is an exact nested search of a few hundred
    milliseconds; after a slider move the panel and plot appear at once
    without it, and a worker thread fills it in (settings already seen, and
    the first drawing, are immediate and complete).

    Parameters
    ----------
    eps, delta, n, p : initial slider values (eps in [1e-3, 10], delta in
        [1e-10, 0.1], n in [10, 1e5], p in [1, 50]).

    Returns
    -------
    ipywidgets.VBox
        children: the sliders (in a ``VBox``), the ``HTML`` panel and the
        ``Image`` with the plot.
    """
    import ipywidgets as w

    opts = _slider_options("3em")
    eps_s = w.FloatLogSlider(value=eps, base=10, min=-3, max=1, step=0.05, description="ε",
                             readout_format=".3g", **opts)
    delta_s = w.FloatLogSlider(value=delta, base=10, min=-10, max=-1, step=0.1, description="δ",
                               readout_format=".2g", **opts)
    n_s = w.FloatLogSlider(value=n, base=10, min=1, max=5, step=0.1, description="n",
                           readout_format=".0f", **opts)
    p_s = w.IntSlider(value=p, min=1, max=50, description="p", **opts)
    import concurrent.futures
    import threading

    panel = w.HTML()
    image = w.Image(format="png")
    plot = _TightnessPlot()
    lock = threading.Lock()  # one figure, drawn by the kernel's thread and by the worker
    job = {"generation": 0, "future": None, "pool": None}

    def page(e, d, nn, pp, lower):
        vals, curves = _tightness_state(e, d, nn, pp, lower=lower)
        html = _html_table(
            [
                ("A sufficient σ (Thm 3.2)", "a_sufficient", vals["a_sufficient"]),
                ("A, paper's criterion exactly", "a_criterion", vals["a_criterion"]),
                ("A exact σ (analytic Gaussian)", "analytic", vals["analytic"]),
                ("B sufficient σ (Thm 3.4)", "b_sufficient", vals["b_sufficient"]),
                ("B sufficient σ, conservative 2(n−p−1)", "b_corrected", vals["b_corrected"]),
                ("B lower bound σ" + (" (exact)" if pp == 1 else ""), "b_lower", vals["b_lower"]),
                ("gap Thm 3.4 / lower bound", "gap", vals["gap"]),
            ],
            note=f"n = {nn}, p = {pp}" + ("" if lower else "; computing the lower bound (an exact search)…"),
        )
        with lock:
            return html, plot.draw(e, d, nn, curves)

    render = functools.lru_cache(maxsize=256)(lambda e, d, nn, pp: page(e, d, nn, pp, True))

    def update(change=None):
        e, d, nn, pp = _key(eps_s.value), _key(delta_s.value), int(round(n_s.value)), int(p_s.value)
        job["generation"] += 1
        generation = job["generation"]
        if nn <= pp + 1:
            panel.value = f"<p>Need n > p + 1 rows: n = {nn}, p = {pp}.</p>"
            image.value = b""
            return
        if change is None or _tightness_ready(e, d, nn, pp):
            panel.value, image.value = render(e, d, nn, pp)
            return
        # The audit lower bound takes a few hundred ms (exact._worst_sigma): answer the slider at
        # once with everything else, and fill in the bracket from a worker thread.
        panel.value, image.value = page(e, d, nn, pp, False)

        def finish():
            if job["generation"] != generation:
                return  # the slider moved on: skip a setting nobody looks at any more
            try:
                html, png = render(e, d, nn, pp)
            except Exception as err:  # shown, not lost in the worker thread
                html, png = f"<p>The lower bound failed: {type(err).__name__}: {err}</p>", image.value
            if job["generation"] == generation:
                panel.value, image.value = html, png

        if job["pool"] is None:
            job["pool"] = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpmask-tightness")
        job["future"] = job["pool"].submit(finish)

    box = _wire([eps_s, delta_s, n_s, p_s], update, panel, image)
    box._dpmask_pending = lambda: job["future"]  # for benchmarks/bench_widgets.py and tests
    return box


def tightness_figure(eps_values=(0.1, 0.01, 0.001), delta=0.01, n_values=(100, 10000),
                     p_values=(1, 2, 5, 10, 20)):
    """Static companion of :func:`tightness_explorer`: the bracket against p.

    One panel per n; for each eps, Theorem 3.4's sufficient sigma (solid) and
    the audit lower bound (dashed, exact at p = 1), with the exact unmasked
    sigma (analytic Gaussian, dotted) for reference.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from . import exact

    fig = _new_figure(figsize=(8.8, 4.0))
    axes = fig.subplots(1, len(n_values), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, n in zip(axes, n_values):
        for i, eps in enumerate(eps_values):
            ps, upper, lower = _tightness_curves(eps, delta, n, p_values)
            ax.plot(ps, upper, "-", color=f"C{i}", label=rf"Thm 3.4, $\varepsilon={eps:g}$")
            ax.plot(ps, lower, "--", color=f"C{i}", label=rf"lower bound, $\varepsilon={eps:g}$")
            ax.axhline(exact.analytic_gaussian_sigma(eps, delta), color=f"C{i}", ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"columns $p$")
        ax.set_title(rf"$n={n}$, $\delta={delta:g}$")
        _plain_log_ticks(ax.xaxis)
    axes[0].set_ylabel(r"noise standard deviation $\sigma$")
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize="small", loc="outside right upper")
    return fig


# ---------------------------------------------------------------------------
# chapter 9: masking against the Gaussian mechanism on X^T X (first-order errors)
# ---------------------------------------------------------------------------

__all__ += ["rivals_numbers", "rivals_explorer", "rivals_figure"]

_RIVAL_ESTIMANDS = {"ols": "OLS slopes", "corr": "correlations", "angle": "leading PC angle (rad)"}
_RIVAL_KINDS = ("A", "B0", "Blow", "gram")
_RIVAL_PLAIN = {"A": "A, σ_A", "B0": "B, σ_0 (Thm 3.4)", "Blow": "B, σ_low", "gram": "Gram mechanism, τ"}
_RIVAL_LABELS = {
    "A": r"A, $\sigma_A$",
    "B0": r"B, $\sigma_0$ (Thm 3.4)",
    "Blow": r"B, $\sigma_{\mathrm{low}}$",
    "gram": r"Gram mechanism, $\tau$",
}


@functools.lru_cache(maxsize=16)
def _rival_coefficients(p):
    from . import rivals

    return rivals.error_coefficients(rivals.example_moments(p))


@functools.lru_cache(maxsize=256)
def _rival_sigmas(eps, delta, p):
    """(tau, sigma_A) for one (eps, delta, p): the only root solves the explorer needs."""
    from . import rivals
    from .exact import analytic_gaussian_sigma

    return float(rivals.sigma_gram(eps, delta, p)), float(analytic_gaussian_sigma(eps, delta))


def _rival_rmse(kind, eps, delta, n, p, estimand):
    """First-order RMSE of *estimand* for one mechanism, vectorised over n."""
    from . import bounds, rivals

    b, c = _rival_coefficients(int(p))[estimand]
    tau, s_a = _rival_sigmas(float(eps), float(delta), int(p))
    n = np.asarray(n, dtype=float)
    if kind == "gram":
        return tau * math.sqrt(c / 2) / n
    if kind == "A":
        s = s_a
    elif kind == "B0":
        s = np.asarray(bounds.sigma_b(eps, delta, np.round(n), p))
    else:  # the large-n projection bound (tau^2 / 2n)^(1/4) of dpmask.rivals.sigma_low_large_n
        s = rivals._sigma_low_from_tau(tau, n)
    return np.sqrt((b * s**2 + c * s**4) / n)


@functools.lru_cache(maxsize=1024)
def _rival_rows(kind, eps, delta, p, estimand, target):
    """Rows at which the first-order RMSE falls to *target* (closed form or a few iterations)."""
    from scipy.optimize import brentq

    from . import bounds

    b, c = _rival_coefficients(p)[estimand]
    tau, s_a = _rival_sigmas(eps, delta, p)
    if kind == "gram":
        return tau * math.sqrt(c / 2) / target
    if kind == "A":
        return (b * s_a**2 + c * s_a**4) / target**2
    if kind == "B0":  # sigma_0 changes by well under 1 % beyond 10^9 rows: evaluate it there at most
        n = 10.0**6
        for _ in range(3):  # the third step changes n by far less than 0.1 % (sigma_0 is nearly flat in n)
            s = bounds.sigma_b(eps, delta, int(min(max(round(n), p + 2), 10**9)), p)
            n = (b * s**2 + c * s**4) / target**2
        return float(n)
    # sigma_low = (tau^2/2n)^(1/4): RMSE^2 = c tau^2 x^4 / 2 + b tau x^3 / sqrt(2), x = n^(-1/2)
    f = lambda x: c * tau**2 * x**4 / 2 + b * tau * x**3 / math.sqrt(2) - target**2
    if f(1.0 / math.sqrt(p + 2)) <= 0 and f(1.0) <= 0:
        return float(p + 2)  # the target is met already at the fewest rows the panel allows
    x = brentq(f, 0.0, 1.0 / math.sqrt(p + 2) if f(1.0 / math.sqrt(p + 2)) > 0 else 1.0, xtol=1e-300, rtol=1e-13)
    return max(float(p + 2), 1.0 / x**2)


def _single(arr, name):
    """A validated 0-d array as a float; an array argument is refused by name."""
    return float(check_scalar(arr, name))


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
    from . import bounds
    from ._validate import check_delta, check_eps, check_int, check_positive

    eps = _single(check_eps(eps), "eps")
    delta = _single(check_delta(delta), "delta")
    p = int(_single(check_int(p, "p", minimum=2, maximum=6), "p"))
    n = int(_single(check_int(n, "n", minimum=p + 2), "n"))
    if not isinstance(estimand, str) or estimand not in _RIVAL_ESTIMANDS:
        raise ValueError(f"estimand must be one of {tuple(_RIVAL_ESTIMANDS)}, got {estimand!r}")
    target = _single(check_positive(target, "target"), "target")
    try:
        with np.errstate(over="raise", divide="raise", invalid="raise"):
            tau, s_a = _rival_sigmas(eps, delta, p)
            out = {
                "tau": tau,
                "sigma_a": s_a,
                "sigma_0": bounds.sigma_b(eps, delta, n, p),
                "sigma_low": math.sqrt(tau / math.sqrt(2 * n)),
            }
            gram = float(_rival_rmse("gram", eps, delta, n, p, estimand))
            for kind in _RIVAL_KINDS:
                rmse = float(_rival_rmse(kind, eps, delta, n, p, estimand))
                out[f"rmse_{kind}"] = rmse
                out[f"ratio_{kind}"] = rmse / gram
                out[f"rows_{kind}"] = float(_rival_rows(kind, eps, delta, p, estimand, target))
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


_RIVAL_GRID = np.logspace(3, 8, 16)


@functools.lru_cache(maxsize=64)
def _rival_curves(eps, delta, p, estimand):
    return {k: _rival_rmse(k, eps, delta, _RIVAL_GRID, p, estimand) for k in _RIVAL_KINDS}


class _RivalsPlot(_LivePlot):
    """One figure drawn once; an update only moves line data (no layout pass, no new artists)."""

    def __init__(self):
        super().__init__(figsize=(5.6, 3.4), dpi=72, left=0.15, right=0.97, bottom=0.14, top=0.91)
        self.lines = {}
        for i, kind in enumerate(_RIVAL_KINDS):
            (self.lines[kind],) = self.ax.loglog(_RIVAL_GRID, np.ones_like(_RIVAL_GRID), color=f"C{i}",
                                                 label=_RIVAL_PLAIN[kind])
        self.vline = self.ax.axvline(1e5, color="0.6", lw=0.8)
        self.ax.set_xlabel("rows n")
        self.ax.set_xlim(_RIVAL_GRID[0], _RIVAL_GRID[-1])
        # tick labels without mathtext (parsing "$10^{k}$" on every draw is the slow part)
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

        for axis in (self.ax.xaxis, self.ax.yaxis):
            axis.set_major_locator(LogLocator(base=10, numticks=12))
            axis.set_major_formatter(FuncFormatter(_power_of_ten))
            axis.set_minor_locator(NullLocator())
            axis.set_minor_formatter(NullFormatter())
        self.ax.legend(fontsize="x-small", loc="lower left")

    def render(self, eps, delta, n, p, estimand):
        curves = _rival_curves(float(eps), float(delta), int(p), estimand)
        for kind in _RIVAL_KINDS:
            self.lines[kind].set_ydata(curves[kind])
        lo = min(float(np.min(c)) for c in curves.values())
        hi = max(float(np.max(c)) for c in curves.values())
        self.ax.set_ylim(lo / 2, hi * 2)
        self.vline.set_xdata([n, n])
        self.ax.set_ylabel(f"first-order RMSE, {_RIVAL_ESTIMANDS[estimand]}")
        self.ax.set_title(f"ε = {eps:.3g}, δ = {delta:.2g}, p = {p}", fontsize="medium")
        return self.png()


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
    import ipywidgets as w

    opts = _slider_options("4.5em")
    eps_s = w.FloatLogSlider(value=eps, base=10, min=-3, max=0, step=0.01, description="ε",
                             readout_format=".3g", **opts)
    delta_s = w.FloatLogSlider(value=delta, base=10, min=-8, max=-1, step=0.05, description="δ",
                               readout_format=".2g", **opts)
    n_s = w.FloatLogSlider(value=n, base=10, min=3, max=8, step=0.1, description="n",
                           readout_format=".3g", **opts)
    p_s = w.IntSlider(value=p, min=2, max=6, step=1, description="p", **opts)
    est_s = w.Dropdown(options=[(v, k) for k, v in _RIVAL_ESTIMANDS.items()], value=estimand,
                       description="estimand", style={"description_width": "4.5em"})
    panel = w.HTML()
    image = w.Image(format="png")
    plot = _RivalsPlot()

    def update(change=None):
        e, d, nn, pp, est = float(eps_s.value), float(delta_s.value), int(round(n_s.value)), int(p_s.value), est_s.value
        vals = rivals_numbers(e, d, nn, pp, est)
        rows = [
            ("τ, Gram noise sd (diagonal; not a data σ)", "tau", vals["tau"]),
            ("σ_A (Setting A)", "sigma_a", vals["sigma_a"]),
            ("σ_0 (Theorem 3.4)", "sigma_0", vals["sigma_0"]),
            ("σ_low (large-n lower bound)", "sigma_low", vals["sigma_low"]),
        ]
        for kind, name in [("A", "A at σ_A"), ("B0", "B at σ_0"), ("Blow", "B at σ_low"), ("gram", "Gram mechanism")]:
            rows.append((f"RMSE, {name}", f"rmse_{kind}", vals[f"rmse_{kind}"]))
        for kind, name in [("A", "A"), ("B0", "B at σ_0"), ("Blow", "B at σ_low")]:
            rows.append((f"RMSE ratio {name} / Gram", f"ratio_{kind}", vals[f"ratio_{kind}"]))
        for kind, name in [("A", "A"), ("B0", "B at σ_0"), ("Blow", "B at σ_low"), ("gram", "Gram")]:
            rows.append((f"rows for RMSE 0.01, {name}", f"rows_{kind}", vals[f"rows_{kind}"]))
        panel.value = _html_table(rows, note=f"n = {nn}, p = {pp}; first-order errors of chapter 9's example data")
        image.value = plot.render(e, d, nn, pp, est)

    return _wire([eps_s, delta_s, n_s, p_s, est_s], update, panel, image)


def rivals_figure(eps_values=(0.1, 0.01, 0.001), delta=0.001, p_values=(2, 5), target=0.01):
    """Static companion of :func:`rivals_explorer`: rows needed against eps.

    Rows at which the first-order RMSE of the OLS slopes reaches *target*,
    for the four mechanisms, one panel per p.

    Returns
    -------
    matplotlib.figure.Figure
    """
    eps_grid = np.logspace(math.log10(min(eps_values)), math.log10(max(eps_values)), 13)
    fig = _new_figure(figsize=(8.8, 3.8))
    axes = np.atleast_1d(fig.subplots(1, len(p_values), sharey=True))
    for ax, p in zip(axes, p_values):
        for i, kind in enumerate(_RIVAL_KINDS):
            rows = [_rival_rows(kind, float(e), float(delta), int(p), "ols", float(target)) for e in eps_grid]
            ax.loglog(eps_grid, rows, color=f"C{i}", label=_RIVAL_LABELS[kind])
        ax.set_xlabel(r"$\varepsilon$")
        ax.set_title(rf"$p={p}$, $\delta={delta:g}$", fontsize="medium")
    axes[0].set_ylabel(f"rows for slope RMSE {target:g}")
    axes[0].legend(fontsize="small")
    return fig
