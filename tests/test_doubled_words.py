"""No doubled word in what the book prints: "the the", "Definition Definition 2.1".

A reference role prints its own text (``{prf:ref}`Definition 2.1 <def-2-1>``` prints "Definition
2.1"), so the word a writer puts before it is printed twice ("and Definition Definition 2.1" in
chapter 7a, found by a reader, not by a test); nor is a plain "the the" caught by the strict
build.  This test reads the rendered text of every page of the built HTML book, as a reader
sees it (the values of ``{eval}`` roles and the texts of references in place), and fails on two
words in a row that are the same (case aside, but for one-letter words: "Setting A a person" is
English), or the same but for a plural "s" ("Definitions Definition 2.1").  It ignores code (code cells, their text outputs, inline code) and mathematics,
which are replaced by a mark that breaks a run of words, and it never joins words across blocks
(paragraphs, list items, table cells, headings, captions).

tests/test_publish.py runs the same check on the student edition.
"""

from __future__ import annotations

import os
import re
from pathlib import Path



ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("DPMASK_BOOK_OUT", ROOT)) / "_build" / "html"

# Elements whose text is a block of its own: words are never paired across their edges.
BLOCKS = {
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div", "dl", "dt",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "img",
    "label", "li", "main", "nav", "ol", "p", "section", "summary", "table", "tbody", "td", "tfoot",
    "th", "thead", "title", "tr", "ul", "button", "option", "select",
}
# Not prose: left out.  Code and mathematics leave a mark that breaks a run of words
# ("for $x$ $x$" is not a doubled word).
DROPPED = "script, style, noscript, template, svg, a.headerlink"
MARKED = "pre, code, kbd, samp, .math, span.eqno, div.cell_input, div.highlight, div.cell_output .output"
MARK = " \u25aa "
SEP = "\u2029"
WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
# English allows a few words twice ("that that"); none is in the book today.  Add one here, with
# the page and the sentence, only when the sentence cannot be written better.
ALLOWED: set[str] = set()


def rendered_blocks(html: str) -> list[str]:
    """The text a reader sees on the page, one string per block, code and math replaced by MARK."""
    from bs4 import BeautifulSoup
    from bs4.element import Tag

    soup = BeautifulSoup(html, "html.parser")
    body = soup.body or soup
    for tag in body.select(DROPPED):
        tag.decompose()
    for tag in body.select(MARKED):
        if tag.parent is not None:  # not inside one replaced already
            tag.replace_with(MARK)
    for tag in list(body.find_all(True)):
        if isinstance(tag, Tag) and tag.name in BLOCKS:
            tag.insert(0, SEP)
            tag.append(SEP)
    return [b for b in (" ".join(s.split()) for s in body.get_text("").split(SEP)) if b]


def _same(a: str, b: str) -> bool:
    if min(len(a), len(b)) == 1:  # "In Setting A a person ...": a one-letter name is not the article
        return a == b
    a, b = a.lower(), b.lower()
    return a == b or (min(len(a), len(b)) >= 3 and (a + "s" == b or b + "s" == a))


def doubled_words(text: str) -> list[str]:
    """Each place in *text* where a word is followed, across nothing but spaces, by itself."""
    found, prev = [], None
    for m in WORD.finditer(text):
        if prev is not None and _same(prev.group(), m.group()) and text[prev.end() : m.start()].isspace():
            if f"{prev.group()} {m.group()}".lower() not in ALLOWED:
                found.append(text[max(0, prev.start() - 40) : m.end() + 40])
        prev = m
    return found


def html_pages(html_dir: Path) -> list[Path]:
    """Every page a reader can open: the book's pages, the index and the module index."""
    return [p for p in sorted(Path(html_dir).rglob("*.html"))
            if not {"_static", "_sources", "_images"} & set(p.relative_to(html_dir).parts) and p.name != "search.html"]


def doubled_words_in_book(html_dir: Path) -> dict[str, list[str]]:
    problems = {}
    for path in html_pages(html_dir):
        hits = [h for block in rendered_blocks(path.read_text(encoding="utf-8", errors="replace")) for h in doubled_words(block)]
        if hits:
            problems[str(path.relative_to(html_dir))] = hits
    return problems


def test_the_check_sees_through_markup_and_not_across_code_math_or_blocks():
    page = (
        "<html><body><main><p>It uses Lemma 5.4, and Definition <a class='reference internal' href='x'>"
        "<span class='std std-ref'>Definition 2.1</span></a> of neighbours.</p>"
        "<p>It uses chapter 2 (Definitions <a href='y'><span>Definition 2.1</span></a>).</p>"
        "<p>We take <em>the</em>\n the noise.</p>"
        "<p>for <span class='math notranslate nohighlight'>\\(x\\)</span> and for "
        "<span class='math notranslate nohighlight'>\\(x\\)</span> alone; so <code>sigma</code> sigma is fine</p>"
        "<table><tr><td>yes</td><td>yes</td></tr></table><ul><li>Noise</li><li>noise</li></ul>"
        "<div class='cell_input'><pre>print(the the)</pre></div><p>That, that is all; Fig. 9.3 figures</p>"
        "</main></body></html>"
    )
    hits = [h for b in rendered_blocks(page) for h in doubled_words(b)]
    assert len(hits) == 3, hits
    assert "and Definition Definition 2.1" in hits[0] and "(Definitions Definition 2.1" in hits[1]
    assert "take the the noise" in hits[2]


def test_no_page_prints_a_doubled_word(built_book):
    pages = html_pages(HTML)
    assert len(pages) >= 15 and any(p.name == "07a_exact_p2.html" for p in pages)
    problems = doubled_words_in_book(HTML)
    assert not problems, problems


def test_a_doubled_word_planted_in_a_built_page_is_found(built_book, tmp_path):
    """The typo as it was: the word of a reference's text written once more before it."""
    page = HTML / "chapters" / "07a_exact_p2.html"
    planted = tmp_path / "chapters" / page.name
    planted.parent.mkdir()
    ref = re.compile(r'(<a class="reference internal"[^>]*>(?:\s*<span[^>]*>)?)(Definition)(\s)')
    text = page.read_text(encoding="utf-8")
    assert ref.search(text), "07a no longer refers to a Definition; plant the typo before another reference"
    planted.write_text(ref.sub(r"\2 \1\2\3", text, count=1), encoding="utf-8")
    problems = doubled_words_in_book(tmp_path)
    assert list(problems) == ["chapters/07a_exact_p2.html"] and len(problems["chapters/07a_exact_p2.html"]) == 1, problems
    assert "Definition Definition" in problems["chapters/07a_exact_p2.html"][0]
