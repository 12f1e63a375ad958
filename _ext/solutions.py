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
code and its hidden asserts).  Text before a solution (the exercise) and after it stays; a cell
left empty is dropped.  The result is what ``make book-students`` writes to
``_build/students/notebooks``, what the student HTML serves under ``_sources/`` and what the
publishing workflow pushes to the branch the student edition's launch buttons open.
"""

from __future__ import annotations

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


def strip_solutions(nb: dict) -> dict:
    """A copy of notebook *nb* (nbformat 4, as a dict) without its solutions."""
    out = copy.deepcopy(nb)
    cells = []
    inside = False
    for cell in out["cells"]:
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if cell["cell_type"] == "markdown" or (cell["cell_type"] == "raw"):
            text, inside_after = _strip_markdown(source, inside)
            inside = inside_after
            if text.strip():
                cell["source"] = text
                cells.append(cell)
        elif not inside:
            cells.append(cell)
    if inside:
        raise ValueError("a {solution-start} has no {solution-end} after it")
    out["cells"] = cells
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
