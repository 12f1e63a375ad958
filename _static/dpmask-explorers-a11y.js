/* The explorers for screen readers and keyboards (WCAG 2.1 AA), in the HTML book and in JupyterLab.
 *
 * One file, two hosts:
 * - the HTML book: Jupyter Book adds every .js of _static to every page, where ipywidgets' static
 *   widget manager draws the explorers from their saved state; tests/test_book.py runs axe-core on
 *   every page and tests/test_a11y.py on a planted explorer;
 * - JupyterLab: the dpmask-live extension (_ext/jupyterlab/labextension/static/remoteEntry.js)
 *   adds it to the page when JupyterLab starts, from the extension's static/ folder, into which
 *   _ext/jupyterlab/install.py copies this very file; tests/test_live_a11y.py reads what it sets
 *   on every live explorer and runs axe-core on their output areas.
 *
 * What it does, on ipywidgets' own DOM only (elements with ipywidgets' class names: widget-slider,
 * widget-readout, widget-html-content, widget-image, inside a widget-vbox), never on the host's
 * interface:
 * - each slider handle (role="slider") is named after the longer name the package gives its label
 *   (the label's tooltip: "ε, privacy loss (no unit)", "n, number of rows (records)"), and its
 *   value text is the number shown beside it (noUiSlider's own value text for a log slider is the
 *   exponent, and it writes it back on every move: put back at once); that number, where a value
 *   can be typed (ipywidgets' contenteditable readout), is a textbox named "<name>, typed value";
 * - an explorer's numbers panel (.widget-html-content, the element that ipywidgets keeps and whose
 *   content it replaces on each update) is a polite, atomic live region, so the new numbers are
 *   read out after a move (the package's role="status" inside it is replaced with the content,
 *   and a region that is new when its text arrives is not reliably announced);
 * - the plot (ipywidgets' Image: no alt, and its view throws on a tooltip) gets a text
 *   alternative naming the setting it shows, renewed when a slider's readout or the image changes;
 * - in the HTML book without a kernel (issue 31) an explorer is drawn from the state saved when
 *   the book was built, and nothing computes a new image or new numbers: its sliders moved all the
 *   same, and their value texts and the plot's text alternative followed, telling a screen-reader
 *   user something the image did not show.  There its controls are disabled, visibly (a sentence
 *   above the explorer says why: "Open this page in Binder (or run the notebook) to move the
 *   sliders") and programmatically (noUiSlider's own disable, aria-disabled, described by that
 *   sentence; the dropdowns disabled; the readouts no longer editable), so that every text names
 *   the saved setting, the one the image shows.  "Without a kernel" is told by the page: the static
 *   widget manager's saved state (a script of type application/vnd.jupyter.widget-state+json,
 *   which only the HTML book has) and the explorer drawn in place of a widget-view script, with
 *   no JupyterLab on the page (window.jupyterapp, #jupyter-config-data); in JupyterLab, and in
 *   the HTML book once Thebe has replaced the outputs with live ones, nothing is disabled.
 *
 * Cheap on a busy page (JupyterLab's DOM changes all the time during Run All): one observer of
 * the document looks only at the nodes added, and only when one of them is or holds a widget
 * (class jupyter-widgets) does it schedule a pass, which reads ipywidgets' elements by class name.
 * Each slider, readout and plot then has its own small observer.
 */
