"""The course page's self-check: right answers pass, wrong ones fail, and the answer never shows.

Every answer is computed again here from its question's own parameters, with this file's own code
(mpmath for the Gaussian tail and quantile, Gaussian log densities for Lemma 3.1, the closed form of
G_2, the formula of Lemma 5.5 (i), dp-accounting for the analytic Gaussian mechanism, scipy's
noncentral chi-square for Theorem 3.4's root and for the hockey sticks of chapters 7 and 7a, SLSQP
for the Gram matrix's sensitivity, the seed attack carried out here); an answer rounded to the
figures its question asks for must pass; no check(...) example on any page may pass; and the
checker's behaviour (tolerance, verdicts, silence about the answer, its domain) is checked on every
question.
"""

from __future__ import annotations

import ast
import io
import json
import math
import re
from contextlib import redirect_stdout
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
from scipy import optimize, stats

from dpmask import selfcheck
from dpmask.selfcheck import QUESTIONS, check, handout, questions


def _theorem_3_4_root(eps, delta, n, p):
    """The largest root of g(sigma) = 0 (Theorem 3.4), with scipy's quantile and brentq."""
    def g(s):
        return (2 * math.sqrt(p) + 1) / (2 * (n - p)) * stats.ncx2.isf(delta, 2 * (n - p), p / s**2) + math.sqrt(p) - s**2 * eps

    hi = 10.0
    while g(hi) > 0:
        hi *= 2
    return optimize.brentq(g, 1e-3 * hi, hi, xtol=1e-12)


def _theorem_3_2_sufficient(eps, delta):
    """Theorem 3.2's sufficient sigma, gamma/eps (1 + 1/(2 gamma^2)), gamma the upper delta-quantile (mpmath)."""
    with mp.workdps(30):
        gamma = mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(delta))
        return float(gamma / eps * (1 + 1 / (2 * gamma**2)))


def _hockey_stick_ncx2(eps, df, lam_p, lam_q):
    """sup_S P(S) - e^eps Q(S) for P = chi2_df(lam_p), Q = chi2_df(lam_q): the likelihood ratio is monotone in t,
    so the optimal set is a half-line beyond the point where the log ratio equals eps."""
    P, Q = stats.ncx2(df, lam_p), stats.ncx2(df, lam_q)
    up = lam_p > lam_q                    # the ratio increases in t: S = (t*, inf); else S = (0, t*)

    def log_ratio(t):
        return P.logpdf(t) - Q.logpdf(t) - eps

    lo, hi = 1e-6, df + lam_p + lam_q + 60 * math.sqrt(df + lam_p + lam_q)
    if np.sign(log_ratio(lo)) == np.sign(log_ratio(hi)):
        return max(0.0, 1 - math.exp(eps)) if log_ratio(lo) < 0 else 1.0
    t = optimize.brentq(log_ratio, lo, hi, xtol=1e-12)
    return (P.sf(t) - math.exp(eps) * Q.sf(t)) if up else (P.cdf(t) - math.exp(eps) * Q.cdf(t))


def _sigma_for(delta_of_sigma, target, lo, hi):
    return optimize.brentq(lambda s: math.log(delta_of_sigma(s)) - math.log(target), lo, hi, xtol=1e-12)


def _masked_p1_sigma(eps, delta, n):
    """Setting B with one column: ||Y||^2/sigma^2 ~ chi2_n(||x||^2/sigma^2), and a neighbour moves ||x||^2 by at most 1
    (|b^2 - a^2| = |b - a| |b + a| <= 1 for a, b in [-1, 1], |b - a| <= 1).  The worst pair, searched here over
    a grid of squared norms s and s + 1 in both orders."""
    grid = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0]

    def worst(sig):
        return max(_hockey_stick_ncx2(eps, n, a / sig**2, b / sig**2)
                   for s0 in grid for a, b in ((s0, s0 + 1), (s0 + 1, s0)))

    return _sigma_for(worst, delta, 0.3, 3.0)


def _sigma_perp(eps, delta, n):
    """Proposition 7.6: the family of orthogonal pairs needs the sigma at which the chi-square pair with n - 1
    degrees of freedom and noncentralities 2/sigma^2, (sqrt 2 - 1)^2/sigma^2 reaches delta (both orders)."""
    a, b = 2.0, (math.sqrt(2) - 1) ** 2

    def worst(sig):
        return max(_hockey_stick_ncx2(eps, n - 1, a / sig**2, b / sig**2), _hockey_stick_ncx2(eps, n - 1, b / sig**2, a / sig**2))

    return _sigma_for(worst, delta, 0.3, 5.0)


