"""Layout slips a reader hits that no build warns about, caught in the sources (no build needed).

An accidental numbered list.  In Markdown (CommonMark, and so MyST and JupyterLab) a line that
begins "1. " or "1) " starts an ordered list even in the middle of a paragraph: a sentence
wrapped as "... the fourth moments (kurtosis\\n1) and compares ..." renders as the text
"... (kurtosis" followed by a numbered list "1. and compares ...".  The check parses every
markdown cell of every notebook and every .md page with the book's own parser (myst-parser's
markdown-it, with the extensions of ``_config.yml``), also inside directives (theorems, exercises,
notes), and reports each ordered list that follows a paragraph line with no blank line between.
A list the author means must be set off by a blank line, which the check then accepts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]

# Directives whose body is not Markdown (code, TeX, reStructuredText, data).
_NOT_MARKDOWN = {"code-cell", "code", "code-block", "sourcecode", "math", "eval-rst", "raw", "csv-table", "list-table", "glue:math"}


def _parser():
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    extensions = set((cfg.get("parse") or {}).get("myst_enable_extensions") or [])
    return create_md_parser(MdParserConfig(enable_extensions=extensions), RendererHTML)


def _directive_body(token) -> tuple[str, str | None, int]:
    """(body, directive name, line offset of the body) of a fence or colon fence token."""
    m = re.match(r"^\s*\{(?P<name>[^}]+)\}", token.info or "")
    if not m:
        return "", None, 0
    lines = token.content.split("\n")
    skip = 0
    while skip < len(lines) and re.match(r"^\s*:[\w-]+:", lines[skip]):
        skip += 1
    return "\n".join(lines[skip:]), m.group("name").strip(), skip + 1


def _open_math(paragraph_lines) -> bool:
    """True when the paragraph's text leaves an inline ``$`` open (an odd count of unescaped ``$``)."""
    text = re.sub(r"`[^`]*`", "", "\n".join(paragraph_lines)).replace("$$", "")
    return len(re.findall(r"(?<!\\)\$", text)) % 2 == 1


def accidental_lists(text: str, md=None, offset: int = 0) -> list[tuple[int, str]]:
    """[(line, text)] of every list in *text* that interrupts a paragraph by accident (0-based lines).

    An ordered list always (a wrapped "(kurtosis\\n1)"); a bullet list when the paragraph before it
    leaves inline math open (a formula wrapped before "+ ", "- " or "* ")."""
    md = md or _parser()
    tokens = md.parse(text)
    lines = text.split("\n")
    found = []
    for i, tok in enumerate(tokens):
        if tok.type in ("fence", "colon_fence"):
            body, name, skip = _directive_body(tok)
            if name and name not in _NOT_MARKDOWN and tok.map:
                found += accidental_lists(body, md, offset + tok.map[0] + skip)
            continue
        if tok.type not in ("ordered_list_open", "bullet_list_open") or not tok.map:
            continue
        # the block just before the list, at the same level
        j, prev = next(((j, t) for j, t in reversed(list(enumerate(tokens[:i])))
                        if t.level == tok.level and t.nesting >= 0 and t.block), (None, None))
        if prev is None or prev.type != "paragraph_open" or not prev.map or prev.map[1] != tok.map[0]:
            continue
        # a bullet list after a paragraph line is usually meant ("Two cases:\n- ..."), unless the
        # paragraph stops inside inline math: "$a\n+ b$" wrapped before a plus sign
        if tok.type == "bullet_list_open" and not _open_math(lines[prev.map[0]:prev.map[1]]):
            continue
        line = tok.map[0]
        found.append((offset + line, lines[line - 1].strip() + " ⏎ " + lines[line].strip()))
    return found


def _markdown_sources():
    """(where, text) of every markdown cell of every notebook and every .md page of the book."""
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        nb = json.loads(path.read_text())
        for k, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "markdown":
                src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
                yield f"{path.relative_to(ROOT)} cell {k}", src
    for path in [ROOT / "index.md", *sorted((ROOT / "chapters").glob("*.md"))]:
        yield str(path.relative_to(ROOT)), path.read_text()


def test_the_detector_sees_an_accidental_list_and_spares_a_real_one():
    md = _parser()
    # chapter 9's slip, in the two forms a wrapped line can take
    assert accidental_lists("uses the fourth moments (kurtosis\n1) and compares them.\n", md)
    assert accidental_lists("the slope is larger than\n1. The next point is ...\n", md)
    # inside a directive, at its true line
    planted = "Text.\n\n```{prf:theorem}\n:label: thm-x\n\nHolds for all (p\n1) and n.\n```\n"
    assert [line for line, _ in accidental_lists(planted, md)] == [6]
    assert accidental_lists(":::{note}\nSee the\n1) second case.\n:::\n", md)
    # a list set off by a blank line, a list after a heading, numbers in math and code: fine
    assert not accidental_lists("Two steps:\n\n1. one\n2. two\n", md)
    assert not accidental_lists("## Steps\n1. one\n2. two\n", md)
    assert not accidental_lists("$$\na\n1. b\n$$\n", md)
    assert not accidental_lists("```python\nx = (a\n1) + b\n```\n", md)
    assert accidental_lists("- an item whose text wraps (see\n  1) below)\n", md)  # inside a bullet too
    assert not accidental_lists("The value is 1. Then\n2. is not a list start.\n", md)
    # chapter 9's second slip: a formula wrapped before a plus sign turns its tail into a bullet
    assert accidental_lists("the tensor $a_{bc}\\delta_{ad}\n+ b_{bd}$ of the cross terms.\n", md)
    assert accidental_lists("with $x\n- y$ here.\n", md)
    assert not accidental_lists("Two cases:\n- one\n- two\n", md)  # a list meant after a line
    assert not accidental_lists("Here $x$ and $y$:\n- one\n", md)   # math closed before the list


def test_no_paragraph_line_turns_into_a_numbered_list():
    md = _parser()
    slips = [f"{where}, line {line}: {context!r}" for where, text in _markdown_sources()
             for line, context in accidental_lists(text, md)]
    assert not slips, (
        "a line beginning '1. ' or '1) ' inside a paragraph starts a numbered list, and one beginning "
        "'+ ', '- ' or '* ' inside inline math a bullet list; rewrap the sentence (or put a blank "
        "line before a list you mean):\n" + "\n".join(slips)
    )


@pytest.mark.parametrize("where", ["index.md", "chapters/course.md", "chapters/notation.md"])
def test_md_pages_are_scanned(where):
    assert any(w == where for w, _ in _markdown_sources())
