"""The portable notebooks (issue 29) read as the book where a plain notebook viewer shows them.

nbconvert's ``HTMLExporter(template_name="lab")`` is the stand-in for the CommonMark +
sanitised-HTML renderers of GitHub, VS Code, nbviewer and a JupyterLab without jupyterlab-myst
(/work/shared/TOOLCHAIN.md).  For every chapter and both editions its HTML is parsed and read:

- no raw MyST: no ``{eval}``, ``{prf:``, ``{cite``, ``{eq}``, ``{ref}`` role, no directive fence
  (```` ```{ ````, ``:::{``), no bib key, no base64 as text, in the markdown and the outputs;
- the numbers the prose prints equal the built book's (its ``span.pasted-text``), in order, each
  in the cell that holds it;
- the statements' and exercises' headings equal the book's ("Lemma 3.1 (Density ratios)"), every
  proof ends with ∎;
- every figure of the book's page is an ``<img>`` with alt text, with the book's number;
- the student edition holds no solution.

:func:`screen_problems` is the check; the planted-slip tests below feed it a notebook with one
slip each (a raw ``{eval}``, a wrong statement kind, a solution in the student edition, a figure
without alt text) and a book of two statements, and need no build.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from conftest import MEASURED_CHAPTERS

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("DPMASK_BOOK_OUT", ROOT))
HTML = OUT / "_build" / "html"
PORTABLE = OUT / "_build" / "portable"
CHAPTERS = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))
MARKER = "dpmask_portable"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

RAW = re.compile(r"\{(eval|prf:[\w-]+|cite(:\w+)?|eq|ref|numref|doc|figure|math|exercise|solution[\w-]*)\}|^\s*(`{3,}|:{3,})\s*\{", re.M)
EVAL_ROLE = re.compile(r"\{eval\}(`+)(.*?)\1(?!`)", re.S)
BASE64 = re.compile(r"[A-Za-z0-9+/]{200,}")


def _norm(text: str) -> str:
    # the book typesets quotes (smartquotes) and writes math as \(...\), the notebook as $...$
    text = unicodedata.normalize("NFKC", text).replace("\\(", "").replace("\\)", "").replace("$", "")
    text = text.translate(str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'}))
    return re.sub(r"\s+([).,;:])", r"\1", re.sub(r"\s+", " ", text)).strip()


def bib_keys() -> set[str]:
    return set(re.findall(r"@\w+\{([^,\s]+),", (ROOT / "references.bib").read_text()))


# --- what a plain viewer shows -------------------------------------------------------------------


def render(nb: dict):
    """nbconvert's lab HTML of *nb*, one BeautifulSoup element per cell (the notebook's order)."""
    import nbformat
    from bs4 import BeautifulSoup
    from nbconvert import HTMLExporter

    node = nbformat.reads(json.dumps(nb), as_version=4)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(node)
    soup = BeautifulSoup(body, "html.parser")
    cells = soup.select("div.jp-Cell")
    assert len(cells) == len(nb["cells"]), (len(cells), len(nb["cells"]))
    return cells


def _shown(cell_el, kind: str):
    """The element a reader reads: a markdown cell's rendering, a code cell's outputs."""
    if kind == "markdown":
        return cell_el.select_one(".jp-RenderedMarkdown, .jp-MarkdownOutput") or cell_el
    return cell_el.select_one(".jp-Cell-outputWrapper, .jp-OutputArea") or cell_el.new_tag("div")


def _text(el) -> str:
    el = copy.copy(el)
    for s in el.find_all(["script", "style"]):
        s.decompose()
    return el.get_text(" ")


# --- the book's truth ----------------------------------------------------------------------------


def book_truth(stem: str, edition: str, html: Path = HTML) -> dict:
    """What the built book shows on chapter *stem*, by source cell, as the check needs it.

    ``numbers``: {source cell index: [texts of its {eval}s, in order]} (for the student edition,
    those of the text the edition keeps); ``headings``: {label: heading text};
    ``figures``: {label: "Fig. 3.1"}; ``solutions``: whether solutions may appear.
    """
    from bs4 import BeautifulSoup

    sys.path.insert(0, str(ROOT / "_ext"))
    from solutions import strip_solutions

    main = BeautifulSoup((html / "chapters" / f"{stem}.html").read_text(), "html.parser").select_one("main")
    pasted = [s.get_text() for s in main.select("span.pasted-text")]
    nb = json.loads((ROOT / "chapters" / f"{stem}.ipynb").read_text())
    per_cell, k = {}, 0
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        exprs = [m.group(2) for m in EVAL_ROLE.finditer("".join(cell["source"]))]
        per_cell[i] = list(zip(exprs, pasted[k : k + len(exprs)]))
        k += len(exprs)
    assert k == len(pasted), f"{stem}: {k} expressions in the source, {len(pasted)} numbers in the book"
    numbers = {i: [t for _, t in pairs] for i, pairs in per_cell.items()}
    if edition == "students":
        for i, cell in enumerate(nb["cells"]):
            cell.setdefault("metadata", {})[MARKER] = {"source_cell": i}
        numbers = {}
        for cell in strip_solutions(nb)["cells"]:
            i = cell["metadata"][MARKER]["source_cell"]
            if cell["cell_type"] != "markdown":
                continue
            kept, pairs = [m.group(2) for m in EVAL_ROLE.finditer("".join(cell["source"]))], iter(per_cell[i])
            numbers[i] = [next(t for e, t in pairs if e == want) for want in kept]
    headings = {}
    for d in main.select("div.proof[id], div.exercise[id]"):
        title = d.select_one(".admonition-title")
        if title is not None:
            headings[d["id"]] = _norm(title.get_text(" "))
    solutions = [_norm(d.select_one(".admonition-title").get_text(" ")) for d in main.select("div.solution")
                 if d.select_one(".admonition-title")] if edition == "full" else []
    figures = {f["id"]: _norm(f.select_one(".caption-number").get_text(" ")).rstrip(".")
               for f in main.select("figure[id]") if f.select_one(".caption-number")}
    return {"numbers": numbers, "headings": headings, "figures": figures, "solutions": edition == "full",
            "solution_titles": solutions}


# --- the check -----------------------------------------------------------------------------------


def screen_problems(nb: dict, truth: dict, keys: set[str] = frozenset(), cells=None) -> list[str]:
    """Everything the rendered notebook shows that the book does not (empty: it reads as the book).

    *cells*: one element per cell of what a viewer drew (default: nbconvert's :func:`render`;
    tests/test_portable_lab.py passes JupyterLab's DOM)."""
    problems = []
    cells = render(nb) if cells is None else cells
    keys_re = re.compile(r"\b(" + "|".join(map(re.escape, sorted(keys))) + r")\b") if keys else None
    seen_numbers, labels_seen, figures_seen = set(), {}, {}
    proofs = ends = 0
    for index, (cell, el) in enumerate(zip(nb["cells"], cells)):
        kind = cell["cell_type"]
        shown = _shown(el, kind)
        text = _text(shown)
        where = f"cell {index}"
        for m in RAW.finditer(text):
            problems.append(f"{where}: raw MyST {m.group(0).strip()!r} in {text[max(0, m.start() - 40):m.end() + 40]!r}")
        if keys_re is not None:
            for m in keys_re.finditer(text):
                problems.append(f"{where}: bib key {m.group(0)!r} shown")
        if BASE64.search(text):
            problems.append(f"{where}: base64 shown as text")
        if not truth["solutions"] and re.search(r"Solution to ", text):
            problems.append(f"{where}: a solution in the student edition: {text[:80]!r}")
        if kind == "code" and not truth["solutions"] and "Solution to" in "".join(cell["source"]):
            problems.append(f"{where}: a solution's code in the student edition")
        if kind == "code" and any(WIDGET_VIEW in (o.get("data") or {}) for o in cell.get("outputs", [])):
            after = _text(_shown(cells[index + 1], "markdown")) if index + 1 < len(cells) else ""
            after_imgs = _shown(cells[index + 1], "markdown").select("img[alt]") if index + 1 < len(cells) else []
            if "explorer above moves" not in after or not [i for i in after_imgs if i["alt"].strip()]:
                problems.append(f"{where}: an explorer without the sentence and plot for viewers without widgets")
        if kind != "markdown":
            continue
        for img in shown.select("img"):
            if not (img.get("alt") or "").strip():
                problems.append(f"{where}: an image without alt text")
        source_cell = (cell.get("metadata", {}).get(MARKER) or {}).get("source_cell")
        if source_cell is not None and source_cell in truth["numbers"]:
            seen_numbers.add(source_cell)
            flat, pos = _norm(text), 0
            for want in truth["numbers"][source_cell]:
                at = flat.find(_norm(want), pos)
                if at < 0:
                    problems.append(f"{where}: the book's number {want!r} is not shown (after {flat[max(0, pos - 40):pos]!r})")
                    continue
                pos = at + len(_norm(want))
        for a in shown.select("a[id]"):
            label = a["id"]
            block = a.find_parent("p") or a.parent
            if label in truth["headings"]:
                strong = block.find("strong")
                title = _norm(_text(block)) if strong else ""
                labels_seen[label] = title
            if label in truth["figures"]:
                figures_seen[label] = shown
        for p in shown.find_all("p"):
            if _norm(p.get_text(" ")).startswith("Proof."):
                proofs += 1
        ends += _text(shown).count("∎")
    for i in truth["numbers"]:
        if truth["numbers"][i] and i not in seen_numbers:
            problems.append(f"source cell {i}: its numbers {truth['numbers'][i][:3]}... are in no portable cell")
    for label, want in truth["headings"].items():
        if not truth["solutions"] and label.startswith("sol"):
            continue
        got = labels_seen.get(label)
        if got is None:
            problems.append(f"statement {label} ({want}) is missing")
        elif not got.startswith(want):
            problems.append(f"statement {label}: the book heads it {want!r}, the notebook {got[:len(want) + 20]!r}")
    for label, number in truth["figures"].items():
        shown = figures_seen.get(label)
        if shown is None:
            problems.append(f"figure {label} ({number}) has no anchor")
            continue
        imgs = shown.select("img")
        if not imgs or not all((i.get("alt") or "").strip() for i in imgs):
            problems.append(f"figure {label}: not an <img> with alt text")
        if number not in _norm(_text(shown)):
            problems.append(f"figure {label}: the book's number {number!r} is not shown")
    summaries = []
    for cell, el in zip(nb["cells"], cells):
        if cell["cell_type"] == "markdown":
            summaries += [_norm(x.get_text(" ")) for x in _shown(el, "markdown").select("details > summary")
                          if "(continued)" not in x.get_text()]
    if truth["solutions"] and summaries != truth.get("solution_titles", summaries):
        problems.append(f"the solutions are headed {summaries}, the book heads them {truth['solution_titles']}")
    if proofs != ends:
        problems.append(f"{proofs} proofs but {ends} ∎")
    return problems


# --- against the built book ----------------------------------------------------------------------


# ``portable_notebooks`` (tests/conftest.py): the build step of `make book`, run once per session.


def _reads_as_the_book(portable, stem, edition):
    nb = json.loads((portable / edition / "chapters" / f"{stem}.ipynb").read_text())
    problems = screen_problems(nb, book_truth(stem, edition), bib_keys())
    assert not problems, f"{edition}/{stem}:\n" + "\n".join(problems[:30])


# One chapter with every kind of block (statements, proofs, equations, notes, citations, figures,
# exercises and solutions) in `make test`; every chapter in `make test-slow`: nbconvert renders
# and parses the 26 notebooks in about 280 s on the loaded 2-core machine (10 s each).
QUICK = "03_main_results"


@pytest.mark.parametrize("edition", ["full", "students"])
def test_portable_notebook_reads_as_the_book(portable_notebooks, edition):
    _reads_as_the_book(portable_notebooks, QUICK, edition)


@pytest.mark.slow
@pytest.mark.parametrize("edition", ["full", "students"])
@pytest.mark.parametrize("stem", [c for c in CHAPTERS if c != QUICK])
def test_every_portable_notebook_reads_as_the_book(portable_notebooks, stem, edition):
    _reads_as_the_book(portable_notebooks, stem, edition)


def test_every_chapter_has_both_portable_editions(portable_notebooks):
    for edition in ("full", "students"):
        assert sorted(p.stem for p in (portable_notebooks / edition / "chapters").glob("*.ipynb")) == CHAPTERS


# --- planted slips: each check fails when it should ----------------------------------------------


def _mini():
    """A two-statement notebook as portable.py writes it, and the book it should match."""
    sys.path.insert(0, str(ROOT / "_ext"))
    from portable import convert

    class Book:
        numbers = {"lem-1": "Lemma 3.1", "ex-1": "Exercise 3.1", "fig-a": "Fig. 3.1"}
        equations = {"eq-a": "(3.1)"}
        titles, sections = {}, {}
        pages = {"lem-1": "x.ipynb", "ex-1": "x.ipynb", "fig-a": "x.ipynb", "eq-a": "x.ipynb"}
        citations = {"dwork2014algorithmic": {"names": "Dwork and Roth", "year": "2014", "rank": 0, "full": ""}}
        site = "https://example.org/book/"

        def page_url(self, source, anchor=None):
            return f"{self.site}chapters/{Path(source).stem}.html" + (f"#{anchor}" if anchor else "")

        def references_url(self):
            return f"{self.site}chapters/references.html"

    import base64

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"0" * 64).decode()
    md = lambda s: {"cell_type": "markdown", "metadata": {}, "source": s}  # noqa: E731
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        md("# Chapter\n\nThe value is {eval}`f\"{glued.a:.2f}\"` {cite:p}`dwork2014algorithmic`.\n\n"
           "```{prf:lemma} Density ratios\n:label: lem-1\n:enumerator: 3.1\n\nIt holds:\n\n:::{math}\n:label: eq-a\nx = 1\n:::\n```\n\n"
           "```{prf:proof}\n:nonumber:\nBy {eq}`eq-a`.\n```\n\n```{exercise}\n:label: ex-1\n:enumerator: 3.1\n\nShow {prf:ref}`lem-1`.\n```\n\n"
           "```{solution-start} ex-1\n:class: dropdown\n```\nIt is true.\n```{solution-end}\n```"),
        {"cell_type": "code", "metadata": {"tags": ["hide-input"]}, "execution_count": 1, "source": "show_figure(fig, 'fig-a', '')",
         "outputs": [{"output_type": "display_data", "metadata": {}, "data": {
             "text/markdown": f":::{{figure}} data:image/png;base64,{png}\n:name: fig-a\n:alt: A line rising from left to right\n\nThe line.\n:::\n",
             "text/plain": "<IPython.core.display.Markdown object>"}}]},
    ]}
    book = Book()
    full, notes = convert(nb, "x", book, {"a": 1.2345}, "full")
    assert not notes, notes
    truth = {"numbers": {0: ["1.23"]}, "headings": {"lem-1": "Lemma 3.1 (Density ratios)", "ex-1": "Exercise 3.1"},
             "figures": {"fig-a": "Fig. 3.1"}, "solutions": True,
             "solution_titles": ["Solution to Exercise 3.1"]}
    return nb, full, truth, book


