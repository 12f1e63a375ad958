"""A tagged PDF from pages Chromium printed one by one: what ``_ext/editions.py pdf`` does after joining.

Chromium prints each HTML page as a tagged PDF (``page.pdf(tagged=True)``): a structure tree
(headings, paragraphs, lists, tables with their header cells, figures with the image's alt text,
links), ``/Lang``, ``/MarkInfo``.  Joining the pages with pypdf keeps the pages, their marked
content and the outline but drops every structure tree.  This module puts them back, after the
join, with pikepdf:

- :func:`tag_joined` gives the joined file one ``/StructTreeRoot`` whose ``/Document`` holds each
  printed HTML page's tree, in reading order, as a ``/Part``: every structure element is copied,
  its page references (``/Pg``) and link annotations (``/OBJR``) pointed at the joined file's
  pages and annotations, the parent-tree keys of each part shifted past the previous part's (the
  pages' ``/StructParents``, the annotations' ``/StructParent``), and the table cells' ``/ID`` and
  ``/Headers`` prefixed per part so that two pages' ``node00000015`` do not collide in the one
  ``/IDTree``.
- A typeset formula, which ``_ext/editions.py`` names with its spoken text and Chromium prints
  as a ``/Figure``, becomes a ``/Formula`` with that text as its ``/Alt`` (:func:`_retag_formulas`).
- An HTML ``<figure>`` (image and caption), which Chromium tags as a ``/Figure`` holding the
  image's ``/Figure``, becomes a ``/Div``: only the image is a figure, with its alt text.
- Page furniture becomes an artifact (:func:`artifact_unmarked`): Chromium draws the footer
  (title and page number) outside any marked-content sequence, so every painting operator
  outside one is wrapped in ``/Artifact BMC … EMC``.
- Every link annotation gets a ``/Contents`` description: the link's own text (the text of the
  marked content under its ``/Link`` element), or where it has none, where it leads.
- The catalog gets ``/Lang`` (the HTML's), ``/MarkInfo /Marked true``, ``/ViewerPreferences
  /DisplayDocTitle true``, and the title in the XMP metadata as well as in ``/Info``.

Printing the whole book as one HTML page in one tagged Chromium call would give one tree without
a merge, but it would lose what the per-page printing gives: each chapter's own title in its
footer, a chapter starting on a fresh page, and the outline's page and height of every numbered
heading, which tests/test_publish.py checks.
"""

from __future__ import annotations

import sys
from pathlib import Path

_PATH_BUILD = {"m", "l", "c", "v", "y", "h", "re"}
_PATH_PAINT = {"S", "s", "f", "F", "f*", "B", "B*", "b", "b*"}
_PATH_CLIP_END = "n"  # ends a path without painting it (a clip): nothing to mark


def marked_text(reader_page) -> tuple[str, dict[int, str]]:
    """The page's text (pypdf's ``extract_text``) and the text of each marked-content id on it."""
    stack, texts = [], {}

    def before(op, args, cm, tm):
        if op == b"BDC":
            props = args[1] if len(args) > 1 else None
            stack.append(props.get("/MCID") if hasattr(props, "get") else None)
        elif op == b"BMC":
            stack.append(None)
        elif op == b"EMC" and stack:
            stack.pop()

    def text(t, cm, tm, font, size):
        mcid = next((m for m in reversed(stack) if m is not None), None)
        if mcid is not None:
            texts[int(mcid)] = texts.get(int(mcid), "") + t

    whole = reader_page.extract_text(visitor_operand_before=before, visitor_text=text) or ""
    return whole, texts


