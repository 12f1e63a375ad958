"""Hidden in the book, hidden in JupyterLab: ``python _ext/cell_visibility.py [--check]``.

Jupyter Book hides or removes a cell by its tags (``remove-cell``, ``hide-input`` ...) and puts a
solution in a closed dropdown; JupyterLab ignores both and shows every cell as it stands.  What
JupyterLab does honour is the cell metadata ``"jupyter": {"source_hidden": true,
"outputs_hidden": true}``: the source or the outputs collapsed to a bar that takes a click to
open.  This script derives that metadata from the tags and the solution fences, one rule per
cell, in one place:

==============================================  ================  =================
the cell                                        ``source_hidden``  ``outputs_hidden``
==============================================  ================  =================
tagged ``remove-cell`` or ``hide-cell``         yes               yes
tagged ``hide-input`` or ``remove-input``       yes
tagged ``hide-output`` or ``remove-output``                       yes
a code cell of a solution (between a            yes               yes
``{solution-start}`` and its ``{solution-end}``)
a markdown cell that is solution text only      yes
(it lies wholly inside a gated solution)
any other cell                                  no                no
==============================================  ================  =================

"No" means the key is absent: a cell collapsed by hand in JupyterLab and saved is opened again,
so the tags stay the one source.  Other ``jupyter`` keys and all other metadata are left alone.

``python _ext/cell_visibility.py``
    Rewrite every chapter notebook (``chapters/*.ipynb``) whose metadata is out of step; print the
    cells changed.  Idempotent: a second run changes nothing.  Run it after adding, tagging or
    untagging a cell, or moving one into or out of a solution.
``python _ext/cell_visibility.py --check``
    Change nothing; exit with status 1 and name the cells when any notebook is out of step
    (tests/test_cell_visibility.py runs this check in ``make test``).

Only the stored metadata and a solution's first lines change: the HTML book ignores the
metadata, and the student notebooks (``_ext/solutions.py``) drop the solutions' cells whatever
their metadata.

What JupyterLab 4 undoes when it runs a cell (its own code, not configurable): running a code cell
opens its outputs (``CodeCell.execute`` sets ``outputHidden = false``; the source stays
collapsed), and running a markdown cell opens it.  The book's JupyterLab extension (``dpmask-live``,
its ``collapsed`` plugin) closes both again after the run: a code cell's outputs if they were
collapsed when the run was scheduled, and a markdown cell that starts with :data:`MARKDOWN_LABEL`.
tests/test_live_hidden.py checks the notebook as opened, tests/test_live.py after Run All.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solutions import _strip_markdown  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

HIDE_SOURCE = frozenset({"remove-cell", "hide-cell", "hide-input", "remove-input"})
HIDE_OUTPUTS = frozenset({"remove-cell", "hide-cell", "hide-output", "remove-output"})
KEYS = ("outputs_hidden", "source_hidden")
# JupyterLab's collapsed bar shows a cell's first line (greyed, beside the "..." to click).  A
# solution's first line may be its answer, so every cell of a solution starts with a line that
# names the exercise and nothing more: a comment in code, a MyST comment (% ...) in markdown,
# which neither the book nor jupyterlab-myst prints.
CODE_LABEL = "# Solution to Exercise {}"
MARKDOWN_LABEL = "% Solution to Exercise {}"
ANY_LABEL = re.compile(r"[#%] Solution to Exercise \S+")


def _source(cell) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def wanted(nb: dict) -> list[dict]:
    """For each cell of *nb*, what the rule above gives it: ``{"source_hidden": bool,
    "outputs_hidden": bool, "label": str | None}``, *label* the first line a solution's cell
    must start with (None for any other cell)."""
    # an exercise's number as the book prints it (its :enumerator:, which _ext/sync_numbers.py
    # keeps), else its label
    numbers = dict(re.findall(r"^[ \t]*:label:[ \t]*(\S+)[ \t]*\n[ \t]*:enumerator:[ \t]*(\S+)",
                              "\n".join(_source(c) for c in nb["cells"] if c["cell_type"] == "markdown"), re.M))
    out, inside, exercise = [], False, None
    for cell in nb["cells"]:
        tags = set(cell.get("metadata", {}).get("tags", []))
        source, outputs, label = bool(tags & HIDE_SOURCE), bool(tags & HIDE_OUTPUTS), None
        if cell["cell_type"] in ("markdown", "raw"):
            starts_inside = inside
            kept, inside = _strip_markdown(_source(cell), inside)
            # solution text only: the cell lies wholly inside a gated solution (the fences
            # themselves are in the cells before and after it)
            if starts_inside and inside and not kept.strip() and _source(cell).strip():
                source, label = True, MARKDOWN_LABEL.format(exercise)
            starts = re.findall(r"\{solution-start\}[ \t]*(\S+)", _source(cell))
            if inside and starts:
                exercise = numbers.get(starts[-1], starts[-1])
        elif inside:
            source = outputs = True
            label = CODE_LABEL.format(exercise)
        out.append({"outputs_hidden": outputs, "source_hidden": source, "label": label})
    if inside:
        raise ValueError("a {solution-start} has no {solution-end} after it")
    return out


def _labelled(src: str, label: str | None) -> str:
    """*src* starting with *label* (added when missing), or without a stale label when *label* is None."""
    first, _, rest = src.partition("\n")
    if label is None:
        return rest if ANY_LABEL.fullmatch(first.strip()) else src
    if first.strip() == label:
        return src
    if ANY_LABEL.fullmatch(first.strip()):  # the label of another exercise: the cell moved
        src = rest
    return label + "\n" + src


def current(cell: dict) -> dict:
    """The hidden flags *cell* carries now."""
    meta = cell.get("metadata", {}).get("jupyter", {})
    return {k: bool(meta.get(k, False)) for k in KEYS}


def _metadata(meta: dict, want: dict) -> dict:
    """*meta* with its ``jupyter`` flags set to *want*: true ones present and true, false ones absent."""
    meta = dict(meta)
    jup = {k: v for k, v in meta.pop("jupyter", {}).items() if k not in KEYS}
    jup.update({k: True for k in KEYS if want[k]})
    if jup:
        meta["jupyter"] = dict(sorted(jup.items()))
    return dict(sorted(meta.items()))  # the key order nbformat and JupyterLab write


def apply(nb: dict) -> tuple[dict, list[int]]:
    """A copy of *nb* with every cell's ``jupyter`` flags set by the rule; and the indices changed."""
    nb = copy.deepcopy(nb)
    changed = []
    for i, (cell, want) in enumerate(zip(nb["cells"], wanted(nb))):
        meta = cell.get("metadata", {})
        new = _metadata(meta, want)
        src = _source(cell)
        new_src = _labelled(src, want["label"])
        if new != meta or new_src != src:
            cell["metadata"] = new
            cell["source"] = new_src if isinstance(cell["source"], str) else new_src.splitlines(keepends=True)
            changed.append(i)
    return nb, changed


