"""The axe-core accessibility check, shared by the book's browser tests (not a test module itself).

axe-core is the engine most accessibility audits use; it checks a rendered page against the WCAG
rules that a program can decide.  Its script comes from the ``axe-playwright-python`` package (the
``test`` extra of pyproject.toml), which ships ``axe.min.js`` inside the wheel: no network, no
npm, the version pinned by the package's.  :func:`axe_violations` injects it into a Playwright
page and runs the WCAG 2.0 and 2.1 A and AA rules (:data:`TAGS`); no rule is switched off.

What a page is checked in (tests/test_book.py for the full edition, tests/test_publish.py for the
student edition): the explorers drawn from their saved state, at 390 px and at 1280 px, with every
dropdown (the solutions, the hidden code cells) closed and then opened (:func:`set_dropdowns`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# Rules with those tags that the bundled axe-core (4.12) still marks experimental, and so leaves
# out of a run by tag, while axe-core 4.14 runs them as stable WCAG rules: enabled here, so that
# the check is the 4.14 one (label-content-name-mismatch: WCAG 2.5.3, "Label in Name").
PROMOTED = ["label-content-name-mismatch"]


def axe_script_path():
    import axe_playwright_python

    return Path(axe_playwright_python.__file__).with_name("axe.min.js")


def axe_version():
    text = axe_script_path().read_text(encoding="utf-8")[:400]
    return re.search(r"axe v(\d+\.\d+\.\d+)", text).group(1)


def _inject(page):
    if not page.evaluate("() => typeof window.axe === 'object' && typeof window.axe.run === 'function'"):
        page.add_script_tag(content=axe_script_path().read_text(encoding="utf-8"))


_RUN = """
async ([tags, only, promoted]) => {
  const context = only ? document.querySelectorAll(only) : document;
  const result = await axe.run(context, {runOnly: {type: 'tag', values: tags}, rules: promoted, resultTypes: ['violations'],
                                                // no fetch of the stylesheets again (axe resolved the theme's
                                                // @import "basic.css" against the page: a 404 in the console);
                                                // only css-orientation-lock, experimental and not run, reads them
                                                preload: false});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 200),
                              summary: (n.failureSummary || '').slice(0, 300)})),
  }));
}
"""


def axe_violations(page, opened_only=False, within=None):
    """The axe-core violations of the page as it is now: [{id, impact, help, nodes: [...]}].

    *opened_only*: only within the elements :func:`set_dropdowns` opened.  *within*: only within
    the elements matching this CSS selector (tests/test_live_a11y.py: the explorers' output areas
    in JupyterLab, whose own interface is not the book's).
    """
    _inject(page)
    only = within or ("[data-a11y-opened]" if opened_only else None)
    return page.evaluate(_RUN, [TAGS, only, {r: {"enabled": True} for r in PROMOTED}])


def describe(violations, limit=3):
    """One line per rule (its elements counted), with the first few elements: for a failure message."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} elements): {v['help']}")
        for node in v["nodes"][:limit]:
            lines.append(f"    {node['target']}: {node['html']}")
    return "\n".join(lines)


# Every dropdown of the page: sphinx-togglebutton's solutions and notes (a button that toggles the
# class toggle-hidden on its target) and every <details> (hidden code cells, dropdown admonitions,
# the navigation's sections).  Each one changed is marked data-a11y-opened, so that axe can then
# be run on the opened content alone (:func:`axe_violations` with ``opened_only``).
_DROPDOWNS = """
(open) => {
  let changed = 0;
  for (const button of document.querySelectorAll('button.toggle-button[data-target]')) {
    const item = document.getElementById(button.dataset.target);
    if (!item || item.classList.contains('toggle-hidden') !== open) { continue; }
    button.click();
    item.setAttribute('data-a11y-opened', '');
    changed++;
  }
  for (const details of document.querySelectorAll('details')) {
    if (details.open === open) { continue; }
    details.open = open;
    details.setAttribute('data-a11y-opened', '');
    changed++;
  }
  if (!open) {
    for (const el of document.querySelectorAll('[data-a11y-opened]')) { el.removeAttribute('data-a11y-opened'); }
  }
  return changed;
}
"""


