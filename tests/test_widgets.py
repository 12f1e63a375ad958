"""Tests for dpmask.widgets: the explorers build, react to their sliders, and show true numbers.

The numbers a panel displays are checked against the paper's printed Table 1
and against bounds recomputed here from scipy's normal and noncentral
chi-square laws with a plain brentq (not through dpmask.paper.bounds); the Lemma 5.5
explorer is checked against direct quadrature of G_q.
"""

import math
import re

import numpy as np
import pytest
from scipy import integrate, optimize, stats

ipywidgets = pytest.importorskip("ipywidgets")
matplotlib = pytest.importorskip("matplotlib")

from dpmask import widgets  # noqa: E402


# --------------------------------------------------------------------------- helpers

def panel_numbers(box):
    """Read the numbers shown in an explorer's HTML panel, keyed by data-key."""
    html = box.children[1].value
    out = {}
    for key, text in re.findall(r"data-key='(\w+)'[^>]*>([^<]*)<", html):
        out[key] = float("nan") if "mdash" in text else float(text)
    return out


def sliders(box):
    return {s.description: s for s in box.children[0].children}


def independent_a(eps, delta):
    g = stats.norm.isf(delta)
    return g / eps, g / eps * (1 + 1 / (2 * g * g))


def independent_b(eps, delta, n, p, shift=0):
    """Largest root of Theorem 3.4's g(sigma), by brentq on sigma (shift=1: corrected)."""
    def g(sigma):
        quant = stats.ncx2.isf(delta, 2 * (n - p), p / sigma**2)
        return (2 * math.sqrt(p) + 1) / (2 * (n - p - shift)) * quant + math.sqrt(p) - sigma**2 * eps

    return optimize.brentq(g, 1e-3, 1e5, xtol=1e-12, rtol=1e-12)


# Rows of the paper's Table 1: eps, delta, p, n, A necessary, A sufficient, B sufficient, ratio.
TABLE1_ROWS = [
    (0.1, 0.01, 1, 100, 23.3, 25.4, 6.9, 4),
    (0.1, 0.001, 5, 10000, 30.9, 32.5, 8.9, 4),
    (0.01, 0.001, 20, 10000, 309.0, 325.2, 38.4, 8),
    (0.001, 0.01, 5, 100, 2326.3, 2541.3, 95.4, 27),
]


# --------------------------------------------------------------------------- noise explorer

def test_noise_explorer_initial_state_matches_table1_first_row():
    box = widgets.noise_explorer(eps=0.1, delta=0.01, n=100, p=1)
    assert isinstance(box, ipywidgets.VBox)
    shown = panel_numbers(box)
    assert round(shown["a_necessary"], 1) == 23.3
    assert round(shown["a_sufficient"], 1) == 25.4
    assert round(shown["b_sufficient"], 1) == 6.9
    assert round(shown["ratio"]) == 4
    # the tight (eps, delta)-DP value beside Theorem 3.2's criterion values (dp-accounting, independent)
    from dp_accounting import gaussian_mechanism as dpa
    assert shown["a_exact"] == pytest.approx(dpa.get_sigma_gaussian(0.1, 0.01, tol=1e-12), abs=6e-5)  # 5 digits shown
    # the plot was drawn: a PNG signature in the Image widget
    assert bytes(box.children[2].value[:8]) == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("eps, delta, p, n, a_nec, a_suf, b_suf, ratio", TABLE1_ROWS)
def test_noise_explorer_reproduces_table1(eps, delta, p, n, a_nec, a_suf, b_suf, ratio):
    # start one Table 1 row away in n, then move the n slider: the callback must redraw the panel
    box = widgets.noise_explorer(eps=eps, delta=delta, n=1000, p=p)
    sliders(box)["n"].value = n
    shown = panel_numbers(box)
    assert round(shown["a_necessary"], 1) == pytest.approx(a_nec)
    assert round(shown["a_sufficient"], 1) == pytest.approx(a_suf)
    assert round(shown["b_sufficient"], 1) == pytest.approx(b_suf)
    assert round(shown["ratio"]) == ratio


