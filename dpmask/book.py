"""What the chapters use to put numbers and figures on the page, the same in the book and in JupyterLab.

A chapter is read in two renderers: the HTML book (Sphinx, myst-nb) and a live notebook
(JupyterLab with jupyterlab-myst, as Binder serves it).  Both must show the same numbers,
computed by the package when the page runs, and the same figures with their captions.

Numbers.  A code cell glues a value (``glue("n_rows", 1000)``); the prose names it with an inline
expression of exactly one form::

    {eval}`f"{glued.n_rows:,d}"`

In JupyterLab, jupyterlab-myst evaluates that expression in the running kernel, where :data:`glued`
holds every glued value.  In the book, the ``eval`` role of ``_ext/live_numbers.py`` reads the same
glued value from the executed notebook and formats it with Python's :func:`format` and the same
format spec, so the two texts agree by construction.  Any other ``{eval}`` expression is refused
by the book build (:data:`EVAL_PATTERN`), so an expression that only one renderer understands
cannot slip in.

Figures.  :func:`show_figure` displays a figure as one ``text/markdown`` output holding a MyST
``figure`` directive (the image as a data URI, the label, the caption).  myst-nb renders it as a
numbered, captioned figure; jupyterlab-myst renders the same output as a figure with its caption.
``{eval}`` expressions inside a caption are filled in here, from :data:`glued`, because a cell's
output is not re-evaluated by either renderer.

Every figure is for every reader: :func:`show_figure` takes alternative text that says what the
figure shows (never its label or file name), and refuses a figure whose series a reader with
deuteranopia or a greyscale print could not tell apart (:func:`dpmask._style.indistinct_series`:
series differ by line style or marker, not by hue alone).  Importing this module makes the
colour-blind-safe palette of :mod:`dpmask._style` matplotlib's colour cycle, so a chapter's
``"C0"``, ``"C1"``, ... are its colours.
"""

from __future__ import annotations

import base64
import io
import numbers
import re
import types

import numpy as np

from . import _style

__all__ = ["glued", "glue", "glue_num", "show_figure", "check_alt", "fill_evals", "format_glued", "EVAL_PATTERN"]

#: Every value glued in this kernel, by key: the namespace the prose's ``{eval}`` expressions read.
#: (A chapter must not rebind the name ``glued``; tests/test_text_integrity.py checks that.)
glued = types.SimpleNamespace()

#: The one expression an ``{eval}`` role may hold: an f-string of one glued value and an optional
#: format spec, ``f"{glued.KEY}"`` or ``f"{glued.KEY:SPEC}"``.
EVAL_PATTERN = re.compile(r'^f"\{glued\.(?P<key>[A-Za-z_][A-Za-z0-9_]*)(?::(?P<spec>[^{}"]*))?\}"$')

# An {eval} role inside markdown text (a caption): the expression between the backticks.
_EVAL_ROLE = re.compile(r"\{eval\}`(?P<expr>[^`]*)`")

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# What alternative text must not be: a file name or an image's format.
_FILE_NAME = re.compile(r"\.(png|svg|jpe?g|gif|pdf|webp)$|^(data:|fig[-_ ])", re.IGNORECASE)

try:  # the book's palette for every figure a chapter draws (matplotlib is the book's, not the package's)
    _style.use_palette()
except ImportError:  # pragma: no cover - matplotlib not installed: nothing to draw with
    pass


