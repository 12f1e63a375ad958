"""The explorers in JupyterLab, without a mouse or sight: named, valued, announced, described.

A student who opens a chapter in JupyterLab (the launch buttons, Binder) gets the explorers drawn
by ipywidgets' own JupyterLab renderer.  The book's page script for them,
``_static/dpmask-explorers-a11y.js``, is the same file in the HTML book and in JupyterLab: the
``dpmask-live`` extension (``_ext/jupyterlab/``) loads it when JupyterLab starts.  This test runs
a notebook holding every explorer in real JupyterLab on 127.0.0.1 (the launch of
tests/test_live.py) and reads what a screen reader would be given, for each explorer:

- every slider's label carries its spoken name with its unit (``ε, privacy loss (no unit)``,
  ``n, number of rows (records)``: ``dpmask.widgets._shared.SLIDER_NAMES``, as the label's
  tooltip), and so does the slider handle itself (``aria-label``), whose ``aria-valuetext`` is
  the number shown beside it (not noUiSlider's own text, a log slider's exponent);
- the numbers sit in a status region (``role="status"``) inside a polite, atomic live region
  (``aria-live``) that is the same element before and after an update (ipywidgets replaces the
  table, not its container: a region that is new when its text arrives is not reliably read);
- the plot has a text alternative naming the setting of every control;
- each explorer's first slider works from the keyboard: focused, ArrowRight moves it, and then the
  value text follows the readout, the live region (the same element) gets new numbers, and the
  plot's text alternative names the new value;
- axe-core (tests/a11y.py: WCAG 2.0/2.1 A and AA, no rule switched off) finds no violation in the
  explorers' output areas.  JupyterLab's own interface (menus, file browser, notebook editor) is
  not the book's and is left out of axe's context; chapters/accessibility.md says so.

Marked ``live``: ``make test-slow``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import a11y
from _ext_import import ext_module
from _lab import CHROMIUM, jupyter_lab

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[1]
EXPLORERS = ["noise_explorer", "gq_explorer", "block_explorer", "inference_explorer", "tightness_explorer",
             "rivals_explorer"]



def _notebook():
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": "from dpmask import widgets"}]
    cells += [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
               "source": f"widgets.{name}()"} for name in EXPLORERS]
    return {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on 127.0.0.1 serving a notebook with every explorer (tests/test_live.py's launch)."""
    root = tmp_path_factory.mktemp("live_a11y")
    (root / "explorers.ipynb").write_text(json.dumps(_notebook()))
    with jupyter_lab(root, {("@jupyterlab/notebook-extension", "tracker"): {"windowingMode": "none"}}) as url:
        yield url


@pytest.fixture(scope="module")
def explorers_page(lab):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ext_module("localhost").CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{lab}/lab/workspaces/a11y/tree/explorers.ipynb?reset", timeout=120_000)
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        deadline = time.time() + 120
        while time.time() < deadline:
            if page.locator(".jp-Dialog").count():
                page.locator(".jp-Dialog .jp-mod-accept").first.click()
            ready = page.evaluate("() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
                                  " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
                                  " return !!k && k.status === 'idle' && k.connectionStatus === 'connected'; }")
            if ready:
                break
            page.wait_for_timeout(500)
        else:
            pytest.fail("the kernel did not start")
        page.evaluate("void window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(f"() => document.querySelectorAll('.jp-OutputArea .widget-vbox img.widget-image').length >= {len(EXPLORERS)}",
                               timeout=600_000)
        yield page
        browser.close()


# What a screen reader is given by each explorer (its outer VBox in an output area).
_EXPLORERS = """
() => [...document.querySelectorAll('.jp-OutputArea-output > .widget-vbox')].map(box => {
  const numbers = box.querySelector(':scope > .widget-html > .widget-html-content');
  const img = box.querySelector(':scope > img.widget-image');
  return {
    sliders: [...box.querySelectorAll('.widget-slider')].map(s => {
      const handle = s.querySelector('[role=slider]');
      return {
        label: (s.querySelector('label.widget-label') || {}).textContent || '',
        spoken: (s.querySelector('label.widget-label') || {}).title || '',
        readout: ((s.querySelector('.widget-readout') || {}).textContent || '').trim(),
        handle: !!handle,
        name: handle && handle.getAttribute('aria-label'),
        valuetext: handle && handle.getAttribute('aria-valuetext'),
      };
    }),
    status: !!box.querySelector('.widget-html-content [role=status]'),
    live: numbers && numbers.getAttribute('aria-live'),
    atomic: numbers && numbers.getAttribute('aria-atomic'),
    alt: img && img.getAttribute('alt'),
  };
})
"""
# Every explorer's handles named, and every plot described: what the page script does once it runs.
_SCRIPT_DONE = """
() => [...document.querySelectorAll('.jp-OutputArea-output > .widget-vbox')].every(box =>
  [...box.querySelectorAll('.widget-slider [role=slider]')].every(h => h.hasAttribute('aria-label'))
  && [...box.querySelectorAll('img.widget-image')].every(i => i.hasAttribute('alt')))
"""


