"""Write the built book's numbers into the chapters' sources, for JupyterLab: ``python _ext/sync_numbers.py``.

jupyterlab-myst numbers a notebook's statements, exercises, equations and figures 1, 2, ... on its
own (with separate counters for lemmas, theorems and corollaries, where the book shares one), and
it cannot resolve a reference into another notebook.  So the sources carry the book's numbers:

- ``:enumerator: N`` on every labelled statement (``{prf:...}``), exercise and ``{math}`` directive;
- ``number="N"`` on every :func:`dpmask.book.show_figure` call;
- an explicit text on every reference JupyterLab cannot resolve: ``{prf:ref}`Theorem 3.4 <thm-3-4>```
  and ``{ref}``/``{eq}`` into another notebook, every ``{doc}`` (the page title) and every
  reference to a figure (written ``{ref}`Fig. 5.3 <fig-5-offbyone>```, since a ``{numref}`` title
  must hold ``%s``, which JupyterLab would print);
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


def book_numbers(html_dir: Path | None = None):
    """What the built book prints: (numbers, equation numbers, page titles, section titles).

    ``numbers`` maps a label to "Theorem 3.2", "Exercise 3.1" or "Fig. 3.1"; ``equations`` a label
    to "(3.1)"; ``titles`` a chapter's file stem to its title; ``sections`` a label to its heading.
    """
    from bs4 import BeautifulSoup

    html_dir = Path(html_dir or ROOT / "_build" / "html") / "chapters"
    numbers, equations, titles, sections = {}, {}, {}, {}
    for page in sorted(html_dir.glob("*.html")):
        soup = BeautifulSoup(page.read_text(), "html.parser")
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
    here = set()
    for _, src in cells:
        here |= set(re.findall(r"^[ \t]*:label:\s*(\S+)", src, re.M))
        here |= set(re.findall(r"^[ \t]*:name:\s*(\S+)", src, re.M))
        here |= {m.group("name") for m in SHOW.finditer(src)}
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


def _sync_references(src, stem, here, book, notes):
    def one(m):
        role, body = m.group("role"), m.group("body")
        ex = EXPLICIT.match(body)
        target = (ex.group("target") if ex else body).strip()
        if role == "numref":
            role = "ref"  # a numref title must hold %s, which JupyterLab would print as it stands
        want = reference_text(role, target, book)
        if want is None:
            notes.append(f"{stem}: the book prints nothing for {{{role}}}`{target}`")
            return m.group(0)
        needs_text = role == "doc" or target not in here or (role == "ref" and target.startswith("fig"))
        if not needs_text and not ex:
            return m.group(0)  # resolved inside the notebook by jupyterlab-myst, from the enumerator
        return f"{{{role}}}`{want} <{target}>`"

    return ROLE.sub(one, src)


def _sync_figures(src, book, notes):
    numbers = book[0]

    def one(m):
        want = (numbers.get(m.group("name")) or "").split(" ")[-1]
        if not want:
            notes.append(f"the book prints no figure {m.group('name')}")
            return m.group(0)
        return f'show_figure({m.group("var")}, "{m.group("name")}", number="{want}"'

    return SHOW.sub(one, src)


def sync_notebook(path: Path, book, write=True):
    """Bring one notebook's numbers in line with *book*; return (changed cells, notes)."""
    nb = json.loads(path.read_text())
    cells = [(c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"])) for c in nb["cells"]]
    here = _labels_defined(cells)
    notes, changed = [], 0
    for cell, (kind, src) in zip(nb["cells"], cells):
        if kind == "markdown":
            new = _sync_references(_sync_directives(src, book, notes), path.stem, here, book, notes)
        elif kind == "code":
            new = _sync_figures(src, book, notes)
            if "show_figure(" in new:  # captions are prose: their references too
                new = re.sub(r'(caption=r""")(.*?)(""")',
                             lambda mm: mm.group(1) + _sync_references(mm.group(2), path.stem, here, book, notes) + mm.group(3),
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
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        changed, notes = sync_notebook(path, book, write=not check)
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
