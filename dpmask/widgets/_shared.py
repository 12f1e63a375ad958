"""What every explorer shares: the slider factory, the panel, the live plot and the tick formatting.

An explorer is a ``VBox`` of three children: its controls (in a ``VBox``), an ``HTML``
panel with the numbers (each value cell carries ``data-key`` for tests and scrapers) and an
``Image`` holding a PNG of its plot.  :func:`explorer` wires them: a control that moves
calls the explorer's ``render`` with the controls' values, and the finished (panel, PNG)
pair is cached per setting, so a setting seen before comes back at once and identical.

Speed (issue 15: from a key press on a slider to the visible update in JupyterLab, median
under 150 ms and worst under 400 ms per explorer on an idle machine; measured by
``benchmarks/bench_widgets_live.py``, the Python side alone by ``benchmarks/bench_widgets.py``).
What keeps the plot cheap is :class:`LivePlot`: one figure per explorer for its lifetime, whose
axes, ticks, labels and legend are drawn once per axis range and kept as a picture; a new
setting restores that picture and draws only the artists that move (lines, markers, title)
on it.  Axis ranges are therefore snapped to quarter decades (log axes) or to round steps
(linear axes), so that most moves keep the range.

Threads (issues 25 and 32): every explorer draws on the main thread, the kernel's, whatever thread
moves a slider.  matplotlib and FreeType are not thread-safe: a drawing made on another thread
while the kernel's thread drew an explorer or a figure cell aborted the process (``free():
corrupted unsorted chunks``) or raised ``FT_Render_Glyph ... raster overflow``.  A move made on
the main thread (a slider moved in the browser arrives there) draws at once, as before; a move
made on another thread is handed to the main thread by :data:`KERNEL` (:class:`KernelThread`), and
the tightness explorer's solving threads hand over the pages they complete the same way.
"""

from __future__ import annotations

import collections
import functools
import io
import math
import threading
from concurrent.futures import Future

import numpy as np

from .._validate import check_scalar

# --------------------------------------------------------------------------- formatting


def new_figure(figsize=(6.4, 4.0)):
    """A pyplot-free Figure for a static companion (no global state, nothing left open)."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def plain_log_ticks(axis):
    """Write log-axis ticks as 2, 5, 10, 20 rather than powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(value, _pos=None):
    """10⁵ in plain text (no mathtext to lay out)."""
    if value <= 0:
        return ""
    k = math.log10(value)
    if abs(k - round(k)) > 1e-9:
        return f"{value:g}"
    return "10" + str(int(round(k))).translate(_SUPERSCRIPT)


