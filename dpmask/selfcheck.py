"""Self-check questions of the course page: a student's numeric answer is right or not, and the answer is not shown.

The course page (``chapters/course.md``) sets a few questions per session, each with a numeric
answer.  A student computes the answer (by hand, or with the package) and checks it::

    >>> from dpmask.selfcheck import check
    >>> check("ch3-b", 1.0)                        # doctest: +SKIP
    ch3-b: not yet -- 1 is not within 0.5 % of the answer.

:func:`check` compares with the package's own computation (the same functions the chapters
call, so the answer has one source) within a relative tolerance, says right or not, and never
prints the answer or which side it lies on.  The answers are computed in this module, so a
student who reads its source can find them: this is a self-check, not an exam.  For graded
work, give the exercises of the student edition.

:data:`QUESTIONS` holds every question: its text (the course page prints the same text, and
tests/test_course.py holds the two to each other), the chapter it belongs to and the tolerance.
Every question asks for a number of significant figures, and its tolerance accepts the answer rounded
to them: three figures with the default 0.5 %, four with 0.1 % (tests/test_selfcheck.py checks both,
and computes every answer again from the question's own parameters, with code of its own).
:func:`handout` gives the data a question hands out (the published release of the seed-attack
question).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ._validate import as_float_array, check_scalar

__all__ = ["QUESTIONS", "Question", "check", "questions", "handout"]


@dataclass(frozen=True)
class Question:
    """One self-check question: its text, its chapter, how to compute its answer, the tolerance."""

    text: str
    chapter: str
    answer: Callable[[], float]
    rel_tol: float = 5e-3


def _seed_attack_data():
    """The data set behind question ch10-a and its Setting A release (sigma = 5, published seed 2026)."""
    from .paper.mechanisms import release_a

    X = np.random.default_rng(802_61).uniform(-1.0, 1.0, size=(20, 3))  # the curator's secret data
    return X, release_a(X, 5.0, rng=2026)


def _delta_star():
    """The delta where Lemma A.1's lower bound stops holding: gamma_delta^2 = ln(1/delta)."""
    from scipy.optimize import brentq

    from .paper.bounds import gaussian_upper_quantile

    return brentq(lambda d: gaussian_upper_quantile(d) ** 2 - math.log(1 / d), 0.01, 0.05, xtol=1e-14)


def _b(eps, delta, n, p):
    from .paper.bounds import sigma_b

    return float(sigma_b(eps, delta, n, p))


def _a_suf(eps, delta):
    from .paper.bounds import sigma_a_sufficient

    return float(sigma_a_sufficient(eps, delta))


def _exact(name, *args):
    from . import exact

    return float(getattr(exact, name)(*args))


def _block_ratio():
    from .paper.bounds import sigma_b, sigma_b_block

    return float(sigma_b_block(0.1, 1e-5, [10_000] * 100, 10) / sigma_b(0.1, 1e-5, 10**6, 10))


def _gq(name, *args):
    from .paper import gq

    return float(getattr(gq, name)(*args))


def _rivals(name, *args):
    from . import rivals

    return float(getattr(rivals, name)(*args))


def _lemma_3_1_example():
    """Lemma 3.1, Setting A (equation 3.2): the log density ratio for the one-row example of question ch5-a."""
    X, Xp, y, sigma = np.array([[1.0, 0.0]]), np.array([[0.6, 0.3]]), np.array([[0.2, -0.4]]), 0.5
    return float(((Xp**2).sum() - (X**2).sum()) / (2 * sigma**2) + (np.trace(y @ X.T) - np.trace(y @ Xp.T)) / sigma**2)


def _sigma_perp():
    from .exact.two_columns import orthogonal_family_sigma

    return float(orthogonal_family_sigma(0.1, 0.01, 100.0)[1])


