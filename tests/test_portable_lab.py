"""The portable notebooks (issue 29) read as the book in a JupyterLab with no extension of ours.

A university hub's JupyterLab has neither jupyterlab-myst nor the book's ``dpmask-live``: it
renders markdown as CommonMark through its own sanitiser and typesets math with its MathJax 3.
This test serves the portable notebooks (``_build/portable/{full,students}/chapters``) with a
JupyterLab whose page config disables both extensions (a temporary ``JUPYTER_CONFIG_DIR`` holding
``labconfig/page_config.json``), opens each in Debian's Chromium through Playwright (offline,
127.0.0.1 only), waits until every markdown cell is rendered, MathJax has typeset and every
image has loaded, and reads the notebook's DOM.  What the screen shows is then held to the same
checks as nbconvert's export in tests/test_portable.py (:func:`test_portable.screen_problems`
applied to JupyterLab's cells instead of nbconvert's: no raw role, directive, fence or bib key;
the book's numbers in order; the book's statement headings; every figure an ``<img>`` with alt
text and the book's number; no solution in the student edition), plus what only a live viewer
shows (:func:`lab_problems`):

- MathJax typesets without error (no ``mjx-merror``, no "Math input error") and no TeX is left
  as text outside the typeset math;
- every image has loaded (a broken ``data:`` URI would show only its alt text);
- every code cell the book hides (tags ``hide-input``, ``remove-cell``, ...) is drawn as
  JupyterLab's collapsed-input placeholder (the install cell, which the book has not, is shown);
- every link to an anchor of the notebook (``#lem-3-1``) finds its target (JupyterLab keeps an
  ``id`` as ``data-jupyter-id`` and scrolls to it).

That the extensions are really off is checked in the browser, not assumed: the page config lists
them as disabled, the application has no plugin of either, and a planted cell with a ``{note}``
directive and an ``{eval}`` role stays raw text (jupyterlab-myst would draw an admonition and
dpmask-live a number).  The planted-slip tests feed the same JupyterLab the mini notebook of
tests/test_portable.py with one slip each and need no build.

JupyterLab runs with ``windowingMode: none`` (every cell drawn, as after a reader scrolls
through) and ``notebookStartsKernel: false`` (reading needs no kernel; the runs are
tests/test_portable.py's fresh-environment test).
"""

from __future__ import annotations

import base64
import copy
import json
import os
import re
import shutil
import struct
import sys
import time
import zlib
from pathlib import Path

import pytest

import test_portable as tp
from _lab import jupyter_lab

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = tp.CHAPTERS
OURS = ("jupyterlab-myst", "dpmask-live")
# The tags by which the book hides a code cell's source (myst-nb's meaning of them).
HIDDEN_TAGS = {"hide-input", "hide-cell", "remove-input", "remove-cell"}
# TeX shown as text: a control word or a dollar sign outside the typeset math, code and pre.
RAW_TEX = re.compile(r"\\[A-Za-z]{2,}|\$")
# Every notebook of both editions is read: all 26 took 560 s on the loaded 2-core machine (load 7;
# 8 to 53 s each, the 13 full-edition ones 240 s), in `make test-slow`'s first lane.  While
# editing, DPMASK_LAB_STUDENTS=sample reads, of the student edition, a sample with every kind of
# block (03), the most solutions and a solution that starts with code (04, five solutions cut)
# and three cut exercises' solutions (08).
STUDENT_SAMPLE = ("03_main_results", "04_discussion", "08_scale")
STUDENTS = list(STUDENT_SAMPLE) if os.environ.get("DPMASK_LAB_STUDENTS") == "sample" else CHAPTERS
# What JupyterLab 4 writes as alt text for a markdown image that has none (``![](...)``).
JUPYTERLAB_DEFAULT_ALT = "Image"
SETTLE_S = 1.5  # the rendering counts must hold this long before the page is read
TIMEOUT_S = 120


# --- JupyterLab without the extensions --------------------------------------------------------


