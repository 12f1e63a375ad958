"""The book's other editions, built from the same sources: ``python _ext/editions.py COMMAND``.

``badge [--check]``
    Write (or check) the README's Binder badge from ``_config.yml``'s ``repository:`` block, the
    one place a fork names itself.
``students [--out DIR] [--notebooks DIR]``
    The edition without solutions.  First the solution-free notebooks, into
    ``_build/students/notebooks/chapters/*.ipynb`` (``_ext/solutions.py``: exercises kept, every
    solution and every code cell inside one removed); then the HTML, into
    ``_build/students/html``: the same Sphinx build as ``jupyter-book build . -W -n --keep-going``
    with ``dpmask_edition = "students"`` (``_ext/publish.py``: solutions out of the pages and the
    search index, solution-free ``_sources``, launch buttons on the students branch), reusing the
    full edition's jupyter-cache, so no notebook runs again.  The build runs in a scratch folder
    and only its HTML is kept: ``_build/students`` holds ``html`` and ``notebooks`` and nothing
    else (myst-nb's ``jupyter_execute`` would hold the executed notebooks with their solutions).
``student-notebooks [--out DIR] [--from DIR]``
    Only the solution-free notebooks (no Sphinx, no kernel: the publishing workflow's
    students-branch job runs this with nothing but Python and PyYAML), from the repository's
    chapters or, with ``--from``, from the executed notebooks (``executed-notebooks``), whose
    outputs and evaluated expressions they keep: what the students branch holds.
``students-branch``
    Print the branch the student edition's launch buttons open (``_config.yml``'s
    ``dpmask_students_branch``).
``students-commit [--ref REF] [--notebooks DIR]``
    Write a commit (with no parent, so that no solution is in its history) whose tree is *REF*'s
    with ``chapters/*.ipynb`` replaced by the solution-free notebooks, and print its hash.  The
    publishing workflow pushes it to the students branch, which the student edition's launch
    buttons open.  Nothing in the working tree, the index or any branch changes.
``executed-notebooks [--out DIR] [--cache DIR]``, ``executed-commit [--ref REF] [--notebooks DIR]``, ``executed-branch``
    The chapters with the book's outputs and their ``{eval}`` expressions evaluated (from the
    jupyter-cache of ``make book``; ``_ext/executed.py``), a parentless commit of them, and the
    branch the launch buttons open, to which the publishing workflow pushes that commit.
``portable-commit [--edition full|students] [--ref REF] [--notebooks DIR]``, ``portable-branch [--edition ...]``
    A parentless commit of *REF*'s tree with ``chapters/*.ipynb`` replaced by one edition's
    portable notebooks (``_build/portable/EDITION``, written by ``make book``:
    ``_ext/portable.py``), and the branch the Colab button of that edition opens
    (``notebooks``, ``notebooks-students``), to which the publishing workflow pushes it.
``pdf [--full-html DIR] [--students-html DIR] [--out DIR]``
    Three PDFs from the built HTML, into ``_build/pdf``: ``book.pdf`` (the full edition without
    its API reference), ``book-students.pdf`` (the student edition, without solutions, when it has
    been built) and ``api.pdf`` (the API reference on its own).  Debian's Chromium, driven by
    Playwright, prints every page once MathJax has typeset it (solutions and other dropdowns
    open; ``_static/dpmask-layout.css`` holds the print rules: no heading alone at a page foot,
    figures, boxes and tables kept whole, wide tables fitted to the page).  pypdf joins the pages in
    reading order under a nested outline: chapter, then each numbered section and subsection, at
    the page where its heading is printed; ``_ext/pdf_tags.py`` then gives the joined file the
    structure trees pypdf drops (tagged for a screen reader: headings, paragraphs, tables,
    figures with their alt text, in reading order; ``/Lang``, ``/MarkInfo``, the title shown, the
    footers as artifacts, every link described; each formula a ``/Formula`` whose ``/Alt`` is
    its speech, from MathJax's speech rule engine, a display equation's with its number).  No
    TeX, no network.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from book_config import (  # noqa: E402
    PLACEHOLDER_URL,
    ROOT,
    badge_block,
    binder_url,
    readme_with_badge,
    repository,
    repository_problem,
    students_branch,
    toc_pages,
)
from localhost import CHROMIUM, CHROMIUM_ARGS, keep_local, serve  # noqa: E402
from pdf_tags import FORMULA_MARK, marked_text, tag_joined  # noqa: E402
from solutions import write_solution_free_tree  # noqa: E402

# Kept under their old names: the tests and tests/test_live.py import them from here.
_readme_with_badge = readme_with_badge
__all__ = ["ROOT", "badge_block", "binder_url", "repository", "toc_pages", "build_pdf", "build_students"]

API_PAGE = "chapters/api"


# --- the README's Binder badge -------------------------------------------------------------


def cmd_badge(args) -> int:
    readme = ROOT / "README.md"
    text = readme.read_text()
    new = readme_with_badge(text, badge_block())
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
    """Sphinx-build the student edition into *out* (html); reuse the notebooks cached in *cache*.

    Sphinx and myst-nb write more than the HTML beside it: the doctrees and ``jupyter_execute/``,
    the executed notebooks *with their solutions* (the edition's pages are parsed from the full
    notebooks; the solutions are cut out of the doctrees).  So the build runs in a scratch folder
    and only the HTML, solution-free, is moved to *out*: nothing else of it lands beside *out*
    (``_build/students`` holds ``html`` and ``notebooks`` alone).
    """
    from jupyter_book.sphinx import build_sphinx

    out = Path(out).resolve()
    if out.exists():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    # beside _build/students, not in it, so that a half-finished build never sits in the edition
    with tempfile.TemporaryDirectory(prefix=".students-build-", dir=out.parent.parent) as scratch:
        html = Path(scratch) / "html"
        status = build_sphinx(
            ROOT,
            html,
            noconfig=True,
            path_config=str(ROOT / "_config.yml"),
            confoverrides={
                "external_toc_path": (ROOT / "_toc.yml").as_posix(),
                "latex_individualpages": False,
                "nitpicky": True,
                "dpmask_edition": "students",
                "nb_execution_cache_path": str(Path(cache).resolve()),
            },
            doctreedir=Path(scratch) / ".doctrees",
            builder="html",
            warningiserror=True,
            keep_going=True,
            freshenv=True,
        )
        if not status:
            shutil.move(str(html), str(out))
    return status


def write_student_notebooks(out: Path, source: Path = ROOT) -> list[Path]:
    """The chapters of *source* without their solutions, under *out*/chapters.

    *source* is the repository (notebooks stored without outputs: the student edition's downloads)
    or the executed notebooks of ``executed-notebooks`` (what the students branch holds: each
    chapter shows the book's numbers and figures before it runs, its solutions and their numbers
    cut out as from the sources).
    """
    out = Path(out)
    shutil.rmtree(out, ignore_errors=True)
    return write_solution_free_tree(Path(source), out)


def cmd_student_notebooks(args) -> int:
    written = write_student_notebooks(Path(args.out), Path(args.source))
    print(f"{len(written)} solution-free notebooks in {Path(args.out).resolve()}/chapters")
    return 0


def cmd_students(args) -> int:
    t0 = time.perf_counter()
    written = write_student_notebooks(Path(args.notebooks))
    print(f"{len(written)} solution-free notebooks in {Path(args.notebooks).resolve()}/chapters")
    # what a build before this layout left beside the HTML: the executed full notebooks and doctrees
    for stale in ("jupyter_execute", ".doctrees"):
        shutil.rmtree(Path(args.out).resolve().parent / stale, ignore_errors=True)
    status = build_students(Path(args.out), Path(args.cache))
    if status:
        print(f"the student edition failed to build (status {status})", file=sys.stderr)
        return 1
    # its download buttons serve the student edition's portable notebooks (_ext/portable.py)
    from portable import serve_downloads, write_portable

    build_dir = Path(args.cache).resolve().parent  # _build: the jupyter-cache, the full HTML, the portable notebooks
    portable = build_dir / "portable"
    write_portable(portable, Path(args.cache), build_dir / "html", editions=("students",))
    served = serve_downloads(Path(args.out), portable / "students")
    print(f"{len(served)} download buttons serve the student edition's portable notebooks")
    print(f"The student edition is at {Path(args.out).resolve()}/index.html ({time.perf_counter() - t0:.0f} s)")
    return 0


def _git(*args, env=None, cwd=ROOT, input_=None) -> str:
    res = subprocess.run(["git", *args], cwd=cwd, env=env, input=input_, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {res.stderr.strip()}")
    return res.stdout.strip()


def students_commit(notebooks: Path, ref: str = "HEAD", repo: Path = ROOT, message: str | None = None) -> str:
    """A parentless commit: *ref*'s tree with chapters/*.ipynb replaced by *notebooks*/chapters/*.ipynb."""
    notebooks = Path(notebooks).resolve()
    new = sorted((notebooks / "chapters").glob("*.ipynb"))
    if not new:
        raise SystemExit(f"no notebooks under {notebooks}/chapters: run `make book-students` first")
    base = _git("rev-parse", "--verify", f"{ref}^{{commit}}", cwd=repo)
    in_ref = set(_git("ls-tree", "--name-only", f"{base}:chapters", cwd=repo).splitlines())
    missing = [p.name for p in new if p.name not in in_ref]
    if missing:
        raise SystemExit(f"{missing} are not chapters of {ref}; rebuild the student notebooks from it")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git("read-tree", base, env=env, cwd=repo)
        for path in new:
            blob = _git("hash-object", "-w", str(path), env=env, cwd=repo)
            _git("update-index", "--cacheinfo", f"100644,{blob},chapters/{path.name}", env=env, cwd=repo)
        tree = _git("write-tree", env=env, cwd=repo)
    msg = message or (
        f"Student edition of {base[:12]}: the chapters without their solutions\n\n"
        "Written by `python _ext/editions.py students-commit`; a commit without parents, so that no\n"
        "solution is in this branch's history."
    )
    return _git("commit-tree", tree, "-m", msg, cwd=repo)


def cmd_students_commit(args) -> int:
    print(students_commit(Path(args.notebooks), args.ref))
    return 0


def cmd_students_branch(args) -> int:
    print(students_branch())
    return 0


# --- the PDF -------------------------------------------------------------------------------

# What only the PDF needs beyond the print rules of _static/dpmask-layout.css: every dropdown
# (solutions) open.  Code the HTML hides (hide-input cells) stays out, as on screen.
_OPEN_EVERYTHING = """
() => {
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
  document.querySelectorAll('details.dropdown, details.toggle-details').forEach(d => { d.open = true; });
}
"""

# An explorer's plot is an image drawn by the widget manager; the page script gives it alt text
# from its setting.  Where an image of an explorer has none when the page is printed, say what it
# is rather than print a figure a screen reader skips.
_NAME_WIDGET_IMAGES = """
() => document.querySelectorAll('.jupyter-widgets img:not([alt]), img.widget-image:not([alt])').forEach(i => {
  i.alt = "Plot of the explorer at its starting setting (the figure before it shows the whole range)";
})
"""

# Every formula's spoken text, for the tagged PDF (issue 31).  Chromium tags an element of role
# ``img`` as a ``/Figure`` whose ``/Alt`` is the element's accessible name; so each typeset formula
# (``mjx-container``) is wrapped in a ``<span role="img">`` named with what MathJax's speech rule
# engine (SRE, shipped offline with the book's MathJax: ``a11y/sre`` and ``sre/mathmaps``) says for
# its MathML, in ClearSpeak English, a display equation's number after it ("..., equation (2.1)").
# The name starts with ``pdf_tags.FORMULA_MARK``, by which ``_ext/pdf_tags.py`` retags those
# figures as ``/Formula`` (and drops the mark).  Chromium makes no structure element for a wrapper
# that holds only a formula (MathJax draws its glyphs as CSS content, which Chromium leaves
# untagged): the element needs a piece of painted text.  So each wrapper gets *carriers*: a word
# joiner (U+2060: no width, no break opportunity) and a period 2 px high, transparent and absolutely
# placed (nothing moves, nothing shows), after an inline formula or, in a display equation's line,
# after its glyphs; and a second period before an inline formula.  Fewer left some formulas without
# their element (29 Nov 2026): the joiner alone 143 of the book's 5,498 (a glyph without ink, whose
# fragment the painter sometimes culls), the period alone one in chapter 2 (at a line's end), both
# after the formula 3 of 5,486 (two at a line's end, whose period fell off the line, and one wider
# than the page, whose end is past its right edge); the period before the formula gave those three
# their element (a formula's start is always on the page).  A transparent inline image gave no
# element at all, a zero-width inline-block a third of them.  The MathML copy inside is hidden from the
# tree (the name says it) but kept in the page: the bookmarks read it (``_HEADINGS``).  Nothing
# drawn changes.  Runs on the print copy only.  *known* maps a MathML text to its speech (what
# earlier pages, and the other edition, already spoke: ``_SPEECH``), so the engine speaks each
# distinct formula once per run and is not even loaded for a page it has nothing new for.  Returns
# how many formulas were named, display and inline, and the speech it learnt.
_FORMULA_SPEECH = """
async ([mark, known]) => {
  const counts = {display: 0, inline: 0, unspoken: 0, learnt: {}};
  if (typeof MathJax === 'undefined' || !MathJax.startup || !MathJax.loader) { return counts; }
  await MathJax.startup.promise;
  const boxes = [...document.querySelectorAll('mjx-container')];
  if (!boxes.length) { return counts; }
  const mathml = box => { const m = box.querySelector('mjx-assistive-mml math'); return m ? m.outerHTML : ''; };
  let Sre = null;
  if (boxes.some(b => mathml(b) && !(mathml(b) in known))) {
    await MathJax.loader.load('a11y/sre');
    Sre = MathJax._.a11y.sre.Sre;
    await Sre.setupEngine({locale: 'en', domain: 'clearspeak', modality: 'speech',
                           json: MathJax.config.loader.paths.mathjax + '/sre/mathmaps'});
    await Sre.sreReady();
  }
  for (const box of boxes) {
    const mml = mathml(box);
    let speech = '';
    if (mml && mml in known) { speech = known[mml]; }
    else if (mml && mml in counts.learnt) { speech = counts.learnt[mml]; }
    else if (mml) {
      speech = Sre.toSpeech(mml).replace(/\\s+/g, ' ').trim();
      counts.learnt[mml] = speech;
    }
    if (!speech) { counts.unspoken += 1; continue; }
    const display = box.getAttribute('display') === 'true';
    const block = display && box.closest('div.math');
    const eqno = block && block.querySelector('.eqno');
    if (eqno) {
      const number = eqno.textContent.replace(/[#\\u00b6]/g, '').trim();
      if (number) { speech += ', equation ' + number; }
    }
    const wrap = document.createElement('span');
    wrap.setAttribute('role', 'img');
    wrap.setAttribute('aria-label', mark + speech);
    box.replaceWith(wrap);
    wrap.appendChild(box);
    box.querySelectorAll('mjx-math').forEach(e => e.removeAttribute('aria-hidden'));
    box.querySelectorAll('mjx-assistive-mml').forEach(e => e.setAttribute('aria-hidden', 'true'));
    // the carrier: inline, after the formula, in the wrapper; display, beside the glyphs, in their line
    const carrier = () => {
      const c = document.createElement('span');
      c.className = 'dpmask-formula-carrier';
      c.textContent = '.';
      c.style.cssText = 'position:absolute;color:transparent;font-size:2px;line-height:0';
      return c;
    };
    const joiner = document.createTextNode('\\u2060');
    if (display) { box.querySelector('mjx-math').after(joiner, carrier()); }
    else { wrap.prepend(carrier()); wrap.append(joiner, carrier()); }
    counts[display ? 'display' : 'inline'] += 1;
  }
  return counts;
}
"""

# A formula's MathML -> its speech, kept across the pages and editions of one run (``_FORMULA_SPEECH``).
_SPEECH: dict[str, str] = {}

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

# The page's headings as the outline needs them: level, the book's number, the title.
_HEADINGS = """
() => [...document.querySelectorAll('article.bd-article h1, article.bd-article h2, article.bd-article h3')]
  .filter(h => h.getClientRects().length > 0)
  .map(h => {
    const c = h.cloneNode(true);
    c.querySelectorAll('a.headerlink').forEach(e => e.remove());
    const numberEl = c.querySelector('span.section-number');
    const number = numberEl ? numberEl.textContent.trim().replace(/\\.$/, '') : '';
    if (numberEl) { numberEl.remove(); }
    // a typeset formula reads as the characters of its MathML in a bookmark ("p = 2")
    c.querySelectorAll('mjx-container').forEach(m => {
      const mml = m.querySelector('mjx-assistive-mml');
      const text = (mml ? mml.textContent : m.getAttribute('aria-label') || '').replace(/\\s+/g, ' ');
      m.replaceWith(document.createTextNode(text.replace(/([=<>≤≥])/g, ' $1 ').replace(/\\s+/g, ' ').trim()));
    });
    return {level: Number(h.tagName[1]), number: number, title: c.textContent.replace(/\\s+/g, ' ').trim()};
  })
"""


def _chromium() -> str:
    if CHROMIUM is None:
        raise SystemExit("make pdf needs Chromium: `apt-get update && apt-get install -y chromium`")
    return CHROMIUM


def _norm(text: str) -> str:
    # NFKC: a typeset formula's letters come out of the PDF as mathematical italics (𝑔 for g)
    return re.sub(r"[^0-9a-z]+", "", unicodedata.normalize("NFKC", text).lower())


def _words_in(text: str) -> list[str]:
    return [w for w in re.findall(r"[0-9a-z]+", unicodedata.normalize("NFKC", text).lower()) if len(w) > 2]


def _flat_outline(reader) -> list[tuple[str, int, float | None]]:
    """Chromium's own outline of one printed page, flattened in document order: (title, page, top)."""
    out = []

    def walk(items):
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                top = item.get("/Top")
                out.append((str(item.title), reader.get_destination_page_number(item), None if top is None else float(top)))

    walk(reader.outline)
    return out


def _heading_places(headings: list[dict], chromium_outline, page_texts: list[str]) -> list[tuple[int, float | None]]:
    """Where each heading is printed: (page, top), the page 0-based within one printed HTML page.

    Chromium's outline (``page.pdf(outline=True)``) gives each heading's page and height but
    garbles its title (the number and the text may be repeated); the headings, in the same
    document order, are matched to it by their text.  A heading Chromium left out is looked up in
    the page text (its height then unknown).
    """
    places, k = [], 0
    for h in headings:
        want = _norm(h["title"])
        words = _words_in(h["title"])
        j = k
        while j < len(chromium_outline) and not (
            want in _norm(chromium_outline[j][0]) or (words and all(w in _norm(chromium_outline[j][0]) for w in words))
        ):
            j += 1
        if j < len(chromium_outline):
            places.append(chromium_outline[j][1:])
            k = j + 1
            continue
        start = places[-1][0] if places else 0
        hit = next((i for i in range(start, len(page_texts)) if words and all(w in _norm(page_texts[i]) for w in words)), start)
        places.append((hit, None))
    return places


def print_pages(html: Path, pages: list[str], parts_dir: Path) -> list[dict]:
    """Print each page of *html* to its own PDF in *parts_dir*; return, per page, its file and headings."""
    from playwright.sync_api import sync_playwright

    missing = [p for p in pages if not (html / f"{p}.html").exists()]
    if missing:
        raise SystemExit(f"build the HTML first (make book / make book-students): missing {missing}")
    printed = []
    with serve(html) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1000, "height": 1400})
        keep_local(context)
        page = context.new_page()
        for i, name in enumerate(pages):
            page.goto(f"{base}/{name}.html", wait_until="load")
            try:
                page.wait_for_function(_WIDGETS_DRAWN, timeout=20000)
            except Exception:  # noqa: BLE001 - print what is there, and say so
                print(f"warning: {name}: the widgets did not render within 20 s", file=sys.stderr)
            page.evaluate(_OPEN_EVERYTHING)
            page.evaluate(_NAME_WIDGET_IMAGES)
            page.evaluate(_MATHJAX_DONE)
            page.emulate_media(media="print")
            page.wait_for_timeout(200)
            headings = page.evaluate(_HEADINGS)
            # after the headings are read: the bookmarks take no carrier from a formula's wrapper
            t_speech = time.perf_counter()
            formulas = page.evaluate(_FORMULA_SPEECH, [FORMULA_MARK, _SPEECH])
            _SPEECH.update(formulas.pop("learnt"))
            formulas["seconds"] = round(time.perf_counter() - t_speech, 2)
            title = page.title().split(" \u2014 ")[0].strip()
            target = parts_dir / f"{i:02d}.pdf"
            page.pdf(
                path=str(target),
                format="A4",
                print_background=True,
                outline=True,
                tagged=True,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=(
                    '<div style="font-size:8px;width:100%;text-align:center;color:#666">'
                    f"{_escape(title)} &middot; <span class=pageNumber></span></div>"
                ),
                margin={"top": "14mm", "bottom": "16mm", "left": "12mm", "right": "12mm"},
            )
            page.emulate_media(media="screen")
            printed.append({"name": name, "file": target, "title": title, "headings": headings,
                            "formulas": formulas})
        browser.close()
    return printed


