"""One check at each door (issue 30): an explorer's update validates its arguments once, at its door.

One slider move used to validate eps at every public function it passed through (the noise explorer
entered ``check_eps`` 10 times per move, the rivals explorer 10, the tightness explorer 7).  Public
functions validate; what they call inside the package is the unvalidated core (``bounds._sigma_b``,
``gaussian._analytic_gaussian_sigma``, ...).  Here every call into ``dpmask/_validate.py`` made during
one slider move is counted with ``sys.setprofile`` (the count of calls, not a time), and

* no explorer enters ``check_eps`` more than three times per move (its door may check eps for each
  theorem it combines, in the order the public functions would);
* no explorer calls a public function of the families (``dpmask.paper``, ``dpmask.exact``,
  ``dpmask.rivals``) during an update, only their cores: its door (``noise_numbers``,
  ``gq_numbers``, ...) checks everything once.  (The G_q explorer entered ``log_G`` four to six
  times and ``log_ratio_bound`` once per move, each checking q and t again, until it called
  ``paper.gq``'s cores.)
"""

from __future__ import annotations

import collections
import importlib
import inspect
import pkgutil
import sys

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

FAMILIES = ("dpmask.paper", "dpmask.exact", "dpmask.rivals")
EXPLORERS = ("noise_explorer", "gq_explorer", "block_explorer", "inference_explorer", "tightness_explorer",
             "rivals_explorer")


def public_functions():
    """The code of every public function of the families (each module's ``__all__``), by code object."""
    codes = {}
    for family in FAMILIES:
        package = importlib.import_module(family)
        for info in pkgutil.iter_modules(package.__path__):
            if info.name == "symbolic":
                continue  # SymPy derivations (the book extra); no explorer calls them
            module = importlib.import_module(f"{family}.{info.name}")
            for name in getattr(module, "__all__", ()):
                obj = getattr(module, name)
                if inspect.isfunction(obj):
                    codes[obj.__code__] = f"{obj.__module__}.{name}"
    return codes


def validation_calls(fn):
    """(calls of check_eps, the public family functions entered, by name) while *fn* runs."""
    public = public_functions()
    eps_calls, entered = 0, collections.Counter()

    def profile(frame, event, arg):
        nonlocal eps_calls
        if event != "call":
            return
        code = frame.f_code
        if code.co_name == "check_eps" and code.co_filename.endswith("_validate.py"):
            eps_calls += 1
        elif code in public:
            entered[public[code]] += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return eps_calls, entered


def test_the_count_sees_a_public_call():
    from dpmask.paper import bounds

    eps_calls, entered = validation_calls(lambda: bounds.sigma_b(0.1, 0.01, 100, 2))
    assert eps_calls == 1 and entered == {"dpmask.paper.bounds.sigma_b": 1}
    eps_calls, entered = validation_calls(lambda: bounds._sigma_b(0.1, 0.01, 100, 2))
    assert eps_calls == 0 and not entered


@pytest.mark.parametrize("name", EXPLORERS)
def test_an_update_checks_at_its_door_only(name):
    import matplotlib

    matplotlib.use("Agg")
    from dpmask import widgets

    box = getattr(widgets, name)()
    pending = getattr(box, "_dpmask_pending", lambda: None)
    slider = next(s for s in box.children[0].children if hasattr(s, "step"))
    values = [slider.min, slider.max] if not hasattr(slider, "base") else [slider.base ** slider.min,
                                                                            slider.base ** slider.max]
    for value in values:   # both ends: each a setting no cache has seen

        def move():
            slider.value = value
            future = pending()
            if future is not None:
                future.result()

        eps_calls, entered = validation_calls(move)
        assert eps_calls <= 3, (name, value, eps_calls, dict(entered))
        assert not entered, (name, value, dict(entered))


def test_a_planted_public_call_in_an_update_is_counted(monkeypatch):
    """The G_q explorer's update made to call the public ``log_G`` again (as before issue 30) is seen."""
    import matplotlib

    matplotlib.use("Agg")
    from dpmask.paper import gq
    from dpmask.widgets import gq as gq_widget

    monkeypatch.setattr(gq, "_log_G", gq.log_G)
    gq_widget._curves.cache_clear()
    _, entered = validation_calls(lambda: gq_widget.gq_numbers(7, 0.5, 2.5))
    assert entered["dpmask.paper.gq.log_G"] == 2


