"""The built book: it builds with zero warnings, and every page works in a real browser, offline.

The build runs `jupyter-book build . -W -n --keep-going` (the same flags as `make book`), so a
failing cell, a broken reference or a missing citation fails this test.  The browser part serves
the HTML on 127.0.0.1 and drives Debian's Chromium through Playwright: MathJax renders without
`mjx-merror`, no console error beyond the known harmless ones, no request leaves localhost,
search finds "Lemma 5.5", and widget pages render their widgets.  Without Chromium the browser
tests skip with a message that says how to install it (CI installs it and never skips).
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
# jupyter-book writes to <OUT>/_build/html; DPMASK_BOOK_OUT moves it (e.g. to a scratch folder).
OUT = Path(os.environ.get("DPMASK_BOOK_OUT", ROOT))
HTML = OUT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)

# Console messages known to be harmless with Jupyter Book 1.0.4 (see TOOLCHAIN.md).
HARMLESS = (
    "THEBE_JS_URL",  # sphinx-thebe declares it twice
    "reading 'Queue'",  # ipywidgets 8 calls MathJax 2 on a MathJax 3 page
    "invalid theme mode",  # sphinx-book-theme on first visit
)


def _toc_pages():
    toc = (ROOT / "_toc.yml").read_text()
    return ["index"] + re.findall(r"file: (\S+)", toc)


@pytest.fixture(scope="session")
def built_book(request):
    """Build the book once per session with the strict flags; return the build log.

    The chapters' nbval cells run before this (tests/conftest.py orders them so) and hand each
    notebook they ran in full to the book's jupyter-cache, so the build executes none of them
    again; a notebook that nbval ran and the build still executed fails here (the cache missed,
    e.g. because its execution mode is no longer ``cache``).
    """
    cmd = [
        str(Path(sys.executable).with_name("jupyter-book")),
        "build",
        str(ROOT),
        "--path-output",
        str(OUT),
        "-W",
        "-n",
        "--keep-going",
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=3600)
    log = res.stdout + res.stderr
    if res.returncode != 0:
        tail = "\n".join(log.splitlines()[-60:])
        pytest.fail(f"jupyter-book build failed (status {res.returncode}):\n{tail}")
    hand_over = request.config.pluginmanager.get_plugin("dpmask-nbval-hand-over")
    handed = hand_over.stored if hand_over is not None else set()
    executed = re.findall(r"(\S+\.ipynb): (?:Executing notebook|Starting inline execution client)", log)
    again = sorted(Path(p).resolve() for p in executed)
    again = [str(p.relative_to(ROOT)) for p in again if p in handed]
    if again:
        pytest.fail(f"the build executed again notebooks that nbval had just run: {again} (their "
                    "jupyter-cache entry did not match, or their execution mode is not `cache`)")
    return log


def test_book_builds_without_warnings(built_book):
    # Sphinx reports "path: WARNING: message"; the kernel's own "[IPKernelApp] WARNING |" lines are not build warnings.
    warnings = [line for line in built_book.splitlines() if re.search(r"\b(WARNING|ERROR):", line)]
    assert not warnings, "\n".join(warnings)


def test_every_toc_page_is_built(built_book):
    for page in _toc_pages():
        assert (HTML / f"{page}.html").exists(), page


def test_pages_reference_no_cdn(built_book):
    pattern = re.compile(r"""(?:src|href)=["'](https?://[^"']+)""")
    for page in _toc_pages():
        text = (HTML / f"{page}.html").read_text()
        remote = [
            url
            for url in pattern.findall(text)
            if url.endswith(".js") or url.endswith(".css") or "cdn" in url
        ]
        assert not remote, f"{page} loads remote assets: {remote}"


# --- the browser --------------------------------------------------------------------------


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="session")
def server(built_book):
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def _chromium_args():
    """The offline, as-root launch flags, kept in one place with the PDF printer's (_ext/editions.py)."""
    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        from editions import CHROMIUM_ARGS
    finally:
        sys.path.remove(str(ROOT / "_ext"))
    return list(CHROMIUM_ARGS)


@pytest.fixture(scope="session")
def browser():
    if CHROMIUM is None:
        pytest.skip(
            "browser tests need Chromium: install Debian's package with "
            "`apt-get update && apt-get install -y chromium` (CI does this in .ci/run)"
        )
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=_chromium_args(),
        )
        yield b
        b.close()


def _visit(browser, url):
    """Open *url*; return (page, context, console errors, requests that left localhost)."""
    context = browser.new_context()
    page = context.new_page()
    errors, outside = [], []

    def on_console(msg):
        if msg.type == "error" and not any(h in msg.text for h in HARMLESS):
            errors.append(msg.text)

    def on_request(route):
        host = urlparse(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.on("console", on_console)
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}") if not any(h in str(exc) for h in HARMLESS) else None)
    context.route("**/*", on_request)
    page.goto(url, wait_until="load")
    return page, context, errors, outside


