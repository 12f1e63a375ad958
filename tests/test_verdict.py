"""The verdict as the front page and the README state it: every number there, recomputed from dpmask.

index.md and README.md are not executed, so nothing else stops their numbers from drifting away from
the package (the chapters glue theirs).  The paragraph between ``<!-- verdict`` and ``<!-- /verdict -->``
in each file is checked here: each number it states is recomputed, formatted as the text writes it,
and must appear there.  The first-order ratios are recomputed from Proposition 9.6's closed forms with
the rival's noise taken from dp-accounting's Gaussian calibration, not from dpmask's, and the slopes' constants
(c2, c4) derived by hand (``_slope_coefficients``), not from the package's finite differences, so a drift in either
the text or the package fails.  Every range names its cases (issue 32): the first-order ratios on the example data
with 10^4 or 10^6 rows, and over both data sets with 10^4, 10^5 and 10^6 rows; the dropout cost in the same unit
for masking and the rival (first-order error, and noise).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from dpmask import rivals
from dpmask.paper import bounds, table
from dpmask.rivals import compare, trust

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


def _slope_coefficients(M):
    """Proposition 9.6's (c2, c4) for the least-squares slopes of the last column, by hand.

    With v = (-beta, 1) the slopes' error is K_zz^{-1} (E v)_z to first order and M v has no z part (the normal
    equations), so masking's covariance (9.2) gives c2 = (|v|^2 tr M_zz^{-1} + v'Mv tr M_zz^{-2}) / k and
    c4 = (|v|^2 tr M_zz^{-2} + beta' M_zz^{-2} beta) / k (the rival's (tau^2/2)(|v|^2 I + beta beta') gives its c4).
    """
    M = np.asarray(M, float)
    k = M.shape[0] - 1
    beta = np.linalg.solve(M[:k, :k], M[:k, k])
    v = np.append(-beta, 1.0)
    inv = np.linalg.inv(M[:k, :k])
    inv2 = inv @ inv
    return (v @ v * np.trace(inv) + v @ M @ v * np.trace(inv2)) / k, (v @ v * np.trace(inv2) + beta @ inv2 @ beta) / k


def test_slope_coefficients_by_hand_are_the_packages():
    """The hand formula agrees with dpmask's finite-difference constants (and with 9/2, 27/2 for the p = 2 example)."""
    assert np.allclose(_slope_coefficients(rivals.example_moments(2)), (4.5, 13.5), rtol=1e-12)
    for p in (2, 5):
        assert np.allclose(_slope_coefficients(rivals.example_moments(p)),
                           rivals.error_coefficients(rivals.example_moments(p))["ols"], rtol=1e-6)


def _moments(data):
    """Second moments per row of chapter 9's data sets, p = 2 and 5: the example data and the RAND HIE extract."""
    if data == "example":
        return {p: rivals.example_moments(p) for p in (2, 5)}
    pytest.importorskip("statsmodels")
    from dpmask.data import load_randhie

    out = {}
    for p, cols in ((2, ("lncoins",)), (5, None)):
        X = load_randhie(cols)[0] if cols else load_randhie()[0]
        out[p] = X.T @ X / len(X)
    return out


def _blow_ratios(data, ns):
    """At sigma_low (large-n form) against the rival: (ratio of first-order slope RMSEs, both margins) per case,
    Table 1's levels, p in {2, 5}, the rows ns."""
    out = []
    for p, M in _moments(data).items():
        c2, c4 = _slope_coefficients(M)
        for eps, delta in _levels():
            tau = _tau(eps, delta, p)
            for n in ns:
                s = (tau**2 / (2 * n)) ** 0.25
                ratio = math.sqrt((c2 * s**2 + c4 * s**4) / n) / (tau * math.sqrt(c4 / 2) / n)
                margins = (compare.first_order_margin("Blow", n * M, n, eps, delta, level={"sigma": s}),
                           compare.first_order_margin("gram", n * M, n, eps, delta, level={"tau": tau}))
                out.append((ratio, min(margins)))
    return out


def _first_order_ratios():
    """Masking's first-order slope RMSE over the rival's, at Table 1's levels, p in {2, 5}, n in {1e4, 1e6}, with
    first order's margin (compare.first_order_margin: how many noise standard deviations the slopes' matrix is from
    singular) in each case; first order describes the errors only where the margin is at least compare.MARGIN_MIN."""
    out = {"B0": [], "Blow": []}
    for p in (2, 5):
        c2, c4 = _slope_coefficients(rivals.example_moments(p))
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
    wide = [r for r, m in _blow_ratios("example", (10**4, 10**5, 10**6)) + _blow_ratios("real", (10**4, 10**5, 10**6))
            if m >= compare.MARGIN_MIN]
    wide_cases = 2 * 3 * 2 * len(_levels())
    return [f"on the example data with $10^4$ or $10^6$ rows first order holds in {len(holds['B0'])} of the "
            f"{cases} cases",
            f"first order holds in {len(holds['Blow'])} of the {cases} cases",
            f"slopes are {min(holds['Blow']):.2f} to {max(holds['Blow']):.1f} times more accurate",
            f"over both data sets and $10^4$, $10^5$ and $10^6$ rows, {len(wide)} of {wide_cases} cases and "
            f"{min(wide):.2f} to {max(wide):.1f} times"], holds


@pytest.mark.parametrize("name", FILES)
def test_first_order_ratios_are_the_packages(name, ratios):
    """The ratio of first-order RMSEs is stated only where first order holds; at sigma_0 it holds nowhere here."""
    text = _verdict(name)
    phrases, holds = _accuracy_phrases(ratios)
    for phrase in phrases:
        assert phrase in text, (phrase, text[:300])
    assert not holds["B0"] and len(holds["Blow"]) < len(ratios["Blow"])
    assert "with $10^4$ or $10^6$ rows" in text and "two or five columns" in text
    # the narrow scope's cases are those of the example data's 24 in _blow_ratios (same margins, same ratios)
    narrow = [r for r, m in _blow_ratios("example", (10**4, 10**6)) if m >= compare.MARGIN_MIN]
    assert np.allclose(sorted(narrow), sorted(holds["Blow"]), rtol=1e-9)
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


def _dropout_costs(f=0.5):
    """What half the rows dropping out costs masking and the rival, in the same units, over Table 1's levels,
    p in {2, 5} and n from 1e3 to 1e7 (first-order slope error of the example data, Proposition 9.6, with the
    constants by hand): masking must add sigma(n_min) instead of sigma(n), n_min = n - floor(f n).

    Returns the largest noise and error ratios at Theorem 3.4's sigma_0, the noise ratio (n/n_min)^(1/4) and the
    range of error ratios at the lower bound's large-n form (tau^2/2n)^(1/4) (tau from dp-accounting), and the
    rival's padding factor 1/sqrt(1 - f), which multiplies its tau and its first-order error tau sqrt(c4/2)/n alike."""
    s0_noise, s0_err, low_err = [], [], []
    for p in (2, 5):
        c2, c4 = _slope_coefficients(rivals.example_moments(p))

        def err(s, t):
            return math.sqrt((c2 * t**2 + c4 * t**4) / (c2 * s**2 + c4 * s**4))

        for eps, delta in _levels():
            tau = _tau(eps, delta, p)
            for n in (10**3, 10**4, 10**5, 10**6, 10**7):
                n_min = n - int(f * n)
                s, t = float(bounds.sigma_b(eps, delta, n, p)), float(bounds.sigma_b(eps, delta, n_min, p))
                s0_noise.append(t / s)
                s0_err.append(err(s, t))
                pkg = trust.masking_dropout_cost(eps, delta, n, p, f, quantity="error")
                assert abs(pkg.ratio / err(s, t) - 1) < 1e-6, (eps, delta, n, p)
                s, t = (tau**2 / (2 * n)) ** 0.25, (tau**2 / (2 * n_min)) ** 0.25
                low_err.append(err(s, t))
                pkg = trust.masking_dropout_cost(eps, delta, n, p, f, level="sigma_low", quantity="error")
                assert abs(pkg.ratio / err(s, t) - 1) < 1e-6, (eps, delta, n, p)
    return dict(s0_noise=max(s0_noise), s0_err=max(s0_err), low_noise=(1 / (1 - f)) ** 0.25,
                low_err=(min(low_err), max(low_err)), rival=1 / math.sqrt(1 - f))


@pytest.fixture(scope="module")
def dropout_costs():
    return _dropout_costs()


def _pct(x, digits=0):
    return f"{100 * (x - 1):.{digits}f} %"


@pytest.mark.parametrize("name", FULL)
def test_dropout_cost_of_masking_is_recomputed(name, dropout_costs):
    """The verdict once said nobody's privacy depends on who drops out; masking's noise falls with n, so it must be
    calibrated for the smallest number of rows that may complete, and the block states what that costs.  Issue 32:
    it then set masking's noise ratio against the rival's padding, an error ratio; it now compares error with error
    and noise with noise, each named."""
    text = _verdict(name)
    c = dropout_costs
    stated = (f"with half the rows lost, over Table 1's levels, two or five columns and $10^3$ to $10^7$ rows, "
              f"masking's first-order slope error on the example data grows by at most {_pct(c['s0_err'], 1)} at "
              f"Theorem 3.4's level and by {_pct(c['low_err'][0])} to {_pct(c['low_err'][1])} at the lower bound, "
              f"where padding for the same loss costs the rival {_pct(c['rival'])} in error and in noise alike; "
              f"in noise masking pays at most {_pct(c['s0_noise'], 1)} and {_pct(c['low_noise'])}")
    assert stated in text, (stated, text)
    assert "smallest number of rows that may complete" in text
    assert "nobody's privacy depends on who" not in text
    assert 1 < c["s0_noise"] < c["s0_err"] < 1.05 and c["s0_noise"] < c["low_noise"]
    # at the lower bound the error ratio lies between the noise ratio and its square, which is the rival's factor
    assert c["low_noise"] < c["low_err"][0] < c["low_err"][1] < c["low_noise"] ** 2 <= c["rival"] + 1e-12


def test_the_old_dropout_sentence_is_gone():
    """The sentence issue 32 found (noise ratios beside the rival's padding, an error ratio) is caught."""
    old = "with half the rows lost, at most 1.5 % more noise at Theorem 3.4's level and 19 % more at the lower bound"
    for name in FILES:
        assert old not in _verdict(name)


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
