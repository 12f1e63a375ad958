"""Hidden in the book, hidden in JupyterLab: every chapter's ``jupyter`` cell metadata follows its tags.

JupyterLab ignores Jupyter Book's tags but collapses a cell whose metadata says
``"jupyter": {"source_hidden": true, "outputs_hidden": true}``.  ``_ext/cell_visibility.py``
writes that metadata from the tags and the solution fences; this test (fast, no browser; in
``make test``) fails when a notebook's stored metadata is out of step:

- against an independent reading of each notebook (the tags as Jupyter Book documents them; the
  solutions found by scanning the markdown for ``{solution-start}`` and ``{solution-end}`` lines,
  not by the tool's parser): every cell the book removes or hides shows no source in JupyterLab,
  every solution's code cell shows neither source nor outputs, and no other cell is collapsed;
- against the tool itself (``--check``), which also holds the metadata's form (no ``false`` keys);
- the tool is idempotent, and a planted out-of-step cell fails both checks.

When it fails: ``python _ext/cell_visibility.py`` and commit the notebooks.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from _ext_import import ext_module

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
TOOL = ROOT / "_ext" / "cell_visibility.py"

# Jupyter Book's tags (https://jupyterbook.org/en/stable/interactive/hiding.html): what each takes
# out of the page or behind a click.
HIDES_SOURCE = {"hide-input", "remove-input", "hide-cell", "remove-cell"}
HIDES_OUTPUTS = {"hide-output", "remove-output", "hide-cell", "remove-cell"}


def _src(cell):
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def _in_solution(nb):
    """For each cell: ('code', N) for a code cell between the fences of Exercise N's solution,
    ('text', N) for a markdown cell wholly between them, None otherwise -- found by scanning
    lines, as a reader would; N is the number the exercise's directive gives it."""
    text = "\n".join(_src(c) for c in nb["cells"])
    out, inside, number = [], False, None
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            out.append(("code", number) if inside else None)
            continue
        starts_inside = inside
        fences = [m for m in re.finditer(r"^\s*(?:`{3,}|:{3,})\{solution-(start|end)\}[ \t]*(\S*)", _src(cell), re.M)]
        for m in fences:
            inside = m.group(1) == "start"
            if inside:
                number = re.search(rf":label: {re.escape(m.group(2))}\n:enumerator: (\S+)", text).group(1)
        out.append(("text", number) if starts_inside and not fences else None)
    assert not inside
    return out


def _expected(nb):
    exp = []
    for cell, sol in zip(nb["cells"], _in_solution(nb)):
        tags = set(cell["metadata"].get("tags", []))
        exp.append((bool(tags & HIDES_SOURCE) or sol is not None, bool(tags & HIDES_OUTPUTS) or (sol or ("",))[0] == "code"))
    return exp


def _stored(cell):
    j = cell["metadata"].get("jupyter", {})
    return (j.get("source_hidden") is True, j.get("outputs_hidden") is True)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_jupyterlab_hides_what_the_book_hides(path):
    nb = json.loads(path.read_text())
    wrong = [f"cell {i} ({c['cell_type']}, tags {c['metadata'].get('tags', [])}): stored source/outputs hidden "
             f"{_stored(c)}, the book's tags and fences say {e}"
             for i, (c, e) in enumerate(zip(nb["cells"], _expected(nb))) if _stored(c) != e]
    assert not wrong, "run `python _ext/cell_visibility.py`:\n" + "\n".join(wrong)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_a_solution_shows_only_its_exercise_number_when_collapsed(path):
    """JupyterLab's collapsed bar shows a cell's first line: in a solution, that line names the exercise."""
    nb = json.loads(path.read_text())
    wrong = []
    for i, (cell, sol) in enumerate(zip(nb["cells"], _in_solution(nb))):
        first = _src(cell).split("\n", 1)[0]
        want = None if sol is None else ("# " if sol[0] == "code" else "% ") + f"Solution to Exercise {sol[1]}"
        if want is not None and first != want:
            wrong.append(f"cell {i}: starts {first[:60]!r}, not {want!r}")
        if want is None and re.fullmatch(r"[#%] Solution to Exercise \S+", first):
            wrong.append(f"cell {i}: {first!r} but it is not in a solution")
    assert not wrong, "run `python _ext/cell_visibility.py`:\n" + "\n".join(wrong)


