"""The front page (index.md) is not executed, so the numbers it states are checked here.

Each test finds one sentence of index.md by its words, reads the numbers it states, and compares
them with an independent computation (mpmath) and with what `dpmask` computes. A test fails when the
page and the computation part ways, whichever of the two moved.
"""

import re
from pathlib import Path

import mpmath as mp
import numpy as np

from dpmask import bounds

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