(function () {
  "use strict";
  if (window.__dpmaskExplorersA11y) {
    return;  // loaded once per page
  }
  window.__dpmaskExplorersA11y = true;

  function text(el) {
    return (el && el.textContent ? el.textContent : "").replace(/\s+/g, " ").trim();
  }

  function sliderName(slider) {
    const label = slider.querySelector("label.widget-label");
    const short = text(label);
    const long = label && label.title ? label.title : "";
    return long || short || "value";
  }

  function sliderValue(slider) {
    return text(slider.querySelector(".widget-readout"));
  }

  function nameSlider(slider) {
    const handle = slider.querySelector("[role='slider']");
    if (!handle) {
      return;
    }
    const name = sliderName(slider);
    if (handle.getAttribute("aria-label") !== name) {
      handle.setAttribute("aria-label", name);
    }
    const value = sliderValue(slider);
    if (value && handle.getAttribute("aria-valuetext") !== value) {
      handle.setAttribute("aria-valuetext", value);
    }
    // the readout beside it is a Tab stop where a value can be typed (contenteditable): a
    // textbox named after the slider (it was an unnamed generic stop, issue 31)
    const typed = slider.querySelector(".widget-readout");
    if (typed && typed.isContentEditable && typed.getAttribute("aria-label") !== name + ", typed value") {
      typed.setAttribute("role", "textbox");
      typed.setAttribute("aria-label", name + ", typed value");
    }
    if (handle.__dpmaskWatched) {
      return;
    }
    handle.__dpmaskWatched = true;
    // noUiSlider rewrites aria-valuetext on every move: put the shown value back
    new MutationObserver(function () {
      const shown = sliderValue(slider);
      if (shown && handle.getAttribute("aria-valuetext") !== shown) {
        handle.setAttribute("aria-valuetext", shown);
      }
    }).observe(handle, { attributes: true, attributeFilter: ["aria-valuetext", "aria-valuenow"] });
    const readout = slider.querySelector(".widget-readout");
    if (readout) {
      new MutationObserver(function () {
        nameSlider(slider);
        later();  // the plot's text alternative names the new value
      }).observe(readout, { childList: true, characterData: true, subtree: true });
    }
  }

  // --- the HTML book without a kernel: the saved setting, said to be one ---------------------

  const SAVED_NOTE = "Open this page in Binder (or run the notebook) to move the sliders: without a kernel, " +
    "this explorer shows the setting it was saved at.";
  const STATE = "script[type='application/vnd.jupyter.widget-state+json']";
  const VIEW = "script[type='application/vnd.jupyter.widget-view+json']";
  let notes = 0;

  // The explorer *box* is drawn by the HTML book's static widget manager from the saved state.
  function savedOnly(box) {
    if (window.jupyterapp || document.getElementById("jupyter-config-data") || !document.querySelector(STATE)) {
      return false;
    }
    // the manager draws each view in place of its script (in a div before it, within the output)
    for (let el = box.parentElement, up = 0; el && up < 4; el = el.parentElement, up++) {
      if (el.querySelector(":scope > " + VIEW)) {
        return true;
      }
    }
    return false;
  }

  function freeze(box) {
    if (box.__dpmaskFrozen) {
      return;
    }
    box.__dpmaskFrozen = true;
    box.classList.add("dpmask-saved");
    const note = document.createElement("p");
    note.id = "dpmask-saved-note-" + (++notes);
    note.className = "dpmask-saved-note";
    note.textContent = SAVED_NOTE;
    box.parentElement.insertBefore(note, box);
    for (const slider of box.querySelectorAll(".widget-slider")) {
      const target = slider.querySelector(".noUi-target");
      if (target && target.noUiSlider && typeof target.noUiSlider.disable === "function") {
        target.noUiSlider.disable();  // its pointer and key handlers then do nothing
      } else if (target) {
        target.setAttribute("disabled", "");
      }
      const handle = slider.querySelector("[role='slider']");
      if (handle) {
        handle.setAttribute("aria-disabled", "true");
        handle.setAttribute("aria-describedby", note.id);
        // still a Tab stop (noUiSlider's disable removed it): a keyboard or screen-reader user
        // finds the control, its saved value and, in its description, why it does not move
        handle.setAttribute("tabindex", "0");
      }
      const readout = slider.querySelector(".widget-readout");
      if (readout) {
        readout.setAttribute("contenteditable", "false");
      }
    }
    for (const select of box.querySelectorAll(".widget-dropdown select")) {
      select.disabled = true;
      select.setAttribute("aria-describedby", note.id);
    }
  }

  // An explorer's plot: what it shows, at the setting its controls show.
  function plotText(img) {
    const box = img.closest(".widget-vbox");
    const setting = box
      ? Array.from(box.querySelectorAll(".widget-slider, .widget-dropdown")).map(function (control) {
          const label = text(control.querySelector("label.widget-label"));
          const select = control.querySelector("select");
          const value = select ? text(select.options[select.selectedIndex]) : sliderValue(control);
          return label + " = " + value;
        })
      : [];
    const saved = box && box.__dpmaskFrozen;
    return "Plot of the explorer" + (setting.length ? " at " + (saved ? "its saved setting, " : "") + setting.join(", ") : "") +
      ": the curves behind the numbers in the table above, with the " + (saved ? "saved" : "current") + " setting marked.";
  }

  function describePlot(img) {
    const alt = plotText(img);
    if (img.getAttribute("alt") !== alt) {
      img.setAttribute("alt", alt);
    }
    if (!img.__dpmaskWatched) {
      img.__dpmaskWatched = true;
      new MutationObserver(later).observe(img, { attributes: true, attributeFilter: ["src"] });
    }
  }

  function fixWidgets() {
    for (const img of document.querySelectorAll(".widget-vbox > img.widget-image")) {
      const box = img.parentElement;
      if (box.querySelector(".widget-slider, .widget-dropdown") && savedOnly(box)) {
        freeze(box);
      }
    }
    for (const slider of document.querySelectorAll(".widget-slider")) {
      nameSlider(slider);
    }
    for (const content of document.querySelectorAll(".widget-vbox > .widget-html > .widget-html-content")) {
      if (content.getAttribute("aria-live") !== "polite") {
        content.setAttribute("aria-live", "polite");
        content.setAttribute("aria-atomic", "true");
      }
    }
    for (const img of document.querySelectorAll("img.widget-image")) {
      describePlot(img);
    }
  }

  let pending = false;
  function later() {
    if (!pending) {
      pending = true;
      setTimeout(function () {
        pending = false;
        fixWidgets();
      }, 30);
    }
  }

  function holdsWidget(node) {
    return node.nodeType === 1 &&
      (node.classList.contains("jupyter-widgets") || node.getElementsByClassName("jupyter-widgets").length > 0);
  }

  function start() {
    fixWidgets();
    // the widget manager draws the explorers after the page has loaded (the HTML book), or when
    // a cell runs or is shown again (JupyterLab)
    new MutationObserver(function (records) {
      for (const r of records) {
        for (const node of r.addedNodes) {
          if (holdsWidget(node)) {
            later();
            return;
          }
        }
      }
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
