"""The tightness explorer: the paper's bounds against exact curves and lower bounds (chapter 7).

Its slow part is Setting B's lower bound, :func:`dpmask.exact.audit.sigma_lower_bound`: an exact
nested search.  Its cost is mostly fixed, scipy's set-up of each vectorised root search: on an
idle core one call takes about 0.15 s for one point, 0.2-0.25 s for the ten points of one
setting (nine plotted columns and the Frobenius bound, both statistics in one call), 0.3-0.35 s
for eighty at n <= 1000 and 0.25 s for twelve at n = 10^5 (measured 26 Nov 2026).  So that a
slider answers with it at once:

* two worker processes (``python -m dpmask.widgets._worker``, started once per Python process
  and shared by every tightness explorer) run the searches, so that the kernel's thread stays
  free to draw (a thread would share the interpreter lock: measured, it slowed the drawing
  2.8-fold).  One solves ahead, at a low priority; the other only the setting on show when it
  is missing;
* the first solves the slider positions a reader is likely to reach next (:func:`_plan`: one
  and two key presses away along every slider, and further ahead along the slider being pressed
  while keys are pressed), many per call, before the reader gets there.  The slider positions are
  the grid: every value kept is ``sigma_lower_bound`` at one position, from one vectorised call
  for all the points of a batch, both statistics together, that treats each point on its own
  (bit for bit the value of a call at that point alone);
* a setting not solved yet shows the rest of the panel at once, marked "computing the lower
  bound", and the complete panel as soon as its values arrive;
* only the kernel's thread draws (``_shared.KERNEL``, shared by every explorer): matplotlib
  and FreeType are not thread-safe, and a page drawn by the scheduler's thread while a figure cell
  or another explorer drew on the kernel's aborted the kernel (issue 25).  The threads solve; the
  drawing of a page whose values arrived is posted to the kernel's event loop.

Where no process can be started, the searches run in this process instead.
"""

from __future__ import annotations

import collections
import functools
import math
import threading
import weakref
from concurrent.futures import Future, InvalidStateError

import numpy as np

from .._style import color, series
from ._shared import KERNEL, LivePlot, Pending, analytic_sigma, data_range, int_slider, key, log_range, log_slider
from ._shared import new_figure, panel, plain_log_ticks, whole

#: Columns on the plot (the current p is added).
_P_PLOTTED = (1, 2, 3, 5, 8, 12, 20, 30, 50)
#: The sliders: (description, lowest exponent, highest exponent, step) of eps, delta and n; p in 1..50.
_LOG_SLIDERS = (("ε", -3.0, 1.0, 0.05), ("δ", -10.0, -1.0, 0.1), ("n", 1.0, 5.0, 0.1))
_P_RANGE = (1, 50)


