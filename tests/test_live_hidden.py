"""In JupyterLab, what the book hides takes a click to read: checked on the screen, before any run.

A student opens a chapter in JupyterLab (Binder opens it so: stored, not yet run).  The book
removes its checks (``remove-cell``: the ``assert`` cells), hides its plotting code
(``hide-input``) and puts each solution in a closed dropdown; JupyterLab ignores those tags and
shows a cell's source unless the cell's metadata collapses it (``_ext/cell_visibility.py`` writes
that metadata; tests/test_cell_visibility.py holds it to the tags without a browser).  This test
opens chapters in real JupyterLab (default settings, so its default windowing) in Debian's
Chromium and reads the screen:

- no source of a cell the book removes or hides, and no source of a solution's cell (code, or
  markdown that is solution text only), is rendered: each shows JupyterLab's collapsed bar,
  which opens with a click; and JupyterLab holds those cells' outputs collapsed where the rule
  says so (a solution's printed results, a check's output).  The bar shows the cell's first
  line, greyed: a check's first line is readable so (as the book's "Show code cell source"
  toggle names what it hides), but a solution's cells start with a line that names the exercise
  and nothing more ("# Solution to Exercise 4.1"), so the bar gives no answer away;
- every other cell's source is readable (the check can tell the two apart);
- planted: 7a with the ``jupyter`` metadata stripped (as before issue 22) shows its hidden
  cells, and 7a without its solution's first lines shows the solution in the bars; the test's
  reader says so.

Marked ``live`` (``make test-slow``): it starts JupyterLab.  The chapters are opened, not run.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest

from _lab import jupyter_lab
from test_cell_visibility import _expected, _in_solution

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[1]
# A solution with code cells and solution-only markdown (7a), one whose hidden check follows its
# code (4), and the chapter with the most hidden plotting cells (9).
OPENED = ["04_discussion", "07a_exact_p2", "09_rivals"]



@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on 127.0.0.1 with its default settings, serving a copy of chapters/ (and a planted copy)."""
    root = tmp_path_factory.mktemp("live-hidden")
    shutil.copytree(ROOT / "chapters", root / "chapters")
    # planted copies of 7a: as stored before issue 22 (no `jupyter` metadata), and collapsed but
    # with its solution's cells starting with the solution itself
    nb = json.loads((ROOT / "chapters" / "07a_exact_p2.ipynb").read_text())
    bare = json.loads(json.dumps(nb))
    for cell in bare["cells"]:
        cell["metadata"].pop("jupyter", None)
    (root / "chapters" / "planted_07a.ipynb").write_text(json.dumps(bare, indent=1))
    for cell in nb["cells"]:
        src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if re.match(r"[#%] Solution to Exercise \S+\n", src):
            cell["source"] = src.split("\n", 1)[1]
    (root / "chapters" / "planted_07a_unlabelled.ipynb").write_text(json.dumps(nb, indent=1))
    with jupyter_lab(root) as url:
        yield url, root


# One cell of the open notebook, scrolled into view: what a reader sees of its source and outputs.
# A node is rendered when it and its ancestors are displayed (checkVisibility); an editor or a
# rendered markdown view that JupyterLab detached for a collapsed cell is not in the page at all.
_SCROLL = "i => window.jupyterapp.shell.currentWidget.content.widgets[i].node.scrollIntoView({block: 'center'})"
_DRAWN = """i => !!window.jupyterapp.shell.currentWidget.content.widgets[i].node
  .querySelector('.jp-InputArea .cm-content, .jp-InputPlaceholder, .jp-InputArea .jp-RenderedHTMLCommon, .jp-InputArea .jp-MarkdownOutput')"""
_SCREEN = """i => {
  const seen = el => el.isConnected && el.checkVisibility({visibilityProperty: true, opacityProperty: true});
  const cell = window.jupyterapp.shell.currentWidget.content.widgets[i];
  const node = cell.node;
  const source = [...node.querySelectorAll('.jp-InputArea .cm-content, .jp-InputArea .jp-RenderedMarkdown, .jp-InputArea .jp-MarkdownOutput')]
    .filter(seen).map(e => e.innerText).join('\\n');
  const outputs = [...node.querySelectorAll('.jp-OutputArea-output')].filter(seen).map(e => e.innerText).join('\\n');
  const bars = [...node.querySelectorAll('.jp-InputPlaceholder')];
  const bar = bars.some(seen);
  const barText = bars.filter(seen).map(e => e.innerText).join('\\n');
  return {i, type: cell.model.type, source, outputs, bar, barText,
          inputHidden: cell.inputHidden, outputHidden: cell.outputHidden === undefined ? null : cell.outputHidden};
}"""