def set_dropdowns(page, open_):
    """Open (or close) every dropdown on the page; return how many changed."""
    changed = page.evaluate(_DROPDOWNS, bool(open_))
    # the page's scripts answer a toggle after a frame or a short timeout (_static/dpmask-a11y.js and
    # dpmask-explorers-a11y.js: 30 ms); sphinx-togglebutton fades a solution in for 0.3 s, and axe
    # run while it is half faded reads its text as too faint (401 code tokens of chapter 1 on a
    # loaded machine, 29 Nov 2026): wait for every finite animation to end (at most 5 s)
    page.evaluate(_SETTLED)
    return changed


_SETTLED = """
() => new Promise(r => setTimeout(r, 300)).then(() => Promise.race([
  Promise.all(document.getAnimations()
    .filter(a => a.effect && a.effect.getComputedTiming().iterations !== Infinity)
    .map(a => a.finished.catch(() => null))),
  new Promise(r => setTimeout(r, 5000))]))
"""


def wait_for_explorers(page, timeout=30000):
    """Wait until every slider drawn by the widget manager has been named by _static/dpmask-explorers-a11y.js."""
    if page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count():
        page.wait_for_selector(".widget-slider [role='slider']", timeout=timeout)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.widget-slider [role=\\'slider\\']')]"
            ".every(h => h.hasAttribute('aria-label'))"
            " && [...document.querySelectorAll('img.widget-image')].every(i => i.hasAttribute('alt'))",
            timeout=timeout,
        )


def check_states(page, opened=True):
    """{state: violations} of the page at its current width: dropdowns closed, then opened.

    Closed: the whole page.  Opened: only what opening showed (the dropdowns' content and their
    buttons), which is all that changed; the page is left with its dropdowns closed.  With
    *opened* false, closed alone (the student edition: its dropdowns are the full edition's,
    tests/test_publish.py).
    """
    page.wait_for_timeout(100)  # the page script's answer to a resize (30 ms)
    out = {"closed": axe_violations(page)}
    if opened and set_dropdowns(page, True):
        out["opened"] = axe_violations(page, opened_only=True)
        set_dropdowns(page, False)
    else:
        out["opened"] = []
    return out


def counts(violations):
    """{rule: number of elements}."""
    return {v["id"]: len(v["nodes"]) for v in violations}


def to_json(violations):
    return json.dumps(violations, indent=1, ensure_ascii=False)


# --- a whole edition ---------------------------------------------------------------------------

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
DESKTOP = {"width": 1280, "height": 800}
# The page as a reader gets it: MathJax has typeset it and every web font has arrived (a font that
# arrives late changes what overflows, and the page script measures again then: _static/dpmask-a11y.js;
# read before, a loaded machine saw a formula still a "Wide formula" stop, 29 Nov 2026).  The callers
# then wait 100-300 ms more, for the page script's pass (30 ms after a change).
_MATHJAX_DONE = (
    "() => (document.fonts === undefined || document.fonts.status === 'loaded')"
    " && (window.MathJax === undefined || (window.MathJax.startup && window.MathJax.startup.promise"
    " && (window.__mjDone || (window.MathJax.startup.promise.then(() => { window.__mjDone = true; }), false))))"
)


# Every transition and animation that will end has ended (an endless one, a spinner, is not waited for).
_STILL = """() => document.getAnimations().every(a => a.playState !== 'running'
  || !isFinite(a.effect.getComputedTiming().endTime))"""