def tightness_numbers(eps, delta, n, p):
    """The numbers the tightness explorer shows, from :mod:`dpmask.exact` and :mod:`dpmask.exact.audit`.

    Parameters
    ----------
    eps, delta : float
        In the domain of :func:`dpmask.exact.audit.sigma_lower_bound` (eps in [1e-4, 100], delta in
        [1e-250, 1 - 1e-12]).
    n, p : int
        Rows and columns, n > p + 1, n <= 1e6.

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
    from ..exact import audit
    from ..paper import bounds

    b_lower = audit.sigma_lower_bound(eps, delta, n, p)
    # The door for the rest (Theorem 3.4's domain with n > p + 1, which holds Setting A's): the
    # panel's numbers then come from the unvalidated cores (issue 30).
    eps, delta, n, p = (float(v) for v in bounds._check_b_args(eps, delta, n, p, True))
    return _numbers(eps, delta, int(n), int(p), b_lower)


@functools.lru_cache(maxsize=1024)
def _setting_a(eps, delta):
    """Setting A's three sigmas for one (eps, delta): Theorem 3.2, the criterion solved, the analytic Gaussian.

    For (eps, delta) already checked (the sliders', or :func:`tightness_numbers`'s door): the cores."""
    from ..exact import gaussian
    from ..paper import bounds

    suff = bounds._sigma_a_sufficient(eps, delta) if eps < 1 and delta < 0.5 else float("nan")
    return suff, gaussian._setting_a_criterion_sigma(eps, delta), gaussian._analytic_gaussian_sigma(eps, delta)


def _numbers(eps, delta, n, p, b_lower):
    """:func:`tightness_numbers` with the lower bound given."""
    from ..paper import bounds

    a_suf, a_crit, analytic = _setting_a(eps, delta)
    b_suf = bounds._sigma_b(eps, delta, n, p)
    return {
        "a_sufficient": a_suf,
        "a_criterion": a_crit,
        "analytic": analytic,
        "b_sufficient": b_suf,
        "b_corrected": bounds._sigma_b(eps, delta, n, p, corrected=True),
        "b_lower": b_lower,
        "gap": b_suf / b_lower,
    }


def _plotted(n, p):
    """The columns on the plot for n rows (p < n - 1 only), the current p among them."""
    return [q for q in sorted(set(_P_PLOTTED) | {p}) if q < n - 1]


def _needs(eps, delta, n, p):
    """The lower bounds one setting shows, (eps, delta, n, statistic, p): the projection bound at
    every plotted p (the current one among them), then the Frobenius bound at p where its curves
    hold (n p <= 1e6)."""
    from ..exact import N_MAX

    points = [(eps, delta, n, "projection", q) for q in _plotted(n, p)]
    return points + [(eps, delta, n, "frobenius", p)] if n * p <= N_MAX else points


def _lower(setting, values):
    """The panel's lower bound and the plot's curve from the values of ``_needs(*setting)``.

    The panel shows ``sigma_lower_bound(..., statistic="best")``, which its docstring defines as
    the larger of the two statistics' bounds, the projection one alone where n p > 1e6.
    """
    eps, delta, n, p = setting
    ps = _plotted(n, p)
    curve = values[: len(ps)]
    return max([curve[ps.index(p)], *values[len(ps):]]), np.array(curve)


@functools.lru_cache(maxsize=256)
def _upper(eps, delta, n, ps):
    from ..paper import bounds

    return bounds._sigma_b(eps, delta, n, np.array(ps, float))


# --------------------------------------------------------------------------- solving


def _solve(points):
    """``sigma_lower_bound`` at every point (eps, delta, n, statistic, p): one vectorised search for all.

    Returns a dict point -> float, or -> the error's text for a point whose search failed.
    """
    from ..exact import audit

    if not points:
        return {}
    eps, delta, n, stat, p = zip(*points)
    try:
        values = audit._sigma_lower_bounds(np.array(eps), np.array(delta), np.array(n), np.array(p), np.array(stat))
        return dict(zip(points, (float(v) for v in values)))
    except Exception:  # one bad point must not sink the others: solve them one by one
        out = {}
        for pt in points:
            try:
                out[pt] = float(audit.sigma_lower_bound(pt[0], pt[1], pt[2], pt[4], statistic=pt[3]))
            except Exception as err:  # shown in the panel
                out[pt] = f"{type(err).__name__}: {err}"
        return out


class _Worker:
    """The process that runs :func:`_solve` (``python -m dpmask.widgets._worker``, pickles over pipes).

    It imports the same ``dpmask`` as this process and never this process's main script; it ends
    when its input closes.  Where no process can be started, :func:`_solve` runs here instead.
    """

    def __init__(self, nice=0):
        self.nice = nice
        self.proc = None
        self.failed = False
        self.deaths = 0
        self.lock = threading.Lock()  # the kernel's thread starts it early, the scheduler's thread on demand

    def _start(self):
        import os
        import subprocess
        import sys

        import dpmask

        root = os.path.dirname(os.path.dirname(os.path.abspath(dpmask.__file__)))
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "dpmask.widgets._worker", str(self.nice)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         env=env)
        except (OSError, ValueError):  # no process here (a sandbox, an embedded interpreter)
            self.proc, self.failed = None, True

    def start(self):
        """Start the process now (its imports take a second or two), unless it runs or cannot run."""
        with self.lock:
            if self.proc is None and not self.failed:
                self._start()

    def solve(self, points):
        import pickle

        self.start()
        if self.proc is not None:
            try:
                pickle.dump(points, self.proc.stdin)
                self.proc.stdin.flush()
                return pickle.load(self.proc.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):  # it died: this batch here, then a new one
                self.proc, self.deaths = None, self.deaths + 1
                self.failed = self.deaths >= 3  # not a fourth: solve here from now on
        return _solve(points)


# Lower bounds found so far, point -> value (or error text), shared by every explorer.
_SOLVED = collections.OrderedDict()
_SOLVED_MAX = 50_000  # points (about 4,500 settings)
_LOCK = threading.Lock()


def _remember(found):
    with _LOCK:
        _SOLVED.update(found)
        while len(_SOLVED) > _SOLVED_MAX:
            _SOLVED.popitem(last=False)


def _known(points):
    with _LOCK:
        return [_SOLVED.get(pt) for pt in points]


_INFLIGHT = set()  # points a worker is solving
_RESTING = 10.0  # seconds without a move after which an explorer is solved only one press ahead


def _take(plan, limit, first=False):
    """Claim the missing points of *plan*'s settings, in order, up to about *limit* points.

    Points another worker is solving are left to it, except the first setting's when *first*
    (the one a reader waits for: solving it again is faster than waiting for a long call).
    """
    wanted = []
    with _LOCK:
        for index, setting in enumerate(plan):
            skip = () if first and index == 0 else _INFLIGHT
            wanted += [pt for pt in _needs(*setting) if pt not in _SOLVED and pt not in skip and pt not in wanted]
            if len(wanted) >= limit or (first and wanted):
                break
        _INFLIGHT.update(wanted)
    return wanted


def _points_per_call(n):
    """About a third of a second's work on an idle core: each search costs more at large n (the chi-square tails)."""
    return 80 if n <= 1000 else 30 if n <= 10**4 else 12


