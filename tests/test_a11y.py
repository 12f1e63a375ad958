"""The accessibility checks check themselves, and the book's fixes do what they claim.

tests/test_book.py runs axe-core (tests/a11y.py: WCAG 2.0/2.1 A and AA, no rule switched off) on
every page of the full edition at 390 px and 1280 px with the dropdowns closed and opened;
tests/test_publish.py does the same on the student edition.  A check that cannot fail proves
nothing, so here axe runs on small planted pages: each slip the issue named (an image without
alternative text, a link of too little contrast inside a coloured box, an unnamed slider, an
icon-only expand toggle, a button whose name leaves out its visible text, a deprecated role on
the bibliography, a slip hidden in a closed dropdown) must be reported, and the same page with
the book's fix (``_static/dpmask-a11y.js``, ``_static/dpmask-explorers-a11y.js``,
``_ext/a11y_markup.py``) must pass.  The statement of what is tested is the page
chapters/accessibility.md.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

import a11y
from _ext_import import ext_module

ROOT = Path(__file__).resolve().parents[1]
# the page scripts the book adds to every page: the theme's fixes and the explorers' (one source with JupyterLab)
SCRIPT = "\n".join((ROOT / "_static" / name).read_text(encoding="utf-8") for name in ("dpmask-a11y.js", "dpmask-explorers-a11y.js"))


def _page(body, script=False):
    scripts = f"<script>{SCRIPT}</script>" if script else ""
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Planted</title>"
            f"</head><body><main><h1>A planted page</h1>{body}</main>{scripts}</body></html>")


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    yield context.new_page()
    context.close()


def _rules(page, html, **kw):
    page.set_content(html)
    page.wait_for_timeout(100)
    return set(a11y.counts(a11y.axe_violations(page, **kw)))


# An ipywidgets 8 slider as the static widget manager draws it (a log slider: noUiSlider's value
# text is the exponent), then an explorer's numbers panel and its plot.
_SLIDER = """
<div class="widget-vbox"><div class="widget-vbox">
 <div class="widget-hslider widget-slider jupyter-widgets widget-inline-hbox">
  <label class="widget-label" title="ε, privacy loss (no unit)" style="display:inline-block">ε</label>
  <div class="slider-container"><div class="slider noUi-target noUi-ltr noUi-horizontal">
   <div class="noUi-base"><div class="noUi-origin">
    <div class="noUi-handle" data-handle="0" tabindex="0" role="slider" aria-orientation="horizontal"
         aria-valuemin="-3.0" aria-valuemax="0.0" aria-valuenow="-0.3" aria-valuetext="-0.30"></div>
   </div></div></div></div>
  <div class="widget-readout">0.501</div>
 </div></div>
 <div class="widget-html"><div class="widget-html-content"><div role="status"><table><tr><td>σ</td><td>1.2</td></tr></table></div></div></div>
 <img class="widget-image" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==">