def artifact_unmarked(pdf, page) -> int:
    """Wrap every painting operator of *page* that no marked-content sequence holds in an ``/Artifact``.

    A text object (``BT … ET``), an XObject or shading paint, an inline image, or a painted path
    (from its first construction operator to its painting operator) is wrapped whole; a stray
    ``EMC`` with no sequence open (Chromium writes one before its footer) is dropped.  Returns the
    number of sequences added.
    """
    import pikepdf

    out, depth, added = [], 0, 0
    pending = None  # the start, in out, of a path being built at depth 0

    def bmc():
        return pikepdf.ContentStreamInstruction([pikepdf.Name.Artifact], pikepdf.Operator("BMC"))

    def emc():
        return pikepdf.ContentStreamInstruction([], pikepdf.Operator("EMC"))

    in_text = False
    for ins in pikepdf.parse_content_stream(page):
        if isinstance(ins, pikepdf.ContentStreamInlineImage):
            if depth == 0 and not in_text:
                out += [bmc(), ins, emc()]
                added += 1
            else:
                out.append(ins)
            continue
        op = str(ins.operator)
        if op in ("BDC", "BMC"):
            depth += 1
        elif op == "EMC":
            if depth == 0:
                continue  # closes nothing
            depth -= 1
        elif depth == 0 and not in_text:
            if op == "BT":
                out += [bmc(), ins]
                in_text, added = True, added + 1
                continue
            if op in _PATH_BUILD:
                pending = len(out) if pending is None else pending
            elif op in _PATH_PAINT and pending is not None:
                out.insert(pending, bmc())
                out += [ins, emc()]
                pending, added = None, added + 1
                continue
            elif op in _PATH_PAINT or op == _PATH_CLIP_END:
                pending = None
            elif op in ("Do", "sh"):
                out += [bmc(), ins, emc()]
                added += 1
                continue
        elif in_text and op == "ET" and depth == 0:
            out += [ins, emc()]
            in_text = False
            continue
        out.append(ins)
    page.obj.Contents = pdf.make_stream(pikepdf.unparse_content_stream(out))
    return added


def _flatten_number_tree(node) -> list:
    pairs = []
    if "/Nums" in node:
        nums = list(node.Nums)
        pairs += [(int(nums[i]), nums[i + 1]) for i in range(0, len(nums), 2)]
    for kid in node.get("/Kids", []):
        pairs += _flatten_number_tree(kid)
    return pairs


class _Copier:
    """Copy a structure tree from one PDF into another, objects already mapped left as mapped."""

    def __init__(self, dst, mapped: dict, id_prefix: str):
        self.dst, self.memo, self.prefix = dst, dict(mapped), id_prefix

    def copy(self, obj):
        import pikepdf

        if isinstance(obj, pikepdf.Stream):
            return self.dst.copy_foreign(obj)
        if isinstance(obj, (pikepdf.Dictionary, pikepdf.Array)):
            if obj.is_indirect:
                if obj.objgen in self.memo:
                    return self.memo[obj.objgen]
                new = self.dst.make_indirect(pikepdf.Dictionary() if isinstance(obj, pikepdf.Dictionary) else pikepdf.Array())
                self.memo[obj.objgen] = new
                return self._fill(new, obj)
            return self._fill(pikepdf.Dictionary() if isinstance(obj, pikepdf.Dictionary) else pikepdf.Array(), obj)
        if isinstance(obj, pikepdf.String):
            return pikepdf.String(bytes(obj))
        if isinstance(obj, pikepdf.Name):
            return pikepdf.Name(str(obj))
        return obj

    def _fill(self, new, obj):
        import pikepdf

        if isinstance(obj, pikepdf.Array):
            for item in obj:
                new.append(self.copy(item))
            return new
        for key, value in obj.items():
            if key == "/ID" and isinstance(value, pikepdf.String):
                new[key] = pikepdf.String(self.prefix + str(value))
            elif key == "/Headers" and isinstance(value, pikepdf.Array):
                new[key] = pikepdf.Array([pikepdf.String(self.prefix + str(v)) for v in value])
            else:
                new[key] = self.copy(value)
        return new


def _match_annots(src_page, dst_page) -> list[tuple]:
    """Pairs (source annotation, joined annotation) of one page: by order, checked by subtype and place."""
    src = [a for a in src_page.obj.get("/Annots", [])]
    dst = [a for a in dst_page.obj.get("/Annots", [])]

    def key(a):
        return (str(a.get("/Subtype")), tuple(round(float(x), 1) for x in a.get("/Rect", [])))

    if len(src) == len(dst) and all(key(a) == key(b) for a, b in zip(src, dst)):
        return list(zip(src, dst))
    by_key = {}
    for b in dst:
        by_key.setdefault(key(b), []).append(b)
    return [(a, by_key[key(a)].pop(0)) for a in src if by_key.get(key(a))]


