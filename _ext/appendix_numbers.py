"""Render the appendix's statements as "Lemma A.1 (title)".

sphinx-proof numbers statements by chapter, and the appendix is not a numbered chapter, so its
lemmas are written ``:nonumber:`` with the number leading the title ("A.1 (Gaussian quantile
bounds)"), which sphinx-proof shows as "Lemma (A.1 (Gaussian quantile bounds))".  This handler
moves the number next to the word, as in the paper.
"""

import re

_TITLE = re.compile(
    r'<span class="caption-number">(Lemma|Theorem|Corollary|Definition|Proposition) </span> '
    r"\(([A-Z]\.\d+) \((.*?)\)\)</p>"
)


def _number_appendix_statements(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if body and 'class="caption-number"' in body:
        context["body"] = _TITLE.sub(r'<span class="caption-number">\1 \2 </span> (\3)</p>', body)


def setup(app):
    app.connect("html-page-context", _number_appendix_statements)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