</div>
"""


def test_a_clean_page_passes(page):
    assert _rules(page, _page("<p>Text with a <a href='#x'>link</a>.</p>")) == set()


def test_an_image_without_alternative_text_fails(page):
    assert "image-alt" in _rules(page, _page("<img src='data:image/png;base64,iVBORw0KGgo=' class='widget-image'>"))


def test_a_low_contrast_link_in_a_tip_fails(page):
    # the theme's link colour on a tip's green, 4.4 : 1 (the measurement)
    box = ("<div style='background:#ebfae6;padding:1em'><p style='color:#000'>See "
           "<a href='#x' style='color:#176de8'>the lemma</a>.</p></div>")
    assert "color-contrast" in _rules(page, _page(box))


def test_an_unnamed_slider_fails_and_the_books_script_names_it(page):
    bare = _SLIDER.replace(' title="ε, privacy loss (no unit)"', "")
    # without the book's script: the handle has no name, the plot no alternative
    assert {"aria-input-field-name", "image-alt"} <= _rules(page, _page(bare))
    # with it: named after the package's long name, valued as the readout shows
    assert _rules(page, _page(_SLIDER, script=True)) == set()
    handle = page.locator("[role=slider]")
    assert handle.get_attribute("aria-label") == "ε, privacy loss (no unit)"
    assert handle.get_attribute("aria-valuetext") == "0.501"
    assert page.locator(".widget-html-content").get_attribute("aria-live") == "polite"
    assert page.locator("img.widget-image").get_attribute("alt").startswith("Plot of the explorer at ε = 0.501")
    # noUiSlider writes its exponent back on every move; the script puts the readout back
    page.evaluate("() => { const h = document.querySelector('[role=slider]'); h.setAttribute('aria-valuetext', '-0.20');"
                  " document.querySelector('.widget-readout').textContent = '0.631'; }")
    page.wait_for_timeout(100)
    assert handle.get_attribute("aria-valuetext") == "0.631"
    page.wait_for_timeout(200)
    assert "ε = 0.631" in page.locator("img.widget-image").get_attribute("alt")


def test_an_icon_only_toggle_and_a_mismatched_name_fail_and_the_script_fixes_them(page):
    nav = ("<nav aria-label='Sections'><ul><li><a href='#a'>Chapter 7</a><details><summary>"
           "<span aria-hidden='true'>&gt;</span></summary><ul><li><a href='#b'>7.1</a></li></ul></details></li></ul></nav>"
           "<button aria-label='Search'>Search <kbd>Ctrl</kbd>+<kbd>K</kbd></button>")
    assert {"summary-name", "label-content-name-mismatch"} <= _rules(page, _page(nav))
    assert _rules(page, _page(nav, script=True)) == set()
    assert page.locator("summary").get_attribute("aria-label") == "Sections of Chapter 7"


def test_the_bibliography_roles_fail_and_the_build_hook_fixes_them(page):
    body = ('<div role="list" class="citation-list"><div class="citation" id="ding" role="doc-biblioentry">'
            '<span class="label">Ding</span><p>A paper.</p></div></div>')
    assert {"aria-required-children", "aria-deprecated-role"} <= _rules(page, _page(body))
    fixed = ext_module("a11y_markup").fix_body(body)
    assert 'role="listitem"' in fixed and _rules(page, _page(fixed)) == set()


def test_a_slip_inside_a_closed_dropdown_is_found_once_it_is_opened(page):
    # sphinx-togglebutton's markup: a button in the title toggles the class toggle-hidden
    body = ("<style>.toggle-hidden > :not(.admonition-title) { display: none; }</style>"
            "<div class='admonition toggle toggle-hidden' id='t0'><p class='admonition-title'>Solution"
            "<button type='button' class='toggle-button' data-target='t0' aria-expanded='false'"
            " onclick=\"const t=document.getElementById('t0'); t.classList.toggle('toggle-hidden');"
            " this.setAttribute('aria-expanded', String(!t.classList.contains('toggle-hidden')))\">show</button></p>"
            "<p><img src='data:image/png;base64,iVBORw0KGgo='></p></div>"
            "<details><summary>Show code</summary><p style='color:#bbb'>faint</p></details>")
    page.set_content(_page(body))
    states = {k: set(a11y.counts(v)) for k, v in a11y.check_states(page).items()}
    assert states["closed"] == set()
    assert {"image-alt", "color-contrast"} <= states["opened"]
    # the page is left closed
    assert page.locator("#t0.toggle-hidden").count() == 1 and not page.evaluate("() => document.querySelector('details').open")


def test_every_slider_of_every_explorer_has_a_spoken_name_with_its_unit():
    from dpmask.widgets import _shared

    labels = set()
    for path in (ROOT / "dpmask" / "widgets").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        labels |= set(re.findall(r"\b(?:log|int|float)_slider\(\s*\"([^\"]+)\"", text))
        labels |= set(re.findall(r"\bdropdown\(\s*\"([^\"]+)\"", text))
        labels |= set(re.findall(r"\(\"([^\"]+)\", -?\d+\.\d+, -?\d+\.\d+, \d+\.\d+\)", text))  # tightness's table
    assert {"ε", "δ", "n", "p"} <= labels
    for label in labels:
        spoken = _shared.spoken_name(label)
        assert spoken.startswith(label + ", ") and spoken.endswith(")") or label == "estimand", (label, spoken)
    # the controls carry it (the label's tooltip) and the numbers sit in a status region
    slider = _shared.log_slider("n", 1000, 1, 6, 0.05, ".0f")
    assert slider.tooltip == "n, number of rows (records)"
    box = _shared.explorer([slider], [_shared.whole], lambda n: (_shared.panel([("σ", "s")], {"s": float(n)}), b""))
    assert "role='status'" in box.children[1].value
    # no tooltip on the plot: ipywidgets' view of a widget without a description throws on one
    assert not box.children[2].tooltip


def test_axe_is_the_pinned_engine():
    # the version the statement page and the measurements name
    assert re.fullmatch(r"4\.\d+\.\d+", a11y.axe_version())
    assert "accessibility" in (ROOT / "_toc.yml").read_text()  # chapters/accessibility: the statement


# --- the keyboard (tests/test_keyboard.py walks the built book; here the walk checks itself) ----


def _mathjax_page(page, settings_override=None):
    """A planted page typeset by the book's MathJax (sphinx-mathjax-offline's tex-chtml.js) under
    the book's ``mathjax3_config`` from _config.yml, *settings_override* merged into its menu
    settings (the planted slip)."""
    config = ext_module("book_config").config()["sphinx"]["config"]["mathjax3_config"]
    config = json.loads(json.dumps(config))
    config["options"]["menuOptions"]["settings"].update(settings_override or {})
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    script = Path(spec.origin).with_name("static") / "mathjax" / "tex-chtml.js"
    page.set_content(_page("<p><a href='#a'>A link</a> before \\(\\varepsilon^2\\) and \\(\\sigma_A\\),</p>"
                           "<div class='math'>\\[\\int_0^1 x\\,dx = \\tfrac12\\]</div>"
                           "<p><button type='button'>A button</button> after them.</p>"))
    page.evaluate("(c) => { window.MathJax = c; }", config)
    page.add_script_tag(path=str(script))
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise"
                           " && document.querySelectorAll('mjx-container mjx-assistive-mml').length === 3", timeout=30000)
    page.evaluate("() => MathJax.startup.promise")


def test_formulas_are_no_tab_stops_under_the_books_mathjax_config(page):
    _mathjax_page(page)
    stops = a11y.tab_walk(page)
    assert [s["what"] for s in stops] == ["a", "button"], stops
    assert page.evaluate("() => [...document.querySelectorAll('mjx-container')].filter(m => m.tabIndex >= 0).length") == 0
    # the spoken MathML stays, open to assistive technology
    assert page.evaluate("() => [...document.querySelectorAll('mjx-assistive-mml math')].map(m => m.textContent)") \
        == ["ε2", "σA", "∫01xdx=12"]


def test_a_formula_back_in_the_tab_order_is_found(page):
    # the planted slip: MathJax's own default (inTabOrder true), as before issue 31
    _mathjax_page(page, {"inTabOrder": True})
    stops = a11y.tab_walk(page)
    assert sum(s["formula"] for s in stops) == 3, stops


def test_a_control_without_a_visible_focus_is_found(page):
    page.set_content(_page("<p><a href='#a'>A link</a> <button type='button'>Drawn</button>"
                           " <button type='button' style='outline: none'>Not drawn</button></p>"))
    stops = a11y.tab_walk(page, screenshots=True)
    assert [s["text"] for s in stops] == ["A link", "Drawn", "Not drawn"]
    assert [s["changed"] > 0 for s in stops] == [True, True, False], stops


# --- names and ids (issue 31) ---------------------------------------------------------------------

# sphinx-togglebutton's solution box as it draws it, with its default name
_SOLUTION = """
<div class="solution dropdown admonition toggle toggle-hidden" id="sol-3-1">
 <p class="admonition-title">Solution to Exercise 3.1 (Masking at
  <mjx-container class="MathJax"><mjx-math aria-hidden="true"></mjx-math><mjx-assistive-mml><math><mi>p</mi><mo>=</mo><mn>1</mn></math></mjx-assistive-mml></mjx-container>)
  <button type="button" id="button-sol-3-1" class="toggle-button" data-target="sol-3-1" data-button="button-sol-3-1"
          data-toggle-hint="Show" aria-label="Toggle hidden content" aria-expanded="false"
          onclick="const t=document.getElementById('sol-3-1'); t.classList.toggle('toggle-hidden');">
   <svg xmlns="http://www.w3.org/2000/svg" class="tb-icon toggle-chevron-right" width="44" height="44" viewBox="0 0 24 24"><polyline points="9 6 15 12 9 18" /></svg>
  </button></p>
 <p>The answer.</p>
