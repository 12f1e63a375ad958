"""Figures for every reader: alternative text, and series that read without colour.

A reader with deuteranopia (about one man in twenty has a red-green deficiency) or a student with
a greyscale printout must tell every series of a figure apart.  ``dpmask._style`` holds the one
palette (Okabe-Ito) and the check, :func:`dpmask._style.indistinct_series`: two series of one
axes pass when their line styles or markers differ, or when their colours stay at least
``MIN_DELTA_E`` = 10 apart (CIEDE2000) both after the deuteranopia simulation of Machado et al.
(2009, full severity) and in greyscale.  Here:

- the simulation and the colour difference are checked against independent truth: the
  ``colorspacious`` package's CVD simulation and CIELAB conversion, and the CIEDE2000 test pairs
  published by Sharma, Wu and Dalal (2005);
- the palette keeps every pair of its colours apart under deuteranopia (matplotlib's old default,
  'tab10', does not: the check can fail);
- a planted figure with two red lines of the same style fails the check and ``show_figure``
  refuses it, as it refuses a figure without alternative text or with its label for one;
- every explorer's static companion figure (``widgets.*_figure``) and every live plot
  (``LivePlot`` of each explorer, after its first render) passes;
- every chapter figure passes too: ``show_figure`` runs the check on every figure it shows, so
  nbval and the book build fail on a figure that does not read without colour; the sources are
  checked here for alternative text on every ``show_figure`` call.
"""

from __future__ import annotations

import ast
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from dpmask import _style, book

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def _rgb(colours):
    from matplotlib.colors import to_rgb

    return np.array([to_rgb(c) for c in colours])


# --- the colour science, against independent truth ------------------------------------------------


def test_deuteranopia_simulation_matches_colorspacious():
    cs = pytest.importorskip("colorspacious")
    rng = np.random.default_rng(24)
    rgb = np.vstack([_rgb(_style.PALETTE), rng.uniform(0, 1, size=(200, 3))])
    truth = cs.cspace_convert(rgb, {"name": "sRGB1+CVD", "cvd_type": "deuteranomaly", "severity": 100}, "sRGB1")
    assert np.allclose(_style.deuteranopia(rgb), np.clip(truth, 0, 1), atol=1e-6)
    lab = cs.cspace_convert(rgb, "sRGB1", "CIELab")
    assert np.allclose(_style.srgb_to_lab(rgb), lab, atol=0.05)  # the matrices' rounding: 0.05 of 100 in L*


@pytest.mark.parametrize("lab1, lab2, expected", [
    # Sharma, Wu, Dalal (2005), Table 1: pairs 1, 7, 17, 25 and 34
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((22.7233, 20.0904, -46.6940), (23.0331, 14.9730, -42.5619), 2.0373),
])
def test_ciede2000_matches_the_published_test_pairs(lab1, lab2, expected):
    assert float(_style.delta_e_2000(lab1, lab2)) == pytest.approx(expected, abs=1e-4)
    assert float(_style.delta_e_2000(lab2, lab1)) == pytest.approx(expected, abs=1e-4)


def _min_deutan_distance(colours):
    lab = _style.srgb_to_lab(_style.deuteranopia(_rgb(colours)))
    return min(float(_style.delta_e_2000(lab[i], lab[j])) for i, j in itertools.combinations(range(len(colours)), 2))


def test_the_palette_stays_apart_for_a_reader_with_deuteranopia():
    assert len(set(_style.PALETTE)) == len(_style.PALETTE) == 8
    assert _min_deutan_distance(_style.PALETTE) >= _style.MIN_DELTA_E  # 11.6 (orange against yellow)
    # matplotlib's former default palette does not: its green and red nearly merge
    tab10 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
    assert _min_deutan_distance(tab10) < _style.MIN_DELTA_E


def test_the_book_draws_with_the_palette():
    from matplotlib import rcParams

    assert rcParams["axes.prop_cycle"].by_key()["color"] == [c for c in _style.PALETTE]  # dpmask.book set it


# --- the check can fail ---------------------------------------------------------------------------


def _figure(*styles):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    x = np.linspace(0, 1, 20)
    for k, kw in enumerate(styles):
        ax.plot(x, x * (k + 1), label=f"series {k}", **kw)
    return fig


def test_a_planted_two_reds_figure_fails():
    two_reds = _figure({"color": "#d62728"}, {"color": "#e8000b"})
    problems = _style.indistinct_series(two_reds)
    assert len(problems) == 1 and "'series 0' and 'series 1'" in problems[0]
    with pytest.raises(ValueError, match="does not read without colour"):
        book.show_figure(two_reds, "fig-two-reds", "Two reds.", alt="Two red lines rising from the origin.")
    # red against green, the same style: far apart to a normal eye, nearly one colour under deuteranopia
    assert _style.indistinct_series(_figure({"color": "#d62728"}, {"color": "#2ca02c"}))
    # the same two reds with their own line styles, or markers, read fine; so do colours far apart in both
    assert not _style.indistinct_series(_figure({"color": "#d62728"}, {"color": "#e8000b", "ls": "--"}))
    assert not _style.indistinct_series(_figure({"color": "#d62728", "marker": "o"}, {"color": "#e8000b"}))
    assert not _style.indistinct_series(_figure({"color": _style.color(0)}, {"color": "#000000"}))
    # dash patterns given as tuples are told apart by the pattern, not by the name "--" they read back as
    assert _style.indistinct_series(_figure({"color": "k", "ls": (0, (4, 2))}, {"color": "k", "ls": (0, (4, 2))}))
    assert not _style.indistinct_series(_figure({"color": "k", "ls": (0, (4, 2))}, {"color": "k", "ls": (0, (9, 3))}))


