"""Dask, imported on first use (an optional dependency), and the check of a scheduler argument.

The base of :mod:`dpmask.scale` (the releases) and :mod:`dpmask.scale.write` (computing and
writing them); it imports no other dpmask module.
"""

from __future__ import annotations


def import_dask():
    """``(dask, dask.array)``, or an ImportError that says how to install them (an optional dependency)."""
    try:
        import dask
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - exercised only without dask
        raise ImportError(
            "dpmask.scale needs Dask: pip install 'dpmask[scale]' (dask[array])"
        ) from exc
    return dask, da



def check_scheduler(scheduler):
    """None, a Dask scheduler name, or a scheduler object (a Client, a get function)."""
    dask, _ = import_dask()
    names = tuple(getattr(dask.base, "named_schedulers", {}))
    if isinstance(scheduler, str):
        if names and scheduler not in names:
            raise ValueError(f"scheduler must be None, a Client or one of {names}, got {scheduler!r}")
    elif scheduler is not None and not (callable(scheduler) or hasattr(scheduler, "get")):
        raise ValueError(f"scheduler must be None, a Client or one of {names}, got {scheduler!r}")
    return scheduler