def widen(page):
    """Widen *page* to a desktop's 1280 px and wait until its layout has settled.

    Past 960 px the theme slides its sidebar in (a 250 ms transition, the contents' box 400 ms), and
    the text column narrows all that time; the page script measures what scrolls as the column
    changes (_static/dpmask-a11y.js), the theme 300 ms after the resize.  The check waits for every
    transition to end, then 400 ms: both scripts' last passes.  Read mid-slide, a code block that
    scrolls at the final width can still be without its stop (CI, 29 Nov 2026: chapters/course).
    """
    page.set_viewport_size(DESKTOP)
    page.wait_for_function(_STILL, timeout=10000)
    page.wait_for_timeout(400)


def check_edition(html_dir, pages, phone=True, opened=True):
    """{page: {where: violations}} over *pages* of the edition in *html_dir* (empty when all pass).

    Each page is opened once on a phone (390 px), checked with its dropdowns closed and opened,
    widened to 1280 px and checked again, as tests/test_book.py does for the full edition.  With
    *phone* false, only at 1280 px (opened at that width); with *opened* false, with the
    dropdowns closed alone (:func:`check_states`).
    """
    from _ext_import import ext_module
    from playwright.sync_api import sync_playwright

    localhost = ext_module("localhost")
    found = {}
    with localhost.serve(html_dir) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=localhost.CHROMIUM, headless=True, args=localhost.CHROMIUM_ARGS)
        for name in pages:
            context = browser.new_context(**PHONE) if phone else browser.new_context(viewport=DESKTOP)
            try:
                page = context.new_page()
                page.goto(f"{base}/{name}.html", wait_until="load")
                page.wait_for_function(_MATHJAX_DONE, timeout=60000)
                wait_for_explorers(page)
                here = {f"390 px, dropdowns {k}": v for k, v in check_states(page, opened).items() if v} if phone else {}
                widen(page)
                here.update({f"1280 px, dropdowns {k}": v for k, v in check_states(page, opened).items() if v})
            finally:
                context.close()
            if here:
                found[name] = here
        browser.close()
    return found


# --- the keyboard ------------------------------------------------------------------------------