def _frobenius_sensitivity(p, starts=40, seed=3):
    """sup ||x x^T - x' x'^T||_F over x, x' in [-1, 1]^p with ||x - x'|| <= 1, by SLSQP from random starts."""
    rng = np.random.default_rng(seed)

    def neg(v):
        return -np.linalg.norm(np.outer(v[:p], v[:p]) - np.outer(v[p:], v[p:]))

    best = 0.0
    for _ in range(starts):
        res = optimize.minimize(neg, rng.uniform(-1, 1, 2 * p), method="SLSQP", bounds=[(-1, 1)] * (2 * p),
                                constraints=[{"type": "ineq", "fun": lambda v: 1 - np.sum((v[:p] - v[p:]) ** 2)}])
        if np.sum((res.x[:p] - res.x[p:]) ** 2) <= 1 + 1e-9 and np.all(np.abs(res.x) <= 1 + 1e-12):
            best = max(best, -res.fun)
    return best


def _truth():
    """An answer for every question, from the question's own parameters, computed with this file's own code."""
    mp.mp.dps = 30
    X, Xp, y, s = np.array([1.0, 0.0]), np.array([0.6, 0.3]), np.array([0.2, -0.4]), 0.5
    dp = pytest.importorskip("dp_accounting.gaussian_mechanism")
    out = {
        "ch1-a": _theorem_3_4_root(0.1, 0.01, 10_000, 1),
        "ch1-b": _theorem_3_2_sufficient(0.001, 0.01) / _theorem_3_4_root(0.001, 0.01, 10_000, 1),
        # P[L > eps] for Setting A at distance 1: Phi(1/(2 sigma) - eps sigma)
        "ch2-a": float(mp.ncdf(mp.mpf(1) / 8 - mp.mpf("0.5") * 4)),
        "ch3-a": _theorem_3_2_sufficient(0.5, 0.01),
        "ch3-b": _theorem_3_4_root(0.01, 1e-3, 1_000, 5),
        "ch4-a": _theorem_3_2_sufficient(0.01, 1e-3) / _theorem_3_4_root(0.01, 1e-3, 10_000, 5),
        # Lemma 3.1, Setting A: the log density ratio is the difference of the two Gaussian log densities
        "ch5-a": float(np.sum(stats.norm.logpdf(y, X, s)) - np.sum(stats.norm.logpdf(y, Xp, s))),
        "ch5-b": float(2 * mp.sinh(mp.mpf("1.5")) / mp.mpf("1.5")),         # G_2(t) = int e^{tu} du = 2 sinh(t)/t
        # Lemma 5.5 (i): G_q(t2)/G_q(t1) <= exp(|t2^2 - t1^2| / (2q))
        "ch5-c": math.exp((9 - 1) / 20),
        "ch6-a": _theorem_3_4_root(0.1, 1e-3, 10**6, 2) / _theorem_3_4_root(0.1, 1e-3, 10**6, 1),
        "ch7-a": dp.get_sigma_gaussian(0.1, 1e-5, tol=1e-12),
        "ch7-b": _masked_p1_sigma(0.1, 0.01, 100),
        "ch7a-a": _sigma_perp(0.1, 0.01, 100),
        # block-diagonal masking: Theorem 3.4 with n replaced by the smallest block
        "ch8-a": _theorem_3_4_root(0.1, 1e-5, 10_000, 10) / _theorem_3_4_root(0.1, 1e-5, 10**6, 10),
        "ch9-a": _frobenius_sensitivity(5),
        # Proposition 9.4: tau = sigma_A (2 sqrt(p) - 1), sigma_A from dp-accounting
        "ch9-b": dp.get_sigma_gaussian(0.1, 1e-5, tol=1e-12) * (2 * math.sqrt(5) - 1),
        "chA-a": stats.norm.isf(0.045) ** 2,
        "chA-b": optimize.brentq(lambda d: stats.norm.isf(d) ** 2 - math.log(1 / d), 0.01, 0.05, xtol=1e-15),
    }
    from dpmask.paper.mechanisms import release_a
    Y = handout("ch10-a")
    out["ch10-a"] = float((Y - release_a(np.zeros_like(Y), 5.0, rng=2026))[0].sum())   # the seed attack
    return out


@pytest.fixture(scope="module")
def truth():
    return _truth()


