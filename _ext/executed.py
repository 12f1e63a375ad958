"""The executed notebooks: what a student sees in JupyterLab before running anything (issue 22).

The repository's chapters carry no outputs, so a chapter opened from Binder would show every
prose number as its ``{eval}`` expression and no figure until Run All.  The book's own
execution (the jupyter-cache of ``make book``) already holds every output; this module writes
each chapter with those outputs merged in and, in each markdown cell, the results of its
``{eval}`` expressions where jupyterlab-myst reads them: the cell's ``user_expressions``
metadata, a list of ``{"expression": EXPR, "result": {"status": "ok", "data": {"text/plain":
REPR}, "metadata": {}}}`` in the order the expressions appear, REPR being what the kernel
returns for the f-string (the repr of the formatted text).  The text comes from the glued value
and :func:`dpmask.book.format_glued`, the rule the book and the kernel share, so the notebook
shows what the book prints and what Run All reproduces (tests/test_live.py checks both on the
screen).

The publishing workflow writes these notebooks in its build job (after ``make book``) and its
executed-branch job pushes them, as a parentless commit of the same tree, to the branch the
launch buttons open (``dpmask_executed_branch`` in _config.yml, default ``executed``).
"""

from __future__ import annotations

import ast
import copy
import json
import re
from pathlib import Path

from book_config import ROOT, executed_branch  # noqa: F401  (executed_branch: the CLI's)

METADATA = "user_expressions"

# An inline role {eval}`...` with any number of backticks (as MyST reads it): the expression.
_EVAL_ROLE = re.compile(r"\{eval\}(`+)(?P<expr>.*?)\1(?!`)", re.S)
# The one expression form the chapters use (dpmask.book.EVAL_PATTERN, repeated here so that this
# module needs no dpmask import in the workflow's light jobs).
_EXPR = re.compile(r'^f"\{glued\.(?P<key>[A-Za-z_][A-Za-z0-9_]*)(?::(?P<spec>[^{}"]*))?\}"$')
_GLUE_PREFIX = "application/papermill.record/"


def _source(cell) -> str:
    src = cell.get("source", "")
    return src if isinstance(src, str) else "".join(src)


def glued_values(nb: dict) -> dict:
    """Every value glued in an executed notebook, by key (the last glue of a key wins, as in the kernel)."""
    values = {}
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            name = ((out.get("metadata") or {}).get("scrapbook") or {}).get("name")
            if not name:
                continue
            data = out.get("data") or {}
            plain = data.get(_GLUE_PREFIX + "text/plain", data.get("text/plain"))
            if plain is None:
                continue
            plain = plain if isinstance(plain, str) else "".join(plain)
            try:
                values[name] = ast.literal_eval(plain)
            except (SyntaxError, ValueError) as exc:
                raise ValueError(f"glued value {name!r} is not a Python literal: {plain!r}") from exc
    return values


def expression_result(expr: str, values: dict) -> dict:
    """The kernel's reply for one ``{eval}`` expression, computed from the glued *values*."""
    from dpmask.book import format_glued

    m = _EXPR.match(expr.strip())
    if m is None:
        raise ValueError(f'an {{eval}} expression must read f"{{glued.KEY:SPEC}}", got {expr!r}')
    key = m.group("key")
    if key not in values:
        raise KeyError(f"{expr!r}: nothing was glued under {key!r}")
    text = format_glued(values[key], m.group("spec") or "")
    return {"status": "ok", "data": {"text/plain": repr(text)}, "metadata": {}}


def with_user_expressions(nb: dict) -> dict:
    """A copy of the executed *nb* whose markdown cells hold their evaluated ``{eval}`` expressions."""
    nb = copy.deepcopy(nb)
    values = glued_values(nb)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        exprs = [m.group("expr") for m in _EVAL_ROLE.finditer(_source(cell))]
        meta = cell.setdefault("metadata", {})
        if exprs:
            meta[METADATA] = [{"expression": e, "result": expression_result(e, values)} for e in exprs]
        else:
            meta.pop(METADATA, None)
    return nb


def write_executed_notebooks(out: Path, cache: Path, root: Path = ROOT) -> list[Path]:
    """Every chapter notebook, executed (from the book's jupyter-cache *cache*), under *out*/chapters.

    Raises ``SystemExit`` when a chapter has no up-to-date execution in the cache (run ``make
    book`` first): a stale output must not reach the branch the launch buttons open.
    """
    import nbformat
    from jupyter_cache import get_cache

    cache_dir = Path(cache)
    if not cache_dir.is_dir():
        raise SystemExit(f"no jupyter-cache at {cache_dir}: run `make book` first")
    store = get_cache(str(cache_dir))
    out = Path(out) / "chapters"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted((Path(root) / "chapters").glob("*.ipynb")):
        nb = nbformat.read(str(path), nbformat.NO_CONVERT)
        try:
            _, merged = store.merge_match_into_notebook(nb)
        except KeyError:
            raise SystemExit(f"{path.name} has no up-to-date execution in {cache_dir}: run `make book` first") from None
        merged = with_user_expressions(json.loads(nbformat.writes(merged)))
        target = out / path.name
        target.write_text(json.dumps(merged, indent=1, ensure_ascii=False) + "\n")
        written.append(target)
    return written



def commit_message(ref: str) -> str:
    """The message of the executed branch's commit (``editions.py executed-commit`` writes it)."""
    return (
        f"The chapters of {ref} executed by the book's build: outputs and evaluated {{eval}} "
        "expressions included\n\nWritten by `python _ext/editions.py executed-commit`; what the "
        "launch buttons open, so that a chapter shows the book's numbers and figures before it runs."
    )
