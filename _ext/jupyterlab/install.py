"""Install JupyterLab's side of the live book into this Python environment (issue 22).

Copies the ``dpmask-live`` extension (``labextension/``: it evaluates a markdown cell's
``{eval}`` expressions from the cell's source when the cell runs) into
``<prefix>/share/jupyter/labextensions/dpmask-live`` and merges ``page_config.json`` (which
switches off jupyterlab-myst's own executor, which reads the expressions from the cell's last
rendering and so finds none while Run All outpaces the rendering) into
``<prefix>/etc/jupyter/labconfig/page_config.json``.  Into the installed extension's ``static/``
it also writes

- ``citations.json``, the book's citation texts made from ``references.bib`` (``citations.py``),
  which the extension shows where jupyterlab-myst would show a bib key;
- a copy of the book's page script for the explorers, ``_static/dpmask-explorers-a11y.js``
  (screen-reader names, value texts, a live region for the numbers, the plot's text
  alternative), which the extension's ``explorers-a11y`` plugin loads: one source for the HTML
  book and JupyterLab, no second copy in this folder.

An editable install (``pip install -e .``, what the Makefile and environment.yml do) does not
install setuptools data files, so the Makefile runs this after pip, and Binder's ``postBuild``
runs it after the environment; both give the same JupyterLab.  Idempotent.

Usage: ``python _ext/jupyterlab/install.py [--prefix PREFIX]`` (default: ``sys.prefix``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXPLORERS_A11Y = HERE.parents[1] / "_static" / "dpmask-explorers-a11y.js"
NAME = "dpmask-live"


def install(prefix: Path) -> list[Path]:
    """Copy the extension (with the explorers' page script) and merge the page config under ``prefix``; return the files written."""
    prefix = Path(prefix)
    target = prefix / "share" / "jupyter" / "labextensions" / NAME
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(HERE / "labextension", target)
    # the book's citation texts, made from references.bib (jupyterlab-myst has no bibliography)
    sys.path.insert(0, str(HERE))
    try:
        import citations
    finally:
        sys.path.remove(str(HERE))
    citations.write(target / "static" / "citations.json")
    shutil.copy2(EXPLORERS_A11Y, target / "static" / EXPLORERS_A11Y.name)
    config = prefix / "etc" / "jupyter" / "labconfig" / "page_config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    current = json.loads(config.read_text()) if config.exists() else {}
    ours = json.loads((HERE / "page_config.json").read_text())
    for key, value in ours.items():
        if isinstance(value, dict):
            current[key] = {**current.get(key, {}), **value}
        else:
            current[key] = value
    config.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n")
    return sorted(p for p in target.rglob("*") if p.is_file()) + [config]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", type=Path, default=Path(sys.prefix))
    args = parser.parse_args(argv)
    for path in install(args.prefix):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
