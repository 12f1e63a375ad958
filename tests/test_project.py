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


def _block(stdout, title):
    """The lines of one setting's block of `python -m dpmask sigma`."""
    blocks = stdout.split("\n\n")
    found = [b for b in blocks if b.startswith(title)]
    assert len(found) == 1, stdout
    return found[0]


def test_cli_sigma_prints_every_bound():
    res = _run_cli("sigma", "--eps", "0.1", "--delta", "0.01", "--n", "100", "--p", "5")
    assert res.returncode == 0, res.stderr
    a = _block(res.stdout, "Setting A")
    b = _block(res.stdout, "Setting B")
    c = _block(res.stdout, "Setting C")
    # The paper's bounds, labelled as the paper's.  Table 1 row (0.1, 0.01, p=5, n=100): 23.3, 25.4, 9.5.
    assert re.search(r"paper: Theorem 3\.2 necessary, for the paper's criterion .*\b23\.26", a)
    assert re.search(r"paper: Theorem 3\.2 sufficient .*\b25\.41", a)
    assert re.search(r"paper: Theorem 3\.4 sufficient .*\b9\.5[34]", b)
    assert "paper: Corollary 3.5" in b and "paper: Corollary 3.3" in a
    # Best proven sigma and its source: analytic Gaussian 9.5418 (dp-accounting) for A; for B the
    # near-tie goes to Theorem 3.4 (9.5395 < 9.5418).
    assert re.search(r"best proven sufficient sigma +9\.5418  by analytic Gaussian \(Balle & Wang 2018\), Setting A$", a, re.M)
    assert re.search(r"best proven sufficient sigma +9\.539\d  by Theorem 3\.4$", b, re.M)
    assert re.search(r"best proven sufficient sigma +9\.539\d  by Theorem 3\.4$", c, re.M)
    # p > 1: no exact value; a lower bound below Theorem 3.4
    assert re.search(r"exact sigma +n/a  \(known only for p = 1\)", b)
    low = float(re.search(r"lower bound \(projection and Frobenius statistics\) +([\d.]+)", b).group(1))
    assert 0 < low < 9.5


def test_cli_sigma_best_proven_is_the_analytic_gaussian_where_it_beats_theorem_3_4():
    from dp_accounting import gaussian_mechanism as dpa

    res = _run_cli("sigma", "--eps", "0.001", "--delta", "0.01", "--n", "100", "--p", "1")
    assert res.returncode == 0, res.stderr
    ref = dpa.get_sigma_gaussian(0.001, 0.01, tol=1e-15)  # 38.04; the paper's Theorem 3.4: 68.9
    b = _block(res.stdout, "Setting B")
    m = re.search(r"best proven sufficient sigma +([\d.]+)  by analytic Gaussian \(Balle & Wang 2018\), "
                  r"Setting A, valid for B by Lemma 2\.3$", b, re.M)
    assert m and float(m.group(1)) == pytest.approx(ref, abs=1e-4)
    thm34 = re.search(r"paper: Theorem 3\.4 sufficient +([\d.]+)", b)
    assert thm34 and round(float(thm34.group(1)), 1) == 68.9  # the paper's Table 1
    assert "valid for C by Lemma 2.3" in _block(res.stdout, "Setting C")
    # p = 1: the exact value is listed, and labelled as found by a search, not as proven
    m = re.search(r"exact sigma \(p = 1\) +([\d.]+)  exact by a numerical worst-pair search, not proven", b)
    assert m and 1.0 < float(m.group(1)) < ref
    assert "proven" not in b.split("exact sigma")[1].split("not proven")[0]


def test_cli_sigma_prints_the_rivals_gram_noise_labelled_as_such():
    # tau = analytic Gaussian sigma (dp-accounting, independent) x Frobenius sensitivity 2 sqrt(p) - 1
    # (attained by x = 1, x' = (1 - 1/sqrt p) 1: ||x x^T - x' x'^T||_F = p (1 - (1 - 1/sqrt p)^2)).
    from dp_accounting import gaussian_mechanism as dpa

    res = _run_cli("sigma", "--eps", "0.1", "--delta", "0.01", "--n", "100", "--p", "5")
    assert res.returncode == 0, res.stderr
    r = _block(res.stdout, "Rival")
    assert "noise on the Gram matrix, not on X" in r and "not comparable" in r
    m = re.search(r"tau, standard deviation of the Gram noise \(diagonal\) +([\d.]+)", r)
    sens = 5 * (1 - (1 - 1 / 5 ** 0.5) ** 2)
    assert m and float(m.group(1)) == pytest.approx(dpa.get_sigma_gaussian(0.1, 0.01, tol=1e-15) * sens, abs=1e-3)


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


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("sigma_b: root finding did not converge;\nplease report"),
        OverflowError("(34, 'Numerical result out of range')"),
        TypeError("unsupported operand"),
        FloatingPointError("overflow encountered"),
        MemoryError(),
        ZeroDivisionError("float division by zero"),
        ValueError("eps must be finite and > 0, got nan"),
    ],
    ids=lambda e: type(e).__name__,
)
@pytest.mark.parametrize("command", [["sigma", "--eps", "0.1", "--delta", "0.01", "--n", "100", "--p", "5"], ["table"]])
def test_cli_turns_every_package_error_into_exit_2_and_one_line(monkeypatch, capsys, error, command):
    from dpmask import __main__ as cli
    from dpmask.exact import best

    def boom(*args, **kwargs):
        raise error

    monkeypatch.setattr(best, "best_sufficient_sigma", boom)
    monkeypatch.setattr(cli, "table1", boom)
    with pytest.raises(SystemExit) as info:
        cli.main(command)
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1
    assert "Traceback" not in err


def test_cli_lets_keyboard_interrupt_through(monkeypatch):
    from dpmask import __main__ as cli

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "table1", stop)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["table"])


def test_cli_reports_numerical_warnings_in_one_line(monkeypatch, capsys):
    import warnings

    from dpmask import __main__ as cli

    real = cli.table1

    def noisy(*args, **kwargs):
        for _ in range(3):
            warnings.warn("Series did not converge", RuntimeWarning)
        return real(*args, **kwargs)

    monkeypatch.setattr(cli, "table1", noisy)
    assert cli.main(["table"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 37
    assert err == "warning: 3 numerical warning(s), so some values may be inaccurate; the first: Series did not converge\n"


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


def test_jupyterlab_gets_the_books_explorer_script_from_its_one_source(tmp_path):
    """install.py puts _static/dpmask-explorers-a11y.js, byte for byte, beside the extension's entry,
    whose plugin loads it by that name; the Makefile reinstalls when the script changes."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("dpmask_lab_install", ROOT / "_ext" / "jupyterlab" / "install.py")
    install = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(install)
    written = install.install(tmp_path)
    source = ROOT / "_static" / "dpmask-explorers-a11y.js"
    copied = tmp_path / "share" / "jupyter" / "labextensions" / "dpmask-live" / "static" / source.name
    assert copied in written and copied.read_bytes() == source.read_bytes()
    entry = (copied.parent / "remoteEntry.js").read_text(encoding="utf-8")
    assert f'"{source.name}"' in entry and "explorersA11y()" in entry
    assert not list((ROOT / "_ext" / "jupyterlab").rglob(source.name)), "a second, hand-kept copy"
    stamp = re.search(r"^\$\(STAMP\):(.*)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert "_static/dpmask-explorers-a11y.js" in stamp.split()
