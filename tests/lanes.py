"""Run pytest in two lanes at once, one per core: ``make test``'s runner.

Usage: ``python tests/lanes.py MARKEXPR_1 MARKEXPR_2 [-- PYTEST_ARGS...]``

Lane 1 runs ``pytest -m MARKEXPR_1 PYTEST_ARGS`` in the foreground, its output on the terminal as it
comes; lane 2 runs ``pytest -m MARKEXPR_2 PYTEST_ARGS`` beside it, its output kept in a file and
printed, whole, when both have ended.  The exit status is 0 when both passed, else the first
failing lane's.

Why two sessions and not ``pytest-xdist``: in ``make test`` the book built by the book tests must
reuse the notebooks nbval has just executed (tests/conftest.py hands them over), so nbval and the
book tests run in one session, in that order; xdist would schedule that session's chunk wherever
it pleases.  The package's own tests need neither and fill the second core meanwhile.  Each lane
is a complete pytest session (its own fixtures, its own summary line).

Both lanes must be given explicitly and together must cover what one session would run: the
Makefile writes them as ``E and X`` and ``not E and X`` for one expression ``X``.  Each lane is told
its number (``DPMASK_LANE``): in ``make test`` the second also runs the longest chapters
(``beside``) and the first lane's book build waits for them (tests/conftest.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    if len(argv) != 2:
        sys.exit("usage: python tests/lanes.py MARKEXPR_1 MARKEXPR_2 [-- PYTEST_ARGS...]")
    cmd = [sys.executable, "-m", "pytest"]
    with tempfile.TemporaryFile(mode="w+", prefix="dpmask-lane2-") as log:
        # Lane 2 keeps no pytest cache: both sessions would write .pytest_cache/v/cache/lastfailed
        # when they end, each over the other's.
        second = subprocess.Popen([*cmd, "-m", argv[1], *extra], stdout=log, stderr=subprocess.STDOUT,
                                  env=dict(os.environ, DPMASK_LANE="2", PYTEST_ADDOPTS=os.environ.get("PYTEST_ADDOPTS", "")
                                           + " -p no:cacheprovider"))
        try:
            first = subprocess.call([*cmd, "-m", argv[0], *extra], env=dict(os.environ, DPMASK_LANE="1"))
            status2 = second.wait()
        except KeyboardInterrupt:
            second.terminate()
            second.wait()
            raise
        log.seek(0)
        print(f"\n{'=' * 30} lane 2, run beside the above: -m {argv[1]!r} {'=' * 30}", flush=True)
        sys.stdout.write(log.read())
        sys.stdout.flush()
    print(f"lanes: 1 ({argv[0]}) exit {first}; 2 ({argv[1]}) exit {status2}", flush=True)
    return first or status2


if __name__ == "__main__":
    sys.exit(main())
