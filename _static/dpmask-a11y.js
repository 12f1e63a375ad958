/* What the theme and the widget manager leave out for screen readers and keyboards (WCAG 2.1 AA).
 *
 * Jupyter Book adds every .js of _static to every page.  tests/test_book.py runs axe-core on every
 * page (390 px and 1280 px, dropdowns closed and open, explorers drawn) and fails on any
 * violation; each fix below names the axe rule it answers.  chapters/accessibility.md is the
 * book's statement of what is tested.
 *
 * - summary-name: the navigation's expand toggles (<details><summary> holding only an icon) get
 *   a name: "Sections of <the link beside it>".
 * - label-content-name-mismatch: a control whose aria-label leaves out its visible text (the
 *   search button says "Search" and shows "Search Ctrl+K") loses the aria-label, so that it is
 *   named by what it shows.
 * - the explorers (ipywidgets' static HTML manager): each slider handle (role="slider") is named
 *   after its description and the longer name the package gives it (its tooltip: "ε, privacy
 *   loss", "n, rows of the table"), its value text is the number shown beside it (a log slider's
 *   own value text is the exponent), the numbers panel is a polite live region, so a change is
 *   read out, and the plot (an <img>) has a text alternative (its title, set by the package).
 */
(function () {
  "use strict";

  function text(el) {
    return (el && el.textContent ? el.textContent : "").replace(/\s+/g, " ").trim();
  }

  // --- the theme ---------------------------------------------------------------------------

  function nameSummaries(root) {
    for (const summary of root.querySelectorAll("details > summary")) {
      if (visibleText(summary) || summary.hasAttribute("aria-label")) {
        continue;
      }
      const item = summary.closest("li");
      const link = item ? item.querySelector(":scope > a, :scope > .reference") : null;
      const name = link ? text(link) : "";
      summary.setAttribute("aria-label", name ? "Sections of " + name : "Show the sections");
    }
  }

  function visibleText(el) {
    // the text a sighted reader sees, without what is hidden from everyone
    let out = "";
    for (const node of el.childNodes) {
      if (node.nodeType === Node.TEXT_NODE) {
        out += node.textContent;
      } else if (node.nodeType === Node.ELEMENT_NODE) {
        const style = getComputedStyle(node);
        if (style.display === "none" || style.visibility === "hidden" || node.getAttribute("aria-hidden") === "true") {
          continue;
        }
        out += " " + visibleText(node) + " ";
      }
    }
    return out.replace(/\s+/g, " ").trim();
  }

  function matchNamesToText(root) {
    for (const el of root.querySelectorAll("button[aria-label], a[aria-label], [role='button'][aria-label]")) {
      const label = el.getAttribute("aria-label").toLowerCase();
      const shown = visibleText(el);
      if (shown && !label.replace(/\s+/g, "").includes(shown.toLowerCase().replace(/\s+/g, ""))) {
        // named by what it shows (its content), as a speech-input user who says it expects
        el.removeAttribute("aria-label");
      }
    }
  }

  // --- the explorers -----------------------------------------------------------------------

  function sliderName(slider) {
    const label = slider.querySelector("label.widget-label");
    const short = text(label);
    const long = label && label.title ? label.title : "";
    return long || short || "value";
  }

  function sliderValue(slider) {
    const readout = slider.querySelector(".widget-readout");
    return text(readout);
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
    if (!handle.__dpmaskWatched) {
      handle.__dpmaskWatched = true;
      // noUiSlider rewrites aria-valuetext on every move (a log slider's exponent): put the shown value back
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
        }).observe(readout, { childList: true, characterData: true, subtree: true });
      }
    }
  }

  function fixWidgets(root) {
    for (const slider of root.querySelectorAll(".widget-slider")) {
      nameSlider(slider);
    }
    for (const content of root.querySelectorAll(".widget-vbox > .widget-html > .widget-html-content")) {
      // an explorer's numbers: read out when they change
      if (!content.hasAttribute("aria-live")) {
        content.setAttribute("aria-live", "polite");
        content.setAttribute("aria-atomic", "true");
      }
    }
    for (const img of root.querySelectorAll("img.widget-image")) {
      if (!img.hasAttribute("alt")) {
        img.setAttribute("alt", img.title || "The explorer's plot of the setting chosen above; its numbers are in the table above.");
      }
    }
  }

  function fixAll() {
    nameSummaries(document);
    matchNamesToText(document);
    fixWidgets(document);
  }

  let pending = false;
  function later() {
    if (!pending) {
      pending = true;
      setTimeout(function () {
        pending = false;
        fixWidgets(document);
      }, 30);
    }
  }

  function start() {
    fixAll();
    // the widget manager draws the explorers after the page has loaded
    new MutationObserver(function (records) {
      for (const r of records) {
        if (r.addedNodes.length) {
          later();
          return;
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