def out_of_step(path: Path) -> list[str]:
    """One line per cell of notebook *path* whose metadata is not what the rule gives."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    new, changed = apply(nb)
    lines = []
    for i in changed:
        cell, want, have = nb["cells"][i], current(new["cells"][i]), current(nb["cells"][i])
        first = (_source(cell).strip().splitlines() or ["(empty)"])[0][:50]
        what = [f"{k} should be {'true' if want[k] else 'absent'}" for k in KEYS if have[k] != want[k]]
        if _source(new["cells"][i]) != _source(cell):
            label = ANY_LABEL.fullmatch(_source(new["cells"][i]).partition("\n")[0])
            what.append(f"should start with {label.group()!r}" if label else "should not start with a solution's label")
        what = ", ".join(what)
        lines.append(f"{Path(path).name} cell {i} ({cell['cell_type']}, {first!r}): {what or 'not in canonical form'}")
    return lines


def sync(path: Path, write: bool = True) -> list[int]:
    """Bring notebook *path* in step; return the indices of the cells changed (written when *write*)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    new, changed = apply(json.loads(text))
    if changed and write:
        path.write_text(json.dumps(new, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return changed


def notebooks(root: Path = ROOT) -> list[Path]:
    return sorted((Path(root) / "chapters").glob("*.ipynb"))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    total = 0
    for path in notebooks():
        if check:
            lines = out_of_step(path)
            for line in lines:
                print(line)
            total += len(lines)
        else:
            changed = sync(path)
            if changed:
                print(f"{path.name}: {len(changed)} cell(s) updated")
            total += len(changed)
    if check:
        print(f"{total} cell(s) out of step" + ("; run `python _ext/cell_visibility.py`" if total else ""))
        return 1 if total else 0
    print(f"{total} cell(s) changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
