"""Stress run for issue 25: every explorer in one process, sliders moved interleaved while figure cells draw.

Run as ``python tests/_threads_stress.py [rounds] [--draw-in-threads]``; the option plants the
bug back (the scheduler's threads draw the tightness pages).  tests/test_threads.py runs it in a
subprocess: an abort in matplotlib or FreeType kills the process.  It plays a kernel: an asyncio event loop
on the main thread, where the explorers are built, the sliders moved and the "figure cells"
(plain matplotlib figures saved to PNG) drawn, with the loop free between cells as a kernel's is.

Each round moves one slider of every explorer, in turn, with a figure cell drawn after each move;
the first tightness explorer jumps to a setting not solved yet (its lower bound arrives from a
worker process while the main thread draws), the second goes round four settings with its page
cache emptied (drawn again each time).  Figure cells go on until both tightness explorers show
their complete page.

At the end it checks, and prints one line per finding:

* no drawing (``FigureCanvasAgg.draw``, ``Axes.draw_artist``, ``Figure.savefig``) ran outside
  the main thread (counted by wrapping those three);
* every setting seen gives identical PNG bytes each time, and the same bytes as a reference made
  afterwards in fresh explorers, quietly, one setting at a time (a corrupted glyph or a half-drawn
  frame would differ);
* identical figure cells give identical PNG bytes.

Exit status 0 and a last line ``ok ...`` when all hold; 1 with the findings otherwise.  An abort
(``malloc(): ...``) or an exception (``RuntimeError: FT_Load_Glyph ...``) ends it otherwise.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import math
import sys
import threading
import time
from collections import defaultdict

import numpy as np

OFF_MAIN = defaultdict(int)  # drawing method -> calls outside the main thread


def _count_threads():
    """Wrap matplotlib's drawing entry points to count calls made outside the main thread."""
    from matplotlib.axes import Axes
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    for cls, name in ((FigureCanvasAgg, "draw"), (Axes, "draw_artist"), (Figure, "savefig")):
        original = getattr(cls, name)

        def wrapped(self, *args, _original=original, _name=f"{cls.__name__}.{name}", **kwargs):
            if threading.current_thread() is not threading.main_thread():
                OFF_MAIN[_name] += 1
            return _original(self, *args, **kwargs)

        setattr(cls, name, wrapped)


def figure_cell(i):
    """What a chapter's figure cell does: a figure with text and a legend, saved as PNG."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.0, 3.5), dpi=80)
    ax = fig.add_subplot(xscale="log")
    x = np.logspace(0, 2, 60)
    for j in range(3):
        ax.plot(x, np.sin(x / (1 + i + j)) + j, label=f"ε = {0.1 * (j + 1):g}, δ = 1e-{i + 2}")
    ax.set_title(f"figure cell {i}: σ against n")
    ax.set_xlabel(r"rows $n$")
    ax.set_ylabel(r"noise $\sigma$")
    ax.legend(fontsize="small")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _positions(slider):
    """Two or three values for a control: its start and positions a few steps away."""
    import ipywidgets as w

    if isinstance(slider, w.Dropdown):
        return [value for _, value in slider.options]
    if isinstance(slider, w.FloatLogSlider):
        e = math.log10(slider.value)
        room = 1 if e + 3 * slider.step <= slider.max else -1
        return [slider.value, 10 ** (e + room * 3 * slider.step), 10 ** (e + room * 7 * slider.step)]
    if isinstance(slider, w.IntSlider):
        room = 1 if slider.value + 2 <= slider.max else -1
        return [slider.value, slider.value + room, slider.value + 2 * room]
    room = 1 if slider.value + 3 * slider.step <= slider.max else -1
    return [slider.value, slider.value + room * 3 * slider.step]


def _digest(box):
    return hashlib.sha256(bytes(box.children[2].value)).hexdigest()


def _settings(box):
    return tuple(c.value for c in box.children[0].children)


WORK = ""


def _workers_cpu(T):
    """CPU seconds (user + system) of the tightness worker processes so far (Linux; 0 elsewhere)."""
    import os

    total = 0.0
    for worker in T._SCHEDULER.workers.values():
        try:
            with open(f"/proc/{worker.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (AttributeError, OSError, ValueError, IndexError):
            pass
    return total


def _tightness_jump(r):
    """Round r's fresh setting for the first tightness explorer: (eps, n) never visited before."""
    return 10 ** (-3 + 0.05 * ((13 * r) % 81)), 10 ** (1.3 + 0.2 * (r % 3))


_CYCLE = ((0.1, 100.0), (0.2, 100.0), (0.2, 10**1.8), (0.1, 10**1.8))  # the second one's settings


