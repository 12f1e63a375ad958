"""The course page's self-check: right answers pass, wrong ones fail, and the answer never shows.

The answers are checked against independent computations where one exists (mpmath for the
Gaussian tail, the closed form of G_2, the formula of Lemma 5.5 (i), dp-accounting for the analytic
Gaussian mechanism, scipy's noncentral chi-square for Theorem 3.4's root, the seed attack carried
out here), and the checker's behaviour (tolerance, verdicts, silence about the answer, its domain)
on every question.
"""

from __future__ import annotations

import io
import math
import re
from contextlib import redirect_stdout

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


def _truth():
    """Independent values for the questions that have one."""
    mp.mp.dps = 30
    out = {
        "ch1-a": _theorem_3_4_root(0.1, 0.01, 10_000, 1),
        "ch3-b": _theorem_3_4_root(0.01, 1e-3, 1_000, 5),
        # P[L > eps] for Setting A at distance 1: Phi(1/(2 sigma) - eps sigma)
        "ch2-a": float(mp.ncdf(mp.mpf(1) / 8 - mp.mpf("0.5") * 4)),
        "ch5-a": float(2 * mp.sinh(mp.mpf("1.5")) / mp.mpf("1.5")),
        # Lemma 5.5 (i): G_q(t2)/G_q(t1) <= exp(|t2^2 - t1^2| / (2q))
        "ch5-b": math.exp((9 - 1) / 20),
        "chA-a": stats.norm.isf(0.045) ** 2,
        "chA-b": optimize.brentq(lambda d: stats.norm.isf(d) ** 2 - math.log(1 / d), 0.01, 0.05, xtol=1e-15),
    }
    return out


def test_answers_agree_with_independent_computations():
    truth = _truth()
    # the analytic Gaussian mechanism (chapter 7) against Google's dp-accounting
    dp = pytest.importorskip("dp_accounting.gaussian_mechanism")
    truth["ch7-a"] = dp.get_sigma_gaussian(0.1, 1e-5)
    for qid, value in truth.items():
        answer = QUESTIONS[qid].answer()
        assert answer == pytest.approx(value, rel=1e-6), qid
        assert check(qid, value, quiet=True), qid


def test_the_seed_attack_question_is_answered_by_the_attack():
    """Regenerate the noise from the published seed (release_a draws C = rng.normal(0, sigma))."""
    from dpmask.mechanisms import release_a

    Y = handout("ch10-a")
    assert Y.shape == (20, 3)
    C = release_a(np.zeros_like(Y), 5.0, rng=2026)  # the attacker's copy of the noise
    X = Y - C
    assert np.all(np.abs(X) <= 1 + 1e-12)  # data in [-1, 1], as Definition 2.1 asks
    assert check("ch10-a", X[0].sum(), quiet=True)
    assert not check("ch10-a", Y[0].sum(), quiet=True)  # the noisy row is not the answer
    handout("ch10-a")[0, 0] = 99.0  # a copy: the handout cannot be spoiled
    assert handout("ch10-a")[0, 0] != 99.0


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