def decade_ticks(ax, numticks=None):
    """Label both axes of *ax* 10⁰, 10¹, ... in plain text, without minor ticks."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

    for axis in (ax.xaxis, ax.yaxis):
        if numticks is not None:
            axis.set_major_locator(LogLocator(base=10, numticks=numticks))
        axis.set_major_formatter(FuncFormatter(power_of_ten))
        axis.set_minor_locator(NullLocator())
        axis.set_minor_formatter(NullFormatter())


def fmt(value):
    """Format a number for the HTML panel, or an em dash when it does not exist."""
    if value is None or not np.isfinite(value):
        return "&mdash;"
    return f"{value:.5g}"


def panel(rows, values, note=""):
    """The HTML table of *rows* (label, key): each value ``values[key]`` in a cell with data-key for tests.

    The table is a status region (``role="status"``), so a screen reader reads the new numbers
    when a slider moves (the book's ``_static/dpmask-explorers-a11y.js``, in the HTML book and in
    JupyterLab, also makes the panel's container a polite live region, which outlives the table
    that ipywidgets replaces on each update).  Each row's label is its header cell (``th
    scope="row"``), read with its number (issue 31: IBM's checker, table_headers_exists).
    """
    cells = "".join(
        f"<tr><th scope='row' style='padding-right:1em;text-align:left;font-weight:normal'>{label}</th>"
        f"<td data-key='{key}' style='text-align:right'>{fmt(values[key])}</td></tr>"
        for label, key in rows
    )
    extra = f"<p>{note}</p>" if note else ""
    return f"<div role='status'><table>{cells}</table>{extra}</div>"


# --------------------------------------------------------------------------- values


def key(value):
    """A slider value as a cache key: 12 significant digits (log sliders compute 10**x)."""
    return float(f"{float(value):.12g}")


def whole(value):
    """A log slider's value as a whole number (rows, block sizes)."""
    return int(round(value))


def single(arr, name):
    """A validated 0-d array as a float; an array argument is refused by name."""
    return float(check_scalar(arr, name))


def n_grid(p, n_max=10**6, num=60):
    """Whole numbers from p + 2 to n_max, evenly spread on a log scale."""
    lo = math.log10(p + 2)
    grid = np.unique(np.round(np.logspace(lo, math.log10(n_max), num)))
    return grid[grid > p + 1]


@functools.lru_cache(maxsize=1024)
def analytic_sigma(eps, delta):
    """Setting A's exact sigma (:func:`dpmask.exact.analytic_gaussian_sigma`), remembered.

    For (eps, delta) its caller has checked (an explorer's door): the unvalidated core (issue 30)."""
    from ..exact.gaussian import _analytic_gaussian_sigma

    return float(_analytic_gaussian_sigma(eps, delta))


#: Theorem 3.4's sigma_0 by (eps, delta, n, p, corrected), the most recent SIGMA0_MAX settings (issue 30).
_SIGMA0 = collections.OrderedDict()
SIGMA0_MAX = 4096
_SIGMA0_LOCK = threading.Lock()


def sigma0(settings):
    """Theorem 3.4's sigma_0 at each (eps, delta, n, p, corrected) of *settings*, arguments a door has checked.

    The settings not seen before are solved together, in one vectorised call of the core
    :func:`dpmask.paper.bounds._sigma_b` per value of *corrected* (one ``find_root`` over an array
    instead of one per setting: its fixed cost per iteration is most of a scalar solve); the
    others come from a bounded cache keyed on the exact floats.  ``find_root`` iterates
    elementwise, so each value is, bit for bit, the one :func:`dpmask.paper.bounds.sigma_b` gives
    for that setting alone (``tests/test_doors.py`` compares them).  The noise, block and
    inference explorers share it (issue 30); a failed solve caches nothing and raises as
    ``_sigma_b`` does, and a caller that makes numpy raise on over, divide and invalid gets only
    values solved that way (inference_numbers turns such errors into its ValueError).

    Returns
    -------
    list of float
        sigma_0 for each setting, in order.
    """
    from ..paper import bounds

    keys = [(float(e), float(d), float(n), int(p), bool(c)) for e, d, n, p, c in settings]
    # A value solved while numpy ignored a floating-point error that the caller turns into an
    # exception (np.errstate(..., "raise")) is not handed to that caller: it is solved again.
    err = np.geterr()
    strict = all(err[kind] == "raise" for kind in ("over", "divide", "invalid"))
    found = {}
    with _SIGMA0_LOCK:
        for k in keys:
            if k in _SIGMA0 and (_SIGMA0[k][1] or not strict):
                _SIGMA0.move_to_end(k)
                found[k] = _SIGMA0[k][0]
    missing = sorted({k for k in keys if k not in found})
    for corrected in (False, True):
        group = [k for k in missing if k[4] is corrected]
        if not group:
            continue
        columns = (np.array(column) for column in list(zip(*group))[:4])
        values = np.atleast_1d(bounds._sigma_b(*columns, corrected=corrected))
        with _SIGMA0_LOCK:
            for k, v in zip(group, values):
                found[k] = float(v)
                _SIGMA0[k] = (found[k], strict)
                _SIGMA0.move_to_end(k)
            while len(_SIGMA0) > SIGMA0_MAX:
                _SIGMA0.popitem(last=False)
    return [found[k] for k in keys]


# --------------------------------------------------------------------------- controls


def _layout(width):
    import ipywidgets as w

    return {"style": {"description_width": width}, "layout": w.Layout(width="26em")}


# What a screen reader says for a slider, after its one-letter label: the quantity and its unit.
# ipywidgets shows it as the label's tooltip; the book's _static/dpmask-explorers-a11y.js (in the
# HTML book and in JupyterLab) names the slider's handle (role="slider") with it and gives the
# handle the shown number as its value text.
SLIDER_NAMES = {
    "ε": "ε, privacy loss (no unit)",
    "δ": "δ, failure probability (no unit)",
    "n": "n, number of rows (records)",
    "p": "p, number of columns (attributes)",
    "q": "q, degrees of freedom (a whole number)",
    "t₁": "t₁, first argument of G_q (no unit)",
    "t₂": "t₂, second argument of G_q (no unit)",
    "block": "block, rows per masked block (records)",
    "estimand": "estimand, the quantity estimated",
}


def spoken_name(description):
    """The accessible name of a control labelled *description* (:data:`SLIDER_NAMES`, else itself)."""
    return SLIDER_NAMES.get(description, description)


def log_slider(description, value, lo, hi, step, readout, width="3em"):
    """A base-10 log slider over [10**lo, 10**hi] in exponent steps *step* (answers on release)."""
    import ipywidgets as w

    return w.FloatLogSlider(value=value, base=10, min=lo, max=hi, step=step, description=description,
                            tooltip=spoken_name(description), readout_format=readout, continuous_update=False,
                            **_layout(width))


def int_slider(description, value, lo, hi, width="3em"):
    """A whole-number slider over [lo, hi] (answers on release)."""
    import ipywidgets as w

    return w.IntSlider(value=value, min=lo, max=hi, description=description, tooltip=spoken_name(description),
                       continuous_update=False, **_layout(width))


def float_slider(description, value, lo, hi, step, width="3em"):
    """A slider over [lo, hi] in steps *step* (answers on release)."""
    import ipywidgets as w

    return w.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                         tooltip=spoken_name(description), continuous_update=False, **_layout(width))


