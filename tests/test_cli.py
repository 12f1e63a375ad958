"""The command line, pinned to the functions it prints (issue 17: M35, M36, and its input).

``python -m dpmask sigma`` prints, among others, the exact sigma of Setting B for p = 1
(:func:`dpmask.exact.masked_p1_sigma`) and the lower bound
(:func:`dpmask.exact.audit.sigma_lower_bound`).  These lines were tested only against wide ranges:
printing the exact line at 2 delta gave 1.1709 instead of 1.6387 and passed.  Each line is
compared here with the function it names, to the 4 decimals it prints.
"""

from __future__ import annotations

import re

import pytest

from dpmask import __main__ as cli
from dpmask import exact
from dpmask.paper import bounds
from dpmask.exact import audit


def _report(eps, delta, n, p):
    return "\n".join(cli.sigma_report(eps, delta, n, p))


def _value(text, label):
    m = re.search(rf"{re.escape(label)} +(\S+)", text)
    assert m, text
    return float(m.group(1))


@pytest.mark.parametrize("eps, delta, n", [(0.1, 0.01, 100), (1.0, 1e-5, 10)])
def test_exact_line_is_masked_p1_sigma(eps, delta, n):
    """M36: the exact line printed at 2 delta (1.1709 for 1.6387) went unnoticed."""
    text = _report(eps, delta, n, 1)
    assert _value(text, "exact sigma (p = 1)") == pytest.approx(exact.masked_p1_sigma(eps, delta, n), abs=1e-4)


@pytest.mark.parametrize("eps, delta, n, p", [(0.1, 0.01, 100, 5), (1.0, 1e-5, 10, 1)])
def test_lower_bound_line_is_sigma_lower_bound(eps, delta, n, p):
    """M35: the lower-bound line is the audit's bound (both statistics), to 4 decimals."""
    text = _report(eps, delta, n, p)
    got = _value(text, "lower bound (projection and Frobenius statistics)")
    assert got == pytest.approx(audit.sigma_lower_bound(eps, delta, n, p), abs=1e-4)


def test_theorem_lines_are_the_bounds():
    text = _report(0.1, 0.01, 100, 5)
    assert _value(text, "paper: Theorem 3.4 sufficient") == pytest.approx(bounds.sigma_b(0.1, 0.01, 100, 5), abs=1e-4)
    assert _value(text, "paper: Corollary 3.5 sufficient") == pytest.approx(
        bounds.sigma_b_corollary(0.1, 0.01, 100, 5), abs=1e-4)


def test_n_above_2_to_the_53_is_refused(capsys):
    """--n 9007199254740993 was computed as 2**53."""
    with pytest.raises(SystemExit) as exit_:
        cli.main(["sigma", "--eps", "0.1", "--delta", "0.01", "--n", "9007199254740993", "--p", "5"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(r"\bn must be .*<= 2\*\*53.*got 9007199254740993", err)


def test_tiny_eps_keeps_the_columns(capsys):
    """At --eps 1e-100 sigma is about 1e101: fixed-point printed a hundred digits and broke the
    columns.  Every value now fits its 12 characters and starts in the same column."""
    assert cli.main(["sigma", "--eps", "1e-100", "--delta", "0.01", "--n", "100", "--p", "5"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("  ") and not line.startswith("  (")]
    assert lines and all(len(line) < 200 for line in lines)
    for line in lines:
        label = line[2:2 + cli._W]
        value = line[2 + cli._W + 1: 2 + cli._W + 13]
        if len(label.rstrip()) < cli._W:  # the one label longer than the column shifts its line
            assert re.fullmatch(r" *(n/a|-?\d+\.\d{4}|-?\d\.\d{4}e[+-]\d+)", value), line
    sigma_b = bounds.sigma_b(1e-100, 0.01, 100, 5)
    assert f"{sigma_b:.4e}" in out


@pytest.mark.parametrize("eps, delta, n", [(0.001, 0.001, 10**4), (0.1, 0.01, 1000)])
def test_dropout_lines_compare_like_with_like(eps, delta, n):
    """Issue 32: masking's dropout cost was a noise ratio set against the rival's padding, an error ratio.  The
    report prints masking's noise ratio and its first-order slope-error ratio, and the rival's padding factor, which
    is both; each is recomputed here: Theorem 3.4 at n - floor(0.1 n) over n, Proposition 9.6's slope error for the
    p = 2 example data with its constants by hand (c2 = 9/2, c4 = 27/2: M = [[1/3, 1/6], [1/6, 1/6]], beta = 1/2),
    and 1/sqrt(0.9)."""
    text = _report(eps, delta, n, 2)
    s, s_min = bounds.sigma_b(eps, delta, n, 2), bounds.sigma_b(eps, delta, n - n // 10, 2)
    noise = s_min / s
    error = ((4.5 * s_min**2 + 13.5 * s_min**4) / (4.5 * s**2 + 13.5 * s**4)) ** 0.5
    assert _value(text, "10 % dropouts: noise ratio, Theorem 3.4 (n_min over n)") == pytest.approx(noise, abs=1e-4)
    assert _value(text, "10 % dropouts: slope-error ratio, Theorem 3.4") == pytest.approx(error, abs=1e-4)
    assert _value(text, "padded for 10 % dropouts: noise ratio = error ratio") == pytest.approx(0.9**-0.5, abs=1e-4)
    assert noise < error <= noise**2 + 1e-12


def test_dropout_error_line_says_why_not_with_one_column():
    text = _report(0.1, 0.01, 100, 1)
    assert re.search(r"10 % dropouts: slope-error ratio, Theorem 3.4 +n/a +\(p must be at least 2", text)
