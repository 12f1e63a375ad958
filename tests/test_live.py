"""Every chapter, live: JupyterLab (with jupyterlab-myst, as Binder builds it) shows what the book shows.

A student opens a chapter in JupyterLab and runs all cells; or opens it from the launch buttons,
which open the executed notebooks (the book's own outputs, ``_ext/executed.py``), and reads it
before running anything.  This test does both, in real JupyterLab on 127.0.0.1 driven through
Debian's Chromium, with JupyterLab's default (windowed) rendering, on copies (JupyterLab saves
the notebook; the repository's copies stay without outputs).  It reads the SCREEN: every cell is
scrolled into view and its rendered text read, as a student would see it.  For every chapter,
against the built HTML book:

- every prose number is on the screen, rendered as the book prints it at the same place, and no
  expression is left as text (``glued.``, ``f"{``), after Run All and, in the executed notebook,
  before any run; one chapter (``HOG_CHAPTERS``) runs with two busy processes beside it, one per
  core, as on a busy Binder or hub; one executed notebook is run again and must show the same;
- the run ends with no error output and no console error from the book's content (a reference
  into another notebook is a link, which jupyterlab-myst does not try to resolve);
- every citation reads as the book prints it, in the book's order, and no bib key is on the
  screen (jupyterlab-myst has no bibliography; dpmask-live writes the book's text);
- no role or directive text is left on the page (``{glue``, ``{eval``, ``{prf:``, ...);
- as many figures as the book's page, each with its caption and the book's number;
- the statement boxes carry the book's numbers, in the book's order; every solution is collapsed;
- one slider moved per explorer changes what the explorer shows.

It executes every notebook a second time (after nbval), so it is marked ``live`` and runs in
``make test-slow`` beside ``make test`` (CI runs both).  What it catches (each planted once, issue
22): jupyterlab-myst's own executor back in place of dpmask-live's (numbers shown as code during
Run All), a cell whose expression is not evaluated, an executed notebook without its
``user_expressions``, a number that differs from the book, markup JupyterLab cannot render, a
cell that fails only in JupyterLab, an explorer whose sliders no longer update it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest

from _ext_import import ext_module
from _lab import jupyter_lab
from conftest import MEASURED_CHAPTERS

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("DPMASK_BOOK_OUT", ROOT)) / "_build"
HTML = BUILD / "html"
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
RUN_TIMEOUT = 900  # seconds for one chapter's Run All (the slowest takes about a minute)
# The chapters run with two busy processes beside them (one per core); "all" for every chapter.
HOG_CHAPTERS = os.environ.get("DPMASK_LIVE_HOG", "03_main_results").split(",")
# The executed notebooks run again after being read: Run All must reproduce what they showed.
RERUN_EXECUTED = os.environ.get("DPMASK_LIVE_RERUN", "01_introduction").split(",")
# Measured afresh by each run (timings): only checked for being rendered, not for their digits.
FRESH_NUMBERS = MEASURED_CHAPTERS

# Text that means markup was shown instead of rendered.
RAW = re.compile(r"\{(?:glue|eval|prf:|solution|exercise|math|doc|ref|numref|eq|cite)[^}]*\}|:name:|:label:|:enumerator:|^```|^:::", re.M)
# An expression shown instead of its value.
EXPRESSION_TEXT = re.compile(r'glued\.|f"\{|\b[A-Z]\w*Error: ')
EVAL_ROLE = re.compile(r"\{eval\}(`+)(.*?)\1(?!`)", re.S)
# Console errors that are JupyterLab's own, not the book's content.
NOT_OURS = re.compile(r"Failed to load resource.*(favicon|/api/(workspaces|sessions|kernels))|"
                      r"WebSocket connection to .* failed|Kernel .* not found", re.I)
# Console errors allowed as known: none.  (A reference into another notebook is a link; the
# page error "Cannot read properties of undefined (reading 'node')", JupyterLab's cell toolbar
# measuring a markdown cell jupyterlab-myst had not attached yet, is prevented by dpmask-live.)
KNOWN_CONSOLE = re.compile(r"(?!)")



@pytest.fixture(scope="module")
def book_html():
    missing = [p for p in CHAPTERS if not (HTML / "chapters" / f"{p.stem}.html").exists()]
    if missing:
        cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(ROOT), "-W", "-n", "--keep-going"]
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=3600)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return HTML


@pytest.fixture(scope="module")
def lab(tmp_path_factory, book_html):
    """JupyterLab on 127.0.0.1 as the environment installs it (settings left at their defaults).

    It serves ``chapters/`` (a copy of the sources, as a clone has them) and ``executed/chapters/``
    (the executed notebooks the launch buttons open, written from the book's jupyter-cache).
    """
    root = tmp_path_factory.mktemp("live")
    shutil.copytree(ROOT / "chapters", root / "chapters")
    ext_module("executed").write_executed_notebooks(root / "executed", BUILD / ".jupyter_cache")
    with jupyter_lab(root) as url:
        yield url, root


class _Hog:
    """Two busy processes, one per core, for as long as the block runs (a busy Binder or hub)."""

    def __init__(self, on):
        self.on, self.procs = on, []

    def __enter__(self):
        if self.on:
            self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def _open(page, url, rel, kernel=True):
    """Open *rel* (a notebook under the server's root) in a fresh workspace; wait for its kernel."""
    page.goto(f"{url}/lab/workspaces/{Path(rel).stem}-{abs(hash(rel)) % 10**6}/tree/{rel}?reset", timeout=120_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    # the notebook on show is this one, its model read in full (a first cell can be drawn before
    # the shell shows it or before its model holds every cell: read then, a page had no number)
    page.wait_for_function(
        "rel => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return !!(w && w.context && w.context.isReady && w.context.path === rel && w.content && w.content.model"
        " && w.content.model.cells.length > 0 && w.content.widgets.length === w.content.model.cells.length); }",
        arg=rel, timeout=120_000)
    if not kernel:
        return
    # JupyterLab sometimes asks which kernel to start although the notebook names python3: accept it.
    deadline = time.time() + 120
    while time.time() < deadline:
        if page.locator(".jp-Dialog").count():
            page.locator(".jp-Dialog .jp-mod-accept").first.click()
        ready = page.evaluate("() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
                              " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
                              " return !!k && k.status === 'idle' && k.connectionStatus === 'connected'; }")
        if ready:
            return
        page.wait_for_timeout(500)
    pytest.fail(f"{rel}: the kernel did not start")


def _run_all(page, name):
    page.evaluate("void window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # Done when every code cell has run (an execution count in its model: windowed cells may have
    # no prompt in the page) and the kernel is idle, three times in a row.
    done = """() => {
      const w = window.jupyterapp.shell.currentWidget;
      const k = w.sessionContext.session && w.sessionContext.session.kernel;
      const code = w.content.widgets.filter(c => c.model.type === 'code');
      return !!k && k.status === 'idle' && code.length > 0 && code.every(c => c.model.executionCount !== null);
    }"""
    deadline = time.time() + RUN_TIMEOUT
    streak = 0
    while time.time() < deadline:
        streak = streak + 1 if page.evaluate(done) else 0
        if streak >= 3:
            break
        time.sleep(1.0)
    else:
        pytest.fail(f"{name}: Run All did not finish within {RUN_TIMEOUT} s")
    page.wait_for_timeout(1500)  # let the last inline expressions and widget views arrive


# Every cell scrolled into view (JupyterLab renders and lays out only what is near the viewport),
# then what the screen shows of it.  A markdown cell is read until its text holds as many values
# as it has expressions, or for `patience` ms: a student looking at it would see no more.
SCREEN = """async ([patience, wanted]) => {
  patience = patience;
  const nb = window.jupyterapp.shell.currentWidget.content;
  const frame = () => new Promise(r => requestAnimationFrame(() => setTimeout(r, 25)));
  const BLANK = src => !src.replace(/```\\{solution-end\\}\\s*```/g, '').replace(/^[ \\t]*\\([\\w-]+\\)=[ \\t]*$/mg, '').trim();
  // bib keys on the screen: jupyterlab-myst's "Citation Not Found" marks that are not hidden
  const keysShown = cell => Array.from(cell.node.querySelectorAll('span[title="Citation Not Found"]'))
    .filter(e => e.getClientRects().length > 0).map(e => e.textContent.trim());
  const cells = [];
  for (let i = 0; i < nb.widgets.length; i++) {
    const cell = nb.widgets[i];
    try { await nb.scrollToItem(i, 'center'); } catch (e) { cell.node.scrollIntoView({block: 'center'}); }
    // A cell the notebook stores collapsed (a solution's text, _ext/cell_visibility.py) takes a
    // click to read, like the book's dropdown: note that it was collapsed, open it, read it, close it.
    const collapsed = !!cell.inputHidden;
    if (collapsed) { cell.inputHidden = false; await frame(); }
    // A solution's numbers are behind its dropdown, as in the book: note whether each is closed,
    // then open them all to read what a click shows (and close them again).
    // A markdown cell that draws nothing ({solution-end} alone, a target label) has no text to
    // wait for: each of the eight such cells cost a minute (two 30 s waits) in every reading.
    const blank = cell.model.type === 'markdown' && BLANK(cell.model.sharedModel.getSource());
    const tDrawn = Date.now();
    while (cell.model.type === 'markdown' && !blank && Date.now() - tDrawn < 30000) {  // drawn first, then read
      const md = cell.node.querySelector('.jp-InputArea .myst') || cell.node.querySelector('.jp-MarkdownOutput');
      if (md && md.innerText.trim()) break;
      await frame();
    }
    const details = Array.from(cell.node.querySelectorAll('.myst details'));
    const solutions = details.filter(d => /Solution/.test((d.querySelector('summary') || {innerText: ''}).innerText)).map(d => d.open);
    const wasOpen = details.map(d => d.open);
    details.forEach(d => { d.open = true; });
    const t0 = Date.now();
    let text = '';
    for (;;) {
      await frame();
      const md = cell.node.querySelector('.jp-InputArea .myst') || cell.node.querySelector('.jp-MarkdownOutput');
      text = md ? md.innerText : '';
      if (cell.model.type !== 'markdown' || blank) break;
      if (!text.trim()) {  // not drawn yet: a student would wait for it
        if (Date.now() - t0 > 30000) break;
        continue;
      }
      // a citation jupyterlab-myst drew as its bib key is replaced by dpmask-live a moment later
      if (keysShown(cell).length && Date.now() - t0 < 5000) continue;
      const shown = (text.match(/glued\\.|f"\\{|[A-Z]\\w*Error: /g) || []).length;
      if (shown === 0 || !wanted[i]) break;
      if (Date.now() - t0 > patience) { patience = 500; break; }  // once one waited in vain, no more
    }
    // A code cell whose stored output holds a MyST figure (dpmask.book.show_figure) is read once the
    // figure is drawn, or after 30 s: under load jupyterlab-myst may not have drawn it yet when the
    // cell scrolls in (a before-run reading once counted 3 of chapter 5's 4 figures at load 8).
    const figsWanted = cell.model.type !== 'code' ? 0 : (() => {
      let n = 0;
      for (let j = 0; j < cell.model.outputs.length; j++) {
        let md = (cell.model.outputs.get(j).data || {})['text/markdown'];
        if (Array.isArray(md)) md = md.join('');
        if (typeof md === 'string') n += (md.match(/\\{figure\\}/g) || []).length;
      }
      return n;
    })();
    const tFig = Date.now();
    while (figsWanted && cell.node.querySelectorAll('.jp-OutputArea figure').length < figsWanted && Date.now() - tFig < 30000) {
      await frame();
    }
    const cites = Array.from(cell.node.querySelectorAll('.dpmask-cite')).map(e => e.innerText);
    const keys = keysShown(cell);
    const figs = Array.from(cell.node.querySelectorAll('.jp-OutputArea figure')).map(f => (
      {img: !!f.querySelector('img'), cap: (f.querySelector('figcaption') || {innerText: ''}).innerText}));
    const boxes = Array.from(cell.node.querySelectorAll('.myst aside.myst-proof .myst-proof-title')).map(e => e.innerText.trim());
    details.forEach((d, k) => { d.open = wasOpen[k]; });
    if (collapsed) cell.inputHidden = true;
    const outputs = Array.from(cell.node.querySelectorAll('.jp-OutputArea-output')).map(e => e.innerText).join('\\n');
    cells.push({index: i, type: cell.model.type, source: cell.model.sharedModel.getSource(), text, figs, boxes, solutions, outputs,
                collapsed, cites, keys});
  }
  return cells;
}"""


def _screen(page, patience_ms=10_000):
    n = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")
    wanted = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.map("
                           "c => c.model.type === 'markdown' && /\\{eval\\}`/.test(c.model.sharedModel.getSource()))")
    assert len(wanted) == n
    cells = page.evaluate(SCREEN, [patience_ms, wanted])
    if os.environ.get("DPMASK_LIVE_DUMP"):
        Path(os.environ["DPMASK_LIVE_DUMP"]).write_text(json.dumps(cells, indent=1))
    return cells


def _norm(text):
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


def _book_page(html_dir, stem):
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((html_dir / "chapters" / f"{stem}.html").read_text(), "html.parser")
    return soup.select_one("main") or soup


def _book_numbers(main):
    """The texts the book prints for the prose's {eval} expressions, in order."""
    return [s.get_text() for s in main.select("span.pasted-text")]


# Cells whose numbers are counted but not read before any run: none.  (Exercise 6.1's solution
# used to share its markdown cell with the exercise, and jupyterlab-myst 2.7.0 did not show the
# two values stored for it before a run; the solution now has its own cell, as every other does.)
KNOWN_BEFORE_RUN: dict[str, set[int]] = {}


def screen_numbers(cells, book_numbers, check_digits=True, known=frozenset()):
    """(rendered, expected, problems): the prose numbers on the screen against the book's, in order.

    A number counts as rendered when the cell's text shows the book's text for it, after the
    previous one (``check_digits=False``: shows any value, for numbers measured afresh by each
    run), and no expression is left as text in the cell.
    """
    expected, rendered, problems = 0, 0, []
    k = 0
    for cell in cells:
        if cell["type"] != "markdown":
            continue
        exprs = [m.group(2) for m in EVAL_ROLE.finditer(cell["source"])]
        if cell["index"] in known:   # counted, not read (KNOWN_BEFORE_RUN)
            expected += len(exprs)
            k += len(exprs)
            continue
        text = _norm(cell["text"])
        left = EXPRESSION_TEXT.findall(text)
        if left:
            problems.append(f"cell {cell['index']}: {len(left)} expression(s) shown as code: {text[:160]!r}")
        pos = 0
        for e in exprs:
            expected += 1
            want = _norm(book_numbers[k]) if k < len(book_numbers) else None
            k += 1
            if want is None:
                problems.append(f"cell {cell['index']}: {e!r} has no number in the book")
                continue
            if not check_digits:
                rendered += 0 if left else 1
                continue
            at = text.find(want, pos)
            if at < 0 or left:
                if not left:
                    problems.append(f"cell {cell['index']}: {e!r} should read {want!r}: {text[:160]!r}")
                continue
            rendered += 1
            pos = at + len(want)
    if k != len(book_numbers):
        problems.append(f"{k} expressions in the notebook, {len(book_numbers)} numbers in the book")
    return rendered, expected, problems


def _console_problems(messages):
    return [m for m in messages if not NOT_OURS.search(m) and not KNOWN_CONSOLE.match(m.strip())]


def _new_page(browser):
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    console = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(f"page error: {e}"))
    return context, page, console


def _shutdown(page, context):
    try:  # free the kernel's memory before the next chapter
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
    except Exception:
        pass
    context.close()


def _report(kind, name, rendered, expected):
    load = os.getloadavg()[0]
    print(f"\nLIVE {kind} {name}: {rendered}/{expected} numbers rendered (load {load:.2f})")


def _check_page(name, cells, main, book_numbers, check_digits=True, known=frozenset()):
    """Numbers, markup, figures, statement boxes and solutions on the screen against the book's page."""
    rendered, expected, problems = screen_numbers(cells, book_numbers, check_digits, known)
    assert not problems, f"{name}: {rendered}/{expected} prose numbers as the book prints them; " + "\n".join(problems[:12])

    shown = "\n".join(c["text"] for c in cells) + "\n" + "\n".join(c["outputs"] for c in cells)
    raw = sorted(set(m.group(0) for m in RAW.finditer(shown)))
    assert not raw, f"{name}: markup shown as text: {raw[:10]}"

    lab_figs = [f for c in cells for f in c["figs"]]
    book_figs = [f.select_one(".caption-number").get_text(strip=True) for f in main.select("figure")
                 if f.select_one(".caption-number")]
    assert len(lab_figs) == len(book_figs), f"{name}: {len(lab_figs)} figures in JupyterLab, {len(book_figs)} in the book"
    for lf, bn in zip(lab_figs, book_figs):
        assert lf["img"], f"{name}: a figure without its image"
        number = bn.split()[-1]
        assert re.match(rf"^\s*Figure\s*{re.escape(number)}\s*:\s*\S", lf["cap"]), (lf["cap"][:80], bn)

    lab_boxes = [b for c in cells for b in c["boxes"]]
    book_titles = [d.select_one(".admonition-title") for d in main.select("div.proof")]
    book_boxes = [t.get_text(" ", strip=True) for t in book_titles if t is not None]   # statements
    n_book_proofs = sum(t is None for t in book_titles)                                 # proofs: no title
    head = lambda t: re.match(r"^(\w+)(?:\s+([\dA-Z]+(?:\.\d+)?))?", t).group(0)   # "Theorem 3.4"
    lab_statements = [t for t in lab_boxes if not t.startswith("Proof")]
    lab_proofs = [t for t in lab_boxes if t.startswith("Proof")]
    assert [head(t) for t in lab_statements] == [head(t) for t in book_boxes], (lab_statements[:6], book_boxes[:6])
    assert len(lab_proofs) == n_book_proofs and all(t == "Proof" for t in lab_proofs), lab_proofs[:4]

    # citations as the book prints them ("[Dwork and Roth, 2014]", "Balle and Wang [2018]"), in its
    # order, and no bib key on the screen (jupyterlab-myst has no bibliography: dpmask-live)
    keys = [k for c in cells for k in c["keys"]]
    assert not keys, f"{name}: bib keys on the screen instead of citations: {keys[:6]}"
    lab_cites = [_norm(t) for c in cells for t in c["cites"]]
    book_cites = [_norm(s.get_text()) for s in main.select("span.bibtex-citation")]
    assert lab_cites == book_cites, f"{name}: citations {lab_cites[:8]} in JupyterLab, {book_cites[:8]} in the book"

    solutions = [o for c in cells for o in c["solutions"]]
    assert not any(solutions), f"{name}: {sum(solutions)} solutions open"
    assert len(solutions) == len(main.select("div.solution")), (len(solutions), len(main.select("div.solution")))
    return rendered, expected


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_runs_in_jupyterlab_as_the_book_shows_it(path, lab, browser, book_html):
    url, root = lab
    context, page, console = _new_page(browser)
    try:
        _open(page, url, f"chapters/{path.name}")
        with _Hog(path.stem in HOG_CHAPTERS or "all" in HOG_CHAPTERS):
            _run_all(page, path.name)
            cells = _screen(page)
        main = _book_page(book_html, path.stem)

        errors = page.evaluate("() => Array.from(document.querySelectorAll("
                               "'.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.error\"]'))"
                               ".map(e => e.innerText.slice(0, 400))")
        assert not errors, f"{path.name}: error output:\n" + "\n---\n".join(errors)

        rendered, expected = _check_page(path.name, cells, main, _book_numbers(main),
                                         check_digits=path.stem not in FRESH_NUMBERS)
        _report("run-all" + (" under load" if path.stem in HOG_CHAPTERS else ""), path.stem, rendered, expected)

        # what the notebook stores collapsed (the book hides it: checks, a solution's code, results
        # and text) is still collapsed after Run All, which opens every cell it runs (dpmask-live)
        opened = _opened_after_run(page, path)
        assert not opened, f"{path.name}: collapsed cells opened by Run All: {opened[:8]}"

        # explorers: one slider moved, the explorer's display changes
        explorers = page.evaluate("() => Array.from(document.querySelectorAll('.jp-OutputArea-output > .widget-vbox, "
                                  ".jp-OutputArea-output > .jupyter-widgets.widget-container')).length")
        for k in range(explorers):
            _move_one_slider(page, path.name, k)

        problems = _console_problems(console)
        assert not problems, f"{path.name}: console errors:\n" + "\n".join(p[:300] for p in problems[:10])
    finally:
        _shutdown(page, context)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_executed_notebook_shows_the_book_before_any_run(path, lab, browser, book_html):
    """What the launch buttons open (``_ext/executed.py``), read before any cell runs; one is run again."""
    url, root = lab
    context, page, console = _new_page(browser)
    try:
        _open(page, url, f"executed/chapters/{path.name}", kernel=path.stem in RERUN_EXECUTED)
        cells = _screen(page, patience_ms=3_000)
        main = _book_page(book_html, path.stem)
        rendered, expected = _check_page(path.name, cells, main, _book_numbers(main),
                                         known=KNOWN_BEFORE_RUN.get(path.stem, frozenset()))
        _report("before-run", path.stem, rendered, expected)
        if path.stem in RERUN_EXECUTED:
            with _Hog(True):
                _run_all(page, path.name)
                cells = _screen(page)
            rendered, expected = _check_page(path.name + " (run again)", cells, main, _book_numbers(main),
                                             check_digits=path.stem not in FRESH_NUMBERS)
            _report("executed run-all under load", path.stem, rendered, expected)
        problems = _console_problems(console)
        assert not problems, f"{path.name}: console errors:\n" + "\n".join(p[:300] for p in problems[:10])
    finally:
        _shutdown(page, context)


def _opened_after_run(page, path):
    """Cells the chapter stores collapsed (``jupyter`` metadata) that show their outputs or text now."""
    stored = [c.get("metadata", {}).get("jupyter", {}) for c in json.loads(path.read_text())["cells"]]
    shown = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.map("
                          "c => ({type: c.model.type, outputHidden: c.model.type === 'code' ? c.outputHidden : null,"
                          " inputHidden: c.inputHidden}))")
    assert len(shown) == len(stored)
    opened = []
    for k, (want, now) in enumerate(zip(stored, shown)):
        if now["type"] == "code" and want.get("outputs_hidden") and not now["outputHidden"]:
            opened.append(f"cell {k}: outputs")
        if now["type"] == "markdown" and want.get("source_hidden") and not now["inputHidden"]:
            opened.append(f"cell {k}: text")
    return opened


SNAPSHOT = """(k) => {
  const box = Array.from(document.querySelectorAll('.jp-OutputArea-output > .widget-vbox, .jp-OutputArea-output > .jupyter-widgets.widget-container'))[k];
  const parts = [];
  box.querySelectorAll('img').forEach(i => parts.push(i.src.length + ':' + i.src.slice(-200)));
  box.querySelectorAll('.widget-html-content, .widget-output, .jp-OutputArea-output').forEach(e => parts.push(e.innerText));
  return parts.join('|');
}"""


def _move_one_slider(page, name, k):
    handle = page.locator(".jp-OutputArea-output > .widget-vbox, .jp-OutputArea-output > .jupyter-widgets.widget-container").nth(k).locator(".noUi-handle[role=slider]").first
    if handle.count() == 0:
        return  # an explorer without a continuous slider (dropdowns only): nothing to move
    before = page.evaluate(SNAPSHOT, k)
    handle.focus()
    page.keyboard.press("ArrowRight")
    deadline = time.time() + 30
    while time.time() < deadline:
        page.wait_for_timeout(250)
        if page.evaluate(SNAPSHOT, k) != before:
            return
    pytest.fail(f"{name}: explorer {k} did not change after its first slider moved")
