"""How fast each explorer of dpmask.widgets answers a slider: median and worst update time.

For every ``*_explorer`` in ``dpmask.widgets.__all__`` the benchmark builds the explorer with its
default values, then sweeps each slider in turn over *K* positions spread evenly across its
range (in the exponent for log sliders), the other sliders at their defaults, and times each
assignment ``slider.value = v``: the observer recomputes the panel and redraws the plot
synchronously, so this is the time from a slider's release to the new panel and PNG.  A second
sweep over the same positions (``--repeat 2``) shows what a class sees when students revisit
settings.

Targets (issue 11): median under 100 ms and worst under 250 ms for every explorer.
Run with `python benchmarks/bench_widgets.py [--positions K] [--repeat R] [--only NAME]`.
"""

from __future__ import annotations

import argparse
import math
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
    vals = np.linspace(slider.min, slider.max, k)
    vals = np.round((vals - slider.min) / slider.step) * slider.step + slider.min
    return [float(min(max(v, slider.min), slider.max)) for v in vals]


def sweep(make, k=12, repeat=1):
    """Times (s) of every slider assignment over *repeat* sweeps; also the build time."""
    t0 = time.perf_counter()
    box = make()
    build = time.perf_counter() - t0
    sliders = list(box.children[0].children)
    times = []
    for _ in range(repeat):
        for slider in sliders:
            default = slider.value
            for v in _positions(slider, k):
                if math.isclose(float(v), float(slider.value), rel_tol=1e-12):
                    continue
                t = time.perf_counter()
                slider.value = v
                times.append(time.perf_counter() - t)
            slider.value = default
    return build, times


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
    print(f"{'explorer':<22}{'updates':>8}{'build ms':>10}{'median ms':>11}{'worst ms':>10}  targets")
    for name in names:
        build, times = sweep(getattr(widgets, name), args.positions, args.repeat)
        med, worst = statistics.median(times), max(times)
        good = med < MEDIAN_TARGET and worst < WORST_TARGET
        ok &= good
        print(f"{name:<22}{len(times):>8}{build * 1e3:>10.0f}{med * 1e3:>11.1f}{worst * 1e3:>10.1f}  "
              f"{'OK' if good else 'MISSED'}")
    print(f"targets: median < {MEDIAN_TARGET * 1e3:.0f} ms, worst < {WORST_TARGET * 1e3:.0f} ms per update")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
