"""The PDFs are tagged: what `make pdf` joins keeps a structure tree a screen reader can follow.

`make pdf` prints each HTML page with Chromium (tagged) and joins the pages with pypdf, which drops
the structure trees; ``_ext/pdf_tags.py`` puts one tree back on the joined file.  Checked here on
two small pages printed and joined the way the book is (Chromium needed; marked ``slow``):

- the independent checker ``pdfua`` (the machine-checkable subset of PDF/UA-1) finds no error and
  no warning but the one about a conformance claim the book does not make;
- :func:`tag_problems`, this file's own stricter reading: a structure tree with headings,
  paragraphs, a table with header cells (each with its /Scope), a figure with its alt text, in
  reading order; every marked piece of every page reachable through the parent tree; no text
  outside a tagged or artifact sequence (the page footer is an artifact); every link annotation
  described;
  ``/Lang``, ``/MarkInfo``, ``/DisplayDocTitle`` and the title;
- planted: an untagged PDF, and the same two pages joined without ``tag_joined``, fail both.

tests/test_publish.py runs :func:`tag_problems` and the checker on the book's three PDFs.
"""

from __future__ import annotations

import re
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
import editions  # noqa: E402
import localhost  # noqa: E402

pikepdf = pytest.importorskip("pikepdf")
pdfua = pytest.importorskip("pdfua")

# The book's MathJax (sphinx-mathjax-offline's copy, with the speech rule engine and its maps).
MATHJAX = Path(sysconfig.get_path("purelib")) / "sphinx-mathjax-offline" / "static" / "mathjax"
CHROMIUM = localhost.CHROMIUM
# PDF/UA-28-004 asks the file to claim PDF/UA conformance in its XMP (pdfuaid:part).  The book does
# not claim it: the checker covers 16 of PDF/UA's 106 machine-checkable rules, and what no machine
# checks (a meaningful reading order, alt text that fits) has been read by no auditor.
NOT_CLAIMED = {"UA-28-004"}

_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
PAGES = {
    "one": f"""<!doctype html><html lang="en"><head><title>One — Test book</title></head><body>
<article class="bd-article"><h1>Chapter one</h1><p>Words with a <a href="#sec">link inside</a>, another to
<a href="two.html">the second page</a> and one <a href="https://example.org/x">outside</a>.</p>
<figure><img src="data:image/png;base64,{_PNG}" alt="A red dot on white" width="40" height="40">
<figcaption>A dot.</figcaption></figure>
<table><thead><tr><th>eps</th><th>sigma</th></tr></thead><tbody><tr><td>0.1</td><td>2.5</td></tr></tbody></table>
<h2 id="sec">A section</h2><p>More words.</p></article></body></html>""",
    "two": r"""<!doctype html><html lang="en"><head><title>Two — Test book</title>
<script>window.MathJax = {"options": {"enableAssistiveMml": true}, "tex": {"inlineMath": [["\\(", "\\)"]]}};</script>
<script defer src="_static/mathjax/tex-chtml.js"></script></head><body>
<article class="bd-article"><h1>Chapter two</h1><p>Second page, with a <a href="#back">link</a>
and a formula, <span class="math notranslate nohighlight">\(\varepsilon^2\)</span>, in its words.</p>
<div class="math notranslate nohighlight" id="equation-sigma"><span class="eqno">(2.1)<a class="headerlink"
href="#equation-sigma">#</a></span>\[\sigma_A = \sqrt{2 \log(1.25/\delta)}\]</div>
<table><thead><tr><th>n</th><th>p</th></tr></thead><tbody><tr><td>100</td><td>5</td></tr></tbody></table>
<h2 id="back">Its section</h2><p>The end.</p></article></body></html>""",
}


def checker_findings(path):
    """{severity name: [rule id, ...]} of pdfua's report on *path*."""
    report = pdfua.validate(str(path))
    out = {}
    for f in report.findings:
        out.setdefault(f.severity.name, []).append(f.rule_id)
    return out


def _kids(node):
    kids = node.get("/K")
    if kids is None:
        return []
    return list(kids) if isinstance(kids, pikepdf.Array) else [kids]


