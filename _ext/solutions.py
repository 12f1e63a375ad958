"""Solution-free notebooks for the student edition: the exercises stay, every solution goes.

A chapter writes a solution in one of two forms (sphinx-exercise):

- the gated form, which may wrap code cells::

      ```{solution-start} ex-1-2
      :class: dropdown
      ```
      The text of the solution ...
      (code cells)
      ```{solution-end}
      ```

- a plain ``{solution}`` directive, fenced with backticks or colons.

:func:`strip_solutions` removes both, with everything they enclose: the markdown between the
fences and every code cell between a ``solution-start`` and its ``solution-end`` (the solution's
code and its hidden asserts), and then every solution-only code cell elsewhere: one that reads a
name only a solution's code binds (a hidden ``assert`` on the solution placed after its end), so
that the notebook still runs top to bottom.  Text before a solution (the exercise) and after it
stays; a cell left empty is dropped, and a cell that keeps part of its text keeps only the
evaluated ``{eval}`` expressions (``user_expressions``) that text shows.  The result is what ``make book-students`` writes to
``_build/students/notebooks``, what the student HTML serves under ``_sources/`` and what the
publishing workflow pushes to the branch the student edition's launch buttons open.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from pathlib import Path

_OPEN = re.compile(r"^(?P<indent>[ \t]{0,3})(?P<fence>`{3,}|:{3,})(?P<info>.*)$")


def _fence_closes(line: str, fence: str) -> bool:
    m = re.match(r"^[ \t]{0,3}(`{3,}|:{3,})[ \t]*$", line)
    return bool(m) and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)


def _directive(info: str) -> str | None:
    m = re.match(r"^\s*\{(?P<name>[\w:-]+)\}", info)
    return m.group("name") if m else None


def _strip_markdown(text: str, inside: bool) -> tuple[str, bool]:
    """*text* without its solutions; *inside* says whether the cell starts inside a gated solution.

    Returns the kept text and whether the cell ends inside a gated solution.
    """
    lines = text.split("\n")
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _OPEN.match(line)
        name = _directive(m.group("info")) if m else None
        if m and name in ("solution-start", "solution-end", "solution"):
            # skip this directive's fence, whatever it holds
            fence = m.group("fence")
            j = i + 1
            while j < len(lines) and not _fence_closes(lines[j], fence):
                j += 1
            i = j + 1
            inside = name == "solution-start"
            continue
        if m and not inside:
            # another fenced block: copy it whole (a solution fence cannot start inside it)
            fence = m.group("fence")
            j = i + 1
            while j < len(lines) and not _fence_closes(lines[j], fence):
                j += 1
            kept.extend(lines[i : j + 1])
            i = j + 1
            continue
        if not inside:
            kept.append(line)
        i += 1
    out = "\n".join(kept)
    out = re.sub(r"\n{3,}", "\n\n", out).strip("\n")
    return out, inside


def _source(cell) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def _bound_and_read(code: str) -> tuple[set[str], set[str]]:
    """The names a code cell binds and the names it reads (IPython magics and shell lines skipped)."""
    lines = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return set(), set()
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):  # a parameter of a function or lambda
            bound.add(node.arg)
    return bound, read


def _solution_only(kept: list[dict], removed_code: list[str]) -> list[dict]:
    """*kept* without the code cells that read a name only a removed solution cell binds.

    A hidden check of a solution (an ``assert`` on the solution's variables, tagged
    ``remove-cell``) may sit after the ``{solution-end}``; left in, the student notebook would stop
    there with a NameError.  Such cells go with the solution, and so, in turn, does any cell that
    reads what they bind.
    """
    removed_bound = set().union(*(_bound_and_read(c)[0] for c in removed_code)) if removed_code else set()
    while True:
        code_cells = [c for c in kept if c["cell_type"] == "code"]
        kept_bound = set().union(*(_bound_and_read(_source(c))[0] for c in code_cells)) if code_cells else set()
        only = removed_bound - kept_bound
        drop = [c for c in code_cells if _bound_and_read(_source(c))[1] & only]
        if not drop:
            return kept
        for c in drop:
            removed_bound |= _bound_and_read(_source(c))[0]
        kept = [c for c in kept if all(c is not d for d in drop)]


def _keep_shown_expressions(cell: dict, text: str) -> None:
    """Drop from an executed markdown cell the evaluated ``{eval}`` expressions its text no longer shows.

    An executed notebook (``_ext/executed.py``, what the launch buttons open) stores each markdown
    cell's evaluated expressions in its metadata; those of a solution cut from the cell's text
    would still carry the solution's numbers.
    """
    shown = cell.get("metadata", {}).get("user_expressions")
    if shown is not None:
        cell["metadata"]["user_expressions"] = [e for e in shown if e.get("expression", "") in text]


def strip_solutions(nb: dict) -> dict:
    """A copy of notebook *nb* (nbformat 4, as a dict) without its solutions and solution-only code."""
    out = copy.deepcopy(nb)
    cells, removed_code = [], []
    inside = False
    for cell in out["cells"]:
        source = _source(cell)
        if cell["cell_type"] == "markdown" or (cell["cell_type"] == "raw"):
            text, inside_after = _strip_markdown(source, inside)
            inside = inside_after
            if text.strip():
                # keep the notebook's own form: a list of lines (nbformat's) or one string
                cell["source"] = text.splitlines(keepends=True) if isinstance(cell["source"], list) else text
                _keep_shown_expressions(cell, text)
                cells.append(cell)
        elif not inside:
            cells.append(cell)
        else:
            removed_code.append(source)
    if inside:
        raise ValueError("a {solution-start} has no {solution-end} after it")
    out["cells"] = _solution_only(cells, removed_code)
    return out


def has_solution(text: str) -> bool:
    """Whether *text* (markdown or a whole notebook's JSON) holds a solution directive."""
    return bool(re.search(r"\{solution(-start|-end)?\}", text))


def write_solution_free(src: Path, dest: Path) -> Path:
    """Write notebook *src* without its solutions to *dest* (nbformat JSON, one-space indent)."""
    nb = json.loads(Path(src).read_text(encoding="utf-8"))
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(strip_solutions(nb), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return dest


def write_solution_free_tree(root: Path, out: Path, pattern: str = "chapters/*.ipynb") -> list[Path]:
    """Every notebook of *root* matching *pattern*, without solutions, under *out* (same relative paths)."""
    root, out = Path(root), Path(out)
    written = []
    for src in sorted(root.glob(pattern)):
        written.append(write_solution_free(src, out / src.relative_to(root)))
    return written
