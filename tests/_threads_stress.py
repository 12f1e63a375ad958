"""Stress runs for issues 25 and 32: every explorer in one process, sliders moved interleaved while figure cells draw.

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

Issue 32, ``python tests/_threads_stress.py --second-thread [moves] [--seed S] [--direct]``: a second
Python thread moves two explorers built on ``widgets._shared.explorer`` (:data:`ON_THE_THREAD`), one
move for each move of the main thread, while the main thread (an event loop, as a kernel's) moves the
others, the tightness explorer among them, and draws a figure cell every fourth move.  Moves are one
to three key presses of a control drawn at random, or one time in four a jump (seeded).
:class:`DrawWatch` wraps every drawing entry point and counts the drawings made off the main thread
and those begun while another thread was drawing; both must be 0, no move may raise, and each
explorer must end showing the panel and picture of its last setting.  The last line, ``ok: ...`` or
``failed: ...``, gives the counts.
``--direct`` plants the old ``explorer`` back (a move draws on the thread that makes it).
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import math
import sys
import threading
import time
import traceback
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


# --------------------------------------------------------------------------- a second thread (issue 32)

#: The explorers moved by the second thread; the main thread moves the others (the tightness one too).
ON_THE_THREAD = ("noise_explorer", "rivals_explorer")


class DrawWatch:
    """Every drawing entry point wrapped: how many ran off the main thread, and how many overlapped.

    Wrapped: ``FigureCanvasAgg.draw``, ``Axes.draw_artist``, ``Figure.savefig`` and the explorers'
    ``LivePlot.png``.  A drawing is counted once, at its outermost call on its thread (``savefig``
    calls ``draw`` inside); it *overlaps* when it begins while a drawing of another thread is in
    progress (an in-progress count per thread, read under a lock).
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.depth = defaultdict(int)  # thread id -> drawings in progress on it (nested calls)
        self.draws = self.off_main = self.overlapping = 0
        self.by_name = defaultdict(int)  # entry point -> outermost calls off the main thread

    def install(self):
        from matplotlib.axes import Axes
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from dpmask.widgets._shared import LivePlot

        for cls, name in ((FigureCanvasAgg, "draw"), (Axes, "draw_artist"), (Figure, "savefig"), (LivePlot, "png")):
            setattr(cls, name, self._wrap(getattr(cls, name), f"{cls.__name__}.{name}"))

    def _wrap(self, original, label):
        def wrapped(*args, **kwargs):
            me = threading.get_ident()
            with self.lock:
                if self.depth[me] == 0:
                    self.draws += 1
                    if threading.current_thread() is not threading.main_thread():
                        self.off_main += 1
                        self.by_name[label] += 1
                    if any(d for t, d in self.depth.items() if t != me):
                        self.overlapping += 1
                self.depth[me] += 1
            try:
                return original(*args, **kwargs)
            finally:
                with self.lock:
                    self.depth[me] -= 1

        return wrapped


def _step(control, value, rng):
    """A position of *control* one to three steps (key presses) from *value*, back from an end, or one
    time in four a jump to any position of its grid (a drag: the plot's axis ranges change); for a
    drop-down another choice."""
    import ipywidgets as w

    if isinstance(control, w.Dropdown):
        others = [v for _, v in control.options if v != value]
        return others[rng.integers(len(others))]
    log = isinstance(control, w.FloatLogSlider)
    step = getattr(control, "step", 1) or 1
    top = round((control.max - control.min) / step)
    here = round(((math.log10(value) if log else value) - control.min) / step)
    if rng.random() < 0.25:
        there = int(rng.integers(top + 1))
        there = there if there != here else (here + 1 if here < top else here - 1)
    else:
        k = int(rng.integers(1, 4)) * (1 if rng.random() < 0.5 else -1)
        there = min(max(here + k if 0 <= here + k <= top else here - k, 0), top)
        there = there if there != here else (here + 1 if here < top else here - 1)
    if log:
        return control.base ** min(control.min + there * step, control.max)
    if isinstance(control, w.IntSlider):
        return int(control.min + there * step)
    return min(control.min + there * step, control.max)


def _plan(boxes, names, moves, rng):
    """*moves* (explorer, control index, value): the explorers in turn, each a control at random moved
    as a reader moves it (:func:`_step`)."""
    plan, where = [], {name: [c.value for c in boxes[name].children[0].children] for name in names}
    for i in range(moves):
        name = names[i % len(names)]
        controls = boxes[name].children[0].children
        index = int(rng.integers(len(controls)))
        where[name][index] = _step(controls[index], where[name][index], rng)
        plan.append((name, index, where[name][index]))
    return plan


