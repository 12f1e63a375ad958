"""Pages without console errors: each inline script once, and a defined colour mode.

Every page of the book logged errors in the browser console, which tests/test_book.py now
refuses (it has no list of "harmless" ones any more):

- ``Identifier 'THEBE_JS_URL' has already been declared``: sphinx-thebe's ``const THEBE_JS_URL =
  ...`` script (and sphinx-togglebutton's selector script) reach a page twice, registered once
  through the application and once more directly on the builder, so the second
  ``const`` throws: the two copies differ only in their file name, ``None`` against ``""``, which
  Sphinx's own de-duplication compares.  :func:`_one_script_each` keeps the first of any scripts
  that differ only in that or in priority.
- ``Cannot read properties of undefined (reading 'Queue')`` on widget pages: ipywidgets 8 calls
  MathJax 2's API on the book's MathJax 3; ``_static/mathjax2-shim.js`` gives it the one call it
  makes.
- ``Got invalid theme mode: . Resetting to auto.`` on a first visit: the theme reads the colour
  mode from an empty ``default_mode``; ``_config.yml`` sets ``html_context: default_mode: auto``
  (what the theme fell back to anyway).
"""

from __future__ import annotations


def _key(script):
    attributes = {k: v for k, v in getattr(script, "attributes", {}).items() if k != "priority"}
    # an inline script is registered once with filename None and once with "" (hence the double)
    return (getattr(script, "filename", str(script)) or "", tuple(sorted(attributes.items())))


def _one_script_each(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        key = _key(script)
        if key in seen:
            continue
        seen.add(key)
        kept.append(script)
    if len(kept) != len(scripts):
        # the builder restores its own list after each page; only this page's copy changes
        scripts[:] = kept


def setup(app):
    # Early: "html-page-context" stops at the first handler that returns a template name, and the
    # duplicated scripts are all registered before any page is written.
    app.connect("html-page-context", _one_script_each, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