@pytest.fixture(scope="module")
def plain_lab(tmp_path_factory):
    """JupyterLab serving a folder of notebooks, jupyterlab-myst and dpmask-live disabled; the
    folder's planted notebooks are written by the tests that need them (the server reads files
    when they are opened)."""
    root = tmp_path_factory.mktemp("plain_lab")
    config = tmp_path_factory.mktemp("plain_lab_config")
    (config / "labconfig").mkdir()
    (config / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {name: True for name in OURS}, "notebookStartsKernel": False}))
    settings = {("@jupyterlab/notebook-extension", "tracker"): {"windowingMode": "none"}}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_CONFIG_DIR", str(config))
        with jupyter_lab(root, settings) as url:
            mp.undo()
            yield url, root


@pytest.fixture(scope="module")
def lab_page(plain_lab, browser):
    """One JupyterLab page; each notebook is opened in it (after closing the one before)."""
    url, root = plain_lab
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{url}/lab/workspaces/plain?reset", timeout=TIMEOUT_S * 1000)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell && window.jupyterapp.started !== undefined",
                           timeout=TIMEOUT_S * 1000)
    page.evaluate("() => window.jupyterapp.started")
    yield page, root
    page.close()


def extensions_state(page) -> dict:
    """What the browser says of our extensions: the page config's disabled list and the plugins."""
    return page.evaluate("""names => {
      const config = JSON.parse(document.getElementById('jupyter-config-data').textContent);
      const plugins = window.jupyterapp.listPlugins();
      return {disabled: config.disabledExtensions || [],
              ours: plugins.filter(id => names.some(n => id === n || id.startsWith(n + ':'))),
              notebook: plugins.includes('@jupyterlab/notebook-extension:tracker')};
    }""", list(OURS))


OPEN = """async rel => {
  const app = window.jupyterapp;
  await app.commands.execute('application:close-all');
  await app.commands.execute('docmanager:open', {path: rel, factory: 'Notebook'});
}"""

# null until the notebook on show is *rel*, every cell drawn, every non-empty markdown cell
# rendered; then the counts that must settle (typeset math, loaded images).
STATE = """rel => {
  const w = window.jupyterapp.shell.currentWidget;
  if (!(w && w.context && w.context.isReady && w.context.path === rel && w.content && w.content.model)) return null;
  const nb = w.content;
  if (nb.widgets.length === 0 || nb.widgets.length !== nb.model.cells.length) return null;
  for (const c of nb.widgets) {
    if (c.model.type !== 'markdown' || !c.model.sharedModel.getSource().trim()) continue;
    const md = c.node.querySelector('.jp-RenderedMarkdown');
    if (!c.rendered || !md || md.childElementCount === 0) return null;
  }
  const imgs = Array.from(nb.node.querySelectorAll('img'));
  return [nb.node.querySelectorAll('mjx-container').length, nb.node.querySelectorAll('mjx-merror').length,
          imgs.length, imgs.filter(i => i.complete).length];
}"""

READ = """() => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  const images = [];
  nb.widgets.forEach((c, i) => c.node.querySelectorAll('img').forEach(img => images.push(
    {cell: i, alt: img.getAttribute('alt') || '', loaded: img.complete && img.naturalWidth > 0})));
  return {html: nb.node.outerHTML, images, n: nb.widgets.length};
}"""


def read_in_lab(page, rel: str) -> dict:
    """Open *rel* (relative to the server's root) and return its drawn DOM once it has settled."""
    page.evaluate(OPEN, rel)
    deadline, last, since = time.time() + TIMEOUT_S, None, time.time()
    while time.time() < deadline:
        state = page.evaluate(STATE, rel)
        if state is None or state != last:
            last, since = state, time.time()
        elif state[2] == state[3] and time.time() - since >= SETTLE_S:
            break
        page.wait_for_timeout(250)
    else:
        pytest.fail(f"{rel}: JupyterLab did not finish drawing it within {TIMEOUT_S} s (last state {last})")
    return page.evaluate(READ)


