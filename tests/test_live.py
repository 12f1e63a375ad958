"""Every chapter, live: JupyterLab (with jupyterlab-myst, as Binder builds it) shows what the book shows.

A student opens a chapter in JupyterLab and runs all cells.  This test does exactly that, in real
JupyterLab on 127.0.0.1 driven through Debian's Chromium, on a copy of ``chapters/`` (JupyterLab
saves the notebook, and the repository's copies stay without outputs).  For every chapter it
checks, against the built HTML book:

- the run ends with no error output;
- no role or directive text is left on the page (``{glue``, ``{eval``, ``{prf:``, ``{solution``,
  ``:name:``, raw ````` or ``:::`` fences ...);
- every inline number: each ``{eval}`` expression evaluated in the kernel (as jupyterlab-myst stores
  it in the saved notebook) gives exactly the text the book prints at the same place;
- as many figures as the book's page, each with its caption and the book's number;
- the statement boxes (theorems, lemmas ...) carry the book's numbers, in the book's order;
- every solution is collapsed;
- one slider moved per explorer changes what the explorer shows.

It executes every notebook a second time (after nbval), so it is marked ``live`` and runs in
``make test-slow`` beside ``make test`` (CI runs both).  What it can catch: a number, figure,
caption or box number that differs between JupyterLab and the book; markup JupyterLab cannot
render; a cell that fails only in JupyterLab; an explorer whose sliders no longer update it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _ext_import import ext_module

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("DPMASK_BOOK_OUT", ROOT)) / "_build" / "html"
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
RUN_TIMEOUT = 900  # seconds for one chapter's Run All (the slowest takes about a minute)

# Text that means markup was shown instead of rendered.
RAW = re.compile(r"\{(?:glue|eval|prf:|solution|exercise|math|doc|ref|numref|eq|cite)[^}]*\}|:name:|:label:|:enumerator:|^```|^:::", re.M)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def book_html():
    missing = [p for p in CHAPTERS if not (HTML / "chapters" / f"{p.stem}.html").exists()]
    if missing:
        cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(ROOT), "-W", "-n", "--keep-going"]
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=3600)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return HTML


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on 127.0.0.1, serving a copy of chapters/, with every cell kept in the page."""
    if CHROMIUM is None:
        pytest.skip("the JupyterLab test needs Chromium: apt-get install -y chromium (CI installs it)")
    jupyter = Path(sys.executable).with_name("jupyter")
    if not jupyter.exists():
        pytest.skip("JupyterLab is not installed in this environment")
    root = tmp_path_factory.mktemp("live")
    shutil.copytree(ROOT / "chapters", root / "chapters")
    settings = root / ".settings"
    for ext, name, value in [
        ("@jupyterlab/notebook-extension", "tracker", {"windowingMode": "none"}),
        ("@jupyterlab/apputils-extension", "notification", {"fetchNews": "false", "checkForUpdates": False}),
    ]:
        (settings / ext).mkdir(parents=True, exist_ok=True)
        (settings / ext / f"{name}.jupyterlab-settings").write_text(json.dumps(value))
    port = _free_port()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    log = open(root / "lab.log", "w")
    proc = subprocess.Popen(
        [str(jupyter), "lab", "--no-browser", "--ip", "127.0.0.1", f"--port={port}",
         "--IdentityProvider.token=", "--allow-root", "--LabApp.expose_app_in_browser=True",
         f"--ServerApp.root_dir={root}", f"--LabApp.workspaces_dir={root / '.workspaces'}",
         f"--LabApp.user_settings_dir={settings}"],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.5)
    else:
        proc.terminate()
        pytest.fail("JupyterLab did not start: " + (root / "lab.log").read_text()[-2000:])
    yield url, root
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=list(ext_module("editions").CHROMIUM_ARGS))
        yield b
        b.close()


