"""How fast each explorer of dpmask.widgets answers a slider, in Python alone: median and worst update time.

For every ``*_explorer`` in ``dpmask.widgets.__all__`` the benchmark builds the explorer with its
default values, then moves each slider in turn and times each assignment ``slider.value = v``:
the observer recomputes the panel and redraws the plot synchronously, so this is the Python side
of a slider move (no browser, no messages; ``benchmarks/bench_widgets_live.py`` measures key press
to visible update in JupyterLab).  Two ways to move:

* ``--moves keys`` (default): *K* key presses from the default, one slider step each (towards the
  side with more room, back at an end), a pause of ``--pause`` seconds after each answer, the
  slider then back to its default: what a reader tapping an arrow key does (issue 15).  As in
  ``bench_widgets_live.py``, the first press comes ``--settle`` seconds after the explorer is
  built and each slider's first press ``--switch`` seconds after the one before it ended (a
  reader reaching for the slider); ``--settle 0 --switch 0`` presses at once;
* ``--moves spread``: *K* positions spread evenly over the slider's range (jumps), the other
  sliders at their defaults; a second sweep (``--repeat 2``) shows settings revisited.

The tightness explorer finishes its exact lower bound in a worker process when it was not solved
ahead: its "complete" columns wait for it (``box._dpmask_pending()``).

Targets (issue 15, end to end in the browser): median under 150 ms and worst under 400 ms; the
Python side here must leave room for the messages and the browser's drawing.  Issue 30: every
explorer's median update at most half of a bare two-panel matplotlib figure drawn and encoded as
PNG in the same run (:func:`bare_figure`, timed before and after the sweeps; the column "/bare").
Run with `python benchmarks/bench_widgets.py [--moves keys|spread] [--positions K] [--only NAME]`.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import numpy as np

MEDIAN_TARGET = 0.150
WORST_TARGET = 0.400


def _positions(slider, k):
    """k values spread over the slider's range, snapped to its step."""
    import ipywidgets as w

    if isinstance(slider, w.FloatLogSlider):
        exps = np.linspace(slider.min, slider.max, k)
        exps = np.round((exps - slider.min) / slider.step) * slider.step + slider.min
        exps = np.clip(exps, slider.min, slider.max)
        return [float(slider.base**e) for e in exps]
    if isinstance(slider, w.IntSlider):
        return sorted({int(v) for v in np.round(np.linspace(slider.min, slider.max, k))})
    if isinstance(slider, (w.Dropdown, w.ToggleButtons, w.RadioButtons)):
        return [value for _, value in slider.options] if slider.options and isinstance(slider.options[0], tuple) \
            else list(slider.options)
    vals = np.linspace(slider.min, slider.max, k)
    vals = np.round((vals - slider.min) / slider.step) * slider.step + slider.min
    return [float(min(max(v, slider.min), slider.max)) for v in vals]


def _key_presses(slider, k):
    """The values *k* arrow-key presses give from the slider's value (towards more room, back at an end)."""
    import ipywidgets as w

    log = isinstance(slider, w.FloatLogSlider)
    x = math.log10(slider.value) if log else float(slider.value)
    i = round((x - slider.min) / slider.step)
    top = round((slider.max - slider.min) / slider.step)
    up, out = top - i >= i, []
    for _ in range(k):
        if (up and i >= top) or (not up and i <= 0):
            up = not up
        i += 1 if up else -1
        value = slider.min + i * slider.step
        out.append(slider.base**value if log else (int(value) if isinstance(slider, w.IntSlider) else value))
    return out


