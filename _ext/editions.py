"""The book's other editions, built from the same sources: ``python _ext/editions.py COMMAND``.

``badge [--check]``
    Write (or check) the README's Binder badge from ``_config.yml``'s ``repository:`` block, the
    one place a fork names itself.
``students [--out DIR]``
    The edition without solutions, into ``_build/students/html``: the same Sphinx build as
    ``jupyter-book build . -W -n --keep-going`` with ``dpmask_edition = "students"`` (see
    ``_ext/publish.py``), reusing the full edition's jupyter-cache, so no notebook runs again.
``pdf [--html DIR] [--out FILE]``
    ``_build/pdf/book.pdf`` from the built HTML: Debian's Chromium, driven by Playwright, prints
    every page of the table of contents once MathJax has typeset it (solutions and other
    dropdowns opened), and pypdf joins the pages in reading order with one bookmark per page.
    No TeX, no network.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import shutil
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from publish import PLACEHOLDER_URL, repository_problem  # noqa: E402

BADGE_START = "<!-- binder-badge: generated from _config.yml by `python _ext/editions.py badge` -->"
BADGE_END = "<!-- /binder-badge -->"


# --- the repository, in one place ----------------------------------------------------------


def repository(root: Path = ROOT) -> tuple[str, str]:
    """(url, branch) from ``_config.yml``."""
    cfg = yaml.safe_load((root / "_config.yml").read_text())
    repo = cfg.get("repository") or {}
    return str(repo.get("url", "")).rstrip("/"), str(repo.get("branch", "main"))


def binder_url(url: str, branch: str, binderhub: str = "https://mybinder.org") -> str:
    """The Binder launch URL for *url* at *branch*, opening JupyterLab (as the launch buttons do)."""
    m = re.match(r"^https://github\.com/([^/]+)/([^/]+)$", url)
    if not m:
        raise ValueError(f"url must be https://github.com/OWNER/REPO, got {url!r}")
    return f"{binderhub.rstrip('/')}/v2/gh/{m.group(1)}/{m.group(2)}/{branch}?urlpath=lab"


def badge_block(root: Path = ROOT) -> str:
    url, branch = repository(root)
    cfg = yaml.safe_load((root / "_config.yml").read_text())
    hub = (cfg.get("launch_buttons") or {}).get("binderhub_url", "https://mybinder.org")
    link = binder_url(url, branch, hub)
    return f"{BADGE_START}\n[![Launch the book in Binder]({hub.rstrip('/')}/badge_logo.svg)]({link})\n{BADGE_END}"


def _readme_with_badge(text: str, block: str) -> str:
    pattern = re.compile(re.escape(BADGE_START) + r".*?" + re.escape(BADGE_END), re.S)
    if not pattern.search(text):
        raise ValueError("README.md has no binder-badge markers")
    return pattern.sub(lambda _: block, text)


def cmd_badge(args) -> int:
    readme = ROOT / "README.md"
    text = readme.read_text()
    new = _readme_with_badge(text, badge_block())
    if args.check:
        if new != text:
            print("README.md's Binder badge does not match _config.yml; run `python _ext/editions.py badge`")
            return 1
        print("README.md's Binder badge matches _config.yml")
        return 0
    readme.write_text(new)
    url, _ = repository()
    print(f"README.md's Binder badge now points at {url}")
    if url == PLACEHOLDER_URL:
        print(f"note: {repository_problem(url)}")
    return 0


# --- the student edition -------------------------------------------------------------------


def build_students(out: Path, cache: Path) -> int:
    """Sphinx-build the student edition into *out* (html); reuse the notebooks cached in *cache*."""
    from jupyter_book.sphinx import build_sphinx

    out = Path(out).resolve()
    if out.exists():
        shutil.rmtree(out)
    return build_sphinx(
        ROOT,
        out,
        noconfig=True,
        path_config=str(ROOT / "_config.yml"),
        confoverrides={
            "external_toc_path": (ROOT / "_toc.yml").as_posix(),
            "latex_individualpages": False,
            "nitpicky": True,
            "dpmask_edition": "students",
            "nb_execution_cache_path": str(Path(cache).resolve()),
        },
        doctreedir=out.parent / ".doctrees",
        builder="html",
        warningiserror=True,
        keep_going=True,
        freshenv=True,
    )


def cmd_students(args) -> int:
    t0 = time.perf_counter()
    status = build_students(Path(args.out), Path(args.cache))
    if status:
        print(f"the student edition failed to build (status {status})", file=sys.stderr)
        return 1
    print(f"The student edition is at {Path(args.out).resolve()}/index.html ({time.perf_counter() - t0:.0f} s)")
    return 0


# --- the PDF -------------------------------------------------------------------------------


def toc_pages(root: Path = ROOT) -> list[str]:
    """Every page in reading order: the root, then each file of _toc.yml."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    pages = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                pages.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return pages


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Print the article only, with every solution open; code the HTML hides (hide-input cells) stays
# out, as on screen.
_PRINT_CSS = """
@page { size: A4; margin: 16mm 14mm 16mm 14mm; }
.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-header-article, .bd-footer,
.bd-footer-article, .prev-next-area, .header-article, .footer, #rtd-footer-container,
.skip-link, .search-button-field, .toggle-button, button.toggle-button, .headerlink,
.theme-switch-button, .bd-search, .announcement { display: none !important; }
.bd-main, .bd-content, .bd-article-container, .bd-page-width, .bd-container,
.bd-container__inner, .bd-article { max-width: 100% !important; width: 100% !important; margin: 0 !important; padding: 0 !important; }
.toggle-hidden, .toggle-hidden * { display: revert !important; visibility: visible !important; }
details.hide.above-input { display: none !important; }
pre { white-space: pre-wrap !important; word-break: break-word; }
div.cell_output img, figure img { max-width: 100% !important; page-break-inside: avoid; }
table { page-break-inside: avoid; }
"""

