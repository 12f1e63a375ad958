"""docs/ARCHITECTURE.md against the tree: the map must name what exists and nothing else.

The map has two machine-read parts (see its sections "Chapters" and "Layers"):

- the table from each page of ``_toc.yml`` to the ``dpmask`` modules it calls, the test files that
  check them and the benchmark that times them;
- the layer drawing: every module of ``dpmask/`` (``widgets/`` submodules included) on a level,
  each level strictly above every module it imports; a group of modules that import one another
  is drawn in braces, ``{a.py ⇄ b.py}``, on one level.

Independent truth: the import graph is computed here with ``ast`` from the package's source
(module-level and function-level imports, relative and absolute); a page's modules are computed
from its code cells (its ``import``/``from dpmask ...`` statements and the ``module.name`` uses,
each name resolved to the module that defines it) and, for the Markdown pages, from their
``automodule`` directives and Python code blocks.  Every failure says what to update.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import subprocess
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "dpmask"
MAP = ROOT / "docs" / "ARCHITECTURE.md"
# Every chapter imports dpmask.book (glue_num, glued, show_figure); the map says so once instead of
# in every row.
EVERYWHERE = {"book.py"}


# --- the code ------------------------------------------------------------------------------------


def package_modules():
    """Every module of dpmask as a path under dpmask/: 'bounds.py', 'widgets/noise.py', '__init__.py'."""
    return {p.relative_to(PKG).as_posix() for p in PKG.rglob("*.py") if "__pycache__" not in p.parts}


def _module_path(dotted):
    """'widgets.noise' -> 'widgets/noise.py'; 'widgets' -> 'widgets/__init__.py'; '' -> '__init__.py'."""
    parts = [p for p in dotted.split(".") if p]
    if not parts:
        return "__init__.py"
    if (PKG.joinpath(*parts) / "__init__.py").exists():
        return "/".join(parts) + "/__init__.py"
    return "/".join(parts) + ".py"


def import_graph():
    """For every module of dpmask, the set of dpmask modules it imports anywhere in its source."""
    graph = {}
    for rel in package_modules():
        parts = rel[:-3].split("/")
        package = parts[:-1]  # the package the module sits in (for __init__.py: that package)
        deps = set()
        for node in ast.walk(ast.parse((PKG / rel).read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    target = ".".join(base + (node.module.split(".") if node.module else []))
                elif node.module == "dpmask" or (node.module or "").startswith("dpmask."):
                    target = node.module[len("dpmask"):].lstrip(".")
                else:
                    continue
                for alias in node.names:  # `from . import audit` imports the module audit
                    sub = f"{target}.{alias.name}".lstrip(".")
                    if (PKG / (sub.replace(".", "/") + ".py")).exists() or (PKG / sub.replace(".", "/")).is_dir():
                        deps.add(_module_path(sub))
                    else:
                        deps.add(_module_path(target))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "dpmask" or alias.name.startswith("dpmask."):
                        deps.add(_module_path(alias.name[len("dpmask"):].lstrip(".")))
        deps.discard(rel)
        graph[rel] = deps
    return graph


def cycles(graph):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return set(out)


# --- the map -------------------------------------------------------------------------------------


def _section(text, title):
    m = re.search(rf"^## {re.escape(title)}\b.*?$(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"docs/ARCHITECTURE.md has no section '## {title}'"
    return m.group(1)


def drawn_layers(text=None):
    """(level of each drawn module, the drawn cycle groups) from the first ```text block of '## Layers'."""
    text = MAP.read_text() if text is None else text
    block = re.search(r"```text\n(.*?)```", _section(text, "Layers"), re.S)
    assert block, "the section '## Layers' of docs/ARCHITECTURE.md has no ```text drawing"
    levels, groups = {}, set()
    for line in block.group(1).splitlines():
        m = re.match(r"\s*level (\d+)\s*│(.*)$", line)
        if not m:
            continue
        for group in re.findall(r"\{([^}]*)\}", m.group(2)):
            groups.add(frozenset(re.findall(r"[\w/]+\.py", group)))
        for name in re.findall(r"[\w/]+\.py", m.group(2)):
            assert name not in levels, f"{name} is drawn on two levels ({levels[name]} and {m.group(1)})"
            levels[name] = int(m.group(1))
    return levels, groups


def table_rows(text=None):
    """{page: (modules, tests, benchmarks)} from the table of '## Chapters'."""
    text = MAP.read_text() if text is None else text
    rows = {}
    for line in _section(text, "Chapters").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|") or len(cells) != 4:
            continue
        page = re.search(r"`((?:chapters/)?[\w]+)`", cells[0])
        if not page:
            continue  # the header and the rule
        rows[page.group(1)] = (set(re.findall(r"[\w/]+\.py", cells[1])),
                               set(re.findall(r"test_\w+\.py", cells[2])),
                               cells[3])
    return rows