def _toc_parents(root: Path = ROOT) -> dict[str, str]:
    """Page -> the page it is a section of in _toc.yml (``sections:``), for nesting the outline."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    parents = {}

    def walk(entries, parent=None):
        for entry in entries or []:
            if "file" in entry and parent:
                parents[entry["file"]] = parent
            walk(entry.get("sections"), entry.get("file"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return parents


def join_pdf(printed: list[dict], out: Path, title: str) -> dict:
    """Join the printed pages into *out* with a nested outline; return pages and bookmarks."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import Fit

    writer = PdfWriter()
    parents = _toc_parents()
    page_item = {}
    n_bookmarks = 0
    for part in printed:
        reader = PdfReader(str(part["file"]))
        texts, part["mcid_text"] = [], []
        for p in reader.pages:  # the page's text, and the text of each tagged piece (for the links)
            whole, marked = marked_text(p)
            texts.append(whole)
            part["mcid_text"].append(marked)
        start = len(writer.pages)
        writer.append(str(part["file"]), import_outline=False)
        headings = part["headings"]
        places = _heading_places(headings, _flat_outline(reader), texts)
        stack = [(0, page_item.get(parents.get(part["name"])))]  # (level, outline item)
        if not headings:  # a page without a heading still gets its bookmark
            headings, places = [{"level": 1, "number": "", "title": part["title"]}], [(0, None)]
        for h, (p, top) in zip(headings, places):
            label = f"{h['number']} {h['title']}".strip()
            while len(stack) > 1 and stack[-1][0] >= h["level"]:
                stack.pop()
            # the bookmark opens the page at the heading (tests/test_publish.py reads its height)
            fit = Fit.xyz(left=0, top=top) if top is not None else Fit.fit()
            item = writer.add_outline_item(title=label, page_number=start + p, parent=stack[-1][1], fit=fit)
            n_bookmarks += 1
            if h["level"] == 1 and part["name"] not in page_item:
                page_item[part["name"]] = item
            stack.append((h["level"], item))
    writer.add_metadata({"/Title": title, "/Author": "the dpmask contributors"})
    writer.page_mode = "/UseOutlines"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as fh:
        writer.write(fh)
    tags = tag_joined(out, printed, title)  # pypdf dropped the structure trees: put them back
    return {"path": str(out), "pages": len(PdfReader(str(out)).pages), "bookmarks": n_bookmarks,
            "html_pages": len(printed), "struct_elements": tags["elements"], "links_described": tags["links"],
            "formulas_named": {k: sum(p.get("formulas", {}).get(k, 0) for p in printed)
                               for k in ("display", "inline", "unspoken")},
            "formulas_tagged": tags.get("formulas", 0),
            "formula_speech_seconds": round(sum(p.get("formulas", {}).get("seconds", 0) for p in printed), 1)}


