"""Two more accessibility engines beside axe-core (tests/a11y.py), for issue 31: not a test module itself.

Each engine sees what axe does not, and says it in its own rules:

- HTML_CodeSniffer 2.5.1 (Squiz, BSD-3-Clause): the WCAG 2.0 AA standard (``WCAG2AA``), of whose
  messages only the errors count (its warnings and notices ask a person to look);
- IBM's accessibility-checker-engine 4.0.34 (Apache-2.0), the engine of IBM's Equal Access
  checker: the ``IBM_Accessibility`` policy, of whose results only the violations that fail
  (value ``["VIOLATION", "FAIL"]``) count; its potential violations and recommendations ask a
  person too.

Their scripts are vendored under tests/vendor/<engine>/ (the README there gives the source
package, the sha256 and how to refresh them), so that a check reaches nothing but the page:
:func:`htmlcs_errors` and :func:`ace_violations` inject one into a Playwright page and return
its findings as :class:`Finding` (rule, where, message).

A rule is left out only in :data:`LEFT_OUT`, with the reason: each is a false positive shown to
be one (tests/test_a11y_engines.py plants the real slip the rule is about and checks that the
rest of the engine still catches it).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import NamedTuple

VENDOR = Path(__file__).resolve().with_name("vendor")
ENGINES = {
    "htmlcs": {"name": "HTML_CodeSniffer", "package": "html_codesniffer", "version": "2.5.1",
               "file": VENDOR / "htmlcs" / "HTMLCS.js",
               "sha256": "bc9501382a35bff6acfc255945b1ed732fcec544cfcaeec17b5ac8d79a6c7967"},
    "ace": {"name": "accessibility-checker-engine", "package": "accessibility-checker-engine", "version": "4.0.34",
            "file": VENDOR / "ace" / "ace.js",
            "sha256": "1fd7c18b2aa5ba3ec0444a275e2e08e2823c317316c6613d1c273d2a688760fa"},
}


class Finding(NamedTuple):
    rule: str
    where: str  # a CSS path to the element, then the start of its HTML
    message: str


def sha256(engine):
    return hashlib.sha256(ENGINES[engine]["file"].read_bytes()).hexdigest()


def _inject(page, engine, present):
    if not page.evaluate(f"() => {present}"):
        # HTMLCS.js is a UMD module: where a page has an AMD loader (the widget manager's RequireJS
        # on the explorers' pages) it registers with that and sets no global, so the loader is
        # hidden while the script runs
        page.evaluate("() => { window.__a11yDefine = window.define; window.define = undefined; }")
        try:
            page.add_script_tag(content=ENGINES[engine]["file"].read_text(encoding="utf-8"))
        finally:
            page.evaluate("() => { window.define = window.__a11yDefine; delete window.__a11yDefine; }")
        if not page.evaluate(f"() => {present}"):
            raise RuntimeError(f"{ENGINES[engine]['name']} did not load into the page")


# A short CSS path to an element and the start of its HTML (both engines name elements differently).
_WHERE = r"""
const where = (el) => {
  if (!el || el.nodeType !== 1) { return String(el && el.nodeName || 'document'); }
  const parts = [];
  for (let e = el; e && e.nodeType === 1 && parts.length < 4; e = e.parentElement) {
    if (e.id) { parts.unshift('#' + e.id); break; }
    const cls = typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\s+/).slice(0, 2).join('.') : '';
    parts.unshift(e.tagName.toLowerCase() + cls);
  }
  return parts.join(' > ') + '  ' + el.outerHTML.replace(/\s+/g, ' ').slice(0, 160);
};
"""

# Findings left out, each with why: {engine: {rule: (test, reason)}}, where *test* is a JavaScript
# function of the element the engine named that says whether the finding is the false positive
# described (any other finding of the rule still counts).  tests/test_a11y_engines.py shows each
# to be false on the book's pages and plants the real slip, which is still reported.
LEFT_OUT = {
    "htmlcs": {
        "WCAG2AA.Principle3.Guideline3_2.3_2_2.H32.2": (
            """el => el.matches('form.bd-search')
                 && el.querySelectorAll('input:not([type=hidden]):not([type=submit]):not([type=button]):not([type=reset]),'
                                        + ' select, textarea').length === 1
                 && el.querySelector('input[type=search]') !== null""",
            "The theme's search form (in its search dialog) has one search field and no submit button. "
            "HTML submits a form with a single such field when Enter is pressed in it (implicit submission), "
            "so a keyboard user submits it as everyone does: tests/test_a11y_engines.py presses Enter in the "
            "book's own dialog and lands on search.html?q=.... H32 (a submit button) is one sufficient "
            "technique for WCAG 3.2.2, not a requirement; a form with more than one field and no submit "
            "button is still reported.",
        ),
    },
    "ace": {
        "element_tabbable_role_valid": (
            """el => {
                 if (!el.matches('pre') || !['auto', 'scroll'].includes(getComputedStyle(el).overflowX)) { return false; }
                 const text = document.createRange();
                 text.selectNodeContents(el);
                 const box = el.getBoundingClientRect();
                 return text.getBoundingClientRect().right + el.scrollLeft > box.left + el.clientLeft + el.clientWidth;
               }""",
            "A code block whose text runs past its visible box scrolls sideways, and a box that scrolls must be "
            "reachable by keyboard (WCAG 2.1.1; axe's scrollable-region-focusable asks for its tabindex 0): "
            "_static/dpmask-a11y.js gives it one. IBM's rule exempts elements that scroll, but its test of "
            "scrolling (VisUtil.isElementScrollable) takes the box's padding off the hidden width, so a block "
            "hiding less than its padding (chapter 3's codecell11: 27 px hidden, 32 px of padding) counts as "
            "not scrolling. The test above is the text itself running past the box; any other tabbable "
            "element without a widget role is still reported.",
        ),
    },
}


def _exempt_js(engine):
    """A JavaScript object {rule: function(element) -> left out} of :data:`LEFT_OUT`."""
    return "{" + ",".join(f"{rule!r}: ({test})" for rule, (test, _) in LEFT_OUT[engine].items()) + "}"


_HTMLCS = "async ([within, keepAll]) => {" + _WHERE + "const exempt = " + _exempt_js("htmlcs") + ";" + r"""
  const roots = within ? [...document.querySelectorAll(within)] : [document];
  const out = [];
  for (const root of roots) {
    await new Promise((resolve, reject) => HTMLCS.process('WCAG2AA', root, resolve, reject, 'en'));
    for (const m of HTMLCS.getMessages()) {
      if (m.type !== HTMLCS.ERROR) { continue; }
      if (!keepAll && exempt[m.code] && m.element && m.element.nodeType === 1 && exempt[m.code](m.element)) { continue; }
      out.push([m.code, where(m.element), m.msg.replace(/\s+/g, ' ').slice(0, 300)]);
    }
  }
  return out;
}
"""

_ACE = "async ([within, keepAll, potential]) => {" + _WHERE + "const exempt = " + _exempt_js("ace") + ";" + r"""
  const roots = within ? [...document.querySelectorAll(within)] : [document];
  const node = (xpath) => document.evaluate(xpath, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
  // element_orientation_unlocked (WCAG 1.3.4) fails only an element that a rule inside an @media
  // rotates (a transform with rotate or matrix: CSSUtil.getMediaOrientationTransform); on a page
  // with no such rule it can fail nothing, and it is skipped there, for it costs quadratic time
  // (CommonUtil.hasInnerContent walks each visible element's subtree: 70 % of the engine's time on
  // chapter 2).  A page with such a rule, or a stylesheet it cannot read, runs it.
  const rotates = (rules, inMedia) => [...rules].some(r =>
    r instanceof CSSMediaRule ? rotates(r.cssRules, true)
      : (inMedia && r.style && /rotate|matrix/i.test(r.style.getPropertyValue('transform')))
        || (r.cssRules ? rotates(r.cssRules, inMedia) : false));
  const lockable = [...document.styleSheets].some(sheet => { try { return rotates(sheet.cssRules, false); } catch (e) { return true; } });
  const out = [];
  for (const root of roots) {
    const checker = new ace.Checker();
    if (!lockable) {
      checker.rulesetRules.IBM_Accessibility = checker.rulesetRules.IBM_Accessibility.filter(id => id !== 'element_orientation_unlocked');
    }
    const report = await checker.check(root, ['IBM_Accessibility']);
    for (const r of report.results) {
      if (r.value[0] !== 'VIOLATION' || !(r.value[1] === 'FAIL' || (potential && r.value[1] === 'POTENTIAL'))) { continue; }
      const el = node(r.path.dom);
      if (!keepAll && exempt[r.ruleId] && el && el.nodeType === 1 && exempt[r.ruleId](el)) { continue; }
      out.push([r.ruleId, el ? where(el) : r.path.dom, r.message.replace(/\s+/g, ' ').slice(0, 300)]);
    }
  }
  return out;
}
"""


def htmlcs_errors(page, within=None, keep_all=False):
    """HTML_CodeSniffer's WCAG2AA errors on the page as it is now (within each element matching
    the CSS selector *within*, if given), less the false positives of :data:`LEFT_OUT` (unless
    *keep_all*)."""
    _inject(page, "htmlcs", "typeof window.HTMLCS === 'object'")
    return [Finding(*f) for f in page.evaluate(_HTMLCS, [within, keep_all])]


def ace_violations(page, within=None, keep_all=False, potential=False):
    """The IBM engine's failed violations (policy IBM_Accessibility) on the page as it is now
    (within each element matching *within*, if given), less the false positives of
    :data:`LEFT_OUT` (unless *keep_all*); with *potential*, its potential violations too (what
    it asks a person to judge: a duplicate id is one)."""
    _inject(page, "ace", "typeof window.ace === 'object' && typeof window.ace.Checker === 'function'")
    return [Finding(*f) for f in page.evaluate(_ACE, [within, keep_all, potential])]


def check_states(page, engine, opened=True):
    """{"closed": findings, "opened": findings} of *engine* ("htmlcs" or "ace") on the page.

    Closed: the whole page as it loads.  Opened: every dropdown opened (tests/a11y.py's
    set_dropdowns), each opened part checked on its own (what opening showed, and all that
    changed); the page is left closed.  With *opened* false, closed alone ("opened" is empty).
    """
    run = htmlcs_errors if engine == "htmlcs" else ace_violations
    out = {"closed": run(page), "opened": []}
    import a11y

    if opened and a11y.set_dropdowns(page, True):
        out["opened"] = run(page, within="[data-a11y-opened]")
        a11y.set_dropdowns(page, False)
    return out


def per_rule(findings):
    """{rule: count}."""
    return dict(Counter(f.rule for f in findings))


def describe(findings, limit=3):
    """One line per rule with its count and its first few elements: for a failure message."""
    lines = []
    for rule, n in sorted(per_rule(findings).items()):
        lines.append(f"{rule} ({n}):")
        for f in [f for f in findings if f.rule == rule][:limit]:
            lines.append(f"    {f.where}\n      {f.message}")
    return "\n".join(lines)


def sweep(html_dir, pages, engine, opened=True):
    """{page: {state: findings}} of *engine* over *pages* of the edition in *html_dir*, each served
    on 127.0.0.1 and opened at 1280 px as tests/test_a11y_engines.py opens them (empty when all
    pass): the student edition's sweep in tests/test_publish.py (*opened*: as :func:`check_states`)."""
    import a11y
    from _ext_import import ext_module
    from playwright.sync_api import sync_playwright

    localhost = ext_module("localhost")
    found = {}
    with localhost.serve(html_dir) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=localhost.CHROMIUM, headless=True, args=localhost.CHROMIUM_ARGS)
        for name in pages:
            context = browser.new_context(viewport=a11y.DESKTOP)
            try:
                page = context.new_page()
                page.goto(f"{base}/{name}.html", wait_until="load", timeout=120000)
                page.wait_for_function(a11y._MATHJAX_DONE, timeout=60000)
                a11y.wait_for_explorers(page)
                page.wait_for_timeout(300)
                states = {k: v for k, v in check_states(page, engine, opened).items() if v}
            finally:
                context.close()
            if states:
                found[name] = states
        browser.close()
    return found