def test_noise_explorer_every_slider_updates_the_panel():
    box = widgets.noise_explorer()
    s = sliders(box)
    before = box.children[1].value
    s["p"].value = 5          # Table 1: eps 0.1, delta 0.01, p 5, n 100 -> B 9.5
    assert round(panel_numbers(box)["b_sufficient"], 1) == 9.5
    s["ε"].value = 0.01       # -> B 30.2, A 254.1
    assert round(panel_numbers(box)["b_sufficient"], 1) == 30.2
    assert round(panel_numbers(box)["a_sufficient"], 1) == 254.1
    s["δ"].value = 0.001      # -> B 31.0, A 325.2
    assert round(panel_numbers(box)["b_sufficient"], 1) == 31.0
    assert round(panel_numbers(box)["a_necessary"], 1) == 309.0
    assert box.children[1].value != before


@pytest.mark.parametrize("eps, delta, n, p", [(0.5, 1e-6, 1000, 10), (0.003, 0.03, 30, 3), (0.9, 1e-8, 10**6, 50)])
def test_noise_explorer_numbers_match_independent_computation(eps, delta, n, p):
    box = widgets.noise_explorer(eps=eps, delta=delta, n=n, p=p)
    s = sliders(box)
    # slider values are snapped to the slider's step; use what the slider holds
    e, d, nn = s["ε"].value, s["δ"].value, int(round(s["n"].value))
    shown = panel_numbers(box)
    a_nec, a_suf = independent_a(e, d)
    b = independent_b(e, d, nn, p)
    b_cor = independent_b(e, d, nn, p, shift=1)
    # the panel prints five significant digits
    for key, truth in [("a_necessary", a_nec), ("a_sufficient", a_suf), ("b_sufficient", b),
                       ("b_corrected", b_cor), ("ratio", a_suf / b)]:
        assert shown[key] == pytest.approx(truth, rel=1e-4), key
    assert b_cor >= b  # the corrected coefficient is larger, so its root is too


def test_noise_explorer_refuses_n_not_above_p():
    box = widgets.noise_explorer()
    s = sliders(box)
    s["p"].value = 50
    s["n"].value = 10
    assert "needs more rows than columns" in box.children[1].value
    assert panel_numbers(box) == {}


def test_noise_numbers_rejects_bad_arguments():
    with pytest.raises(ValueError, match="eps"):
        widgets.noise_numbers(1.5, 0.01, 100, 1)
    with pytest.raises(ValueError, match="n must exceed p"):
        widgets.noise_numbers(0.1, 0.01, 5, 5)


def _check_figure(fig):
    from matplotlib.figure import Figure

    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel()
    assert ax.get_lines()
    for line in ax.get_lines():
        assert np.all(np.isfinite(line.get_ydata()))


def test_noise_figure_is_a_labelled_figure_with_true_ratios():
    fig = widgets.noise_figure(eps_values=(0.1, 0.01), p_values=(1, 5), delta=0.01)
    _check_figure(fig)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 4
    # The first line is eps = 0.1, p = 1: at n = 100 the ratio is Table 1's 25.4 / 6.9
    x, y = lines[0].get_data()
    a = independent_a(0.1, 0.01)[1]
    i = int(np.argmin(np.abs(x - 100)))
    assert y[i] == pytest.approx(a / independent_b(0.1, 0.01, x[i], 1), rel=1e-8)
    assert np.all(np.diff(x) > 0) and x.min() > 1 + 1  # n > p + 1 throughout


# --------------------------------------------------------------------------- G_q explorer

def log_G_quad(q, t):
    """ln G_q(t) by direct quadrature of exp(t (u - 1)) (1 - u^2)^((q-2)/2), rescaled."""
    val, _ = integrate.quad(lambda u: math.exp(t * (u - 1)) * (1 - u * u) ** ((q - 2) / 2), -1, 1,
                            epsabs=0, epsrel=1e-12, limit=200)
    return t + math.log(val)


@pytest.fixture
def gq_available():
    pytest.importorskip("dpmask.paper.gq")


@pytest.mark.parametrize("q, t1, t2", [(10, 1.0, 3.0), (3, 0.5, 7.5), (50, 20.0, 4.0), (200, 0.0, 40.0)])
def test_gq_explorer_matches_quadrature_and_bound_holds(gq_available, q, t1, t2):
    box = widgets.gq_explorer(q=q, t1=t1, t2=t2 / 2)
    sliders(box)["t₂"].value = t2   # move one slider: the callback recomputes
    shown = panel_numbers(box)
    truth = log_G_quad(q, t2) - log_G_quad(q, t1)
    assert shown["log_ratio"] == pytest.approx(truth, rel=1e-4, abs=1e-6)
    assert shown["log_bound"] == pytest.approx(abs(t1**2 - t2**2) / (2 * q), rel=1e-4)
    assert shown["log_ratio"] <= shown["log_bound"]
    assert "bound holds" in box.children[1].value
    assert bytes(box.children[2].value[:8]) == b"\x89PNG\r\n\x1a\n"