#: Every self-check question of the course page, by its id (``"ch1-a"``, ...): its text, its unit,
#: its tolerance and how the package computes its answer.
#:
#: :meta hide-value:
QUESTIONS: dict[str, Question] = {
    "ch1-a": Question(
        "For ε = 0.1, δ = 0.01 and one column (p = 1), Theorem 3.4's sufficient noise σ₀ for Setting B "
        "with n = 10 000 rows (the solid blue line of Fig. 1.1). Answer to three significant figures.",
        "01_introduction", lambda: _b(0.1, 0.01, 10_000, 1)),
    "ch1-b": Question(
        "At ε = 0.001 (same δ = 0.01, p = 1, n = 10 000), how many times larger is Theorem 3.2's "
        "sufficient σ for Setting A than Theorem 3.4's σ₀? Answer to three significant figures.",
        "01_introduction", lambda: _a_suf(0.001, 0.01) / _b(0.001, 0.01, 10_000, 1)),
    "ch2-a": Question(
        "Setting A, neighbours at distance ‖Δ‖ = 1, noise σ = 4: the probability of the density "
        "criterion's set, P[privacy loss > ε], at ε = 0.5. Answer to three significant figures.",
        "02_setup", lambda: _exact("setting_a_criterion_delta", 0.5, 4.0)),
    "ch3-a": Question(
        "Theorem 3.2's sufficient σ for Setting A at ε = 0.5, δ = 0.01. Answer to three significant figures.",
        "03_main_results", lambda: _a_suf(0.5, 0.01)),
    "ch3-b": Question(
        "Theorem 3.4's sufficient σ₀ for Setting B at ε = 0.01, δ = 10⁻³, n = 1 000 rows and p = 5 columns. Answer to three significant figures.",
        "03_main_results", lambda: _b(0.01, 1e-3, 1_000, 5)),
    "ch4-a": Question(
        "Table 1's ratio (Setting A's sufficient σ over Setting B's σ₀), unrounded, at ε = 0.01, "
        "δ = 10⁻³, p = 5, n = 10 000. Answer to three significant figures.",
        "04_discussion", lambda: _a_suf(0.01, 1e-3) / _b(0.01, 1e-3, 10_000, 5)),
    "ch5-a": Question(
        "Lemma 3.1 for Setting A with one row (n = 1, p = 2) and σ = 0.5: the log density ratio "
        "ln(p_X(y)/p_X′(y)) at X = (1, 0), X′ = (0.6, 0.3) and y = (0.2, −0.4). Answer to three significant figures.",
        "05_proofs", _lemma_3_1_example),
    "ch5-b": Question(
        "The value of G₂(1.5), where G_q(t) = ∫₋₁¹ e^{tu} (1 − u²)^{(q−2)/2} du is the function defined with "
        "Lemma 5.5. Answer to three significant figures.",
        "05_proofs", lambda: _gq("G", 2, 1.5)),
    "ch5-c": Question(
        "The bound of Lemma 5.5 (i) on the ratio G₁₀(3)/G₁₀(1). Answer to three significant figures.",
        "05_proofs", lambda: _gq("ratio_bound", 10, 1.0, 3.0)),
    "ch6-a": Question(
        "Exercise 6.2: how many times larger is Theorem 3.4's σ₀ at ε = 0.1, δ = 10⁻³, n = 10⁶ with "
        "the constant column added (p = 2) than without it (p = 1)? Answer to three significant figures.",
        "06_inference", lambda: _b(0.1, 1e-3, 10**6, 2) / _b(0.1, 1e-3, 10**6, 1)),
    "ch7-a": Question(
        "The tight (ε, δ)-DP noise σ_A of Setting A (the analytic Gaussian mechanism) at ε = 0.1, δ = 10⁻⁵. Answer to three significant figures.",
        "07_tightness", lambda: _exact("analytic_gaussian_sigma", 0.1, 1e-5)),
    "ch7-b": Question(
        "The exact noise Setting B needs for (ε, δ)-DP with one column, at ε = 0.1, δ = 0.01, n = 100. Answer to three significant figures.",
        "07_tightness", lambda: _exact("masked_p1_sigma", 0.1, 0.01, 100)),
    "ch7a-a": Question(
        "σ_⊥, the noise that makes Proposition 7.6's family of orthogonal pairs (ε, δ)-private for "
        "p = 2, at ε = 0.1, δ = 0.01, n = 100. Answer to four significant figures.",
        "07a_exact_p2", _sigma_perp, 1e-3),
    "ch8-a": Question(
        "Exercise 8.3's setting (ε = 0.1, δ = 10⁻⁵, p = 10, n = 10⁶): how many times the noise of a "
        "single mask does a block-diagonal mask with 100 blocks of 10 000 rows need? Answer to four significant figures.",
        "08_scale", _block_ratio, 1e-3),
    "ch9-a": Question(
        "The Frobenius sensitivity Δ_F of the Gram matrix XᵀX, the largest ‖xxᵀ − x′x′ᵀ‖_F (equal to the "
        "L2 sensitivity of svec(XᵀX), Lemma 9.2), for p = 5 columns with entries in [−1, 1], when one "
        "row changes as in Definition 2.1. Answer to three significant figures.",
        "09_rivals", lambda: _rivals("gram_sensitivity", 5)),
    "ch9-b": Question(
        "The Gaussian mechanism on XᵀX calibrated as in Proposition 9.4, at ε = 0.1, δ = 10⁻⁵, p = 5: "
        "the standard deviation τ of the noise on each diagonal entry (the off-diagonal entries "
        "carry τ/√2). Answer to three significant figures.",
        "09_rivals", lambda: _rivals("sigma_gram", 0.1, 1e-5, 5)),
    "ch10-a": Question(
        "dpmask.selfcheck.handout('ch10-a') is a Setting A release made with "
        "release_a(X, 5.0, rng=2026). Recover the data X and give the sum of its first row. Answer to four significant figures.",
        "privacy_in_practice", lambda: float(_seed_attack_data()[0][0].sum()), 1e-3),
    "chA-a": Question(
        "The squared upper Gaussian quantile γ̄_δ² at δ = 0.045 (compare it with ln(1/δ), Lemma A.1). Answer to three significant figures.",
        "A_technical_lemmas", lambda: float(_gq_upper(0.045) ** 2)),
    "chA-b": Question(
        "The largest δ < 0.05 up to which Lemma A.1's lower bound γ̄_δ² ≥ ln(1/δ) holds (δ*). Answer to four significant figures.",
        "A_technical_lemmas", _delta_star, 1e-3),
}