def _link_description(annot, text: str) -> str:
    """A link's description: its own text, or, when it has none (an image, a formula), where it leads."""
    import pikepdf

    text = " ".join(text.split())
    if text:
        return text
    action = annot.get("/A")
    if action is not None and action.get("/S") == "/URI":
        return f"link to {bytes(action.URI).decode('latin-1')}"
    dest = annot.get("/Dest", action.get("/D") if action is not None else None)
    if dest is None or isinstance(dest, pikepdf.Array):
        return "link to another page of this document"
    return f"link to {str(dest).lstrip('/')}"


def _walk_links(elem, found):
    """Every ``/Link`` structure element under *elem* (depth first)."""
    import pikepdf

    if not isinstance(elem, pikepdf.Dictionary):
        return
    if elem.get("/S") == "/Link":
        found.append(elem)
    kids = elem.get("/K")
    if isinstance(kids, pikepdf.Array):
        for kid in kids:
            _walk_links(kid, found)
    elif isinstance(kids, pikepdf.Dictionary):
        _walk_links(kids, found)


def _content_of(elem, page_of, mcid_text) -> tuple[str, list]:
    """The text of the marked content under *elem* and its annotation objects (``/OBJR``); an element
    with an ``/Alt`` (a formula, an image) reads as its alt text, not as what it paints (a formula's
    wrapper paints only an invisible carrier, ``_ext/editions.py``)."""
    import pikepdf

    text, annots = [], []

    def walk(node, pg, quiet=False):
        if isinstance(node, pikepdf.Dictionary):
            if node.get("/Type") == "/OBJR":
                annots.append(node.get("/Obj"))
                return
            pg = node.get("/Pg", pg)
            if node.get("/Type") == "/MCR":
                walk(node.get("/MCID"), pg, quiet)
                return
            if "/Alt" in node and not quiet:
                text.append(f" {str(node.Alt).removeprefix(FORMULA_MARK).strip()} ")
                quiet = True
            kids = node.get("/K")
            for kid in (kids if isinstance(kids, pikepdf.Array) else [kids] if kids is not None else []):
                walk(kid, pg, quiet)
        elif quiet:
            return
        elif node is not None and pg is not None:
            try:
                mcid = int(node)
            except (TypeError, ValueError):
                return
            i = page_of.get(pg.objgen)
            if i is not None and i < len(mcid_text):
                text.append(mcid_text[i].get(mcid, ""))

    walk(elem, elem.get("/Pg"))
    return "".join(text), annots


def _describe_links(kids, page_of, mcid_text, mapped, annot_pairs) -> int:
    """Give every link annotation of one part a ``/Contents``: its ``/Link`` element's text, or its target."""
    import pikepdf

    n_links, links = 0, []
    for kid in kids if isinstance(kids, pikepdf.Array) else [kids]:
        _walk_links(kid, links)
    described = set()
    for link in links:
        text, objs = _content_of(link, page_of, mcid_text)
        for obj in objs:
            if obj is not None and obj.objgen in mapped:
                target = mapped[obj.objgen]
                target.Contents = pikepdf.String(_link_description(target, text))
                described.add(target.objgen)
                n_links += 1
    for _, b in annot_pairs:
        if b.get("/Subtype") == "/Link" and b.objgen not in described and "/Contents" not in b:
            b.Contents = pikepdf.String(_link_description(b, ""))
            n_links += 1
    return n_links


