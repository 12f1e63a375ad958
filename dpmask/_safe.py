"""Moving a solved value to its safe side (private helper of :mod:`dpmask.paper.bounds` and :mod:`dpmask.exact`).

A root finder stops within a few ulp of a root, on either side of it.  A sufficient sigma must
not lie below it, so after the solve each value is raised by relative steps until the criterion
it solves holds as computed, with a margin that covers the criterion's own error.
"""

from __future__ import annotations

import numpy as np

_EPS = np.finfo(float).eps


def nudge_up(excess, x, top, args=(), steps=60):
    """Raise each x by relative steps 2**-52, 2**-51, ... until ``excess(x, *args) <= 0``.

    Parameters
    ----------
    excess : callable
        Vectorised; positive where x is not (yet) on the safe side, non-increasing in x.
    x : ndarray
        The solved values.
    top : array_like
        Values known to be on the safe side (a rigorous bracket end): no x is raised past
        them, and they are returned where the steps do not get there.
    args : tuple of arrays
        Extra arguments of *excess*, broadcast with x; only the points still unsafe are
        evaluated.

    Returns
    -------
    ndarray
        The steps double, so a value overshoots the first safe one by at most the last step.
    """
    x = np.array(x, dtype=float)
    shape = x.shape
    x = x.ravel()
    top = np.broadcast_to(np.asarray(top, float), shape).ravel()
    args = [np.broadcast_to(np.asarray(a, float), shape).ravel() for a in args]
    todo = np.arange(x.size)
    for j in range(steps):
        bad = excess(x[todo], *(a[todo] for a in args)) > 0
        todo = todo[bad]
        if todo.size == 0:
            return x.reshape(shape)
        x[todo] = np.minimum(x[todo] * (1.0 + _EPS * 2.0**j), top[todo])
    return x.reshape(shape)