def test_answers_agree_with_independent_computations(truth):
    """Every question's accepted answer is the question's own answer, computed here from its parameters."""
    assert set(truth) == set(QUESTIONS), set(truth) ^ set(QUESTIONS)
    for qid, value in truth.items():
        answer = QUESTIONS[qid].answer()
        # the searches written here (ch7-b's grid of pairs, ch9-a's SLSQP) can only fall short of a supremum
        tol = 1e-4 if qid in ("ch7-b", "ch7a-a", "ch9-a") else 1e-6
        assert answer == pytest.approx(value, rel=tol), (qid, answer, value)
        assert check(qid, value, quiet=True), qid


_FIGURES = {"three": 3, "four": 4}


def _figures(text):
    m = re.search(r"Answer to (\w+) significant figures\.$", text)
    assert m, f"the question does not say to what precision to answer: {text!r}"
    return _FIGURES[m.group(1)]


def _round_sig(x, digits):
    return float(f"{x:.{digits - 1}e}")


def test_an_answer_at_the_precision_asked_is_accepted(truth):
    """ch10-a's tolerance once rejected a 4-decimal answer: every answer rounded as its question asks passes."""
    for qid, q in QUESTIONS.items():
        digits = _figures(q.text)
        rounded = _round_sig(truth[qid], digits)
        assert check(qid, rounded, quiet=True), (qid, rounded, truth[qid])
        # and the tolerance is no looser than one unit of the next figure (it still tells the answer apart)
        assert q.rel_tol <= 10.0 ** (1 - digits), qid


def test_the_slips_the_questions_once_had_are_refused(truth):
    """ch9-a asked for the upper triangle's sensitivity and accepted only the Frobenius one; ch9-b's "the noise"
    could be read as the off-diagonal one.  The questions now say which, and the other reading is refused."""
    p = 5
    x, xp = np.ones(p), (1 - 1 / math.sqrt(p)) * np.ones(p)   # the worst pair of Lemma 9.2
    D = np.outer(x, x) - np.outer(xp, xp)
    assert np.linalg.norm(D) == pytest.approx(truth["ch9-a"], rel=1e-4)
    upper = float(np.sqrt(np.sum(np.triu(D) ** 2)))          # about 2.69: the upper triangle as a vector
    assert 2.6 < upper < 2.8
    assert not check("ch9-a", upper, quiet=True) and not check("ch9-a", _round_sig(upper, 3), quiet=True)
    assert "Frobenius" in QUESTIONS["ch9-a"].text and "upper triangle" not in QUESTIONS["ch9-a"].text
    assert not check("ch9-b", truth["ch9-b"] / math.sqrt(2), quiet=True)
    assert "diagonal" in QUESTIONS["ch9-b"].text
    assert "Lemma 5.5" in QUESTIONS["ch5-b"].text and "Lemma 5.4" not in QUESTIONS["ch5-b"].text


# --- no example on any page hands out an answer ------------------------------------------------------------

_CHECK_CALL = re.compile(r"\bcheck\(\s*([\"'][\w-]+[\"'])\s*,\s*([^,()]+?)\s*(?:,[^()]*)?\)")


def _page_texts():
    """(name, text) for every page of the book and the package's own docstring examples."""
    root = Path(__file__).resolve().parents[1]
    out = []
    for path in sorted((root / "chapters").glob("*")):
        if path.suffix == ".md":
            out.append((path.name, path.read_text(encoding="utf-8")))
        elif path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            out.append((path.name, "\n".join("".join(c["source"]) for c in cells)))
    for name in ("index.md", "README.md", "dpmask/selfcheck.py"):
        out.append((name, (root / name).read_text(encoding="utf-8")))
    return out


def _check_calls(text):
    """(question, answer) of every check("qid", number) call in *text* whose answer is a literal number."""
    calls = []
    for m in _CHECK_CALL.finditer(text):
        try:
            qid, answer = ast.literal_eval(m.group(1)), ast.literal_eval(m.group(2))
        except (ValueError, SyntaxError):
            continue     # a variable, not a number written on the page
        if isinstance(answer, (int, float)) and not isinstance(answer, bool):
            calls.append((qid, float(answer)))
    return calls


def test_no_example_on_any_page_is_accepted():
    """The course page once showed check("ch3-b", 28.7), which the checker accepts: the page handed out an answer."""
    found = [(name, qid, answer) for name, text in _page_texts() for qid, answer in _check_calls(text)]
    assert any(name == "course.md" for name, _, _ in found), found      # the parser finds the course page's example
    for name, qid, answer in found:
        buf = io.StringIO()
        with redirect_stdout(buf):
            assert check(qid, answer) is False, (name, qid, answer)
        assert "not yet" in buf.getvalue(), (name, qid, answer)
    # the check can fail: the old example is accepted, and the parser reads it
    assert _check_calls('check("ch3-b", 28.7)') == [("ch3-b", 28.7)] and check("ch3-b", 28.7, quiet=True)