# What the Tab key has just focused, scrolled to the middle of the window (clear of the sticky
# header), with the box a screenshot of its focus ring takes; None when the focus has left the
# page (after its last stop) or come back to a stop already seen (the walk wrapped round).
_FOCUSED = """
async (pad) => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) { return null; }
  if (el.__a11yWalked) { return null; }
  el.__a11yWalked = true;
  window.__a11yFocused = el;
  window.__a11yStops = (window.__a11yStops || 0) + 1;
  el.setAttribute('data-a11y-stop', window.__a11yStops - 1);  // for its role and name (tab_walk's names)
  // what the focus sets moving (the skip link slides in) ends first, within a second
  const settled = () => Promise.race([Promise.all(document.getAnimations().map(a => a.finished.catch(() => null))),
                                      new Promise(r => setTimeout(r, 1000))]);
  await settled();
  el.scrollIntoView({block: 'center', inline: 'nearest'});
  await settled();
  // the control and its parts (the navigation's <summary> draws its ring on the icon inside it,
  // which lies outside the summary's own box)
  const r = [el, ...el.querySelectorAll('*')].map(e => e.getBoundingClientRect()).filter(b => b.width > 0 && b.height > 0)
    .reduce((u, b) => ({left: Math.min(u.left, b.left), top: Math.min(u.top, b.top), right: Math.max(u.right, b.right),
                        bottom: Math.max(u.bottom, b.bottom)}), el.getBoundingClientRect());
  const vw = document.documentElement.clientWidth, vh = window.innerHeight;
  const x = Math.max(0, Math.floor(r.left - pad)), y = Math.max(0, Math.floor(r.top - pad));
  const w = Math.min(vw, Math.ceil(r.right + pad)) - x, h = Math.min(vh, Math.ceil(r.bottom + pad)) - y;
  const cls = typeof el.className === 'string' ? el.className.trim().split(/\\s+/).slice(0, 3).join('.') : '';
  // how its focus looks: what draws a ring or a change (its focused style), on what background, and
  // whether a box that clips its overflow cuts the ring off; stops that share all of it look alike
  const st = getComputedStyle(el);
  let bg = 'rgba(0, 0, 0, 0)', clipped = false;
  const ring = (parseFloat(st.outlineWidth) || 0) + Math.max(0, parseFloat(st.outlineOffset) || 0) + 1;
  const own = el.getBoundingClientRect();
  for (let a = el.parentElement; a; a = a.parentElement) {
    const as = getComputedStyle(a);
    if (bg === 'rgba(0, 0, 0, 0)' && as.backgroundColor !== 'rgba(0, 0, 0, 0)') { bg = as.backgroundColor; }
    if (as.overflowX !== 'visible' || as.overflowY !== 'visible') {
      const b = a.getBoundingClientRect();
      if (own.left - ring < b.left || own.top - ring < b.top || own.right + ring > b.right || own.bottom + ring > b.bottom) { clipped = true; }
    }
  }
  const look = [el.tagName, [...el.classList].sort().join('.'), el.getAttribute('role') || '', st.outlineStyle, st.outlineWidth,
                st.outlineColor, st.outlineOffset, st.boxShadow, st.backgroundColor, st.color, st.borderColor, st.textDecorationLine,
                bg, clipped].join('|');
  return {
    look,
    what: el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (cls ? '.' + cls : ''),
    text: (el.getAttribute('aria-label') || el.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 60),
    // a formula, or the box the book's layout gives one (a scroll container, which Chromium makes a
    // Tab stop of its own once nothing inside it is one), unless it really scrolls sideways
    formula: el.closest('mjx-container, span.math, div.math') !== null && !el.matches('a, button')
             && !(el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight + 12),
    slider: el.getAttribute('role') === 'slider',
    box: w > 0 && h > 0 ? {x, y, width: w, height: h} : null,
  };
}
"""
# two frames, or 500 ms if the renderer draws none (a frame is not guaranteed: tests/test_book.py)
_NEXT_FRAME = "() => new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, 500); })"
_BLUR = "() => { window.__a11yFocused.blur(); }"
_REFOCUS = "() => { window.__a11yFocused.focus({preventScroll: true}); }"
# Tooltips are not a focus indicator of the control (the theme's show one on focus, beside it)
_NO_TOOLTIPS = ".tooltip, .popover { display: none !important; }"
# A focus style is read where it ends, not on its way there: the theme fades a link's colour in
# 0.2 s, and the walk waited for that at every stop (70 ms of the 130 ms a stop took on the API
# page, 29 Nov 2026), and a screenshot two frames after a blur could catch a fade half undone.
_NO_MOTION = "*, *::before, *::after { transition: none !important; animation: none !important; }"


def _pixels_changed(before, after):
    """How many pixels of two PNG screenshots of the same box differ."""
    import io

    from PIL import Image, ImageChops

    a = Image.open(io.BytesIO(before)).convert("RGB")
    b = Image.open(io.BytesIO(after)).convert("RGB")
    if a.size != b.size:
        return a.size[0] * a.size[1]
    diff = ImageChops.difference(a, b).convert("L").point(lambda v: 255 if v > 16 else 0)
    return diff.histogram()[255]