def test_gq_numbers_closed_form_q2(gq_available):
    """q = 2 has a closed form, G_2(t) = 2 sinh(t) / t."""
    vals = widgets.gq_numbers(2, 0.0, 10.0)
    assert vals["holds"]
    # G_2(t) = 2 sinh(t)/t, so ln G_2(10) - ln G_2(0) = ln(sinh(10)/10) and the bound is 25
    assert vals["log_ratio"] == pytest.approx(math.log(math.sinh(10.0) / 10.0), rel=1e-10)
    assert vals["log_bound"] == pytest.approx(25.0)


def test_gq_figure_is_labelled_and_respects_bound(gq_available):
    fig = widgets.gq_figure(q_values=(2, 20), t_max=20.0)
    _check_figure(fig)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 4
    exact, bound = lines[0].get_ydata(), lines[1].get_ydata()
    assert np.all(exact <= bound + 1e-12)
    t = lines[0].get_xdata()
    assert exact[-1] == pytest.approx(math.log(math.sinh(t[-1]) / t[-1]), rel=1e-8)


# --------------------------------------------------------------------------- the package's layout

EXPLORERS = ("noise", "gq", "block", "inference", "tightness", "rivals")


def test_widgets_is_a_package_with_one_module_per_explorer():
    import importlib
    import inspect

    assert hasattr(widgets, "__path__"), "dpmask.widgets should be a package"
    public = set()
    for name in EXPLORERS:
        module = importlib.import_module(f"dpmask.widgets.{name}")
        for kind in ("numbers", "explorer", "figure"):
            fn = getattr(widgets, f"{name}_{kind}")  # the name the book calls
            assert fn is getattr(module, f"{name}_{kind}") and fn.__module__ == module.__name__
        public |= {n for n, f in vars(module).items()
                   if inspect.isfunction(f) and f.__module__ == module.__name__ and not n.startswith("_")}
    assert sorted(widgets.__all__) == sorted(public)  # complete, and nothing else
    shared = importlib.import_module("dpmask.widgets._shared")
    for name in ("LivePlot", "log_slider", "int_slider", "explorer", "panel", "plain_log_ticks", "power_of_ten"):
        assert callable(getattr(shared, name)), name


def test_widgets_modules_and_functions_stay_small():
    import ast
    from pathlib import Path

    for path in sorted(Path(widgets.__file__).parent.glob("*.py")):
        text = path.read_text()
        assert len(text.splitlines()) <= 1000, path.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno - node.lineno + 1 <= 120, f"{path.name}: {node.name}"


# --------------------------------------------------------------------------- the live plot


def test_live_plot_frame_from_a_kept_background_equals_a_fresh_drawing():
    """A frame drawn on a kept static picture is the frame a new figure draws for the same state."""
    from dpmask.widgets.noise import _Plot

    state = (0.1, 0.01, 1000, 5, 9.5)
    fresh = _Plot().draw(*state)
    reused = _Plot()
    reused.draw(0.1, 0.01, 200, 5, 9.9)  # same axis ranges (only the marker and the title differ) ...
    reused.draw(0.0123, 0.01, 200, 5, 60.0)  # ... and another range, so both kept pictures are used
    assert reused.draw(*state) == fresh
    assert len(reused._static) == 2


def test_axis_ranges_contain_the_data_and_snap():
    from dpmask.widgets._shared import linear_range, log_range

    for lo, hi in [(3.0, 7.0), (0.013, 2e4), (1e-9, 1e-9)]:
        a, b = log_range(lo, hi)
        assert a < lo and b > hi
        assert math.log10(a) * 4 == pytest.approx(round(math.log10(a) * 4))
        assert math.log10(b) * 4 == pytest.approx(round(math.log10(b) * 4))
    assert log_range(3.0, 7.0) == log_range(3.1, 6.9)  # small moves keep the range (and the kept picture)
    for lo, hi in [(-0.05, 11.3), (1.0, 2.4), (0.0, 0.0)]:
        a, b = linear_range(lo, hi)
        assert a < lo and b > hi


# --------------------------------------------------------------------------- tightness: exact values, solved ahead


