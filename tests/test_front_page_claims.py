"""The front page (index.md) is not executed, so the numbers it states are checked here.

Each test finds one sentence of index.md by its words, reads the numbers it states, and compares
them with an independent computation (mpmath) and with what `dpmask` computes. A test fails when the
page and the computation part ways, whichever of the two moved.
"""

import re
from pathlib import Path

import mpmath as mp
import numpy as np

from dpmask.paper import bounds

ROOT = Path(__file__).resolve().parents[1]


def _bullet(text, words):
    """The one bullet of *text* that contains *words* (bullets start with '- ' at the line start)."""
    bullets = re.split(r"\n(?=- )", text)
    found = [b for b in bullets if words in b]
    assert len(found) == 1, f"expected one bullet with {words!r}, found {len(found)}"
    return found[0]


def _mp_delta_star():
    """Root of gamma_bar_delta^2 = ln(1/delta), gamma_bar_delta = sqrt(2) erfinv(1 - 2 delta), at 30 digits."""
    with mp.workdps(30):
        gamma = lambda d: mp.sqrt(2) * mp.erfinv(1 - 2 * d)
        return mp.findroot(lambda d: gamma(d) ** 2 - mp.log(1 / d), 0.03)


def test_lemma_a1_threshold_on_the_front_page():
    bullet = _bullet((ROOT / "index.md").read_text(), "Lemma A.1")
    # the threshold as printed, with as many decimals as the page gives
    m = re.search(r"\\delta\^\* \\approx (0\.\d+)", bullet)
    assert m, bullet
    stated, decimals = float(m.group(1)), len(m.group(1)) - 2
    star = _mp_delta_star()
    assert round(float(star), decimals) == stated
    # the range the paper states and the page quotes
    assert re.search(r"stated for every\s+\$\\delta < 0\.05\$", bullet), bullet
    assert "up to $0.05$" in bullet
    # the package agrees with the page: the lower bound sqrt(ln(1/delta)) < gamma_bar holds below
    # delta*, and fails at delta* and for every delta from there up to 0.05
    below = np.linspace(1e-4, float(star) * (1 - 1e-9), 2000)
    assert np.all(np.sqrt(np.log(1 / below)) < bounds.gaussian_upper_quantile(below))
    above = np.linspace(float(star) * (1 + 1e-9), 0.05, 2000)
    assert np.all(np.sqrt(np.log(1 / above)) > bounds.gaussian_upper_quantile(above))


# --- claims with their conditions, in every place they are made (issue 23) ------------------------------------

import ast  # noqa: E402
import json  # noqa: E402

import pytest  # noqa: E402


def _paragraphs(text):
    """Paragraphs and list items of a Markdown text (a claim and its condition must share one)."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        out.extend(p for p in re.split(r"\n(?=\s*- )", block) if p.strip())
    return [" ".join(p.split()) for p in out]


def _markdown_of(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def _cli_text():
    """The command line's docstring and the text it prints, as one string per paragraph or printed block."""
    tree = ast.parse((ROOT / "dpmask" / "__main__.py").read_text(encoding="utf-8"))
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    doc = ast.get_docstring(tree)
    printed = " ".join(s.strip() for s in strings if s is not doc)
    return doc + "\n\n" + printed


SOURCES = {
    "README.md": lambda: (ROOT / "README.md").read_text(encoding="utf-8"),
    "index.md": lambda: (ROOT / "index.md").read_text(encoding="utf-8"),
    "chapter 1": lambda: _markdown_of(ROOT / "chapters" / "01_introduction.ipynb"),
    "chapter 9": lambda: _markdown_of(ROOT / "chapters" / "09_rivals.ipynb"),
    "the command line": _cli_text,
}

# (claim, condition): a paragraph that states the claim must state its condition
CONDITIONS = [
    (re.compile(r"law of a masked\s+release|masked release's law|table of the same kind|table with the law"),
     re.compile(r"positive definite")),
    (re.compile(r"local differential privacy|local DP"), re.compile(r"norm")),
]
# unconditional forms the book once printed: none may come back
OLD_CLAIMS = ["nobody's privacy depends on who", "cost masking nothing", "no padding is needed",
              "needs no padding", "no padding, graceful"]


def condition_problems(name, text):
    problems = []
    for para in _paragraphs(text):
        for claim, condition in CONDITIONS:
            if claim.search(para) and not condition.search(para):
                problems.append((name, claim.pattern, para[:160]))
    problems += [(name, old, "") for old in OLD_CLAIMS if old in " ".join(text.split())]
    return problems


@pytest.mark.parametrize("name", list(SOURCES))
def test_claims_carry_their_conditions(name):
    """Proposition 9.5 holds on the event that K_E is positive definite; Setting A is local DP for changes of norm
    <= 1 in a row; masking's noise must be calibrated for the smallest number of rows that may complete.  README,
    the front page, chapters 1 and 9 and the command line say so wherever they state the claim."""
    text = SOURCES[name]()
    assert condition_problems(name, text) == []
    assert "smallest number of rows that may" in " ".join(text.split()), name


def test_the_conditions_check_can_fail():
    """The sentences the book printed before issue 23 are caught."""
    old_table = ("The table format is no advantage: the rival's noisy Gram matrix becomes an $n \\times p$ table "
                 "of the same kind at no cost in privacy.")
    old_local = "- *Setting A* (each person publishes $x_i + c_i$): nobody. It is local differential privacy."
    old_drop = "each person sends 40 bytes in two rounds, and nobody's privacy depends on who drops out"
    for old in (old_table, old_local, old_drop):
        assert condition_problems("planted", old), old


def test_chapter_9_states_the_conditions_in_its_statements():
    """Proposition 9.5's part 3 names the PD event; Proposition 9.8 names the eigenvector and the gap."""
    text = " ".join(_markdown_of(ROOT / "chapters" / "09_rivals.ipynb").split())
    prop_95 = text.split(":label: prop-9-table", 1)[1].split("```", 1)[0]
    assert "on the event that $K_E$ is positive definite" in prop_95.replace("**", "")
    prop_98 = text.split(":label: prop-9-adassp", 1)[1].split("```", 1)[0]
    assert "eigenvector of the smallest eigenvalue" in prop_98 and "gap" in prop_98
    proof_98 = text.split("(of {prf:ref}`prop-9-adassp`)", 1)[1].split(":::", 1)[0]
    assert "eigenvector of the smallest eigenvalue" in proof_98 and "gap of at least $\\Delta_F(k)$" in proof_98
    assert "dpmask.rivals.trust.masking_dropout_cost" in text and "dpmask.rivals.gram.gram_pd_probability" in text