def lab_cells(drawn: dict, nb: dict):
    """JupyterLab's cells as BeautifulSoup elements, read as :func:`test_portable.screen_problems`
    reads nbconvert's: anchors under the ``id`` JupyterLab keeps as ``data-jupyter-id``, what
    JupyterLab hides (``lm-mod-hidden``: collapsed outputs, the markdown editor) removed."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(drawn["html"], "html.parser")
    cells = soup.select(".jp-Notebook-cell")
    assert len(cells) == len(nb["cells"]) == drawn["n"], (len(cells), len(nb["cells"]), drawn["n"])
    collapsed = [el.select_one(".jp-InputPlaceholder") is not None
                 and not any("lm-mod-hidden" not in (a.get("class") or []) for a in el.select(".jp-InputArea"))
                 for el in cells]
    for el in soup.select("[data-jupyter-id]"):
        el["id"] = el["data-jupyter-id"]
    for el in soup.select(".lm-mod-hidden"):
        el.decompose()
    for img in soup.select("img"):
        if _no_alt(img.get("alt")):
            img["alt"] = ""
    # Typeset math reads as its MathML (MathJax's assistive copy); a subscript or superscript as
    # the book's text has it ("G_q", not "G q"), innermost first.
    for el in reversed(soup.select("mjx-assistive-mml msub, mjx-assistive-mml msup, mjx-assistive-mml msubsup")):
        parts = [c.get_text("") for c in el.find_all(recursive=False)]
        marks = {"msub": "_", "msup": "^", "msubsup": "_^"}[el.name]
        el.replace_with(parts[0] + "".join(m + p for m, p in zip(marks, parts[1:])))
    return cells, collapsed


def _no_alt(alt) -> bool:
    """JupyterLab writes ``alt="Image"`` on an image the markdown gives no alt text: that is none."""
    return (alt or "").strip() in ("", JUPYTERLAB_DEFAULT_ALT)


def lab_problems(nb: dict, cells, collapsed, images) -> list[str]:
    """What JupyterLab shows wrong beyond the nbconvert checks: math, images, hidden code, links."""
    problems = []
    targets = {el["id"] for c in cells for el in c.select("[id]")}
    for index, (cell, el) in enumerate(zip(nb["cells"], cells)):
        where = f"cell {index}"
        if el.select("mjx-merror") or "Math input error" in el.get_text(" "):
            problems.append(f"{where}: MathJax error: {' '.join(x.get_text(' ') for x in el.select('mjx-merror'))[:120]!r}")
        if cell["cell_type"] == "markdown":
            shown = copy.copy(tp._shown(el, "markdown"))
            for x in shown.select("mjx-container, code, pre, script, style"):
                x.decompose()
            text = shown.get_text(" ")
            for m in RAW_TEX.finditer(text):
                problems.append(f"{where}: TeX shown as text {m.group(0)!r} in {text[max(0, m.start() - 40):m.end() + 40]!r}")
            for a in el.select("a[href^='#']"):
                if a["href"][1:] not in targets:
                    problems.append(f"{where}: the link {a['href']!r} ({a.get_text(' ')[:40]!r}) finds no anchor in the notebook")
        meta = cell.get("metadata", {})
        hide = bool(set(meta.get("tags", ())) & HIDDEN_TAGS)
        if cell["cell_type"] == "code" and hide and not collapsed[index]:
            problems.append(f"{where}: code the book hides is shown (not collapsed): {''.join(cell['source'])[:60]!r}")
    for img in images:
        if not img["loaded"]:
            problems.append(f"cell {img['cell']}: an image that does not load (alt {img['alt'][:40]!r})")
        if _no_alt(img["alt"]) and nb["cells"][img["cell"]]["cell_type"] == "markdown":
            problems.append(f"cell {img['cell']}: an image without alt text")
    return problems


def screen_in_lab(page, root: Path, rel: str, nb: dict, truth: dict, keys=frozenset()) -> list[str]:
    """Write *nb* at *rel* under the served folder, read it in JupyterLab, return every problem."""
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    drawn = read_in_lab(page, rel)
    cells, collapsed = lab_cells(drawn, nb)
    return tp.screen_problems(nb, truth, keys, cells=cells) + lab_problems(nb, cells, collapsed, drawn["images"])


# --- the extensions are off ------------------------------------------------------------------


def test_jupyterlab_runs_without_jupyterlab_myst_and_dpmask_live(lab_page):
    page, root = lab_page
    state = extensions_state(page)
    assert set(OURS) <= set(state["disabled"]) and state["notebook"] and state["ours"] == [], state
    probe = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "Two is {eval}`1 + 1`.\n\n```{note}\nA note.\n```\n\n$x^2$"}]}
    (root / "probe.ipynb").write_text(json.dumps(probe))
    drawn = read_in_lab(page, "probe.ipynb")
    cells, _ = lab_cells(drawn, probe)
    md = cells[0].select_one(".jp-RenderedMarkdown")
    # CommonMark: the role is text, the directive a code block whose info string is "{note}"
    fence = md.select_one("pre code")
    assert "{eval}`1 + 1`" in md.get_text() or "{eval}1 + 1" in md.get_text(), md
    assert fence is not None and "language-{note}" in fence.get("class", []) and fence.get_text().strip() == "A note.", md
    assert not md.select(".myst, aside, .admonition") and md.select("mjx-container"), md


# --- every portable notebook -----------------------------------------------------------------


@pytest.fixture(scope="module")
def served_portable(portable_notebooks, lab_page):
    _, root = lab_page
    for edition in ("full", "students"):
        shutil.copytree(portable_notebooks / edition, root / "portable" / edition, dirs_exist_ok=True)
    return root / "portable"


def _reads_as_the_book_in_lab(lab_page, served_portable, stem, edition):
    page, root = lab_page
    rel = f"portable/{edition}/chapters/{stem}.ipynb"
    nb = json.loads((root / rel).read_text())
    problems = screen_in_lab(page, root, rel, nb, tp.book_truth(stem, edition), tp.bib_keys())
    assert not problems, f"JupyterLab, {edition}/{stem}:\n" + "\n".join(problems[:30])


@pytest.mark.parametrize("stem", CHAPTERS)
def test_portable_notebook_reads_as_the_book_in_jupyterlab(lab_page, served_portable, stem):
    _reads_as_the_book_in_lab(lab_page, served_portable, stem, "full")


@pytest.mark.parametrize("stem", STUDENTS)
def test_student_portable_notebook_reads_as_the_book_in_jupyterlab(lab_page, served_portable, stem):
    _reads_as_the_book_in_lab(lab_page, served_portable, stem, "students")


# --- planted slips: each check fails in JupyterLab when it should ------------------------------


def _png() -> str:
    """A real 2 x 2 PNG (the mini notebook's stand-in bytes would not load in a browser)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + b"\x80\x20\x20" * 2 for _ in range(2))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def _mini():
    """tests/test_portable.py's mini notebook (both editions) with an image a browser can draw."""
    nb, full, truth, book = tp._mini()
    fake = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"0" * 64).decode()

    def real(notebook):
        text = json.dumps(notebook)
        assert fake in text
        return json.loads(text.replace(fake, _png()))

    sys.path.insert(0, str(ROOT / "_ext"))
    from portable import convert
    from solutions import strip_solutions

    students, _ = convert(strip_solutions(nb), "x", book, {"a": 1.2345}, "students")
    return real(full), real(students), truth


