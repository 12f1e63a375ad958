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
 *   search button says "Search" and shows "Search Ctrl+K"; a hidden code cell's toggle says
 *   "Toggle hidden content" and shows "Show code cell source") loses the aria-label, so that it
 *   is named by what it shows.
 * - scrollable-region-focusable: a code block that scrolls sideways gets a tab stop when a
 *   dropdown opens, a font arrives or the text column changes width (the theme gives one when the
 *   page loads and 300 ms after a resize, measured before its sidebar has finished sliding in).
 * - the solution toggles (sphinx-togglebutton's button in an admonition's title) were all named
 *   "Toggle hidden content" (issue 31, WCAG 2.5.3 and 4.1.2): each is named after what it opens,
 *   starting with the word it shows ("Show the solution to Exercise 3.1", then "Hide ..."; the
 *   hints are "Show" and "Hide" in _config.yml), and its chevron, a drawing, is hidden from
 *   assistive technology.
 * - tables without a caption are named by the bold line before them or their section's heading
 *   (issue 31, WCAG 1.3.1).
 * - landmarks (issue 31, IBM's aria_content_in_landmark): the primary sidebar is the book's
 *   navigation, and the skip link sits in the header; the navigation's captions name its lists
 *   rather than being headings before the page's h1.
 * - the explorers are the business of dpmask-explorers-a11y.js beside this file, one source for
 *   the HTML book and JupyterLab (the dpmask-live extension loads it there).
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
    // (a name that speaks a formula is not the text its glyphs draw: nameMathNames)
    const labelled = "button[aria-label], a[aria-label]:not([data-a11y-math-name]), summary[aria-label], [role='button'][aria-label], [data-a11y-label]";
    for (const el of root.querySelectorAll(labelled)) {
      const label = el.getAttribute("data-a11y-label") || el.getAttribute("aria-label") || "";
      const shown = visibleText(el);
      if (shown && !label.toLowerCase().replace(/\s+/g, "").includes(shown.toLowerCase().replace(/\s+/g, ""))) {
        // named by what it shows (its content), as a speech-input user who says it expects;
        // the label is kept aside for a narrower screen, where the text may be hidden
        el.setAttribute("data-a11y-label", label);
        el.removeAttribute("aria-label");
      } else if (!shown && !el.hasAttribute("aria-label") && el.hasAttribute("data-a11y-label")) {
        el.setAttribute("aria-label", label);  // nothing shown: the label names it again
      }
    }
  }

  // What a toggle opens: its admonition's title, without the button, formulas as their MathML's text.
  function titleText(title) {
    const copy = title.cloneNode(true);
    for (const el of copy.querySelectorAll("button")) {
      el.remove();
    }
    for (const box of copy.querySelectorAll("mjx-container")) {
      box.replaceWith(" " + text(box.querySelector("mjx-assistive-mml")) + " ");  // CHTML's glyphs are CSS, not text
    }
    return text(copy);
  }

  // A formula's MathML in words, as a heading's or a link's name must carry it (issue 31): Chromium
  // leaves MathJax's assistive MathML out of a name computed from content ("3.6.4. is strictly
  // decreasing"), so headings and links that hold a formula are named with it spoken ("3.6.4. g is
  // strictly decreasing", "The orders 1 over ε squared and 1 over ε").
  const SPOKEN_OPERATORS = { "=": "equals", "<": "less than", ">": "greater than", "≤": "at most", "≥": "at least",
    "/": "over", "−": "minus", "-": "minus", "+": "plus", "×": "times", "⊤": "transpose", "∼": "distributed as" };
  function speak(node) {
    const kids = [...node.children];
    const words = (list) => list.map(speak).filter(Boolean).join(" ");
    switch (node.localName) {
      case "msup": {
        const power = speak(kids[1]);
        const transpose = ["⊤", "T", "transpose"].includes(text(kids[1])) || power === "transpose";
        return speak(kids[0]) + (power === "2" ? " squared" : transpose ? " transpose" : " to the power " + power);
      }
      case "msub": return speak(kids[0]) + " sub " + speak(kids[1]);
      case "msubsup": return speak(kids[0]) + " sub " + speak(kids[1]) + " to the power " + speak(kids[2]);
      case "mfrac": return speak(kids[0]) + " over " + speak(kids[1]);
      case "msqrt": return "the square root of " + words(kids);
      case "mo": { const t = text(node); return SPOKEN_OPERATORS[t] || t; }
      case "mi": case "mn": case "mtext": case "ms": return text(node);
      default: return kids.length ? words(kids) : text(node);
    }
  }
  function spokenText(el) {
    const copy = el.cloneNode(true);
    for (const extra of copy.querySelectorAll(".headerlink, button, [aria-hidden='true']:not(mjx-math)")) {
      extra.remove();
    }
    for (const box of copy.querySelectorAll("mjx-container")) {
      const math = box.querySelector("mjx-assistive-mml math");
      box.replaceWith(" " + (math ? speak(math) : "") + " ");
    }
    return text(copy).replace(/ ([?.,:;!)])/g, "$1");
  }
  function nameMathNames(root) {
    for (const el of root.querySelectorAll("h1, h2, h3, h4, h5, h6, a[href]")) {
      if (!el.querySelector("mjx-container mjx-assistive-mml")) {
        continue;
      }
      const name = spokenText(el);
      if (name && el.getAttribute("aria-label") !== name) {
        el.setAttribute("aria-label", name);
        el.setAttribute("data-a11y-math-name", "");
      }
    }
  }

  function nameToggles(root) {
    for (const button of root.querySelectorAll("button.toggle-button[data-target]")) {
      const item = document.getElementById(button.dataset.target);
      const title = item ? item.querySelector(":scope > .admonition-title") : null;
      if (!title) {
        continue;
      }
      const what = titleText(title);
      const solution = what.match(/^Solution to (\S+ [\dA-Z]+(?:\.\d+)*)/);
      const verb = item.classList.contains("toggle-hidden") ? "Show" : "Hide";
      const name = verb + " " + (solution ? "the solution to " + solution[1] : what || "the hidden content");
      if (button.getAttribute("aria-label") !== name) {
        button.setAttribute("aria-label", name);
      }
      for (const icon of button.querySelectorAll("svg")) {
        if (icon.getAttribute("aria-hidden") !== "true") {
          icon.setAttribute("aria-hidden", "true");
          icon.setAttribute("focusable", "false");
        }
      }
    }
  }

  // scrollable-region-focusable: a code block that scrolls sideways can be reached with the
  // keyboard.  The theme sets this when the page loads; a block inside a closed dropdown was not
  // scrollable then, so it is checked again when a dropdown opens or the window is resized.
  // What counts is text hidden past the block's visible box: a block whose text only runs into
  // its right padding would scroll that padding alone, a Tab stop leading nowhere (issue 31: IBM's
  // element_tabbable_role_valid, chapter 2's codecell5, 10 px); it is made not to scroll at all
  // (overflow visible) and is no stop (tabindex -1).
  function hidesText(el) {
    const text = document.createRange();
    text.selectNodeContents(el);
    const r = text.getBoundingClientRect(), box = el.getBoundingClientRect();
    return r.right + el.scrollLeft > box.left + el.clientLeft + el.clientWidth + 2
      || r.bottom + el.scrollTop > box.top + el.clientTop + el.clientHeight + 2;
  }
  // A block that is a Tab stop is a group named for what it is and why it is a stop, as a wide
  // formula is (issue 31: the keyboard walk asks every stop for a role and a name; a <pre> has
  // neither, and a region would be a landmark).
  const CODE_STOP = "Code block, scrolls sideways";
  function focusScrollables(root) {
    for (const el of root.querySelectorAll("article pre")) {
      // a block whose text runs only into its padding hides nothing: it does not scroll at all
      // (overflow visible; axe-core counts any overflow of a scroll box as a region to reach)
      el.style.removeProperty("overflow");
      const overflows = el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
      const scrolls = overflows && hidesText(el);
      if (overflows && !scrolls) {
        el.style.setProperty("overflow", "visible");
      }
      if (scrolls && el.tabIndex < 0) {
        el.tabIndex = 0;
      } else if (!scrolls && el.getAttribute("tabindex") === "0") {
        el.setAttribute("tabindex", "-1");
      }
      if (scrolls && el.getAttribute("role") !== "group") {
        el.setAttribute("role", "group");
        el.setAttribute("aria-label", CODE_STOP);
      } else if (!scrolls && el.getAttribute("aria-label") === CODE_STOP) {
        el.removeAttribute("role");
        el.removeAttribute("aria-label");
      }
    }
    // the theme's box round a wide table, a Tab stop when it scrolls: a group named by the table
    for (const box of root.querySelectorAll(".pst-scrollable-table-container")) {
      const stop = box.getAttribute("tabindex") === "0";
      const caption = box.querySelector("caption"), table = box.querySelector("table");
      const named = caption ? text(caption).replace(/\s*#$/, "") : table ? table.getAttribute("aria-label") : "";
      const name = (named ? named + ", table" : "Table") + ", scrolls sideways";
      if (stop && (box.getAttribute("role") !== "group" || box.getAttribute("aria-label") !== name)) {
        box.setAttribute("role", "group");
        box.setAttribute("aria-label", name);
      } else if (!stop && box.getAttribute("role") === "group") {
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    }
  }

  // Tables named (issue 31, WCAG 1.3.1: a screen reader's list of tables reads their names).  A
  // table with a caption is named by it.  The others, the Markdown tables of the prose and those a
  // code cell prints, are named by what introduces them: a short bold line just before the table
  // ("Real data"), else the heading of their section, with their place when the section holds more
  // than one ("9.6. Compared head to head, table 2 of 3"); an explorer's numbers are named so.
  function leadOf(table, section) {
    for (let el = table; el && el !== section; el = el.parentElement) {
      const before = el.previousElementSibling;
      if (!before) { continue; }
      const shown = text(before);
      const bold = before.querySelector("strong, b");
      return shown && shown.length <= 60 && bold && text(bold) === shown ? spokenText(before) : "";
    }
    return "";
  }
  function nameTables(root) {
    for (const table of root.querySelectorAll("table")) {
      if (table.querySelector("caption") || table.hasAttribute("aria-labelledby")
          || (table.hasAttribute("aria-label") && !table.hasAttribute("data-a11y-table-name"))) {
        continue;
      }
      let name = "";
      if (table.closest("[role='status']")) {
        name = "The explorer's numbers";
      } else {
        const section = table.closest("section");
        const heading = section && section.querySelector(":scope > h1, :scope > h2, :scope > h3, :scope > h4, :scope > h5, :scope > h6");
        name = leadOf(table, section);
        if (!name && heading) {
          const own = [...section.querySelectorAll("table")].filter(t => t.closest("section") === section && !t.querySelector("caption") && !t.closest("[role='status']"));
          name = spokenText(heading) + (own.length > 1 ? `, table ${own.indexOf(table) + 1} of ${own.length}` : "");
        }
      }
      if (name && table.getAttribute("aria-label") !== name) {
        table.setAttribute("aria-label", name);
        table.setAttribute("data-a11y-table-name", "");
      }
    }
  }

  // Formulas are not Tab stops (_config.yml: MathJax's inTabOrder is off).  The layout gives each
  // inline formula a box that scrolls sideways when the formula is wider than the text
  // (dpmask-layout.css: span.math, which also holds a glyph's overhang of a pixel), and MathJax's
  // glyphs overflow that box by a pixel in height; Chromium makes a scroll container with nothing
  // focusable inside a Tab stop of its own, so each formula came back into the Tab order through
  // its box.  A box that does not scroll sideways is taken out (tabindex -1); one that does (a
  // wide display equation on a phone) is a stop, to be scrolled by keyboard (axe's
  // scrollable-region-focusable asks for its tabindex 0).  It is a group named for what it is and
  // why it is a stop: not a region (issue 31: IBM's checker reported chapter 3's seven same-named
  // "Wide formula" landmarks, and a formula is no landmark to jump to).
  const OVERHANG = 0;  // px a box may hide unscrolled (axe counts any hidden width)
  function unfocusFormulaBoxes(root) {
    for (const box of root.querySelectorAll("article span.math, article div.math > mjx-container")) {
      const scrolls = box.scrollWidth > box.clientWidth + OVERHANG || box.scrollHeight > box.clientHeight + 12;
      if (!scrolls && box.getAttribute("tabindex") !== "-1") {
        box.setAttribute("tabindex", "-1");
      } else if (scrolls && box.getAttribute("tabindex") !== "0") {
        box.setAttribute("tabindex", "0");  // Chromium would make it a stop anyway; axe asks for the attribute
      }
      if (scrolls && box.getAttribute("role") !== "group") {
        box.setAttribute("role", "group");
        box.setAttribute("aria-label", box.matches("mjx-container")
          ? "Wide equation, scrolls sideways" : "Wide formula, scrolls sideways");
      } else if (!scrolls && box.getAttribute("role") === "group") {
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    }
  }

  // Every piece of the page in a landmark (issue 31: IBM's checker, aria_content_in_landmark, WCAG
  // 1.3.1), so that a screen reader moving by landmarks misses nothing: the primary sidebar holds
  // the book's title link and a search button beside its "Main" navigation, outside any landmark,
  // and becomes the book's navigation; the skip link, before every landmark, moves to the start
  // of the header (the banner), still the page's first Tab stop and still fixed to the top of
  // the window when it has the focus.
  function landmarks() {
    // the navigation's captions ("The paper", "Beyond the paper" ...) were headings of level 2 before
    // the page's h1 (issue 31): each names the list of pages under it instead ("The paper, list")
    for (const [i, caption] of [...document.querySelectorAll(".bd-sidebar-primary p.caption[role='heading']")].entries()) {
      const list = caption.nextElementSibling;
      if (!list || list.localName !== "ul") { continue; }
      caption.removeAttribute("role");
      caption.removeAttribute("aria-level");
      caption.id = caption.id || `dpmask-nav-caption-${i + 1}`;
      list.setAttribute("aria-labelledby", caption.id);
    }
    const sidebar = document.getElementById("pst-primary-sidebar");
    if (sidebar && !sidebar.hasAttribute("role")) {
      sidebar.setAttribute("role", "navigation");
      sidebar.setAttribute("aria-label", "Book");
    }
    const skip = document.getElementById("pst-skip-link");
    const header = document.getElementById("pst-header");
    if (skip && header && skip.parentElement !== header) {
      header.prepend(skip);
    }
  }

  function fixAll() {
    landmarks();
    unfocusFormulaBoxes(document);
    nameToggles(document);
    nameSummaries(document);
    nameMathNames(document);
    nameTables(document);
    matchNamesToText(document);
    focusScrollables(document);
  }

  let pending = false;
  function later() {
    if (!pending) {
      pending = true;
      setTimeout(function () {
        pending = false;
        fixAll();
      }, 30);
    }
  }

  function start() {
    fixAll();
    // sphinx-togglebutton draws its buttons after the page has loaded (and the theme's tooltips
    // set aria-label again, its resize handler the code blocks' tabindex 300 ms after this
    // script's pass): fix what they add or change; a second pass changes nothing, so this ends
    new MutationObserver(function (records) {
      for (const r of records) {
        if (r.addedNodes.length || r.type === "attributes") {
          later();
          return;
        }
      }
    }).observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ["aria-label", "tabindex"] });
    window.addEventListener("load", later);
    // a web font that arrives late (the theme's, MathJax's) changes what overflows: a formula or a
    // code block measured in the fallback font may scroll then and not now, or the other way round
    // (seen on a loaded machine, 29 Nov 2026: the index's formula left a "Wide formula" stop that
    // scrolled nothing, the course page's code block left without its stop)
    if (document.fonts) {
      document.fonts.addEventListener("loadingdone", later);
      document.fonts.ready.then(later);
    }
    // the text column narrows or widens with no event this script hears: widened past 960 px, the
    // page slides its sidebar in over 250 ms (a CSS transition), and a code block measured at the
    // resize had not yet lost the width that kept it from scrolling (CI, 29 Nov 2026: the course
    // page's first code block left without its stop at 1280 px); the column's box is watched
    if (window.ResizeObserver) {
      const column = document.querySelector("article") || document.body;
      new ResizeObserver(later).observe(column);
    }
    window.addEventListener("resize", later);  // the search button's text shows from 960 px on
    document.addEventListener("toggle", later, true);  // a <details> opened or closed
    document.addEventListener("click", later, true);  // a solution's toggle button
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
