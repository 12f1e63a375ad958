"""Publishing: one place for the repository URL, the GitHub Pages workflow, Binder, the student
edition and the PDF.

Everything here runs offline.  The student edition and the PDF reuse the HTML build of
tests/test_book.py (same command and output folder, so the second build finds nothing to do)
and its jupyter-cache; the PDF needs Debian's Chromium and skips with a message without it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("DPMASK_BOOK_OUT", ROOT))
HTML = OUT / "_build" / "html"
STUDENTS = OUT / "_build" / "students" / "html"
PDF = OUT / "_build" / "pdf" / "book.pdf"
BIN = Path(sys.executable).parent
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)

sys.path.insert(0, str(ROOT / "_ext"))
import editions  # noqa: E402
import publish  # noqa: E402


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("DPMASK_PUBLISH", "DPMASK_EDITION")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


def _config():
    return yaml.safe_load((ROOT / "_config.yml").read_text())


# --- one place for the repository ----------------------------------------------------------


def test_repository_is_set_in_config_and_launches_jupyterlab():
    cfg = _config()
    assert set(cfg["repository"]) >= {"url", "branch"}
    assert cfg["launch_buttons"]["notebook_interface"] == "jupyterlab"
    assert cfg["launch_buttons"]["binderhub_url"] == "https://mybinder.org"
    assert cfg["html"]["use_repository_button"] is True
    # Nothing else in the project spells a repository URL out: it all follows _config.yml.
    url = cfg["repository"]["url"]
    for path in ["Makefile", ".github/workflows/book.yml", "environment.yml", "chapters/course.md"]:
        assert url not in (ROOT / path).read_text(), path


def test_readme_binder_badge_follows_config():
    url, branch = editions.repository()
    owner_repo = url.removeprefix("https://github.com/")
    block = editions.badge_block()
    assert f"https://mybinder.org/v2/gh/{owner_repo}/{branch}?urlpath=lab" in block
    assert block in (ROOT / "README.md").read_text(), "run `python _ext/editions.py badge`"


def test_badge_follows_a_fork(tmp_path):
    cfg = _config()
    cfg["repository"] = {"url": "https://github.com/a-teacher/dpmask-fall", "branch": "term1"}
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(cfg))
    text = editions._readme_with_badge((ROOT / "README.md").read_text(), editions.badge_block(tmp_path))
    assert "https://mybinder.org/v2/gh/a-teacher/dpmask-fall/term1?urlpath=lab" in text
    assert "your-account" not in text
    with pytest.raises(ValueError, match="url must be"):
        editions.binder_url("https://gitlab.com/x/y", "main")


@pytest.mark.parametrize(
    "url, ok",
    [
        (publish.PLACEHOLDER_URL, False),
        (publish.PLACEHOLDER_URL + "/", False),
        ("", False),
        (None, False),
        ("https://example.org/dpmask", False),
        ("https://github.com/a-teacher/dpmask-fall", True),
    ],
)
def test_repository_problem(url, ok):
    assert (publish.repository_problem(url) is None) == ok


def test_publication_build_refuses_the_placeholder(tmp_path):
    """`make book-publish` (DPMASK_PUBLISH=1) stops at configuration time with a clear message."""
    if editions.repository()[0] != publish.PLACEHOLDER_URL:
        pytest.skip("this checkout has set its repository URL")
    res = subprocess.run(
        [str(BIN / "jupyter-book"), "build", str(ROOT), "--path-output", str(tmp_path), "-W", "-n"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(DPMASK_PUBLISH="1"),
        timeout=300,
    )
    log = res.stdout + res.stderr
    assert res.returncode != 0
    assert "refusing to build the book for publication" in log
    assert "placeholder" in log and "_config.yml" in log
    assert not (tmp_path / "_build" / "html" / "index.html").exists()


def test_makefile_has_the_publishing_targets():
    text = (ROOT / "Makefile").read_text()
    for target in ("book-publish", "book-students", "pdf", "badge"):
        assert re.search(rf"^{target}:", text, re.M), target
    assert "DPMASK_PUBLISH=1" in text
    readme = (ROOT / "README.md").read_text()
    for target in ("make pdf", "make book-students", "make book-publish"):
        assert target in readme


# --- the tools are declared ----------------------------------------------------------------


def test_test_extra_declares_the_publishing_tools():
    test_extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    names = {re.split(r"[<>=!~\[ ]", r, maxsplit=1)[0].lower() for r in test_extra}
    assert {"check-jsonschema", "jupyter-repo2docker", "pypdf", "beautifulsoup4"} <= names


# --- the GitHub Pages workflow -------------------------------------------------------------

WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"


def test_workflow_validates_against_the_github_schema():
    res = subprocess.run(
        [str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "ok" in res.stdout


def test_workflow_runs_the_readme_commands_in_debian_and_deploys():
    wf = yaml.safe_load(WORKFLOW.read_text())
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    assert build["container"]["image"].startswith("debian:")
    steps = build["steps"]
    runs = [s.get("run", "") for s in steps]
    uses = [s.get("uses", "") for s in steps]
    apt = next(r for r in runs if "apt-get install" in r)
    for pkg in ("python3", "python3-venv", "make", "git", "chromium"):
        assert re.search(rf"\s{re.escape(pkg)}(\s|$)", apt), pkg
    i_apt = runs.index(apt)
    i_checkout = next(i for i, u in enumerate(uses) if u.startswith("actions/checkout@"))
    i_test = runs.index("make test")
    i_book = runs.index("make book")
    i_upload = next(i for i, u in enumerate(uses) if u.startswith("actions/upload-pages-artifact@"))
    assert i_apt < i_checkout < i_test < i_book < i_upload
    assert steps[i_book]["env"]["DPMASK_PUBLISH"] == "1"
    assert steps[i_upload]["with"]["path"] == "_build/html"
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in deploy["steps"])
    assert deploy["environment"]["name"] == "github-pages"


# --- Binder ---------------------------------------------------------------------------------


def test_binder_dockerfile_installs_our_environment_after_copying_the_repository():
    """repo2docker prints the Dockerfile Binder would build (offline, no Docker)."""
    res = subprocess.run(
        [str(BIN / "jupyter-repo2docker"), "--no-build", "--debug", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    out = res.stdout + res.stderr
    lines = out.splitlines()
    assert "Building conda environment for python=3.11" in out
    copy_repo = [i for i, line in enumerate(lines) if re.match(r"COPY .*src/ \$\{REPO_DIR\}/", line)]
    env_update = [i for i, line in enumerate(lines) if "env update" in line and '--file "environment.yml"' in line]
    assert len(copy_repo) == 1 and len(env_update) == 1, "\n".join(lines[-80:])
    # The repository must be in place before `env update`, whose pip section installs `-e .`.
    assert copy_repo[0] < env_update[0]
    env_text = (ROOT / "environment.yml").read_text()
    assert re.search(r"^\s+- -e \.\s*$", env_text, re.M)
    assert yaml.safe_load(env_text)["dependencies"][0] == "python=3.11"
    # postBuild / start would run after the environment; today there are none.
    for hook in ("postBuild", "start"):
        if (ROOT / hook).exists() or (ROOT / "binder" / hook).exists():
            assert any(hook in line for line in lines[env_update[0] :]), hook


# --- the HTML build, shared with tests/test_book.py ------------------------------------------


@pytest.fixture(scope="session")
def full_html():
    cmd = [str(BIN / "jupyter-book"), "build", str(ROOT), "--path-output", str(OUT), "-W", "-n", "--keep-going"]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=3600)
    if res.returncode != 0:
        pytest.fail("jupyter-book build failed:\n" + "\n".join((res.stdout + res.stderr).splitlines()[-40:]))
    return HTML


@pytest.fixture(scope="session")
def students_html(full_html):
    res = subprocess.run(
        [sys.executable, str(ROOT / "_ext" / "editions.py"), "students"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(),
        timeout=1800,
    )
    log = res.stdout + res.stderr
    assert res.returncode == 0, log[-3000:]
    # Every notebook came from the full edition's cache: nothing ran twice.
    assert "Executing notebook" not in log
    return STUDENTS


def _article(path):
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text(), "html.parser").find("article")


def _shape(article):
    """What a reader sees: the text and the element structure (script payloads left out)."""
    for script in article.find_all("script"):
        script.string = ""
    text = re.sub(r"\s+", " ", article.get_text(" ")).strip()
    tags = [(t.name, tuple(t.get("class") or ()), t.get("id")) for t in article.find_all(True)]
    return text, tags


def test_student_edition_keeps_exercises_and_drops_every_solution(full_html, students_html):
    pages = editions.toc_pages()
    n_solutions = n_exercises = n_solution_outputs = 0
    for page in pages:
        full = _article(full_html / f"{page}.html")
        stud = _article(students_html / f"{page}.html")
        assert stud is not None, page
        exercises = full.select("div.exercise")
        solutions = full.select("div.solution")
        n_exercises += len(exercises)
        n_solutions += len(solutions)
        n_solution_outputs += sum(bool(s.select("div.cell_output")) for s in solutions)
        assert len(stud.select("div.exercise")) == len(exercises), page
        assert not stud.select("div.solution"), page
        assert "Solution to" not in stud.get_text(), page
        # No other difference: the full page with its solutions cut out is the student page.
        for s in solutions:
            s.decompose()
        assert _shape(full) == _shape(stud), page
    assert n_exercises >= 20 and n_solutions == n_exercises
    # Solutions that wrap code cells are executed in the full edition.
    assert n_solution_outputs >= 1


# --- the PDF --------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def book_pdf(full_html):
    if CHROMIUM is None:
        pytest.skip("make pdf needs Chromium: `apt-get update && apt-get install -y chromium`")
    res = subprocess.run(
        [sys.executable, str(ROOT / "_ext" / "editions.py"), "pdf"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(),
        timeout=1800,
    )
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    return PDF


def full_html_path(page):
    return HTML / f"{page}.html"


def test_pdf_holds_the_whole_book_typeset(book_pdf):
    from pypdf import PdfReader

    reader = PdfReader(str(book_pdf))
    pages = editions.toc_pages()
    outline = [item.title for item in reader.outline]
    assert len(outline) == len(pages)
    assert len(reader.pages) > 3 * len(pages)
    page_texts = [p.extract_text() or "" for p in reader.pages]
    text = "\n".join(page_texts)
    flat = re.sub(r"\s+", " ", text)
    # Reading order: one bookmark per page of the table of contents, in its order, each
    # starting where the previous one ends.
    starts = [reader.get_destination_page_number(item) for item in reader.outline]
    assert starts[0] == 0 and starts == sorted(set(starts))
    assert outline[1].startswith("1. Introduction") and outline[-1] == "References"

    def chapter_text(prefix):
        i = next(k for k, title in enumerate(outline) if title.startswith(prefix))
        end = starts[i + 1] if i + 1 < len(starts) else len(page_texts)
        return re.sub(r"\s+", " ", " ".join(page_texts[starts[i] : end]))

    # Numbered statements, each printed in its own chapter.
    assert "Theorem 3.2" in chapter_text("3.") and "Theorem 3.4" in chapter_text("3.")
    assert "Lemma 5.5" in chapter_text("5.") and "Lemma 5.4" in chapter_text("5.")
    assert "Lemma A.1" in chapter_text("Technical lemmas")
    # Table 1, as printed in the paper (chapter 4), and exercises with their solutions.
    for number in ("2541.3", "88.5", "Exercise 7.2", "Solution to"):
        assert number in flat, number
    # The explorers print with their saved state (panel and plot), not as empty space.
    assert "gap Thm 3.4 / lower bound" in chapter_text("7.")
    assert "B suﬃcient σ (Thm 3.4)" in chapter_text("3.") or "B sufficient σ (Thm 3.4)" in chapter_text("3.")
    # MathJax typeset everything: no raw TeX in the text layer, except inside code blocks, which
    # print verbatim (a Python string may hold TeX for a plot label).
    code = "".join(
        re.sub(r"\s+", "", pre.get_text())
        for page in pages
        for pre in _article(full_html_path(page)).find_all("pre")
    )
    raw_tex = re.compile(r"\\varepsilon|\$\$|\\frac|\\begin\{|\\\(|\$\\")
    stray = [
        line
        for line in text.splitlines()
        if raw_tex.search(line) and re.sub(r"\s+", "", line) not in code
    ]
    assert not stray, stray[:10]
    # Figures came through as images.
    n_images = sum(len(p.images) for p in reader.pages)
    assert n_images >= 10


# --- widgets that keep up (caches and the worker thread must not change a number) ------------


def _panel(box):
    html = box.children[1].value
    return {k: (float("nan") if "mdash" in v else float(v)) for k, v in re.findall(r"data-key='(\w+)'[^>]*>([^<]*)<", html)}


def _same(shown, truth):
    for key, value in shown.items():
        want = truth[key]
        if want != want:  # NaN shows as an em dash
            assert value != value, key
        else:
            assert float(f"{want:.5g}") == pytest.approx(value, rel=1e-12), key


@pytest.mark.parametrize(
    "name, moves",
    [
        ("noise", [(0, 0.02), (2, 5000.0), (3, 7), (0, 0.1)]),
        ("block", [(0, 0.5), (3, 100.0), (2, 3), (0, 0.1)]),
        ("inference", [(0, 0.02), (2, 1e4), (1, 1e-6), (0, 0.1)]),
        ("tightness", [(0, 0.5), (3, 7), (2, 1000.0), (3, 5), (0, 0.1)]),
    ],
)
def test_explorer_panels_show_their_numbers_after_every_move(name, moves):
    """Kept figures, caches and (tightness) the worker thread show what *_numbers computes."""
    pytest.importorskip("ipywidgets")
    from dpmask import widgets

    box = getattr(widgets, f"{name}_explorer")()
    sliders = box.children[0].children
    numbers = getattr(widgets, f"{name}_numbers")
    pending = getattr(box, "_dpmask_pending", lambda: None)
    start = [s.value for s in sliders]
    first_picture, first_panel = bytes(box.children[2].value), box.children[1].value
    pictures = {}
    for index, value in moves:
        sliders[index].value = value
        if pending() is not None:
            pending().result(timeout=120)
        v = [s.value for s in sliders]
        if name == "noise":
            truth = numbers(v[0], v[1], int(round(v[2])), int(v[3]))
        elif name == "block":
            truth = numbers(v[0], v[1], 10**6, int(v[2]), int(round(v[3])))
        elif name == "inference":
            truth = numbers(v[0], v[1], int(round(v[2])))
        else:
            truth = numbers(v[0], v[1], int(round(v[2])), int(v[3]))
        _same(_panel(box), truth)
        png = bytes(box.children[2].value)
        assert png.startswith(b"\x89PNG")
        key = tuple(v)
        if key in pictures:  # a setting seen before comes back identical (from the cache)
            assert pictures[key] == png
        pictures[key] = png
    for slider, value in reversed(list(zip(sliders, start))):
        slider.value = value
    if pending() is not None:
        pending().result(timeout=120)
    assert box.children[1].value == first_panel
    assert bytes(box.children[2].value) == first_picture


def test_tightness_answers_at_once_and_keeps_only_the_last_setting():
    pytest.importorskip("ipywidgets")
    from dpmask import widgets

    box = widgets.tightness_explorer(eps=0.1, delta=0.01, n=100, p=5)
    eps_s = box.children[0].children[0]
    for value in (0.2, 0.3, 0.4):  # quick moves: the panel answers before the search ends
        eps_s.value = value
        shown = _panel(box)
        assert shown["b_sufficient"] == pytest.approx(float(f"{widgets.tightness_numbers(value, 0.01, 100, 5)['b_sufficient']:.5g}"))
    box._dpmask_pending().result(timeout=120)
    _same(_panel(box), widgets.tightness_numbers(eps_s.value, 0.01, 100, 5))
    assert "computing" not in box.children[1].value


def test_publication_check_passes_for_a_fork_whose_badge_follows(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from sphinx.errors import ConfigError

    fork = "https://github.com/a-teacher/dpmask-fall"
    cfg = _config()
    cfg["repository"] = {"url": fork, "branch": "main"}
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(cfg))
    (tmp_path / "README.md").write_text((ROOT / "README.md").read_text())
    monkeypatch.setattr(editions, "ROOT", tmp_path)
    config = SimpleNamespace(
        dpmask_publish=True,
        dpmask_edition="full",
        html_theme_options={"repository_url": fork, "repository_branch": "main"},
    )
    with pytest.raises(ConfigError, match="Binder badge does not match"):
        publish._check_config(None, config)
    readme = tmp_path / "README.md"
    readme.write_text(editions._readme_with_badge(readme.read_text(), editions.badge_block(tmp_path)))
    publish._check_config(None, config)  # the fork may publish
    config.dpmask_edition = "teachers"
    with pytest.raises(ConfigError, match="dpmask_edition"):
        publish._check_config(None, config)