_OPEN_EVERYTHING = """
() => {
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
}
"""

_MATHJAX_DONE = """
async () => {
  if (typeof MathJax === 'undefined' || !MathJax.startup) { return 'no-mathjax'; }
  await MathJax.startup.promise;
  if (MathJax.typesetPromise) { await MathJax.typesetPromise(); }
  return 'typeset';
}
"""


# The widget manager (require.js, embed-amd.js) renders each saved widget some time after the
# page's load event; print only once every widget view has been drawn.
_WIDGETS_DRAWN = """
() => [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')]
  .every(s => s.parentElement.querySelector('.jupyter-widgets, .lm-Widget, .widget-box'))
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _chromium() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if path is None:
        raise SystemExit("make pdf needs Chromium: `apt-get update && apt-get install -y chromium`")
    return path


def build_pdf(html: Path, out: Path, pages: list[str] | None = None) -> dict:
    """Print every page of *html* (in toc order) and join them into *out*; return a summary."""
    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader, PdfWriter

    html = Path(html).resolve()
    pages = pages or toc_pages()
    missing = [p for p in pages if not (html / f"{p}.html").exists()]
    if missing:
        raise SystemExit(f"build the HTML first (make book): missing {missing}")
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    parts_dir = out.parent / "pages"
    shutil.rmtree(parts_dir, ignore_errors=True)
    parts_dir.mkdir()

    handler = functools.partial(_Quiet, directory=str(html))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    titles, files = [], []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1000, "height": 1400})

            def offline(route):
                host = urlparse(route.request.url).hostname
                if route.request.url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost"):
                    route.continue_()
                else:
                    route.abort()

            context.route("**/*", offline)
            page = context.new_page()
            for i, name in enumerate(pages):
                page.goto(f"{base}/{name}.html", wait_until="load")
                try:
                    page.wait_for_function(_WIDGETS_DRAWN, timeout=20000)
                except Exception:  # noqa: BLE001 - print what is there, and say so
                    print(f"warning: {name}: the widgets did not render within 20 s", file=sys.stderr)
                page.evaluate(_OPEN_EVERYTHING)
                page.add_style_tag(content=_PRINT_CSS)
                page.evaluate(_MATHJAX_DONE)
                page.wait_for_timeout(200)
                page.emulate_media(media="print")
                title = page.title().split(" — ")[0].split(" \u2014 ")[0].strip()
                titles.append(title)
                target = parts_dir / f"{i:02d}.pdf"
                page.pdf(
                    path=str(target),
                    format="A4",
                    print_background=True,
                    display_header_footer=True,
                    header_template="<span></span>",
                    footer_template=(
                        '<div style="font-size:8px;width:100%;text-align:center;color:#666">'
                        f"{_escape(title)} &middot; <span class=pageNumber></span></div>"
                    ),
                    margin={"top": "14mm", "bottom": "16mm", "left": "12mm", "right": "12mm"},
                )
                files.append(target)
            browser.close()
    finally:
        httpd.shutdown()

    writer = PdfWriter()
    for title, f in zip(titles, files):
        start = len(writer.pages)
        writer.append(str(f))
        writer.add_outline_item(title=title, page_number=start)
    writer.add_metadata({"/Title": _book_title(), "/Author": "the dpmask contributors"})
    with open(out, "wb") as fh:
        writer.write(fh)
    shutil.rmtree(parts_dir, ignore_errors=True)
    return {"pages": len(PdfReader(str(out)).pages), "chapters": len(files), "path": str(out)}


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _book_title() -> str:
    return str(yaml.safe_load((ROOT / "_config.yml").read_text()).get("title", "dpmask"))


def cmd_pdf(args) -> int:
    t0 = time.perf_counter()
    info = build_pdf(Path(args.html), Path(args.out))
    print(f"The PDF is at {info['path']}: {info['pages']} pages from {info['chapters']} HTML pages ({time.perf_counter() - t0:.0f} s)")
    return 0


def main(argv=None) -> int:
    out_root = Path(os.environ.get("DPMASK_BOOK_OUT", ROOT)) / "_build"
    parser = argparse.ArgumentParser(prog="editions.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("badge", help="write or check the README's Binder badge")
    b.add_argument("--check", action="store_true")
    b.set_defaults(func=cmd_badge)
    s = sub.add_parser("students", help="build the edition without solutions")
    s.add_argument("--out", default=str(out_root / "students" / "html"))
    s.add_argument("--cache", default=str(out_root / ".jupyter_cache"))
    s.set_defaults(func=cmd_students)
    p = sub.add_parser("pdf", help="print the built HTML to one PDF")
    p.add_argument("--html", default=str(out_root / "html"))
    p.add_argument("--out", default=str(out_root / "pdf" / "book.pdf"))
    p.set_defaults(func=cmd_pdf)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
