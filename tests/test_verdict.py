"""The verdict as the front page and the README state it: every number there, recomputed from dpmask.

index.md and README.md are not executed, so nothing else stops their numbers from drifting away from
the package (the chapters glue theirs).  The paragraph between ``<!-- verdict`` and ``<!-- /verdict -->``
in each file is checked here: each number it states is recomputed, formatted as the text writes it,
and must appear there.  The first-order ratios are recomputed from Proposition 9.6's closed forms with
the rival's noise taken from dp-accounting's Gaussian calibration, not from dpmask's, so a drift in
either the text or the package's calibration fails.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from dpmask import rivals
from dpmask.paper import bounds, table
from dpmask.rivals import compare

ROOT = Path(__file__).resolve().parents[1]
FILES = ("index.md", "README.md")
#: The book's front page carries the whole verdict; the README's front door the short one (issue 30: at most
#: ten lines, with a link to chapter 9), whose numbers are checked by the tests parametrized over FILES.
FULL = ("index.md",)


def _verdict(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    m = re.search(r"<!-- verdict\b.*?-->(?P<body>.*?)<!-- /verdict -->", text, re.S)
    assert m, f"{name}: no <!-- verdict --> ... <!-- /verdict --> block"
    return " ".join(m.group("body").split())   # one line: the text wraps anywhere


def _levels():
    """Table 1's six (eps, delta), from the package's copy of the paper's table."""
    return sorted({(float(r[0]), float(r[1])) for r in table.PAPER_TABLE1}, reverse=True)


def _tau(eps, delta, p):
    dpa = pytest.importorskip("dp_accounting.gaussian_mechanism")
    return dpa.get_sigma_gaussian(eps, delta, tol=1e-12) * (2 * math.sqrt(p) - 1)   # Lemma 9.2, Proposition 9.4


def _first_order_ratios():
    """Masking's first-order slope RMSE over the rival's, at Table 1's levels, p in {2, 5}, n in {1e4, 1e6}, with
    first order's margin (compare.first_order_margin: how many noise standard deviations the slopes' matrix is from
    singular) in each case; first order describes the errors only where the margin is at least compare.MARGIN_MIN."""
    out = {"B0": [], "Blow": []}
    for p in (2, 5):
        c2, c4 = rivals.error_coefficients(rivals.example_moments(p))["ols"]
        for eps, delta in _levels():
            tau = _tau(eps, delta, p)
            for n in (10**4, 10**6):
                rival = tau * math.sqrt(c4 / 2) / n
                K = n * rivals.example_moments(p)
                for kind, s in (("B0", float(bounds.sigma_b(eps, delta, n, p))), ("Blow", (tau**2 / (2 * n)) ** 0.25)):
                    margin = compare.first_order_margin(kind, K, n, eps, delta, level={"sigma": s})
                    out[kind].append((math.sqrt((c2 * s**2 + c4 * s**4) / n) / rival, margin))
    return out


@pytest.fixture(scope="module")
def ratios():
    return _first_order_ratios()


def test_table_1_has_six_levels():
    assert len(_levels()) == 6


def _accuracy_phrases(ratios):
    """The accuracy sentence's numbers: where first order holds, and the ratio only there."""
    holds = {k: [r for r, m in v if m >= compare.MARGIN_MIN] for k, v in ratios.items()}
    cases = len(ratios["B0"])
    return [f"first order holds in {len(holds['B0'])} of the {cases} cases",
            f"first order holds in {len(holds['Blow'])} of the {cases} cases",
            f"slopes are {min(holds['Blow']):.2f} to {max(holds['Blow']):.1f} times more accurate"], holds


@pytest.mark.parametrize("name", FILES)
def test_first_order_ratios_are_the_packages(name, ratios):
    """The ratio of first-order RMSEs is stated only where first order holds; at sigma_0 it holds nowhere here."""
    text = _verdict(name)
    phrases, holds = _accuracy_phrases(ratios)
    for phrase in phrases:
        assert phrase in text, (phrase, text[:300])
    assert not holds["B0"] and len(holds["Blow"]) < len(ratios["Blow"])
    assert "with $10^4$ or $10^6$ rows" in text and "two or five columns" in text
    assert "184 to 106,785" not in text and "to first order its least-squares" not in text


@pytest.mark.parametrize("name", FULL)
def test_wishart_rival_is_named_with_its_delta(name):
    """Jiang et al.'s Wishart mechanism at its own scale c = 3 Delta / (2 eps) has delta = 1 - exp(-eps/3) (chapter 9)."""
    text = _verdict(name)
    for eps, delta in _levels():
        d = rivals.wishart_delta(eps, rivals.wishart_scale(eps, delta, 1, calibration="paper"), 1)
        assert abs(d - (1 - math.exp(-eps / 3))) < 1e-12 and d > 0
    assert "Wishart mechanism of Jiang et al." in text
    assert "not $(\\varepsilon, 0)$-DP but $(\\varepsilon, 1 - e^{-\\varepsilon/3})$-DP" in text