def _screen(lab_page, name, nb, truth):
    page, root = lab_page
    return screen_in_lab(page, root, f"planted/{name}.ipynb", nb, truth, {"dwork2014algorithmic"})


def test_the_mini_notebook_reads_as_the_book_in_jupyterlab(lab_page):
    full, students, truth = _mini()
    assert _screen(lab_page, "clean_full", full, truth) == []
    assert _screen(lab_page, "clean_students", students, dict(truth, solutions=False)) == []


def test_a_raw_eval_is_caught_in_jupyterlab(lab_page):
    full, _, truth = _mini()
    got = _screen(lab_page, "raw_eval", tp._edit_markdown(full, "1.23", '{eval}`f"{glued.a:.2f}"`'), truth)
    assert any("raw MyST '{eval}'" in p for p in got) and any("'1.23' is not shown" in p for p in got), got


def test_a_wrong_statement_kind_is_caught_in_jupyterlab(lab_page):
    full, _, truth = _mini()
    got = _screen(lab_page, "wrong_kind", tp._edit_markdown(full, "**Lemma 3.1**", "**Theorem 3.1**"), truth)
    assert any("statement lem-1" in p for p in got), got


def test_a_solution_in_the_student_edition_is_caught_in_jupyterlab(lab_page):
    full, students, truth = _mini()
    slip = copy.deepcopy(students)
    slip["cells"].insert(2, next(c for c in full["cells"] if "<details>" in "".join(c["source"])))
    got = _screen(lab_page, "student_solution", slip, dict(truth, solutions=False))
    assert any("a solution in the student edition" in p for p in got), got