def dropdown(description, options, value, width="3em"):
    """A choice among (label, value) pairs."""
    import ipywidgets as w

    return w.Dropdown(options=options, value=value, description=description, tooltip=spoken_name(description),
                      style={"description_width": width})


# --------------------------------------------------------------------------- the drawing thread


class KernelThread:
    """Runs drawings on the kernel's thread (the main thread): matplotlib and FreeType are not thread-safe.

    A move made on another thread (a reader's own thread, the tightness explorer's solving
    threads) hands its drawing to :meth:`post` instead of drawing.  In a kernel the drawing runs on the
    kernel's event loop (the loop running when the first explorer was built), between cells and
    messages, as every other drawing does; elsewhere (a script, a test) the main thread runs it
    when it next moves a slider or waits for an explorer (:class:`Pending`).  Drawing from two
    threads at once aborted the process (``malloc(): unsorted double linked list corrupted``,
    ``free(): corrupted unsorted chunks``) or raised ``FT_Load_Glyph ... invalid outline`` and
    ``FT_Render_Glyph ... raster overflow`` (issues 25 and 32).
    """

    def __init__(self):
        self.queue = collections.deque()
        self.posted = threading.Event()
        self.loop = None

    def attach(self):
        """Remember the event loop running on the main thread, if any (called where an explorer is built)."""
        import asyncio

        if threading.current_thread() is threading.main_thread():
            try:
                self.loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop running: a script or a test, which waits through Pending
                pass

    def post(self, fn):
        """Run *fn* on the main thread: at once when called there, else as soon as that thread is free."""
        if threading.current_thread() is threading.main_thread():
            fn()
            return
        self.queue.append(fn)
        self.posted.set()
        loop = self.loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self.run)
            except RuntimeError:  # the loop was closed: the next wait or move runs it
                self.loop = None

    def run(self):
        """Run what was posted (on the main thread only; elsewhere nothing)."""
        if threading.current_thread() is not threading.main_thread():
            return
        while True:
            try:
                fn = self.queue.popleft()
            except IndexError:
                return
            try:
                fn()
            except Exception:  # one failed drawing must not stop the others
                import traceback

                traceback.print_exc()

    def wait(self, future, timeout=None):
        """Wait for *future*, running posted drawings meanwhile when on the main thread."""
        import time

        if threading.current_thread() is not threading.main_thread():
            return future.result(timeout)
        end = None if timeout is None else time.monotonic() + timeout
        future.add_done_callback(lambda _: self.posted.set())  # resolved elsewhere: stop waiting
        while True:
            self.posted.clear()
            self.run()
            if future.done():
                return future.result()
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError("the explorer did not finish drawing in time")
            self.posted.wait(left)