async def stress(rounds):
    from dpmask import widgets
    from dpmask.widgets import tightness as T

    names = sorted(n for n in widgets.__all__ if n.endswith("_explorer"))
    boxes = {name: getattr(widgets, name)() for name in names}
    boxes["tightness_explorer_2"] = widgets.tightness_explorer(eps=0.1, delta=0.01, n=100, p=3)
    moves = {name: [_positions(s) for s in box.children[0].children] for name, box in boxes.items()
             if not name.startswith("tightness")}
    seen = defaultdict(set)  # (explorer, settings) -> PNG digests
    cells = defaultdict(set)  # figure cell -> PNG digests
    cell = 0
    t1, t2 = boxes["tightness_explorer"], boxes["tightness_explorer_2"]

    def draw_cell():
        nonlocal cell
        cells[cell % 4].add(hashlib.sha256(figure_cell(cell % 4)).hexdigest())
        cell += 1

    for r in range(rounds):
        eps, n = _tightness_jump(r)
        s1 = t1.children[0].children
        s1[0].value, s1[2].value = eps, n
        draw_cell()
        t2._dpmask_state.pages.clear()  # drawn again, not served from the page cache
        s2 = t2.children[0].children
        s2[0].value, s2[2].value = _CYCLE[r % len(_CYCLE)]
        draw_cell()
        for name, options in moves.items():
            box = boxes[name]
            index = r % len(options)
            box.children[0].children[index].value = options[index][(r // len(options) + 1) % len(options[index])]
            seen[name, _settings(box)].add(_digest(box))
            draw_cell()
            await asyncio.sleep(0)  # the kernel between two cells: posted drawings run
        end = time.monotonic() + 300
        while not (t1._dpmask_pending().done() and t2._dpmask_pending().done()):
            if time.monotonic() > end:
                raise TimeoutError(f"round {r}: the tightness explorers never completed")
            draw_cell()
            await asyncio.sleep(0.01)
        for name, box in (("tightness_explorer", t1), ("tightness_explorer", t2)):
            seen[name, _settings(box)].add(_digest(box))

    assert T._SCHEDULER.settle(timeout=300)
    global WORK
    WORK = f"{cell} figure cells drawn, main process CPU {time.process_time():.1f} s, workers' CPU {_workers_cpu(T):.1f} s"
    # the reference: each setting again in a fresh explorer, one at a time, nothing else drawing
    reference = {}
    fresh = {}
    for name, settings in sorted(seen):
        kind = "tightness_explorer" if name.startswith("tightness") else name
        if kind not in fresh:
            fresh[kind] = getattr(widgets, kind)()
        box = fresh[kind]
        if kind == "tightness_explorer":
            box._dpmask_state.pages.clear()
        for control, value in zip(box.children[0].children, settings):
            control.value = value
        box._dpmask_pending().result(timeout=300) if hasattr(box, "_dpmask_pending") else None
        assert _settings(box) == settings
        reference[name, settings] = _digest(box)
    for box in [*boxes.values(), *fresh.values()]:
        if hasattr(box, "_dpmask_state"):
            box._dpmask_state.close()
    return seen, cells, reference


def _draw_in_threads():
    """Put back the pre-issue-25 ``solved``: the scheduler's threads draw the page themselves (the bug)."""
    from dpmask.widgets import tightness as T

    def solved(self):
        with self.lock:
            if self.current is None or self.done.done():
                return
            page = self.complete(self.current)
            if page is not None:
                self.panel.value, self.image.value = page
                T._resolve(self.done)

    T._Explorer.solved = solved


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    rounds = int(args[0]) if args else 50
    if "--draw-in-threads" in argv:  # the planted bug, to watch this run fail
        _draw_in_threads()
    _count_threads()
    t0 = time.monotonic()
    seen, cells, reference = asyncio.run(stress(rounds))
    problems = []
    if OFF_MAIN:
        problems.append(f"drawn outside the main thread: {dict(OFF_MAIN)}")
    for (name, settings), digests in sorted(seen.items()):
        if len(digests) > 1:
            problems.append(f"{name} at {settings}: {len(digests)} different PNGs")
        elif reference[name, settings] not in digests:
            problems.append(f"{name} at {settings}: the PNG differs from the quiet reference")
    for i, digests in sorted(cells.items()):
        if len(digests) > 1:
            problems.append(f"figure cell {i}: {len(digests)} different PNGs")
    for line in problems:
        print(line)
    if problems:
        return 1
    print(f"ok: {rounds} rounds, {len(seen)} settings, {sum(map(len, seen.values()))} pictures, "
          f"{len(cells)} figure cells, {time.monotonic() - t0:.1f} s; {WORK}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
