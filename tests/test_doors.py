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