def toc_pages():
    toc = (ROOT / "_toc.yml").read_text()
    return set(re.findall(r"^root: (\S+)", toc, re.M)) | set(re.findall(r"file: (\S+)", toc))


# --- what a page calls ---------------------------------------------------------------------------


def _defining_module(obj, via):
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj):
        module = getattr(obj, "__module__", "") or ""
        if module == "dpmask" or module.startswith("dpmask."):
            return module
    return via.__name__  # a constant: the module it was read from


def _record(used, name):
    """Add a dotted dpmask module name, as a path; packages (__init__) are only doors."""
    path = _module_path(name[len("dpmask"):].lstrip("."))
    if not path.endswith("__init__.py"):
        used.add(path)


def _uses_in_code(source, used, aliases):
    """Add to ``used`` the dpmask modules that a piece of Python source imports or calls.

    ``aliases`` (local name -> dpmask module) carries the imports from one cell to the next."""
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    tree = ast.parse("\n".join(lines))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] != "dpmask":
                    continue
                if a.asname:
                    aliases[a.asname] = importlib.import_module(a.name)
                else:
                    aliases["dpmask"] = importlib.import_module("dpmask")
                _record(used, a.name)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "dpmask":
            module = importlib.import_module(node.module)
            _record(used, node.module)
            for a in node.names:
                try:  # `from dpmask import exact` imports the submodule exact
                    obj = importlib.import_module(f"{node.module}.{a.name}")
                except ImportError:
                    obj = getattr(module, a.name)
                if isinstance(obj, types.ModuleType):
                    aliases[a.asname or a.name] = obj
                _record(used, _defining_module(obj, module))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain, base = [], node
        while isinstance(base, ast.Attribute):
            chain.append(base.attr)
            base = base.value
        if not (isinstance(base, ast.Name) and base.id in aliases):
            continue
        current = aliases[base.id]
        for attr in reversed(chain):
            if not hasattr(current, attr):
                break
            obj = getattr(current, attr)
            _record(used, _defining_module(obj, current))
            if not isinstance(obj, types.ModuleType):
                break
            current = obj


def page_modules(page):
    """The dpmask modules a page of the book calls (book.py aside)."""
    used, aliases = set(), {}
    nb = ROOT / f"{page}.ipynb"
    if nb.exists():
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] == "code":
                _uses_in_code("".join(cell["source"]), used, aliases)
    else:
        text = (ROOT / f"{page}.md").read_text()
        for name in re.findall(r"automodule:: (dpmask[\w.]*)", text):
            _record(used, name)
            module = importlib.import_module(name)
            for member in getattr(module, "__all__", ()):
                _record(used, _defining_module(getattr(module, member), module))
        for block in re.findall(r"```(?:python|\{code-cell\}[^\n]*)\n(.*?)```", text, re.S):
            _uses_in_code(block, used, aliases)
    return used - EVERYWHERE


# --- the checks ----------------------------------------------------------------------------------


def test_every_module_is_on_the_map():
    levels, _ = drawn_layers()
    graph = import_graph()
    missing = package_modules() - set(levels)
    hints = []
    for name in sorted(missing):
        deps = sorted(graph[name])
        drawn = [levels[d] for d in deps if d in levels]
        hints.append(f"{name} on level {max(drawn, default=-1) + 1} (it imports "
                     + (", ".join(f"{d} (level {levels.get(d, '?')})" for d in deps) or "nothing of dpmask") + ")")
    assert not missing, ("docs/ARCHITECTURE.md, section Layers: draw these modules of dpmask/ (and add them to the "
                         "rows of the pages that call them): " + "; ".join(hints))


def test_every_module_on_the_map_exists():
    text = MAP.read_text()
    levels, _ = drawn_layers(text)
    named = set(levels) | {m for mods, _, _ in table_rows(text).values() for m in mods}
    named |= set(re.findall(r"dpmask/([\w/]+\.py)", text))
    absent = named - package_modules()
    assert not absent, (f"docs/ARCHITECTURE.md names {sorted(absent)}, which dpmask/ no longer has: remove or "
                        "rename them (in the layer drawing, the table and the text)")