def build_pdf(html: Path, out: Path, pages: list[str] | None = None, title: str | None = None) -> dict:
    """Print *pages* (default: every page of the table of contents but the API reference) of *html* into *out*."""
    html, out = Path(html).resolve(), Path(out).resolve()
    pages = pages or [p for p in toc_pages() if p != API_PAGE]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dpmask-pdf-") as tmp:
        printed = print_pages(html, pages, Path(tmp))
        info = join_pdf(printed, out, title or _book_title())
    info["seconds"] = round(time.perf_counter() - t0, 1)
    return info


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _book_title() -> str:
    return str(yaml.safe_load((ROOT / "_config.yml").read_text()).get("title", "dpmask"))


def cmd_pdf(args) -> int:
    out = Path(args.out)
    jobs = [("book.pdf", Path(args.full_html), None, _book_title())]
    students = Path(args.students_html)
    if (students / "index.html").exists():
        jobs.append(("book-students.pdf", students, None, f"{_book_title()} (student edition)"))
    else:
        print(f"note: no student edition in {students}; run `make book-students` for book-students.pdf", file=sys.stderr)
    jobs.append(("api.pdf", Path(args.full_html), [API_PAGE], f"{_book_title()}: API reference"))
    summary = {}
    for name, html, pages, title in jobs:
        info = build_pdf(html, out / name, pages, title)
        summary[name] = info
        print(f"{info['path']}: {info['pages']} pages, {info['bookmarks']} bookmarks, "
              f"from {info['html_pages']} HTML pages ({info['seconds']:.0f} s)")
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0