</div>
<div class="note dropdown admonition toggle toggle-hidden" id="t2"><p class="admonition-title">Why
 <button type="button" class="toggle-button" data-target="t2" aria-label="Toggle hidden content"><svg viewBox="0 0 24 24"></svg></button></p><p>Because.</p></div>
"""


def test_solution_toggles_are_named_after_their_exercise(page):
    page.set_content(_page(_SOLUTION))
    found = a11y.name_problems(page)
    assert 'solution toggle of Exercise 3.1 named "Toggle hidden content"' in found and any("chevron" in p for p in found)
    page.set_content(_page(_SOLUTION, script=True))
    page.wait_for_timeout(100)
    assert a11y.name_problems(page) == []
    button = page.locator("#button-sol-3-1")
    assert button.get_attribute("aria-label") == "Show the solution to Exercise 3.1"
    assert page.locator("#t2 button").get_attribute("aria-label") == "Show Why"
    button.click()
    page.wait_for_timeout(100)
    assert button.get_attribute("aria-label") == "Hide the solution to Exercise 3.1"
    assert _rules(page, _page(_SOLUTION, script=True)) == set()


def test_a_typed_readout_is_named_after_its_slider(page):
    typed = _SLIDER.replace('<div class="widget-readout">', '<div class="widget-readout" contenteditable="true">')
    page.set_content(_page(typed))
    assert a11y.name_problems(page) == ['an unnamed readout in the Tab order ("0.501")', 'table "σ1.2" has no name']
    page.set_content(_page(typed, script=True))
    page.wait_for_timeout(100)
    assert a11y.name_problems(page) == []
    readout = page.locator(".widget-readout")
    assert (readout.get_attribute("role"), readout.get_attribute("aria-label")) == ("textbox", "ε, privacy loss (no unit), typed value")


def test_figures_are_named_by_their_captions_and_ids_made_unique(page):
    # as docutils writes them (double quotes)
    body = ('<figure id="fig-a"><img src="data:image/png;base64,iVBORw0KGgo=" alt="A plot"><figcaption><p>Fig. 1: a plot.</p></figcaption></figure>'
            '<section id="exercise-content"><p>One</p></section><section id="exercise-content"><p>Two</p></section>')
    page.set_content(_page(body))
    assert sorted(a11y.name_problems(page)) == ['figure fig-a not named by its caption', 'id "exercise-content" 2 times']
    fixed = ext_module("a11y_markup").fix_body(body)
    page.set_content(_page(fixed))
    assert a11y.name_problems(page) == []
    assert 'id="exercise-content-2"' in fixed and 'aria-labelledby="fig-a-caption"' in fixed
    # what the figure is called in Chromium's accessibility tree
    assert page.locator("figure").get_attribute("aria-labelledby") == "fig-a-caption"


# Tables as docutils and myst-nb write them: one in prose under a heading, two printed by a cell in
# one section (the first after a bold line), one with a caption, one of an explorer's numbers.
_TABLES = (
    '<section id="cmp"><h2>9.6. Compared <a class="headerlink" href="#cmp">#</a></h2>'
    '<div class="cell_output"><div class="output text_markdown"><p><strong>Real data</strong></p></div>'
    '<div class="output text_markdown"><div class="pst-scrollable-table-container"><table class="table">'
    '<thead><tr><th>mechanism</th><th>RMSE</th></tr></thead><tbody><tr><td>A</td><td>1.2</td></tr></tbody></table></div></div></div>'
    '<p>Between them.</p>'
    '<table class="table"><thead><tr><th>rows</th><th>ratio</th></tr></thead><tbody><tr><td>10</td><td>2</td></tr></tbody></table>'
    '<table class="table"><thead><tr><th>n</th><th>p</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>'
    '<table class="table"><caption>Table 9.1: the plan</caption><thead><tr><th>week</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>'
    '<div role="status"><table><tr><th scope="row">σ</th><td>1.2</td></tr></table></div></section>')


def test_tables_are_named_by_their_lead_or_their_section(page):
    page.set_content(_page(_TABLES))
    found = a11y.name_problems(page)
    assert len(found) == 4 and all(p.endswith("has no name") for p in found), found
    page.set_content(_page(_TABLES, script=True))
    page.wait_for_timeout(100)
    assert a11y.name_problems(page) == []
    names = [t.get_attribute("aria-label") for t in page.locator("table").all()]
    assert names == ["Real data", "9.6. Compared, table 2 of 3", "9.6. Compared, table 3 of 3", None,
                     "The explorer's numbers"], names
    # what Chromium's accessibility tree gives a screen reader
    assert page.get_by_role("table", name="Real data").count() == 1
    assert page.get_by_role("table", name="Table 9.1: the plan").count() == 1
    assert _rules(page, _page(_TABLES, script=True)) == set()


# The theme's primary sidebar, before the article: its captions are headings of level 2.
_SIDEBAR = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Planted</title></head><body>'
            '<div class="bd-sidebar-primary" id="pst-primary-sidebar"><nav aria-label="Main">'
            '<p aria-level="2" class="caption" role="heading"><span class="caption-text">The paper</span></p>'
            '<ul class="nav bd-sidenav"><li><a href="#a">1. Introduction</a></li></ul>'
            '<p aria-level="2" class="caption" role="heading"><span class="caption-text">Reference</span></p>'
            '<ul class="nav bd-sidenav"><li><a href="#b">Notation</a></li></ul></nav></div>'
            '<main><h1>A planted page</h1><p>Text.</p></main>{scripts}</body></html>')


def test_the_navigation_captions_name_its_lists_and_come_after_no_heading(page):
    page.set_content(_SIDEBAR.format(scripts=""))
    assert a11y.name_problems(page) == ['heading "The paper" before the page\'s h1']
    page.set_content(_SIDEBAR.format(scripts=f"<script>{SCRIPT}</script>"))
    page.wait_for_timeout(100)
    assert a11y.name_problems(page) == []
    assert page.get_by_role("heading").count() == 1
    assert page.get_by_role("list", name="The paper").count() == 1 and page.get_by_role("list", name="Reference").count() == 1


# A heading and a contents link holding a formula, as MathJax 3 leaves them (CHTML's glyphs are CSS,
# the assistive MathML beside them); Chromium names them from their content without the formula.
_MATH = ('<mjx-container class="MathJax CtxtMenu_Attached_0" jax="CHTML"><mjx-math class="MJX-TEX" aria-hidden="true">'
         '<mjx-mi class="mjx-i"><mjx-c class="mjx-c1D454 TEX-I"></mjx-c></mjx-mi></mjx-math>'
         '<mjx-assistive-mml unselectable="on" display="inline"><math xmlns="http://www.w3.org/1998/Math/MathML">'
         '{mml}</math></mjx-assistive-mml></mjx-container>')
_MATH_NAMES = (
    # MathJax's own rule: the MathML is there for assistive technology, clipped out of sight
    '<style>mjx-assistive-mml { position: absolute !important; top: 0; left: 0; clip: rect(1px, 1px, 1px, 1px);'
    ' padding: 1px 0 0 0 !important; border: 0 !important; display: block !important; width: auto !important;'
    ' overflow: hidden !important; user-select: none; }</style>'
    '<h2 id="g-dec">3.6.4. <span class="math">' + _MATH.format(mml="<mi>g</mi>") + '</span> is strictly decreasing'
    '<a class="headerlink" href="#g-dec" title="Link to this heading">#</a></h2>'
    '<h3 id="orders">3.6.5. The orders <span class="math">' + _MATH.format(
        mml="<mn>1</mn><mrow><mo>/</mo></mrow><msup><mi>ε</mi><mn>2</mn></msup>") + '</span></h3>'
    '<nav><a href="#gram">The Gaussian mechanism on <span class="math">' + _MATH.format(
        mml="<msup><mi>X</mi><mi mathvariant=\"normal\">⊤</mi></msup><mi>X</mi>") + '</span></a></nav>')


def test_headings_and_links_holding_a_formula_are_named_with_it_spoken(page):
    page.set_content(_page(_MATH_NAMES))
    found = a11y.name_problems(page)
    assert len(found) == 3 and all("without its formula" in p for p in found), found
    page.set_content(_page(_MATH_NAMES, script=True))
    page.wait_for_timeout(100)
    assert a11y.name_problems(page) == []
    names = [el.get_attribute("aria-label") for el in page.locator("h2, h3, nav a").all()]
    assert names == ["3.6.4. g is strictly decreasing", "3.6.5. The orders 1 over ε squared",
                     "The Gaussian mechanism on X transpose X"]
    # what Chromium's accessibility tree gives a screen reader
    assert page.get_by_role("heading", name="3.6.4. g is strictly decreasing").count() == 1
    assert _rules(page, _page(_MATH_NAMES, script=True)) == set()