def _run_all(page, url, name):
    # A fresh workspace per chapter (?reset): JupyterLab would otherwise reopen the previous tabs.
    page.goto(f"{url}/lab/workspaces/{Path(name).stem}/tree/chapters/{name}?reset", timeout=120_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    # JupyterLab sometimes asks which kernel to start although the notebook names python3: accept it.
    deadline = time.time() + 120
    while time.time() < deadline:
        if page.locator(".jp-Dialog").count():
            page.locator(".jp-Dialog .jp-mod-accept").first.click()
        ready = page.evaluate("() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
                              " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
                              " return !!k && k.status === 'idle' && k.connectionStatus === 'connected'; }")
        if ready:
            break
        page.wait_for_timeout(500)
    else:
        pytest.fail(f"{name}: the kernel did not start")
    page.evaluate("void window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # Done when every code cell shows an execution count and the kernel is idle, twice in a row.
    done = """() => {
      const w = window.jupyterapp.shell.currentWidget;
      const prompts = Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')).map(e => e.textContent);
      const status = w.sessionContext.session && w.sessionContext.session.kernel && w.sessionContext.session.kernel.status;
      return status === 'idle' && prompts.length > 0 && prompts.every(t => /\\[\\d+\\]/.test(t));
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


def _book_page(html_dir, stem):
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((html_dir / "chapters" / f"{stem}.html").read_text(), "html.parser")
    return soup.select_one("main") or soup


def _book_numbers(main):
    """The texts the book prints for the prose's {eval} expressions, in order."""
    return [s.get_text() for s in main.select("span.pasted-text")]


def _lab_numbers(saved_nb):
    out = []
    for cell in saved_nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        exprs = re.findall(r"\{eval\}`([^`]*)`", src)
        stored = {u["expression"]: u["result"] for u in cell.get("metadata", {}).get("user_expressions", [])}
        for e in exprs:
            res = stored.get(e)
            assert res is not None, f"JupyterLab stored no result for {e!r}"
            assert res.get("status") == "ok", f"{e!r}: {res}"
            out.append(ast.literal_eval(res["data"]["text/plain"]))
    return out


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_runs_in_jupyterlab_as_the_book_shows_it(path, lab, browser, book_html):
    url, root = lab
    context = browser.new_context(viewport={"width": 1300, "height": 1600})
    page = context.new_page()
    try:
        _run_all(page, url, path.name)
        main = _book_page(book_html, path.stem)

        # 1. no error output
        errors = page.evaluate("() => Array.from(document.querySelectorAll("
                               "'.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.error\"]'))"
                               ".map(e => e.innerText.slice(0, 400))")
        assert not errors, f"{path.name}: error output:\n" + "\n---\n".join(errors)

        # 2. no markup left as text, in rendered markdown and in outputs
        shown = page.evaluate("() => Array.from(document.querySelectorAll('.jp-MarkdownCell .myst, "
                              ".jp-OutputArea-output')).map(e => e.innerText).join('\\n')")
        raw = sorted(set(m.group(0) for m in RAW.finditer(shown)))
        assert not raw, f"{path.name}: markup shown as text: {raw[:10]}"

        # 3. the prose's numbers: what the kernel evaluated = what the book prints
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        page.wait_for_timeout(1500)
        saved = json.loads((root / "chapters" / path.name).read_text())
        lab_numbers, book_numbers = _lab_numbers(saved), _book_numbers(main)
        assert len(lab_numbers) == len(book_numbers), (len(lab_numbers), len(book_numbers))
        diff = [(i, a, b) for i, (a, b) in enumerate(zip(lab_numbers, book_numbers)) if a != b]
        # Timings (chapter 8) are measured afresh by each run; every other number must be equal.
        if path.stem != "08_scale":
            assert not diff, f"{path.name}: JupyterLab and the book differ at {diff[:8]}"

        # 4. figures: as many as the book's page, each captioned, with the book's numbers
        lab_figs = page.evaluate("() => Array.from(document.querySelectorAll('.jp-OutputArea figure')).map(f => "
                                 "({img: !!f.querySelector('img'), cap: (f.querySelector('figcaption') || {innerText: ''}).innerText}))")
        book_figs = [f.select_one(".caption-number").get_text(strip=True) for f in main.select("figure")
                     if f.select_one(".caption-number")]
        assert len(lab_figs) == len(book_figs), f"{path.name}: {len(lab_figs)} figures in JupyterLab, {len(book_figs)} in the book"
        for lf, bn in zip(lab_figs, book_figs):
            assert lf["img"], f"{path.name}: a figure without its image"
            number = bn.split()[-1]
            assert re.match(rf"^\s*Figure\s*{re.escape(number)}\s*:\s*\S", lf["cap"]), (lf["cap"][:80], bn)

        # 5. statement boxes carry the book's numbers, in order
        lab_boxes = page.evaluate("() => Array.from(document.querySelectorAll('.jp-MarkdownCell .myst aside.myst-proof "
                                  ".myst-proof-title')).map(e => e.innerText.trim())")
        book_titles = [d.select_one(".admonition-title") for d in main.select("div.proof")]
        book_boxes = [t.get_text(" ", strip=True) for t in book_titles if t is not None]   # statements
        n_book_proofs = sum(t is None for t in book_titles)                                 # proofs: no title
        head = lambda t: re.match(r"^(\w+)(?:\s+([\dA-Z]+(?:\.\d+)?))?", t).group(0)   # "Theorem 3.4"
        lab_statements = [t for t in lab_boxes if not t.startswith("Proof")]
        lab_proofs = [t for t in lab_boxes if t.startswith("Proof")]
        assert [head(t) for t in lab_statements] == [head(t) for t in book_boxes], (lab_statements[:6], book_boxes[:6])
        assert len(lab_proofs) == n_book_proofs and all(t == "Proof" for t in lab_proofs), lab_proofs[:4]

        # 6. every solution collapsed
        open_solutions = page.evaluate("() => Array.from(document.querySelectorAll('.jp-MarkdownCell .myst details'))"
                                       ".filter(d => /Solution/.test(d.querySelector('summary').innerText) && d.open).length")
        n_solutions = page.evaluate("() => Array.from(document.querySelectorAll('.jp-MarkdownCell .myst details'))"
                                    ".filter(d => /Solution/.test(d.querySelector('summary').innerText)).length")
        assert open_solutions == 0
        assert n_solutions == len(main.select("div.solution")), (n_solutions, len(main.select("div.solution")))

        # 7. explorers: one slider moved, the explorer's display changes
        explorers = page.evaluate("() => Array.from(document.querySelectorAll('.jp-OutputArea-output > .widget-vbox, "
                                  ".jp-OutputArea-output > .jupyter-widgets.widget-container')).length")
        for k in range(explorers):
            _move_one_slider(page, path.name, k)
    finally:
        try:  # free the kernel's memory before the next chapter
            page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        except Exception:
            pass
        context.close()


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