def _edit_markdown(nb, old, new):
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown" and old in "".join(cell["source"]):
            cell["source"] = "".join(cell["source"]).replace(old, new)
            return nb
    raise AssertionError(f"{old!r} is in no markdown cell")


def test_the_check_passes_the_mini_notebook():
    _, full, truth, _ = _mini()
    assert screen_problems(full, truth, {"dwork2014algorithmic"}) == []
    text = "".join("".join(c["source"]) for c in full["cells"] if c["cell_type"] == "markdown")
    assert "**Lemma 3.1** (Density ratios)" in text and "\\tag{3.1}" in text and "∎" in text
    assert "<summary>Solution to Exercise 3.1</summary>" in text
    assert "[Dwork and Roth, 2014](https://example.org/book/chapters/references.html)" in text


def test_a_raw_eval_left_is_caught():
    _, full, truth, _ = _mini()
    slip = _edit_markdown(full, "1.23", '{eval}`f"{glued.a:.2f}"`')
    got = screen_problems(slip, truth)
    assert any("raw MyST '{eval}'" in p for p in got) and any("'1.23' is not shown" in p for p in got), got


def test_a_wrong_statement_kind_is_caught():
    _, full, truth, _ = _mini()
    got = screen_problems(_edit_markdown(full, "**Lemma 3.1**", "**Theorem 3.1**"), truth)
    assert any("statement lem-1" in p for p in got), got