def test_the_g_q_cores_give_what_the_public_functions_give():
    import numpy as np

    from dpmask.paper import gq

    q = np.array([1.0, 2.0, 7.5, 40.0, 1e6])
    t = np.array([0.0, 1e-8, 3.0, 60.0, 1e7])
    assert np.array_equal(gq._log_G(q, t), gq.log_G(q, t))
    assert gq._log_G(3.0, 2.0) == gq.log_G(3, 2.0) and isinstance(gq._log_G(3.0, 2.0), float)
    assert np.array_equal(gq._log_G(5.0, t), gq.log_G(5.0, t))
    assert np.array_equal(gq._log_ratio_bound(q, t, t[::-1]), gq.log_ratio_bound(q, t, t[::-1]))


RIVALS_SETTINGS = [(0.1, 0.01, 10**5, 2), (1e-3, 1e-8, 1000, 6), (1.0, 0.1, 2**40, 3), (0.0316, 1e-5, 8, 2),
                   (0.5, 0.001, 123457, 5)]


@pytest.mark.parametrize("eps, delta, n, p", RIVALS_SETTINGS)
def test_the_rivals_explorer_sigma_0_is_the_public_sigma_b(eps, delta, n, p):
    """The rivals explorer solves Theorem 3.4's sigma_0 for n, the rows search and the plot's grid in
    one vectorised root solve, and caches it (issue 30): every value it shows or draws is, bit for bit,
    what the public ``sigma_b`` gives for that one setting, and its rows for B at sigma_0 are the
    three-step search recomputed here from ``sigma_b``."""
    import numpy as np

    from dpmask.paper.bounds import sigma_b
    from dpmask.rivals import error_coefficients, example_moments
    from dpmask.widgets import _shared, rivals

    _shared._SIGMA0.clear()
    rivals._rows.cache_clear()
    rivals._curves.cache_clear()
    estimand, target = "corr", 0.01
    out = rivals.rivals_numbers(eps, delta, n, p, estimand, target)
    assert out["sigma_0"] == sigma_b(eps, delta, n, p)
    grid = np.round(np.logspace(3, 8, 16))
    s_grid = np.array([sigma_b(eps, delta, int(m), p) for m in grid])
    assert np.array_equal(s_grid, rivals._sigma0([(eps, delta, m, p) for m in grid]))
    # the plot's B0 curve (sigma_0 at the whole number nearest each n of the grid) and the panel's
    # RMSE from the public sigma_b and error coefficients
    b, c = error_coefficients(example_moments(p))[estimand]
    curve = np.sqrt((b * s_grid**2 + c * s_grid**4) / np.logspace(3, 8, 16))
    np.testing.assert_allclose(rivals._curves(eps, delta, p, estimand)["B0"], curve, rtol=1e-13, atol=0)
    s0 = sigma_b(eps, delta, n, p)
    assert out["rmse_B0"] == pytest.approx(np.sqrt((b * s0**2 + c * s0**4) / n), rel=1e-13)
    rows = 1e6
    for _ in range(3):
        s = sigma_b(eps, delta, min(max(round(rows), p + 2), 10**9), p)
        rows = (b * s**2 + c * s**4) / target**2
    assert out["rows_B0"] == pytest.approx(rows, rel=1e-13)


def test_the_rivals_figure_rows_are_the_public_sigma_b_search():
    """The figure's B0 rows, every eps of a panel solved in one root solve per step (issue 30), are
    the three-step search of each eps on its own with the public ``sigma_b``."""
    import numpy as np

    from dpmask.paper.bounds import sigma_b
    from dpmask.rivals import error_coefficients, example_moments
    from dpmask.widgets import _shared, rivals

    _shared._SIGMA0.clear()
    eps_values, delta, p, target = [0.2, 0.01, 0.00123], 1e-6, 4, 0.01
    got = rivals._rows_b0(eps_values, delta, p, "ols", target)
    b, c = error_coefficients(example_moments(p))["ols"]
    for eps, rows_got in zip(eps_values, got):
        rows = 1e6
        for _ in range(3):
            s = sigma_b(eps, delta, min(max(round(rows), p + 2), 10**9), p)
            assert _shared._SIGMA0[(eps, delta, float(min(max(round(rows), p + 2), 10**9)), p, False)][0] == s
            rows = (b * s**2 + c * s**4) / target**2
        assert rows_got == pytest.approx(rows, rel=1e-13)
    assert len(_shared._SIGMA0) <= 9 and np.all(np.isfinite(got))


