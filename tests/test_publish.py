"""Publishing: one place for the repository URL, the GitHub Pages workflow, Binder, the student
edition and the PDF.

Everything here runs offline.  The student edition and the PDF reuse the HTML build of
tests/test_book.py (same command and output folder, so the second build finds nothing to do)
and its jupyter-cache; the PDF needs Debian's Chromium and skips with a message without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import unicodedata
from pathlib import Path

import pytest
import yaml

from _ext_import import ext_module
from conftest import _publish_env

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("DPMASK_BOOK_OUT", ROOT))
HTML = OUT / "_build" / "html"
STUDENTS = OUT / "_build" / "students" / "html"
STUDENT_NOTEBOOKS = OUT / "_build" / "students" / "notebooks"
PDF_DIR = OUT / "_build" / "pdf"
BIN = Path(sys.executable).parent
CHROMIUM = ext_module("localhost").CHROMIUM

sys.path.insert(0, str(ROOT / "_ext"))
import editions  # noqa: E402
import publish  # noqa: E402


def _env(**extra):
    """The environment of a build (tests/conftest.py's, which builds the editions), plus *extra*."""
    return {**_publish_env(), **extra}


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
    url, _ = editions.repository()
    owner_repo = url.removeprefix("https://github.com/")
    block = editions.badge_block()
    # the badge opens the executed notebooks (numbers and figures before any run), as the buttons do
    branch = ext_module("book_config").executed_branch()
    assert f"https://mybinder.org/v2/gh/{owner_repo}/{branch}?urlpath=lab" in block
    assert block in (ROOT / "README.md").read_text(), "run `python _ext/editions.py badge`"


def test_badge_follows_a_fork(tmp_path):
    cfg = _config()
    cfg["repository"] = {"url": "https://github.com/a-teacher/dpmask-fall", "branch": "term1"}
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(cfg))
    text = editions._readme_with_badge((ROOT / "README.md").read_text(), editions.badge_block(tmp_path))
    assert "https://mybinder.org/v2/gh/a-teacher/dpmask-fall/executed?urlpath=lab" in text
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
    i_editions = runs.index("make book-students pdf")
    assert i_apt < i_checkout < i_test < i_book < i_editions < i_upload
    assert steps[i_book]["env"]["DPMASK_PUBLISH"] == "1"
    assert steps[i_upload]["with"]["path"] == SITE
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in deploy["steps"])
    assert deploy["environment"]["name"] == "github-pages"
    # the full edition is an artifact of the run, uploaded after the site was assembled
    i_full = next(i for i, st in enumerate(steps) if st.get("uses", "").startswith("actions/upload-artifact@")
                  and st["with"]["name"] == "full-edition")
    assert i_full > runs.index(_site_step(wf))
    assert steps[i_full]["with"]["name"] == "full-edition" and steps[i_full]["with"]["path"] == FULL_EDITION


# --- what the site serves: the student edition alone -------------------------------------------

SITE, FULL_EDITION = "_build/site", "_build/full-edition"


def _site_step(wf):
    """The build job's shell step that assembles the Pages folder."""
    runs = [s.get("run", "") for s in wf["jobs"]["build"]["steps"]]
    return next(r for r in runs if SITE in r)


def test_the_site_is_the_student_edition_alone_and_the_full_edition_an_artifact(tmp_path):
    """Run the workflow's own site step on a stand-in _build and read what Pages would serve.

    The Pages artifact is the student edition with its PDF and the API reference; not one file of
    the full edition (its pages, book.pdf) is in it, at any depth.  The full edition goes whole to
    the run's artifact.  Planted: the layout before issue 22 (the full edition at the root,
    the student edition under students/) fails.
    """
    wf = yaml.safe_load(WORKFLOW.read_text())
    script = _site_step(wf)

    def stand_in(root):
        for rel, text in {
            "_build/html/index.html": "FULL edition",
            "_build/html/chapters/05_proofs.html": "FULL Solution to Exercise 5.1",
            "_build/html/_sources/chapters/05_proofs.ipynb": "FULL {solution-start}",
            "_build/students/html/index.html": "STUDENT edition",
            "_build/students/html/chapters/05_proofs.html": "STUDENT Exercise 5.1",
            "_build/students/notebooks/chapters/05_proofs.ipynb": "STUDENT notebook",
            "_build/pdf/book.pdf": "FULL pdf",
            "_build/pdf/book-students.pdf": "STUDENT pdf",
            "_build/pdf/api.pdf": "API pdf",
        }.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)

    def served(root, script):
        subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=root, check=True, timeout=60)
        site = root / SITE
        return {p.relative_to(site).as_posix(): p.read_text() for p in site.rglob("*") if p.is_file()}

    stand_in(tmp_path / "now")
    files = served(tmp_path / "now", script)
    assert files == {
        "index.html": "STUDENT edition",
        "chapters/05_proofs.html": "STUDENT Exercise 5.1",
        "book-students.pdf": "STUDENT pdf",
        "api.pdf": "API pdf",
    }, files
    full = tmp_path / "now" / FULL_EDITION
    assert {p.relative_to(full).as_posix() for p in full.rglob("*") if p.is_file()} == {
        "index.html", "chapters/05_proofs.html", "_sources/chapters/05_proofs.ipynb", "book.pdf", "api.pdf"}
    # the check can fail: the old layout serves the full edition at the root, one segment above students/
    old = (f"cp -r _build/html {SITE}\ncp _build/pdf/book.pdf _build/pdf/api.pdf {SITE}/\n"
           f"cp -r _build/students/html {SITE}/students\ncp _build/pdf/book-students.pdf {SITE}/students/\n")
    stand_in(tmp_path / "old")
    leaked = {k for k, v in served(tmp_path / "old", old).items() if v.startswith("FULL")}
    assert leaked == {"index.html", "chapters/05_proofs.html", "_sources/chapters/05_proofs.ipynb", "book.pdf"}


def test_workflow_pushes_the_solution_free_tree_to_the_students_branch():
    wf = yaml.safe_load(WORKFLOW.read_text())
    job = wf["jobs"]["students-branch"]
    assert job["needs"] == "build"  # only after the tests and both editions built
    assert job["permissions"] == {"contents": "write"} and wf["permissions"] == {"contents": "read"}
    assert job["container"]["image"].startswith("debian:")
    runs = "\n".join(st.get("run", "") for st in job["steps"])
    assert re.search(r"apt-get install.*\spython3-yaml\s.*git", runs)
    # the commands, in this order: write the notebooks, commit them, push that commit to the branch
    order = [runs.index(c) for c in ("editions.py student-notebooks", "editions.py students-commit",
                                     "editions.py students-branch", "git push --force origin")]
    assert order == sorted(order)
    assert '"$commit:refs/heads/$branch"' in runs
    # the branch is named once, in _config.yml, and the student edition's buttons use the same name
    assert editions.students_branch() == _config()["sphinx"]["config"]["dpmask_students_branch"] == "students"
    assert "students" not in re.sub(r"_build/students|students-\w+|student-notebooks|students-branch|students/", "", runs)
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_EMAIL"):
        assert job["env"][var]


