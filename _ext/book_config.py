"""What the book's build tools share: the repository, the editions and the table of contents.

The base of ``_ext/``: it imports no other module of ``_ext/`` and nothing from Sphinx, so the
Sphinx extension (``publish.py``) and the command line (``editions.py``) both build on it and
never on each other (tests/test_ext_imports.py fails on a cycle).

- The repository, in one place: ``_config.yml``'s ``repository: url / branch`` drives the launch
  buttons, the repository button and the README's Binder badge; :data:`PLACEHOLDER_URL` is what
  a fresh fork carries and a publication build refuses (:func:`repository_problem`).
- The editions: ``full`` and ``students``.  The student edition's launch buttons open the
  branch :func:`students_branch` (``sphinx: config: dpmask_students_branch`` in ``_config.yml``,
  default ``students``), to which the publishing workflow pushes the solution-free notebooks.
- :func:`toc_pages`: every page of ``_toc.yml`` in reading order.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

# The value a fresh fork carries; ``python _ext/editions.py badge`` and the tests know it too.
PLACEHOLDER_URL = "https://github.com/your-account/dpmask"
EDITIONS = ("full", "students")
DEFAULT_STUDENTS_BRANCH = "students"
DEFAULT_EXECUTED_BRANCH = "executed"
# The branches the Colab button opens: the portable notebooks of each edition (_ext/portable.py).
DEFAULT_NOTEBOOKS_BRANCH = "notebooks"
DEFAULT_STUDENTS_NOTEBOOKS_BRANCH = "notebooks-students"

BADGE_START = "<!-- binder-badge: generated from _config.yml by `python _ext/editions.py badge` -->"
BADGE_END = "<!-- /binder-badge -->"

_GITHUB = re.compile(r"^https://github\.com/(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)/(?P<repo>[A-Za-z0-9._-]+?)/?$")


def config(root: Path = ROOT) -> dict:
    """``_config.yml`` as a dict."""
    return yaml.safe_load((Path(root) / "_config.yml").read_text()) or {}


def repository(root: Path = ROOT) -> tuple[str, str]:
    """(url, branch) from ``_config.yml``."""
    repo = config(root).get("repository") or {}
    return str(repo.get("url", "")).rstrip("/"), str(repo.get("branch", "main"))


def students_branch(root: Path = ROOT) -> str:
    """The branch the student edition's launch buttons open (``dpmask_students_branch``)."""
    sphinx_cfg = (config(root).get("sphinx") or {}).get("config") or {}
    branch = str(sphinx_cfg.get("dpmask_students_branch", DEFAULT_STUDENTS_BRANCH))
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$", branch):
        raise ValueError(f"dpmask_students_branch must be a git branch name, got {branch!r}")
    return branch


def executed_branch(root: Path = ROOT) -> str:
    """The branch the book's launch buttons and the README's badge open (``dpmask_executed_branch``).

    The publishing workflow pushes there the chapters as the book's build executed them, outputs
    and evaluated ``{eval}`` expressions included (``_ext/executed.py``), so that a chapter opened
    from a launch button shows the book's numbers and figures before it runs.
    """
    sphinx_cfg = (config(root).get("sphinx") or {}).get("config") or {}
    branch = str(sphinx_cfg.get("dpmask_executed_branch", DEFAULT_EXECUTED_BRANCH))
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$", branch):
        raise ValueError(f"dpmask_executed_branch must be a git branch name, got {branch!r}")
    return branch


def site_url(root: Path = ROOT) -> str:
    """The published book's address, ending in ``/``: ``html: baseurl`` in ``_config.yml`` if set,
    else the GitHub Pages address of the repository (``https://OWNER.github.io/REPO/``; the
    placeholder's while ``repository: url`` is the placeholder)."""
    base = str((config(root).get("html") or {}).get("baseurl") or "").strip()
    if base:
        return base.rstrip("/") + "/"
    url, _ = repository(root)
    m = _GITHUB.match(url)
    if not m:
        raise ValueError(f"repository url must be https://github.com/OWNER/REPO (or set html: baseurl), got {url!r}")
    return f"https://{m.group('owner').lower()}.github.io/{m.group('repo')}/"


def repository_problem(url: str | None) -> str | None:
    """Why *url* cannot be published (None when it can)."""
    if not url:
        return "no repository URL is set"
    if url.rstrip("/") == PLACEHOLDER_URL:
        return f"the repository URL is still the placeholder {PLACEHOLDER_URL}"
    if not _GITHUB.match(url):
        return f"the repository URL {url!r} is not of the form https://github.com/OWNER/REPO"
    return None


def binder_url(url: str, branch: str, binderhub: str = "https://mybinder.org") -> str:
    """The Binder launch URL for *url* at *branch*, opening JupyterLab (as the launch buttons do)."""
    m = re.match(r"^https://github\.com/([^/]+)/([^/]+)$", url)
    if not m:
        raise ValueError(f"url must be https://github.com/OWNER/REPO, got {url!r}")
    return f"{binderhub.rstrip('/')}/v2/gh/{m.group(1)}/{m.group(2)}/{branch}?urlpath=lab"


def badge_block(root: Path = ROOT) -> str:
    """The README's Binder badge, between its markers, for the repository of *root*'s ``_config.yml``."""
    url, _ = repository(root)
    hub = (config(root).get("launch_buttons") or {}).get("binderhub_url", "https://mybinder.org")
    link = binder_url(url, executed_branch(root), hub)
    return f"{BADGE_START}\n[![Launch the book in Binder]({hub.rstrip('/')}/badge_logo.svg)]({link})\n{BADGE_END}"


def readme_with_badge(text: str, block: str) -> str:
    """*text* (the README) with its badge block replaced by *block*."""
    pattern = re.compile(re.escape(BADGE_START) + r".*?" + re.escape(BADGE_END), re.S)
    if not pattern.search(text):
        raise ValueError("README.md has no binder-badge markers")
    return pattern.sub(lambda _: block, text)


def toc_pages(root: Path = ROOT) -> list[str]:
    """Every page in reading order: the root, then each file of _toc.yml."""
    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text())
    pages = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                pages.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return pages