def _gq_upper(delta):
    from .paper.bounds import gaussian_upper_quantile

    return float(gaussian_upper_quantile(delta))


@functools.lru_cache(maxsize=None)
def _value(question: str) -> float:
    """The answer to *question*, computed once per session (the computations are deterministic)."""
    return float(QUESTIONS[question].answer())


def _question(question) -> Question:
    if not isinstance(question, str):
        raise TypeError(f"question must be a question id such as 'ch3-b', got {question!r}")
    if question not in QUESTIONS:
        raise ValueError(f"question must be one of {', '.join(QUESTIONS)}, got {question!r}")
    return QUESTIONS[question]


def questions(chapter=None) -> dict[str, str]:
    """The questions (id -> text), all of them or those of one *chapter* (``"03_main_results"``)."""
    if chapter is not None and chapter not in {q.chapter for q in QUESTIONS.values()}:
        raise ValueError(f"chapter must be one of {sorted({q.chapter for q in QUESTIONS.values()})}, got {chapter!r}")
    return {k: q.text for k, q in QUESTIONS.items() if chapter is None or q.chapter == chapter}


def check(question, answer, *, quiet=False) -> bool:
    """Whether *answer* to *question* is right, within the question's relative tolerance.

    Parameters
    ----------
    question : str
        A question id of the course page, e.g. ``"ch3-b"`` (see :func:`questions`).
    answer : float
        The student's answer, a finite real number.
    quiet : bool, optional
        Do not print the verdict (it is returned either way).

    Returns
    -------
    bool
        True when ``|answer - value| <= rel_tol * |value|``.  The value itself is never printed
        or returned.

    Raises
    ------
    ValueError
        For an unknown question id or an answer that is not a finite number.
    TypeError
        For an answer that is not a real number (a string, a bool, a complex number).
    """
    q = _question(question)
    if isinstance(answer, (bool, np.bool_)) or isinstance(answer, (str, bytes)):
        raise TypeError(f"answer must be a real number, got {answer!r}")
    value = float(check_scalar(as_float_array(answer, "answer"), "answer"))
    if not math.isfinite(value):
        raise ValueError(f"answer must be a finite number, got {answer!r}")
    if not isinstance(quiet, bool):
        raise TypeError(f"quiet must be True or False, got {quiet!r}")
    truth = _value(question)
    right = abs(value - truth) <= q.rel_tol * abs(truth)
    if not quiet:
        tol = f"{100 * q.rel_tol:g} %"
        if right:
            print(f"{question}: right (within {tol}).")
        else:
            print(f"{question}: not yet -- {value:g} is not within {tol} of the answer.")
    return right


def handout(question):
    """The data *question* hands out (a copy): for ``"ch10-a"``, the published release Y (20 x 3)."""
    _question(question)
    if question != "ch10-a":
        raise ValueError(f"question {question!r} hands out no data; only 'ch10-a' does")
    return _seed_attack_data()[1].copy()
