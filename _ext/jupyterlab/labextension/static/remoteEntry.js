// dpmask-live: JupyterLab's side of the live book (issues 22 and 24).  Five plugins:
//
// - executor: the book's {eval} expressions, evaluated from the cell's source (below);
// - collapsed: what the book hides and the notebook stores collapsed stays collapsed when run;
// - references: every markdown cell parsed before jupyterlab-myst draws one, so that a
//   reference to a statement further down the notebook resolves (and JupyterLab's cell toolbar
//   finds an empty input, not none, in a cell jupyterlab-myst has not drawn yet);
// - citations: a citation reads as the book prints it, where jupyterlab-myst shows a bib key;
// - explorers-a11y: the book's page script for the explorers (screen-reader names, value texts,
//   a live region, the plot's text alternative), loaded from beside this file.
//
// The executor.  jupyterlab-myst evaluates a markdown cell's inline expressions when the cell is
// run, but it takes the list of expressions from the cell's last *rendering* (cell.mystModel.mdast), which an
// asynchronous whole-notebook render fills in some time after the notebook opens.  During Run All
// on a busy machine most cells have not been through that render yet: the executor finds no
// expression, deletes the cell's stored results, and the page shows each expression as code.
// This plugin takes the expressions from the cell's source instead, in the order they appear,
// sends them to the kernel once the run that ran the cell is over (Run All: after every code
// cell, since a cell may read a value glued below it, as the book allows), and stores the
// results where jupyterlab-myst renders them from (the cell's `user_expressions` metadata).  jupyterlab-myst's own executor plugin is
// disabled by _ext/jupyterlab/page_config.json, so the two cannot overwrite each other.
//
// Hand-written as a webpack module-federation container (the form JupyterLab loads): it shares
// no code of its own and takes @jupyterlab/notebook and @jupyterlab/coreutils from JupyterLab's
// share scope.
var _JUPYTERLAB;
(function () {
  "use strict";
  var NAME = "dpmask-live";
  var METADATA = "user_expressions";
  // An inline role {eval}`...` (any number of backticks, as in MyST): its content is the expression.
  var EVAL = /\{eval\}(`+)([\s\S]*?)\1(?!`)/g;
  var scope = null;

  function expressionsOf(source) {
    var out = [];
    var m;
    EVAL.lastIndex = 0;
    while ((m = EVAL.exec(source)) !== null) {
      out.push(m[2]);
    }
    return out;
  }

  function shared(name) {
    var versions = scope && scope[name];
    if (!versions) {
      return Promise.reject(new Error(NAME + ": " + name + " is not in JupyterLab's share scope"));
    }
    // The copy JupyterLab itself provides (several are listed when an extension brings its own).
    var keys = Object.keys(versions);
    var core = keys.filter(function (k) { return /application-top|@jupyterlab\/application/.test(versions[k].from || ""); });
    var key = (core.length ? core : keys).sort().pop();
    return Promise.resolve(versions[key].get()).then(function (factory) { return factory(); });
  }

  function evaluate(panel, cell) {
    var model = cell.model;
    var source = model.sharedModel.getSource();
    var expressions = expressionsOf(source);
    if (!expressions.length) {
      if (model.getMetadata(METADATA) !== undefined) {
        model.deleteMetadata(METADATA);
      }
      return;
    }
    if (!panel) {
      return;
    }
    var kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
    if (!kernel) {
      // Run All before the kernel has started: evaluate once it is there (the code cells wait too).
      panel.sessionContext.ready.then(function () {
        if (panel.sessionContext.session && panel.sessionContext.session.kernel) {
          evaluate(panel, cell);
        }
      });
      return;
    }
    var request = {};
    expressions.forEach(function (e, i) { request[String(i)] = e; });
    var future = kernel.requestExecute(
      { code: "", silent: false, store_history: false, user_expressions: request, allow_stdin: false, stop_on_error: false },
      true
    );
    future.onReply = function (msg) {
      var content = msg.content;
      if (content.status !== "ok") {
        // An earlier cell failed and the kernel aborted the queue: keep what was stored.
        console.warn(NAME + ": expressions not evaluated (" + content.status + ")");
        return;
      }
      // The cell may have been edited while the kernel was busy: store only for the source sent.
      if (model.isDisposed || model.sharedModel.getSource() !== source) {
        return;
      }
      var results = expressions.map(function (e, i) {
        return { expression: e, result: content.user_expressions[String(i)] };
      });
      model.setMetadata(METADATA, results);
      model.trusted = true;
    };
  }

  function plugin(notebook) {
    return {
      id: NAME + ":executor",
      description: "Evaluates a markdown cell's {eval} expressions, taken from its source, when it runs.",
      autoStart: true,
      requires: [notebook.INotebookTracker],
      activate: function (app, tracker) {
        // A markdown cell run is evaluated once the whole run is over (selectionExecuted: every
        // code cell of a Run All has finished), because the book resolves glued values across
        // the whole notebook: a cell may read a value glued by a code cell below it.
        var pending = new Map();
        notebook.NotebookActions.executed.connect(function (_, args) {
          if (args.cell.model.type !== "markdown") {
            return;
          }
          var cells = pending.get(args.notebook) || [];
          cells.push(args.cell);
          pending.set(args.notebook, cells);
        });
        notebook.NotebookActions.selectionExecuted.connect(function (_, args) {
          var cells = pending.get(args.notebook) || [];
          pending.delete(args.notebook);
          var panel = tracker.find(function (w) { return w.content === args.notebook; });
          cells.forEach(function (cell) {
            try {
              evaluate(panel, cell);
            } catch (err) {
              console.warn(NAME + ": " + err);
            }
          });
        });
      }
    };
  }

  // --- collapsed stays collapsed --------------------------------------------------------------
  // The chapters store the cells the book hides collapsed (_ext/cell_visibility.py: the checks'
  // and plotting code, a solution's code and results, a solution's text).  JupyterLab opens a
  // code cell's outputs when it runs it, and a markdown cell when it runs it, so after Run All a
  // solution's printed results and text were in plain view.  This plugin closes again what was
  // closed: a code cell's outputs if they were collapsed when the run was scheduled, and a
  // markdown cell that is a solution's text only (it starts with "% Solution to Exercise N",
  // cell_visibility's label for such a cell).  A click opens either, as before.
  var SOLUTION_TEXT = /^% Solution to Exercise \S+/;

  function collapsed(notebook) {
    return {
      id: NAME + ":collapsed",
      description: "Keeps the cells the book hides collapsed when they run.",
      autoStart: true,
      activate: function () {
        var keep = new WeakSet();
        notebook.NotebookActions.executionScheduled.connect(function (_, args) {
          if (args.cell.model.type === "code" && args.cell.outputHidden) {
            keep.add(args.cell);
          }
        });
        notebook.NotebookActions.executed.connect(function (_, args) {
          var cell = args.cell;
          if (cell.isDisposed) {
            return;
          }
          if (cell.model.type === "code" && keep.has(cell)) {
            keep.delete(cell);
            cell.outputHidden = true;
          } else if (cell.model.type === "markdown" && SOLUTION_TEXT.test(cell.model.sharedModel.getSource())) {
            cell.inputHidden = true;
          }
        });
      }
    };
  }

  // --- references within a notebook -------------------------------------------------------------
  // jupyterlab-myst resolves a cell's {prf:ref}, {ref} and {eq} roles against the cells it has
  // parsed so far (those with a `fragmentMDAST`), and a cell is parsed when it is first drawn.
  // JupyterLab draws a notebook from the top, and only near the viewport, so a reference to a
  // statement further down is "not found" (a console error each time the cell is drawn) until
  // the reader has scrolled past the statement.  This plugin has every markdown cell of the
  // notebook parsed before a cell is drawn, so that the first drawing resolves it.  It wraps the
  // `render` method of jupyterlab-myst's markdown cell (jupyterlab-myst 2.7.0, pinned), found on
  // the first cell that its content factory makes.
  var EMPTY_INPUT = null;  // made on first use (this file is also loaded by node, for tests)

  function emptyUntilRendered(area) {
    if (!area || area.__dpmaskEmptyUntilRendered) {
      return;
    }
    Object.defineProperty(area, "renderedInput", {
      configurable: true,
      get: function () {
        if (this._rendered) {
          return this._rendered;
        }
        EMPTY_INPUT = EMPTY_INPUT || { node: document.createElement("div") };
        return EMPTY_INPUT;
      }
    });
    area.__dpmaskEmptyUntilRendered = true;
  }

  function parseAllFirst(proto) {
    if (proto.__dpmaskParseAll || typeof proto.render !== "function" || typeof proto.updateFragmentMDAST !== "function") {
      return;
    }
    var render = proto.render;
    proto.render = function () {
      var self = this;
      var args = arguments;
      // JupyterLab's cell toolbar measures the active markdown cell's rendered input as soon as
      // the cell counts as rendered; jupyterlab-myst attaches that input only at the end of its
      // asynchronous render, so a cell made active in between (Run All walks through every cell)
      // threw "Cannot read properties of undefined (reading 'node')".  Until the input is
      // attached, the toolbar (the only reader of `renderedInput` in JupyterLab) finds an empty
      // one, which it measures as not overlapping.  (Attaching the real one early instead left
      // some cells blank: jupyterlab-myst must attach it itself.)
      emptyUntilRendered(self.inputArea);
      var cells = (self.parent && self.parent.widgets) || [];
      var pending = cells.filter(function (w) {
        return w !== self && w.model && w.model.type === "markdown" && w.fragmentMDAST === undefined &&
          typeof w.updateFragmentMDAST === "function";
      });
      return Promise.all(pending.map(function (w) { return w.updateFragmentMDAST(); }))
        .catch(function (err) { console.warn(NAME + ": " + err); })
        .then(function () { return render.apply(self, args); });
    };
    proto.__dpmaskParseAll = true;
  }

  function references(notebook) {
    return {
      id: NAME + ":references",
      description: "Parses every markdown cell of a notebook before jupyterlab-myst draws one, so a reference further down resolves.",
      autoStart: true,
      requires: [notebook.NotebookPanel.IContentFactory],
      activate: function (app, factory) {
        var create = factory.createMarkdownCell;
        factory.createMarkdownCell = function () {
          var cell = create.apply(factory, arguments);
          parseAllFirst(Object.getPrototypeOf(cell));
          return cell;
        };
      }
    };
  }

  // --- citations ----------------------------------------------------------------------------
  // jupyterlab-myst has no bibliography: a {cite:p}/{cite:t} role shows its bib key, marked
  // "Citation Not Found".  The book's text goes in its place ("[Dwork and Roth, 2014]", "Balle
  // and Wang [2018]"), with the full reference as its tooltip, from citations.json, which
  // _ext/jupyterlab/install.py writes beside this file from references.bib
  // (_ext/jupyterlab/citations.py).  jupyterlab-myst's own elements are left in place (React owns
  // them), hidden, with the book's text as a sibling that is removed again if they go.
  var NOT_FOUND = 'span[title="Citation Not Found"]';
  var CITE = "dpmask-cite";

  function citeKeys(el) {
    var spans = el.matches(NOT_FOUND) ? [el] : Array.prototype.slice.call(el.querySelectorAll(NOT_FOUND));
    return spans.map(function (s) { return (s.textContent || "").trim(); });
  }

  function citeNode(keys, narrative, table) {
    if (!keys.every(function (k) { return table[k]; })) {
      return null;
    }
    var node = document.createElement("span");
    node.className = CITE;
    var ordered = keys.slice().sort(function (a, b) { return table[a].rank - table[b].rank; });  // the bibliography's order
    var parts = ordered.map(function (k) {
      var e = table[k];
      return narrative ? e.names + " [" + e.year + "]" : e.names + ", " + e.year;
    });
    node.textContent = narrative ? parts.join(", ") : "[" + parts.join(", ") + "]";
    node.title = ordered.map(function (k) { return table[k].full; }).join("\n");
    node.setAttribute("data-keys", keys.join(","));
    return node;
  }

  function fixCitations(root, table) {
    var groups = [];
    root.querySelectorAll(NOT_FOUND).forEach(function (span) {
      var group = span.parentElement && span.parentElement.classList.contains("cite-group") ? span.parentElement : span;
      if (groups.indexOf(group) < 0) {
        groups.push(group);
      }
    });
    groups.forEach(function (group) {
      var keys = citeKeys(group);
      var next = group.nextSibling;
      if (next && next.nodeType === 1 && next.classList.contains(CITE) && next.getAttribute("data-keys") === keys.join(",")) {
        group.hidden = true;
        return;
      }
      var node = citeNode(keys, group.classList.contains("narrative"), table);
      group.hidden = !!node;  // a key the table lacks stays as jupyterlab-myst shows it
      if (node) {
        group.parentNode.insertBefore(node, group.nextSibling);
      }
    });
    // drop a text whose citation jupyterlab-myst has re-drawn with other keys, or removed
    root.querySelectorAll("." + CITE).forEach(function (node) {
      var source = node.previousSibling;
      if (!source || source.nodeType !== 1 || groups.indexOf(source) < 0 || citeKeys(source).join(",") !== node.getAttribute("data-keys")) {
        node.remove();
      }
    });
  }

  function citations(coreutils) {
    return {
      id: NAME + ":citations",
      description: "Shows a citation as the book prints it, where jupyterlab-myst shows its bib key.",
      autoStart: true,
      activate: function () {
        var url = coreutils.URLExt.join(coreutils.PageConfig.getOption("fullLabextensionsUrl"), NAME, "static", "citations.json");
        fetch(url).then(function (r) {
          if (!r.ok) {
            throw new Error(url + ": " + r.status);
          }
          return r.json();
        }).then(function (table) {
          var pending = false;
          function later() {
            if (!pending) {
              pending = true;
              setTimeout(function () { pending = false; fixCitations(document.body, table); }, 50);
            }
          }
          new MutationObserver(function (records) {
            for (var i = 0; i < records.length; i++) {
              if (records[i].addedNodes.length) {
                later();
                return;
              }
            }
          }).observe(document.body, { childList: true, subtree: true });
          later();
        }).catch(function (err) {
          console.warn(NAME + ": no citation table (" + err + "); citations show their bib keys");
        });
      }
    };
  }

  // --- The explorers for screen readers (issue 24) ------------------------------------------
  // The book's page script for the explorers (_static/dpmask-explorers-a11y.js: names each slider
  // handle and its value, makes the numbers a live region, gives the plot a text alternative) is
  // one source for both hosts: _ext/jupyterlab/install.py copies it beside this file, and this
  // plugin adds it to JupyterLab's page when JupyterLab starts.  Its URL is the extensions' URL
  // from the page config (PageConfig, of @jupyterlab/coreutils in the share scope: the URL the
  // server gave this very file).  It reads and writes only ipywidgets' DOM.
  var EXPLORERS_A11Y = "dpmask-explorers-a11y.js";

  function explorersA11y() {
    return {
      id: NAME + ":explorers-a11y",
      description: "Names the explorers' sliders, announces their numbers and describes their plots for screen readers.",
      autoStart: true,
      activate: function () {
        return shared("@jupyterlab/coreutils").then(function (coreutils) {
          if (document.querySelector("script[data-dpmask='" + EXPLORERS_A11Y + "']")) {
            return;
          }
          var url = coreutils.URLExt.join(coreutils.PageConfig.getOption("fullLabextensionsUrl"), NAME, "static", EXPLORERS_A11Y);
          var script = document.createElement("script");
          script.src = url;
          script.async = true;
          script.setAttribute("data-dpmask", EXPLORERS_A11Y);
          script.onerror = function () { console.warn(NAME + ": " + url + " did not load"); };
          document.head.appendChild(script);
        }).catch(function (err) { console.warn(NAME + ": " + err); });
      }
    };
  }
  // --- end of the explorers' block ------------------------------------------------------------

  _JUPYTERLAB = _JUPYTERLAB || {};
  _JUPYTERLAB[NAME] = {
    init: function (shareScope) {
      scope = shareScope;
    },
    get: function (module) {
      if (module !== "./extension") {
        return Promise.reject(new Error(NAME + ': module "' + module + '" does not exist'));
      }
      return Promise.all([shared("@jupyterlab/notebook"), shared("@jupyterlab/coreutils")]).then(function (mods) {
        var exports = { default: [plugin(mods[0]), collapsed(mods[0]), references(mods[0]), citations(mods[1]), explorersA11y()] };
        Object.defineProperty(exports, "__esModule", { value: true });
        return function () { return exports; };
      });
    }
  };
  // For tests (node): the expression finder alone.
  if (typeof module !== "undefined" && module.exports) {
    module.exports = { expressionsOf: expressionsOf };
  }
})();
