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

import io
import math

import numpy as np

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


def _png_bytes(fig, dpi=90):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


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
        Rows and columns, n > p >= 1.

    Returns
    -------
    dict
        ``a_necessary`` and ``a_sufficient`` (Theorem 3.2, equations
        (DP-boundA.nec) and (DP-boundA.suf)), ``b_sufficient`` (the root of
        Theorem 3.4's g), ``b_corrected`` (the same with 2(n - p - 1) in place
        of 2(n - p); NaN when n = p + 1) and ``ratio`` = a_sufficient /
        b_sufficient, the last column of the paper's Table 1.
    """
    from . import bounds

    a_nec = bounds.sigma_a_necessary(eps, delta)
    a_suf = bounds.sigma_a_sufficient(eps, delta)
    b_suf = bounds.sigma_b(eps, delta, n, p)
    b_cor = bounds.sigma_b(eps, delta, n, p, corrected=True) if n > p + 1 else float("nan")
    return {
        "a_necessary": a_nec,
        "a_sufficient": a_suf,
        "b_sufficient": b_suf,
        "b_corrected": b_cor,
        "ratio": a_suf / b_suf,
    }


def _noise_plot(eps, delta, n, p):
    from . import bounds

    fig = _new_figure()
    ax = fig.add_subplot()
    grid = _n_grid(p)
    ax.plot(grid, bounds.sigma_b(eps, delta, grid, p), color="C0",
            label=r"B, Theorem 3.4 ($2(n-p)$)")
    ax.plot(grid, bounds.sigma_b(eps, delta, grid, p, corrected=True), color="C0", ls=":",
            label=r"B, conservative variant ($2(n-p-1)$)")
    ax.axhline(bounds.sigma_a_sufficient(eps, delta), color="C3", label="A, sufficient")
    ax.axhline(bounds.sigma_a_necessary(eps, delta), color="C3", ls="--", label="A, necessary")
    if n > p:
        ax.plot([n], [bounds.sigma_b(eps, delta, n, p)], "o", color="C0")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"rows $n$")
    ax.set_ylabel(r"noise standard deviation $\sigma$")
    ax.set_title(rf"$\varepsilon={eps:.3g}$, $\delta={delta:.2g}$, $p={p}$")
    _plain_log_ticks(ax.yaxis)
    ax.legend(fontsize="small", loc="center right")
    return fig


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

    def update(change=None):
        e, d, nn, pp = float(eps_s.value), float(delta_s.value), int(round(n_s.value)), int(p_s.value)
        if nn <= pp:
            panel.value = f"<p>Theorem 3.4 needs more rows than columns: n = {nn} ≤ p = {pp}.</p>"
            image.value = b""
            return
        vals = noise_numbers(e, d, nn, pp)
        panel.value = _html_table(
            [
                ("A necessary σ (Thm 3.2)", "a_necessary", vals["a_necessary"]),
                ("A sufficient σ (Thm 3.2)", "a_sufficient", vals["a_sufficient"]),
                ("B sufficient σ (Thm 3.4)", "b_sufficient", vals["b_sufficient"]),
                ("B conservative σ, 2(n−p−1)", "b_corrected", vals["b_corrected"]),
                ("ratio A sufficient / B", "ratio", vals["ratio"]),
            ],
            note=f"n = {nn}",
        )
        image.value = _png_bytes(_noise_plot(e, d, nn, pp))

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
    ax.set_ylabel(r"$\sigma_A / \sigma_B$ (sufficient bounds)")
    ax.set_title(rf"Noise saved by masking, $\delta={delta:g}$")
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
        In [1, 1e12] (:data:`dpmask.gq.Q_MAX`).
    t1, t2 : float
        In [0, 1e300] (:data:`dpmask.gq.T_MAX`).  Outside these ranges, or for
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
        if np.ndim(value) != 0:
            raise ValueError(f"{name} must be a single number, got shape {np.shape(value)}")
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


def _gq_plot(q, t1, t2):
    from .gq import log_G

    fig = _new_figure()
    ax = fig.add_subplot()
    t_max = max(t1, t2, 1.0) * 1.5
    t = np.linspace(0.0, t_max, 200)
    exact = np.asarray(log_G(q, t)) - float(log_G(q, t1))
    bound = np.abs(t**2 - t1**2) / (2.0 * q)
    ax.plot(t, exact, color="C0", label=r"$\ln G_q(t) - \ln G_q(t_1)$")
    ax.plot(t, bound, color="C1", ls="--", label=r"$|t^2 - t_1^2| / (2q)$ (Lemma 5.5)")
    ax.axvline(t1, color="0.6", lw=0.8)
    ax.plot([t2], [float(log_G(q, t2)) - float(log_G(q, t1))], "o", color="C0")
    ax.set_xlabel(r"$t$")
    ax.set_ylabel("log ratio")
    ax.set_title(rf"$q={q}$, $t_1={t1:.3g}$")
    ax.legend(fontsize="small")
    return fig


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

    def update(change=None):
        qq, a, b = int(q_s.value), float(t1_s.value), float(t2_s.value)
        vals = gq_numbers(qq, a, b)
        panel.value = _html_table(
            [
                ("exact ln G_q(t₂) − ln G_q(t₁)", "log_ratio", vals["log_ratio"]),
                ("Lemma 5.5 bound |t₁² − t₂²| / (2q)", "log_bound", vals["log_bound"]),
                ("exact ratio G_q(t₂)/G_q(t₁)", "ratio", vals["ratio"]),
                ("bound exp(|t₁² − t₂²| / (2q))", "bound", vals["bound"]),
            ],
            note="bound holds" if vals["holds"] else "<b>bound violated</b>",
        )
        image.value = _png_bytes(_gq_plot(qq, a, b))

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
        Rows and columns, n > p >= 1.
    block : int
        Wanted rows per block, p < block <= n; the rows are cut into
        :func:`dpmask.scale.balanced_chunks` (sizes differ by at most one).

    Returns
    -------
    dict
        ``blocks`` (how many), ``smallest`` (n_s), ``sigma_full`` (Theorem
        3.4 with all n rows), ``sigma_block`` (:func:`dpmask.bounds.sigma_b_block`,
        n replaced by n_s), ``price`` = sigma_block / sigma_full, and
        ``dense_flops_per_row`` ~ 4 n_s^2 / 3 + 2 n_s p (an explicit Haar
        block: QR of an n_s x n_s Gaussian matrix, then the product) against
        ``frame_flops_per_row`` ~ 8 p^2 (the frame identity), leading terms.
    """
    from . import bounds
    from .scale import balanced_chunks

    if block <= p:
        raise ValueError(f"block must exceed p={p} (rows per block), got {block}")
    sizes = balanced_chunks(n, block)
    n_s = min(sizes)
    full = bounds.sigma_b(eps, delta, n, p)
    blk = bounds.sigma_b_block(eps, delta, sizes, p)
    return {
        "blocks": len(sizes),
        "smallest": n_s,
        "sigma_full": full,
        "sigma_block": blk,
        "price": blk / full,
        "dense_flops_per_row": 4.0 * n_s**2 / 3.0 + 2.0 * n_s * p,
        "frame_flops_per_row": 8.0 * p**2,
    }