# --- the executed notebooks (the branch the launch buttons open; _ext/executed.py) -----------


def cmd_executed_notebooks(args) -> int:
    from executed import write_executed_notebooks

    written = write_executed_notebooks(Path(args.out), Path(args.cache))
    print(f"{len(written)} executed notebooks in {Path(args.out).resolve()}/chapters")
    return 0


def cmd_executed_commit(args) -> int:
    from executed import commit_message

    print(students_commit(Path(args.notebooks), args.ref, message=commit_message(args.ref)))
    return 0


def cmd_executed_branch(args) -> int:
    from executed import executed_branch

    print(executed_branch())
    return 0


def _executed_commands(sub, out_root: Path) -> None:
    e = sub.add_parser("executed-notebooks", help="the chapters with the book's outputs and evaluated {eval} expressions")
    e.add_argument("--out", default=str(out_root / "executed"))
    e.add_argument("--cache", default=str(out_root / ".jupyter_cache"))
    e.set_defaults(func=cmd_executed_notebooks)
    c = sub.add_parser("executed-commit", help="a parentless commit of the executed tree (for the executed branch)")
    c.add_argument("--ref", default="HEAD")
    c.add_argument("--notebooks", default=str(out_root / "executed"))
    c.set_defaults(func=cmd_executed_commit)
    b = sub.add_parser("executed-branch", help="print the branch the launch buttons open")
    b.set_defaults(func=cmd_executed_branch)