def _plain(value):
    """A numpy scalar as the Python number it holds (numpy 2 scalars print as ``np.float64(...)``)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def glue(key, value, display=False):
    """Glue *value* under *key* for the book and keep it in :data:`glued` for the live notebook.

    Parameters
    ----------
    key : str
        A Python identifier: the prose reads it back as ``{eval}`f"{glued.KEY:SPEC}"```.
    value : object
        A number or a string (a numpy scalar is converted to the Python number it holds, so
        that its text is a Python literal both renderers read the same way).
    display : bool, optional
        Also show the value as the cell's output (as :func:`myst_nb.glue` does).

    Without myst_nb (a portable notebook run where only ``dpmask[run]`` is installed, issue 29)
    the value is kept in :data:`glued` alone: nothing reads the book's store there.

    Returns
    -------
    None
    """
    if not isinstance(key, str) or not _KEY.match(key):
        raise ValueError(f"key must be a Python identifier (the prose reads it as glued.KEY), got {key!r}")
    if not isinstance(display, bool):
        raise TypeError(f"display must be True or False, got {display!r}")
    value = _plain(value)
    setattr(glued, key, value)
    try:  # the book's store; imported late, the package does not need it
        from myst_nb import glue as _myst_glue
    except ImportError:  # a portable notebook run without the book's tool chain: the value alone
        if display:
            from IPython.display import display as _show

            _show(value)
        return
    _myst_glue(key, value, display=display)


def glue_num(key, value):
    """Glue a number without displaying it (the chapters' shorthand for ``glue(key, value)``)."""
    if isinstance(value, bool) or not isinstance(_plain(value), numbers.Real):
        raise TypeError(f"glue_num glues real numbers; {key!r} got {value!r}")
    glue(key, value, display=False)


def format_glued(value, spec):
    """The text of a glued *value* under the format *spec*: Python's ``format(value, spec)``.

    The one formatting rule both renderers share (JupyterLab evaluates the f-string, the book
    calls this function on the glued value).
    """
    return format(value, spec or "")


def _parse(expr):
    m = EVAL_PATTERN.match(expr.strip())
    if m is None:
        raise ValueError(
            f"an {{eval}} expression must read f\"{{glued.KEY}}\" or f\"{{glued.KEY:SPEC}}\" "
            f"(the one form the book and JupyterLab both render), got {expr!r}"
        )
    return m.group("key"), m.group("spec") or ""


def fill_evals(text, values=None):
    """Replace every ``{eval}`f"{glued.KEY:SPEC}"``` in *text* by its value from *values* (default :data:`glued`)."""
    ns = glued if values is None else values

    def one(match):
        key, spec = _parse(match.group("expr"))
        if not hasattr(ns, key):
            raise KeyError(f"no value glued under {key!r} before this point of the notebook")
        return format_glued(getattr(ns, key), spec)

    return _EVAL_ROLE.sub(one, text)


def check_alt(alt, name):
    """*alt* as one line, or ValueError when it is missing or names the file rather than the figure."""
    if not isinstance(alt, str) or not alt.strip():
        raise ValueError(f"alt must be a sentence saying what figure {name!r} shows (for a reader who cannot see "
                         f"it), got {alt!r}")
    alt = " ".join(alt.split())
    bare = re.sub(r"^fig[-_]", "", name)
    if alt.lower() in (name.lower(), bare.lower(), bare.replace("-", " ").lower()) or _FILE_NAME.search(alt) \
            or len(alt.split()) < 5:
        raise ValueError(f"alt must say what figure {name!r} shows in at least five words, not name it or "
                         f"its file, got {alt!r}")
    return alt


def show_figure(fig, name, caption, *, number=None, alt=None, close=True):
    """Display *fig* as a numbered figure with its caption, in the book and in JupyterLab alike.

    The output is a single ``text/markdown`` MyST ``figure`` directive with the image inline
    (a PNG data URI), the label *name* (for ``{numref}``) and *caption*, in which every
    ``{eval}`` expression is filled in from :data:`glued`.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    name : str
        The figure's label, e.g. ``"fig-intro-sigma"``.
    caption : str
        MyST markdown; may hold ``{eval}`f"{glued.KEY:SPEC}"``` expressions and math.
    number : str, optional
        The figure's number in the book (``"3.1"``), written as the directive's ``:enumerator:`` so
        that JupyterLab numbers it as the book does (jupyterlab-myst numbers a notebook's figures
        1, 2, ... on its own).  The book ignores it for numbering; tests/test_book.py checks that
        it equals the book's number.
    alt : str
        Alternative text for the image: what the figure shows (its axes, its series and what they
        do), for a reader who cannot see it; at least five words, never the label or a file name.
        Required (ValueError without it).
    close : bool, optional
        Close the figure afterwards, so that the inline backend does not show it a second time.

    Raises
    ------
    ValueError
        For a bad *name*, *number* or *alt*, or when two series of one axes differ in colour alone
        and would look alike to a reader with deuteranopia or in greyscale
        (:func:`dpmask._style.indistinct_series`).
    """
    from IPython.display import Markdown, display

    if not isinstance(name, str) or not re.match(r"^[A-Za-z][A-Za-z0-9_-]*$", name):
        raise ValueError(f"name must be a label such as 'fig-intro-sigma', got {name!r}")
    if number is not None and (not isinstance(number, str) or not re.match(r"^[0-9A-Z]+(\.[0-9]+)*$", number)):
        raise ValueError(f"number must be the book's figure number such as '3.1', got {number!r}")
    alt = check_alt(alt, name).replace('"', "'")
    problems = _style.indistinct_series(fig)
    if problems:
        raise ValueError(f"figure {name!r} does not read without colour: " + "; ".join(problems))
    body = fill_evals(caption).strip()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    if close:
        import matplotlib.pyplot as plt

        plt.close(fig)
    fence = "::::" if ":::" in body else ":::"
    options = f":name: {name}\n" + (f":enumerator: {number}\n" if number else "") + f":alt: {alt}\n"
    display(Markdown(f"{fence}{{figure}} data:image/png;base64,{data}\n{options}\n{body}\n{fence}\n"))