def bare_figure(repeats=15):
    """Median seconds to draw a bare two-panel matplotlib figure (two lines, labels) and encode it as PNG.

    The yardstick of issue 30: the same machine, the same run, so a busy machine slows both."""
    import io

    from matplotlib.figure import Figure

    x = np.linspace(0.01, 1.0, 200)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fig = Figure(figsize=(6.4, 4.0), dpi=80)
        for i, ax in enumerate(fig.subplots(1, 2)):
            ax.plot(x, np.sqrt(x) * (i + 1))
            ax.set_xlabel("x")
            ax.set_ylabel("y")
            ax.set_title(f"panel {i + 1}")
        fig.savefig(io.BytesIO(), format="png")
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def sweep(make, k=12, repeat=1, moves="keys", pause=0.3, settle=2.0, switch=1.0):
    """Times (s) of every slider assignment over *repeat* sweeps; also the build time."""
    t0 = time.perf_counter()
    box = make()
    build = time.perf_counter() - t0
    if moves == "keys":
        time.sleep(settle)
    sliders = list(box.children[0].children)
    pending = getattr(box, "_dpmask_pending", lambda: None)
    first, done, cpu = [], [], []

    def wait():
        future = pending()
        if future is not None:
            future.result()

    for _ in range(repeat):
        for slider in sliders:
            default = slider.value
            if moves == "keys" and not hasattr(slider, "step"):
                continue  # a drop-down has no arrow keys
            if moves == "keys":
                time.sleep(switch)
            for v in (_key_presses(slider, k) if moves == "keys" else _positions(slider, k)):
                if v == slider.value or (isinstance(v, float) and math.isclose(v, float(slider.value), rel_tol=1e-12)):
                    continue
                t, c = time.perf_counter(), time.process_time()
                slider.value = v
                first.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
                wait()
                done.append(time.perf_counter() - t)
                if moves == "keys":
                    time.sleep(pause)
            slider.value = default
            wait()
    return build, first, done, cpu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", choices=("keys", "spread"), default="keys",
                        help="key presses from the default (default) or positions spread over the range")
    parser.add_argument("--positions", type=int, default=12, help="presses or positions per slider (default 12)")
    parser.add_argument("--pause", type=float, default=0.3, help="seconds after each answer with --moves keys")
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds between building an explorer and its first press with --moves keys (default 2)")
    parser.add_argument("--switch", type=float, default=1.0,
                        help="seconds before each slider's first press with --moves keys (default 1)")
    parser.add_argument("--repeat", type=int, default=1, help="sweeps over the same positions")
    parser.add_argument("--only", default=None, help="one explorer, e.g. tightness_explorer")
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    from dpmask import widgets

    names = [n for n in widgets.__all__ if n.endswith("_explorer")]
    if args.only:
        names = [n for n in names if n == args.only]
    ok = True
    bare = [bare_figure()]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f} on {os.cpu_count()} cores (wall times grow with it; CPU times do not)")
    print("a benchmark, not a test: the exit status says whether the Python side alone met the end-to-end targets")
    print(f"{'explorer':<22}{'updates':>8}{'build ms':>10}{'median ms':>11}{'worst ms':>10}  targets"
          f"{'complete: median':>20}{'worst':>8}{'CPU median':>12}{'/bare':>7}")
    rows = []
    for name in names:
        build, first, done, cpu = sweep(getattr(widgets, name), args.positions, args.repeat, args.moves, args.pause,
                                       args.settle, args.switch)
        med, worst = statistics.median(first), max(first)
        # "complete" differs only for an explorer that finishes its slow part in a worker
        # (tightness: the exact lower bound): slider move to the full panel and plot.  The targets
        # apply to it.
        good = statistics.median(done) < MEDIAN_TARGET and max(done) < WORST_TARGET
        ok &= good
        print(f"{name:<22}{len(first):>8}{build * 1e3:>10.0f}{med * 1e3:>11.1f}{worst * 1e3:>10.1f}  "
              f"{'OK    ' if good else 'MISSED'}{statistics.median(done) * 1e3:>21.1f}{max(done) * 1e3:>8.1f}"
              f"{statistics.median(cpu) * 1e3:>12.1f}{statistics.median(done) / bare[0]:>7.2f}", flush=True)
        rows.append((name, statistics.median(done)))
    bare.append(bare_figure())
    ref = statistics.median(bare)
    print(f"bare two-panel figure drawn and encoded as PNG: {bare[0] * 1e3:.1f} ms before the sweeps, "
          f"{bare[1] * 1e3:.1f} ms after; median update / bare (issue 30 target <= 0.5): "
          + ", ".join(f"{name.removesuffix('_explorer')} {t / ref:.2f}" for name, t in rows))
    print(f"targets (end to end, issue 15): median < {MEDIAN_TARGET * 1e3:.0f} ms, "
          f"worst < {WORST_TARGET * 1e3:.0f} ms; here Python alone, {args.moves}"
          + (f", first press {args.settle:g} s after building, {args.switch:g} s before each slider's first press"
             if args.moves == "keys" else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