class _Scheduler:
    """Two threads, each feeding its own worker process.

    ``now`` solves only the setting on show when it is missing, at normal priority; ``ahead``
    solves the plan of the explorer moved last (:func:`_plan`), at a low priority (niceness 10),
    so that solving ahead yields the processor to the kernel drawing and to everything else.
    A miss never waits behind a long call.
    """

    def __init__(self):
        self.explorers = weakref.WeakSet()
        self.events = {"now": threading.Event(), "ahead": threading.Event()}
        self.workers = {"now": _Worker(), "ahead": _Worker(nice=10)}
        self.busy = {"now": False, "ahead": False}
        self.started = False

    def add(self, explorer):
        self.explorers.add(explorer)
        if not self.started:
            self.started = True
            for name in self.events:
                threading.Thread(target=self._run, args=(name,), name=f"dpmask-tightness-{name}", daemon=True).start()
        self.wake()

    def start_workers(self):
        """Start both worker processes now, so that they import while the first drawing is made."""
        for worker in self.workers.values():
            worker.start()

    def wake(self):
        for event in self.events.values():
            event.set()

    def settle(self, timeout):
        """Wait until both threads have nothing left to solve (for tests and benchmarks); True if they had."""
        import time

        end = time.monotonic() + timeout
        while any(self.busy.values()) or any(e.is_set() for e in self.events.values()):
            if time.monotonic() > end:
                return False
            time.sleep(0.05)
        return True

    def _batch(self, name):
        for explorer in sorted(self.explorers, key=lambda e: -e.touched):
            plan = explorer.plan()
            if plan:
                if name == "now":
                    points = _take(plan[:1], len(_needs(*plan[0])), first=True)
                else:
                    points = _take(plan, _points_per_call(plan[0][2]))
                if points:
                    return points
        return []

    def _run(self, name):
        event, worker = self.events[name], self.workers[name]
        worker.start()
        while True:
            event.wait()
            self.busy[name] = True
            event.clear()
            try:
                while points := self._batch(name):
                    try:
                        found = worker.solve(points)
                    except Exception as err:  # shown in the panels that wait for these points, not lost here
                        found = {pt: f"{type(err).__name__}: {err}" for pt in points}
                    finally:
                        with _LOCK:
                            _INFLIGHT.difference_update(points)
                    _remember(found)
                    for each in list(self.explorers):
                        each.solved()
            except Exception:  # a bug here must not end the thread (every later move would wait forever)
                import traceback

                traceback.print_exc()
            finally:
                self.busy[name] = False


_SCHEDULER = _Scheduler()


# --------------------------------------------------------------------------- the slider grid


def _neighbour(value, lo, hi, step, k):
    """The log slider's value k key presses from *value* (positions 10**(lo + i step)), or None past an end."""
    x = (math.log10(value) - lo) / step
    i = math.floor(x + 1e-6) + k if k > 0 else math.ceil(x - 1e-6) + k
    if i < 0 or lo + i * step > hi + 1e-9:
        return None
    return 10.0 ** (lo + i * step)


