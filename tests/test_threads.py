"""One thread draws (issues 25 and 32): whatever thread moves a slider, every explorer draws on the main thread.

matplotlib and FreeType are not thread-safe.  Before issue 25, the tightness explorer's scheduler
threads drew a page when its lower bound arrived, while the kernel's thread could be drawing another
explorer or a figure cell: six explorers built in one process with their sliders moved interleaved
aborted the process (``malloc(): unsorted double linked list corrupted``) or raised ``FT_Load_Glyph
... invalid outline`` in 7 of 9 runs.  Before issue 32, the five explorers built on
``widgets._shared.explorer`` drew on whichever thread set the slider: with a second thread moving two
of them while the main thread moved the others, 1 of 4 runs aborted (``free(): corrupted unsorted
chunks``) and the other 3 raised ``FT_Render_Glyph ... raster overflow``.  Now a drawing asked for
on any other thread is posted to the main thread (``widgets._shared.KERNEL``).

The stress runs (``tests/_threads_stress.py``) run in subprocesses, because an abort kills the
process that has it.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")

ROOT = Path(__file__).resolve().parents[1]
STRESS = ROOT / "tests" / "_threads_stress.py"


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


# `make test-slow`, in the JupyterLab lane (marked `stress`).  In `make test`'s package lane a fresh
# clone at load 8 took 71 minutes beside the chapters' 60: not there.  50 rounds took about two minutes
# idle and 194 s in CI's lane; since 29 Nov 2026 20 rounds (about 80 s in that lane), for CI's 90
# minutes.  What they detect does not need the length: every drawing made off the main thread is
# counted (one is a failure), so the planted bug fails in two rounds (the test after this one); the
# rounds are a soak for the aborts, which before issue 25 came in 7 of 9 runs of six explorers.
STRESS_ROUNDS = 20


@pytest.mark.slow
@pytest.mark.stress
def test_every_explorer_in_one_process_survives_interleaved_moves_and_figure_cells():
    """20 rounds of every explorer's sliders moved in turn while figure cells draw (tests/_threads_stress.py):
    no abort, no FreeType error, no drawing outside the main thread, and identical PNGs for identical
    settings, also against a quiet reference drawn afterwards."""
    run = subprocess.run([sys.executable, str(STRESS), str(STRESS_ROUNDS)], cwd=ROOT,
                         capture_output=True, text=True, timeout=1800)
    report = f"exit {run.returncode}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    assert run.returncode == 0, report  # an abort is a negative status (SIGABRT: -6)
    assert "FT_" not in run.stderr and "Traceback" not in run.stderr and "malloc" not in run.stderr, report
    assert run.stdout.strip().splitlines()[-1].startswith(f"ok: {STRESS_ROUNDS} rounds"), report


@pytest.mark.slow
@pytest.mark.stress
def test_drawing_in_the_schedulers_threads_fails_the_interleaved_run():
    """The planted old behaviour (``--draw-in-threads``: the tightness explorer's scheduler threads draw
    the pages they complete) fails a run of two rounds: it aborts, raises, or counts the drawings made
    outside the main thread."""
    run = subprocess.run([sys.executable, str(STRESS), "2", "--draw-in-threads"], cwd=ROOT,
                         capture_output=True, text=True, timeout=1800)
    report = f"exit {run.returncode}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    assert run.returncode != 0, report
    assert run.returncode < 0 or "drawn outside the main thread" in run.stdout or "Traceback" in run.stderr, report


# --- a second thread moves the explorers built on widgets._shared.explorer (issue 32) -------------


def test_a_move_made_on_another_thread_is_drawn_on_the_main_thread(off_main_drawing):
    """The other thread's move posts a redraw and returns; the main thread draws it when it waits
    (in a kernel: when its event loop is free), and shows what a fresh explorer shows at that setting."""
    from dpmask import widgets

    box = widgets.gq_explorer(q=10, t1=1.0, t2=3.0)
    shown = box.children[1].value
    mover = threading.Thread(target=lambda: setattr(box.children[0].children[1], "value", 2.0))
    mover.start()
    mover.join()
    assert box.children[1].value == shown and not box._dpmask_pending().done()  # posted, not drawn there
    box._dpmask_pending().result(timeout=120)
    fresh = widgets.gq_explorer(q=10, t1=2.0, t2=3.0)
    assert box.children[1].value == fresh.children[1].value
    assert bytes(box.children[2].value) == bytes(fresh.children[2].value)
    assert not off_main_drawing, dict(off_main_drawing)


_COUNTS = re.compile(r"(\d+) drawings, (\d+) off the main thread, (\d+) overlapping")


def _second_thread_run(moves, seed, *extra):
    """One run of ``_threads_stress.py --second-thread`` in a subprocess: (return code, counts or None, report)."""
    run = subprocess.run([sys.executable, str(STRESS), "--second-thread", str(moves), "--seed", str(seed), *extra],
                         cwd=ROOT, capture_output=True, text=True, timeout=1800)
    lines = run.stdout.strip().splitlines()
    found = _COUNTS.search(lines[-1]) if lines else None
    counts = tuple(int(g) for g in found.groups()) if found else None
    return run, counts, f"run {seed}: exit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"


def _runs_are_clean(runs, moves):
    """*runs* runs of *moves* moves on each thread: every one exits 0 (no abort), writes no FreeType error or
    traceback, and counts 0 drawings off the main thread and 0 overlapping, with drawings made."""
    bad = []
    for seed in range(runs):
        run, counts, report = _second_thread_run(moves, seed)
        clean = (run.returncode == 0 and counts is not None and counts[0] > 0 and counts[1:] == (0, 0)
                 and run.stdout.strip().splitlines()[-1].startswith("ok: ")
                 and not any(s in run.stderr for s in ("FT_", "Traceback", "malloc", "free()", "corrupted")))
        if not clean:
            bad.append(report)
    assert not bad, f"{len(bad)} of {runs} runs failed:\n" + "\n".join(bad)


def test_explorers_moved_from_a_second_thread_two_short_runs():
    """2 runs of 50 moves on each thread (tests/_threads_stress.py --second-thread): a second thread moves
    two explorers built on ``_shared.explorer`` while the main thread, playing a kernel, moves the others
    (the tightness explorer among them) and draws figure cells.  No abort, no FreeType error, no drawing off
    the main thread, none overlapping another, and each explorer ends showing its last setting."""
    _runs_are_clean(2, 50)


# Runs of the long stress.  Each takes about a minute idle (ten took 658 s of CI's 90 minutes in
# `make test-slow`, beside JupyterLab; three took 234 s); before issue 32's fix every run of 50 moves
# failed (4 of 4), and a drawing off the main thread is counted at its first move, so two runs of 200
# (since 29 Nov 2026, for CI's time) keep a wide margin.  DPMASK_THREADS_RUNS=10 for a longer soak.  Slow and
# `stress`, for the reason above the interleaved test.
LONG_RUNS = int(os.environ.get("DPMASK_THREADS_RUNS", "2"))


@pytest.mark.slow
@pytest.mark.stress
def test_explorers_moved_from_a_second_thread_long_runs_of_200_moves():
    """The same as the short runs, ``LONG_RUNS`` runs (2 unless DPMASK_THREADS_RUNS says) of 200 moves on each thread."""
    assert LONG_RUNS >= 1, "DPMASK_THREADS_RUNS must be a positive number of runs"
    _runs_are_clean(LONG_RUNS, 200)


def test_drawing_on_the_moving_thread_fails_the_second_thread_run():
    """The planted old behaviour (``--direct``: ``_shared.explorer`` draws on the thread that moves the slider)
    fails the run: it aborts, or it counts drawings off the main thread (every move of the second thread)."""
    run, counts, report = _second_thread_run(20, 0, "--direct")
    assert run.returncode != 0, report
    assert run.returncode < 0 or (counts is not None and counts[1] > 0), report