def tag_problems(path, min_roles=("/H1", "/H2", "/P", "/Table", "/TH", "/TD", "/Figure", "/Link")):
    """What keeps the PDF at *path* from being tagged for a screen reader: a list of sentences."""
    problems = []
    pdf = pikepdf.open(path)
    cat = pdf.Root
    if str(cat.get("/Lang", "")) == "":
        problems.append("no /Lang")
    if not (cat.get("/MarkInfo") and bool(cat.MarkInfo.get("/Marked", False))):
        problems.append("no /MarkInfo /Marked true")
    if not (cat.get("/ViewerPreferences") and bool(cat.ViewerPreferences.get("/DisplayDocTitle", False))):
        problems.append("no /ViewerPreferences /DisplayDocTitle true")
    if not str(pdf.docinfo.get("/Title", "")).strip():
        problems.append("no title")
    root = cat.get("/StructTreeRoot")
    if root is None:
        return problems + ["no structure tree"]
    # walk the tree in reading order
    roles, figures_without_alt, order = set(), 0, []
    headers_without_scope = 0
    formulas, marked_figures = [], []
    page_index = {p.obj.objgen: i for i, p in enumerate(pdf.pages)}
    reached = {}  # (page, mcid) -> element

    def walk(node, pg):
        if not isinstance(node, pikepdf.Dictionary):
            if pg is not None and isinstance(node, int | pikepdf.Object):
                try:
                    reached[(page_index.get(pg.objgen), int(node))] = True
                except (TypeError, ValueError):
                    pass
            return
        if node.get("/Type") in ("/OBJR",):
            return
        pg = node.get("/Pg", pg)
        if node.get("/Type") == "/MCR":
            walk(node.get("/MCID"), pg)
            return
        role = str(node.get("/S", ""))
        roles.add(role)
        if role in ("/H1", "/H2", "/H3"):
            order.append((role, pg and page_index.get(pg.objgen)))
        if role == "/TH":  # a header cell says what it heads (PDF/UA 7.5: /Scope in its table attributes)
            attrs = node.get("/A")
            attrs = list(attrs) if isinstance(attrs, pikepdf.Array) else [attrs] if attrs is not None else []
            if not any(isinstance(a, pikepdf.Dictionary) and str(a.get("/Scope", "")) in ("/Row", "/Column", "/Both")
                       for a in attrs):
                nonlocal headers_without_scope
                headers_without_scope += 1
        if role == "/Formula":
            formulas.append(str(node.get("/Alt", "")))
        if role == "/Figure" and str(node.get("/Alt", "")).startswith(editions.FORMULA_MARK):
            marked_figures.append(str(node.Alt))
        if role == "/Figure" and not str(node.get("/Alt", "")).strip():
            nonlocal figures_without_alt
            figures_without_alt += 1
        for kid in _kids(node):
            walk(kid, pg)

    for kid in _kids(root):
        walk(kid, None)
    missing = [r for r in min_roles if r not in roles]
    if missing:
        problems.append(f"no structure element of role {missing}")
    if figures_without_alt:
        problems.append(f"{figures_without_alt} figures without /Alt")
    bare = [a for a in formulas if not a.strip() or editions.FORMULA_MARK in a]
    if bare:
        problems.append(f"{len(bare)} formulas (/Formula) without spoken text as /Alt, or with the mark left in")
    if marked_figures:
        problems.append(f"{len(marked_figures)} formulas left as /Figure: {marked_figures[:2]}")
    if headers_without_scope:
        problems.append(f"{headers_without_scope} table header cells (/TH) without /Scope")
    first_pages = [p for _, p in order if p is not None]
    if first_pages != sorted(first_pages):
        problems.append("the headings are not in reading order")
    # every marked piece of content is in the tree, and no text is outside a marked sequence
    parent_tree = {}

    def numbers(node):
        if "/Nums" in node:
            nums = list(node.Nums)
            parent_tree.update({int(nums[i]): nums[i + 1] for i in range(0, len(nums), 2)})
        for kid in node.get("/Kids", []):
            numbers(kid)

    numbers(root.ParentTree)
    unreached, unmarked, undescribed = 0, 0, 0
    for i, page in enumerate(pdf.pages):
        depth = 0
        mcids = []
        for ins in pikepdf.parse_content_stream(page):
            if isinstance(ins, pikepdf.ContentStreamInlineImage):
                unmarked += depth == 0
                continue
            op = str(ins.operator)
            if op in ("BDC", "BMC"):
                depth += 1
                props = ins.operands[-1] if ins.operands else None
                if isinstance(props, pikepdf.Dictionary) and "/MCID" in props:
                    mcids.append(int(props.MCID))
            elif op == "EMC":
                depth -= 1
            elif op in ("Tj", "TJ", "'", '"', "Do") and depth == 0:
                unmarked += 1
        key = page.obj.get("/StructParents")
        entry = parent_tree.get(int(key)) if key is not None else None
        for mcid in mcids:
            if (i, mcid) not in reached or entry is None or mcid >= len(entry):
                unreached += 1
        for annot in page.obj.get("/Annots", []):
            if annot.get("/Subtype") == "/Link":
                if not str(annot.get("/Contents", "")).strip():
                    undescribed += 1
                elif int(annot.get("/StructParent", -1)) not in parent_tree:
                    unreached += 1
    if unreached:
        problems.append(f"{unreached} marked pieces or links not reachable through the structure tree")
    if unmarked:
        problems.append(f"{unmarked} text or image operators outside any tagged or artifact sequence")
    if undescribed:
        problems.append(f"{undescribed} link annotations without a description (/Contents)")
    return problems