# --------------------------------------------------------------------------- the shared sigma_0 solve

def _fresh_widget_caches():
    """Empty every cache between an explorer and Theorem 3.4's root, so that each value is solved here."""
    from dpmask.widgets import _shared, block, inference, noise

    _shared._SIGMA0.clear()
    _shared.analytic_sigma.cache_clear()
    for fn in (noise._curves, block._curve, inference._curves):
        fn.cache_clear()


def _panel_values(box):
    """The panel's cells by data-key, as shown."""
    import re

    return dict(re.findall(r"data-key='(\w+)'[^>]*>([^<]*)<", box.children[1].value))


NOISE_SETTINGS = [(0.1, 0.01, 100, 1), (1e-3, 1e-8, 10**6, 50), (0.99, 0.04, 12, 10), (0.0316, 1e-5, 3, 1)]


@pytest.mark.parametrize("eps, delta, n, p", NOISE_SETTINGS)
def test_the_noise_explorer_shows_the_public_bounds(eps, delta, n, p):
    """The noise explorer solves Theorem 3.4 for n and its plot's grid, both variants, in one root
    solve per variant and caches the roots (issue 30): its numbers are, bit for bit, the public
    functions' for that one setting, its curves those of ``sigma_b`` on the grid, and its panel
    shows them."""
    import numpy as np

    from dpmask.exact import analytic_gaussian_sigma
    from dpmask.paper.bounds import sigma_a_necessary, sigma_a_sufficient, sigma_b
    from dpmask.widgets import _shared, noise

    _fresh_widget_caches()
    want = {
        "a_necessary": sigma_a_necessary(eps, delta),
        "a_sufficient": sigma_a_sufficient(eps, delta),
        "b_sufficient": sigma_b(eps, delta, n, p),
        "b_corrected": sigma_b(eps, delta, n, p, corrected=True) if n > p + 1 else None,
        "a_exact": analytic_gaussian_sigma(eps, delta),
    }
    want["ratio"] = want["a_sufficient"] / want["b_sufficient"]
    noise._solve_ahead(eps, delta, n, p)  # the explorer's path: the grid solved with n
    assert noise.noise_numbers(eps, delta, n, p) == want
    grid, b, b_cor, a_suf, a_nec, a_ex = noise._curves(eps, delta, p)
    assert np.array_equal(b, sigma_b(eps, delta, grid, p))
    assert np.array_equal(b_cor, sigma_b(eps, delta, grid, p, corrected=True))
    for m in grid[[0, len(grid) // 2, -1]]:   # and each point as a setting alone
        assert b[grid == m][0] == sigma_b(eps, delta, int(m), p)
    assert (a_suf, a_nec, a_ex) == (want["a_sufficient"], want["a_necessary"], want["a_exact"])
    _fresh_widget_caches()
    box = noise.noise_explorer(eps, delta, max(n, 10), p)
    shown = _panel_values(box)
    if n >= 10:
        assert shown == {k: _shared.fmt(v) for k, v in want.items()}


BLOCK_SETTINGS = [(0.1, 1e-3, 10, 1000), (1e-3, 1e-9, 50, 60), (1.0, 0.04, 1, 333333), (0.0316, 1e-5, 7, 10**6)]


@pytest.mark.parametrize("eps, delta, p, block_", BLOCK_SETTINGS)
def test_the_block_explorer_shows_the_public_bounds(eps, delta, p, block_):
    """The block explorer solves Theorem 3.4 for n, the smallest block and its plot's grid in one
    root solve (issue 30): its numbers are the public ``sigma_b`` and ``sigma_b_block`` on the
    balanced chunks, bit for bit, and its curve is ``sigma_b`` on the grid over ``sigma_b`` at n."""
    import numpy as np

    from dpmask.paper.bounds import sigma_b, sigma_b_block
    from dpmask.scale import balanced_chunks
    from dpmask.widgets import _shared, block

    n = 10**6
    _fresh_widget_caches()
    sizes = balanced_chunks(n, block_)
    full, blk = sigma_b(eps, delta, n, p), sigma_b_block(eps, delta, sizes, p)
    box = block.block_explorer(eps, delta, n, p, block_)
    got = block.block_numbers(eps, delta, n, p, block_)
    assert (got["blocks"], got["smallest"]) == (len(sizes), min(sizes))
    assert (got["sigma_full"], got["sigma_block"], got["price"]) == (full, blk, blk / full)
    grid, ratio = block._curve(eps, delta, n, p)
    assert np.array_equal(ratio, sigma_b(eps, delta, grid, p) / full)
    for m in grid[[0, len(grid) // 2, -1]]:
        assert ratio[grid == m][0] == sigma_b(eps, delta, int(m), p) / full
    shown = _panel_values(box)
    assert shown["sigma_full"] == _shared.fmt(full) and shown["sigma_block"] == _shared.fmt(blk)


INFERENCE_SETTINGS = [(0.1, 1e-3, 10**6), (1e-3, 1e-8, 1000), (1.0, 0.1, 10**10), (0.0316, 1e-5, 123457)]


@pytest.mark.parametrize("eps, delta, n", INFERENCE_SETTINGS)
def test_the_inference_explorer_shows_the_public_sigmas(eps, delta, n):
    """The inference explorer solves Theorem 3.4 (p = 2) for n, 10^9 and its plot's grid in one root
    solve (issue 30): its sigma_0 and the errors and rows built on it are those of the public
    ``sigma_b``, ``analytic_gaussian_sigma`` and ``ols_from_gram`` (Proposition 6.3 at E[G])."""
    import numpy as np

    from dpmask.exact import analytic_gaussian_sigma
    from dpmask.inference import ols_from_gram
    from dpmask.paper.bounds import sigma_b
    from dpmask.widgets import inference

    def rmse(s, m):
        G = m * np.array([[1 / 3, 1 / 6], [1 / 6, 1 / 6]]) + m * s**2 * np.eye(2)
        return ols_from_gram(G, m, 1, s, conditional=True).se[0]

    _fresh_widget_caches()
    s_a, s_b, s_big = analytic_gaussian_sigma(eps, delta), sigma_b(eps, delta, n, 2), sigma_b(eps, delta, 10**9, 2)
    box = inference.inference_explorer(eps, delta, n)
    got = inference.inference_numbers(eps, delta, n)
    assert (got["sigma_a"], got["sigma_b"]) == (s_a, s_b)
    assert (got["rmse_a"], got["rmse_b"]) == (rmse(s_a, n), rmse(s_b, n))
    assert got["rows_b"] == 10**9 * (rmse(s_big, 10**9) / 0.05) ** 2
    assert got["rows_a"] == 10**9 * (rmse(s_a, 10**9) / 0.05) ** 2
    curve_a, curve_b = inference._curves(eps, delta)
    s_grid = sigma_b(eps, delta, inference._GRID.astype(int), 2)
    assert np.array_equal(curve_b, [rmse(s, int(m)) for s, m in zip(s_grid, inference._GRID)])
    assert np.array_equal(curve_a, [rmse(s_a, int(m)) for m in inference._GRID])
    assert "sigma_b" in _panel_values(box)


def test_the_shared_sigma_0_cache_is_bounded_and_keeps_the_errstate(monkeypatch):
    """The cache keeps its SIGMA0_MAX most recent settings, and a value solved while numpy ignored
    floating-point errors is solved again for a caller that makes them raise (inference_numbers)."""
    import numpy as np

    from dpmask.paper.bounds import sigma_b
    from dpmask.widgets import _shared

    _shared._SIGMA0.clear()
    monkeypatch.setattr(_shared, "SIGMA0_MAX", 5)
    _shared.sigma0([(0.1, 0.01, m, 2, False) for m in range(100, 108)])
    assert list(_shared._SIGMA0) == [(0.1, 0.01, float(m), 2, False) for m in range(103, 108)]
    _shared.sigma0([(0.1, 0.01, 104, 2, False), (0.1, 0.01, 104, 2, True)])   # a hit moves to the end
    assert list(_shared._SIGMA0)[-2:] == [(0.1, 0.01, 104.0, 2, False), (0.1, 0.01, 104.0, 2, True)]
    assert _shared._SIGMA0[(0.1, 0.01, 104.0, 2, True)][0] == sigma_b(0.1, 0.01, 104, 2, corrected=True)
    key_ = (0.1, 0.01, 500.0, 2, False)
    _shared._SIGMA0[key_] = (123.0, False)   # planted: as if solved with errors ignored
    assert _shared.sigma0([key_]) == [123.0]
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        assert _shared.sigma0([key_]) == [sigma_b(0.1, 0.01, 500, 2)]
    assert _shared._SIGMA0[key_] == (sigma_b(0.1, 0.01, 500, 2), True)
    _shared._SIGMA0.clear()
