"""Key press to visible update of every explorer, in real JupyterLab driven by Chromium.

What it does: starts JupyterLab on 127.0.0.1 (a free port, no token, temporary settings and
workspace folders), writes a small notebook that builds every ``*_explorer`` of
``dpmask.widgets`` with its default values, opens it in Debian's Chromium through Playwright and
runs it.  Then, explorer by explorer and slider by slider (each slider left where its presses
took it), it focuses the slider's handle, waits ``--switch`` seconds (a reader moving to the
slider) and presses an arrow key ``--presses`` times, towards the side with more room and back
at an end.  For each press the page records, with ``performance.now()``:

* the key press (a ``keydown`` listener in the capture phase, before the slider sees it);
* every later change of the explorer's numbers panel (a ``MutationObserver``) and every load of
  its picture (the ``<img>``'s ``load`` event after its ``src`` changed).

The press is answered when its last change has come and nothing has changed for ``--quiet``
seconds, and the panel no longer says it is still computing (the tightness explorer's exact lower
bound counts: its complete panel, not its first answer).  The latency is the time from the key
press to that last change; the next press follows the quiet period (a reader tapping a key and
looking at each answer).  A press that changed nothing within ``--timeout`` (a slider at its end,
or a setting that shows the same numbers) is counted apart.

Beside it, the kernel records for every slider move the time from the new value to the end of the
explorer's callback (``python``) and to the moment its last output was set (``python done``; it
differs from the first only where a worker thread finishes the panel).

This is a benchmark, not a test: it prints a table and the load average and asserts nothing.
Targets (issue 15): median under 150 ms and worst under 400 ms per explorer on an idle machine.

Run: ``.venv/bin/python benchmarks/bench_widgets_live.py [--presses 30] [--only tightness]``.
Needs the ``book`` extra (JupyterLab), ``playwright`` (pip, never ``playwright install``) and
Debian's ``/usr/bin/chromium``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
EXPLORERS = ("noise", "gq", "block", "inference", "tightness", "rivals")
MEDIAN_TARGET_MS, WORST_TARGET_MS = 150.0, 400.0

# Kernel side: wrap every slider's observers and the outputs' setters, log to a JSON-lines file.
INSTRUMENT = r'''
import json, time
import matplotlib
matplotlib.use("Agg")
from dpmask import widgets

_LOG = open(LOG_PATH, "a", buffering=1)
import dpmask
_LOG.write(json.dumps({"kind": "info", "dpmask": dpmask.__file__}) + "\n")

def _instrument(name, box):
    """Log, per slider move, the callback's time and the times the explorer's outputs were set."""
    panel, image = box.children[1], box.children[2]
    state = {"t0": None, "seq": 0}

    def output_set(change):
        if state["t0"] is not None:
            _LOG.write(json.dumps({"kind": "out", "explorer": name, "seq": state["seq"],
                                   "ms": (time.perf_counter() - state["t0"]) * 1e3,
                                   "computing": "computing" in str(panel.value)}) + "\n")

    panel.observe(output_set, names="value")
    image.observe(output_set, names="value")
    for slider in box.children[0].children:
        original = slider._notify_observers

        def timed(event, original=original, slider=slider):
            if event.get("name") != "value":
                return original(event)
            state["seq"] += 1
            state["t0"] = t0 = time.perf_counter()
            original(event)
            _LOG.write(json.dumps({"kind": "cb", "explorer": name, "seq": state["seq"],
                                   "slider": slider.description,
                                   "ms": (time.perf_counter() - t0) * 1e3}) + "\n")

        slider._notify_observers = timed
    return box
'''

# Page side: one recorder per explorer output, armed before every press.
RECORDER = r'''
(index) => {
  const area = document.querySelectorAll('.dpmask-bench-explorer')[index];
  const panel = area.querySelector('.widget-html-content') || area.querySelector('.widget-html');
  const img = area.querySelector('img');
  const rec = {pressed: null, last: null, events: 0, panelText: panel.textContent};
  window.__dpmaskRec = rec;
  if (!window.__dpmaskKeyHook) {
    window.__dpmaskKeyHook = true;
    document.addEventListener('keydown', () => {
      if (window.__dpmaskRec && window.__dpmaskRec.pressed === null) window.__dpmaskRec.pressed = performance.now();
    }, true);
  }
  if (window.__dpmaskObs) window.__dpmaskObs.disconnect();
  const obs = new MutationObserver(() => {
    const r = window.__dpmaskRec;
    if (r.pressed === null) return;
    const text = panel.textContent;
    if (text !== r.panelText) { r.panelText = text; r.last = performance.now(); r.events += 1; }
  });
  obs.observe(panel, {subtree: true, childList: true, characterData: true});
  window.__dpmaskObs = obs;
  if (img && !img.__dpmaskHooked) {
    img.__dpmaskHooked = true;
    img.addEventListener('load', () => {
      const r = window.__dpmaskRec;
      if (r && r.pressed !== null && r.img === img) { r.last = performance.now(); r.events += 1; }
    });
  }
  rec.img = img;
  return true;
}
'''

STATE = r'''
() => {
  const r = window.__dpmaskRec;
  return {pressed: r.pressed, last: r.last, events: r.events, now: performance.now(),
          computing: r.panelText.includes('computing')};
}
'''


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _notebook(path, names, log_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(f"LOG_PATH = {str(log_path)!r}\n" + INSTRUMENT))
    for name in names:
        cell = nbformat.v4.new_code_cell(
            f"_box = _instrument({name!r}, widgets.{name}_explorer())\n"
            f"_box.add_class('dpmask-bench-explorer')\n_box"
        )
        nb.cells.append(cell)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def _start_lab(workdir, port):
    settings = workdir / "settings"
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True)
    # every cell in the DOM (no virtualised notebook), no news or update checks (offline)
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}))
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    jupyter = Path(sys.executable).with_name("jupyter")
    cmd = [str(jupyter), "lab", "--no-browser", "--ip", "127.0.0.1", "--port", str(port),
           "--IdentityProvider.token=", "--ServerApp.password=", "--allow-root",
           "--LabApp.expose_app_in_browser=True", f"--ServerApp.root_dir={workdir}",
           f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={workdir / 'workspaces'}"]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    log = open(workdir / "lab.log", "w")
    proc = subprocess.Popen(cmd, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited: {(workdir / 'lab.log').read_text()[-2000:]}")
        try:
            urllib.request.urlopen(url + "/api/status", timeout=2)
            return proc, url
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError("JupyterLab did not start within 120 s")


def _wait_rendered(page, count, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline:
        done = page.evaluate(
            """(count) => {
                const areas = document.querySelectorAll('.dpmask-bench-explorer');
                const busy = document.querySelectorAll('.jp-InputArea-prompt');
                const running = [...busy].some(p => p.textContent.includes('*'));
                const ready = [...areas].filter(a => a.querySelector('img') && a.querySelector('.widget-html'));
                return !running && ready.length >= count;
            }""", count)
        if done:
            return
        time.sleep(0.5)
    raise RuntimeError("the explorers did not render in time")


def _slider_handles(page, index):
    return page.evaluate(
        """(index) => {
            const area = document.querySelectorAll('.dpmask-bench-explorer')[index];
            return [...area.querySelectorAll('.widget-slider')].map((s, i) => {
                const h = s.querySelector('.noUi-handle');
                const label = s.querySelector('.widget-label');
                return {i, label: label ? label.textContent : String(i),
                        now: Number(h.getAttribute('aria-valuenow')),
                        min: Number(h.getAttribute('aria-valuemin')),
                        max: Number(h.getAttribute('aria-valuemax'))};
            });
        }""", index)


def _press(page, index, key, quiet, timeout):
    """Press *key* once; the latency (ms) to the last change, or None if nothing changed."""
    page.evaluate(RECORDER, index)
    page.keyboard.press(key)
    start = time.time()
    while True:
        time.sleep(0.01)
        s = page.evaluate(STATE)
        if s["last"] is not None and not s["computing"] and s["now"] - s["last"] >= quiet * 1e3:
            return s["last"] - s["pressed"]
        if time.time() - start > timeout:
            if s["last"] is None:
                return None
            return s["last"] - s["pressed"] if not s["computing"] else float("inf")


def _drive(page, names, presses, quiet, timeout, switch):
    results = {}
    for index, name in enumerate(names):
        lat, unchanged, by_slider = [], 0, []
        for handle in _slider_handles(page, index):
            first = len(lat)
            locator = (page.locator(".dpmask-bench-explorer").nth(index).locator(".widget-slider")
                       .nth(handle["i"]).locator(".noUi-handle"))
            locator.scroll_into_view_if_needed()
            locator.focus()
            time.sleep(switch)  # a reader moving to the next slider
            up = handle["max"] - handle["now"] >= handle["now"] - handle["min"]
            for _ in range(presses):
                now = float(locator.get_attribute("aria-valuenow"))
                if up and now >= handle["max"] - 1e-9:
                    up = False  # at an end: come back
                elif not up and now <= handle["min"] + 1e-9:
                    up = True
                ms = _press(page, index, "ArrowRight" if up else "ArrowLeft", quiet, timeout)
                if ms is None:
                    unchanged += 1
                else:
                    lat.append(ms)
            part = lat[first:]
            if part:
                by_slider.append(f"{handle['label'].strip() or handle['i']} {statistics.median(part):.0f}/{max(part):.0f}")
        results[name] = (lat, unchanged)
        print(f"  {name}: {len(lat)} presses answered, {unchanged} without a change; per slider, median/worst ms: "
              + ", ".join(by_slider), flush=True)
    return results


def _python_side(log_path):
    """Per explorer: callback times and times to the last complete output, per slider move (ms)."""
    cbs, dones = {}, {}
    for line in Path(log_path).read_text().splitlines():
        rec = json.loads(line)
        if rec["kind"] == "info":
            print(f"the kernel imported dpmask from {rec['dpmask']}")
            continue
        key = (rec["explorer"], rec["seq"])
        if rec["kind"] == "cb":
            cbs[key] = rec["ms"]
        elif not rec["computing"]:
            dones[key] = max(dones.get(key, 0.0), rec["ms"])
    out = {}
    for key, ms in sorted(cbs.items()):
        cb, done = out.setdefault(key[0], ([], []))
        cb.append(ms)
        done.append(max(ms, dones.get(key, ms)))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presses", type=int, default=30, help="presses per slider (default 30)")
    parser.add_argument("--quiet", type=float, default=0.3,
                        help="seconds without a change that end a press's answer (default 0.3)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for a change (default 10)")
    parser.add_argument("--switch", type=float, default=1.0,
                        help="seconds between focusing a slider and its first press (default 1)")
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds between the explorers appearing and the first press (default 2)")
    parser.add_argument("--only", action="append", choices=EXPLORERS, help="one explorer (repeatable)")
    parser.add_argument("--headed", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    names = tuple(args.only) if args.only else EXPLORERS
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} not found: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    workdir = Path(tempfile.mkdtemp(prefix="dpmask-live-bench-"))
    log_path = workdir / "kernel-times.jsonl"
    log_path.touch()
    _notebook(workdir / "explorers.ipynb", names, log_path)
    proc, url = _start_lab(workdir, _free_port())
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=not args.headed)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url + "/lab/tree/explorers.ipynb", timeout=120000)
            page.wait_for_function("() => window.jupyterapp && document.querySelector('.jp-Notebook')",
                                   timeout=120000)
            page.wait_for_function(
                "() => { const s = document.querySelector('.jp-Notebook-ExecutionIndicator, "
                ".jp-KernelStatus'); return !!document.querySelector('.jp-Notebook .jp-Cell'); }",
                timeout=120000)
            time.sleep(2.0)  # let the kernel connect
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            _wait_rendered(page, len(names))
            time.sleep(args.settle)
            load_before = os.getloadavg()
            results = _drive(page, names, args.presses, args.quiet, args.timeout, args.switch)
            load_after = os.getloadavg()
            browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    py = _python_side(log_path)
    shutil.rmtree(workdir, ignore_errors=True)
    print(f"load average (1, 5, 15 min) before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}; "
          f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; {os.cpu_count()} cores")
    print(f"{args.presses} presses per slider (back at an end), sliders in turn without resetting them; next press "
          f"{args.quiet:.2f} s after the last change, {args.switch:.1f} s before a slider's first press")
    head = (f"{'explorer':<11}{'presses':>8}{'no change':>10}{'median ms':>11}{'worst ms':>10}  target"
            f"{'py median':>11}{'py worst':>10}{'py done med':>13}{'py done worst':>15}")
    print(head)
    for name in names:
        lat, unchanged = results[name]
        cb, done = py.get(name, ([float("nan")], [float("nan")]))
        med = statistics.median(lat) if lat else float("nan")
        worst = max(lat) if lat else float("nan")
        ok = med < MEDIAN_TARGET_MS and worst < WORST_TARGET_MS
        print(f"{name:<11}{len(lat):>8}{unchanged:>10}{med:>11.0f}{worst:>10.0f}  {'met   ' if ok else 'missed'}"
              f"{statistics.median(cb):>11.0f}{max(cb):>10.0f}"
              f"{statistics.median(done):>13.0f}{max(done):>15.0f}")
    print(f"targets: median < {MEDIAN_TARGET_MS:.0f} ms and worst < {WORST_TARGET_MS:.0f} ms from key press to "
          "the last visible change (idle machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
