"""The concordance page accounts for every label of the paper, with a status and a working link.

`chapters/concordance.ipynb` has one table row per `\\label` of the paper's LaTeX source. These
tests check that the rows list exactly the paper's 70 labels (embedded below, and compared with
the source itself when it is present next to the repository), that each row has a status from the
allowed set and a link into the book, and that every `{prf:ref}`, `{eq}` and `{doc}` target used on
the page, and every Markdown link into a chapter (``[Lemma 5.6](05_proofs.ipynb#lem-5-6)``, the
form for another notebook, which JupyterLab can follow), exists in the chapters.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "chapters" / "concordance.ipynb"
PAPER = ROOT.parent / "shared" / "paper" / "matrix-masking-dp.tex"

# Every \label of the paper, in the order of its source.
PAPER_LABELS = [
    "def:Neighbors", "def:DiffPriv", "eq:DP", "eq:rows", "eq:modelA", "eq:modelB", "lem:BC<A",
    "lem:DPdensity", "eq:DP-bound0", "sec:results", "eq:XboundedOne", "lem:DenRatio", "eq:denRatioA0",
    "eq:denRatioB0", "thm:bound.settingA", "eq:DP-bound0A.nec", "eq:DP-bound0A.suf", "eq:DP-boundA.nec",
    "eq:DP-boundA.suf", "cor:bound.settingA", "thm:bound.settingB_Ver3", "eq:sigma.bound.new",
    "cor:bound.settingB_Ver3", "eq:sigma.bound.new1", "sec:discuss", "bound.table", "eq:modelC",
    "sec:proof", "eq:denA", "eq:DenB", "eq:denRatioA1", "eq:DP-bound0A", "eq:bound.prob.SW",
    "eq:W.probHigh", "eq:den.X", "eq:denRatio.B", "lem:int_unif", "eq:denRatio.B1", "lem:GRatio",
    "eq:Gratio1", "eq:setW", "eq:Gratio.n-p", "eq:bound.prob.SW.B", "lem:W.probHigh", "eq:W.probHigh.B",
    "eq:V1.vec", "eq:T.sum", "eq:ZMZ.bound", "eq:Ti", "eq:prob.bound.1", "eq:prob.bound.2",
    "sec:appendix", "sec:proof.BC<A", "eq:A.DP", "sec:proof.DPdensity", "sec:proof.cor.A",
    "lem:GaussianQuantile", "eq:GaussQuantBound", "eq:gamma_deltaBound", "sec:proof.cor.B",
    "eq:sigma2ep.ge", "lem:Chi-tail", "eq:Chi-tail", "lem:gamma_delta_Bound", "eq:gamma_delta",
    "sec:proof.unif", "sec:proof.GRatio", "sec:DenC", "lem:DenC", "eq:DenC",
]

# A status cell starts with one of these (the corrected form or the counterexample follows).
STATUS = re.compile(r"^\*(as printed|not used)\*|^\*slip\* — corrected form|^\*false\* — counterexample")
ROW = re.compile(r"^\|\s*(?P<num>[^|]*?)\s*\|\s*`(?P<label>[^`]+)`\s*\|\s*(?P<book>[^|]*?)\s*\|\s*(?P<status>[^|]*?)\s*\|\s*$")
LINK = re.compile(r"\{(prf:ref|eq|doc)\}`([^`]+)`|\[[^\[\]]*\]\(([\w-]+)\.(?:ipynb|md)(?:#([\w-]+))?\)")


def _links(text):
    """(role, target) of every reference in *text*: a role's, or a Markdown link's ("doc" for a page)."""
    for role, body, page, label in LINK.findall(text):
        if role:
            yield role, _target(body)
        else:
            yield ("ref", label) if label else ("doc", page)


def _markdown():
    nb = json.loads(PAGE.read_text())
    return "\n".join(cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
                     for cell in nb["cells"] if cell["cell_type"] == "markdown")


def _rows():
    rows = [m.groupdict() for line in _markdown().splitlines() if (m := ROW.match(line))]
    assert rows, "no concordance rows found"
    return rows


def _target(text):
    # {prf:ref}`Lemma A.1 <lem-a-1>` points to lem-a-1
    m = re.search(r"<([^>]+)>\s*$", text)
    return m.group(1) if m else text.strip()


def _book_labels():
    """Labels defined in the chapters: `:label: x` of directives and `$$ (x)` of equations."""
    labels = set()
    for path in (ROOT / "chapters").iterdir():
        if path == PAGE or path.suffix not in (".ipynb", ".md"):
            continue
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text())["cells"]
            text = "\n".join(c["source"] if isinstance(c["source"], str) else "".join(c["source"]) for c in cells)
        else:
            text = path.read_text()
        labels |= set(re.findall(r":label:\s*(\S+)", text))
        labels |= set(re.findall(r"\$\$\s*\(([^)\s]+)\)", text))
    return labels


def test_embedded_list_has_70_distinct_labels():
    assert len(PAPER_LABELS) == 70 and len(set(PAPER_LABELS)) == 70


@pytest.mark.skipif(not PAPER.exists(), reason=f"paper source not at {PAPER}")
def test_embedded_list_is_the_papers_labels():
    found = re.findall(r"\\label\{([^}]*)\}", PAPER.read_text())
    assert found == PAPER_LABELS


def test_page_lists_exactly_the_papers_labels():
    labels = [r["label"] for r in _rows()]
    duplicates = sorted({lab for lab in labels if labels.count(lab) > 1})
    assert not duplicates, f"labels listed twice: {duplicates}"
    assert sorted(labels) == sorted(PAPER_LABELS), (
        f"missing {sorted(set(PAPER_LABELS) - set(labels))}, extra {sorted(set(labels) - set(PAPER_LABELS))}")
    assert labels == PAPER_LABELS  # in the order of the paper


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["label"])
def test_row_has_status_and_counterpart(row):
    assert STATUS.match(row["status"]), f"{row['label']}: status {row['status'][:40]!r} not in the allowed set"
    assert LINK.search(row["book"]), f"{row['label']}: no {{prf:ref}}, {{eq}}, {{doc}} or chapter link in {row['book']!r}"
    assert row["num"], f"{row['label']}: no paper number"


def test_every_link_target_exists():
    labels = _book_labels()
    docs = {p.stem for p in (ROOT / "chapters").iterdir() if p.suffix in (".ipynb", ".md")}
    missing = []
    for role, target in _links(_markdown()):
        if role == "doc":
            if target not in docs:
                missing.append(f"{{doc}}`{target}`")
        elif target not in labels:
            missing.append(f"{{{role}}}`{target}`")
    assert not missing, f"targets not defined in the chapters: {sorted(set(missing))}"


def test_link_targets_check_can_fail():
    # The label scan must not be empty or too permissive: known labels are in, an invented one is not.
    labels = _book_labels()
    assert {"thm-3-4", "lem-5-5", "eq-g", "lem-a-3", "eq-a-quantile"} <= labels
    assert "thm-3-9" not in labels
    assert list(_links("[Lemma 5.6](05_proofs.ipynb#lem-5-6), [Proofs](05_proofs.ipynb), {eq}`(3.1) <eq-g>`")) == [
        ("ref", "lem-5-6"), ("doc", "05_proofs"), ("eq", "eq-g")]
