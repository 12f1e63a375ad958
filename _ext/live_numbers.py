"""The book's reading of ``{eval}`f"{glued.KEY:SPEC}"```: the glued value, formatted as the kernel would.

The chapters write every number of their prose as an inline expression that jupyterlab-myst
evaluates in the live kernel (see :mod:`dpmask.book`).  myst-nb's own ``eval`` role would need
``nb_execution_mode: inline``, which gives up jupyter-cache (the student edition, the PDF and
`make test` reuse the executions).  This role replaces it: it accepts exactly the one expression
form of :data:`dpmask.book.EVAL_PATTERN`, takes the value glued under ``KEY`` in the executed
notebook (its ``text/plain`` is a Python literal) and formats it with Python's ``format`` and
the same spec.  Anything else is a build warning, which the strict build (-W) turns into an
error: an expression one renderer understands and the other does not cannot reach a page.

It also lets the sources carry the book's numbers for JupyterLab, which numbers a notebook's
statements, exercises, equations and figures 1, 2, ... on its own (and counts lemmas, theorems
and corollaries separately where the book shares one counter): the directives of sphinx-proof
and sphinx-exercise, ``math`` and ``figure`` accept an ``:enumerator:`` option (jupyterlab-myst
shows it as the number; Sphinx keeps numbering them itself).  tests/test_book.py checks every
``:enumerator:``, and every explicit reference text a source gives for JupyterLab's sake, against
the numbers of the built book, so the two cannot drift apart.
"""

from __future__ import annotations

import ast

from docutils import nodes
from myst_nb.core.variables import RetrievalError
from myst_nb.ext.glue.utils import glue_warning, retrieve_glue_data
from myst_nb.ext.utils import RoleBase

from dpmask.book import EVAL_PATTERN, format_glued


class GluedEvalRole(RoleBase):
    """``{eval}`f"{glued.KEY:SPEC}"```: the value glued under KEY, as ``format(value, SPEC)``."""

    def run(self):
        m = EVAL_PATTERN.match(self.text.strip())
        if m is None:
            msg = (
                f'{{eval}} must read f"{{glued.KEY}}" or f"{{glued.KEY:SPEC}}" (the one form the book and '
                f"JupyterLab both render), got {self.text!r}"
            )
            return [], [glue_warning(msg, self.document, self.line)]
        key, spec = m.group("key"), m.group("spec") or ""
        try:
            data = retrieve_glue_data(self.document, key)
        except RetrievalError as exc:
            return [], [glue_warning(f"{{eval}} of glued.{key}: {exc}", self.document, self.line)]
        plain = data.data.get("text/plain")
        if plain is None:
            return [], [glue_warning(f"{{eval}} of glued.{key}: no text/plain in the glued data", self.document, self.line)]
        try:
            value = ast.literal_eval(plain)
        except (SyntaxError, ValueError):
            return [], [
                glue_warning(
                    f"{{eval}} of glued.{key}: the glued text {plain!r} is not a Python literal "
                    "(glue numbers and strings with dpmask.book.glue)",
                    self.document,
                    self.line,
                )
            ]
        try:
            text = format_glued(value, spec)
        except (TypeError, ValueError) as exc:
            return [], [
                glue_warning(f"{{eval}} of glued.{key} with spec {spec!r}: {exc}", self.document, self.line)
            ]
        node = nodes.inline(text, text, classes=["pasted-text"])
        self.set_source_info(node)
        return [node], []


def _accept_enumerator():
    """Add the ``enumerator`` option (ignored here, read by jupyterlab-myst) to the numbered directives."""
    from docutils.parsers.rst import directives
    from sphinx.directives.patches import Figure, MathDirective
    from sphinx_exercise.directive import ExerciseDirective, ExerciseStartDirective
    from sphinx_proof.directive import ElementDirective, ProofDirective

    for cls in (ElementDirective, ExerciseDirective, ExerciseStartDirective, MathDirective, Figure):
        cls.option_spec = {**cls.option_spec, "enumerator": directives.unchanged}
    _number_outside_chapters(ElementDirective)
    # A proof is unnumbered in the book; jupyterlab-myst numbers it ("Proof 3") unless told not to.
    ProofDirective.option_spec = {**ProofDirective.option_spec, "nonumber": directives.flag}


def _number_outside_chapters(cls):
    """A statement whose enumerator is not a chapter number ("A.1": the appendix) keeps it in the book too.

    sphinx-proof numbers statements by chapter, and the appendix is not a numbered chapter.  Such a
    statement is shown unnumbered with its enumerator leading the title, "Lemma (A.1 (title))",
    which ``_ext/appendix_numbers.py`` turns into "Lemma A.1 (title)" on the page; jupyterlab-myst
    shows the same from ``:enumerator: A.1``.
    """
    if getattr(cls.run, "_dpmask_wrapped", False):
        return
    original = cls.run

    def run(self):
        enum = self.options.get("enumerator")
        if enum and not enum[0].isdigit() and "nonumber" not in self.options:
            self.options["nonumber"] = True
            title = self.arguments[0] if self.arguments else ""
            self.arguments = [f"{enum} ({title})" if title else enum]
        return original(self)

    run._dpmask_wrapped = True
    cls.run = run


def register_link_targets(app, doctree):
    """Let a Markdown link ``[Theorem 3.4](03_main_results.ipynb#thm-3-4)`` reach any labelled target.

    The chapters write a reference into another notebook as such a link, not as ``{prf:ref}``:
    jupyterlab-myst resolves a role only inside its own notebook (and prints an error on the
    console for every other one), while it renders a link as a link, which JupyterLab opens.
    myst-parser resolves the part after ``#`` only among a page's heading anchors
    (``myst_slugs``), so this adds every labelled target of the page to them: each node id (a
    statement's, an exercise's, a figure's or a section's id is its label) and each equation
    under its label (its id is ``equation-<label>``).
    """
    slugs = app.env.metadata[app.env.docname].setdefault("myst_slugs", {})
    for node in doctree.findall(nodes.Element):
        for node_id in node.get("ids", []):
            label = node_id[len("equation-"):] if node_id.startswith("equation-") else node_id
            slugs.setdefault(label, (node.line or 0, node_id, ""))


def setup(app):
    # myst-nb registers its own `eval` role in its setup; a local extension is set up after it.
    app.add_role("eval", GluedEvalRole(), override=True)
    _accept_enumerator()
    app.connect("doctree-read", register_link_targets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
