"""Benchmark: what masking costs as n grows, in memory and on Dask out of core.

Part 1 times four in-memory ways to mask an n x p matrix and fits the slope
of each on a log-log plot of time against n:

* dense Haar (``release_b(method="dense")``): an n x n Haar matrix, O(n^3);
* frame (``release_b``): the frame identity, O(n p^2);
* blocks (``release_block``): block-diagonal masking, every block drawn
  through the frame identity, so O(n p^2) as well;
* dense blocks: block-diagonal masking with an explicit Haar matrix per block
  of size b, O(n b^2) -- linear in n for a fixed b, quadratic in b for a
  fixed n (the second panel).

Part 2 runs Setting B and block-diagonal masking with Dask on lazily
generated data (n = 10^7, p = 10 by default), writes each release to a .npy
file in /tmp chunk by chunk, deletes it, and reports the time per row as a
ratio to the in-memory frame path timed in the same run (n = 10^6) and the
peak resident memory (``VmHWM`` of a child process) as a ratio to 4 GiB.

BLAS is limited to one thread per process (set before numpy is imported):
Dask's threads provide the parallelism, and on a shared two-core machine
competing BLAS threads make small factorisations many times slower.

Usage: ``python benchmarks/bench_scale.py [--quick]``; ``--quick`` is a
small version that finishes in a few seconds (the test suite runs it).
The figure goes to ``benchmarks/results/`` (git-ignored).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from _timing import best_time  # noqa: E402  (benchmarks/ is on sys.path when a script runs)

from dpmask.paper.mechanisms import haar_orthogonal, release_b, release_block  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
P = 10
SIGMA = 1.0
GIB = 2**30


def dense_blocks(X, sigma, b, rng):
    """Block-diagonal masking with an explicit b x b Haar matrix per block: O(n b^2)."""
    M = X + sigma * rng.standard_normal(X.shape)
    out = np.empty_like(M)
    for start in range(0, M.shape[0], b):
        out[start:start + b] = haar_orthogonal(b, rng) @ M[start:start + b]
    return out


def slope(ns, ts):
    """Least-squares slope of log time against log size."""
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def tail_slope(ns, ts, k=3):
    """Slope over the k largest sizes, where fixed per-call overheads matter least."""
    return slope(ns[-k:], ts[-k:])


def cost_against_n(quick):
    rng = np.random.default_rng(20268)
    b = 250
    grids = {
        "dense Haar": [50, 100, 200] if quick else [200, 400, 800, 1600],
        "frame": [10**3, 10**4] if quick else [10**3, 10**4, 10**5, 10**6],
        "blocks (frame)": [10**3, 4000] if quick else [10**3, 10**4, 10**5, 10**6],
        f"dense blocks (b={b})": [500, 1000] if quick else [10**3, 10**4, 10**5],
    }
    repeats = 1 if quick else 3
    runs = {
        "dense Haar": lambda X: release_b(X, SIGMA, rng, method="dense"),
        "frame": lambda X: release_b(X, SIGMA, rng),
        "blocks (frame)": lambda X: release_block(X, SIGMA, [b] * (X.shape[0] // b), rng),
        f"dense blocks (b={b})": lambda X: dense_blocks(X, SIGMA, b, rng),
    }
    timings = {}
    for name, ns in grids.items():
        ts = []
        for n in ns:
            X = rng.uniform(-1, 1, size=(n, P))
            ts.append(best_time(lambda: runs[name](X), repeats))
        timings[name] = (ns, ts)
    # cost against the block size at a fixed n
    n_fixed = 2**9 if quick else 2**15
    bs = [16, 64] if quick else [32, 64, 128, 256, 512, 1024]
    X = rng.uniform(-1, 1, size=(n_fixed, P))
    by_b = {
        "dense blocks": (bs, [best_time(lambda: dense_blocks(X, SIGMA, bb, rng), repeats) for bb in bs]),
        "blocks (frame)": (bs, [best_time(lambda: release_block(X, SIGMA, [bb] * (n_fixed // bb), rng), repeats)
                                for bb in bs]),
    }
    return timings, by_b, n_fixed


def plot(timings, by_b, n_fixed, path):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4), layout="constrained")
    ax1, ax2 = fig.subplots(1, 2)
    for name, (ns, ts) in timings.items():
        ax1.loglog(ns, ts, "o-", label=f"{name}: slope {slope(ns, ts):.2f}")
    ax1.set_xlabel("rows n")
    ax1.set_ylabel("time (s)")
    ax1.set_title(f"cost of one release against n (p = {P})")
    ax1.legend(fontsize=8)
    for name, (bs, ts) in by_b.items():
        ax2.loglog(bs, ts, "s-", label=f"{name}: slope {slope(bs, ts):.2f}")
    ax2.set_xlabel("block size b")
    ax2.set_ylabel("time (s)")
    ax2.set_title(f"cost against block size (n = {n_fixed})")
    ax2.legend(fontsize=8)
    RESULTS.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


# --------------------------------------------------------------------------- Dask, out of core

def child(n, p, chunks, mode, path):
    """Run one Dask release in this (fresh) process and print its time and peak memory."""
    import dask.array  # noqa: F401  (import time is not part of the release's cost)

    from dpmask import scale

    t0 = time.perf_counter()
    X = scale.random_data_dask(n, p, chunks=chunks, rng=20268)
    if mode == "block":
        Y = scale.release_block_dask(X, SIGMA, rng=1)
    else:
        Y = scale.release_b_dask(X, SIGMA, rng=1)
    scale.write_npy(Y, path)
    seconds = time.perf_counter() - t0
    out = np.load(path, mmap_mode="r")
    ok = out.shape == (n, p) and bool(np.isfinite(out[-chunks:]).all())
    del out
    # VmHWM is this process's own high-water mark; getrusage's ru_maxrss would report the
    # parent's when that is larger (a forked child inherits it on Linux).
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) * 1024
    print(json.dumps({"seconds": seconds, "peak_bytes": peak, "ok": ok}))


def run_child(n, p, chunks, mode):
    with tempfile.TemporaryDirectory(prefix="dpmask-bench-", dir="/tmp") as tmp:
        path = os.path.join(tmp, "release.npy")
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(n), str(p), str(chunks), mode, path],
            capture_output=True, text=True, check=True,
        )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def in_memory_frame_per_row(n, repeats):
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, size=(n, P))
    return best_time(lambda: release_b(X, SIGMA, rng), repeats, budget=30) / n


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--child", nargs=5, metavar=("N", "P", "CHUNKS", "MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        n, p, chunks, mode, path = args.child
        child(int(n), int(p), int(chunks), mode, path)
        return

    quick = args.quick
    print(f"dpmask scale benchmark ({'quick' if quick else 'full'}), p = {P}, {os.cpu_count()} cores "
          f"(shared with other jobs: compare ratios, not seconds)")
    timings, by_b, n_fixed = cost_against_n(quick)
    print("\nPart 1: in-memory cost against n (log-log slope of time against n)")
    for name, (ns, ts) in timings.items():
        per = ", ".join(f"n={n}: {t * 1e3:.3g} ms" for n, t in zip(ns, ts))
        print(f"  {name:22s} slope {slope(ns, ts):5.2f} (largest three sizes: {tail_slope(ns, ts):5.2f})   ({per})")
    print(f"  against block size b at n = {n_fixed} (expected: 2 for dense blocks, <= 0 for frames):")
    for name, (bs, ts) in by_b.items():
        print(f"  {name:22s} slope {slope(bs, ts):5.2f} in b (largest three sizes: {tail_slope(bs, ts):5.2f})")
    dense_ns, dense_ts = timings["dense Haar"]
    frame_ns, frame_ts = timings["frame"]
    n_common = dense_ns[-1]
    frame_at = np.exp(np.interp(np.log(n_common), np.log(frame_ns), np.log(frame_ts)))
    print(f"  dense Haar / frame time at n = {n_common}: {dense_ts[-1] / frame_at:.3g}x")
    png = RESULTS / ("bench_scale_quick.png" if quick else "bench_scale.png")
    plot(timings, by_b, n_fixed, png)
    print(f"  figure: {png}")

    n_big = 5 * 10**4 if quick else 10**7
    n_ref = 2 * 10**4 if quick else 10**6
    chunks = 12_500 if quick else 2 * 10**5
    print(f"\nPart 2: Dask, n = {n_big}, p = {P}, chunks of {chunks} rows, lazy data, "
          f"release written to /tmp chunk by chunk")
    data_bytes = n_big * P * 8
    for mode in ("block", "setting-b"):
        # the reference is timed just before and just after the Dask run, so that both
        # see the same load from other jobs on the shared machine
        ref_before = in_memory_frame_per_row(n_ref, 1 if quick else 2)
        res = run_child(n_big, P, chunks, mode)
        ref_after = in_memory_frame_per_row(n_ref, 1 if quick else 2)
        ref = 0.5 * (ref_before + ref_after)
        ratio = res["seconds"] / n_big / ref
        print(f"  {mode:10s} completed={res['ok']}  time {res['seconds']:.3g} s;"
              f" time per row / in-memory frame path (n = {n_ref}): {ratio:.2f}x"
              f" {'(within 3x)' if ratio <= 3 else '(NOT within 3x)'}"
              f"  [reference {ref_before * 1e6:.3g} and {ref_after * 1e6:.3g} us per row before and after]")
        print(f"  {'':10s} peak memory {res['peak_bytes'] / 2**20:.0f} MiB = {res['peak_bytes'] / (4 * GIB):.3f}"
              f" of the 4 GiB budget = {res['peak_bytes'] / data_bytes:.2f} x the release's size "
              f"({data_bytes / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
