"""JupyterLab on 127.0.0.1 for the live tests (test_live, test_live_hidden, test_live_a11y): one launch.

Each test prepares its own folder (the notebooks it serves) and its own user settings, then
starts JupyterLab over it with :func:`jupyter_lab`, which skips the test without Chromium or
JupyterLab, waits for the server to listen, fails with the server's log when it does not, and
stops it afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _ext_import import ext_module

CHROMIUM = ext_module("localhost").CHROMIUM
# JupyterLab's check for news and updates asks the network: off in every live test.
QUIET = {("@jupyterlab/apputils-extension", "notification"): {"fetchNews": "false", "checkForUpdates": False}}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def jupyter_lab(root: Path, settings: dict | None = None):
    """Serve *root* with JupyterLab; yield its URL.  *settings* maps (extension, plugin) to values."""
    if CHROMIUM is None:
        pytest.skip("the JupyterLab test needs Chromium: apt-get install -y chromium (CI installs it)")
    jupyter = Path(sys.executable).with_name("jupyter")
    if not jupyter.exists():
        pytest.skip("JupyterLab is not installed in this environment")
    user_settings = root / ".settings"
    for (ext, name), value in {**QUIET, **(settings or {})}.items():
        (user_settings / ext).mkdir(parents=True, exist_ok=True)
        (user_settings / ext / f"{name}.jupyterlab-settings").write_text(json.dumps(value))
    port = _free_port()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    with open(root / "lab.log", "w") as log:
        proc = subprocess.Popen(
            [str(jupyter), "lab", "--no-browser", "--ip", "127.0.0.1", f"--port={port}",
             "--IdentityProvider.token=", "--allow-root", "--LabApp.expose_app_in_browser=True",
             f"--ServerApp.root_dir={root}", f"--LabApp.workspaces_dir={root / '.workspaces'}",
             f"--LabApp.user_settings_dir={user_settings}"],
            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root,
        )
        try:
            deadline = time.time() + 120
            while time.time() < deadline:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    time.sleep(0.5)
            else:
                pytest.fail("JupyterLab did not start: " + (root / "lab.log").read_text()[-2000:])
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