def tag_joined(out: Path, parts: list[dict], title: str, lang: str | None = None) -> dict:
    """Give the joined PDF *out* the structure trees of its *parts* (see the module's docstring).

    Parameters
    ----------
    out : Path
        The joined PDF (pages of the parts, in order), rewritten in place.
    parts : list of dict
        Per printed HTML page, in order: ``file`` (its own tagged PDF) and ``mcid_text`` (per page
        of it, the text of each marked-content id, from :func:`marked_text`).
    title : str
        The document's title (``/Info``, XMP ``dc:title``; shown by the viewer).
    lang : str, optional
        The natural language; default the first part's ``/Lang``.

    Returns
    -------
    dict
        Counts: structure elements, link annotations described, artifact sequences added.
    """
    import pikepdf

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    dst = pikepdf.open(out, allow_overwriting_input=True)
    root = dst.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.StructTreeRoot))
    document = dst.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.StructElem, S=pikepdf.Name.Document, P=root, K=pikepdf.Array()))
    root.K = document
    nums, ids, next_key, start = [], [], 0, 0
    n_links = 0
    for index, part in enumerate(parts):
        src = pikepdf.open(part["file"])
        if lang is None and "/Lang" in src.Root:
            lang = str(src.Root.Lang)
        n = len(src.pages)
        sroot = src.Root.get("/StructTreeRoot")
        if sroot is None:
            start += n
            continue
        mapped = {sroot.objgen: document}
        page_of = {}
        annot_pairs = []
        for i in range(n):
            sp, dp = src.pages[i], dst.pages[start + i]
            mapped[sp.obj.objgen] = dp.obj
            page_of[sp.obj.objgen] = i
            for a, b in _match_annots(sp, dp):
                if a.is_indirect:
                    mapped[a.objgen] = b
                annot_pairs.append((a, b))
        copier = _Copier(dst, mapped, f"p{index:02d}-")
        kids = sroot.get("/K")
        for kid in kids if isinstance(kids, pikepdf.Array) else [kids]:
            new = copier.copy(kid)
            if new.get("/S") == "/Document":
                new.S = pikepdf.Name.Part
            new.P = document
            document.K.append(new)
        for key, value in _flatten_number_tree(sroot.ParentTree):
            nums.append((key + next_key, copier.copy(value)))
        for i in range(n):
            sp, dp = src.pages[i], dst.pages[start + i]
            if "/StructParents" in sp.obj:
                dp.obj.StructParents = int(sp.obj.StructParents) + next_key
        for a, b in annot_pairs:
            if "/StructParent" in a:
                b.StructParent = int(a.StructParent) + next_key
            elif "/StructParent" in b:
                del b["/StructParent"]
        n_links += _describe_links(kids, page_of, part["mcid_text"], mapped, annot_pairs)
        for key in ("/RoleMap", "/ClassMap"):  # none in Chromium's output so far; kept if one comes
            if key in sroot:
                merged = root.get(key) or pikepdf.Dictionary()
                for name, value in sroot[key].items():
                    merged[name] = copier.copy(value)
                root[key] = merged
        next_key += int(sroot.get("/ParentTreeNextKey", max([k for k, _ in _flatten_number_tree(sroot.ParentTree)] or [-1]) + 1))
        start += n
    # one IDTree for the table cells of every part
    for elem in _walk_ids(document):
        ids.append(elem)
    if ids:
        names = pikepdf.Array()
        for elem in sorted(ids, key=lambda e: bytes(e.ID)):
            names.append(pikepdf.String(bytes(elem.ID)))
            names.append(elem)
        root.IDTree = dst.make_indirect(pikepdf.Dictionary(Names=names))
    nums.sort(key=lambda kv: kv[0])
    flat = pikepdf.Array()
    for key, value in nums:
        flat.append(key)
        flat.append(value)
    root.ParentTree = dst.make_indirect(pikepdf.Dictionary(Nums=flat))
    root.ParentTreeNextKey = next_key
    n_formulas = _retag_formulas(document)
    n_regrouped = _regroup_figures(document)
    if lang:
        document.Lang = pikepdf.String(lang)
    n_artifacts = sum(artifact_unmarked(dst, page) for page in dst.pages)
    cat = dst.Root
    cat.StructTreeRoot = root
    cat.MarkInfo = pikepdf.Dictionary(Marked=True)
    cat.Lang = pikepdf.String(lang or "en")
    cat.ViewerPreferences = pikepdf.Dictionary(DisplayDocTitle=True)
    dst.docinfo["/Title"] = title
    with dst.open_metadata(set_pikepdf_as_editor=False) as meta:
        meta["dc:title"] = title
    n_elems = _count(document)
    dst.save(out)
    dst.close()
    return {"elements": n_elems, "links": n_links, "artifacts": n_artifacts, "regrouped": n_regrouped,
            "formulas": n_formulas}


