"""Command line: ``python -m dpmask sigma ...`` says how much noise to add, ``python -m dpmask table`` prints Table 1.

``sigma`` prints, for each setting (A: noise only; B: noise, then a Haar-random
orthogonal mask; C: mask, then noise), the smallest sigma PROVEN sufficient for
(eps, delta)-DP by any result in the book and the result that proves it
(:func:`dpmask.exact.best.best_sufficient_sigma`), the exact sigma where it is known,
the lower bound, then the paper's own bounds, labelled as the paper's, and finally the
rival's noise on the Gram matrix (the Gaussian mechanism on X^T X, chapter 9), labelled as
noise on X^T X and not comparable entry by entry.  For the analyses a masked release supports the
rival is the more accurate at the same (eps, delta); what chapter 9 finds left in masking's favour
is a lighter protocol when nobody is trusted with the data, at the price of trusting two servers
not to collude and of calibrating the noise for the smallest number of rows that may complete
(Setting B's sigmas fall as n grows, so a sigma for the planned n is not proven for fewer rows).
The rival's noisy Gram matrix also becomes a table at no cost in privacy, with the law of a masked
release given its Gram matrix where that noisy matrix is positive definite.  Setting A is local
differential privacy for changes of norm at most 1 in a row (the book's neighbours), not for a
whole row of [-1, 1]^p.

Any error -- bad arguments, or a failure inside the package (ValueError, TypeError,
OverflowError, RuntimeError, FloatingPointError, MemoryError, ...) -- exits with
status 2 and a one-line reason on standard error, never a traceback.  Nothing is
printed on standard output unless every line could be computed.  Numerical warnings raised
while computing (e.g. from scipy's special functions at extreme n) are summed up in one line
on standard error, after the output.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from .exact import best
from .paper import bounds
from .paper.table import format_table1, table1

_W = 56  # width of the label column
_DROP = 0.1  # the fraction of dropouts whose cost the report prints


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m dpmask",
        description="How much Gaussian noise (eps, delta)-DP needs with and without random orthogonal "
        "masking (Ding, Wu, Miao and Chen, and the checks of the dpmask book).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser(
        "sigma",
        help="per setting: the best proven sigma and its source, the exact sigma where known, "
        "the lower bound, and the paper's bounds",
    )
    s.add_argument("--eps", type=float, required=True, help="privacy parameter, 1e-100 <= eps <= 1e4")
    s.add_argument("--delta", type=float, required=True, help="privacy parameter, 1e-300 <= delta < 1 - 1e-8")
    s.add_argument("--n", type=int, required=True, help="number of rows, p < n <= 2**53")
    s.add_argument("--p", type=int, required=True, help="number of columns p >= 1")
    t = sub.add_parser("table", help="print the paper's Table 1, recomputed")
    t.add_argument("--corrected", action="store_true", help="conservative variant of Theorem 3.4 with 2(n-p-1) (see the book, chapter 5)")
    return parser


def _value(x):
    """A value in a 12-character column: four decimals in [1e-3, 1e7), else scientific notation
    (at eps = 1e-100 sigma is about 1e101, which fixed-point would print with a hundred digits)."""
    return f"{x:12.4f}" if 1e-3 <= abs(x) < 1e7 else f"{x:12.4e}"


def _line(label, fn, note=""):
    """One line: label, value, note.  A ValueError means "outside this result's hypotheses":
    the line says n/a and why.  Any other error propagates (main exits 2)."""
    try:
        value = fn()
    except ValueError as exc:
        return f"  {label:<{_W}} {'n/a':>12}  ({exc})"
    return f"  {label:<{_W}} {_value(value)}" + (f"  {note}" if note else "")


def _best_line(eps, delta, n, p, setting):
    sigma = best.best_sufficient_sigma(eps, delta, n, p, setting)
    source = best.best_sufficient_source(eps, delta, n, p, setting)
    return f"  {'best proven sufficient sigma':<{_W}} {_value(sigma)}  by {source}"


def _setting_a_lines(eps, delta, n, p):
    from .exact import analytic_gaussian_sigma

    return [
        "Setting A (noise only; local DP for changes of norm <= 1 in a row, not for whole rows)",
        _best_line(eps, delta, n, p, "A"),
        _line("exact sigma (the analytic Gaussian is tight)", lambda: analytic_gaussian_sigma(eps, delta),
              "= lower bound"),
        _line("paper: Theorem 3.2 necessary, for the paper's criterion", lambda: bounds.sigma_a_necessary(eps, delta),
              "(not necessary for (eps, delta)-DP)"),
        _line("paper: Theorem 3.2 sufficient (its criterion, hence DP)", lambda: bounds.sigma_a_sufficient(eps, delta)),
        _line("paper: Corollary 3.3 sufficient", lambda: bounds.sigma_a_corollary(eps, delta)),
    ]


def _setting_b_lines(eps, delta, n, p):
    from .exact.audit import sigma_lower_bound
    from .exact import masked_p1_sigma
    from .rivals.trust import masking_dropout_cost

    # Outside the searches' domain (n <= 1e6, dpmask.exact.N_MAX) their ValueError names the
    # limit and _line prints it as the line's reason.
    if p != 1:
        exact = f"  {'exact sigma':<{_W}} {'n/a':>12}  (known only for p = 1)"
    else:
        exact = _line("exact sigma (p = 1)", lambda: masked_p1_sigma(eps, delta, n),
                      "exact by a numerical worst-pair search, not proven")
    lower = _line("lower bound (projection and Frobenius statistics)",
                  lambda: sigma_lower_bound(eps, delta, n, p),
                  "no sigma below it is (eps, delta)-DP")
    return [
        "Setting B (noise, then a Haar-random orthogonal mask)",
        _best_line(eps, delta, n, p, "B"),
        exact,
        lower,
        _line("paper: Theorem 3.4 sufficient", lambda: bounds.sigma_b(eps, delta, n, p)),
        _line("paper: Corollary 3.5 sufficient", lambda: bounds.sigma_b_corollary(eps, delta, n, p)),
        _line("paper: smaller of Theorems 3.2 and 3.4 (sufficient_sigma)", lambda: bounds.sufficient_sigma(eps, delta, n, p, "B")),
        "  (these sigmas fall as n grows: if rows may drop out, give --n the smallest number of rows)",
        "  (that may complete; what that costs, dpmask.rivals.trust.masking_dropout_cost, chapter 9:)",
        _line(f"{100 * _DROP:.0f} % dropouts: noise ratio, Theorem 3.4 (n_min over n)",
              lambda: masking_dropout_cost(eps, delta, n, p, _DROP).ratio),
        _line(f"{100 * _DROP:.0f} % dropouts: slope-error ratio, Theorem 3.4",
              lambda: masking_dropout_cost(eps, delta, n, p, _DROP, quantity="error").ratio,
              "first order, example data; compare the rival's padding below"),
    ]


def _setting_c_lines(eps, delta, n, p):
    return [
        "Setting C (mask, then noise): the law of Setting B (Lemma A.4); its values apply",
        _best_line(eps, delta, n, p, "C"),
    ]


def _rival_lines(eps, delta, n, p):
    """The rival: the Gaussian mechanism on X^T X (Dwork, Talwar, Thakurta and Zhang 2014; chapter 9).

    Its noise tau is added to the p x p Gram matrix X^T X, not to the entries of X, so it is
    not comparable entry by entry with the sigmas above; chapter 9 compares the two by the
    accuracy of the analyses a masked release supports (least squares, correlations,
    principal components), where the rival is the more accurate, and by what each asks its
    parties to trust and send, where masking keeps a lighter protocol without a curator.
    """
    from .rivals import gram_sensitivity, sigma_gram
    from .rivals.trust import distributed_tau

    return [
        "Rival: the Gaussian mechanism on X^T X (chapter 9) -- noise on the Gram matrix, not on X",
        _line("tau, standard deviation of the Gram noise (diagonal)", lambda: sigma_gram(eps, delta, p),
              f"= analytic Gaussian sigma x sensitivity {gram_sensitivity(p):.4g}; off-diagonal tau/sqrt(2)"),
        "  (tau is not comparable with the sigmas above entry by entry; chapter 9 compares accuracy:",
        "   the rival is the more accurate; masking keeps only a lighter protocol without a trusted",
        "   curator, at the price of trusting two servers not to collude)",
        "  (masking's noise must be calibrated for the smallest number of rows that may complete)",
        _line(f"padded for {100 * _DROP:.0f} % dropouts: noise ratio = error ratio",
              lambda: distributed_tau(eps, delta, p, pad=_DROP) / distributed_tau(eps, delta, p),
              "1/sqrt(1 - f): its error is proportional to tau"),
        "  (the rival's noisy Gram matrix becomes a table with a masked release's law where it is)",
        "  (positive definite, chapter 9, Proposition 9.5)",
    ]


def sigma_report(eps, delta, n, p):
    """Every line of ``python -m dpmask sigma``, computed before anything is printed."""
    # Validate the parameters every setting shares, so that a bad one is a one-line error.
    best.best_sufficient_sigma(eps, delta, n, p, "B")
    lines = [f"eps={eps:g} delta={delta:g} n={n} p={p}   (sigma: standard deviation of the noise on X)", ""]
    for part in (_setting_a_lines, _setting_b_lines, _setting_c_lines, _rival_lines):
        block = part(eps, delta, n, p)
        if block:
            lines.extend(block + [""])
    return lines[:-1]


def _one_line(exc):
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"error: {text}\n" if isinstance(exc, ValueError) else f"error: {type(exc).__name__}: {text}\n"


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)  # bad arguments: argparse exits 2 with a usage line
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if args.command == "sigma":
                out = "\n".join(sigma_report(args.eps, args.delta, args.n, args.p))
            else:
                out = format_table1(table1(corrected=args.corrected))
    except Exception as exc:  # every error the package can raise; KeyboardInterrupt passes
        parser.exit(2, _one_line(exc))
    print(out)
    if caught:
        first = " ".join(str(caught[0].message).split())
        print(f"warning: {len(caught)} numerical warning(s), so some values may be inaccurate; the first: {first}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
