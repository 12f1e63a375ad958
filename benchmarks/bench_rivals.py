"""Benchmark: the rival's release and inference cost against Setting B's frame path.

For each size (n, p) it times, on the same data X (entries uniform in [-1, 1]):

* masking: ``mechanisms.release_b`` (the frame identity, O(n p^2), an n x p
  release) followed by ``inference.ols_from_release`` (which forms ``Y^T Y``);
* the rival: ``rivals.release_gram`` (one pass ``X^T X``, O(n p^2), then p x p
  noise) followed by ``inference.ols_from_gram(..., noise="gram")``.

* the field's mechanisms on the same data: the rival as a table
  (``rivals.release_gram`` then ``rivals.gram_table``), AdaSSP (``rivals.adassp``)
  and the JL projection with ``r = n`` rows (``rivals.jl_release`` then
  ``rivals.jl_ols``, including the calibration of ``w``).

It reports the best wall time of a few runs of each and the ratios
rival / masking, table / masking, adassp / masking and jl / masking, all
measured in the same run.  Both noise levels are set for eps = 0.1, delta = 0.01 (the
timings do not depend on them).

BLAS is limited to one thread (set before numpy is imported), as in the other
benchmarks, so that the two-core machine's other jobs do not distort them.

Usage: ``python benchmarks/bench_rivals.py [--quick]``; ``--quick`` uses
small sizes and finishes in a second or two (the test suite runs it).  A JSON
summary goes to ``benchmarks/results/`` (git-ignored).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from _timing import best_time  # noqa: E402  (benchmarks/ is on sys.path when a script runs)

from dpmask import inference, rivals  # noqa: E402
from dpmask.paper import bounds  # noqa: E402
from dpmask.paper.mechanisms import release_b  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
EPS, DELTA = 0.1, 0.01


def measure(n, p, repeats, rng):
    X = rng.uniform(-1.0, 1.0, (n, p))
    sigma = bounds.sigma_b(EPS, DELTA, n, p)
    tau = rivals.sigma_gram(EPS, DELTA, p)

    def masking():
        Y = release_b(X, sigma, rng)
        return inference.ols_from_release(Y, p - 1, sigma, correct_noise=False)

    def rival():
        K = rivals.release_gram(X, tau, rng)
        return inference.ols_from_gram(K, n, p - 1, noise="gram", tau=tau)

    def table():
        return rivals.gram_table(rivals.release_gram(X, tau, rng), n, rng)

    def adassp():
        return rivals.adassp(X[:, :-1], X[:, -1], EPS, DELTA, rng)

    def jl():
        return rivals.jl_ols(rivals.jl_release(X, EPS, DELTA, rng=rng))

    funcs = {"masking": masking, "rival": rival, "table": table, "adassp": adassp, "jl": jl}
    for f in funcs.values():
        f()  # warm-up (imports, allocations)
    t = {name: best_time(f, repeats, budget=3.0) for name, f in funcs.items()}
    out = {"n": n, "p": p}
    out.update({f"{name}_s": value for name, value in t.items()})
    out["ratio"] = t["rival"] / t["masking"]
    for name in ("table", "adassp", "jl"):
        out[f"ratio_{name}"] = t[name] / t["masking"]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a second or two")
    args = parser.parse_args(argv)
    sizes = [(10**3, 2), (10**4, 5)] if args.quick else [(10**4, 2), (10**5, 5), (10**6, 5), (10**6, 20)]
    repeats = 2 if args.quick else 5
    rng = np.random.default_rng(20269)
    print(f"dpmask rivals benchmark ({'quick' if args.quick else 'full'}), eps = {EPS}, delta = {DELTA}, "
          f"BLAS threads = {os.environ['OPENBLAS_NUM_THREADS']}")
    print(f"{'n':>9} {'p':>3} {'masking (s)':>12} {'rival (s)':>10} {'rival / masking':>16} "
          f"{'table / masking':>16} {'adassp / masking':>17} {'jl / masking':>13}")
    rows = []
    for n, p in sizes:
        r = measure(n, p, repeats, rng)
        rows.append(r)
        print(f"{n:>9} {p:>3} {r['masking_s']:>12.4g} {r['rival_s']:>10.4g} {r['ratio']:>16.3f} "
              f"{r['ratio_table']:>16.3f} {r['ratio_adassp']:>17.3f} {r['ratio_jl']:>13.3f}")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / ("bench_rivals_quick.json" if args.quick else "bench_rivals.json")
    out.write_text(json.dumps(rows, indent=1))
    print(f"ratio rival / masking: {min(r['ratio'] for r in rows):.3f} to {max(r['ratio'] for r in rows):.3f}")
    for name in ("table", "adassp", "jl"):
        lo, hi = min(r[f"ratio_{name}"] for r in rows), max(r[f"ratio_{name}"] for r in rows)
        print(f"ratio {name} / masking: {lo:.3f} to {hi:.3f}")
    return rows


if __name__ == "__main__":
    main()
