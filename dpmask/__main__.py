"""Command line: ``python -m dpmask sigma ...`` prints every bound, ``python -m dpmask table`` prints Table 1.

Bad arguments exit with status 2 and a one-line reason on standard error.
"""

from __future__ import annotations

import argparse
import sys

from . import bounds
from .table import format_table1, table1


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m dpmask",
        description="Noise bounds for (eps, delta)-DP with and without random orthogonal masking "
        "(Ding, Wu, Miao and Chen).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sigma", help="print every bound of the paper for one set of parameters")
    s.add_argument("--eps", type=float, required=True, help="privacy parameter eps > 0")
    s.add_argument("--delta", type=float, required=True, help="privacy parameter, 0 < delta < 1")
    s.add_argument("--n", type=int, required=True, help="number of rows n > p")
    s.add_argument("--p", type=int, required=True, help="number of columns p >= 1")
    t = sub.add_parser("table", help="print the paper's Table 1, recomputed")
    t.add_argument("--corrected", action="store_true", help="conservative variant of Theorem 3.4 with 2(n-p-1) (see the book, chapter 5)")
    return parser


def _bound_lines(eps, delta, n, p):
    """(label, value or reason) for every bound; a bound outside its theorem says why."""
    entries = [
        ("Setting A necessary (Theorem 3.2)", lambda: bounds.sigma_a_necessary(eps, delta)),
        ("Setting A sufficient (Theorem 3.2)", lambda: bounds.sigma_a_sufficient(eps, delta)),
        ("Setting A sufficient (Corollary 3.3)", lambda: bounds.sigma_a_corollary(eps, delta)),
        ("Setting B sufficient (Theorem 3.4)", lambda: bounds.sigma_b(eps, delta, n, p)),
        ("Setting B sufficient (Corollary 3.5)", lambda: bounds.sigma_b_corollary(eps, delta, n, p)),
        ("Setting B, best proven (Thm 3.4 or 3.2)", lambda: bounds.sufficient_sigma(eps, delta, n, p, "B")),
    ]
    lines = []
    for label, fn in entries:
        try:
            lines.append(f"{label:<42} {fn():12.4f}")
        except ValueError as exc:
            lines.append(f"{label:<42} {'n/a':>12}  ({exc})")
    return lines


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "sigma":
            # Validate the parameters every bound shares before printing anything.
            bounds.sigma_b(args.eps, args.delta, args.n, args.p)
            print(f"eps={args.eps:g} delta={args.delta:g} n={args.n} p={args.p}")
            print("\n".join(_bound_lines(args.eps, args.delta, args.n, args.p)))
        else:
            print(format_table1(table1(corrected=args.corrected)))
    except ValueError as exc:
        parser.exit(2, f"error: {exc}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
