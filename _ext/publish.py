"""Publishing switches for the dpmask book (a Sphinx extension): the repository check and the student edition.

Two settings, both off for a plain local ``make book``:

``dpmask_publish`` (or the environment variable ``DPMASK_PUBLISH=1``)
    A build meant for publication.  The repository URL in ``_config.yml`` (``repository: url``)
    drives the launch buttons (Binder, Thebe), the repository button and the README's Binder
    badge; a publication build refuses to start while it is still the placeholder, because every
    launch button would then lead nowhere.

``dpmask_edition`` (or ``DPMASK_EDITION=students``)
    ``"students"`` serves no solution in any file:

    - the pages: every solution is removed from the doctrees after parsing (plain ``{solution}``
      blocks and everything between ``solution-start`` and ``solution-end``, the gated form, which
      may wrap executed code cells), so the HTML and the search index never see one.  The
      notebooks are parsed and executed exactly as in the full edition, so jupyter-cache reuses the
      full edition's outputs and no notebook runs twice.  sphinx-exercise's own ``hide_solutions``
      cannot do this: it drops the gated start node but leaves the end node, and the HTML writer
      then fails with "departing unknown node type: solution_end_node";
    - the downloads: the page sources the download menu links to (``_sources/**.ipynb``, ``.md``)
      are rewritten without their solutions when the build finishes (``_ext/solutions.py``);
    - the launch buttons (Binder, Thebe) open the branch ``dpmask_students_branch`` (default
      ``students``), to which the publishing workflow pushes the solution-free notebooks; the
      repository button, which would lead to the full sources, is left out.

This module imports only ``book_config`` and ``solutions`` from ``_ext/``; ``editions.py`` (the
command line) builds on the same base and never the other way round.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from sphinx.errors import ConfigError
from sphinx.transforms import SphinxTransform

from book_config import (  # noqa: F401  (PLACEHOLDER_URL and repository_problem are this module's public names too)
    DEFAULT_EXECUTED_BRANCH,
    DEFAULT_NOTEBOOKS_BRANCH,
    DEFAULT_STUDENTS_BRANCH,
    DEFAULT_STUDENTS_NOTEBOOKS_BRANCH,
    EDITIONS,
    PLACEHOLDER_URL,
    ROOT,
    badge_block,
    repository_problem,
)
from solutions import _strip_markdown, strip_solutions


def _truthy(value) -> bool:
    return str(value).strip().lower() in {"1", "true", "yes", "on"}


def _check_config(app, config):
    edition = config.dpmask_edition
    if edition not in EDITIONS:
        raise ConfigError(f"dpmask_edition must be one of {EDITIONS}, got {edition!r}")
    if edition == "students":
        _students_launch_buttons(config)
    else:
        _executed_launch_buttons(config)
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
    root = Path(getattr(app, "srcdir", None) or ROOT) if app is not None else ROOT
    readme = root / "README.md"
    if readme.exists() and badge_block(root) not in readme.read_text():
        raise ConfigError(
            "refusing to build the book for publication: README.md's Binder badge does not match "
            "_config.yml's `repository:`; run `python _ext/editions.py badge` (or `make badge`)"
        )


def _students_launch_buttons(config):
    """Point the launch buttons at the solution-free branch and drop the repository button."""
    branch = config.dpmask_students_branch
    if not branch or not isinstance(branch, str):
        raise ConfigError(f"dpmask_students_branch must name a git branch, got {branch!r}")
    options = dict(config.html_theme_options or {})
    options["repository_branch"] = branch
    options["use_repository_button"] = False
    config.html_theme_options = options
    thebe = dict(config.thebe_config or {}) if hasattr(config, "thebe_config") else {}
    thebe["repository_branch"] = branch
    if options.get("repository_url"):
        thebe["repository_url"] = options["repository_url"]
    config.thebe_config = thebe


def _executed_launch_buttons(config):
    """Full edition: the launch buttons open the executed notebooks (``dpmask_executed_branch``).

    There a chapter shows the book's numbers and figures before anything runs (issue 22); the
    publishing workflow pushes the branch (``_ext/executed.py``).
    """
    branch = getattr(config, "dpmask_executed_branch", DEFAULT_EXECUTED_BRANCH)
    if not branch or not isinstance(branch, str):
        raise ConfigError(f"dpmask_executed_branch must name a git branch, got {branch!r}")
    options = dict(config.html_theme_options or {})
    options["repository_branch"] = branch
    config.html_theme_options = options
    thebe = dict(config.thebe_config or {}) if hasattr(config, "thebe_config") else {}
    thebe["repository_branch"] = branch
    if options.get("repository_url"):
        thebe["repository_url"] = options["repository_url"]
    config.thebe_config = thebe


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


def solution_free_sources(outdir: Path) -> list[Path]:
    """Rewrite every page source under *outdir*/_sources without its solutions; return the files changed."""
    changed = []
    for path in sorted((Path(outdir) / "_sources").rglob("*")):
        if path.suffix == ".ipynb":
            nb = json.loads(path.read_text(encoding="utf-8"))
            new = json.dumps(strip_solutions(nb), indent=1, ensure_ascii=False) + "\n"
        elif path.suffix in (".md", ".txt"):
            new, inside = _strip_markdown(path.read_text(encoding="utf-8"), False)
            if inside:
                raise ValueError(f"{path}: a {{solution-start}} has no {{solution-end}}")
            new += "\n"
        else:
            continue
        if new != path.read_text(encoding="utf-8"):
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def _colab_on_the_notebooks_branch(app, pagename, templatename, context, doctree):
    """The Colab launch button opens the chapter's portable notebook (issue 29).

    sphinx-book-theme builds the Colab link on the branch of the other launch buttons (Binder
    opens the executed notebooks, which Colab would show as MyST source); the portable notebooks,
    which Colab shows as the book, are on ``dpmask_notebooks_branch`` (full edition) or
    ``dpmask_students_notebooks_branch`` (student edition), which the publishing workflow fills
    from ``_build/portable`` (``_ext/portable.py``).
    """
    students = app.config.dpmask_edition == "students"
    branch = app.config.dpmask_students_notebooks_branch if students else app.config.dpmask_notebooks_branch

    def walk(item):
        if isinstance(item, dict):
            if item.get("text") == "Colab" and isinstance(item.get("url"), str):
                item["url"] = re.sub(r"/blob/[^/]+/", f"/blob/{branch}/", item["url"], count=1)
            for value in item.values():
                walk(value)
        elif isinstance(item, list):
            for value in item:
                walk(value)

    walk(context.get("header_buttons"))


def _students_sources(app, exception):
    if exception is None and app.config.dpmask_edition == "students" and app.builder.format == "html":
        solution_free_sources(Path(app.outdir))


def setup(app):
    app.add_config_value("dpmask_publish", _truthy(os.environ.get("DPMASK_PUBLISH", "")), "env", [bool])
    app.add_config_value("dpmask_edition", os.environ.get("DPMASK_EDITION", "full") or "full", "env", [str])
    app.add_config_value("dpmask_students_branch", DEFAULT_STUDENTS_BRANCH, "env", [str])
    app.add_config_value("dpmask_executed_branch", DEFAULT_EXECUTED_BRANCH, "env", [str])
    app.add_config_value("dpmask_notebooks_branch", DEFAULT_NOTEBOOKS_BRANCH, "html", [str])
    app.add_config_value("dpmask_students_notebooks_branch", DEFAULT_STUDENTS_NOTEBOOKS_BRANCH, "html", [str])
    app.connect("config-inited", _check_config, priority=100)
    app.connect("html-page-context", _colab_on_the_notebooks_branch, priority=502)
    app.connect("build-finished", _students_sources)
    app.add_transform(RemoveSolutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