def test_show_figure_refuses_a_figure_without_real_alt_text(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    good = "A line chart of one series rising from left to right."
    for alt in (None, "", "   ", "fig-demo", "demo", "figure.png", "fig-demo.png", "A chart"):
        with pytest.raises(ValueError, match="alt"):
            book.show_figure(_figure({"color": "k"}), "fig-demo", "A demo.", alt=alt)
    assert not shown
    book.show_figure(_figure({"color": "k"}), "fig-demo", "A demo.", alt=good)
    assert f"\n:alt: {good}\n" in shown[0].data


# --- the explorers: static companions and live plots ------------------------------------------------

FIGURES = ["noise_figure", "gq_figure", "block_figure", "inference_figure", "rivals_figure", "tightness_figure"]


def test_every_static_companion_is_listed():
    from dpmask import widgets

    assert sorted(n for n in widgets.__all__ if n.endswith("_figure")) == sorted(FIGURES)


@pytest.mark.heavy  # the six figures take 30 s together (tightness and rivals 10 s each)
@pytest.mark.parametrize("name", FIGURES)
def test_every_static_companion_reads_without_colour(name):
    from dpmask import widgets

    fig = getattr(widgets, name)()
    fig.canvas.draw()
    series = _style.figure_series(fig)
    assert sum(len(s) for s in series) >= 2, name
    assert not _style.indistinct_series(fig), name
    # no colour outside the palette but for black and greys
    for s in itertools.chain.from_iterable(series):
        rgb = np.array(s["color"])
        assert (np.ptp(rgb) < 0.02) or any(np.allclose(rgb, c, atol=1e-3) for c in _rgb(_style.PALETTE)), (name, s)


EXPLORERS = ["noise_explorer", "gq_explorer", "block_explorer", "inference_explorer", "rivals_explorer",
             "tightness_explorer"]


@pytest.mark.heavy  # builds the six explorers (the tightness explorer starts its worker)
def test_every_live_plot_reads_without_colour(monkeypatch):
    pytest.importorskip("ipywidgets")
    from dpmask import widgets
    from dpmask.widgets import _shared

    drawn = []
    png = _shared.LivePlot.png

    def recording(self, *args, **kwargs):
        drawn.append(self)
        return png(self, *args, **kwargs)

    monkeypatch.setattr(_shared.LivePlot, "png", recording)
    assert sorted(n for n in widgets.__all__ if n.endswith("_explorer")) == sorted(EXPLORERS)
    for name in EXPLORERS:
        before = len(drawn)
        box = getattr(widgets, name)()
        assert len(drawn) > before, f"{name} drew no live plot"
        plot = drawn[-1]
        assert sum(len(s) for s in _style.figure_series(plot.fig)) >= 2, name
        assert not _style.indistinct_series(plot.fig), name
        close = getattr(box, "close_all", None) or getattr(box, "close", None)
        if close is not None:
            close()


# --- the chapters -------------------------------------------------------------------------------------


def _show_figure_calls():
    for path in CHAPTERS:
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            src = "".join(cell["source"])
            if "show_figure(" not in src:
                continue
            tree = ast.parse("\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("%", "!"))))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "show_figure":
                    yield path.name, node


def test_every_chapter_figure_has_alt_text_that_says_what_it_shows():
    calls = list(_show_figure_calls())
    assert len(calls) >= 20
    names = set()
    for chapter, node in calls:
        name = ast.literal_eval(node.args[1])
        names.add(name)
        kw = {k.arg: k.value for k in node.keywords}
        assert "alt" in kw, f"{chapter}: show_figure({name!r}) has no alt"
        alt = book.check_alt(ast.literal_eval(kw["alt"]), name)
        assert len(alt.split()) >= 20, f"{chapter}: {name}: the alt text says too little: {alt!r}"
        caption = ast.literal_eval(kw["caption"]) if "caption" in kw else ast.literal_eval(node.args[2])
        assert " ".join(caption.split()) != alt, f"{chapter}: {name}: the alt text repeats the caption"
    assert len(names) == len(calls), "two show_figure calls share a label"


def test_every_other_chapter_image_has_alt_text():
    """A figure shown with plt.show() (not show_figure) carries its alt text in the cell's mystnb metadata."""
    found = 0
    for path in CHAPTERS:
        for cell in json.loads(path.read_text())["cells"]:
            src = "".join(cell["source"]) if cell["cell_type"] == "code" else ""
            if "plt.show()" in src or "display(fig" in src:
                found += 1
                alt = cell["metadata"].get("mystnb", {}).get("image", {}).get("alt")
                assert alt and len(alt.split()) >= 10, f"{path.name}: a cell shows a figure without alt text"
    assert found >= 1
