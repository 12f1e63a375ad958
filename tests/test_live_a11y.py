"""The explorers in JupyterLab, without a mouse or sight: named, keyboard-operable, announced.

A student who opens a chapter in JupyterLab (the launch buttons, Binder) gets the explorers drawn
by ipywidgets' own JupyterLab renderer, without the book's ``_static/dpmask-a11y.js``.  This test
runs a notebook holding every explorer in real JupyterLab on 127.0.0.1 (the launch of
tests/test_live.py) and checks, for each explorer:

- every slider's label carries its spoken name with its unit (``ε, privacy loss (no unit)``,
  ``n, number of rows (records)``: ``dpmask.widgets._shared.SLIDER_NAMES``, as the label's
  tooltip), and no slider is left without one;
- the numbers sit in a status region (``role="status"``);
- the first slider works from the keyboard: focused, ArrowRight moves it, and the numbers change.

What JupyterLab itself does not give (the slider handle's own ``aria-label``, a live region that
outlives each update, a text alternative for the plot: ipywidgets' ``Image`` has no ``alt``, and
its view throws on a ``tooltip``) is said on chapters/accessibility.md; in the HTML book the page
script adds all three and tests/test_book.py checks them with axe-core.  Marked ``live``: ``make test-slow``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

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
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=list(ext_module("editions").CHROMIUM_ARGS))
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


_EXPLORERS = """
() => [...document.querySelectorAll('.jp-OutputArea-output > .widget-vbox')].map(box => ({
  sliders: [...box.querySelectorAll('.widget-slider')].map(s => ({
    label: (s.querySelector('label.widget-label') || {}).textContent || '',
    spoken: (s.querySelector('label.widget-label') || {}).title || '',
    handle: !!s.querySelector('[role=slider]'),
  })),
  status: !!box.querySelector('.widget-html-content [role=status]'),
}))
"""


def test_every_explorer_is_named_in_jupyterlab(explorers_page):
    from dpmask.widgets._shared import SLIDER_NAMES

    found = explorers_page.evaluate(_EXPLORERS)
    assert len(found) == len(EXPLORERS), found
    for name, box in zip(EXPLORERS, found):
        assert box["sliders"], name
        for s in box["sliders"]:
            assert s["handle"], (name, s)
            assert s["spoken"] == SLIDER_NAMES[s["label"].strip()], (name, s)
        assert box["status"], name


def test_a_slider_moves_from_the_keyboard_and_the_numbers_follow(explorers_page):
    page = explorers_page
    box = page.locator(".jp-OutputArea-output > .widget-vbox").first
    numbers = box.locator(".widget-html-content")
    before = numbers.inner_html()
    handle = box.locator("[role=slider]").first
    handle.focus()
    assert page.evaluate("() => document.activeElement && document.activeElement.getAttribute('role')") == "slider"
    for _ in range(5):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(200)
    deadline = time.time() + 60
    while time.time() < deadline and numbers.inner_html() == before:
        time.sleep(0.5)
    assert numbers.inner_html() != before, "the numbers did not change after ArrowRight on the first slider"
