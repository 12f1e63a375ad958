"""Write the built book's numbers into the chapters' sources, for JupyterLab: ``python _ext/sync_numbers.py``.

jupyterlab-myst numbers a notebook's statements, exercises, equations and figures 1, 2, ... on its
own (with separate counters for lemmas, theorems and corollaries, where the book shares one), and
it cannot resolve a reference into another notebook.  So the sources carry the book's numbers:

- ``:enumerator: N`` on every labelled statement (``{prf:...}``), exercise and ``{math}`` directive;
- ``number="N"`` on every :func:`dpmask.book.show_figure` call;
- every reference JupyterLab cannot resolve written as a Markdown link with the book's text:
  a reference into another notebook (``[Theorem 3.4](03_main_results.ipynb#thm-3-4)``), to a
  figure (made by a code cell's output, which jupyterlab-myst does not search:
  ``[Fig. 5.3](05_proofs.ipynb#fig-5-offbyone)``) and to a page (``[Main results](03_main_results.ipynb)``).
  jupyterlab-myst prints a console error for every role it cannot resolve, and renders a link as
  a link that JupyterLab opens; Sphinx resolves it like the role (``live_numbers.py`` lets
  myst-parser find every labelled target after ``#``).  A link's text is held to the book's
  number where the target is numbered; a role inside its own notebook keeps its explicit text;
- a ``:nonumber:`` on every proof (the book does not number proofs; jupyterlab-myst would).

Sphinx ignores all of these for numbering (``_ext/live_numbers.py`` lets the directives accept the
option), and tests/test_book.py holds each one to the number the built book prints.  After adding,
removing or moving a numbered statement, equation or figure: ``make book``, run this script, and
commit what it changed (it rewrites only these places, and says how many it changed).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

OPENING = re.compile(r"^(?P<ind>[ \t]*)(?P<fence>`{3,}|:{3,})\s*\{(?P<name>[\w:-]+)\}[^\n]*$", re.M)
OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):[ \t]*(?P<value>[^\n]*)$")
ROLE = re.compile(r"\{(?P<role>prf:ref|ref|eq|numref|doc)\}`(?P<body>[^`]*)`")
EXPLICIT = re.compile(r"^(?P<text>.*\S)\s*<(?P<target>[^<>]+)>$", re.S)
SHOW = re.compile(r'show_figure\((?P<var>[\w.\[\]]+),\s*"(?P<name>[\w-]+)"(?:,\s*number="(?P<number>[^"]*)")?')


LINK = re.compile(r"\[(?P<text>[^\[\]]*)\]\((?P<file>[\w-]+\.(?:ipynb|md))(?:#(?P<target>[\w-]+))?\)")


_PARSED: dict = {}


def _chapter_soups(html_dir: Path):
    """[(page, BeautifulSoup)] of the built chapter pages, each parsed once per process (the
    portable notebooks read both tables below; a page is megabytes of figures)."""
    from bs4 import BeautifulSoup

    pages = sorted(Path(html_dir).glob("*.html"))
    key = tuple((str(p), p.stat().st_mtime_ns) for p in pages)
    if key not in _PARSED:
        _PARSED.clear()
        _PARSED[key] = [(p, BeautifulSoup(p.read_text(), "html.parser")) for p in pages]
    return _PARSED[key]


def book_pages(html_dir: Path | None = None) -> dict:
    """Map every id of the built book's chapter pages (an equation under its label) to its page's file."""

    html_dir = Path(html_dir or ROOT / "_build" / "html") / "chapters"
    pages = {}
    for page, soup in _chapter_soups(html_dir):
        source = next((p.name for p in (ROOT / "chapters").glob(page.stem + ".*") if p.suffix in (".ipynb", ".md")), None)
        if source is None:
            continue
        for el in soup.select("[id]"):
            label = el["id"][len("equation-"):] if el["id"].startswith("equation-") else el["id"]
            pages.setdefault(label, source)
        pages[page.stem] = source  # a page by its name (a {doc} target)
    return pages


def book_numbers(html_dir: Path | None = None):
    """What the built book prints: (numbers, equation numbers, page titles, section titles).

    ``numbers`` maps a label to "Theorem 3.2", "Exercise 3.1" or "Fig. 3.1"; ``equations`` a label
    to "(3.1)"; ``titles`` a chapter's file stem to its title; ``sections`` a label to its heading.
    """

    html_dir = Path(html_dir or ROOT / "_build" / "html") / "chapters"
    numbers, equations, titles, sections = {}, {}, {}, {}
    for page, soup in _chapter_soups(html_dir):
        h1 = soup.select_one("main h1")
        if h1:
            t = h1.get_text(" ", strip=True).rstrip("#").strip()
            titles[page.stem] = re.sub(r"^\d+(\.\d+)*\.?\s+", "", t)
        for d in soup.select("div.proof, div.exercise, figure"):
            cap = d.select_one(".caption-number")
            if d.get("id") and cap:
                numbers[d["id"]] = cap.get_text(" ", strip=True)
        for e in soup.select("div.math"):
            if (e.get("id") or "").startswith("equation-") and e.select_one(".eqno"):
                equations[e["id"][len("equation-"):]] = e.select_one(".eqno").get_text(strip=True).rstrip("#")
        for sec in soup.select("section[id]"):
            h = sec.find(re.compile("^h[1-6]$"))
            if h:
                sections[sec["id"]] = h.get_text(" ", strip=True).rstrip("#").strip()
    return numbers, equations, titles, sections


def _labels_defined(cells):
    """The labels jupyterlab-myst resolves in this notebook: those its markdown cells define."""
    here = set()
    for kind, src in cells:
        if kind != "markdown":
            continue
        here |= set(re.findall(r"^[ \t]*:label:\s*(\S+)", src, re.M))
        here |= set(re.findall(r"^[ \t]*:name:\s*(\S+)", src, re.M))
        here |= set(re.findall(r"^\(([\w-]+)\)=[ \t]*$", src, re.M))
    return here


def reference_text(role, target, book):
    """The text the book prints for a reference, or None if the book has no such target."""
    numbers, equations, titles, sections = book
    if role == "doc":
        return titles.get(target.split("/")[-1])
    if role == "eq":
        return equations.get(target)
    if role == "ref":
        return numbers.get(target) or sections.get(target)
    return numbers.get(target)


def _sync_directives(src, book, notes):
    numbers, equations, _, _ = book
    lines = src.split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        m = OPENING.match(line)
        if not m:
            i += 1
            continue
        name, ind = m.group("name"), m.group("ind")
        j = i + 1
        opts = []
        while j < len(lines) and OPTION.match(lines[j]):
            opts.append(lines[j])
            j += 1
        keys = {OPTION.match(o).group("key"): OPTION.match(o).group("value").strip() for o in opts}
        if name == "prf:proof":
            if "nonumber" not in keys:
                opts.insert(0, f"{ind}:nonumber:")
        elif (name.startswith("prf:") or name in ("exercise", "math")) and "label" in keys and "nonumber" not in keys:
            label = keys["label"]
            want = (equations.get(label) or "").strip("()") if name == "math" else (numbers.get(label) or "").split(" ")[-1]
            if not want:
                notes.append(f"the book prints no number for {name} {label}")
            else:
                opts = [o for o in opts if OPTION.match(o).group("key") != "enumerator"]
                at = next(k for k, o in enumerate(opts) if OPTION.match(o).group("key") == "label") + 1
                opts.insert(at, f"{ind}:enumerator: {want}")
        out.extend(opts)
        i = j
    return "\n".join(out)


def numbered_text(target, book):
    """The number the book prints for *target* ("Theorem 3.4", "(3.1)", "Fig. 5.3"), or None."""
    numbers, equations, _, _ = book
    return numbers.get(target) or equations.get(target)


def _sync_references(src, stem, here, book, notes, pages):
    def role(m):
        role, body = m.group("role"), m.group("body")
        ex = EXPLICIT.match(body)
        target = (ex.group("target") if ex else body).strip()
        if role == "numref":
            role = "ref"  # a numref title must hold %s, which JupyterLab would print as it stands
        want = reference_text(role, target, book)
        if want is None:
            notes.append(f"{stem}: the book prints nothing for {{{role}}}`{target}`")
            return m.group(0)
        if role == "doc":
            page = pages.get(target.split("/")[-1])
            return f"[{want}]({page})" if page else m.group(0)
        if target not in here:
            page = pages.get(target)
            if page is None:
                notes.append(f"{stem}: no page of the book holds {target}")
                return m.group(0)
            return f"[{want}]({page}#{target})"
        if not ex:
            return m.group(0)  # resolved inside the notebook by jupyterlab-myst, from the enumerator
        return f"{{{role}}}`{want} <{target}>`"

    def link(m):
        target = m.group("target")
        want = numbered_text(target, book) if target else None
        if want is None or m.group("text") == want:
            return m.group(0)  # a page or a section: the text is the prose's own
        return f"[{want}]({m.group('file')}#{target})"

    return LINK.sub(link, ROLE.sub(role, src))


def _sync_figures(src, book, notes):
    numbers = book[0]

    def one(m):
        want = (numbers.get(m.group("name")) or "").split(" ")[-1]
        if not want:
            notes.append(f"the book prints no figure {m.group('name')}")
            return m.group(0)
        return f'show_figure({m.group("var")}, "{m.group("name")}", number="{want}"'

    return SHOW.sub(one, src)


def sync_notebook(path: Path, book, write=True, pages=None):
    """Bring one notebook's numbers in line with *book*; return (changed cells, notes)."""
    pages = book_pages() if pages is None else pages
    nb = json.loads(path.read_text())
    cells = [(c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"])) for c in nb["cells"]]
    here = _labels_defined(cells)
    notes, changed = [], 0
    for cell, (kind, src) in zip(nb["cells"], cells):
        if kind == "markdown":
            new = _sync_references(_sync_directives(src, book, notes), path.stem, here, book, notes, pages)
        elif kind == "code":
            new = _sync_figures(src, book, notes)
            if "show_figure(" in new:  # captions are prose: their references too
                new = re.sub(r'(caption=r""")(.*?)(""")',
                             lambda mm: mm.group(1) + _sync_references(mm.group(2), path.stem, here, book, notes, pages) + mm.group(3),
                             new, flags=re.S)
        else:
            continue
        if new != src:
            changed += 1
            cell["source"] = new if isinstance(cell["source"], str) else new.splitlines(keepends=True)
    if changed and write:
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return changed, notes


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    book = book_numbers()
    if not book[0]:
        print("no built book: run `make book` first")
        return 2
    total, problems = 0, []
    pages = book_pages()
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        changed, notes = sync_notebook(path, book, write=not check, pages=pages)
        total += changed
        problems += notes
        if changed:
            print(f"{path.name}: {changed} cell(s) {'would change' if check else 'updated'}")
    for n in problems:
        print("note:", n)
    print(f"{total} cell(s) {'out of step' if check else 'changed'}")
    return 1 if (check and total) else 0


if __name__ == "__main__":
    sys.exit(main())
