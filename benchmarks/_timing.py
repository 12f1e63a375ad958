"""Shared timing helper of the benchmark scripts (run as ``python benchmarks/<script>.py``)."""

from __future__ import annotations

import time


def best_time(func, repeats, budget=2.0):
    """Smallest wall time of up to ``repeats`` runs (stop early after ``budget`` seconds)."""
    times, start = [], time.perf_counter()
    for _ in range(repeats):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > budget:
            break
    return min(times)