def test_a_bib_key_left_is_caught():
    _, full, truth, _ = _mini()
    got = screen_problems(_edit_markdown(full, "Dwork and Roth, 2014", "dwork2014algorithmic"), truth, {"dwork2014algorithmic"})
    assert any("bib key" in p for p in got), got


def test_a_solution_in_the_student_edition_is_caught():
    sys.path.insert(0, str(ROOT / "_ext"))
    from portable import convert
    from solutions import strip_solutions

    nb, full, truth, book = _mini()
    students, _ = convert(strip_solutions(nb), "x", book, {"a": 1.2345}, "students")
    truth = dict(truth, solutions=False)
    assert screen_problems(students, truth) == []
    slip = copy.deepcopy(students)
    slip["cells"].insert(2, next(c for c in full["cells"] if "<details>" in "".join(c["source"])))
    assert any("a solution in the student edition" in p for p in screen_problems(slip, truth))


def test_a_figure_without_alt_text_is_caught():
    _, full, truth, _ = _mini()
    slip = copy.deepcopy(full)
    fig = next(c for c in slip["cells"] if (c["metadata"].get(MARKER) or {}).get("inserted") == "figure")
    fig["source"] = re.sub(r"!\[[^\]]*\]", "![]", fig["source"])
    got = screen_problems(slip, truth)
    assert any("without alt text" in p for p in got), got
    slip["cells"].remove(fig)
    assert any("figure fig-a" in p for p in screen_problems(slip, truth))


