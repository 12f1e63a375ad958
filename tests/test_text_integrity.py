r"""Text integrity: no control characters in the book's sources, no TeX in non-raw Python strings.

A TeX command in an ordinary Python string loses its backslash and first letter to an escape:
"\varepsilon" holds a vertical tab followed by "arepsilon", "\frac" a form feed, "\beta" a
backspace, "\alpha" a bell, "\tau" a tab, "\nu" a newline, "\rho" a carriage return.  Written
into a markdown cell by a script, or glued from a code cell, the control character reaches the
HTML, where MathJax happily renders "arepsilon"; the browser tests cannot see it.  So:

- every notebook cell (all of its strings: source and metadata) and every page source (.md,
  .bib, .yml, README) is free of control characters other than newline, and tab only in code
  cells (C0, DEL and C1 ranges are refused);
- in notebook code cells and in dpmask/*.py, no string constant (found with ``ast``, f-string
  parts included) holds a bell, backspace, vertical tab or form feed, and no non-raw string
  literal (found with ``tokenize``) spells a TeX command whose first letter is eaten by a
  tab, newline or carriage return escape (\tau, \theta, \times, \text, \nu, \nabla, \neq,
  \rho, \right, ...);
- no page source holds the remnant of such an accident ("arepsilon", "rac{", ...).

tests/test_book.py applies the same character check to the built HTML.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".git", ".venv", "_build", "node_modules", ".hypothesis", ".pytest_cache", "__pycache__",
             "_widget_assets", "benchmarks", "dpmask.egg-info"}

# Control characters: C0 except \t and \n, DEL, and C1.  \t is allowed where noted.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
CONTROL_NO_TAB = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\t]")
# What is left of a TeX command after its escape ate the backslash and first letter.
REMNANT = re.compile(r"(?<![A-Za-z\\])(arepsilon|arphi|artheta|rac\{|extbf\{|ext\{|ilde\{|heta\b|lpha\b|abla\b)")
# Escapes that a TeX command can never mean in a Python string of this project.
ALWAYS_BAD = {"\a": r"\a", "\b": r"\b", "\v": r"\v", "\f": r"\f"}
# TeX commands that start with t, n or r: in a non-raw literal they become tab/newline/CR + rest.
TEX_TNR = {
    "tau", "theta", "times", "text", "textbf", "textit", "textrm", "texttt", "tfrac", "tilde", "top",
    "to", "triangle", "tan", "tanh", "tag", "nu", "nabla", "neq", "ne", "neg", "not", "notin", "ni",
    "newcommand", "nonumber", "rho", "right", "rangle", "rightarrow", "Rightarrow", "rm", "rfloor",
    "rceil", "rvert", "rVert", "ref",
}


def _page_sources():
    out = []
    for path in sorted(ROOT.rglob("*")):
        if SKIP_DIRS & set(path.relative_to(ROOT).parts) or not path.is_file():
            continue
        if path.suffix in (".md", ".bib", ".yml", ".yaml") or path.name.upper().startswith("README"):
            out.append(path)
    return out


def _notebooks():
    return sorted((ROOT / "chapters").glob("*.ipynb"))


def _package_modules():
    return sorted((ROOT / "dpmask").glob("*.py"))


def _show(text, m):
    return repr(text[max(0, m.start() - 30): m.end() + 30])


def _strings(obj, where=""):
    """Every string inside a JSON value, with a path naming where it sits."""
    if isinstance(obj, str):
        yield where, obj
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _strings(v, f"{where}[{i}]")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(v, f"{where}.{k}")


def control_character_problems(text, *, allow_tab=False):
    """[(offset, context)] of forbidden control characters in *text*."""
    pattern = CONTROL if allow_tab else CONTROL_NO_TAB
    return [(m.start(), _show(text, m)) for m in pattern.finditer(text)]


def _code_without_magics(src):
    """A code cell as plain Python: IPython magics and shell lines become `pass`."""
    lines = []
    for line in src.splitlines():
        stripped = line.lstrip()
        lines.append(line[: len(line) - len(stripped)] + "pass" if stripped.startswith(("%", "!")) else line)
    return "\n".join(lines)


def tex_in_string_problems(code):
    """Problems with TeX in non-raw Python strings of *code* (a module or a cell)."""
    problems = []
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for ch, esc in ALWAYS_BAD.items():
                i = node.value.find(ch)
                if i >= 0:
                    problems.append(f"line {node.lineno}: string holds {esc}: {node.value[max(0, i - 20): i + 20]!r}")
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type != tokenize.STRING:
            continue
        prefix = re.match(r"[A-Za-z]*", tok.string).group(0).lower()
        if "r" in prefix or "b" in prefix:
            continue
        for m in re.finditer(r"(?<!\\)(?:\\\\)*\\([tnr][A-Za-z]+)", tok.string):
            if m.group(1) in TEX_TNR:
                problems.append(f"line {tok.start[0]}: non-raw string spells \\{m.group(1)}: {tok.string[:60]!r}")
    return problems


# --- the checks themselves work ---------------------------------------------------------------


def test_the_detectors_catch_what_they_must_and_nothing_else():
    assert control_character_problems("$\x0barepsilon$")  # what "$\varepsilon$" becomes
    assert control_character_problems("a\x85b") and control_character_problems("a\x7fb")
    assert control_character_problems("a\tb") and not control_character_problems("a\tb", allow_tab=True)
    assert not control_character_problems("ok\n$\\varepsilon$ é ü — ∑")
    assert tex_in_string_problems('x = "$\\varepsilon$"')
    assert tex_in_string_problems('x = f"{1}$\\frac{1}{2}$"')
    assert tex_in_string_problems('x = "\\tau"') and tex_in_string_problems("x = '''\\rho'''")
    assert tex_in_string_problems('x = "a" "\\nu"')
    assert not tex_in_string_problems('x = r"$\\varepsilon$ \\tau \\nu"')
    assert not tex_in_string_problems('x = "line\\nThe next \\tab \\\\tau"')
    assert not tex_in_string_problems('x = b"\\x00"')
    assert REMNANT.search("the row $ arepsilon = 0.1$") and not REMNANT.search("$\\varepsilon$ and \\theta")


# --- sources -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", _page_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_page_sources_hold_no_control_characters(path):
    text = path.read_text(encoding="utf-8")
    problems = control_character_problems(text)
    problems += [(m.start(), _show(text, m)) for m in REMNANT.finditer(text)]
    assert not problems, f"{path.name}: {problems}"


@pytest.mark.parametrize("path", _notebooks(), ids=lambda p: p.name)
def test_notebook_cells_hold_no_control_characters(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    for i, cell in enumerate(nb["cells"]):
        code = cell["cell_type"] == "code"
        for where, text in _strings(cell, f"cell {i} ({cell['cell_type']})"):
            problems += [(where, ctx) for _, ctx in control_character_problems(text, allow_tab=code)]
            if not code:
                problems += [(where, _show(text, m)) for m in REMNANT.finditer(text)]
    for where, text in _strings(nb.get("metadata", {}), "metadata"):
        problems += [(where, ctx) for _, ctx in control_character_problems(text)]
    assert not problems, f"{path.name}: {problems}"


@pytest.mark.parametrize("path", _notebooks(), ids=lambda p: p.name)
def test_notebook_code_cells_write_tex_in_raw_strings(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            src = "".join(cell["source"])
            problems += [f"cell {i}, {p}" for p in tex_in_string_problems(_code_without_magics(src))]
    assert not problems, f"{path.name}: {problems}"


@pytest.mark.parametrize("path", _package_modules(), ids=lambda p: p.name)
def test_package_writes_tex_in_raw_strings(path):
    text = path.read_text(encoding="utf-8")
    assert not control_character_problems(text, allow_tab=True), path.name
    assert not tex_in_string_problems(text), f"{path.name}: {tex_in_string_problems(text)}"


# A backtick fence whose opening line holds another backtick (``` {prf:proof} of {prf:ref}`x` ```)
# is not a fence for CommonMark: the directive then renders as literal text and its TeX as code.
# Colon fences (:::{prf:proof} ...) allow roles in the title.
# CommonMark trims the info string, so ``` {prf:lemma} (with a space) opens a directive too.
BROKEN_FENCE = re.compile(r"^[ \t]*(`{3,})[ \t]*\{[^}]*\}[^\n]*`", re.M)


def test_the_broken_fence_detector_catches_a_role_in_a_backtick_fence():
    assert BROKEN_FENCE.search("text\n```{prf:proof} (of {prf:ref}`lem-8-1`)\nbody\n```\n")
    assert BROKEN_FENCE.search("text\n``` {prf:lemma} (of {prf:ref}`lem-8-1`)\nbody\n```\n")  # T4
    assert BROKEN_FENCE.search("text\n  ````\t{prf:remark} {cite}`x`\nbody\n````\n")
    assert not BROKEN_FENCE.search(":::{prf:proof} (of {prf:ref}`lem-8-1`)\nbody\n:::\n")
    assert not BROKEN_FENCE.search("```{prf:proof}\nbody with `code`\n```\n")


@pytest.mark.parametrize("path", sorted((ROOT / "chapters").glob("*.ipynb")) + _page_sources(),
                         ids=lambda p: p.name)
def test_directive_fences_hold_no_backtick_in_their_opening_line(path):
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        texts = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    else:
        texts = [path.read_text()]
    bad = [m.group(0).strip() for t in texts for m in BROKEN_FENCE.finditer(t)]
    assert not bad, f"{path.name}: use a colon fence (:::) for directives whose title holds a role: {bad}"