def _block_grid(p, n):
    grid = np.unique(np.round(np.logspace(math.log10(p + 1), math.log10(n), 60)))
    return grid[grid > p]


def _block_plot(eps, delta, n, p, block):
    from . import bounds

    fig = _new_figure()
    ax = fig.add_subplot()
    grid = _block_grid(p, n)
    ax.plot(grid, bounds.sigma_b(eps, delta, grid, p) / bounds.sigma_b(eps, delta, n, p), color="C0")
    vals = block_numbers(eps, delta, n, p, block)
    ax.plot([vals["smallest"]], [vals["price"]], "o", color="C3")
    ax.set_xscale("log")
    ax.set_xlabel(r"smallest block $n_s$")
    ax.set_ylabel(r"$\sigma(n_s) / \sigma(n)$, Theorem 3.4")
    ax.set_title(rf"price of blocks: $\varepsilon={eps:.3g}$, $\delta={delta:.2g}$, $n={n}$, $p={p}$")
    return fig


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

    def update(change=None):
        e, d, pp, bb = float(eps_s.value), float(delta_s.value), int(p_s.value), int(round(b_s.value))
        if bb <= pp:
            panel.value = f"<p>Every block needs more rows than columns: block = {bb} ≤ p = {pp}.</p>"
            image.value = b""
            return
        vals = block_numbers(e, d, n, pp, bb)
        panel.value = _html_table(
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
        image.value = _png_bytes(_block_plot(e, d, n, pp, bb))

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


def inference_numbers(eps, delta, n, target=0.05):
    """The numbers the inference explorer shows (chapter 6's one-predictor example).

    Parameters
    ----------
    eps, delta : float
        Privacy parameters, eps > 0, 0 < delta < 1.
    n : int
        Rows, n > 2.
    target : float
        Target root mean square error of the slope, > 0.

    Returns
    -------
    dict
        ``sigma_a`` (analytic Gaussian mechanism), ``sigma_b`` (Theorem 3.4,
        p = 2), ``rmse_a``, ``rmse_b`` (first-order RMSE of the corrected slope
        at n), ``rows_a``, ``rows_b`` (rows for an RMSE of *target*, from the
        1/sqrt(n) law at n = 10^9) and ``rows_ratio``.
    """
    from . import bounds
    from .exact import analytic_gaussian_sigma

    s_a = analytic_gaussian_sigma(eps, delta)
    s_b = bounds.sigma_b(eps, delta, n, 2)
    big = 10**9
    rows_a = big * (_slope_rmse(s_a, big) / target) ** 2
    rows_b = big * (_slope_rmse(bounds.sigma_b(eps, delta, big, 2), big) / target) ** 2
    return {
        "sigma_a": s_a,
        "sigma_b": s_b,
        "rmse_a": _slope_rmse(s_a, n),
        "rmse_b": _slope_rmse(s_b, n),
        "rows_a": rows_a,
        "rows_b": rows_b,
        "rows_ratio": rows_a / rows_b,
    }


def _inference_plot(eps, delta, n):
    from . import bounds
    from .exact import analytic_gaussian_sigma

    fig = _new_figure()
    ax = fig.add_subplot()
    grid = np.unique(np.round(np.logspace(3, 10, 36)))
    s_a = analytic_gaussian_sigma(eps, delta)
    ax.loglog(grid, _slope_rmse(s_a, grid), color="C3", label=r"Setting A, $\sigma_A$ (analytic Gaussian)")
    ax.loglog(grid, _slope_rmse(bounds.sigma_b(eps, delta, grid, 2), grid), color="C0",
              label=r"Setting B, $\sigma_B$ (Theorem 3.4)")
    ax.axvline(n, color="0.6", lw=0.8)
    ax.axhline(0.05, color="0.8", lw=0.8)
    ax.set_xlabel(r"rows $n$")
    ax.set_ylabel("first-order RMSE of the slope")
    ax.set_title(rf"$\varepsilon={eps:.3g}$, $\delta={delta:.2g}$, $p=2$")
    ax.legend(fontsize="small")
    return fig


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

    def update(change=None):
        e, d, nn = float(eps_s.value), float(delta_s.value), int(round(n_s.value))
        vals = inference_numbers(e, d, nn)
        panel.value = _html_table(
            [
                ("σ_A (analytic Gaussian)", "sigma_a", vals["sigma_a"]),
                ("σ_B (Theorem 3.4, p = 2)", "sigma_b", vals["sigma_b"]),
                ("RMSE of slope, A", "rmse_a", vals["rmse_a"]),
                ("RMSE of slope, B", "rmse_b", vals["rmse_b"]),
                ("rows for RMSE 0.05, A", "rows_a", vals["rows_a"]),
                ("rows for RMSE 0.05, B", "rows_b", vals["rows_b"]),
                ("ratio of rows A / B", "rows_ratio", vals["rows_ratio"]),
            ],
            note=f"n = {nn}; first-order errors, unreliable where they exceed the slope (0.5)",
        )
        image.value = _png_bytes(_inference_plot(e, d, nn))

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


def _tightness_plot(eps, delta, n, p):
    from . import exact

    fig = _new_figure()
    ax = fig.add_subplot()
    ps, upper, lower = _tightness_curves(eps, delta, n, sorted(set(_TIGHT_P) | {p}))
    ax.fill_between(ps, lower, upper, color="C0", alpha=0.15, label="where the truth lies")
    ax.plot(ps, upper, "o-", color="C0", label="B, Theorem 3.4 (sufficient)")
    ax.plot(ps, lower, "s--", color="C2", label="B, lower bound (exact at p = 1)")
    ax.axhline(exact.analytic_gaussian_sigma(eps, delta), color="C3", label="A, exact (analytic Gaussian)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"columns $p$")
    ax.set_ylabel(r"noise standard deviation $\sigma$")
    ax.set_title(rf"$\varepsilon={eps:.3g}$, $\delta={delta:.2g}$, $n={n}$")
    _plain_log_ticks(ax.xaxis)
    _plain_log_ticks(ax.yaxis)
    ax.legend(fontsize="small")
    return fig


def tightness_explorer(eps=0.1, delta=0.01, n=100, p=5):
    """Sliders for eps, delta, n and p: the bracket around Setting B's true sigma.

    The panel lists the Setting A values (Theorem 3.2, the paper's criterion
    solved exactly, the exact analytic Gaussian) and the Setting B bracket
    (Theorem 3.4 above, the best audit lower bound below, see
    :func:`tightness_numbers`).  The plot shows the bracket against p.

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
    panel = w.HTML()
    image = w.Image(format="png")

    def update(change=None):
        e, d, nn, pp = float(eps_s.value), float(delta_s.value), int(round(n_s.value)), int(p_s.value)
        if nn <= pp + 1:
            panel.value = f"<p>Need n > p + 1 rows: n = {nn}, p = {pp}.</p>"
            image.value = b""
            return
        vals = tightness_numbers(e, d, nn, pp)
        panel.value = _html_table(
            [
                ("A sufficient σ (Thm 3.2)", "a_sufficient", vals["a_sufficient"]),
                ("A, paper's criterion exactly", "a_criterion", vals["a_criterion"]),
                ("A exact σ (analytic Gaussian)", "analytic", vals["analytic"]),
                ("B sufficient σ (Thm 3.4)", "b_sufficient", vals["b_sufficient"]),
                ("B sufficient σ, conservative 2(n−p−1)", "b_corrected", vals["b_corrected"]),
                ("B lower bound σ" + (" (exact)" if pp == 1 else ""), "b_lower", vals["b_lower"]),
                ("gap Thm 3.4 / lower bound", "gap", vals["gap"]),
            ],
            note=f"n = {nn}, p = {pp}",
        )
        image.value = _png_bytes(_tightness_plot(e, d, nn, pp))

    return _wire([eps_s, delta_s, n_s, p_s], update, panel, image)


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
