"""Benchmarks of the foundation: Table 1, the vectorised Theorem 3.4 solver, and release_b.

Every figure is a ratio against a baseline measured in the same run, so the numbers mean the
same on a fast or a slow (or busy) machine.  Run with `make bench` or
`python benchmarks/bench_core.py [--quick]`.

Targets (issue "dpmask foundation"):
- Table 1 (36 rows) in under 20 ms;
- a 100 x 100 grid of sigma_b costs at most 20x one vectorised scipy.stats.ncx2.isf call over
  the same 10^4 points;
- release_b at n = 4000, p = 5: at least 100x faster than the dense path;
- release_b at n = 10^6, p = 20: within 2x of a bare numpy.linalg.qr of an n x p Gaussian
  matrix, with memory O(n p).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np
from scipy import stats

from dpmask.paper import bounds, mechanisms
from dpmask.paper.table import table1


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_table1():
    t = best_of(table1, 7)
    print(f"table1 (36 rows): {t * 1e3:.2f} ms  (target < 20 ms)  {'OK' if t < 0.02 else 'MISSED'}")
    return t < 0.02


def bench_sigma_b_grid():
    eps, delta = np.meshgrid(np.logspace(-3, 0, 100), np.logspace(-10, -1, 100))
    n, p = 1000, 5
    sig = bounds.sigma_b(eps, delta, n, p)
    t_solver = best_of(lambda: bounds.sigma_b(eps, delta, n, p), 3)
    t_isf = best_of(lambda: stats.ncx2.isf(delta, 2 * (n - p), p / sig**2), 3)
    ratio = t_solver / t_isf
    print(
        f"sigma_b on a 100x100 grid: {t_solver * 1e3:.1f} ms; one ncx2.isf over the grid: {t_isf * 1e3:.1f} ms; "
        f"ratio {ratio:.1f}x (target <= 20x)  {'OK' if ratio <= 20 else 'MISSED'}"
    )
    return ratio <= 20


def bench_release_b_small():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (4000, 5))
    t_dense = best_of(lambda: mechanisms.release_b(X, 1.0, rng, method="dense"), 2)
    t_frame = best_of(lambda: mechanisms.release_b(X, 1.0, rng), 7)
    ratio = t_dense / t_frame
    print(
        f"release_b n=4000 p=5: dense {t_dense * 1e3:.0f} ms, frame {t_frame * 1e3:.2f} ms; "
        f"speed-up {ratio:.0f}x (target >= 100x)  {'OK' if ratio >= 100 else 'MISSED'}"
    )
    return ratio >= 100


# Peak memory is read from VmHWM of a fresh process: getrusage's ru_maxrss would report the
# parent's high-water mark, which a forked child inherits on Linux.
_MEMORY_CHILD = """
import sys, numpy as np
from dpmask.paper import mechanisms
def hwm_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
n, p = int(sys.argv[1]), int(sys.argv[2])
X = np.full((n, p), 0.5)
base = hwm_kb()
mechanisms.release_b(X, 1.0, 0)
print(base, hwm_kb())
"""


def bench_release_b_large(n):
    p = 20
    rng = np.random.default_rng(1)
    X = np.zeros((n, p))
    Z = rng.standard_normal((n, p))
    t_qr = best_of(lambda: np.linalg.qr(Z), 3)
    t_gen_qr = best_of(lambda: np.linalg.qr(rng.standard_normal((n, p))), 3)
    t_rel = best_of(lambda: mechanisms.release_b(X, 1.0, rng), 3)
    r1, r2 = t_rel / t_qr, t_rel / t_gen_qr
    print(
        f"release_b n={n} p={p}: {t_rel:.3f} s; bare numpy.linalg.qr {t_qr:.3f} s (ratio {r1:.2f}x), "
        f"generate + qr {t_gen_qr:.3f} s (ratio {r2:.2f}x); target <= 2x  {'OK' if r1 <= 2 else 'MISSED'}"
    )
    out = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(n), str(p)], capture_output=True, text=True)
    base_kb, peak_kb = map(int, out.stdout.split())
    data_mb = n * p * 8 / 2**20
    extra_mb = (peak_kb - base_kb) / 1024
    print(
        f"  memory: the data is {data_mb:.0f} MiB; release_b added {extra_mb:.0f} MiB at peak "
        f"({extra_mb / data_mb:.1f} copies of an n x p array; an n x n matrix would need {n * n * 8 / 2**30:.0f} GiB)"
    )
    return r1 <= 2


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    args = parser.parse_args(argv)
    ok = [bench_table1(), bench_sigma_b_grid(), bench_release_b_small(),
          bench_release_b_large(10**5 if args.quick else 10**6)]
    print(f"{sum(ok)} of {len(ok)} targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
