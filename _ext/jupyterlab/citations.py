"""The book's citation texts for JupyterLab, from ``references.bib`` (issue 22).

jupyterlab-myst has no bibliography: it prints a ``{cite:p}`` or ``{cite:t}`` role as its bib
key ("dwork2014algorithmic", marked "Citation Not Found").  The ``dpmask-live`` extension puts
the book's text in its place, from the table this module writes beside the extension
(``static/citations.json``, by ``install.py``): for every entry of ``references.bib``, the names
and year that sphinxcontrib-bibtex's ``author_year`` style prints in the book, and the full
reference that the book shows when the pointer rests on a citation.

- ``{cite:p}`key1,key2``` reads ``[Dwork and Roth, 2014, Sheffet, 2017]``, the keys in the
  bibliography's order;
- ``{cite:t}`key``` reads ``Dwork and Roth [2014]``;
- names: one author's last name, two joined by "and", three or more (or "and others") the
  first's and "et al."; an entry without authors is named by its ``key`` field.

The table is made by the same pybtex that sphinxcontrib-bibtex uses (its ``alpha`` formatting
style for the full reference); tests/test_live.py holds every citation JupyterLab shows to the
text of the built book, which sphinxcontrib-bibtex made.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _plain(rich) -> str:
    return rich.render_as("text").replace("\u00a0", " ").strip()


def names(entry) -> str:
    """The names the book's author-year style prints for *entry* ("Dwork and Roth", "Ding et al.")."""
    from pybtex.richtext import Text

    people = entry.persons.get("author") or entry.persons.get("editor") or []
    last = [_plain(Text(*p.rich_last_names)) for p in people]
    others = bool(last) and last[-1] == "others"
    if others:
        last = last[:-1]
    if not last:
        return _plain(Text.from_latex(entry.fields.get("key", entry.key)))
    if len(last) >= 3 or others:
        return f"{last[0]} et al."
    return " and ".join(last)


def citation_table(bib: Path | None = None) -> dict:
    """Map every key of *bib* (default: the repository's ``references.bib``) to its book texts.

    Returns ``{key: {"names": ..., "year": ..., "full": ..., "rank": ...}}`` (rank: the place in
    the sorted bibliography).
    """
    from pybtex.database import parse_file
    from pybtex.plugin import find_plugin

    data = parse_file(str(bib or ROOT / "references.bib"))
    style = find_plugin("pybtex.style.formatting", "alpha")()
    full = {e.key: _plain(e.text) for e in style.format_entries(data.entries.values())}
    # the bibliography's order (the style's sort: authors, year, title), in which the book lists
    # the keys of one citation: {cite:p}`wu2017new,ding2020privacy` reads "[Ding et al., 2020, Wu et al., 2017]"
    rank = {entry.key: i for i, entry in enumerate(style.sort(data.entries.values()))}
    return {
        key: {"names": names(entry), "year": entry.fields.get("year", ""), "full": full[key], "rank": rank[key]}
        for key, entry in data.entries.items()
    }


def write(target: Path, bib: Path | None = None) -> Path:
    """Write the table as JSON to *target* (a file); return it."""
    target.write_text(json.dumps(citation_table(bib), indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return target