def _open(page, url, name):
    page.goto(f"{url}/lab/workspaces/{name}/tree/chapters/{name}.ipynb?reset", timeout=120_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    n = len(json.loads((ROOT / "chapters" / ("07a_exact_p2" if name.startswith("planted") else name)).with_suffix(".ipynb").read_text())["cells"])
    deadline = time.time() + 120
    while time.time() < deadline:
        if page.locator(".jp-Dialog").count():  # "select a kernel": accept; nothing is run
            page.locator(".jp-Dialog .jp-mod-accept").first.click()
        ready = page.evaluate(
            "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
            " return !!(w && w.content && w.content.widgets && w.context && w.context.isReady) ? w.content.widgets.length : 0; }")
        if ready == n:
            break
        page.wait_for_timeout(500)
    else:
        pytest.fail(f"{name}: JupyterLab did not open the notebook's {n} cells")
    page.wait_for_timeout(2000)  # let the markdown render (jupyterlab-myst)
    screen = []
    for i in range(n):  # JupyterLab draws a cell (editor or collapsed bar) once it comes into view
        page.evaluate(_SCROLL, i)
        try:
            page.wait_for_function(_DRAWN, arg=i, timeout=30_000)
        except Exception:  # noqa: BLE001 - read what is there; the assertions say what is missing
            pass
        page.wait_for_timeout(100)
        screen.append(page.evaluate(_SCREEN, i))
    return screen


def _first_line(src):
    return next((line.strip() for line in src.splitlines() if line.strip()), "")


def readable_hidden_cells(nb, screen):
    """The cells that should take a click to read but are readable on *screen*.

    A collapsed cell shows JupyterLab's bar, which holds the cell's first line (greyed, beside the
    "..." to click): for a check or plotting cell that line is all one reads; for a solution's
    cell it must be the line that names the exercise (``_ext/cell_visibility.py`` writes it), and
    nothing of the solution itself.
    """
    out = []
    for cell, want, sol, shown in zip(nb["cells"], _expected(nb), _in_solution(nb), screen):
        src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        where = f"cell {shown['i']} ({cell['cell_type']}, {_first_line(src)[:50]!r})"
        if want[0] and (shown["source"].strip() or not shown["bar"] or not shown["inputHidden"]):
            out.append(f"{where} is readable")
        elif sol is not None and not re.fullmatch(r"[#%] Solution to Exercise \S+", shown["barText"].strip()):
            out.append(f"{where}: its collapsed bar shows {shown['barText'][:60]!r}")
        if want[1] and shown["type"] == "code" and (shown["outputHidden"] is not True or shown["outputs"].strip()):
            out.append(f"{where}: its outputs are not collapsed")
    return out


@pytest.mark.parametrize("name", OPENED)
def test_hidden_and_solution_cells_take_a_click_in_jupyterlab(name, lab, browser):
    url, _ = lab
    nb = json.loads((ROOT / "chapters" / f"{name}.ipynb").read_text())
    context = browser.new_context(viewport={"width": 1300, "height": 1600})
    page = context.new_page()
    try:
        screen = _open(page, url, name)
    finally:
        context.close()
    assert len(screen) == len(nb["cells"])
    expected = _expected(nb)
    assert sum(w[0] for w in expected) >= 10 and any(t == "code" for t, w in zip((c["cell_type"] for c in nb["cells"]), expected) if w == (True, True))
    problems = readable_hidden_cells(nb, screen)
    assert not problems, problems
    # The reader can tell: every code cell not hidden shows its first line of source.
    for cell, want, shown in zip(nb["cells"], expected, screen):
        if cell["cell_type"] == "code" and not want[0]:
            line = _first_line("".join(cell["source"]))
            assert line and line[:20] in shown["source"], (shown["i"], line, shown["source"][:200])


def test_the_reader_sees_hidden_cells_shown_before_issue_22(lab, browser):
    url, _ = lab
    nb = json.loads((ROOT / "chapters" / "07a_exact_p2.ipynb").read_text())
    context = browser.new_context(viewport={"width": 1300, "height": 1600})
    page = context.new_page()
    try:
        screen = _open(page, url, "planted_07a")
    finally:
        context.close()
    problems = readable_hidden_cells(nb, screen)
    n_hidden = sum(w[0] for w in _expected(nb))
    assert len([p for p in problems if "is readable" in p]) == n_hidden, problems
    context = browser.new_context(viewport={"width": 1300, "height": 1600})
    page = context.new_page()
    try:
        screen = _open(page, url, "planted_07a_unlabelled")
    finally:
        context.close()
    problems = readable_hidden_cells(nb, screen)
    n_solution = sum(s is not None for s in _in_solution(nb))
    assert len(problems) == n_solution and all("collapsed bar shows" in p for p in problems), problems
    assert any("import math" in p for p in problems)