def test_a_solution_that_starts_with_code_is_headed_once():
    """The book heads every solution once, also one whose first stretch is code (4.2, 5.3, ...)."""
    sys.path.insert(0, str(ROOT / "_ext"))
    from portable import convert

    _, _, truth, book = _mini()
    md = lambda s: {"cell_type": "markdown", "metadata": {}, "source": s}  # noqa: E731
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        md("```{exercise}\n:label: ex-1\n:enumerator: 3.1\n\nShow it.\n```\n\n```{solution-start} ex-1\n:class: dropdown\n```"),
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "# Solution to Exercise 3.1\nx = 1", "outputs": []},
        md("So it holds.\n\n```{solution-end}\n```\n\nAfter the exercise."),
    ]}
    full, notes = convert(nb, "x", book, {}, "full")
    text = "\n".join("".join(c["source"]) for c in full["cells"] if c["cell_type"] == "markdown")
    assert not notes and text.count("<summary>Solution to Exercise 3.1</summary>") == 1, text
    assert text.count("<summary>Solution to Exercise 3.1 (continued)</summary>") == 1
    code = next(c for c in full["cells"] if c["cell_type"] == "code" and "x = 1" in c["source"])
    assert code["source"].startswith("#@title Solution to Exercise 3.1 (code)") and code["metadata"]["jupyter"]["source_hidden"]
    got = screen_problems(full, dict(truth, numbers={}, headings={"ex-1": "Exercise 3.1"}, figures={},
                                     solution_titles=["Solution to Exercise 3.1"]))
    assert got == [], got