def _wait_for_mathjax(page):
    page.wait_for_function(
        "() => window.MathJax === undefined || (window.MathJax.startup && window.MathJax.startup.promise"
        " && (window.__mjDone || (window.MathJax.startup.promise.then(() => { window.__mjDone = true; }), false)))",
        timeout=60000,
    )


@pytest.mark.parametrize("page_name", _toc_pages())
def test_page_renders_offline(browser, server, page_name):
    page, context, errors, outside = _visit(browser, f"{server}/{page_name}.html")
    try:
        _wait_for_mathjax(page)
        assert page.locator("mjx-merror").count() == 0, "MathJax reported an error"
        html = page.content()
        if "application/vnd.jupyter.widget-view+json" in html:
            page.wait_for_selector(".jupyter-widgets, .widget-slider, .widget-box", timeout=30000)
        assert not errors, f"console errors on {page_name}: {errors}"
        assert not outside, f"{page_name} tried to leave localhost: {outside}"
    finally:
        context.close()


def test_search_finds_lemma_5_5(browser, server):
    page, context, errors, outside = _visit(browser, f"{server}/search.html?q=Lemma+5.5")
    try:
        page.wait_for_selector("#search-results li a", timeout=30000)
        hrefs = page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.getAttribute('href'))")
        assert any("05_proofs" in h for h in hrefs), hrefs
        assert not outside, outside
    finally:
        context.close()


def test_appendix_statements_are_numbered_like_the_paper(built_book):
    text = (HTML / "chapters" / "A_technical_lemmas.html").read_text()
    for k in range(1, 5):
        assert f'<span class="caption-number">Lemma A.{k} </span>' in text


# Control characters other than tab and newline (C0, DEL, C1), and what is left of a TeX command
# whose first letter an escape ate ("\varepsilon" in a non-raw Python string is a vertical tab
# followed by "arepsilon").  MathJax renders such text without an error, so the browser tests
# above cannot see it.  The build turns a vertical tab into a newline, so in the HTML the
# remnant ("\\(\narepsilon =\\)") is what shows; tests/test_text_integrity.py checks the sources.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_REMNANT = re.compile(r"(?<![A-Za-z\\])(arepsilon|arphi|artheta|rac\{|extbf\{|ext\{|ilde\{|heta\b|lpha\b|abla\b)")


def html_text_problems(text):
    """[(kind, context)] of control characters and TeX remnants in one HTML page."""
    out = []
    for kind, pattern in (("control character", _CONTROL), ("TeX remnant", _REMNANT)):
        out += [(kind, repr(text[max(0, m.start() - 40): m.end() + 40])) for m in pattern.finditer(text)]
    return out


def test_built_html_holds_no_control_characters(built_book):
    assert html_text_problems("<p>$\x0barepsilon$</p>") and html_text_problems("<p>\\(\narepsilon =\\)</p>")
    assert not html_text_problems("<p>\\(\\varepsilon\\)\t\n</p>")
    problems = {}
    for path in sorted(HTML.rglob("*.html")):
        if "_static" in path.relative_to(HTML).parts:
            continue
        found = html_text_problems(path.read_text(encoding="utf-8", errors="replace"))
        if found:
            problems[str(path.relative_to(HTML))] = found
    assert not problems, problems


def test_no_directive_is_left_as_literal_text(built_book):
    # A directive that failed to parse (e.g. a backtick fence whose title holds a role) shows up
    # as its own source text, "{prf:proof}", in the page; sphinx warns about none of this.
    literal = re.compile(r"\{(prf|exercise|solution|glue|math|note|warning)[:}]")
    problems = {}
    for path in sorted(HTML.rglob("*.html")):
        rel = path.relative_to(HTML)
        if "_static" in rel.parts or "_sources" in rel.parts or rel.name in ("api.html", "genindex.html", "search.html"):
            continue
        text = re.sub(r"<(script|style)\b.*?</\1>", "", path.read_text(encoding="utf-8", errors="replace"), flags=re.S)
        text = re.sub(r"<[^>]+>", "", text)
        hits = literal.findall(text)
        if hits:
            problems[str(rel)] = sorted(set(hits))
    assert not problems, problems


def test_tables_printed_by_cells_render_as_tables(built_book):
    sample = "<p>| $a$ | b |\n|—|—|\n| 1 | 2 |</p>"
    assert re.search(r"<p>\|[^\n]*\|\n\|\s*[—–-]", sample)
    # A cell that displays a Markdown table (IPython.display.Markdown) renders it with
    # nb_render_markdown_format; plain CommonMark has no tables and leaves "| a | b |" as a paragraph.
    problems = []
    for path in sorted(HTML.rglob("*.html")):
        rel = path.relative_to(HTML)
        if "_static" in rel.parts or "_sources" in rel.parts:
            continue
        # a header row, then the separator row (its dashes become em dashes in a paragraph)
        if re.search(r"<p>\|[^\n]*\|\n\|\s*[—–-]", path.read_text(encoding="utf-8", errors="replace")):
            problems.append(str(rel))
    assert not problems, problems