# --- the portable notebooks (what the Colab button opens; _ext/portable.py) -------------------


def portable_branch(edition: str, root: Path = ROOT) -> str:
    """The branch the Colab button of *edition* opens (``dpmask_notebooks_branch`` or
    ``dpmask_students_notebooks_branch`` in _config.yml)."""
    from book_config import DEFAULT_NOTEBOOKS_BRANCH, DEFAULT_STUDENTS_NOTEBOOKS_BRANCH, config

    sphinx_cfg = (config(root).get("sphinx") or {}).get("config") or {}
    key, default = (("dpmask_students_notebooks_branch", DEFAULT_STUDENTS_NOTEBOOKS_BRANCH) if edition == "students"
                    else ("dpmask_notebooks_branch", DEFAULT_NOTEBOOKS_BRANCH))
    branch = str(sphinx_cfg.get(key, default))
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$", branch):
        raise ValueError(f"{key} must be a git branch name, got {branch!r}")
    return branch


def cmd_portable_commit(args) -> int:
    msg = (f"The portable notebooks ({args.edition} edition) of {args.ref}: the chapters as any notebook "
           "viewer shows the book\n\nWritten by `python _ext/editions.py portable-commit` from "
           "_build/portable (_ext/portable.py); what the Colab button opens. A commit without parents.")
    print(students_commit(Path(args.notebooks) / args.edition, args.ref, message=msg))
    return 0