def _explorer_notebook():
    """A notebook whose one code cell shows an explorer, its state saved as the book's build saves it."""
    import base64

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"1" * 64).decode()
    model = lambda name, state, **kw: {"model_name": name, "model_module": "@jupyter-widgets/controls",  # noqa: E731
                                        "model_module_version": "2.0.0", "state": state, **kw}
    state = {
        "top": model("VBoxModel", {"children": ["IPY_MODEL_controls", "IPY_MODEL_panel", "IPY_MODEL_plot"]}),
        "controls": model("VBoxModel", {"children": ["IPY_MODEL_eps", "IPY_MODEL_n"]}),
        "eps": model("FloatLogSliderModel", {"description": "ε", "value": 0.1}),
        "n": model("IntSliderModel", {"description": "n", "value": 100}),
        "panel": model("HTMLModel", {"value": "<table><tr><td>σ</td><td>2.5</td></tr></table>"}),
        "plot": model("ImageModel", {"format": "png"}, buffers=[{"path": ["value"], "encoding": "base64", "data": png}]),
    }
    return {"nbformat": 4, "nbformat_minor": 5, "cells": [
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "widgets.noise_explorer()", "outputs": [
            {"output_type": "display_data", "metadata": {}, "data": {
                WIDGET_VIEW: {"model_id": "top", "version_major": 2, "version_minor": 0},
                "text/plain": "VBox(children=(VBox(children=(FloatLogSlider(value=0.1, ..."}}]}],
        "metadata": {"widgets": {"application/vnd.jupyter.widget-state+json": {"version_major": 2, "version_minor": 0,
                                                                               "state": state}}}}


def test_an_explorer_shows_its_plot_and_says_where_it_moves():
    """Where widgets cannot run (nbconvert, GitHub, nbviewer), an explorer shows a sentence saying
    where it moves and its plot at the settings of its code, with alt text naming them; its output's
    plain text is that sentence, not ``VBox(children=...)``.  Planted: the plot cell dropped."""
    _, _, truth, book = _mini()
    from portable import convert

    full, notes = convert(_explorer_notebook(), "x", book, {}, "full")
    assert not notes, notes
    code = next(c for c in full["cells"] if c["cell_type"] == "code" and "noise_explorer" in c["source"])
    after = full["cells"][full["cells"].index(code) + 1]
    assert code["outputs"][0]["data"]["text/plain"].startswith("An explorer")
    assert "![Plot of the explorer at its starting setting: ε = 0.1, n = 100](attachment:explorer-1.png)" in after["source"]
    truth = dict(truth, numbers={}, headings={}, figures={}, solution_titles=[])
    assert screen_problems(full, truth) == []
    planted = copy.deepcopy(full)
    planted["cells"].remove(next(c for c in planted["cells"] if (c["metadata"].get(MARKER) or {}).get("inserted") == "explorer"))
    assert any("explorer without" in p for p in screen_problems(planted, truth))