# --- two small pages, printed and joined as the book is --------------------------------------------


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("needs Chromium: `apt-get update && apt-get install -y chromium`")
    html = tmp_path_factory.mktemp("html")
    (html / "_static").mkdir()
    (html / "_static" / "mathjax").symlink_to(MATHJAX, target_is_directory=True)
    for name, text in PAGES.items():
        (html / f"{name}.html").write_text(text)
    parts = tmp_path_factory.mktemp("parts")
    return editions.print_pages(html, list(PAGES), parts)


@pytest.fixture(scope="module")
def joined(printed, tmp_path_factory):
    out = tmp_path_factory.mktemp("pdf") / "test.pdf"
    info = editions.join_pdf([dict(p) for p in printed], out, "Test book")
    assert info["pages"] >= 2 and info["struct_elements"] > 20
    return out


pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_joined_pdf_passes_the_checker(joined):
    found = checker_findings(joined)
    assert not found.get("ERROR"), found
    assert set(found.get("WARNING", [])) <= NOT_CLAIMED, found


def test_the_joined_pdf_is_tagged_in_reading_order(joined):
    assert tag_problems(joined) == []
    pdf = pikepdf.open(joined)
    root = pdf.Root.StructTreeRoot
    document = root.K
    assert document.S == "/Document" and [str(p.S) for p in document.K] == ["/Part", "/Part"]
    assert str(pdf.Root.Lang) == "en"
    with pdf.open_metadata() as meta:
        assert meta["dc:title"] == "Test book"
    # the links say where they go: their own words
    contents = [str(a.Contents) for p in pdf.pages for a in p.obj.get("/Annots", []) if a.get("/Subtype") == "/Link"]
    assert {"link inside", "the second page", "outside", "link"} <= set(contents), contents
    # the figure keeps the image's alt text; the table cells of the two pages keep apart ids
    figures = []

    def walk(node):
        if isinstance(node, pikepdf.Dictionary) and node.get("/Type") not in ("/MCR", "/OBJR"):
            if node.get("/S") == "/Figure":
                figures.append(str(node.get("/Alt", "")))
            for kid in _kids(node):
                walk(kid)

    walk(document)
    assert figures == ["A red dot on white"]
    names = list(root.IDTree.Names)[::2]
    assert len(names) == len(set(str(n) for n in names)) >= 4