def _direct_drawing():
    """Put back the pre-issue-32 ``explorer``: a move draws on the thread that makes it (the bug)."""
    import functools

    import ipywidgets as w

    from dpmask.widgets import block, gq, inference, noise, rivals

    def explorer(controls, readers, render, refuse=None):
        panel_, image = w.HTML(), w.Image(format="png")
        cached = functools.lru_cache(maxsize=256)(render)

        def update(change=None):
            args = tuple(read(control.value) for read, control in zip(readers, controls))
            message = refuse(*args) if refuse is not None else None
            if message:
                panel_.value, image.value = message, b""
            else:
                panel_.value, image.value = cached(*args)

        for control in controls:
            control.observe(update, names="value")
        update()
        return w.VBox([w.VBox(list(controls)), panel_, image])

    for module in (block, gq, inference, noise, rivals):
        module.explorer = explorer


async def second_thread(moves, seed):
    """The main thread plays a kernel (event loop, figure cells) and moves its explorers; a second
    thread moves two others, one move per move of the main thread.  Returns the findings."""
    from dpmask import widgets

    rng = np.random.default_rng(seed)
    names = sorted(n for n in widgets.__all__ if n.endswith("_explorer"))
    boxes = {name: getattr(widgets, name)() for name in names}
    mine = [name for name in names if name not in ON_THE_THREAD]
    thread_plan = _plan(boxes, ON_THE_THREAD, moves, rng)
    main_plan = _plan(boxes, mine, moves, rng)
    errors = []
    turn = threading.Semaphore(0)

    def move(name, index, value, where):
        try:
            boxes[name].children[0].children[index].value = value
        except Exception as err:  # an error in a drawing (FreeType's among them): a finding
            errors.append(f"{where}: {name} control {index} = {value!r}: {type(err).__name__}: {err}")
            traceback.print_exc()

    def thread_moves():
        for name, index, value in thread_plan:
            turn.acquire(timeout=5)  # in step with the main thread's moves
            move(name, index, value, "second thread")

    thread = threading.Thread(target=thread_moves, name="second-thread", daemon=True)
    thread.start()
    for i, (name, index, value) in enumerate(main_plan):
        move(name, index, value, "main thread")
        turn.release()
        if i % 4 == 0:
            figure_cell(i % 8)
        await asyncio.sleep(0)  # the kernel between two messages: what was posted to it runs
    while thread.is_alive():
        await asyncio.sleep(0.01)
    for name, box in boxes.items():  # let what is still posted be drawn
        box._dpmask_pending().result(timeout=300) if hasattr(box, "_dpmask_pending") else None
    # every explorer shows its last setting: the same panel and picture as a fresh one set to it quietly
    problems = list(errors)
    for name in ON_THE_THREAD + tuple(mine):
        if name.startswith("tightness"):
            continue
        box, fresh = boxes[name], getattr(widgets, name)()
        for control, value in zip(fresh.children[0].children, _settings(box)):
            control.value = value
        if fresh.children[1].value != box.children[1].value or _digest(fresh) != _digest(box):
            problems.append(f"{name} at {_settings(box)}: not the panel and picture of that setting")
    boxes["tightness_explorer"]._dpmask_state.close()
    return problems


def main_second_thread(argv):
    """``--second-thread [moves] [--seed S] [--direct]``: one run; its last line counts the drawings."""
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 0
    args = [a for i, a in enumerate(argv[1:], 1) if not a.startswith("--") and argv[i - 1] != "--seed"]
    moves = int(args[0]) if args else 200
    if "--direct" in argv:  # the planted bug, to watch this run fail
        _direct_drawing()
    watch = DrawWatch()
    watch.install()
    t0 = time.monotonic()
    problems = asyncio.run(second_thread(moves, seed))
    if watch.off_main:
        problems.append(f"drawn outside the main thread: {dict(watch.by_name)}")
    if watch.overlapping:
        problems.append(f"{watch.overlapping} drawings began while another thread was drawing")
    for line in problems:
        print(line)
    counts = (f"{moves} moves on the main thread and {moves} on a second thread (seed {seed}): {watch.draws} drawings, "
              f"{watch.off_main} off the main thread, {watch.overlapping} overlapping, {time.monotonic() - t0:.1f} s")
    print(("failed: " if problems else "ok: ") + counts)
    return 1 if problems else 0


def main(argv):
    if "--second-thread" in argv:
        return main_second_thread(argv)
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
