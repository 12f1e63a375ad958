"""The tightness explorer's worker process (``python -m dpmask.widgets._worker [niceness]``).

It reads batches of points (pickled lists, see :func:`dpmask.widgets.tightness._solve`) on its
standard input and writes their lower bounds (pickled dicts) on its standard output, until its
input closes: the kernel that started it ended or died.
"""

from __future__ import annotations

import pickle
import sys


def main():
    import os

    from .tightness import _solve

    if len(sys.argv) > 1 and hasattr(os, "nice"):  # the priority asked for (solving ahead yields to the rest)
        os.nice(int(sys.argv[1]))

    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # stdout carries the answers only
    while True:
        try:
            points = pickle.load(inp)
        except (EOFError, OSError, pickle.UnpicklingError):
            return
        try:
            pickle.dump(_solve(points), out)
            out.flush()
        except (BrokenPipeError, OSError):
            return


if __name__ == "__main__":
    main()
