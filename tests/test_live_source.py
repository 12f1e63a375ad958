"""The chapters' sources render in both places a reader meets them: the HTML book and JupyterLab.

JupyterLab (with jupyterlab-myst, as Binder builds it from environment.yml) shows a myst-nb
``{glue:...}`` role as its raw text and never shows a glued figure.  So the chapters write every
number as ``{eval}`f"{glued.KEY:SPEC}"``` (evaluated by jupyterlab-myst in the kernel, read from
the glued value by the book's ``_ext/live_numbers.py``) and every figure as a cell output
(:func:`dpmask.book.show_figure`).  These checks keep it so, on the sources alone; the drive of a
real JupyterLab is tests/test_live.py (marker ``live``).
"""

from __future__ import annotations

import ast
import json
import re
import sys
import types
from pathlib import Path

import pytest

from dpmask import book

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
EVAL_ROLE = re.compile(r"\{eval\}`([^`]*)`")


def _cells(path, kind):
    nb = json.loads(path.read_text())
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == kind:
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            yield i, cell, src


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_prose_uses_no_glue_role(path):
    # {glue:text}, {glue:figure}, {glue:md}, {glue} all show as raw text in JupyterLab.
    bad = [(i, m) for i, _, src in _cells(path, "markdown") for m in re.findall(r"\{glue(?::\w+)?\}`[^`]*`|\{glue(?::\w+)?\}", src)]
    assert not bad, f"{path.name}: myst-nb glue roles JupyterLab cannot render: {bad[:5]}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_eval_has_the_one_form_both_renderers_read(path):
    bad = []
    for i, _, src in _cells(path, "markdown"):
        bad += [(i, e) for e in EVAL_ROLE.findall(src) if not book.EVAL_PATTERN.match(e)]
    for i, _, src in _cells(path, "code"):  # captions of show_figure
        bad += [(i, e) for e in EVAL_ROLE.findall(src) if not book.EVAL_PATTERN.match(e)]
    assert not bad, f"{path.name}: {bad[:5]}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_code_never_rebinds_glued(path):
    # The prose reads glued.KEY; a chapter variable called `glued` would shadow the namespace in
    # JupyterLab (the book would still be right, so only this check sees it).
    for i, _, src in _cells(path, "code"):
        tree = ast.parse("\n".join(l for l in src.splitlines() if not l.lstrip().startswith(("%", "!"))))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == "glued" and isinstance(node.ctx, (ast.Store, ast.Del)):
                pytest.fail(f"{path.name} cell {i} assigns to `glued`")
            if isinstance(node, ast.arg) and node.arg == "glued":
                pytest.fail(f"{path.name} cell {i} uses `glued` as a parameter")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_stored_inline_results(path):
    # jupyterlab-myst stores the evaluated expressions in the cell metadata when a notebook is
    # saved; committed notebooks carry no outputs, so none of those either.
    stored = [i for i, cell, _ in _cells(path, "markdown") if cell.get("metadata", {}).get("user_expressions")]
    assert not stored, f"{path.name}: cells {stored} carry saved user_expressions (clear them before committing)"


# --- dpmask.book ------------------------------------------------------------------------------


def test_eval_pattern_accepts_the_one_form_and_nothing_else():
    ok = ['f"{glued.x}"', 'f"{glued.n_rows:,d}"', 'f"{glued.a1:.3e}"', 'f"{glued._k:>8.2f}"']
    bad = ['glued.x', 'f"{v.x}"', 'f"{glued.x:.2f} rows"', 'f"{glued.x + 1}"', 'f"{glued[x]}"',
           "f'{glued.x}'", 'f"{glued.x}{glued.y}"', 'f"{glued.x!r}"', 'str(glued.x)']
    assert all(book.EVAL_PATTERN.match(s) for s in ok)
    assert not any(book.EVAL_PATTERN.match(s) for s in bad)


def test_fill_evals_formats_like_an_f_string():
    ns = types.SimpleNamespace(a=1234.5678, n=20190, s="B at $\\sigma_0$", tiny=2.5e-300)
    text = (r'x {eval}`f"{glued.a:,.2f}"` n {eval}`f"{glued.n:,d}"` s {eval}`f"{glued.s}"` '
            r't {eval}`f"{glued.tiny:.1e}"` raw {eval}`f"{glued.a}"`')
    want = f"x {ns.a:,.2f} n {ns.n:,d} s {ns.s} t {ns.tiny:.1e} raw {ns.a}"
    assert book.fill_evals(text, ns) == want
    with pytest.raises(KeyError, match="missing"):
        book.fill_evals(r'{eval}`f"{glued.missing}"`', ns)
    with pytest.raises(ValueError, match="one form"):
        book.fill_evals(r'{eval}`f"{glued.a + 1}"`', ns)


def test_the_book_reads_a_glued_value_as_the_kernel_formats_it():
    # The book's role formats literal_eval(text/plain) with the spec; the kernel formats the value.
    # text/plain of a glued number is its repr, which round-trips exactly.
    import random

    rng = random.Random(5)
    specs = ["", ".1f", ".3f", ".4f", ".1e", ".0e", ",.0f", ",d", "d", ",", ".2%", ".10f"]
    for _ in range(500):
        x = rng.choice([rng.uniform(-1e6, 1e6), 10 ** rng.uniform(-300, 300), rng.randint(-10**9, 10**9)])
        for spec in specs:
            if spec.endswith("d") and isinstance(x, float):
                continue
            assert book.format_glued(ast.literal_eval(repr(x)), spec) == format(x, spec)


def test_glue_refuses_what_the_prose_could_not_read(monkeypatch):
    calls = []
    monkeypatch.setitem(sys.modules, "myst_nb", types.SimpleNamespace(glue=lambda *a, **k: calls.append((a, k))))
    import numpy as np

    book.glue_num("x_test", np.float64(0.25))
    assert book.glued.x_test == 0.25 and type(book.glued.x_test) is float   # numpy scalar made plain
    assert calls[-1][0] == ("x_test", 0.25) and calls[-1][1] == {"display": False}
    for key in ("fig-x", "1x", "a b", 3, ""):
        with pytest.raises(ValueError, match="identifier"):
            book.glue(key, 1.0)
    with pytest.raises(TypeError, match="display"):
        book.glue("x_test", 1.0, display="no")


def test_show_figure_emits_one_myst_figure_with_the_caption_filled_in(monkeypatch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = []
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    book.glued.cap_test = 0.125
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, 1], [1, 0])
    book.show_figure(fig, "fig-test", r'Line with slope $-1$ at {eval}`f"{glued.cap_test:.2f}"`. More.',
                     alt="A straight line falling with slope minus one.")
    assert len(shown) == 1
    md = shown[0].data
    assert md.startswith(":::{figure} data:image/png;base64,iVBOR")   # a PNG, inline
    assert "\n:name: fig-test\n" in md
    assert "\n:alt: A straight line falling with slope minus one.\n" in md
    assert md.rstrip().endswith("Line with slope $-1$ at 0.12. More.\n:::")
    assert not plt.fignum_exists(fig.number)                           # closed: shown once
    with pytest.raises(ValueError, match="label"):
        book.show_figure(plt.figure(), "fig x", "caption", alt="An empty figure with no axes.")