def _wait_for_the_page_script(page):
    """Wait (30 s) for the explorers' page script to have named every handle; False if it never does."""
    try:
        page.wait_for_function(_SCRIPT_DONE, timeout=30_000)
        return True
    except Exception:
        return False


def _setting(slider):
    return f"{slider['label'].strip()} = {slider['readout']}"


def test_every_explorer_is_named_in_jupyterlab(explorers_page):
    from dpmask.widgets._shared import SLIDER_NAMES

    _wait_for_the_page_script(explorers_page)
    found = explorers_page.evaluate(_EXPLORERS)
    assert len(found) == len(EXPLORERS), found
    for name, box in zip(EXPLORERS, found):
        assert box["sliders"], name
        for s in box["sliders"]:
            assert s["handle"], (name, s)
            spoken = SLIDER_NAMES[s["label"].strip()]
            assert s["spoken"] == spoken, (name, s)
            # the handle itself: named with the spoken name, valued as the readout shows
            assert s["name"] and spoken in s["name"], (name, "the slider handle has no spoken name", s)
            assert s["readout"] and s["valuetext"] == s["readout"], (name, "value text is not the readout", s)
        assert box["status"], name
        assert box["live"] == "polite" and box["atomic"] == "true", (name, "the numbers are not a live region", box)
        assert box["alt"], (name, "the plot has no text alternative")
        for s in box["sliders"]:
            assert _setting(s) in box["alt"], (name, s, box["alt"])


# The first slider of explorer *i*: a mark on the numbers' element (to tell whether it is the same
# element afterwards) and what is shown now.
_BEFORE = """
(i) => {
  const box = document.querySelectorAll('.jp-OutputArea-output > .widget-vbox')[i];
  const numbers = box.querySelector(':scope > .widget-html > .widget-html-content');
  numbers.__dpmaskTest = 'before';
  const img = box.querySelector(':scope > img.widget-image');
  return {numbers: numbers.innerHTML, src: img.src, alt: img.getAttribute('alt'),
          readout: box.querySelector('.widget-slider .widget-readout').textContent.trim()};
}
"""
_AFTER = """
(i) => {
  const box = document.querySelectorAll('.jp-OutputArea-output > .widget-vbox')[i];
  const numbers = box.querySelector(':scope > .widget-html > .widget-html-content');
  const slider = box.querySelector('.widget-slider');
  const img = box.querySelector(':scope > img.widget-image');
  return {same: numbers.__dpmaskTest === 'before', live: numbers.getAttribute('aria-live'),
          numbers: numbers.innerHTML, src: img.src, alt: img.getAttribute('alt'),
          label: slider.querySelector('label.widget-label').textContent.trim(),
          readout: slider.querySelector('.widget-readout').textContent.trim(),
          valuetext: slider.querySelector('[role=slider]').getAttribute('aria-valuetext')};
}
"""


@pytest.mark.parametrize("index", range(len(EXPLORERS)), ids=EXPLORERS)
def test_a_slider_moves_from_the_keyboard_and_is_announced(explorers_page, index):
    page = explorers_page
    name = EXPLORERS[index]
    _wait_for_the_page_script(page)
    before = page.evaluate(_BEFORE, index)
    box = page.locator(".jp-OutputArea-output > .widget-vbox").nth(index)
    handle = box.locator("[role=slider]").first
    handle.focus()
    assert page.evaluate("() => document.activeElement && document.activeElement.getAttribute('role')") == "slider"
    for key in ("ArrowRight", "ArrowLeft"):  # ArrowLeft only if the slider stood at its right end
        for _ in range(5):
            page.keyboard.press(key)
            page.wait_for_timeout(200)
        if page.evaluate(_AFTER, index)["readout"] != before["readout"]:
            break
    # the kernel answers with new numbers and a new plot
    deadline = time.time() + 60
    after = page.evaluate(_AFTER, index)
    while time.time() < deadline and (after["numbers"] == before["numbers"] or after["src"] == before["src"]):
        time.sleep(0.5)
        after = page.evaluate(_AFTER, index)
    page.wait_for_timeout(300)  # the page script's answer (30 ms)
    after = page.evaluate(_AFTER, index)
    assert after["readout"] != before["readout"], (name, "ArrowRight did not move the first slider")
    assert after["numbers"] != before["numbers"], (name, "the numbers did not change after ArrowRight")
    assert after["valuetext"] == after["readout"], (name, "the value text did not follow the readout", after)
    assert after["same"], (name, "the numbers' live region was replaced, not updated: an update may go unannounced")
    assert after["live"] == "polite", (name, after)
    assert after["src"] != before["src"], (name, "the plot did not change")
    assert f"{after['label']} = {after['readout']}" in (after["alt"] or ""), (name, "the plot's text names the old setting", after)


def test_axe_finds_no_violation_in_the_explorers(explorers_page):
    """axe-core on the explorers' output areas only (JupyterLab's own interface is out of scope)."""
    page = explorers_page
    _wait_for_the_page_script(page)
    within = ".jp-OutputArea-output:has(> .widget-vbox)"
    assert page.locator(within).count() == len(EXPLORERS)
    found = a11y.axe_violations(page, within=within)
    assert not found, f"axe-core {a11y.axe_version()} in JupyterLab's explorers:\n" + a11y.describe(found)
