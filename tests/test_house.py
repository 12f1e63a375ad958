"""The house holds: small rooms, and imports that run one way (issue 18).

* No module of ``dpmask/`` or ``_ext/`` is over 1,000 lines, and no function over 120 lines
  (``end_lineno - lineno + 1``) unless its docstring says it "cannot be split" and why.
* The import graph of ``dpmask`` (every ``from .x import`` / ``from . import x`` /
  ``import dpmask.x``, at module level and inside functions) has no cycle, and
  ``dpmask._validate``, the base, imports no other dpmask module.
* ``_ext`` has no cycle: ``tests/test_ext_imports.py`` holds that (its ``cycles`` is reused here).
* The families stack (issue 30): ``dpmask.paper`` (what the paper states) imports neither
  ``dpmask.exact`` nor ``dpmask.rivals``; ``dpmask.exact`` (the exact privacy the paper does not
  compute) does not import ``dpmask.rivals``; ``dpmask.scale`` and the modules beside the families
  that they use (``_validate``, ``_safe``, ``inference``, ...) import no family above them; nothing
  outside ``dpmask.widgets`` imports it.  A planted upward import fails the check.
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_ext_imports import cycles

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dpmask"
MODULE_MAX = 1000
FUNCTION_MAX = 120


def python_files():
    return sorted([*PACKAGE.rglob("*.py"), *(ROOT / "_ext").glob("*.py")])


def oversized(paths):
    """(what, lines) for every module over MODULE_MAX lines and unexcused function over FUNCTION_MAX."""
    found = []
    for path in paths:
        text = path.read_text()
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.relative_to(path.parents[1])
        if len(text.splitlines()) > MODULE_MAX:
            found.append((str(rel), len(text.splitlines())))
        for node in ast.walk(ast.parse(text, filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > FUNCTION_MAX and "cannot be split" not in (ast.get_docstring(node) or ""):
                    found.append((f"{rel}:{node.name}", length))
    return found


def module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_imports(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of *package* it imports, at any depth (a function-level import counts)."""
    paths = {module_name(p, package): p for p in package.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = here[:len(here) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                targets = [f"{module}.{alias.name}" for alias in node.names] + ([module] if node.module else [])
            else:
                continue
            for target in targets:
                while target and target not in paths:  # dpmask.exact.N_MAX -> dpmask.exact
                    target = target.rpartition(".")[0]
                if target and target != name:
                    deps.add(target)
        graph[name] = deps
    return graph


def test_the_size_check_can_fail(tmp_path):
    long = tmp_path / "pkg" / "long.py"
    long.parent.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(FUNCTION_MAX))
    long.write_text(f"def f():\n{body}\n\ndef g():\n    '''It cannot be split: one table.'''\n{body}")
    assert oversized([long]) == [("pkg/long.py:f", FUNCTION_MAX + 1)]
    big = tmp_path / "pkg" / "big.py"
    big.write_text("x = 1\n" * (MODULE_MAX + 1))
    assert oversized([big]) == [("pkg/big.py", MODULE_MAX + 1)]


def test_no_module_over_1000_lines_and_no_function_over_120():
    found = oversized(python_files())
    assert not found, f"too large (split it, or say in its docstring why it cannot be split): {found}"


def test_the_import_graph_is_read_at_every_depth(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from .b import g\n")
    (pkg / "b.py").write_text("def g():\n    from . import a\n    from .c import h\n    import pkg.a\n")
    (pkg / "c.py").write_text("import os\n")
    graph = package_imports(pkg)
    assert graph == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a", "pkg.c"}, "pkg.c": set()}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.a"]]


def test_dpmask_imports_run_one_way():
    graph = package_imports()
    assert {"dpmask.rivals.gram", "dpmask.rivals", "dpmask.exact", "dpmask.scale", "dpmask.widgets.rivals"} <= set(graph)
    assert "dpmask.rivals.gram" in graph["dpmask.rivals.trust"] and "dpmask.rivals.gram" in graph["dpmask.rivals.compare"]
    assert not cycles(graph), f"dpmask imports in a circle: {cycles(graph)}"
    assert graph["dpmask._validate"] == set(), "the base imports no other dpmask module"


#: The families, lowest first: a module may import its own family and those before it, never one after.
FAMILIES = ("dpmask.scale", "dpmask.paper", "dpmask.exact", "dpmask.rivals")
#: Modules beside the families that the families stand on: they import no family (scale aside, below all).
BASE = ("dpmask._validate", "dpmask._safe", "dpmask._style", "dpmask.inference", "dpmask.data", "dpmask.book")


def upward_imports(graph, root="dpmask"):
    """Every import that runs against the stacking, as 'a imports b (why)'."""
    fams = tuple(f.replace("dpmask", root, 1) for f in FAMILIES)
    base = tuple(b.replace("dpmask", root, 1) for b in BASE)
    widgets = f"{root}.widgets"

    def family(module):
        for i, fam in enumerate(fams):
            if module == fam or module.startswith(fam + "."):
                return i
        return None

    wrong = []
    for module, deps in sorted(graph.items()):
        for dep in sorted(deps):
            mine, theirs = family(module), family(dep)
            if mine is not None and theirs is not None and theirs > mine:
                wrong.append(f"{module} imports {dep} (family {fams[theirs]} sits above {fams[mine]})")
            elif module in base and theirs is not None:
                wrong.append(f"{module} imports {dep} (the base imports no family)")
            elif (dep == widgets or dep.startswith(widgets + ".")) and not (module == widgets
                                                                            or module.startswith(widgets + ".")):
                wrong.append(f"{module} imports {dep} (nothing below the explorers imports them)")
    return wrong


def test_the_families_stack():
    graph = package_imports()
    assert {"dpmask.paper.bounds", "dpmask.exact.one_column", "dpmask.rivals.gram", "dpmask.scale.release"} <= set(graph)
    wrong = upward_imports(graph)
    assert not wrong, ("an import runs up the families (paper < exact < rivals; scale and the base below them; "
                       "widgets on top): " + "; ".join(wrong))


def _mini_package(tmp_path, planted=""):
    pkg = tmp_path / "dpmask"
    for folder in ("paper", "exact", "rivals", "scale", "widgets"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .paper import bounds\n")
    (pkg / "_validate.py").write_text("import math\n")
    (pkg / "paper" / "bounds.py").write_text("from .._validate import math\n" + planted)
    (pkg / "exact" / "gaussian.py").write_text("from ..paper import bounds\n")
    (pkg / "rivals" / "gram.py").write_text("from ..exact.gaussian import x\nfrom ..paper.bounds import y\n")
    (pkg / "widgets" / "noise.py").write_text("from ..rivals import gram\n")
    return pkg


def test_a_planted_upward_import_fails_the_stacking(tmp_path):
    assert upward_imports(package_imports(_mini_package(tmp_path / "ok"))) == []
    for planted, culprit in (("def f():\n    from ..exact import gaussian\n", "dpmask.exact.gaussian"),
                             ("from ..rivals.gram import g\n", "dpmask.rivals.gram"),
                             ("import dpmask.widgets.noise\n", "dpmask.widgets.noise")):
        wrong = upward_imports(package_imports(_mini_package(tmp_path / culprit, planted)))
        assert any(w.startswith(f"dpmask.paper.bounds imports {culprit}") for w in wrong), (planted, wrong)
