"""Publishing switches for the dpmask book: the repository check and the student edition.

Two settings, both off for a plain local ``make book``:

``dpmask_publish`` (or the environment variable ``DPMASK_PUBLISH=1``)
    A build meant for publication.  The repository URL in ``_config.yml`` (``repository: url``)
    drives the launch buttons (Binder, Thebe), the repository button and the README's Binder
    badge; a publication build refuses to start while it is still the placeholder, because every
    launch button would then lead nowhere.

``dpmask_edition`` (or ``DPMASK_EDITION=students``)
    ``"students"`` removes every solution from the doctrees after parsing: plain ``{solution}``
    blocks and everything between ``solution-start`` and ``solution-end`` (the gated form, which
    may wrap executed code cells).  The notebooks are parsed and executed exactly as in the full
    edition (so jupyter-cache reuses the full edition's outputs); only the rendered pages lose
    the solutions.  sphinx-exercise's own ``hide_solutions`` cannot do this: it drops the
    gated start node but leaves the end node, and the HTML writer then fails with
    "departing unknown node type: solution_end_node".
"""

from __future__ import annotations

import os
import re

from sphinx.errors import ConfigError
from sphinx.transforms import SphinxTransform

# The value a fresh fork carries; ``python _ext/editions.py badge`` and the tests know it too.
PLACEHOLDER_URL = "https://github.com/your-account/dpmask"
_GITHUB = re.compile(r"^https://github\.com/(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)/(?P<repo>[A-Za-z0-9._-]+?)/?$")
EDITIONS = ("full", "students")


def _truthy(value) -> bool:
    return str(value).strip().lower() in {"1", "true", "yes", "on"}


def repository_problem(url: str | None) -> str | None:
    """Why *url* cannot be published (None when it can)."""
    if not url:
        return "no repository URL is set"
    if url.rstrip("/") == PLACEHOLDER_URL:
        return f"the repository URL is still the placeholder {PLACEHOLDER_URL}"
    if not _GITHUB.match(url):
        return f"the repository URL {url!r} is not of the form https://github.com/OWNER/REPO"
    return None


def _check_config(app, config):
    edition = config.dpmask_edition
    if edition not in EDITIONS:
        raise ConfigError(f"dpmask_edition must be one of {EDITIONS}, got {edition!r}")
    if not config.dpmask_publish:
        return
    options = config.html_theme_options or {}
    problem = repository_problem(options.get("repository_url"))
    if problem:
        raise ConfigError(
            f"refusing to build the book for publication: {problem}. Set your fork's URL and "
            "branch once, in _config.yml under `repository:` (url: https://github.com/OWNER/REPO, "
            "branch: main), then run `python _ext/editions.py badge` to update the README's Binder "
            "badge. A local `make book` needs no URL."
        )
    if not options.get("repository_branch"):
        raise ConfigError("refusing to build the book for publication: set `repository: branch:` in _config.yml")
    from editions import ROOT, badge_block

    readme = ROOT / "README.md"
    if readme.exists() and badge_block(ROOT) not in readme.read_text():
        raise ConfigError(
            "refusing to build the book for publication: README.md's Binder badge does not match "
            "_config.yml's `repository:`; run `python _ext/editions.py badge` (or `make badge`)"
        )


class RemoveSolutions(SphinxTransform):
    """Student edition: drop solutions, gated or not, with everything they enclose."""

    # sphinx-exercise checks the gated structure at priority 1 and merges each
    # solution-start ... solution-end run into one solution node at priority 10.
    default_priority = 11

    def apply(self):
        if self.config.dpmask_edition != "students":
            return
        from sphinx_exercise.nodes import solution_end_node, solution_node, solution_start_node

        # After the merge no start/end node should be left; remove any stray run anyway.
        for start in list(self.document.findall(solution_start_node)):
            parent = start.parent
            if parent is None:
                continue
            idx = parent.index(start)
            end = next(
                (i for i in range(idx, len(parent.children)) if isinstance(parent.children[i], solution_end_node)),
                None,
            )
            if end is None:
                continue
            for child in list(parent.children[idx : end + 1]):
                parent.remove(child)
        for node in list(self.document.findall(solution_node)):
            if node.parent is not None:
                node.parent.remove(node)


def setup(app):
    app.add_config_value("dpmask_publish", _truthy(os.environ.get("DPMASK_PUBLISH", "")), "env", [bool])
    app.add_config_value("dpmask_edition", os.environ.get("DPMASK_EDITION", "full") or "full", "env", [str])
    app.connect("config-inited", _check_config, priority=100)
    app.add_transform(RemoveSolutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