def test_tightness_batch_gives_sigma_lower_bound_point_by_point():
    """One vectorised call per statistic gives, bit for bit, the package function at each point,
    and the panel's bound is sigma_lower_bound's "best"."""
    from dpmask.exact import audit
    from dpmask.widgets import tightness as T

    settings = [(0.1, 0.01, 30, 5), (2.0, 1e-6, 20, 7), (0.5, 1e-3, 25119, 50)]  # the last: n p > 1e6
    points = [pt for setting in settings for pt in T._needs(*setting)]
    found = T._solve(points)
    assert set(found) == set(points)
    assert not any(pt[3] == "frobenius" for pt in T._needs(*settings[2]))  # outside its curves' domain
    for point in points[: -len(T._needs(*settings[2]))]:  # (point by point at n = 25119 takes long)
        eps, delta, n, statistic, p = point
        assert found[point] == float(audit.sigma_lower_bound(eps, delta, n, p, statistic=statistic)), point
    for setting in settings:
        best, curve = T._lower(setting, [found[pt] for pt in T._needs(*setting)])
        assert best == float(audit.sigma_lower_bound(*setting)), setting
        assert len(curve) == len(T._plotted(setting[2], setting[3]))


def test_tightness_worker_process_answers_like_this_process_and_ends_with_its_input():
    from dpmask.widgets import tightness as T

    worker = T._Worker()
    points = T._needs(0.3, 1e-3, 40, 3)
    assert worker.solve(points) == T._solve(points)
    assert worker.proc is not None and worker.proc.poll() is None  # a separate process did it
    worker.proc.stdin.close()  # the kernel went away
    assert worker.proc.wait(timeout=60) == 0


def _browser_step(value, lo, step, k):
    """The value a browser sends after k arrow presses: the exponent moved by k steps.

    Added to the exponent here, where the explorer's planner counts positions from the slider's
    low end: the two agree only to rounding, as the browser's own arithmetic would.
    """
    return 10 ** (math.log10(value) + k * step)


def test_tightness_key_presses_find_the_lower_bound_solved_ahead():
    from dpmask.widgets import tightness as T

    box = widgets.tightness_explorer(eps=0.1, delta=0.01, n=100, p=5)
    assert T._SCHEDULER.settle(timeout=600)
    s = box.children[0].children
    start = [c.value for c in s]
    presses = [(0, _browser_step(0.1, -3, 0.05, 1)), (0, _browser_step(0.1, -3, 0.05, -1)),
               (1, _browser_step(0.01, -10, 0.1, 1)), (2, _browser_step(100, 1, 0.1, -1)), (3, 6), (3, 4)]
    for index, value in presses:
        s[index].value = value
        # answered at once and complete: the lower bound was solved before the press
        assert "computing" not in box.children[1].value, (index, value)
        assert box._dpmask_pending().done()
        s[index].value = start[index]
    # and the panel shows the package's numbers at the setting the slider holds
    s[0].value = presses[0][1]
    want = widgets.tightness_numbers(s[0].value, 0.01, 100, 5)
    for key, value in panel_numbers(box).items():
        assert value == pytest.approx(float(f"{want[key]:.5g}"), rel=1e-12), key
    box._dpmask_state.close()


def test_tightness_keeps_going_ahead_of_a_reader_pressing_one_key():
    from dpmask.widgets import tightness as T

    box = widgets.tightness_explorer(eps=10**-1.7, delta=0.001, n=30, p=2)  # eps on the slider's grid
    eps_s = box.children[0].children[0]
    value = eps_s.value
    for _ in range(4):  # a reader pressing the right arrow, waiting for each answer
        value = _browser_step(value, -3, 0.05, 1)
        eps_s.value = value
        box._dpmask_pending().result(timeout=300)
    state = box._dpmask_state
    assert state.streak == 4 and state.move == (0, 1)
    others = [c.value for c in box.children[0].children[1:]]
    ahead = [T._setting((_browser_step(value, -3, 0.05, k), *others)) for k in range(1, 6)]
    assert ahead == state.plan()[1:6]  # next in line: the coming presses along the same slider
    assert T._SCHEDULER.settle(timeout=600)  # a hang guard: the workers finish what they planned
    unsolved = [setting for setting in ahead if None in T._known(T._needs(*setting))]
    assert not unsolved, f"the next presses were not solved ahead: {unsolved}"  # with nothing moving
    state.close()  # stop solving ahead for it