def _setting(raw):
    """The setting (eps, delta, n, p) that slider values show, as the explorer reads them."""
    return key(raw[0]), key(raw[1]), whole(raw[2]), int(raw[3])


def _step(raw, axis, k):
    """Slider values k key presses away along one slider (axis 0 eps, 1 delta, 2 n, 3 p), or None."""
    new = list(raw)
    if axis == 3:
        new[3] = raw[3] + k
        if not _P_RANGE[0] <= new[3] <= _P_RANGE[1]:
            return None
    else:
        _, lo, hi, step = _LOG_SLIDERS[axis]
        new[axis] = _neighbour(raw[axis], lo, hi, step, k)
        if new[axis] is None:
            return None
    return tuple(new)


def _ring(raw, r=1):
    """Slider values r key presses away along each slider, both ways."""
    return [_step(raw, axis, s * r) for axis in range(4) for s in (1, -1)]


def _plan(raw, move, streak):
    """Settings to solve, most likely next first.

    At rest, or after a jump: one key press away along every slider, then two (so that a reader's
    first two presses on any slider find their settings solved, and the third has the time of two
    answers to be solved).  After *streak* single key presses in a row: further ahead along the
    last move (two more positions per press, up to 12), then one press away along every slider
    from here and from the next two positions, then two presses away along every slider.
    """
    if move is None or streak == 0:
        out = [raw, *_ring(raw), *_ring(raw, 2)]
    else:
        ahead = [_step(raw, move[0], move[1] * r) for r in range(1, min(12, 2 + 2 * streak) + 1)]
        out = [raw, *ahead, *_ring(raw)]
        for base in ahead[:2]:
            out += _ring(base) if base is not None else []
        out += _ring(raw, 2)
    seen, plan = set(), []
    for values in out:
        if values is None:
            continue
        setting = _setting(values)
        if setting[2] > setting[3] + 1 and setting not in seen:
            seen.add(setting)
            plan.append(setting)
    return plan


# --------------------------------------------------------------------------- the explorer


class _Plot(LivePlot):
    def __init__(self):
        super().__init__(r"columns $p$", r"noise standard deviation $\sigma$", "xy", margins=(0.11, 0.98, 0.13, 0.91))
        ax = self.ax
        self.upper = self.line("o-", color=color(0), label="B, Theorem 3.4 (sufficient)")
        self.lower = self.line("s--", color=color(2), label="B, lower bound (exact at p = 1)")
        self.analytic = self.hline(**series(3, 3, marker=False), label="A, exact (analytic Gaussian)")
        plain_log_ticks(ax.xaxis)
        plain_log_ticks(ax.yaxis)
        from matplotlib.patches import Patch

        handles = [Patch(color=color(0), alpha=0.15, label="where the truth lies"), self.upper, self.lower, self.analytic]
        ax.legend(handles=handles, fontsize="small", loc="lower right")

    def draw(self, eps, delta, n, ps, upper, lower, analytic):
        also = []
        if lower is not None:
            fill = self.ax.fill_between(ps, lower, upper, color=color(0), alpha=0.15)
            fill.set_animated(True)
            also.append(fill)
            self.lower.set_data(ps, lower)
        else:
            self.lower.set_data([], [])
        self.upper.set_data(ps, upper)
        self.analytic.set_ydata([analytic, analytic])
        self.title(f"ε = {eps:.3g},  δ = {delta:.2g},  n = {n}")
        ys = (upper, analytic) if lower is None else (upper, lower, analytic)
        try:
            return self.png(log_range(min(ps), max(ps), per_decade=20), log_range(*data_range(*ys)), also=also)
        finally:
            for artist in also:
                artist.remove()


_PANEL = (
    ("A sufficient σ (Thm 3.2)", "a_sufficient"),
    ("A, paper's criterion exactly", "a_criterion"),
    ("A exact σ (analytic Gaussian)", "analytic"),
    ("B sufficient σ (Thm 3.4)", "b_sufficient"),
    ("B sufficient σ, conservative 2(n−p−1)", "b_corrected"),
    ("B lower bound σ", "b_lower"),
    ("gap Thm 3.4 / lower bound", "gap"),
)
_PANEL_EXACT = tuple((label + " (exact)" if k == "b_lower" else label, k) for label, k in _PANEL)


