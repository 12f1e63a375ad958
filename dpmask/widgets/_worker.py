"""The tightness explorer's worker process (``python -m dpmask.widgets._worker``).

It reads batches of points (pickled lists, see :func:`dpmask.widgets.tightness._solve`) on its
standard input and writes their lower bounds (pickled dicts) on its standard output, until its
input closes: the kernel that started it ended or died.
"""

from __future__ import annotations

import pickle
import sys


def main():
    from .tightness import _solve

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