def test_students_commit_holds_the_tree_without_solutions_and_no_history(tmp_path):
    """The commit the workflow pushes: HEAD's tree, chapters/*.ipynb without solutions, no parent."""
    from solutions import write_solution_free_tree

    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(repo)], check=True, timeout=300)
    notebooks = tmp_path / "notebooks"
    written = write_solution_free_tree(repo, notebooks)
    assert len(written) == len(list((repo / "chapters").glob("*.ipynb")))
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    res = subprocess.run([sys.executable, str(repo / "_ext" / "editions.py"), "students-commit", "--notebooks", str(notebooks)],
                         cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    commit = res.stdout.strip()

    def git(*args):
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout

    assert git("rev-list", "--parents", "-n", "1", commit).split() == [commit]  # no parent, no history
    changed = git("diff", "--name-only", "HEAD", commit).split()
    assert changed and all(re.fullmatch(r"chapters/[^/]+\.ipynb", f) for f in changed)
    n_exercises = 0
    for f in changed:
        full, student = git("show", f"HEAD:{f}"), git("show", f"{commit}:{f}")
        assert "{solution" in full and "{solution" not in student, f
        assert student.count("{exercise}") == full.count("{exercise}") > 0, f
        n_exercises += student.count("{exercise}")
    assert n_exercises >= 20
    # the working tree, the index and the branches of the clone are untouched
    assert git("status", "--porcelain") == ""
    assert commit not in git("for-each-ref", "--format=%(objectname)")



# --- the executed notebooks and JupyterLab (issue 22) ----------------------------------------


def test_workflow_pushes_the_executed_notebooks_to_the_branch_the_launch_buttons_open():
    wf = yaml.safe_load(WORKFLOW.read_text())
    build = "\n".join(st.get("run", "") for st in wf["jobs"]["build"]["steps"])
    uploads = [st for st in wf["jobs"]["build"]["steps"] if st.get("uses", "").startswith("actions/upload-artifact")]
    # written in the build job, right after `make book` filled the jupyter-cache they come from
    assert build.index("make book\n") < build.index("editions.py executed-notebooks --out _build/executed")
    # beside the full edition's artifact (the site is the student edition alone)
    assert sorted(u["with"]["name"] for u in uploads) == ["executed-notebooks", "full-edition", "portable-notebooks"]
    assert next(u for u in uploads if u["with"]["name"] == "executed-notebooks")["with"]["path"] == "_build/executed"
    job = wf["jobs"]["executed-branch"]
    assert job["needs"] == "build" and job["permissions"] == {"contents": "write"}
    downloads = [st for st in job["steps"] if st.get("uses", "").startswith("actions/download-artifact")]
    assert downloads and downloads[0]["with"] == {"name": "executed-notebooks", "path": "_build/executed"}
    runs = "\n".join(st.get("run", "") for st in job["steps"])
    order = [runs.index(c) for c in ("editions.py executed-commit --notebooks _build/executed",
                                     "editions.py executed-branch", "git push --force origin")]
    assert order == sorted(order) and '"$commit:refs/heads/$branch"' in runs
    book_config = ext_module("book_config")
    assert book_config.executed_branch() == _config()["sphinx"]["config"]["dpmask_executed_branch"] == "executed"
    assert book_config.executed_branch() not in (editions.students_branch(), editions.repository()[1])


def test_workflow_pushes_each_editions_portable_notebooks_to_the_branch_colab_opens():
    """Issue 29: `make book` writes _build/portable; the workflow keeps it as an artifact and pushes
    each edition, as a parentless commit, to the branch its Colab button opens."""
    wf = yaml.safe_load(WORKFLOW.read_text())
    uploads = [st for st in wf["jobs"]["build"]["steps"] if st.get("uses", "").startswith("actions/upload-artifact")]
    assert next(u for u in uploads if u["with"]["name"] == "portable-notebooks")["with"]["path"] == "_build/portable"
    job = wf["jobs"]["notebooks-branches"]
    assert job["needs"] == "build" and job["permissions"] == {"contents": "write"}
    downloads = [st for st in job["steps"] if st.get("uses", "").startswith("actions/download-artifact")]
    assert downloads and downloads[0]["with"] == {"name": "portable-notebooks", "path": "_build/portable"}
    runs = "\n".join(st.get("run", "") for st in job["steps"])
    assert "for edition in full students" in runs
    order = [runs.index(c) for c in ('editions.py portable-commit --edition "$edition" --notebooks _build/portable',
                                     'editions.py portable-branch --edition "$edition"', "git push --force origin")]
    assert order == sorted(order) and '"$commit:refs/heads/$branch"' in runs
    cfg = _config()["sphinx"]["config"]
    assert editions.portable_branch("full") == cfg["dpmask_notebooks_branch"] == "notebooks"
    assert editions.portable_branch("students") == cfg["dpmask_students_notebooks_branch"] == "notebooks-students"
    assert _config()["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert "$(BIN)/python _ext/portable.py" in (ROOT / "Makefile").read_text().split("\nbook:", 1)[1].split("\n\n", 1)[0]


def _glue_output(key, plain):
    return {"output_type": "display_data", "metadata": {"scrapbook": {"name": key, "mime_prefix": "application/papermill.record/"}},
            "data": {"application/papermill.record/text/plain": plain}}


def test_executed_notebook_stores_each_expression_as_the_kernel_would_return_it():
    executed = ext_module("executed")
    nb = {"cells": [
        {"cell_type": "code", "source": "", "metadata": {}, "outputs": [_glue_output("p", "0.123456"), _glue_output("n", "42")]},
        {"cell_type": "markdown", "metadata": {"user_expressions": [{"expression": "stale"}]},
         "source": ['A {eval}`f"{glued.p:.3f}"` and {eval}`f"{glued.n:d}"`,\n', 'twice {eval}`f"{glued.p:.1%}"`.']},
        {"cell_type": "markdown", "metadata": {"user_expressions": []}, "source": "no number"},
    ]}
    out = executed.with_user_expressions(nb)
    stored = out["cells"][1]["metadata"]["user_expressions"]
    # what IPython returns for the f-string: the repr of Python's own formatting of the value
    assert [u["expression"] for u in stored] == ['f"{glued.p:.3f}"', 'f"{glued.n:d}"', 'f"{glued.p:.1%}"']
    assert [u["result"]["data"]["text/plain"] for u in stored] == [repr(f"{0.123456:.3f}"), repr(f"{42:d}"), repr(f"{0.123456:.1%}")]
    assert all(u["result"]["status"] == "ok" for u in stored)
    assert "user_expressions" not in out["cells"][2]["metadata"]
    assert nb["cells"][1]["metadata"]["user_expressions"] == [{"expression": "stale"}]   # the input is left alone
    nb["cells"][1]["source"] = 'A {eval}`f"{glued.missing}"`'
    with pytest.raises(KeyError, match="missing"):
        executed.with_user_expressions(nb)


def test_a_solution_cut_from_an_executed_cell_takes_its_evaluated_numbers_along():
    """The students branch is written from the executed notebooks: a markdown cell that keeps its
    exercise and loses its solution keeps only the evaluated expressions its text still shows."""
    from solutions import strip_solutions

    shown, answer = 'f"{glued.eps:.1f}"', 'f"{glued.answer:.4f}"'
    cell = {"cell_type": "markdown", "source": (
        f"Take $\\varepsilon =$ {{eval}}`{shown}`.\n\n```{{solution-start}} ex-1\n:class: dropdown\n```\n"
        f"It is {{eval}}`{answer}`.\n\n```{{solution-end}}\n```\n"),
        "metadata": {"user_expressions": [{"expression": shown, "result": {"status": "ok", "data": {"text/plain": "'0.1'"}}},
                                          {"expression": answer, "result": {"status": "ok", "data": {"text/plain": "'0.4142'"}}}]}}
    out = strip_solutions({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    (kept,) = out["cells"]
    assert "solution" not in kept["source"] and shown in kept["source"]
    assert [e["expression"] for e in kept["metadata"]["user_expressions"]] == [shown]
    assert "0.4142" not in json.dumps(out)


def test_students_branch_is_written_from_the_executed_notebooks():
    wf = yaml.safe_load(WORKFLOW.read_text())
    job = wf["jobs"]["students-branch"]
    downloads = [st for st in job["steps"] if st.get("uses", "").startswith("actions/download-artifact")]
    assert downloads and downloads[0]["with"] == {"name": "executed-notebooks", "path": "_build/executed"}
    runs = "\n".join(st.get("run", "") for st in job["steps"])
    assert "editions.py student-notebooks --from _build/executed --out _build/students/notebooks" in runs


def test_student_notebooks_from_the_executed_ones_show_the_numbers_and_no_solution(built_book, tmp_path):
    """What the students branch holds, from this build: every chapter with its outputs and evaluated
    expressions, and no solution, nor a solution's number, anywhere in the file."""
    from solutions import has_solution, strip_solutions

    executed = ext_module("executed")
    executed.write_executed_notebooks(tmp_path / "executed", OUT / "_build" / ".jupyter_cache")
    written = editions.write_student_notebooks(tmp_path / "students", tmp_path / "executed")
    assert len(written) == len(list((ROOT / "chapters").glob("*.ipynb")))
    for path in written:
        text = path.read_text()
        nb = json.loads(text)
        assert not has_solution(text), path.name
        assert nb == strip_solutions(nb), path.name   # nothing left to strip
        outputs = sum(len(c.get("outputs", [])) for c in nb["cells"] if c["cell_type"] == "code")
        assert outputs > 0, f"{path.name}: no output kept"
        for cell in nb["cells"]:
            if cell["cell_type"] == "markdown" and "{eval}" in "".join(cell["source"]):
                stored = cell["metadata"].get("user_expressions", [])
                assert stored and all(e["result"]["status"] == "ok" for e in stored), path.name
                assert all(e["expression"] in "".join(cell["source"]) for e in stored), path.name


def test_jupyterlab_reports_every_extension_compatible_and_ours_in_place():
    """`jupyter labextension list`: no incompatible extension, dpmask-live enabled, myst's executor off."""
    jupyter = BIN / "jupyter"
    if not jupyter.exists():
        pytest.skip("JupyterLab is not installed in this environment")
    res = subprocess.run([str(jupyter), "labextension", "list"], capture_output=True, text=True, timeout=180,
                         env={**os.environ, "NO_COLOR": "1"})
    out = re.sub(r"\x1b\[[0-9;]*m", "", res.stdout + res.stderr)
    assert res.returncode == 0, out[-2000:]
    bad = [line for line in out.splitlines() if re.search(r"incompatible|not compatible|conflict|\sX\s", line, re.I)]
    assert not bad, "\n".join(bad) + "\n\n" + out[-2000:]
    assert re.search(r"^\s*dpmask-live v\S+ enabled\s+OK", out, re.M), out[-2000:]
    assert re.search(r"^\s*jupyterlab-myst v\S+ enabled\s+OK", out, re.M), out[-2000:]
    assert re.search(r"Disabled extensions:\s*\n\s*jupyterlab-myst:executor", out), out[-2000:]
    # the pair is pinned, in both environment files
    pins = {"jupyterlab", "jupyterlab-myst"}
    for text in ((ROOT / "pyproject.toml").read_text(), (ROOT / "environment.yml").read_text()):
        found = dict(re.findall(r"^[\s\"-]*(jupyterlab(?:-myst)?)==([\d.]+)", text, re.M))
        assert set(found) == pins, found


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
    # postBuild (JupyterLab's side of the live book: _ext/jupyterlab/install.py) and start run
    # after the environment.
    for hook in ("postBuild", "start"):
        if (ROOT / hook).exists() or (ROOT / "binder" / hook).exists():
            assert any(hook in line for line in lines[env_update[0] :]), hook


# --- the HTML builds (full_html, students_html) are fixtures of tests/conftest.py ----------------


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


# --- the student edition gives nothing away ---------------------------------------------------
#
# Every file under _build/students (what a teacher copies and hands out) is searched for every
# solution's sentences: the pages, the page sources the download menu links to (_sources/**.ipynb,
# .md), the search index, the notebooks its launch buttons open (the students branch:
# _build/students/notebooks), anything else a build leaves in that folder, and the student PDF.
# A solution's sentences are taken, independently of _ext/solutions.py, from the full notebooks
# (the markdown and code between {solution-start} and {solution-end}) and from the full edition's
# pages (div.solution, with the outputs of its code).  Each is cut into runs of plain words (math,
# roles and code split them) and into windows of SHINGLE words; a window that also occurs outside
# the solutions of the full book is no secret and is left out.

SHINGLE = 6
_MARKUP = re.compile(r"\$\$.*?\$\$|\$[^$\n]*\$|\\\(.*?\\\)|\\\[.*?\\\]|\{[\w:-]+\}`[^`]*`|`[^`]*`", re.S)


def _words(text):
    text = unicodedata.normalize("NFKC", text).lower()
    return re.findall(r"[a-z0-9]+", text)


def _shingles(text, markup=True):
    """Every window of SHINGLE consecutive plain words of *text* (math, roles and code break a run)."""
    out = set()
    runs = _MARKUP.split(text) if markup else [text]
    for run in runs:
        for piece in re.split(r"[.;:!?]\s|\n\s*\n", run):
            w = _words(piece)
            out |= {" ".join(w[i : i + SHINGLE]) for i in range(len(w) - SHINGLE + 1)}
    return out


def _all_shingles(text):
    """The windows of *text* read three ways: with its math and code as breaks, as raw text, and with
    them deleted (as a PDF's text layer reads, where typeset formulas fall out of the sentence)."""
    return _shingles(text) | _shingles(text, markup=False) | _shingles(_MARKUP.sub(" ", text), markup=False)


def _wordy(window):
    """A window of prose, not of symbols: at least four words of three letters or more."""
    return sum(len(w) >= 3 and w.isalpha() for w in window.split()) >= 4


def _notebook_solutions(path):
    """(solution text, other text) of one notebook: the gated solutions and plain {solution} blocks."""
    nb = json.loads(path.read_text())
    solution, other, inside = [], [], False
    for cell in nb["cells"]:
        src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if cell["cell_type"] != "markdown":
            (solution if inside else other).append(src)
            continue
        for line in src.split("\n"):
            if "{solution-start}" in line:
                inside = True
                continue
            if "{solution-end}" in line:
                inside = False
                continue
            (solution if inside else other).append(line)
    text_other = "\n".join(other)
    plain = re.findall(r"^(`{3,}|:{3,})\{solution\}.*?^\1\s*$", text_other, re.M | re.S)
    assert not plain, f"{path.name}: plain {{solution}} blocks; extend this reader"
    assert not inside, f"{path.name}: a solution-start without its end"
    return "\n".join(solution), text_other


def solution_probes(full_html):
    """Word windows that occur in the book's solutions and nowhere else in the full book."""
    from bs4 import BeautifulSoup

    secret, public = set(), set()
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        sol, other = _notebook_solutions(path)
        secret |= _all_shingles(sol)
        public |= _all_shingles(other)
    for page in editions.toc_pages():
        soup = BeautifulSoup((full_html / f"{page}.html").read_text(), "html.parser")
        article = soup.find("article")
        for div in article.select("div.solution"):
            secret |= _all_shingles(div.get_text(" "))
            div.decompose()
        public |= _all_shingles(article.get_text(" "))
    for md in [ROOT / "index.md", *(ROOT / "chapters").glob("*.md")]:
        public |= _all_shingles(md.read_text())
    return {w for w in secret - public if _wordy(w)}


def _file_text(path):
    """The text a reader (or a search) could get out of one served file."""
    suffix = path.suffix.lower()
    if suffix in {".png", ".jpg", ".jpeg", ".gif", ".ico", ".woff", ".woff2", ".ttf", ".eot", ".otf", ".svg", ".map"}:
        return ""
    if suffix == ".pdf":
        from pypdf import PdfReader

        return "\n".join(p.extract_text() or "" for p in PdfReader(str(path)).pages)
    raw = path.read_text(encoding="utf-8", errors="replace")
    if suffix in {".html", ".htm"}:
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(raw, "html.parser")
        scripts = " ".join(s.get_text(" ") for s in soup.find_all(["script", "style"]))
        return soup.get_text(" ") + "\n" + scripts
    if suffix == ".ipynb":
        nb = json.loads(raw)
        parts = []
        for cell in nb.get("cells", []):
            parts.append(cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"]))
            for out in cell.get("outputs", []):
                parts.append(json.dumps(out))
        return "\n\n".join(parts)
    return raw


def solution_leaks(files, probes, texts=None):
    """{file: [windows of a solution found in it]}; *texts* may hold files' texts already read."""
    leaks = {}
    for path in files:
        text = (texts or {}).get(path) or _file_text(path)
        if not text:
            continue
        found = _all_shingles(text) & probes
        if found:
            leaks[str(path)] = sorted(found)[:5]
    return leaks


def _student_files(students_dir, student_pdf=None):
    """Every file under *students_dir* (``_build/students``, what a teacher copies and hands out:
    the HTML, the notebooks and anything else a build left there, hidden folders included), and
    the student PDF."""
    files = [p for p in sorted(Path(students_dir).rglob("*")) if p.is_file()]
    if student_pdf is not None:
        files.append(student_pdf)
    return files


def _search_terms(html_dir):
    text = (html_dir / "searchindex.js").read_text()
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    return set(index["terms"]) | set(index.get("titleterms", {}))


def test_student_edition_gives_no_solution_away(full_html, students_html, pdfs, pdf_texts, tmp_path):
    probes = solution_probes(full_html)
    assert len(probes) > 1500, len(probes)  # every solution contributes its sentences
    files = _student_files(students_html.parent, pdfs["book-students.pdf"])
    kinds = {p.suffix for p in files}
    assert {".html", ".ipynb", ".md", ".js", ".pdf"} <= kinds, kinds
    assert any("_sources" in p.parts for p in files) and any(p.name == "searchindex.js" for p in files)
    assert any(STUDENT_NOTEBOOKS in p.parents for p in files)
    texts = {pdfs[name]: "\n".join(pages) for name, pages in pdf_texts.items()}
    leaks = solution_leaks(files, probes, texts)
    assert not leaks, leaks
    # The crawl can fail: the full edition's sources, its PDF and a planted copy of a student page.
    assert solution_leaks([ROOT / "chapters" / "05_proofs.ipynb", pdfs["book.pdf"]], probes, texts).keys() == {
        str(ROOT / "chapters" / "05_proofs.ipynb"), str(pdfs["book.pdf"])}
    sol, _ = _notebook_solutions(ROOT / "chapters" / "01_introduction.ipynb")
    sentence = next(line for line in sol.splitlines() if len(_words(line)) > 10 and "$" not in line)
    planted = tmp_path / "chapters" / "01_introduction.html"
    planted.parent.mkdir()
    planted.write_text((students_html / "chapters" / "01_introduction.html").read_text().replace("</article>", f"<p>{sentence}</p></article>"))
    assert solution_leaks([planted], probes)
    # ... and the folder as the student build left it before issue 22: myst-nb's jupyter_execute/
    # beside the HTML, holding the executed notebooks with their solutions.
    folder = tmp_path / "students"
    shutil.copytree(STUDENT_NOTEBOOKS, folder / "notebooks")
    executed = full_html.parent / "jupyter_execute" / "chapters" / "05_proofs.ipynb"
    (folder / "jupyter_execute" / "chapters").mkdir(parents=True)
    shutil.copy(executed, folder / "jupyter_execute" / "chapters" / executed.name)
    assert solution_leaks(_student_files(folder), probes).keys() == {str(folder / "jupyter_execute" / "chapters" / executed.name)}


def test_student_search_index_knows_no_word_of_a_solution_only(full_html, students_html):
    """The search index holds stemmed words, not sentences: no word found only in solutions may be in it."""
    from bs4 import BeautifulSoup
    from sphinx.search.en import SearchEnglish

    stemmer = SearchEnglish({})
    solution_words, other_words = set(), set()
    for page in editions.toc_pages():
        article = BeautifulSoup((full_html / f"{page}.html").read_text(), "html.parser").find("article")
        for div in article.select("div.solution"):
            solution_words |= set(re.findall(r"[^\W\d_]{3,}", div.get_text(" ").lower()))
            div.decompose()
        other_words |= set(re.findall(r"[^\W\d_]{3,}", article.get_text(" ").lower()))
    only = {stemmer.stem(w) for w in solution_words - other_words} - {stemmer.stem(w) for w in other_words}
    full_terms, student_terms = _search_terms(full_html), _search_terms(students_html)
    assert len(only & full_terms) >= 5  # the full edition's index does hold some
    assert not (only & student_terms), sorted(only & student_terms)[:20]


def test_student_downloads_are_the_portable_student_notebooks(full_html, students_html):
    """The student edition's download button serves its portable notebooks (issue 29): the ones
    `editions.py students` wrote to _build/portable/students, with every exercise of the students
    branch's notebook and no solution."""
    served = sorted((students_html / "_sources" / "chapters").glob("*.ipynb"))
    assert len(served) == len(list((ROOT / "chapters").glob("*.ipynb")))
    for path in served:
        portable = OUT / "_build" / "portable" / "students" / "chapters" / path.name
        assert json.loads(path.read_text()) == json.loads(portable.read_text()), path.name
        text = "".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown")
        assert "Solution to" not in text and "<details>" not in text, path.name
        branch = json.loads((STUDENT_NOTEBOOKS / "chapters" / path.name).read_text())
        assert "".join("".join(c["source"]) for c in branch["cells"]).count("{exercise}") == len(
            re.findall(r"^\*\*Exercise [\w.]+\*\*", text, re.M)), path.name
    for md in (students_html / "_sources").rglob("*.md"):
        assert "{solution" not in md.read_text(), md


def _names(code):
    """(names a code cell binds, names it reads) -- by the ast, ignoring what it cannot parse."""
    import ast

    try:
        tree = ast.parse("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return set(), set()
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else read).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound, read


def _glued_keys(cells):
    """Keys the code *cells* glue: glue("k", ...), glue_num("k", ...), and the dict(k=...) of a glue loop."""
    keys = set()
    for c in cells:
        keys |= set(re.findall(r"""glue(?:_num)?\(\s*["'](\w+)["']""", c))
        if re.search(r"glue(?:_num)?\(\s*key\b", c):  # for key, value in dict(a=..., b=...).items(): glue_num(key, value)
            keys |= set(re.findall(r"(\w+)\s*=(?!=)", c))
    return keys


def student_notebook_gaps(full_nb, student_nb):
    """What a solution-free notebook reads that only the removed solution cells defined."""
    def code(nb):
        return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]

    def markdown(nb):
        return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")

    kept, everything = code(student_nb), code(full_nb)
    removed = list(everything)
    for c in kept:
        if c in removed:
            removed.remove(c)
    bound_kept, read_kept = set(), set()
    for c in kept:
        b, r = _names(c)
        bound_kept |= b
        read_kept |= r
    bound_removed = set().union(*(_names(c)[0] for c in removed)) if removed else set()
    gaps = {f"name {n}" for n in (read_kept & bound_removed) - bound_kept}
    glued_kept, glued_removed = _glued_keys(kept), _glued_keys(removed)
    used = set(re.findall(r"glued\.(\w+)", markdown(student_nb) + "\n".join(kept)))
    gaps |= {f"glued.{k}" for k in (used & glued_removed) - glued_kept}
    return sorted(gaps)


def test_student_notebooks_need_nothing_from_the_solutions():
    """Run top to bottom, a solution-free notebook never reads a name or glued value only a solution defined."""
    from solutions import strip_solutions

    full = json.loads((ROOT / "chapters" / "01_introduction.ipynb").read_text())
    # the check can fail: a kept cell that reads the solution's err_ex
    bad = strip_solutions(full)
    bad["cells"].append({"cell_type": "code", "source": "print(err_ex[0.1])\n", "metadata": {}, "outputs": [], "execution_count": None})
    assert "name err_ex" in student_notebook_gaps(full, bad)
    problems = {}
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        nb = json.loads(path.read_text())
        gaps = student_notebook_gaps(nb, strip_solutions(nb))
        if gaps:
            problems[path.name] = gaps
    assert not problems, problems


def test_student_launch_buttons_open_the_students_branch(full_html, students_html):
    url, branch = editions.repository()
    owner_repo = url.removeprefix("https://github.com/")
    student_branch = editions.students_branch()
    branch = ext_module("book_config").executed_branch()   # the full edition opens the executed notebooks
    assert student_branch != branch
    n_pages = 0
    for page in editions.toc_pages():
        stud = (students_html / f"{page}.html").read_text()
        full = (full_html / f"{page}.html").read_text()
        binder_s = re.findall(r'href="(https://mybinder\.org/v2/gh/[^"]+)"', stud)
        binder_f = re.findall(r'href="(https://mybinder\.org/v2/gh/[^"]+)"', full)
        assert len(binder_s) == len(binder_f), page
        assert all(f"/v2/gh/{owner_repo}/{student_branch}?" in b for b in binder_s), binder_s
        assert all(f"/v2/gh/{owner_repo}/{branch}?" in b for b in binder_f), binder_f
        thebe = re.findall(r'ref:\s*"([^"]+)"', stud)
        assert set(thebe) <= {student_branch}, thebe
        assert set(re.findall(r'ref:\s*"([^"]+)"', full)) <= {branch}
        # no button leads to the repository's full sources
        assert f'href="{url}"' not in stud and f'href="{url}"' in full
        n_pages += bool(binder_s)
    assert n_pages >= 10


# --- the PDFs ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def pdfs(full_html, students_html):
    if CHROMIUM is None:
        pytest.skip("make pdf needs Chromium: `apt-get update && apt-get install -y chromium`")
    res = subprocess.run(
        [sys.executable, str(ROOT / "_ext" / "editions.py"), "pdf"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(),
        timeout=3600,
    )
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    return {name: PDF_DIR / name for name in ("book.pdf", "book-students.pdf", "api.pdf")}


@pytest.fixture(scope="session")
def book_pdf(pdfs):
    return pdfs["book.pdf"]


@pytest.fixture(scope="session")
def pdf_texts(pdfs):
    """{pdf name: [the text of each page]}, read once (pypdf takes a while over 200 pages)."""
    from pypdf import PdfReader

    return {name: [p.extract_text() or "" for p in PdfReader(str(path)).pages] for name, path in pdfs.items()}


def full_html_path(page):
    return HTML / f"{page}.html"


def _outline(reader):
    """[(depth, title, page, top)] of the whole outline, in order."""
    out = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                top = item.get("/Top")
                out.append((depth, str(item.title), reader.get_destination_page_number(item), None if top is None else float(top)))

    walk(reader.outline, 0)
    return out


def _numbered_headings(html_dir, pages):
    """[(number, title)] of every numbered h1-h3 of *pages*, in reading order."""
    from bs4 import BeautifulSoup

    out = []
    for page in pages:
        article = BeautifulSoup((html_dir / f"{page}.html").read_text(), "html.parser").find("article")
        for h in article.find_all(["h1", "h2", "h3"]):
            num = h.find("span", class_="section-number")
            if num is None:
                continue
            for junk in h.select("a.headerlink"):
                junk.decompose()
            number = num.get_text().strip().rstrip(".")
            num.decompose()
            out.append((number, " ".join(h.get_text(" ").split())))
    return out


def _norm(text):
    return "".join(_words(text))


def test_pdf_outline_has_every_numbered_section_nested(pdfs, pdf_texts):
    from pypdf import PdfReader

    pages = [p for p in editions.toc_pages() if p != editions.API_PAGE]
    for name, html in (("book.pdf", HTML), ("book-students.pdf", STUDENTS)):
        reader = PdfReader(str(pdfs[name]))
        outline = _outline(reader)
        headings = _numbered_headings(html, pages)
        assert len(headings) > 100 and len(outline) >= len(headings)
        texts = {}
        by_number = {}
        for depth, title, page, top in outline:
            m = re.match(r"^(\d+(?:\.\d+)*) ", title)
            if m:
                by_number[m.group(1)] = (depth, title, page)
        for number, title in headings:
            assert number in by_number, f"{name}: no bookmark for {number} {title}"
            depth, btitle, page = by_number[number]
            # nested: chapter at the top, each further number one level down (7.12.3 under 7.12 under 7)
            assert depth == number.count("."), (name, number, depth)
            words = [w for w in _words(_MARKUP.sub(" ", title)) if len(w) > 2][:4]
            text = texts.setdefault(page, _norm(pdf_texts[name][page]))
            assert all(w in text for w in words), f"{name}: {number} {title} is not on page {page + 1}"
        # reading order: bookmarks never go back
        starts = [page for _, _, page, _ in outline]
        assert starts == sorted(starts), name


def test_pdf_has_no_heading_alone_at_a_page_foot(pdfs):
    """A heading is followed on its own page by some text of what it heads (CSS break-after: avoid)."""
    from pypdf import PdfReader

    footer_y = 40  # the footer ("7. How tight are the bounds? · 8") sits in the bottom margin
    problems = []
    for name in ("book.pdf", "book-students.pdf"):
        reader = PdfReader(str(pdfs[name]))
        cache = {}
        for depth, title, page, top in _outline(reader):
            if top is None:
                continue
            if page not in cache:
                runs = []

                def visit(text, cm, tm, font, size, runs=runs):
                    if text.strip():
                        runs.append((tm[4] * cm[1] + tm[5] * cm[3] + cm[5], text.strip()))

                reader.pages[page].extract_text(visitor_text=visit)
                cache[page] = runs
            heading = _norm(title)
            below = [t for y, t in cache[page] if footer_y < y < top - 2 and _norm(t) and _norm(t) not in heading]
            if not below:
                problems.append(f"{name}: '{title}' is the last thing on page {page + 1}")
    assert not problems, problems


def test_pdf_prints_the_last_column_of_every_table(pdfs, pdf_texts):
    """No table is wider than the page: each table's last column header is in the PDF's text."""
    from bs4 import BeautifulSoup

    pages = [p for p in editions.toc_pages() if p != editions.API_PAGE]
    text = _norm("\n".join(pdf_texts["book.pdf"]))
    missing, n_tables = [], 0
    for page in pages:
        article = BeautifulSoup((HTML / f"{page}.html").read_text(), "html.parser").find("article")
        for table in article.select("table"):
            if table.find_parent(class_="jupyter-widgets") or table.find_parent("div", class_="solution"):
                continue
            header = table.select("thead tr") or table.select("tr")
            cells = header[0].find_all(["th", "td"]) if header else []
            if len(cells) < 2:
                continue
            n_tables += 1
            last = cells[-1]
            for m in last.select("mjx-assistive-mml, script"):
                m.decompose()
            want = _norm(re.sub(r"\\\(.*?\\\)", " ", last.get_text(" ")))
            if want and want not in text:
                missing.append(f"{page}: {last.get_text(' ').strip()!r} ({len(cells)} columns)")
    assert n_tables >= 15
    assert not missing, missing


def test_pdf_holds_the_whole_book_typeset(book_pdf, pdfs, pdf_texts):
    from pypdf import PdfReader

    reader = PdfReader(str(book_pdf))
    pages = [p for p in editions.toc_pages() if p != editions.API_PAGE]
    outline = _outline(reader)
    top = [(title, page) for depth, title, page, _ in outline if depth == 0]
    # one top-level bookmark per page of the table of contents, but 7a, which is a section of 7
    assert len(top) == len(pages) - 1
    assert len(outline) > 3 * len(top)
    assert len(reader.pages) > 3 * len(top)
    page_texts = pdf_texts["book.pdf"]
    text = "\n".join(page_texts)
    flat = re.sub(r"\s+", " ", text)
    starts = [page for _, page in top]
    assert starts[0] == 0 and starts == sorted(set(starts))
    titles = [t for t, _ in top]
    assert titles[1].startswith("1 Introduction") and titles[-1] == "References"
    assert not any("API reference" in t for _, t, _, _ in outline)

    def chapter_text(prefix):
        i = next(k for k, title in enumerate(titles) if title.startswith(prefix))
        end = starts[i + 1] if i + 1 < len(starts) else len(page_texts)
        return re.sub(r"\s+", " ", " ".join(page_texts[starts[i] : end]))

    # Numbered statements, each printed in its own chapter.
    assert "Theorem 3.2" in chapter_text("3 ") and "Theorem 3.4" in chapter_text("3 ")
    assert "Lemma 5.5" in chapter_text("5 ") and "Lemma 5.4" in chapter_text("5 ")
    assert "Lemma A.1" in chapter_text("Technical lemmas")
    # Table 1, as printed in the paper (chapter 4), and exercises with their solutions.
    for number in ("2541.3", "88.5", "Exercise 7.2", "Solution to"):
        assert number in flat, number
    # The explorers print with their saved state (panel and plot), not as empty space.
    assert "gap Thm 3.4 / lower bound" in chapter_text("7 ")
    assert "B suﬃcient σ (Thm 3.4)" in chapter_text("3 ") or "B sufficient σ (Thm 3.4)" in chapter_text("3 ")
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


def test_api_reference_is_its_own_pdf_and_the_student_pdf_has_no_solution(pdfs, pdf_texts):
    from pypdf import PdfReader

    book, students, api = (PdfReader(str(pdfs[n])) for n in ("book.pdf", "book-students.pdf", "api.pdf"))
    api_outline = _outline(api)
    assert api_outline[0][1] == "API reference" and len(api.pages) > 20
    assert any("dpmask.paper.bounds" in t for _, t, _, _ in api_outline)
    api_words = _norm(" ".join(pdf_texts["api.pdf"]))
    assert "sigmaasufficient" in api_words
    book_text = " ".join(pdf_texts["book.pdf"])
    assert "Solution to" in book_text
    student_text = " ".join(pdf_texts["book-students.pdf"])
    assert "Solution to" not in student_text and "Exercise 7.2" in student_text
    assert len(students.pages) < len(book.pages)
    assert [t for d, t, _, _ in _outline(students) if d == 0] == [t for d, t, _, _ in _outline(book) if d == 0]
    assert students.metadata.title.endswith("(student edition)")



def test_pdfs_are_tagged_and_pass_the_pdf_ua_checker(pdfs):
    """Each PDF is tagged (tests/test_pdf_a11y.py's tag_problems) and the pdfua checker finds no error."""
    from test_pdf_a11y import NOT_CLAIMED, checker_findings, tag_problems

    report = {}
    for name, path in pdfs.items():
        found = checker_findings(path)
        report[name] = {k: len(v) for k, v in found.items()}
        assert not found.get("ERROR"), (name, found)
        assert set(found.get("WARNING", [])) <= NOT_CLAIMED, (name, found)
        roles = ("/H1", "/H2", "/P", "/Link") + (("/Table", "/TH", "/Figure") if name != "api.pdf" else ())
        assert tag_problems(path, min_roles=roles) == [], name
    print("pdfua findings per PDF:", report)


_TEX = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.S)
# TeX's small Greek letters, which the speech must name (\sigma as "sigma"; the engine reads an
# upright capital \Delta as "normal triangle", so capitals are not asked for)
_GREEK = re.compile(r"\\(?:var)?(alpha|beta|gamma|delta|epsilon|zeta|eta|theta|kappa|lambda|mu|nu|xi|pi|rho|"
                    r"sigma|tau|phi|chi|psi|omega)(?![a-zA-Z])")


def page_formulas(html_file, outputs=True):
    """[(TeX, equation number or None)] of every formula of one built page, in reading order: the
    independent truth for the PDF's ``/Formula`` elements (MathJax typesets these in the browser).
    ``outputs=False`` leaves out the formulas a code cell printed (its ``text/latex`` output)."""
    from bs4 import BeautifulSoup

    article = BeautifulSoup(html_file.read_text(), "html.parser").find("article")
    out = []
    for el in article.select(".math"):
        if el.find_parent(class_="math") or (not outputs and el.find_parent(class_="cell_output")):
            continue
        number, eqno = None, el.find(class_="eqno")
        if eqno is not None:
            for a in eqno.select("a.headerlink"):
                a.decompose()
            number = eqno.get_text().strip()
            eqno.decompose()
        chunks = [a or b for a, b in _TEX.findall(el.get_text())]
        out += [(tex, number if i == len(chunks) - 1 else None) for i, tex in enumerate(chunks)]
    return out


def formula_alts_by_part(path):
    """[[the /Alt of each /Formula of one printed HTML page (a /Part)]], in reading order."""
    import pikepdf

    from test_pdf_a11y import _kids

    pdf = pikepdf.open(path)
    parts = []
    for part in _kids(pdf.Root.StructTreeRoot.K):
        alts, stack = [], [part]
        while stack:
            node = stack.pop()
            if not isinstance(node, pikepdf.Dictionary) or node.get("/Type") in ("/MCR", "/OBJR"):
                continue
            if node.get("/S") == "/Formula":
                alts.append(str(node.get("/Alt", "")))
            stack.extend(reversed(_kids(node)))
        parts.append(alts)
    return parts


def test_every_formula_of_the_pdfs_is_a_formula_that_speaks_its_tex(pdfs):
    """The PDFs' formulas are ``/Formula`` elements with their speech as ``/Alt`` (MathJax's speech
    rule engine, ``_ext/editions.py``), page by page, against the TeX written in the HTML pages:

    - every page has one ``/Formula`` element for each of its formulas, in prose, in table cells
      and in what a code cell printed (until 29 Nov 2026 about 2.6 % were left without their
      element, their one zero-width carrier unpainted; with a carrier after the formula, 3 of the
      full edition's 5,486 and 1 of the API reference's 496, the carrier off the line or the
      page; with one before it as well, none);
    - no alt text is empty or raw TeX;
    - a numbered display equation's alt text ends with its number, the page's numbers come in
      order, every one is there, and each names every Greek letter of that
      equation's TeX (\\sigma as "sigma") and speaks a square root as one.
    """
    book_pages = [p for p in editions.toc_pages() if p != editions.API_PAGE]
    report = {}
    for name, html, pages in (("book.pdf", HTML, book_pages), ("book-students.pdf", STUDENTS, book_pages),
                              ("api.pdf", HTML, [editions.API_PAGE])):
        by_part = formula_alts_by_part(pdfs[name])
        assert len(by_part) == len(pages), name
        tagged = total = numbered = numbered_total = 0
        for page, alts in zip(pages, by_part):
            truth = page_formulas(html / f"{page}.html")
            assert len(alts) == len(truth), (name, page, len(alts), len(truth))
            tagged, total = tagged + len(alts), total + len(truth)
            for alt in alts:
                assert alt.strip() and "\\" not in alt, (name, page, alt)
            tex_of = {number: tex for tex, number in truth if number}
            numbered_total += len(tex_of)
            found = [re.search(r", equation (\(\S+\))$", alt) for alt in alts]
            found = [(m.group(1), alt) for m, alt in zip(found, alts) if m]
            order = list(tex_of)
            assert [order.index(n) for n, _ in found] == sorted(order.index(n) for n, _ in found), (name, page)
            for number, alt in found:
                tex, low = tex_of[number], alt.lower()
                for letter in _GREEK.findall(tex):  # the engine spells λ as Unicode names it, "lamda"
                    assert letter.replace("lambda", "lamda") in low, (name, page, number, tex, alt)
                if "\\sqrt" in tex:
                    assert "root" in low, (name, page, number, tex, alt)
            numbered += len(found)
        report[name] = {"formulas": total, "tagged": tagged, "numbered": numbered_total, "numbered_tagged": numbered}
        assert tagged == total and numbered == numbered_total, report
    print("formulas per PDF:", report)

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
    monkeypatch.setattr(publish, "ROOT", tmp_path)
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


def test_student_edition_prints_no_doubled_word(students_html):
    """tests/test_doubled_words.py's check ("the the", "Definition Definition 2.1"), on the student edition."""
    from test_doubled_words import doubled_words_in_book, html_pages

    assert len(html_pages(students_html)) >= 15
    problems = doubled_words_in_book(students_html)
    assert not problems, problems


def student_dropdowns_not_in_the_full_edition(full_html, students_html, pages):
    """{page: [each dropdown of the student page that is no dropdown of the full page]}, empty when
    every one is (the sweeps below check a student page with its dropdowns closed alone).

    A dropdown is what tests/a11y.py's ``set_dropdowns`` opens: a ``<details>`` (hidden code cells,
    the navigation's sections), a dropdown admonition, a ``.toggle`` block.  Each is compared as
    HTML with its ``id`` attributes left out (the student build numbers some ids afresh).
    """
    from bs4 import BeautifulSoup

    def dropdowns(path):
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        return [re.sub(r' id="[^"]*"', "", str(el)) for el in soup.select("details, .dropdown.admonition, .toggle")]

    found = {}
    for page in pages:
        full = set(dropdowns(full_html / f"{page}.html"))
        extra = [d for d in dropdowns(students_html / f"{page}.html") if d not in full]
        if extra:
            found[page] = extra
    return found


def test_student_dropdowns_are_the_full_editions(full_html, students_html, tmp_path):
    """Every dropdown of every student page is, ids aside, a dropdown of its full page: what a
    student opens is what the full edition's sweeps open (axe-core at 390 and 1280 px,
    HTML_CodeSniffer, the keyboard walk; tests/test_book.py and tests/test_a11y_engines.py), so the
    student sweeps below need not open them again.  Planted: an image without alternative text
    slipped into a hidden code cell of a student page is reported."""
    pages = editions.toc_pages()
    assert not student_dropdowns_not_in_the_full_edition(full_html, students_html, pages)
    planted = tmp_path / "students"
    page = "chapters/01_introduction"
    (planted / "chapters").mkdir(parents=True)
    text = (students_html / f"{page}.html").read_text(encoding="utf-8")
    assert '<details class="admonition hide above-input">' in text
    text = text.replace('<details class="admonition hide above-input">',
                        '<details class="admonition hide above-input"><img src="x.png">', 1)
    (planted / f"{page}.html").write_text(text, encoding="utf-8")
    assert list(student_dropdowns_not_in_the_full_edition(full_html, planted, [page])) == [page]


@pytest.mark.reader  # make test-slow's lane 2, at its end (students_html)
def test_student_edition_has_no_accessibility_violation(students_html):
    """axe-core (tests/a11y.py) finds no WCAG 2.0/2.1 A or AA violation on any page of the student edition.

    The full edition is checked page by page in tests/test_book.py, at 390 px and 1280 px, with
    its dropdowns closed and opened; the student edition has its own pages (no solutions, other
    launch buttons), so each is opened here at 1280 px with its dropdowns closed.  Not at 390 px
    (since 29 Nov 2026, for CI's time: that pass took half of this sweep's 902 s): a student page is
    its full page without the solutions' dropdowns and with other launch links, and the phone pass
    of the full page reads all of that content at that width.  Not with the dropdowns opened (since
    a later session that day, for CI's time: 542 s in CI's lane, the opened pass the larger part on the long
    chapters, e.g. 20 s of chapter 9's 33): every dropdown of a student page is one of its full
    page's (test_student_dropdowns_are_the_full_editions), which the full sweep opens at both
    widths.  tests/test_a11y.py plants the slips the check must see.
    """
    import a11y

    if CHROMIUM is None:
        pytest.skip("the accessibility check needs Chromium: `apt-get update && apt-get install -y chromium`")
    found = a11y.check_edition(students_html, editions.toc_pages(), phone=False, opened=False)
    assert not found, f"axe-core {a11y.axe_version()} on the student edition:\n" + "\n".join(
        f"{page}, {where}:\n{a11y.describe(v)}" for page, states in found.items() for where, v in states.items())


@pytest.mark.reader  # make test-slow's lane 2, at its end (students_html)
def test_student_edition_has_no_htmlcs_error(students_html):
    """HTML_CodeSniffer 2.5.1 (WCAG2AA, errors; tests/a11y_engines.py) finds nothing on any page of
    the student edition at 1280 px, dropdowns closed (issue 31; opened in the full edition alone,
    for the reason the axe-core sweep above gives).  The full edition's sweep and the planted slips
    are in tests/test_a11y_engines.py."""
    import a11y_engines

    if CHROMIUM is None:
        pytest.skip("the accessibility check needs Chromium: `apt-get update && apt-get install -y chromium`")
    found = a11y_engines.sweep(students_html, editions.toc_pages(), "htmlcs", opened=False)
    assert not found, "HTML_CodeSniffer on the student edition:\n" + "\n".join(
        f"{page}, dropdowns {state}:\n{a11y_engines.describe(v)}" for page, states in found.items() for state, v in states.items())
