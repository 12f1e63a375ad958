"""Project-level checks: the Binder environment and pyproject agree; the CLI behaves; docs match."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _norm(req):
    return re.sub(r"\s+", "", req).lower()


def _pyproject_requirements():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = data["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs.extend(extra)
    return {_norm(r) for r in reqs}


def _environment_pip_requirements():
    lines = (ROOT / "environment.yml").read_text().splitlines()
    out = set()
    for line in lines:
        m = re.match(r"^\s{6}- (.+)$", line)
        if m and not m.group(1).startswith("-e"):
            out.add(_norm(m.group(1)))
    return out


def test_environment_yml_matches_pyproject():
    assert _environment_pip_requirements() == _pyproject_requirements()


def test_jupyter_book_pinned_below_2():
    # Jupyter Book 2 fetches its theme at build time and cannot build offline.
    assert "jupyter-book>=1.0.4,<2" in _pyproject_requirements()


def _run_cli(*args):
    return subprocess.run([sys.executable, "-m", "dpmask", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_sigma_prints_every_bound():
    res = _run_cli("sigma", "--eps", "0.1", "--delta", "0.01", "--n", "100", "--p", "5")
    assert res.returncode == 0, res.stderr
    # Table 1 row (0.1, 0.01, p=5, n=100) printed in the paper: 23.3, 25.4, 9.5.
    assert re.search(r"Setting A necessary.*\b23\.26", res.stdout)
    assert re.search(r"Setting A sufficient \(Theorem 3\.2\).*\b25\.41", res.stdout)
    assert re.search(r"Setting B sufficient \(Theorem 3\.4\).*\b9\.5[34]", res.stdout)
    assert "Corollary 3.5" in res.stdout and "Corollary 3.3" in res.stdout


def test_cli_table_prints_36_rows():
    res = _run_cli("table")
    assert res.returncode == 0, res.stderr
    rows = [line for line in res.stdout.splitlines()[1:] if line.strip()]
    assert len(rows) == 36
    assert rows[-1].split() == ["0.001", "0.001", "20", "10000", "3090.2", "3252.0", "121.4", "27"]


@pytest.mark.parametrize(
    "args, word",
    [
        (["sigma", "--eps", "-1", "--delta", "0.01", "--n", "100", "--p", "5"], "eps"),
        (["sigma", "--eps", "0.1", "--delta", "1.5", "--n", "100", "--p", "5"], "delta"),
        (["sigma", "--eps", "0.1", "--delta", "0.01", "--n", "5", "--p", "5"], "n must exceed p"),
        (["sigma", "--eps", "0.1", "--delta", "0.01", "--n", "50", "--p", "0"], "p must be"),
        (["sigma", "--eps", "abc", "--delta", "0.01", "--n", "50", "--p", "1"], "eps"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_cli_bad_arguments_exit_2_with_one_line(args, word):
    res = _run_cli(*args)
    assert res.returncode == 2
    assert word in res.stderr
    assert "Traceback" not in res.stderr
    assert res.stdout == ""


def test_readme_gives_the_two_commands():
    text = (ROOT / "README.md").read_text()
    assert "make book" in text and "make test" in text


def test_toc_lists_every_chapter_file():
    toc = (ROOT / "_toc.yml").read_text()
    listed = set(re.findall(r"file: (\S+)", toc))
    on_disk = {f"chapters/{p.stem}" for p in (ROOT / "chapters").iterdir() if p.suffix in (".ipynb", ".md")}
    assert listed == on_disk


def test_notebooks_committed_without_outputs():
    import json

    for nb_path in (ROOT / "chapters").glob("*.ipynb"):
        nb = json.loads(nb_path.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert not cell.get("outputs"), f"{nb_path.name} has stored outputs"