def cmd_portable_branch(args) -> int:
    print(portable_branch(args.edition))
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
    s.add_argument("--notebooks", default=str(out_root / "students" / "notebooks"))
    s.add_argument("--cache", default=str(out_root / ".jupyter_cache"))
    s.set_defaults(func=cmd_students)
    n = sub.add_parser("student-notebooks", help="only the solution-free notebooks (no HTML)")
    n.add_argument("--out", default=str(out_root / "students" / "notebooks"))
    n.add_argument("--from", dest="source", default=str(ROOT),
                   help="a folder with chapters/*.ipynb: the repository (default) or the executed notebooks")
    n.set_defaults(func=cmd_student_notebooks)
    br = sub.add_parser("students-branch", help="print the branch the student edition's launch buttons open")
    br.set_defaults(func=cmd_students_branch)
    c = sub.add_parser("students-commit", help="a parentless commit of the solution-free tree (for the students branch)")
    c.add_argument("--ref", default="HEAD")
    c.add_argument("--notebooks", default=str(out_root / "students" / "notebooks"))
    c.set_defaults(func=cmd_students_commit)
    _executed_commands(sub, out_root)
    pc = sub.add_parser("portable-commit", help="a parentless commit of one edition's portable notebooks")
    pc.add_argument("--edition", choices=["full", "students"], default="full")
    pc.add_argument("--ref", default="HEAD")
    pc.add_argument("--notebooks", default=str(out_root / "portable"))
    pc.set_defaults(func=cmd_portable_commit)
    pb = sub.add_parser("portable-branch", help="print the branch the Colab button of an edition opens")
    pb.add_argument("--edition", choices=["full", "students"], default="full")
    pb.set_defaults(func=cmd_portable_branch)
    p = sub.add_parser("pdf", help="print the built HTML to PDFs")
    p.add_argument("--full-html", default=str(out_root / "html"))
    p.add_argument("--students-html", default=str(out_root / "students" / "html"))
    p.add_argument("--out", default=str(out_root / "pdf"))
    p.set_defaults(func=cmd_pdf)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