def test_an_untagged_pdf_fails(tmp_path):
    pdf = pikepdf.new()
    page = pdf.add_blank_page(page_size=(200, 200))
    font = pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1,
                                                BaseFont=pikepdf.Name.Helvetica))
    page.obj.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font))
    page.obj.Contents = pdf.make_stream(b"BT /F1 12 Tf 20 100 Td (untagged words) Tj ET")
    path = tmp_path / "untagged.pdf"
    pdf.save(path)
    assert "UA-01-005" in checker_findings(path).get("ERROR", [])
    assert "no structure tree" in tag_problems(path)


def test_the_pages_joined_without_their_trees_fail(printed, tmp_path, monkeypatch):
    monkeypatch.setattr(editions, "tag_joined", lambda out, printed, title: {"elements": 0, "links": 0})
    out = tmp_path / "plain.pdf"
    editions.join_pdf([dict(p) for p in printed], out, "Test book")
    assert checker_findings(out).get("ERROR")
    assert tag_problems(out)


def formula_alts(path):
    """The ``/Alt`` of every ``/Formula`` of the PDF at *path*, in reading order."""
    pdf = pikepdf.open(path)
    alts, stack = [], [pdf.Root.StructTreeRoot.K]
    while stack:
        node = stack.pop()
        if not isinstance(node, pikepdf.Dictionary) or node.get("/Type") in ("/MCR", "/OBJR"):
            continue
        if node.get("/S") == "/Formula":
            alts.append(str(node.get("/Alt", "")))
        stack.extend(reversed(_kids(node)))
    return alts


def test_each_formula_is_a_formula_with_its_spoken_text(printed, joined):
    """Each typeset formula, inline or displayed, is a ``/Formula`` whose ``/Alt`` speaks it
    (MathJax's speech rule engine on its MathML), a display equation with its number.  Independent
    truth: the TeX written in the page, whose letters, numbers and operators must be spoken."""
    counts = [{k: p["formulas"][k] for k in ("display", "inline", "unspoken")} for p in printed]
    assert counts == [{"display": 0, "inline": 0, "unspoken": 0}, {"display": 1, "inline": 1, "unspoken": 0}]
    alts = formula_alts(joined)
    assert len(alts) == 2, alts
    inline, display = alts
    assert re.fullmatch(r"epsilon squared", inline), inline
    for word in ("sigma", "sub A", "equals", "square root", "2", "log", "1.25", "divided by", "delta"):
        assert word in display, (word, display)
    assert display.endswith(", equation (2.1)"), display


def test_a_formula_left_as_a_figure_is_found(printed, tmp_path, monkeypatch):
    """Joined without the retagging, the formulas stay ``/Figure``s with the mark in their /Alt: reported."""
    import pdf_tags

    monkeypatch.setattr(pdf_tags, "_retag_formulas", lambda elem: 0)
    out = tmp_path / "no-formulas.pdf"
    editions.join_pdf([dict(p) for p in printed], out, "Test book")
    assert formula_alts(out) == []
    assert any("2 formulas left as /Figure" in p for p in tag_problems(out)), tag_problems(out)


def test_a_header_cell_without_its_scope_is_found(joined, tmp_path):
    """Chromium writes ``/A << /O /Table /Scope /Column >>`` on each ``<th>``; one taken away is reported."""
    pdf = pikepdf.open(joined)
    stack, cut = [pdf.Root.StructTreeRoot.K], 0
    while stack and not cut:
        node = stack.pop()
        if not isinstance(node, pikepdf.Dictionary) or node.get("/Type") in ("/MCR", "/OBJR"):
            continue
        if node.get("/S") == "/TH" and "/A" in node:
            del node["/A"]
            cut = 1
        stack.extend(_kids(node))
    assert cut
    out = tmp_path / "no-scope.pdf"
    pdf.save(out)
    assert "1 table header cells (/TH) without /Scope" in tag_problems(out)


def test_a_footer_left_outside_any_sequence_is_found(printed, tmp_path):
    # one page as Chromium printed it: tagged, but its footer is in no marked sequence
    found = checker_findings(printed[0]["file"])
    assert "UA-01-003" in found.get("ERROR", []), found
    assert any("outside any tagged or artifact sequence" in p for p in tag_problems(printed[0]["file"]))
