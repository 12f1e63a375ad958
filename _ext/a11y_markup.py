"""Markup that screen readers misread, fixed in each page's body before it is written.

tests/test_book.py runs axe-core (the WCAG 2.0/2.1 A and AA rules) on every page and fails on any
violation; what the theme's templates get wrong is fixed by ``_static/dpmask-a11y.js``, what the
page body gets wrong here, where it is made:

- The bibliography (chapters/references): docutils writes ``<div role="list"
  class="citation-list">`` holding ``<div class="citation" role="doc-biblioentry">`` entries.
  ``doc-biblioentry`` is deprecated (DPUB-ARIA 1.1: "authors should use the listitem role"), and
  a ``list`` must own ``listitem`` children, so axe reported ``aria-deprecated-role`` and
  ``aria-required-children``.  Each entry becomes a ``listitem``, which screen readers announce
  as "list, 40 items" and then each entry, as the old role meant to.
"""

from __future__ import annotations

import re

_BIBLIOENTRY = re.compile(r'(<div\b[^>]*\bclass="citation"[^>]*\brole=")doc-biblioentry(")')


def fix_body(body):
    """*body* (a page's HTML) with every bibliography entry's role made ``listitem``."""
    return _BIBLIOENTRY.sub(r"\1listitem\2", body)


def _fix_page(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if body and "doc-biblioentry" in body:
        context["body"] = fix_body(body)


def setup(app):
    app.connect("html-page-context", _fix_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
