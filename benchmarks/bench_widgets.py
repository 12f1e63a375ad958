"""How fast each explorer of dpmask.widgets answers a slider: median and worst update time.

For every ``*_explorer`` in ``dpmask.widgets.__all__`` the benchmark builds the explorer with its
default values, then sweeps each slider in turn over *K* positions spread evenly across its
range (in the exponent for log sliders), the other sliders at their defaults, and times each
assignment ``slider.value = v``: the observer recomputes the panel and redraws the plot
synchronously, so this is the time from a slider's release to the new panel and PNG.  An
explorer that finishes a slow part in a worker thread (tightness: the audit lower bound) is
also timed to completion, waiting for that thread.  A second
sweep over the same positions (``--repeat 2``) shows what a class sees when students revisit
settings.

Targets (issue 11): median under 100 ms and worst under 250 ms for every explorer.
Run with `python benchmarks/bench_widgets.py [--positions K] [--repeat R] [--only NAME]`.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import numpy as np

MEDIAN_TARGET = 0.100
WORST_TARGET = 0.250


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


def sweep(make, k=12, repeat=1):
    """Times (s) of every slider assignment over *repeat* sweeps; also the build time."""
    t0 = time.perf_counter()
    box = make()
    build = time.perf_counter() - t0
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
            for v in _positions(slider, k):
                if v == slider.value or (isinstance(v, float) and math.isclose(v, float(slider.value), rel_tol=1e-12)):
                    continue
                t, c = time.perf_counter(), time.process_time()
                slider.value = v
                first.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
                wait()
                done.append(time.perf_counter() - t)
            slider.value = default
            wait()
    return build, first, done, cpu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=12, help="positions per slider (default 12)")
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
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f} on {os.cpu_count()} cores (wall times grow with it; CPU times do not)")
    print(f"{'explorer':<22}{'updates':>8}{'build ms':>10}{'median ms':>11}{'worst ms':>10}  targets"
          f"{'complete: median':>20}{'worst':>8}{'CPU median':>12}")
    for name in names:
        build, first, done, cpu = sweep(getattr(widgets, name), args.positions, args.repeat)
        med, worst = statistics.median(first), max(first)
        good = med < MEDIAN_TARGET and worst < WORST_TARGET
        ok &= good
        # "complete" differs only for an explorer that finishes its slow part in a worker thread
        # (tightness: the audit lower bound): slider release to the full panel and plot.
        print(f"{name:<22}{len(first):>8}{build * 1e3:>10.0f}{med * 1e3:>11.1f}{worst * 1e3:>10.1f}  "
              f"{'OK    ' if good else 'MISSED'}{statistics.median(done) * 1e3:>21.1f}{max(done) * 1e3:>8.1f}"
              f"{statistics.median(cpu) * 1e3:>12.1f}")
    print(f"targets: median < {MEDIAN_TARGET * 1e3:.0f} ms, worst < {WORST_TARGET * 1e3:.0f} ms from a slider's "
          "release to the redrawn panel and plot")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
