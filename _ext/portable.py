"""Portable notebooks: the book in any notebook viewer (issue 29): ``python _ext/portable.py``.

The chapters are MyST: a viewer without jupyterlab-myst and the book's extension (Colab, VS Code,
GitHub, nbviewer, a university hub, nbconvert) shows every ``{eval}`` expression, directive fence,
bib key and cross-reference role as raw text.  This step writes, after ``make book``, one plain
notebook per chapter and edition, CommonMark and sanitisable HTML only:

``_build/portable/full/chapters/*.ipynb``
    from the executed notebooks (the book's jupyter-cache, as ``_ext/executed.py`` reads it);
``_build/portable/students/chapters/*.ipynb``
    the same after ``_ext/solutions.py`` has cut every solution out (as the student edition).

What each holds, every number and title taken from the built HTML (``sync_numbers.book_numbers``,
the tables the JupyterLab links use) and the citation table of the JupyterLab extension
(``jupyterlab/citations.py``):

- every ``{eval}`` replaced by the text the book prints (the glued value, ``format_glued``);
- every statement, exercise and proof as a paragraph headed with the book's kind, number and
  title ("**Lemma 3.1** (Density ratios)"), proofs ending with ∎; notes and warnings headed
  "**Note**"/"**Warning**"; an ``<a id="label"></a>`` before each labelled one;
- each labelled equation as ``$$ ... \\tag{3.1} $$`` after its ``<a id>``;
- citations as the book prints them ("[Dwork and Roth, 2014]"), linked to the online references
  page; ``{prf:ref}``, ``{eq}``, ``{ref}`` and links into other chapters as Markdown links: to the
  anchor in this notebook when the target is in it, else to the page of the online book
  (:func:`book_config.site_url`);
- every figure of :func:`dpmask.book.show_figure` as a markdown cell after its code cell, the
  image an attachment with the book's alt text, then the book's number and caption;
- after every explorer (an ipywidgets output), a markdown cell saying where it moves and, for the
  viewers where it cannot, its plot at the settings in its code (from the saved widget state),
  alt text naming those settings; the widget output's plain-text form a sentence, not the repr;
- solutions (full edition) in ``<details><summary>Solution to Exercise 3.1</summary>``; a
  solution's code cells collapsed;
- the code the book hides collapsed for JupyterLab and VS Code (``jupyter.source_hidden``) and
  Colab (``cellView: form``), its first line ``#@title`` saying what the cell does (what a viewer
  that honours neither shows above the code);
- the outputs, so that numbers and figures show before anything runs;
- first, an install cell that does nothing where ``dpmask`` imports and otherwise installs it,
  with its ``run`` extra, from the repository and branch of ``_config.yml``.

The HTML book's download button serves them (:func:`serve_downloads`: the full edition's in
``_build/html``; ``editions.py students`` the student edition's in its HTML), and the Colab button
opens them from the branches the publishing workflow fills (``editions.py portable-commit``).

tests/test_portable.py renders every notebook as nbconvert does and reads the text.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from book_config import ROOT, repository, site_url  # noqa: E402

EDITIONS = ("full", "students")
MARKER = "dpmask_portable"  # cell metadata: {"source_cell": i} or {"inserted": "install" | "figure" | "explorer"}

_EVAL = re.compile(r"\{eval\}(`+)(?P<expr>.*?)\1(?!`)", re.S)
_OPEN = re.compile(r"^(?P<ind>[ \t]*)(?P<fence>`{3,}|:{3,})[ \t]*(?:\{(?P<name>[\w:-]+)\})?(?P<arg>[^\n]*)$")
_OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):[ \t]*(?P<value>[^\n]*)$")
_TARGET = re.compile(r"^\((?P<label>[\w-]+)\)=[ \t]*$")
_ROLE = re.compile(r"\{(?P<role>prf:ref|ref|eq|numref|doc|cite:p|cite:t|cite:ps|cite:ts|cite)\}`(?P<body>[^`]*)`")
_EXPLICIT = re.compile(r"^(?P<text>.*\S)\s*<(?P<target>[^<>]+)>$", re.S)
_LINK = re.compile(r"(?<!!)\[(?P<text>[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*)\]\((?P<url>[^()\s]+)\)")
_FIGURE = re.compile(
    r"^(?P<fence>:{3,})\{figure\} data:image/png;base64,(?P<data>[A-Za-z0-9+/=]+)\n(?P<opts>(?::[\w-]+:[^\n]*\n)*)\n?(?P<body>.*?)\n(?P=fence)\s*$",
    re.S,
)
_KINDS = {"note": "Note", "warning": "Warning", "tip": "Tip", "important": "Important", "caution": "Caution",
          "attention": "Attention", "hint": "Hint", "seealso": "See also", "admonition": ""}
# what a solution's <details> says when its first stretch is code (the collapsed cells after it)
CODE_ONLY = "The solution is the code below (collapsed: open it to read it)."
HIDE_SOURCE = frozenset({"remove-cell", "hide-cell", "hide-input", "remove-input"})


def _src(cell) -> str:
    s = cell.get("source", "")
    return s if isinstance(s, str) else "".join(s)


# --- what the book prints ------------------------------------------------------------------


def _citations():
    sys.path.insert(0, str(Path(__file__).resolve().parent / "jupyterlab"))
    from citations import citation_table

    return citation_table()


class BookTables:
    def __init__(self, html_dir: Path | None = None, root: Path = ROOT, site: str | None = None):
        from sync_numbers import book_numbers, book_pages

        html_dir = Path(html_dir or Path(root) / "_build" / "html")
        self.numbers, self.equations, self.titles, self.sections = book_numbers(html_dir)
        if not self.numbers:
            raise SystemExit(f"no built book in {html_dir}: run `make book` first")
        self.pages = book_pages(html_dir)  # label -> "03_main_results.ipynb"
        self.citations = _citations()
        self.site = site or site_url(root)

    def page_url(self, source: str, anchor: str | None = None) -> str:
        """The online page of a source file ("03_main_results.ipynb", "course.md")."""
        stem = Path(source).stem
        url = f"{self.site}chapters/{stem}.html"
        return url + (f"#{anchor}" if anchor else "")

    def references_url(self) -> str:
        return f"{self.site}chapters/references.html"


# --- markdown ------------------------------------------------------------------------------


def _fill_evals(text: str, values: dict) -> str:
    from dpmask.book import EVAL_PATTERN, format_glued

    def one(m):
        expr = m.group("expr").strip()
        em = EVAL_PATTERN.match(expr)
        if em is None:
            raise ValueError(f"an {{eval}} expression the book does not accept: {expr!r}")
        key = em.group("key")
        if key not in values:
            raise KeyError(f"{expr!r}: nothing was glued under {key!r}")
        shown = format_glued(values[key], em.group("spec") or "")
        # A whole number that starts a line and is followed by "." or ")" would start an ordered
        # list in marked (JupyterLab): "more in\n12. The" drew "12" as a list marker and cut the
        # sentence.  Escaping the punctuation keeps it text in every CommonMark viewer.
        line = m.string[m.string.rfind("\n", 0, m.start()) + 1 : m.start()]
        if not line.strip() and shown.isdigit() and m.string[m.end() : m.end() + 1] in (".", ")"):
            shown += "\\"
        return shown

    return _EVAL.sub(one, text)


class Converter:
    """MyST markdown of one notebook -> CommonMark with the book's numbers."""

    def __init__(self, book: BookTables, stem: str, here: set[str]):
        self.book, self.stem, self.here = book, stem, here
        self.problems: list[str] = []
        self.exercise_titles: dict[str, str] = {}  # label -> the exercise's title, for its solution

    # links and roles ---------------------------------------------------------------------

    def _href(self, target: str) -> str:
        if target in self.here:
            return f"#{target}"
        page = self.book.pages.get(target)
        if page is None:
            self.problems.append(f"{self.stem}: no page of the book holds {target!r}")
            return self.book.page_url(self.stem + ".ipynb", target)
        return self.book.page_url(page, target)

    def _cite(self, role: str, body: str) -> str:
        keys = [k.strip() for k in body.split(",") if k.strip()]
        table = self.book.citations
        missing = [k for k in keys if k not in table]
        if missing:
            self.problems.append(f"{self.stem}: unknown citation keys {missing}")
            keys = [k for k in keys if k in table]
        keys.sort(key=lambda k: table[k]["rank"])
        url = self.book.references_url()
        if role.startswith("cite:t"):
            return ", ".join(f"{table[k]['names']} \\[[{table[k]['year']}]({url})\\]" for k in keys)
        inner = ", ".join(f"[{table[k]['names']}, {table[k]['year']}]({url})" for k in keys)
        return f"\\[{inner}\\]"

    def _role(self, m) -> str:
        role, body = m.group("role"), m.group("body")
        if role.startswith("cite"):
            return self._cite(role, body)
        ex = _EXPLICIT.match(body)
        target = (ex.group("target") if ex else body).strip()
        if role == "doc":
            stem = target.split("/")[-1]
            text = ex.group("text") if ex else self.book.titles.get(stem, stem)
            return f"[{text}]({self.book.page_url(stem + '.html')})"
        if ex:
            text = ex.group("text")
        elif role == "eq":
            text = self.book.equations.get(target)
        elif role == "ref":
            text = self.book.numbers.get(target) or self.book.sections.get(target)
        else:
            text = self.book.numbers.get(target)
        if text is None:
            self.problems.append(f"{self.stem}: the book prints nothing for {{{role}}}`{target}`")
            text = target
        if "%s" in text:  # a numref title
            text = text.replace("%s", (self.book.numbers.get(target) or "").split(" ")[-1])
        return f"[{text}]({self._href(target)})"

    def _link(self, m) -> str:
        text, url = m.group("text"), m.group("url")
        if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith("#"):
            return m.group(0)
        path, _, anchor = url.partition("#")
        name = Path(path).name
        if Path(name).stem == self.stem and (not anchor or anchor in self.here):
            return f"[{text}](#{anchor})" if anchor else m.group(0)
        if Path(name).suffix in (".ipynb", ".md"):
            return f"[{text}]({self.book.page_url(name, anchor or None)})"
        return m.group(0)

    def inline(self, text: str) -> str:
        text = _ROLE.sub(self._role, text)
        return _LINK.sub(self._link, text)

    # blocks -------------------------------------------------------------------------------

    def blocks(self, text: str) -> str:
        lines = text.split("\n")
        out: list[str] = []
        prose: list[str] = []

        def flush():
            if prose:
                out.append(self.inline("\n".join(prose)))
                prose.clear()

        i = 0
        while i < len(lines):
            line = lines[i]
            m = _OPEN.match(line)
            if m:
                fence = m.group("fence")
                j = i + 1
                while j < len(lines) and not re.match(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", lines[j]):
                    j += 1
                flush()
                if m.group("name"):
                    k = i + 1
                    opts = {}
                    while k < j and _OPTION.match(lines[k]):
                        om = _OPTION.match(lines[k])
                        opts[om.group("key")] = om.group("value").strip()
                        k += 1
                    out.append(self.directive(m.group("name"), m.group("arg").strip(), opts, "\n".join(lines[k:j]).strip("\n")))
                else:
                    out.append("\n".join(lines[i : j + 1]))  # a code block, as it stands
                i = j + 1
                continue
            t = _TARGET.match(line)
            if t:
                flush()
                out.append(f'<a id="{t.group("label")}"></a>\n')
            elif re.match(r"^%", line):
                pass  # a MyST comment
            else:
                prose.append(line)
            i += 1
        flush()
        return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")

    def _heading(self, kind: str, label: str | None, title: str, fallback: str) -> str:
        number = self.book.numbers.get(label) if label else None
        if label and number is None:
            self.problems.append(f"{self.stem}: the book prints no number for {kind} {label}")
        head = f"**{number or fallback}**"
        # an appendix statement's title is "A.1 (title)" (live_numbers: the number leads it)
        if number and title.startswith(number.split(" ")[-1]):
            title = title[len(number.split(" ")[-1]):].strip()
            title = title[1:-1] if title.startswith("(") and title.endswith(")") else title
        return head + (f" ({self.inline(title)})" if title else "")

    def directive(self, name: str, arg: str, opts: dict, body: str) -> str:
        label = opts.get("label") or opts.get("name")
        anchor = f'<a id="{label}"></a>\n' if label else ""
        if name == "math":
            number = self.book.equations.get(label, "").strip("()") if label else ""
            if label and not number:
                self.problems.append(f"{self.stem}: the book prints no number for equation {label}")
            tag = f" \\tag{{{number}}}" if number else ""
            return f"{anchor}\n$$\n{body.strip()}{tag}\n$$"
        if name == "prf:proof":
            inner = self.blocks(body)
            last = inner.rstrip().split("\n")[-1] if inner.strip() else ""
            end = "\n\n∎" if (not last or last.strip() in ("$$", "```", ":::") or last.startswith(("<", "|"))) else " ∎"
            return f"{anchor}**Proof.**" + (f" {arg}" if arg else "") + f"\n\n{inner.rstrip()}{end}"
        if name.startswith("prf:") or name == "exercise":
            kind = name.split(":")[-1].capitalize()
            return f"{anchor}{self._heading(name, label, arg, kind)}\n\n{self.blocks(body)}"
        if name in _KINDS:
            head = _KINDS[name] if name != "admonition" else arg
            return f"{anchor}**{self.inline(head)}**\n\n{self.blocks(body)}"
        if name == "solution":
            return self.solution_open(arg) + "\n\n" + self.blocks(body) + "\n\n</details>"
        if name in ("solution-start", "solution-end"):
            raise AssertionError("gated solutions are handled cell by cell")
        self.problems.append(f"{self.stem}: directive {{{name}}} has no portable form; its body is kept")
        return f"{anchor}{self.blocks(body)}"

    def solution_open(self, target: str, cont: bool = False) -> str:
        """The book's solution title ("Solution to Exercise 7.1 (The criterion by hand)")."""
        number = self.book.numbers.get(target.strip(), target)
        title = self.exercise_titles.get(target.strip())
        title = f" ({self.inline(title)})" if title else ""
        more = " (continued)" if cont else ""
        return f"<details>\n<summary>Solution to {number}{title}{more}</summary>"


# --- cells -------------------------------------------------------------------------------------


def _split_gated(text: str, inside: bool):
    """Split a markdown cell at ``{solution-start}``/``{solution-end}`` fences.

    Returns ``[(inside_solution, exercise_label, text), ...]`` and whether the cell ends inside.
    """
    parts, cur, lines, i, target = [], [], text.split("\n"), 0, None
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if m and m.group("name") in ("solution-start", "solution-end"):
            fence = m.group("fence")
            j = i + 1
            while j < len(lines) and not re.match(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", lines[j]):
                j += 1
            parts.append((inside, "\n".join(cur)))
            cur = []
            inside = m.group("name") == "solution-start"
            if inside:
                target = m.group("arg").strip()
                parts.append(("start", target))
            i = j + 1
            continue
        cur.append(lines[i])
        i += 1
    parts.append((inside, "\n".join(cur)))
    return parts, inside


def _title_of(code: str, tags: set[str]) -> str:
    """One line saying what a hidden code cell does: its own first comment, else a plain guess."""
    first = code.lstrip("\n").split("\n", 1)[0].strip()
    if first.startswith("#@title"):
        return first[len("#@title"):].strip()
    if first.startswith("#") and len(first) > 3:
        return first.lstrip("#").strip()
    if "show_figure(" in code:
        return "Draws the figure below"
    if re.search(r"^\s*assert\b", code, re.M):
        return "Checks the claims of the text above (asserts)"
    if "glue" in code:
        return "Computes the numbers the text prints"
    if re.search(r"^\s*(import|from)\s", code, re.M):
        return "Set-up: imports"
    return "Code the book hides: computes what the text and figures use"


def _figure_cell(data: str, opts: dict, body: str, conv: Converter) -> dict:
    name = opts.get("name", "figure")
    alt = opts.get("alt", "").replace("[", "(").replace("]", ")")
    number = conv.book.numbers.get(name)
    if number is None:
        conv.problems.append(f"{conv.stem}: the book prints no number for figure {name}")
    caption = conv.blocks(_fill_evals_none(body))
    src = f'<a id="{name}"></a>\n\n![{alt}](attachment:{name}.png)\n\n**{number or "Figure"}.** {caption}\n'
    return {
        "cell_type": "markdown",
        "attachments": {f"{name}.png": {"image/png": data}},
        "metadata": {MARKER: {"inserted": "figure", "name": name}},
        "source": src,
    }


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# what a viewer that cannot run widgets shows for an explorer: this sentence, then its figure
EXPLORER_NOTE = ("*The explorer above moves where this notebook runs with widgets (JupyterLab or VS Code "
                 "with a kernel, Colab after its first cell). Where it cannot (GitHub, nbviewer, a viewer "
                 "without a kernel), here is its plot at the settings in its code.*")
EXPLORER_PLAIN = "An explorer (sliders and a plot): its plot at these settings follows."


def _widget_state(nb: dict) -> dict:
    return ((nb.get("metadata", {}).get("widgets") or {}).get("application/vnd.jupyter.widget-state+json")
            or {}).get("state", {})


def _explorer_parts(state: dict, model_id: str):
    """(the PNG of the explorer's plot as base64 or None, its settings as "ε = 0.1" strings), read
    from the saved widget state under the explorer's top box *model_id*, in the order shown."""
    png, setting, todo, seen = None, [], [model_id], set()
    while todo:
        mid = todo.pop(0)
        if mid in seen or mid not in state:
            continue
        seen.add(mid)
        model = state[mid]
        name, st = model.get("model_name", ""), model.get("state", {})
        if name == "ImageModel" and png is None:
            png = next((b["data"] for b in model.get("buffers", []) if b.get("path") == ["value"]), None)
        elif name.endswith("SliderModel") and st.get("description"):
            value = st.get("value")
            setting.append(f"{st['description']} = {value:g}" if isinstance(value, (int, float)) else st["description"])
        elif "_options_labels" in st and st.get("index") is not None and st.get("description"):
            setting.append(f"{st['description']} {st['_options_labels'][st['index']]}")
        todo.extend(c.removeprefix("IPY_MODEL_") for c in st.get("children", []) if isinstance(c, str))
    return png, setting


def _explorer_cell(nb: dict, view: dict, count: int, conv: Converter) -> dict | None:
    """The markdown cell after an explorer's code cell: the sentence, then its plot (an attachment
    with alt text naming its settings); None (and a problem noted) if the state holds no plot."""
    png, setting = _explorer_parts(_widget_state(nb), view.get("model_id", ""))
    if png is None:
        conv.problems.append(f"{conv.stem}: an explorer's saved state holds no plot")
        return None
    name = f"explorer-{count}"
    alt = "Plot of the explorer at its starting setting" + (": " + ", ".join(setting) if setting else "")
    alt = alt.replace("[", "(").replace("]", ")")
    return {
        "cell_type": "markdown",
        "attachments": {f"{name}.png": {"image/png": png}},
        "metadata": {MARKER: {"inserted": "explorer", "name": name}},
        "source": f"{EXPLORER_NOTE}\n\n![{alt}](attachment:{name}.png)\n",
    }


def _fill_evals_none(text: str) -> str:
    if _EVAL.search(text):
        raise ValueError(f"a figure caption still holds an {{eval}}: {text[:80]!r}")
    return text


def install_cell(root: Path = ROOT) -> dict:
    url, branch = repository(root)
    spec = f"dpmask[run] @ git+{url}@{branch}"
    src = (
        "#@title Install dpmask where it is missing (does nothing where it imports)\n"
        "# The book's package and what its chapters need to run, from the book's repository.\n"
        "try:\n"
        "    import dpmask  # noqa: F401\n"
        "except ImportError:\n"
        f'    %pip install --quiet "{spec}"\n'
        "try:  # Colab draws ipywidgets 8 (the explorers) only with its custom widget manager\n"
        "    from google.colab import output\n"
        "    output.enable_custom_widget_manager()\n"
        "except ImportError:\n"
        "    pass\n"
    )
    return {"cell_type": "code", "execution_count": None, "id": "dpmask-install",
            "metadata": {"cellView": "form", MARKER: {"inserted": "install"}}, "outputs": [], "source": src}


def install_spec(root: Path = ROOT) -> str:
    """The requirement the install cell passes to pip."""
    url, branch = repository(root)
    return f"dpmask[run] @ git+{url}@{branch}"


def convert(nb: dict, stem: str, book: BookTables, values: dict, edition: str, root: Path = ROOT) -> tuple[dict, list[str]]:
    """The portable form of the executed notebook *nb* (already solution-free for the students)."""
    nb = copy.deepcopy(nb)
    here = set()
    for cell in nb["cells"]:
        s = _src(cell)
        if cell["cell_type"] == "markdown":
            here |= set(re.findall(r"^[ \t]*:(?:label|name):\s*(\S+)", s, re.M))
            here |= set(re.findall(r"^\(([\w-]+)\)=[ \t]*$", s, re.M))
        for out in cell.get("outputs", []) if cell["cell_type"] == "code" else []:
            md = (out.get("data") or {}).get("text/markdown")
            if md:
                here |= set(re.findall(r"^:name:\s*(\S+)", md if isinstance(md, str) else "".join(md), re.M))
    conv = Converter(book, stem, here)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for m in re.finditer(r"^[ \t]*(?:`{3,}|:{3,})\{exercise\}[ \t]*(?P<title>[^\n]*)\n(?:[ \t]*:[\w-]+:[^\n]*\n)*?[ \t]*:label:[ \t]*(?P<label>\S+)",
                                 _src(cell), re.M):
                if m.group("title").strip():
                    conv.exercise_titles[m.group("label")] = m.group("title").strip()
    cells = [install_cell(root)]
    inside, exercise, headed = False, None, True
    explorers = 0
    for index, cell in enumerate(nb["cells"]):
        kind = cell["cell_type"]
        meta = {k: v for k, v in cell.get("metadata", {}).items() if k not in ("user_expressions",)}
        meta[MARKER] = cell.get("metadata", {}).get(MARKER) or {"source_cell": index}
        if kind in ("markdown", "raw"):
            text = _fill_evals(_src(cell), values)
            parts, inside = _split_gated(text, inside)
            pieces = []
            for state, part in parts:
                if state == "start":
                    exercise, headed = part, False
                    continue
                if edition == "students" and state:
                    raise ValueError(f"{stem}: a solution is left in the student edition")
                body = conv.blocks(part)
                if state and body.strip():
                    # the book heads a solution once; a later stretch of its text, after its code
                    # cells, says that it continues
                    body = conv.solution_open(exercise, headed) + "\n\n" + body + "\n\n</details>"
                    headed = True
                if body.strip():
                    pieces.append(body)
            new = "\n\n".join(pieces).strip("\n")
            if not new:
                continue
            meta.pop("jupyter", None)  # the <details> collapses a solution where any viewer shows it
            cells.append({"cell_type": "markdown", "metadata": meta, "source": new + "\n",
                          **({"id": cell["id"]} if "id" in cell else {}),
                          **({"attachments": cell["attachments"]} if cell.get("attachments") else {})})
            continue
        # a code cell
        if inside and not headed:  # a solution whose first stretch is code: its heading first
            cells.append({"cell_type": "markdown", "metadata": {MARKER: {"inserted": "solution"}},
                          "source": conv.solution_open(exercise) + "\n\n" + CODE_ONLY + "\n\n</details>\n"})
            headed = True
        code = _src(cell)
        tags = set(meta.get("tags", []))
        hidden = bool(tags & HIDE_SOURCE) or inside
        figures, outputs = [], []
        for out in cell.get("outputs", []):
            md = (out.get("data") or {}).get("text/markdown")
            md = md if isinstance(md, str) or md is None else "".join(md)
            fm = _FIGURE.match(md.strip()) if md else None
            if fm:
                opts = {om.group("key"): om.group("value").strip()
                        for om in map(_OPTION.match, fm.group("opts").strip("\n").split("\n")) if om}
                figures.append(_figure_cell(fm.group("data"), opts, fm.group("body"), conv))
            elif WIDGET_VIEW in (out.get("data") or {}):
                explorers += 1
                # the widget view where widgets run; elsewhere a sentence (not "VBox(children=...)")
                # and, in the next cell, the plot the saved state holds
                out = dict(out, data=dict(out["data"], **{"text/plain": EXPLORER_PLAIN}))
                outputs.append(out)
                cell_after = _explorer_cell(nb, out["data"][WIDGET_VIEW], explorers, conv)
                if cell_after is not None:
                    figures.append(cell_after)
            else:
                outputs.append(out)
        new = dict(cell, metadata=meta, outputs=outputs)
        if hidden:
            if inside and exercise:
                title = f"Solution to {book.numbers.get(exercise, exercise)} (code)"
                code = re.sub(r"^# Solution to Exercise \S+\n", "", code)
            else:
                title = _title_of(code, tags)
                first = code.lstrip("\n").split("\n", 1)
                if first[0].strip().startswith("#") and first[0].lstrip("#").strip() == title:
                    code = first[1] if len(first) > 1 else ""
            new["source"] = f"#@title {title}\n{code}"
            jup = dict(meta.get("jupyter", {}))
            jup["source_hidden"] = True
            if inside:
                jup["outputs_hidden"] = True
            meta["jupyter"] = jup
            meta["cellView"] = "form"
        cells.append(new)
        cells.extend(figures)
    if inside:
        raise ValueError(f"{stem}: a solution-start without its end")
    out = dict(nb, cells=cells)
    out["metadata"] = {k: v for k, v in nb.get("metadata", {}).items()}
    out["metadata"][MARKER] = {"edition": edition, "page": conv.book.page_url(stem + ".ipynb")}
    out["nbformat"], out["nbformat_minor"] = 4, max(5, nb.get("nbformat_minor", 5))
    return out, conv.problems


# --- the build step ----------------------------------------------------------------------------


def executed_notebooks(cache: Path, root: Path = ROOT):
    """(stem, executed notebook as a dict) for every chapter, from the jupyter-cache."""
    import nbformat
    from jupyter_cache import get_cache

    cache = Path(cache)
    if not cache.is_dir():
        raise SystemExit(f"no jupyter-cache at {cache}: run `make book` first")
    store = get_cache(str(cache))
    for path in sorted((Path(root) / "chapters").glob("*.ipynb")):
        nb = nbformat.read(str(path), nbformat.NO_CONVERT)
        try:
            _, merged = store.merge_match_into_notebook(nb)
        except KeyError:
            raise SystemExit(f"{path.name} has no up-to-date execution in {cache}: run `make book` first") from None
        yield path.stem, json.loads(nbformat.writes(merged))


def write_portable(out: Path, cache: Path, html: Path, root: Path = ROOT, editions=EDITIONS) -> dict:
    """Write both editions' portable notebooks under *out*/EDITION/chapters; return what was written."""
    from executed import glued_values
    from solutions import strip_solutions

    book = BookTables(html, root)
    out = Path(out)
    written, problems = {e: [] for e in editions}, []
    for e in editions:
        (out / e / "chapters").mkdir(parents=True, exist_ok=True)
    for stem, nb in executed_notebooks(cache, root):
        values = glued_values(nb)
        for i, cell in enumerate(nb["cells"]):  # each cell's place in the chapter, through strip_solutions
            cell.setdefault("metadata", {})[MARKER] = {"source_cell": i}
        for e in editions:
            src = nb if e == "full" else strip_solutions(nb)
            new, notes = convert(src, stem, book, values, e, root)
            problems += [f"{e}: {n}" for n in notes]
            target = out / e / "chapters" / f"{stem}.ipynb"
            # Whole or not at all: a reader of the folder (a test in the other lane of `make
            # test-slow`) sees the old notebook or the new one, never a half-written file.
            part = target.with_name(f".{target.name}.part")
            part.write_text(json.dumps(new, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            os.replace(part, target)
            written[e].append(target)
    for e in editions:  # a chapter no longer in the book leaves no notebook behind
        for old in (out / e / "chapters").glob("*.ipynb"):
            if old not in written[e]:
                old.unlink()
    if problems:
        raise SystemExit("the portable notebooks are not the book's:\n" + "\n".join(sorted(set(problems))))
    return written


def serve_downloads(html: Path, notebooks: Path) -> list[Path]:
    """Put the portable notebooks under *notebooks*/chapters where the HTML book's download button
    links (*html*/_sources/chapters): a reader who downloads a page gets the notebook any viewer
    shows as the book, not its MyST source.  Returns the files replaced."""
    served = []
    for src in sorted((Path(notebooks) / "chapters").glob("*.ipynb")):
        target = Path(html) / "_sources" / "chapters" / src.name
        if target.exists():
            target.write_bytes(src.read_bytes())
            served.append(target)
    return served


def main(argv=None) -> int:
    import os

    out_root = Path(os.environ.get("DPMASK_BOOK_OUT", ROOT)) / "_build"
    p = argparse.ArgumentParser(prog="portable.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(out_root / "portable"))
    p.add_argument("--cache", default=str(out_root / ".jupyter_cache"))
    p.add_argument("--html", default=str(out_root / "html"))
    p.add_argument("--edition", choices=EDITIONS, action="append",
                   help="only this edition (repeatable; default both)")
    p.add_argument("--serve", metavar="HTML", help="and put this edition's notebooks behind the download "
                   "button of the HTML book in HTML (default: the full edition's, in --html)")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    editions = tuple(args.edition or EDITIONS)
    written = write_portable(Path(args.out), Path(args.cache), Path(args.html), editions=editions)
    for e, paths in written.items():
        print(f"{len(paths)} portable notebooks ({e} edition) in {Path(args.out).resolve() / e / 'chapters'}")
    serve_edition = "full" if "full" in editions else editions[0]
    served = serve_downloads(Path(args.serve or args.html), Path(args.out) / serve_edition)
    print(f"{len(served)} download buttons of {Path(args.serve or args.html).resolve()} serve the {serve_edition} edition's")
    print(f"portable notebooks written in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