def _resolve(future):
    """Mark *future* done (once; two threads may try)."""
    try:
        future.set_result(None)
    except InvalidStateError:
        pass


class _Explorer:
    """The state behind one tightness explorer: its sliders, its picture and what it waits for."""

    def __init__(self, eps, delta, n, p):
        import ipywidgets as w

        self.controls = [log_slider(spec[0], value, *spec[1:], readout)
                         for spec, value, readout in zip(_LOG_SLIDERS, (eps, delta, n), (".3g", ".2g", ".0f"))]
        self.controls.append(int_slider("p", p, *_P_RANGE))
        self.panel, self.image = w.HTML(), w.Image(format="png")
        self.plot = _Plot()
        # The figure and the page cache are the kernel's thread's alone; the lock guards what the
        # scheduler's threads read (the setting on show, the last move).
        self.lock = threading.RLock()
        self.pages = collections.OrderedDict()  # complete (panel, png) per setting
        self.raw, self.current, self.move, self.streak, self.touched = None, None, None, 0, 0.0
        self.done = Future()
        self.show_posted = False  # a drawing of the page on show is waiting for the main thread
        self.box = w.VBox([w.VBox(self.controls), self.panel, self.image])

    def plan(self):
        import time

        with self.lock:
            raw, current, move, streak = self.raw, self.current, self.move, self.streak
        if current is None or current[2] <= current[3] + 1:
            return []
        if time.monotonic() - self.touched > _RESTING:
            streak = 0  # the reader has stopped: one and two presses away, no long run ahead
        return _plan(raw, move, streak)

    def page(self, setting, lower):
        """(panel, png) for *setting*; *lower*: the solved values of ``_needs(*setting)``, or None."""
        e, d, nn, pp = setting
        failed = next((v for v in lower or () if isinstance(v, str)), None)
        if failed is not None:
            return f"<p>The lower bound failed: {failed}</p>", self.image.value
        b_lower, curve = (float("nan"), None) if lower is None else _lower(setting, lower)
        vals = _numbers(e, d, nn, pp, b_lower)
        rows = _PANEL_EXACT if pp == 1 else _PANEL
        note = f"n = {nn}, p = {pp}" + ("" if lower else "; computing the lower bound (an exact search)…")
        html = panel(rows, vals, note)
        ps = tuple(_plotted(nn, pp))
        png = self.plot.draw(e, d, nn, np.array(ps, float), _upper(e, d, nn, ps), curve, analytic_sigma(e, d))
        return html, png

    def complete(self, setting):
        """The complete page for *setting* if every lower bound it needs is known, else None."""
        if setting in self.pages:
            self.pages.move_to_end(setting)
            return self.pages[setting]
        lower = _known(_needs(*setting))
        if any(v is None for v in lower):
            return None
        page = self.pages[setting] = self.page(setting, lower)
        while len(self.pages) > 256:
            self.pages.popitem(last=False)
        return page

    def update(self, change=None):
        import time

        if threading.current_thread() is not threading.main_thread():  # a slider set from another thread
            KERNEL.post(functools.partial(self.update, change))
            return
        KERNEL.run()  # drawings posted before this move
        with self.lock:
            raw = tuple(c.value for c in self.controls)
            setting = _setting(raw)
            if change is not None and self.current is not None:
                moved = [i for i in range(4) if setting[i] != self.current[i]]
                if moved:
                    self.move = (moved[0], 1 if setting[moved[0]] > self.current[moved[0]] else -1)
                # a key press (one position along one slider) or a jump (a drag, a typed value)
                one_step = setting in {_setting(v) for v in _ring(self.raw) if v is not None}
                self.streak = self.streak + 1 if one_step else 0
                self.touched = time.monotonic()
            self.raw, self.current = raw, setting
            _resolve(self.done)
            self.done = Future()
            e, d, nn, pp = setting
            if nn <= pp + 1:
                self.panel.value, self.image.value = f"<p>Need n > p + 1 rows: n = {nn}, p = {pp}.</p>", b""
                _resolve(self.done)
                return
            if change is None:  # the first drawing is complete: solved here, before any worker starts
                needs = _needs(*setting)
                _remember(_solve([pt for pt, v in zip(needs, _known(needs)) if v is None]))
            page = self.complete(setting)
            if page is None:
                self.panel.value, self.image.value = self.page(setting, None)
            else:
                self.panel.value, self.image.value = page
                _resolve(self.done)
        _SCHEDULER.wake()

    def close(self):
        """Stop solving ahead for this explorer and close its widgets."""
        _SCHEDULER.explorers.discard(self)
        self.box.close()
        for widget in (*self.controls, self.panel, self.image):
            widget.close()

    def solved(self):
        """Called by the scheduler's threads after each batch: when every lower bound the setting on
        show needs is known, ask the main thread to draw its complete page (never drawn here)."""
        with self.lock:
            if self.current is None or self.done.done():
                return
            if self.show_posted:  # once until the main thread has run it
                return
            setting, drawn = self.current, self.current in self.pages
        if drawn or None not in _known(_needs(*setting)):
            self.show_posted = True
            KERNEL.post(self.show)

    def show(self):
        """Show the setting on show complete if it can be (the main thread, posted by :meth:`solved`)."""
        with self.lock:
            self.show_posted = False
            if self.current is None or self.done.done() or self.current[2] <= self.current[3] + 1:
                return
            page = self.complete(self.current)
            if page is not None:
                self.panel.value, self.image.value = page
                _resolve(self.done)