def test_layers_follow_the_import_graph():
    levels, groups = drawn_layers()
    graph = import_graph()
    found = cycles(graph)
    assert groups <= found, (
        f"docs/ARCHITECTURE.md draws the import cycle(s) {[sorted(g) for g in groups - found]}, which the code no "
        "longer has: draw each module of it "
        "on its own level, above what it imports, and drop the braces and the paragraph about the cycle")
    assert found <= groups, (
        f"dpmask/ has new import cycle(s) {[sorted(g) for g in found - groups]}: break them with a module below both "
        "(preferred), or draw the cycle in braces on one level and say why in the section Layers")
    in_group = {m: g for g in groups for m in g}
    wrong = []
    for module, deps in sorted(graph.items()):
        for dep in sorted(deps):
            if module in levels and dep in levels and levels[module] <= levels[dep]:
                if in_group.get(module) is not None and in_group.get(module) is in_group.get(dep):
                    if levels[module] == levels[dep]:
                        continue
                wrong.append(f"{module} (level {levels[module]}) imports {dep} (level {levels[dep]})")
    assert not wrong, ("docs/ARCHITECTURE.md, section Layers: a module must sit above everything it imports; move "
                       "it up (or the import down): " + "; ".join(wrong))


def test_every_page_of_the_toc_has_a_row():
    rows = table_rows()
    pages = toc_pages()
    assert not pages - set(rows), (f"docs/ARCHITECTURE.md, section Chapters: add a row for {sorted(pages - set(rows))} "
                                   "(listed in _toc.yml)")
    assert not set(rows) - pages, (f"docs/ARCHITECTURE.md, section Chapters: the rows {sorted(set(rows) - pages)} "
                                   "name pages that _toc.yml no longer lists")


@pytest.mark.parametrize("page", sorted(toc_pages()))
def test_row_names_the_modules_the_page_calls(page):
    rows = table_rows()
    if page not in rows:
        pytest.skip("no row (test_every_page_of_the_toc_has_a_row fails)")
    named, computed = rows[page][0], page_modules(page)
    assert named == computed, (
        f"docs/ARCHITECTURE.md, section Chapters, row {page}: the page calls {sorted(computed)} (each name resolved to "
        f"the module that defines it; book.py aside); add {sorted(computed - named)}, remove {sorted(named - computed)}")


def _checks(path, page, modules):
    """Does a test or benchmark file name the page, or import or call one of the row's modules?"""
    text = path.read_text()
    if re.search(rf"\b{re.escape(page.split('/')[-1])}\b", text):
        return True
    used = set()
    _uses_in_code(text, used, {})
    if "widgets.__all__" in text:  # a loop over every explorer (bench_widgets.py, bench_widgets_live.py)
        widgets = importlib.import_module("dpmask.widgets")
        for name in widgets.__all__:
            _record(used, _defining_module(getattr(widgets, name), widgets))
    return bool(used & modules)


def test_named_tests_and_benchmarks_exist_and_check_the_row():
    problems = []
    for page, (modules, tests, bench) in sorted(table_rows().items()):
        for test in sorted(tests):
            path = ROOT / "tests" / test
            if not path.exists():
                problems.append(f"row {page}: tests/{test} does not exist")
            elif not _checks(path, page, modules):
                problems.append(f"row {page}: tests/{test} neither names the page nor imports {sorted(modules)}")
        benches = re.findall(r"bench_\w+\.py", bench)
        if not benches and not bench.strip().startswith("none"):
            problems.append(f"row {page}: the benchmark cell must name benchmarks/bench_*.py or say none")
        for name in benches:
            path = ROOT / "benchmarks" / name
            if not path.exists():
                problems.append(f"row {page}: benchmarks/{name} does not exist")
            elif not _checks(path, page, modules):
                problems.append(f"row {page}: benchmarks/{name} imports none of {sorted(modules)}")
    assert not problems, "docs/ARCHITECTURE.md, section Chapters: " + "; ".join(problems)


def test_the_one_hop_search_for_a_lemma_finds_its_code():
    text = MAP.read_text()
    m = re.search(r'`grep -rn "(Lemma [\d.]+)" dpmask/`', text)
    assert m, "docs/ARCHITECTURE.md should show the one-hop search `grep -rn \"Lemma N.M\" dpmask/`"
    hits = subprocess.run(["grep", "-l", m.group(1), *map(str, sorted(PKG.rglob("*.py")))],
                          capture_output=True, text=True).stdout
    assert hits.strip(), f"no module of dpmask/ names {m.group(1)} in its docstrings: pick a lemma that one does"


def test_the_map_parser_can_fail():
    """The parsers read what a broken map says (so a check above cannot pass on an unread drawing)."""
    text = MAP.read_text()
    levels, _ = drawn_layers(text)
    assert levels["_validate.py"] == 0
    broken = re.sub(r"(level 0 │.*?)_validate\.py", r"\1_gone.py", text, count=1)
    assert "_validate.py" not in drawn_layers(broken)[0]
    assert len(table_rows(text)) == len(toc_pages())
