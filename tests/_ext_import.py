"""Import a module of ``_ext/`` from a test: the book's Sphinx extensions and scripts are not a package.

``sys.path`` gets ``_ext`` only for the import, so that no test leaves it there for the next.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

EXT = Path(__file__).resolve().parents[1] / "_ext"


def ext_module(name):
    """The module ``_ext/<name>.py``, imported (once per test session, like any module)."""
    sys.path.insert(0, str(EXT))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(EXT))