@pytest.mark.parametrize("name", FULL)
def test_protocol_costs_are_the_packages(name):
    text = _verdict(name)
    n, p = 10**5, 5
    rows = {r["model"]: r for r in rivals.trust_costs(n, p)}
    masked = rows["Setting B (triple matrix-masking)"]
    secagg = rows["rival, secure aggregation (distributed noise)"]
    assert f"sends {masked['party_sends']} bytes (five columns) in two rounds" in text
    assert masked["party_rounds"] == 2 and secagg["party_rounds"] == 4 and "four rounds" in text
    assert f"{round(secagg['party_sends'] / 1e6)} MB per person at $10^5$ rows" in text
    bell = {r["model"]: r for r in rivals.trust_costs(n, p, neighbours=math.ceil(3 * math.log2(n)))}
    assert 1000 < bell["rival, secure aggregation (distributed noise)"]["party_sends"] < 10000
    assert "a few kilobytes in a newer one" in text


@pytest.mark.parametrize("name", FILES)
def test_rows_masking_needs_are_hundreds_of_millions(name):
    text = _verdict(name)
    rows_b0 = [float(np.asarray(_rows_b0(eps, delta, p))) for p in (2, 5) for eps, delta in _levels()]
    assert 1e8 <= min(rows_b0) < 1e9
    for p in (2, 5):   # first order describes the errors there (it does not at 10^4 to 10^6 rows)
        for eps, delta in _levels():
            n = int(_rows_b0(eps, delta, p))
            assert compare.first_order_margin("B0", n * rivals.example_moments(p), n, eps, delta) >= compare.MARGIN_MIN
    assert "usable only at hundreds of millions of rows" in text


def _rows_b0(eps, delta, p, target=0.01):
    """Rows at which Setting B's first-order slope RMSE at sigma_0 falls to target (fixed point: sigma_0 is nearly flat)."""
    c2, c4 = rivals.error_coefficients(rivals.example_moments(p))["ols"]
    n = 1e6
    for _ in range(4):
        s = float(bounds.sigma_b(eps, delta, int(min(n, 1e12)), p))
        n = (c2 * s**2 + c4 * s**4) / target**2
    return n


def test_the_check_catches_a_changed_number(ratios):
    """The block parser and the comparison fail on a number the text does not hold."""
    text = _verdict("README.md")
    phrases, _ = _accuracy_phrases(ratios)
    assert phrases[2] in text
    assert phrases[2].replace(" to ", "1 to ") not in text


def _dropout_costs():
    """What half the rows dropping out costs masking: Theorem 3.4's sigma at the smallest n that may complete over
    sigma at the planned n (the largest over Table 1's levels, p in {2, 5}, n from 1e3 to 1e7), and at the lower
    bound's large-n form (tau^2 / 2n)^(1/4) the ratio 2^(1/4), whatever the level."""
    s0 = [float(bounds.sigma_b(eps, delta, n - n // 2, p)) / float(bounds.sigma_b(eps, delta, n, p))
          for p in (2, 5) for eps, delta in _levels() for n in (10**3, 10**4, 10**5, 10**6, 10**7)]
    return max(s0), 2 ** 0.25


@pytest.mark.parametrize("name", FULL)
def test_dropout_cost_of_masking_is_recomputed(name):
    """The verdict once said nobody's privacy depends on who drops out; masking's noise falls with n, so it must be
    calibrated for the smallest number of rows that may complete, and the block states what that costs."""
    text = _verdict(name)
    s0, low = _dropout_costs()
    stated = (f"with half the rows lost, at most {100 * (s0 - 1):.1f} % more noise at Theorem 3.4's level and "
              f"{100 * (low - 1):.0f} % more at the lower bound")
    assert stated in text, (stated, text)
    assert "smallest number of rows that may complete" in text
    assert "nobody's privacy depends on who" not in text
    assert 1 < s0 < 1.02 and s0 < low


@pytest.mark.parametrize("name", FULL)
def test_the_table_claim_carries_its_condition(name):
    """Proposition 9.5: the rival's table has a masked release's law only where its noisy Gram matrix is PD."""
    text = _verdict(name)
    assert "table of the same kind at no cost in privacy (distributed like a masked release wherever that noisy Gram matrix is positive definite" in text


def test_the_readme_verdict_is_short_and_points_to_the_book():
    """Issue 30: the README's first screen gives the verdict in at most ten lines, with a link to chapter 9."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- verdict\b.*?-->\n(?P<body>.*?)<!-- /verdict -->", text, re.S)
    assert m and len(m.group("body").strip().splitlines()) <= 10
    assert "(chapters/09_rivals.ipynb)" in m.group("body")
    assert text.index("<!-- verdict") < text.index("## What the paper claims")
