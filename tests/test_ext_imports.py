"""The build tools in ``_ext/`` import each other in one direction only.

``_ext/`` holds the Sphinx extensions (``publish``, ``live_numbers``, ``page_scripts``,
``appendix_numbers``), the command line of the editions (``editions``), the number sync
(``sync_numbers``) and their shared base (``book_config``, ``solutions``).  A cycle between them
(``editions`` and ``publish`` imported each other before) means neither can be read, tested or
changed alone.  This test reads every ``import`` of every ``_ext/*.py`` (at any depth: an import
inside a function counts) and fails on a cycle, naming it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXT = ROOT / "_ext"


def ext_imports(folder: Path = EXT) -> dict[str, set[str]]:
    """Module -> the modules of *folder* it imports."""
    modules = {p.stem: p for p in folder.glob("*.py")}
    graph = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                deps |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                deps.add(node.module.split(".")[0])
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle of *graph* found by a depth-first search, each as the path that closes it."""
    found, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_the_cycle_check_can_fail():
    assert cycles({"editions": {"publish"}, "publish": {"editions"}}) == [["editions", "publish", "editions"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert not cycles({"editions": {"publish", "book_config"}, "publish": {"book_config"}, "book_config": set()})


def test_imports_within_ext_are_seen(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from b import g\n    return g\n")
    (tmp_path / "b.py").write_text("import a\nimport os\n")
    graph = ext_imports(tmp_path)
    assert graph == {"a": {"b"}, "b": {"a"}} and cycles(graph)


def test_ext_modules_import_in_one_direction():
    graph = ext_imports()
    assert {"editions", "publish", "book_config"} <= set(graph)
    assert not cycles(graph), f"_ext imports in a circle: {cycles(graph)}"
    # the shared base imports nothing of _ext, and the Sphinx extension never the command line
    assert graph["book_config"] == set()
    assert "editions" not in graph["publish"]