def test_an_explorer_whose_state_holds_no_plot_is_reported():
    _, _, _, book = _mini()
    from portable import convert

    nb = _explorer_notebook()
    del nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]["plot"]
    _, notes = convert(nb, "x", book, {}, "full")
    assert notes == ["x: an explorer's saved state holds no plot"]


def test_a_proof_without_its_end_is_caught():
    _, full, truth, _ = _mini()
    assert any("∎" in p for p in screen_problems(_edit_markdown(full, "∎", ""), truth))


def test_hidden_code_is_collapsed_for_jupyterlab_and_colab():
    _, full, _, _ = _mini()
    install, code = full["cells"][0], next(c for c in full["cells"][1:] if c["cell_type"] == "code")
    assert install["source"].startswith("#@title ") and "%pip install" in install["source"]
    assert code["metadata"]["jupyter"]["source_hidden"] and code["metadata"]["cellView"] == "form"
    assert code["source"].startswith("#@title ")


# --- they run without the book's tool chain ------------------------------------------------------


def test_glue_num_works_without_myst_nb():
    """A portable notebook runs where only ``dpmask[run]`` is installed: no myst_nb there."""
    code = (
        "import sys; sys.modules['myst_nb'] = None\n"  # `import myst_nb` now raises ImportError
        "from dpmask.book import glue_num, glued\n"
        "glue_num('n_rows', 1000)\n"
        "assert glued.n_rows == 1000\n"
        "print('ok')\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


def _run_names() -> set[str]:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = project["optional-dependencies"]["run"] + project["dependencies"]
    return {re.split(r"[\[<>=! ]", r, maxsplit=1)[0].lower().replace("-", "_") for r in reqs}


# import name -> the distribution of the run extra (or of the package) that provides it
_PROVIDED_BY = {"IPython": "ipykernel", "PIL": "matplotlib", "pandas": "statsmodels"}


def missing_imports(names: set[str]) -> set[str]:
    """The modules the chapters import that neither the standard library, dpmask nor *names* provide."""
    missing = set()
    for path in (ROOT / "chapters").glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            for m in re.finditer(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", "".join(cell["source"]), re.M):
                top = (m.group(1) or m.group(2)).split(".")[0]
                if top in sys.stdlib_module_names or top == "dpmask":
                    continue
                if _PROVIDED_BY.get(top, top.lower()) not in names:
                    missing.add(f"{top} ({path.stem})")
    return missing


def test_the_run_extra_holds_every_package_a_chapter_imports():
    """What the install cell installs (``dpmask[run]``) covers every chapter's imports, chapter 9's
    dp_accounting included; the planted slip (the extra without dp-accounting) is caught."""
    names = _run_names()
    assert not missing_imports(names), f"chapters import what dpmask[run] does not install: {sorted(missing_imports(names))}"
    assert missing_imports(names - {"dp_accounting"}) == {"dp_accounting (09_rivals)"}


# What runs in the fresh environment: every student notebook (the edition most likely to break
# there: a kept cell could lean on a solution cell the edition dropped), and of the full edition a
# chapter small enough to run here and the one that needs dp_accounting (what the book extra
# lacked).  The full edition's other solution cells run in nbval, in the book's environment; what
# they import is in the run extra (test_the_run_extra_holds_every_package_a_chapter_imports).
# Together about seven minutes idle.  DPMASK_FRESH_FULL=all runs every chapter of both editions.
_ALL_STEMS = tuple(sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb")))
_FULL_STEMS = _ALL_STEMS if os.environ.get("DPMASK_FRESH_FULL") == "all" else ("02_setup", "09_rivals")
FRESH_RUN = tuple(("full", s) for s in _FULL_STEMS) + tuple(("students", s) for s in _ALL_STEMS)


def _run_closure() -> list:
    """The installed distributions that ``pip install dpmask[run]`` brings: the package's own
    requirements and its ``run`` extra, followed through every requirement (markers evaluated for
    this interpreter), as this checkout's environment resolved them."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    def requirements(dist, extras):
        for text in dist.requires or ():
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras or {""}):
                yield req

    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    top = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["run"]]
    found, todo, missing = {}, [(None, set())], []
    while todo:
        dist, extras = todo.pop()
        # the checkout's pyproject.toml says what dpmask[run] requires (an installed dpmask's
        # metadata may be older than the checkout)
        for req in (top if dist is None else requirements(dist, extras)):
            key = (canonicalize_name(req.name), frozenset(req.extras))
            if key in found:
                continue
            try:
                sub = metadata.distribution(req.name)
            except metadata.PackageNotFoundError:
                missing.append(req.name)
                continue
            found[key] = sub
            todo.append((sub, set(req.extras)))
    assert not missing, f"dpmask[run] needs what this environment lacks: {sorted(set(missing))}"
    by_name = {canonicalize_name(d.metadata["Name"]): d for d in found.values()}
    return [by_name[k] for k in sorted(by_name)]


def _environment_of(dists, venv, package):
    """A new virtual environment at *venv* whose site-packages holds the files of *dists* (linked
    from this environment, no download: the tests stay offline) and the folder *package*."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    for dist in dists:
        for rel in dist.files or ():
            source = Path(dist.locate_file(rel))
            if ".." in rel.parts or not source.is_file() or "__pycache__" in rel.parts:
                continue  # scripts in bin/ and data outside site-packages: the notebooks need none
            target = site / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.symlink_to(source)
    (site / package.name).symlink_to(package, target_is_directory=True)
    return venv / "bin" / "python"


@pytest.fixture(scope="module")
def fresh_environment(tmp_path_factory):
    """A new virtual environment holding only what the install cell installs (``dpmask[run]`` and
    what it requires, linked from this environment instead of downloaded, so the tests stay
    offline; the package from a copy of this checkout), with a kernel of its own.  Built once for
    the module, and checked once: it holds dpmask[run] (dp_accounting, ipykernel) and not myst_nb
    or pytest.  Returns (its python, its JUPYTER_PATH, the closure's distributions, the package's
    copy)."""
    import shutil

    root = tmp_path_factory.mktemp("fresh")
    dists = _run_closure()
    package = root / "src" / "dpmask"
    shutil.copytree(ROOT / "dpmask", package, ignore=shutil.ignore_patterns("__pycache__"))
    py = str(_environment_of(dists, root / "venv", package))
    names = {d.metadata["Name"].lower().replace("_", "-") for d in dists}
    assert "dp-accounting" in names and "myst-nb" not in names and "pytest" not in names, sorted(names)
    probe = subprocess.run([py, "-c", "import dpmask, dp_accounting, ipykernel; import myst_nb"], capture_output=True, text=True)
    assert "No module named 'myst_nb'" in probe.stderr, ("the fresh environment must hold dpmask[run] and not myst_nb", probe.stderr)
    subprocess.run([py, "-m", "ipykernel", "install", "--prefix", str(root / "k"), "--name", "dpmask-fresh"],
                   check=True, capture_output=True, timeout=300)
    return py, str(root / "k" / "share" / "jupyter"), dists, package


@pytest.mark.slow
@pytest.mark.parametrize("edition, stem", FRESH_RUN, ids=[f"{s}-{e}" for e, s in FRESH_RUN])
def test_portable_notebook_runs_in_a_fresh_environment(edition, stem, portable_notebooks, fresh_environment,
                                                      tmp_path, monkeypatch):
    """In the fresh environment (:func:`fresh_environment`), the portable notebook runs top to
    bottom (nbclient) and glues the values the book printed.

    Detects: a chapter that needs myst_nb or a test-only package, a package missing from the run
    extra, an install cell that fails where ``dpmask`` imports, a student notebook whose kept cells
    need a solution the edition dropped."""
    import nbclient
    import nbformat

    sys.path.insert(0, str(ROOT / "_ext"))
    from executed import glued_values

    py, jupyter_path, _, _ = fresh_environment
    monkeypatch.setenv("JUPYTER_PATH", jupyter_path)
    path = portable_notebooks / edition / "chapters" / f"{stem}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    book = glued_values(json.loads(path.read_text()))
    # the values go to a file: printed, they reached nbclient in two stream messages on a loaded
    # machine (CI, 29 Nov 2026: the cell's last output was its line's end alone)
    glued_file = tmp_path / "glued.json"
    nb.cells.append(nbformat.v4.new_code_cell(
        "import json\nfrom dpmask.book import glued\n"
        f"with open({str(glued_file)!r}, 'w') as f:\n    json.dump(dict(vars(glued)), f)"))
    client = nbclient.NotebookClient(nb, kernel_name="dpmask-fresh", timeout=1200,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    assert nb.cells[0].outputs == [] or all(o.get("output_type") != "error" for o in nb.cells[0].outputs)
    run = json.loads(glued_file.read_text())
    assert set(book) <= set(run), f"{stem} ({edition}): not glued in the fresh run: {sorted(set(book) - set(run))[:10]}"
    if stem in MEASURED_CHAPTERS:  # timings and memory, measured afresh by each run: glued, and numbers
        bad = {k: run[k] for k in book if not (isinstance(run[k], int | float) and math.isfinite(run[k]))}
        assert not bad, f"{stem} ({edition}): measurements glued as non-numbers: {bad}"
        return
    differ = {k: (book[k], run[k]) for k in book if book[k] != run[k] and not (
        isinstance(book[k], float) and abs(book[k] - run[k]) <= 1e-9 * max(1.0, abs(book[k])))}
    assert not differ, f"{stem} ({edition}): the fresh run glued other values: {dict(list(differ.items())[:10])}"


@pytest.mark.slow  # a second environment of ~15,000 links: a minute under load
def test_the_fresh_environment_holds_the_run_extra_and_nothing_of_the_book(fresh_environment, tmp_path):
    """The environment the slow test above runs the notebooks in: what ``dpmask[run]`` requires is
    importable there, what only the book or the tests need is not (planted: a closure that forgot
    the extra lacks dp_accounting)."""
    py, _, dists, package = fresh_environment

    def imports(module):
        return subprocess.run([py, "-c", f"import {module}"], capture_output=True, timeout=300).returncode == 0

    assert imports("dpmask.book") and imports("dp_accounting") and imports("statsmodels.api")
    assert not imports("myst_nb") and not imports("pytest") and not imports("jupyter_book")
    no_extra = [d for d in dists if d.metadata["Name"].lower().replace("_", "-") != "dp-accounting"]
    py2 = str(_environment_of(no_extra, tmp_path / "venv2", package))
    assert subprocess.run([py2, "-c", "import dp_accounting"], capture_output=True).returncode != 0


# --- where a student finds them ------------------------------------------------------------------


def test_colab_button_opens_the_portable_notebooks_branch_of_each_edition():
    """sphinx-book-theme builds the Colab link on the Binder branch (the executed notebooks, MyST
    source in Colab); publish.py moves it to the portable notebooks' branch of the edition."""
    from types import SimpleNamespace

    sys.path.insert(0, str(ROOT / "_ext"))
    import editions
    import publish

    assert editions.portable_branch("full") == "notebooks"
    assert editions.portable_branch("students") == "notebooks-students"
    for edition, branch in (("full", "notebooks"), ("students", "notebooks-students")):
        config = SimpleNamespace(dpmask_edition=edition, dpmask_notebooks_branch="notebooks",
                                 dpmask_students_notebooks_branch="notebooks-students")
        colab = "https://colab.research.google.com/github/o/r/blob/executed/chapters/03_main_results.ipynb"
        binder = "https://mybinder.org/v2/gh/o/r/executed?urlpath=lab/tree/chapters/03_main_results.ipynb"
        context = {"header_buttons": [{"type": "group", "items": [
            {"text": "Binder", "url": binder}, {"text": "Colab", "url": colab}]}]}
        publish._colab_on_the_notebooks_branch(SimpleNamespace(config=config), "chapters/03_main_results", "", context, None)
        items = context["header_buttons"][0]["items"]
        assert items[0]["url"] == binder
        assert items[1]["url"] == colab.replace("/blob/executed/", f"/blob/{branch}/")


def test_download_button_serves_the_portable_notebook(tmp_path):
    sys.path.insert(0, str(ROOT / "_ext"))
    from portable import serve_downloads

    (tmp_path / "html" / "_sources" / "chapters").mkdir(parents=True)
    (tmp_path / "html" / "_sources" / "chapters" / "02_setup.ipynb").write_text("MyST source")
    (tmp_path / "p" / "chapters").mkdir(parents=True)
    (tmp_path / "p" / "chapters" / "02_setup.ipynb").write_text("portable")
    (tmp_path / "p" / "chapters" / "not_a_page.ipynb").write_text("portable")
    served = serve_downloads(tmp_path / "html", tmp_path / "p")
    assert [p.name for p in served] == ["02_setup.ipynb"]
    assert (tmp_path / "html" / "_sources" / "chapters" / "02_setup.ipynb").read_text() == "portable"
    assert not (tmp_path / "html" / "_sources" / "chapters" / "not_a_page.ipynb").exists()