#: The mark ``_ext/editions.py`` puts before a formula's spoken text (a private-use character).
FORMULA_MARK = "\ue000"


def _retag_formulas(elem) -> int:
    """Retag as ``/Formula`` every ``/Figure`` whose ``/Alt`` starts with :data:`FORMULA_MARK`.

    ``_ext/editions.py`` names each typeset formula with its spoken text behind the mark and gives
    it the role ``img``, which Chromium prints as a ``/Figure`` with that ``/Alt``.  Here the figure
    becomes what it is, a ``/Formula`` (PDF 32000-1, 14.8.4.5; PDF/UA-1 7.7 asks it for an
    ``/Alt``), and the mark is dropped from its ``/Alt``.  Returns how many were retagged.
    """
    import pikepdf

    n, stack = 0, [elem]
    while stack:
        node = stack.pop()
        if node.get("/S") == "/Figure" and "/Alt" in node:
            alt = str(node.Alt)
            if alt.startswith(FORMULA_MARK):
                node.S = pikepdf.Name.Formula
                node.Alt = pikepdf.String(alt[len(FORMULA_MARK):].strip())
                n += 1
        stack.extend(_elements(node))
    return n


def _regroup_figures(elem) -> int:
    """Retag as ``/Div`` every ``/Figure`` without alt text that holds another ``/Figure``.

    Chromium tags an HTML ``<figure>`` (the image and its caption) as a ``/Figure`` and the
    ``<img>`` inside it as a second one, with the image's alt text.  The outer one is a group,
    not an image: as a ``/Figure`` without ``/Alt`` it would be skipped by a screen reader, caption
    and all.  Returns how many were retagged.
    """
    import pikepdf

    def holds_figure(node):
        for kid in _elements(node):
            if kid.get("/S") == "/Figure" or holds_figure(kid):
                return True
        return False

    n, stack = 0, [elem]
    while stack:
        node = stack.pop()
        if node.get("/S") == "/Figure" and "/Alt" not in node and "/ActualText" not in node and holds_figure(node):
            node.S = pikepdf.Name.Div
            n += 1
        stack.extend(_elements(node))
    return n


def _elements(node) -> list:
    """The structure elements among *node*'s kids (not marked-content ids or object references)."""
    import pikepdf

    kids = node.get("/K")
    kids = list(kids) if isinstance(kids, pikepdf.Array) else [kids] if kids is not None else []
    return [k for k in kids if isinstance(k, pikepdf.Dictionary) and k.get("/Type") not in ("/MCR", "/OBJR")]


def _walk_ids(elem):
    import pikepdf

    stack = [elem]
    while stack:
        node = stack.pop()
        if not isinstance(node, pikepdf.Dictionary) or node.get("/Type") in ("/MCR", "/OBJR"):
            continue
        if "/ID" in node and node.get("/S") is not None:
            yield node
        kids = node.get("/K")
        if isinstance(kids, pikepdf.Array):
            stack.extend(kids)
        elif isinstance(kids, pikepdf.Dictionary):
            stack.append(kids)


def _count(elem) -> int:
    import pikepdf

    n, stack = 0, [elem]
    while stack:
        node = stack.pop()
        if not isinstance(node, pikepdf.Dictionary) or node.get("/Type") in ("/MCR", "/OBJR"):
            continue
        n += 1
        kids = node.get("/K")
        if isinstance(kids, pikepdf.Array):
            stack.extend(kids)
        elif isinstance(kids, pikepdf.Dictionary):
            stack.append(kids)
    return n