def tightness_explorer(eps=0.1, delta=0.01, n=100, p=5):
    """Sliders for eps, delta, n and p: the bracket around Setting B's true sigma.

    The panel lists the Setting A values (Theorem 3.2, the paper's criterion
    solved exactly, the exact analytic Gaussian) and the Setting B bracket
    (Theorem 3.4 above, the best audit lower bound below, see
    :func:`tightness_numbers`).  The plot shows the bracket against p.

    The audit lower bound is an exact nested search (tenths of a second to seconds); two worker
    processes solve it ahead for the slider positions a reader is likely to reach next (one key
    press away along every slider, further along the slider being pressed), so that a key press
    usually finds it done.  A setting not solved yet shows everything else at once, marked as
    computing, and the complete panel when the lower bound arrives.

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
    _SCHEDULER.start_workers()  # they import dpmask (a second or two) while the first drawing is made here
    KERNEL.attach()
    state = _Explorer(eps, delta, n, p)
    for control in state.controls:
        control.observe(state.update, names="value")
    state.update()
    _SCHEDULER.add(state)
    box = state.box
    box._dpmask_pending = lambda: Pending(state.done)  # for benchmarks/bench_widgets.py and tests
    box._dpmask_state = state
    return box


def _curves(eps, delta, n, p_values):
    from ..exact import audit
    from ..paper import bounds

    ps = np.array([pp for pp in p_values if pp < n - 1], float)
    # the projection statistic gives the larger of the two audit bounds on this range
    lower = audit.sigma_lower_bound(eps, delta, n, ps, statistic="projection")
    return ps, bounds.sigma_b(eps, delta, n, ps), lower


def tightness_figure(eps_values=(0.1, 0.01, 0.001), delta=0.01, n_values=(100, 10000),
                     p_values=(1, 2, 5, 10, 20)):
    """Static companion of :func:`tightness_explorer`: the bracket against p.

    One panel per n; for each eps, Theorem 3.4's sufficient sigma (solid) and
    the audit lower bound (dashed, exact at p = 1), with the exact unmasked
    sigma (analytic Gaussian, dotted) for reference; each eps has its own colour and marker.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .. import exact

    fig = new_figure(figsize=(8.8, 4.0))
    axes = np.atleast_1d(fig.subplots(1, len(n_values), sharey=True))
    for ax, n in zip(axes, n_values):
        for i, eps in enumerate(eps_values):
            ps, upper, lower = _curves(eps, delta, n, p_values)
            ax.plot(ps, upper, **{**series(i, 0), "markevery": None}, label=rf"Thm 3.4, $\varepsilon={eps:g}$")
            ax.plot(ps, lower, **{**series(i, 1), "markevery": None}, label=rf"lower bound, $\varepsilon={eps:g}$")
            ax.plot(ps, np.full(ps.shape, exact.analytic_gaussian_sigma(eps, delta)), **{**series(i, 2), "markevery": None, "markersize": 3},
                    lw=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"columns $p$")
        ax.set_title(rf"$n={n}$, $\delta={delta:g}$")
        plain_log_ticks(ax.xaxis)
    axes[0].set_ylabel(r"noise standard deviation $\sigma$")
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize="small", loc="outside right upper")
    return fig