#: The one drawing thread of every explorer in this process.
KERNEL = KernelThread()


class Pending:
    """What ``box._dpmask_pending()`` returns: whether what the explorer shows is complete, and a wait for it."""

    def __init__(self, future):
        self.future = future

    def done(self):
        return self.future.done()

    def result(self, timeout=None):
        """Wait until the explorer shows its complete page (drawing it on this thread when it is the main one)."""
        return KERNEL.wait(self.future, timeout)


def _finished():
    future = Future()
    future.set_result(None)
    return future


def explorer(controls, readers, render, refuse=None):
    """Stack *controls*, a panel and a picture; call *render* whenever a control moves.

    ``readers``: one function per control, turning its value into an argument of
    ``render(*args)`` (e.g. :func:`key`, :func:`whole`, ``int``), which returns ``(panel html, png
    bytes)`` and is cached per setting.  ``refuse(*args)``, if given, returns a sentence for a
    setting outside the explorer's domain (shown instead, with no picture) or None.

    *render* runs on the main thread only.  A move made there draws at once; a move made on another
    thread posts one redraw to the main thread (:data:`KERNEL`), which reads the controls when it
    runs, so moves made before it has run are drawn together, as their last setting.
    ``box._dpmask_pending().result()`` waits for that redraw.
    """
    import ipywidgets as w

    panel_, image = w.HTML(), w.Image(format="png")
    cached = functools.lru_cache(maxsize=256)(render)
    lock = threading.Lock()
    posted = [None]  # the Future of the redraw posted to the main thread and not yet begun, or None

    def draw():
        args = tuple(read(control.value) for read, control in zip(readers, controls))
        message = refuse(*args) if refuse is not None else None
        if message:
            panel_.value, image.value = message, b""
        else:
            panel_.value, image.value = cached(*args)

    def redraw():  # on the main thread, posted by a move made elsewhere
        with lock:
            future, posted[0] = posted[0], None
        try:
            draw()
        finally:
            future.set_result(None)

    def update(change=None):
        if threading.current_thread() is threading.main_thread():
            draw()  # a slider moved in the browser, or by the kernel's own code: at once
            KERNEL.run()  # then what other threads posted, if anything
            return
        with lock:
            if posted[0] is not None:  # a redraw is waiting already: it will read this move too
                return
            posted[0] = Future()
        KERNEL.post(redraw)

    def pending():
        with lock:
            future = posted[0]
        return Pending(future if future is not None else _finished())

    KERNEL.attach()
    for control in controls:
        control.observe(update, names="value")
    update()
    box = w.VBox([w.VBox(list(controls)), panel_, image])
    box._dpmask_pending = pending  # for tests and benchmarks/bench_widgets.py
    return box


# --------------------------------------------------------------------------- axis ranges


def log_range(lo, hi, per_decade=4, margin=0.05):
    """Limits of a log axis for data in [lo, hi]: a margin, then out to the next 1/per_decade of a decade."""
    a, b = math.log10(lo), math.log10(hi)
    pad = margin * max(b - a, 0.2)
    low = math.floor((a - pad) * per_decade)
    high = math.ceil((b + pad) * per_decade)
    return 10.0 ** (low / per_decade), 10.0 ** (high / per_decade)


def linear_range(lo, hi, margin=0.05, steps=10):
    """Limits of a linear axis for data in [lo, hi]: a margin, then out to a round step (about span / steps)."""
    span = max(hi - lo, 1e-12 * max(abs(lo), abs(hi), 1.0))
    unit = 10.0 ** math.floor(math.log10(span / steps))
    step = next(m * unit for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * unit >= span / steps)
    low = math.floor((lo - margin * span) / step)
    high = math.ceil((hi + margin * span) / step)
    return float(f"{low * step:.12g}"), float(f"{high * step:.12g}")