def test_every_chapter_hides_its_checks_and_solutions():
    """The rule bites: the chapters' hidden asserts and every solution's code are collapsed."""
    n_source = n_solution_code = 0
    for path in CHAPTERS:
        nb = json.loads(path.read_text())
        for cell, sol in zip(nb["cells"], _in_solution(nb)):
            n_source += _stored(cell)[0]
            n_solution_code += sol is not None and sol[0] == "code" and _stored(cell) == (True, True)
            if cell["cell_type"] == "code" and re.search(r"^assert\b", _src(cell), re.M) and "remove-cell" in cell["metadata"].get("tags", []):
                assert _stored(cell) == (True, True), (path.name, _src(cell)[:80])
    assert n_source >= 200 and n_solution_code >= 5, (n_source, n_solution_code)


def test_the_tool_check_passes_and_is_idempotent(tmp_path):
    res = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    cv = ext_module("cell_visibility")
    for path in CHAPTERS:
        nb = json.loads(path.read_text())
        once, _ = cv.apply(nb)
        twice, changed = cv.apply(once)
        assert changed == [] and twice == once, path.name


def test_a_planted_out_of_step_cell_fails(tmp_path):
    cv = ext_module("cell_visibility")
    src = ROOT / "chapters" / "07a_exact_p2.ipynb"
    nb = json.loads(src.read_text())
    sol = _in_solution(nb)
    i_assert = next(i for i, c in enumerate(nb["cells"]) if "remove-cell" in c["metadata"].get("tags", []))
    i_sol = next(i for i, x in enumerate(sol) if x and x[0] == "code")
    i_plain = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code" and not c["metadata"].get("tags") and sol[i] is None)
    plants = [
        (i_assert, lambda m: m.pop("jupyter")),                                   # an assert cell shown
        (i_sol, lambda m: m["jupyter"].pop("outputs_hidden")),                    # a solution's result shown
        (i_plain, lambda m: m.update(jupyter={"source_hidden": True})),           # a visible cell collapsed by hand
        (i_assert, lambda m: m["jupyter"].update(source_hidden=False)),           # a false flag
    ]
    for i, plant in plants:
        bad = json.loads(json.dumps(nb))
        plant(bad["cells"][i]["metadata"])
        path = tmp_path / src.name
        path.write_text(json.dumps(bad, indent=1, ensure_ascii=False) + "\n")
        lines = cv.out_of_step(path)
        assert len(lines) == 1 and f"cell {i} " in lines[0], lines
        with pytest.raises(AssertionError, match="run `python _ext/cell_visibility.py`"):
            test_jupyterlab_hides_what_the_book_hides(path)
        assert cv.sync(path) == [i]  # the write mode repairs it ...
        assert json.loads(path.read_text()) == nb and cv.sync(path) == []  # ... to the committed form, once
    # a solution's first line lost (or given to a cell outside it) is put back (or taken away)
    for i, edit in [(i_sol, lambda src: src.split("\n", 1)[1]), (i_plain, lambda src: "# Solution to Exercise 7a.1\n" + src)]:
        bad = json.loads(json.dumps(nb))
        new = edit(_src(bad["cells"][i]))
        bad["cells"][i]["source"] = new.splitlines(keepends=True) if isinstance(nb["cells"][i]["source"], list) else new
        path.write_text(json.dumps(bad, indent=1, ensure_ascii=False) + "\n")
        assert [f"cell {i} " in line for line in cv.out_of_step(path)] == [True]
        with pytest.raises(AssertionError, match="run `python _ext/cell_visibility.py`"):
            test_a_solution_shows_only_its_exercise_number_when_collapsed(path)
        assert cv.sync(path) == [i] and json.loads(path.read_text()) == nb
    # a tag added to a cell is followed by its metadata
    bad = json.loads(json.dumps(nb))
    bad["cells"][i_plain]["metadata"]["tags"] = ["hide-input"]
    fixed, changed = cv.apply(bad)
    assert changed == [i_plain] and fixed["cells"][i_plain]["metadata"]["jupyter"] == {"source_hidden": True}


def test_jupyterlab_extension_knows_a_solution_text_cell_by_its_label():
    # dpmask-live closes again, after a run, a markdown cell that starts with this module's label
    # for a solution's text (JupyterLab opens every markdown cell it runs): the two must agree.
    cv = ext_module("cell_visibility")
    js = (ROOT / "_ext" / "jupyterlab" / "labextension" / "static" / "remoteEntry.js").read_text()
    m = re.search(r"var SOLUTION_TEXT = /(.+)/;", js)
    assert m, "remoteEntry.js no longer defines SOLUTION_TEXT"
    pattern = re.compile(m.group(1))
    assert pattern.match(cv.MARKDOWN_LABEL.format("6.2") + "\nThe data now have")
    assert not pattern.match(cv.CODE_LABEL.format("6.2"))
    assert not pattern.match("The slope is " + cv.MARKDOWN_LABEL.format("6.2"))