def tab_walk(page, limit=3000, screenshots=False, pad=4, names=False):
    """Press Tab from the top of *page* until the focus leaves it; return one dict per stop.

    Each stop: ``what`` (tag#id.class), ``text`` (its label or text, cut), ``formula`` (a MathJax
    formula, inside one or its box, and not a box that scrolls sideways), ``slider`` (role slider), ``box``,
    with *names*, ``role`` and ``name`` (Chromium's accessibility tree, read once the walk has ended:
    :func:`add_roles_and_names`), ``look`` (what its focus looks like: its focused style, the
    background under it, whether an overflow box clips it); with *screenshots*, ``changed``:
    the pixels that differ between a screenshot of the box (the element with its parts, and
    *pad* px round it)
    focused and the same box after the element is blurred, the focus indicator a sighted
    keyboard user sees (0: none drawn, whatever the computed style says).

    *screenshots* ``"distinct"``: one screenshot pair per ``look``, the first stop that has it; the
    others take its ``changed`` and name it in ``like`` (a page's hundred contents links are one
    look).  A sweep of every page that way costs seconds a page, not a minute.
    """
    if screenshots:
        page.add_style_tag(content=_NO_TOOLTIPS)
    page.add_style_tag(content=_NO_MOTION)
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); }")
    stops, seen = [], {}
    for _ in range(limit):
        page.keyboard.press("Tab")
        stop = page.evaluate(_FOCUSED, pad)
        if stop is None:
            break
        if screenshots == "distinct" and stop["look"] in seen:
            stop["changed"], stop["like"] = seen[stop["look"]]
        elif screenshots:
            if stop["box"] is None:
                stop["changed"] = 0
            else:
                page.evaluate(_NEXT_FRAME)
                focused = page.screenshot(clip=stop["box"], animations="disabled", caret="initial")
                page.evaluate(_BLUR)
                page.evaluate(_NEXT_FRAME)
                blurred = page.screenshot(clip=stop["box"], animations="disabled", caret="initial")
                page.evaluate(_REFOCUS)
                stop["changed"] = _pixels_changed(focused, blurred)
            seen[stop["look"]] = (stop["changed"], stop["what"])
        stops.append(stop)
    if names:
        add_roles_and_names(page, stops)
    return stops


def add_roles_and_names(page, stops):
    """Each stop's ``role`` and ``name`` as Chromium's accessibility tree gives them to a screen reader.

    Read through the DevTools protocol after the walk: the tree is built once, here.  (Chromium's
    ``element.computedRole``, behind a flag, keeps it live during the walk: ten times slower.)"""
    cdp = page.context.new_cdp_session(page)
    try:
        root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        for node_id in cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-a11y-stop]"})["nodeIds"]:
            attrs = cdp.send("DOM.getAttributes", {"nodeId": node_id})["attributes"]
            index = int(dict(zip(attrs[::2], attrs[1::2]))["data-a11y-stop"])
            if index >= len(stops):
                continue
            ax = cdp.send("Accessibility.getPartialAXTree", {"nodeId": node_id, "fetchRelatives": False})["nodes"]
            node = ax[0] if ax else {}
            stops[index]["role"] = (node.get("role") or {}).get("value", "")
            stops[index]["name"] = (node.get("name") or {}).get("value", "")
    finally:
        cdp.detach()
    for stop in stops:
        stop.setdefault("role", "")
        stop.setdefault("name", "")



# A stop's role that says nothing of what it is (Chromium's tree).
VAGUE_ROLES = {"generic", "none", "presentation", "GenericContainer", "Ignored", ""}


def unnamed_stops(stops):
    """Stops without a role that says what they are, or without a name ("what (text)")."""
    return [f"{s['what']} ({s['text']!r}: role {s['role']!r}, name {s['name']!r})" for s in stops
            if s["role"] in VAGUE_ROLES or not (s["name"] or "").strip()]


def stops_before_first_slider(stops):
    """How many Tab stops come before the page's first slider (None: the page has none)."""
    for i, stop in enumerate(stops):
        if stop["slider"]:
            return i
    return None


# --- names and ids that axe-core does not check (issue 31) -------------------------------------