@pytest.mark.parametrize("qid", list(QUESTIONS))
def test_each_question_passes_its_answer_fails_a_miss_and_never_prints_the_answer(qid):
    q = QUESTIONS[qid]
    value = q.answer()
    assert math.isfinite(value) and value != 0
    inside, outside = value * (1 + 0.5 * q.rel_tol), value * (1 + 3 * q.rel_tol)
    for answer, right in ((value, True), (inside, True), (outside, False), (-value, False), (value * 0.9, False)):
        buf = io.StringIO()
        with redirect_stdout(buf):
            assert check(qid, answer) is right, (qid, answer)
        said = buf.getvalue()
        assert ("right" in said) is right and qid in said
        # the printed verdict holds no digits of the answer (only the student's number and the tolerance)
        digits = re.sub(r"[^0-9]", "", f"{value:.4g}".split("e")[0]).lstrip("0")
        printed = said.replace(f"{answer:g}", "")
        if len(digits) >= 3:
            assert digits not in re.sub(r"[^0-9]", "", printed), (qid, said)
        assert "higher" not in said and "lower" not in said and "too" not in said


def test_the_page_texts_and_chapters():
    chapters = {q.chapter for q in QUESTIONS.values()}
    assert {"07a_exact_p2", "09_rivals", "privacy_in_practice", "A_technical_lemmas"} <= chapters
    assert questions("09_rivals") == {k: q.text for k, q in QUESTIONS.items() if q.chapter == "09_rivals"}
    assert set(questions()) == set(QUESTIONS)


@pytest.mark.parametrize(
    "args, error",
    [
        (("ch9-z", 1.0), ValueError),
        ((3, 1.0), TypeError),
        (("ch3-a", "5.08"), TypeError),
        (("ch3-a", True), TypeError),
        (("ch3-a", float("nan")), ValueError),
        (("ch3-a", float("inf")), ValueError),
        (("ch3-a", [5.0, 5.1]), ValueError),
        (("ch3-a", 1 + 2j), TypeError),
    ],
)
def test_check_refuses_what_is_not_a_question_or_a_number(args, error):
    with pytest.raises(error):
        check(*args)


def test_other_arguments_are_checked():
    with pytest.raises(TypeError):
        check("ch3-a", 5.0, quiet="yes")
    with pytest.raises(ValueError, match="chapter"):
        questions("11_nowhere")
    with pytest.raises(ValueError, match="hands out no data"):
        handout("ch3-a")
    assert selfcheck.__all__ == ["QUESTIONS", "Question", "check", "questions", "handout"]


# Words that would tell a student on which side the answer lies (checked as whole words, any case).
_DIRECTIONAL = ("above", "below", "high", "higher", "highest", "low", "lower", "lowest", "large", "larger",
                "small", "smaller", "big", "bigger", "less", "more", "greater", "fewer", "under", "over",
                "up", "down", "increase", "decrease", "raise", "reduce", "exceeds", "exceed", "short",
                "overshoot", "undershoot", "too", "much", "little", "positive", "negative", "over-",
                "under-", "upward", "downward", "side")


@pytest.mark.parametrize("qid", list(QUESTIONS))
def test_a_wrong_answer_below_and_one_above_get_the_same_words(qid):
    """The self-check never says on which side the answer lies: for a wrong answer below the truth
    and one above it, at the same relative distance (just outside the tolerance, and far out), the
    printed verdicts are the same sentence once the student's own number is taken out, and hold
    no word of direction.  A planted "too high" / "below the answer" fails here."""
    q = QUESTIONS[qid]
    value = q.answer()
    for factor in (1.5 * q.rel_tol, 0.3, 5.0):
        said = []
        for answer in (value - factor * abs(value), value + factor * abs(value)):
            buf = io.StringIO()
            with redirect_stdout(buf):
                assert check(qid, answer) is False, (qid, answer)
            said.append(buf.getvalue().replace(f"{answer:g}", "<answer>"))
        assert said[0] == said[1], (qid, factor, said)
        words = set(re.findall(r"[a-z]+-?", said[0].lower()))
        assert not words & set(_DIRECTIONAL), (qid, said[0], words & set(_DIRECTIONAL))
        assert "<answer>" in said[0]  # the student's number is echoed (and only it is taken out)