def test_a_figure_without_alt_text_is_caught_in_jupyterlab(lab_page):
    full, _, truth = _mini()
    slip = copy.deepcopy(full)
    fig = next(c for c in slip["cells"] if (c["metadata"].get(tp.MARKER) or {}).get("inserted") == "figure")
    fig["source"] = re.sub(r"!\[[^\]]*\]", "![]", "".join(fig["source"]))
    got = _screen(lab_page, "figure_no_alt", slip, truth)
    assert any("without alt text" in p for p in got) and any("figure fig-a: not an <img> with alt text" in p for p in got), got


def test_a_mathjax_error_is_caught_in_jupyterlab(lab_page):
    full, _, truth = _mini()
    got = _screen(lab_page, "math_error", tp._edit_markdown(full, "x = 1", "x = \\frac{1}"), truth)
    assert any("MathJax error" in p for p in got), got


def test_hidden_code_shown_is_caught_in_jupyterlab(lab_page):
    full, _, truth = _mini()
    slip = copy.deepcopy(full)
    code = next(c for c in slip["cells"][1:] if c["cell_type"] == "code" and "hide-input" in c["metadata"].get("tags", ()))
    code["metadata"]["jupyter"]["source_hidden"] = False
    got = _screen(lab_page, "hidden_shown", slip, truth)
    assert any("code the book hides is shown" in p for p in got), got


def test_a_number_that_starts_a_line_stays_in_its_sentence_in_jupyterlab(lab_page):
    """marked (JupyterLab) starts an ordered list at a line "12. The ..." even inside a paragraph,
    where nbconvert's mistune does not: a number the portable notebook prints there must stay
    text (found in concordance, item 3: "more in 12. The true masked requirement ...")."""
    sys.path.insert(0, str(ROOT / "_ext"))
    from portable import convert

    _, _, truth, book = tp._mini()
    md = {"cell_type": "markdown", "metadata": {}, "source": '1. First item.\n2. It holds in 24 rows and more in\n   {eval}`f"{glued.a}"`. The end.'}
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [md]}
    portable, notes = convert(nb, "x", book, {"a": 12}, "full")
    truth = dict(truth, numbers={0: ["12"]}, headings={}, figures={}, solution_titles=[])
    assert not notes and _screen(lab_page, "number_at_line_start", portable, truth) == []
    slip = json.loads(json.dumps(portable).replace("12\\\\.", "12."))
    assert slip != portable
    got = _screen(lab_page, "number_at_line_start_slip", slip, truth)
    assert any("'12' is not shown" in p for p in got), got


def test_a_broken_image_is_caught_in_jupyterlab(lab_page):
    full, _, truth = _mini()
    slip = json.loads(json.dumps(full).replace(_png(), _png()[:24] + "AAAA"))
    got = _screen(lab_page, "broken_image", slip, truth)
    assert any("does not load" in p for p in got), got