_NAME_PROBLEMS = """
() => {
  const problems = [];
  for (const b of document.querySelectorAll('button.toggle-button[data-target]')) {
    const item = document.getElementById(b.dataset.target);
    const title = item && item.querySelector(':scope > .admonition-title');
    const label = b.getAttribute('aria-label') || '';
    const m = title && title.textContent.match(/^\\s*Solution to (Exercise [\\dA-Z]+(?:\\.\\d+)*)/);
    const verb = item && item.classList.contains('toggle-hidden') ? 'Show' : 'Hide';
    if (m && label !== `${verb} the solution to ${m[1]}`) {
      problems.push(`solution toggle of ${m[1]} named "${label}"`);
    } else if (!m && !label.startsWith(verb + ' ')) {
      problems.push(`toggle of "${title ? title.textContent.trim().slice(0, 40) : b.dataset.target}" named "${label}"`);
    }
    for (const svg of b.querySelectorAll('svg')) {
      if (svg.getAttribute('aria-hidden') !== 'true') { problems.push(`toggle "${label}": its chevron is not hidden`); }
    }
  }
  for (const r of document.querySelectorAll('.widget-readout')) {
    // an editing host is a Tab stop whatever its tabIndex says (Chromium: -1)
    if ((r.isContentEditable || r.tabIndex >= 0)
        && !(r.getAttribute('role') === 'textbox' && (r.getAttribute('aria-label') || '').trim())) {
      problems.push(`an unnamed readout in the Tab order ("${r.textContent.trim()}")`);
    }
  }
  for (const f of document.querySelectorAll('figure')) {
    const cap = f.querySelector('figcaption');
    const by = f.getAttribute('aria-labelledby');
    if (cap && (!by || document.getElementById(by) !== cap)) {
      problems.push(`figure ${f.id || ''} not named by its caption`);
    }
  }
  // a heading or link that holds a formula: Chromium's name from its content leaves the formula out,
  // so it must be named, and the name must hold every letter and number of each formula's MathML
  for (const el of document.querySelectorAll('h1, h2, h3, h4, h5, h6, a[href]')) {
    const maths = [...el.querySelectorAll('mjx-container mjx-assistive-mml math')];
    if (!maths.length) { continue; }
    const label = el.getAttribute('aria-label') || '';
    const shown = el.textContent.replace(/\\s+/g, ' ').trim().slice(0, 50);
    // each letter and number, or for a power 2 or a transpose the word the script speaks
    const said = t => {
      const x = t.textContent.trim(), up = t.parentElement.localName === 'msup' && t.previousElementSibling;
      return up && x === '2' ? 'squared' : up && (x === '⊤' || x === 'T') ? 'transpose' : x;
    };
    const lost = maths.flatMap(m => [...m.querySelectorAll('mi, mn')].map(said)).filter(t => t && !label.includes(t));
    if (!label || lost.length) {
      problems.push(`${el.localName} "${shown}" named "${label}" without its formula (${lost.join(' ') || 'no name'})`);
    }
  }
  // the page's h1 is its first heading (a screen reader's list of headings starts with the title)
  const heads = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6, [role="heading"]')]
    .filter(h => h.getClientRects().length && !h.closest('[aria-hidden="true"]'));
  if (heads.length && heads[0].localName !== 'h1') {
    problems.push(`heading "${heads[0].textContent.trim().slice(0, 40)}" before the page's h1`);
  }
  // a table named: by its caption or a label (a screen reader's list of tables reads the names)
  for (const t of document.querySelectorAll('table')) {
    const by = t.getAttribute('aria-labelledby');
    const named = (t.querySelector('caption') && t.querySelector('caption').textContent.trim())
      || (t.getAttribute('aria-label') || '').trim() || (by && document.getElementById(by) && document.getElementById(by).textContent.trim());
    if (!named) { problems.push(`table "${t.textContent.replace(/\\s+/g, ' ').trim().slice(0, 40)}" has no name`); }
  }
  const seen = new Map();
  for (const el of document.querySelectorAll('[id]')) { seen.set(el.id, (seen.get(el.id) || 0) + 1); }
  for (const [id, n] of seen) { if (n > 1) { problems.push(`id "${id}" ${n} times`); } }
  return problems;
}
"""


def name_problems(page):
    """What a screen reader would name badly on the page as it is now (empty when all is well):
    a solution's toggle not named "Show (Hide) the solution to Exercise N.M" (another toggle not
    starting with its verb), a toggle's chevron not hidden, a readout in the Tab order without a
    name, a figure not named by its caption, a heading or link holding a formula whose name leaves
    the formula out, a heading before the page's h1, a table without a name, an id used twice."""
    return page.evaluate(_NAME_PROBLEMS)