def data_range(*arrays):
    """Smallest and largest finite value over *arrays* (scalars allowed)."""
    vals = np.concatenate([np.ravel(np.asarray(a, float)) for a in arrays])
    vals = vals[np.isfinite(vals)]
    return float(vals.min()), float(vals.max())


# --------------------------------------------------------------------------- the live plot


class LivePlot:
    """One figure drawn again for every setting, redrawing only what moves.

    Register the artists that change with :meth:`moving` (lines, markers, reference lines);
    :meth:`png` then sets the axis limits, restores the static picture kept for those limits
    (axes, ticks, labels, legend: drawn once per range) and draws the moving artists and the
    title on it.  The legend's box is pasted back over the moving lines, as an opaque legend.
    """

    KEEP = 12  # static pictures kept (one per axis range seen; about 0.6 MB each)

    def __init__(self, xlabel, ylabel, log="", figsize=(6.4, 4.0), dpi=80, margins=(0.12, 0.97, 0.13, 0.91)):
        """*log*: the axes on a log scale ("x", "y", "xy"); *margins*: left, right, bottom, top (fixed)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.fig = Figure(figsize=figsize, dpi=dpi)
        left, right, bottom, top = margins
        self.fig.subplots_adjust(left=left, right=right, bottom=bottom, top=top)
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax = self.fig.add_subplot(xscale="log" if "x" in log else "linear",
                                       yscale="log" if "y" in log else "linear")
        self.ax.set_xlabel(xlabel)
        self.ax.set_ylabel(ylabel)
        self._moving = []
        self._static = collections.OrderedDict()

    def moving(self, *artists):
        """Mark *artists* as drawn at every frame (not part of the static picture)."""
        for artist in artists:
            artist.set_animated(True)
            self._moving.append(artist)
        return artists

    def line(self, *fmt, **kw):
        """An empty line of the plot, drawn at every frame."""
        (artist,) = self.ax.plot([], [], *fmt, **kw)
        self.moving(artist)
        return artist

    def hline(self, **kw):
        """A horizontal reference line (set its height with ``set_ydata``), drawn at every frame."""
        artist = self.ax.axhline(1.0, **kw)
        self.moving(artist)
        return artist

    def vline(self, **kw):
        """A vertical reference line (set its place with ``set_xdata``), drawn at every frame."""
        artist = self.ax.axvline(1.0, **kw)
        self.moving(artist)
        return artist

    def title(self, text, **kw):
        # Plain text (no mathtext to parse for every new value) at a fixed height, which spares
        # matplotlib the search for a title position clear of the tick labels.
        self.ax.set_title(text, y=1.01, **kw)
        self.ax.title.set_animated(True)

    def _background(self, xlim, ylim, extra):
        key = (tuple(xlim), tuple(ylim), extra)
        self.ax.set_xlim(*xlim)
        self.ax.set_ylim(*ylim)
        if key in self._static:
            self._static.move_to_end(key)
            background, legend = self._static[key]
            self.canvas.restore_region(background)
            return legend
        self.canvas.draw()  # everything but the animated artists
        background = self.canvas.copy_from_bbox(self.fig.bbox)
        box = self.ax.get_legend()
        legend = None
        if box is not None:
            legend = self.canvas.copy_from_bbox(box.get_window_extent(self.canvas.get_renderer()))
        self._static[key] = (background, legend)
        while len(self._static) > self.KEEP:
            self._static.popitem(last=False)
        return legend

    def png(self, xlim, ylim, extra=(), also=()):
        """The figure as PNG bytes with limits *xlim*, *ylim*; *extra*: what else the static part shows.

        *also*: artists made for this frame only (e.g. a filled band), drawn after the moving ones.
        """
        from PIL import Image

        legend = self._background(xlim, ylim, extra)
        for artist in [*self._moving, *also, self.ax.title]:
            self.ax.draw_artist(artist)
        if legend is not None:
            self.canvas.restore_region(legend)
        width, height = self.canvas.get_width_height()
        img = Image.frombuffer("RGBA", (width, height), self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        buf = io.BytesIO()
        img.convert("RGB").save(buf, format="png", compress_level=1)
        return buf.getvalue()
