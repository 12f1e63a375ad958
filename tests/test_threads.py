"""One thread draws (issue 25): the tightness explorer's scheduler threads solve, the main thread draws.

matplotlib and FreeType are not thread-safe.  Before, the scheduler's threads drew a page when its
lower bound arrived, while the kernel's thread could be drawing another explorer or a figure cell:
six explorers built in one process with their sliders moved interleaved aborted the process
(``malloc(): unsorted double linked list corrupted``) or raised ``FT_Load_Glyph ... invalid
outline`` in 7 of 9 runs.  Now a page whose values arrive is posted to the main thread.

The stress run (``tests/_threads_stress.py``, 50 rounds) runs in a subprocess, because an abort
kills the process that has it.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def off_main_drawing(monkeypatch):
    """Count matplotlib's drawing calls (canvas draw, draw_artist, savefig) made outside the main thread."""
    from matplotlib.axes import Axes
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    counts = Counter()
    for cls, name in ((FigureCanvasAgg, "draw"), (Axes, "draw_artist"), (Figure, "savefig")):
        original = getattr(cls, name)

        def wrapped(self, *args, _original=original, _name=f"{cls.__name__}.{name}", **kwargs):
            if threading.current_thread() is not threading.main_thread():
                counts[_name] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, name, wrapped)
    return counts


def _jump(box, eps, n):
    sliders = box.children[0].children
    sliders[0].value, sliders[2].value = eps, n


def test_a_page_completed_by_the_workers_is_drawn_on_the_main_thread(off_main_drawing):
    """A move to a setting not solved ahead: the page completes (waiting draws it here), and no
    drawing ran in the scheduler's threads.  With the old ``solved`` (the threads draw) the count
    is above zero at every run."""
    from dpmask import widgets
    from dpmask.widgets import tightness as T

    box = widgets.tightness_explorer(eps=0.1, delta=0.01, n=100, p=4)
    try:
        for eps, n in ((10**-2.35, 10**1.6), (10**0.55, 10**2.3)):  # far from every planned setting
            _jump(box, eps, n)
            box._dpmask_pending().result(timeout=300)
            assert "computing" not in box.children[1].value
            assert T._SCHEDULER.settle(timeout=600)  # the threads have had their say
        assert not off_main_drawing, dict(off_main_drawing)
    finally:
        box._dpmask_state.close()


def test_in_a_running_event_loop_the_page_completes_without_a_wait(off_main_drawing):
    """In a kernel nobody calls ``result()``: the page is drawn by the event loop running on the main
    thread (posted with ``call_soon_threadsafe``) while the loop is free, as between two cells."""
    from dpmask import widgets

    async def run():
        box = widgets.tightness_explorer(eps=0.1, delta=0.01, n=100, p=6)
        try:
            _jump(box, 10**-1.15, 10**1.9)
            for _ in range(60_000):  # at most 600 s: a hang guard
                if box._dpmask_pending().done():
                    break
                await asyncio.sleep(0.01)
            return box._dpmask_pending().done(), box.children[1].value
        finally:
            box._dpmask_state.close()

    done, panel = asyncio.run(run())
    assert done and "computing" not in panel
    assert not off_main_drawing, dict(off_main_drawing)


@pytest.mark.slow  # about a minute idle, several under load: `make test-slow`
def test_every_explorer_in_one_process_survives_interleaved_moves_and_figure_cells():
    """50 rounds of every explorer's sliders moved in turn while figure cells draw (tests/_threads_stress.py):
    no abort, no FreeType error, no drawing outside the main thread, and identical PNGs for identical
    settings, also against a quiet reference drawn afterwards.  With the drawing put back in the
    scheduler's threads (``--draw-in-threads``) the run fails."""
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "_threads_stress.py"), "50"], cwd=ROOT,
                         capture_output=True, text=True, timeout=1800)
    report = f"exit {run.returncode}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    assert run.returncode == 0, report  # an abort is a negative status (SIGABRT: -6)
    assert "FT_" not in run.stderr and "Traceback" not in run.stderr and "malloc" not in run.stderr, report
    assert run.stdout.strip().splitlines()[-1].startswith("ok: 50 rounds"), report
