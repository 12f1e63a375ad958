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

_HTMLCS = "async (within) => {" + _WHERE + r"""
  const root = within ? document.querySelector(within) : document;
  await new Promise((resolve, reject) => HTMLCS.process('WCAG2AA', root, resolve, reject, 'en'));
  return HTMLCS.getMessages().filter(m => m.type === HTMLCS.ERROR)
    .map(m => [m.code, where(m.element), m.msg.replace(/\s+/g, ' ').slice(0, 300)]);
}
"""

_ACE = "async (within) => {" + _WHERE + r"""
  const root = within ? document.querySelector(within) : document;
  const report = await new ace.Checker().check(root, ['IBM_Accessibility']);
  const node = (xpath) => document.evaluate(xpath, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
  return report.results.filter(r => r.value[0] === 'VIOLATION' && r.value[1] === 'FAIL')
    .map(r => [r.ruleId, where(node(r.path.dom)) || r.path.dom, r.message.replace(/\s+/g, ' ').slice(0, 300)]);
}
"""

# Rules left out, each with why: {engine: {rule: reason}}.
LEFT_OUT = {"htmlcs": {}, "ace": {}}


def htmlcs_errors(page, within=None, keep_all=False):
    """HTML_CodeSniffer's WCAG2AA errors on the page as it is now (within the first element
    matching the CSS selector *within*, if given), less the rules of :data:`LEFT_OUT`."""
    _inject(page, "htmlcs", "typeof window.HTMLCS === 'object'")
    found = [Finding(*f) for f in page.evaluate(_HTMLCS, within)]
    return found if keep_all else [f for f in found if f.rule not in LEFT_OUT["htmlcs"]]


def ace_violations(page, within=None, keep_all=False):
    """The IBM engine's failed violations (policy IBM_Accessibility) on the page as it is now, less
    the rules of :data:`LEFT_OUT`."""
    _inject(page, "ace", "typeof window.ace === 'object' && typeof window.ace.Checker === 'function'")
    found = [Finding(*f) for f in page.evaluate(_ACE, within)]
    return found if keep_all else [f for f in found if f.rule not in LEFT_OUT["ace"]]


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
