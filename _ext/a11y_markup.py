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
- Ids (issue 31): sphinx-proof and sphinx-exercise give every statement's body the same id
  (``proof-content``, ``exercise-content`` ...), and a statement shown twice keeps its label's id
  twice; 100 duplicates over 12 pages.  Each repeat gets a suffix (``proof-content-2``); a link to
  ``#id`` went to the first one and still does.
- Figures (issue 31): a ``<figure>`` with a ``<figcaption>`` is named by it
  (``aria-labelledby`` the caption, which gets an id), so that a screen reader's list of figures
  reads their captions.
"""

from __future__ import annotations

import re

_BIBLIOENTRY = re.compile(r'(<div\b[^>]*\bclass="citation"[^>]*\brole=")doc-biblioentry(")')


_ID = re.compile(r'(<[A-Za-z][^<>]*?\sid=")([^"]+)(")')
_FIGURE = re.compile(r"<figure\b([^>]*)>(.*?)</figure>", re.S)
_FIGCAPTION = re.compile(r"<figcaption\b([^>]*)>")
_ID_OF = re.compile(r'\sid="([^"]+)"')


def unique_ids(body):
    """*body* with every repeated id given a suffix (-2, -3 ...) not used elsewhere in it."""
    taken = set(m.group(2) for m in _ID.finditer(body))
    seen = set()

    def one(m):
        name = m.group(2)
        if name not in seen:
            seen.add(name)
            return m.group(0)
        n = 2
        while f"{name}-{n}" in taken:
            n += 1
        taken.add(f"{name}-{n}")
        return f"{m.group(1)}{name}-{n}{m.group(3)}"

    return _ID.sub(one, body)


def name_figures(body):
    """*body* with every ``<figure>`` that has a ``<figcaption>`` labelled by it."""
    count = [0]

    def one(m):
        attrs, inner = m.group(1), m.group(2)
        caption = _FIGCAPTION.search(inner)
        if caption is None or "aria-labelledby" in attrs or "aria-label=" in attrs:
            return m.group(0)
        own = _ID_OF.search(caption.group(1))
        if own:
            cap_id = own.group(1)
        else:
            fig = _ID_OF.search(attrs)
            count[0] += 1
            cap_id = f"{fig.group(1)}-caption" if fig else f"figure-caption-{count[0]}"
            inner = inner[:caption.start()] + f'<figcaption{caption.group(1)} id="{cap_id}">' + inner[caption.end():]
        return f'<figure{attrs} aria-labelledby="{cap_id}">{inner}</figure>'

    return _FIGURE.sub(one, body)


def fix_body(body):
    """*body* (a page's HTML) with bibliography entries as ``listitem``, figures named by their
    captions and ids made unique."""
    if "doc-biblioentry" in body:
        body = _BIBLIOENTRY.sub(r"\1listitem\2", body)
    if "<figure" in body:
        body = name_figures(body)
    return unique_ids(body)


def _fix_page(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if body:
        context["body"] = fix_body(body)


def setup(app):
    app.connect("html-page-context", _fix_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
