"""Interactive explorers (ipywidgets) for the book, each with a static companion figure.

Every explorer returns its top-level widget (a ``VBox``): sliders, an ``HTML``
panel with the numbers, and an ``Image`` holding a matplotlib figure redrawn
when a slider moves.  Rendering the figure into an ``Image`` (rather than an
``Output`` area) keeps the last picture inside the saved widget state, so a
static page still shows it.  Every explorer has a static companion,
``<name>_figure(...)``, that returns a ``matplotlib.figure.Figure`` over
the whole parameter range for pages read without a kernel, and a pure
``<name>_numbers(...)`` function that computes what its panel shows.

One module per explorer, each holding its numbers, its static figure and its
explorer:

========================  ==========================================  =========
module                    explorer                                    chapter
========================  ==========================================  =========
``widgets.noise``         Theorem 3.2 against Theorem 3.4             1, 3, 4
``widgets.gq``            Lemma 5.5's bound on G_q(t2) / G_q(t1)      5
``widgets.inference``     error of a slope fitted from a release      6
``widgets.tightness``     the bracket around Setting B's true sigma   7
``widgets.block``         the noise price of block-diagonal masking   8
``widgets.rivals``        masking against the Gram mechanism          9
========================  ==========================================  =========

``widgets._shared`` holds what they share: the slider factory, the panel, the
live plot (one figure per explorer that redraws only what moves) and the tick
formatting.  A new explorer goes in a module of its own, built on it, and its
three public names go in ``__all__`` below.

ipywidgets and matplotlib are imported inside the functions so that
``import dpmask`` stays light.
"""

from .block import block_explorer, block_figure, block_numbers
from .gq import gq_explorer, gq_figure, gq_numbers
from .inference import inference_explorer, inference_figure, inference_numbers
from .noise import noise_explorer, noise_figure, noise_numbers
from .rivals import rivals_explorer, rivals_figure, rivals_numbers
from .tightness import tightness_explorer, tightness_figure, tightness_numbers

__all__ = [
    "noise_numbers",
    "noise_explorer",
    "noise_figure",
    "gq_numbers",
    "gq_explorer",
    "gq_figure",
    "block_numbers",
    "block_explorer",
    "block_figure",
    "inference_numbers",
    "inference_explorer",
    "inference_figure",
    "tightness_numbers",
    "tightness_explorer",
    "tightness_figure",
    "rivals_numbers",
    "rivals_explorer",
    "rivals_figure",
]
