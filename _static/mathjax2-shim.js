/* MathJax 2's MathJax.Hub.Queue for the widget manager, on the book's MathJax 3 pages.
 *
 * The ipywidgets 8 HTML manager (_static/widgets/embed-amd.js) typesets a widget's label by
 * calling MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]) whenever window.MathJax exists.
 * MathJax 3 has no Hub, so every widget page logged "Cannot read properties of undefined
 * (reading 'Queue')".  This shim gives whatever object window.MathJax holds (first the
 * configuration, then MathJax 3 itself, which replaces it when it loads) a Hub whose Queue
 * runs MathJax 3's typesetPromise on the element once MathJax is ready.
 * Added to every page by Jupyter Book (every .js of _static is); tests/test_book.py fails on any
 * console error.
 */
(function () {
  "use strict";

  function typesetLater(element) {
    var mj = window.MathJax;
    if (!mj || !mj.startup || !mj.startup.promise) {
      return;  // MathJax 3 has not loaded yet; it typesets the whole page when it does
    }
    mj.startup.promise
      .then(function () {
        return mj.typesetPromise ? mj.typesetPromise(element ? [element] : undefined) : null;
      })
      .catch(function (err) {
        console.warn("MathJax could not typeset a widget:", err);
      });
  }

  var hub = {
    Queue: function () {
      for (var i = 0; i < arguments.length; i++) {
        var job = arguments[i];
        if (Array.isArray(job) && job[0] === "Typeset") {
          typesetLater(job[2]);
        } else if (typeof job === "function") {
          job();
        }
      }
    },
  };

  function withHub(value) {
    if (value && typeof value === "object" && !value.Hub) {
      try {
        Object.defineProperty(value, "Hub", { value: hub, enumerable: false, configurable: true });
      } catch (err) {
        /* a frozen object: leave it */
      }
    }
    return value;
  }

  var current = withHub(window.MathJax);
  try {
    Object.defineProperty(window, "MathJax", {
      configurable: true,
      enumerable: true,
      get: function () {
        return current;
      },
      set: function (value) {
        current = withHub(value);
      },
    });
  } catch (err) {
    /* window.MathJax cannot be redefined: the Hub on the current object is all we can do */
  }
})();
