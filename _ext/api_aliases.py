"""A re-exported name resolves to its one entry in the API page.

The API page documents each function once, in the module that defines it (``dpmask.rivals.gram``,
``dpmask.exact.one_column``, ...).  The book and the explorers' docstrings also call functions by the
name they are re-exported under (``dpmask.rivals.sigma_gram``, the facade of chapter 9;
``dpmask.exact.masked_p1_sigma``), which has no entry of its own, so Sphinx's ``-n`` would report
it as missing.  On a missing ``py`` reference ``dpmask.<module>.<name>`` this extension imports the
module, finds the object, and resolves the reference to ``<obj.__module__>.<name>`` when that is
documented; any other missing reference stays missing (and the strict build still fails on it).
"""

from __future__ import annotations

import importlib


def home_of(target: str) -> str | None:
    """``"dpmask.rivals.sigma_gram"`` -> ``"dpmask.rivals.gram.sigma_gram"``: where the object is defined."""
    module_name, _, name = target.rpartition(".")
    if not module_name.startswith("dpmask") or not name:
        return None
    try:
        obj = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError):
        return None
    home = getattr(obj, "__module__", None)
    if not home or home == module_name:
        return None
    return f"{home}.{name}"


def _resolve_alias(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    if not target.startswith("dpmask.") and node.get("py:module"):
        target = f"{node['py:module']}.{target}"  # a short name in a module's own docstring
    home = home_of(target)
    if home is None:
        return None
    domain = env.get_domain("py")
    builder = app.builder
    return domain.resolve_xref(env, node.get("refdoc"), builder, node["reftype"], home, node, contnode)


def setup(app):
    app.connect("missing-reference", _resolve_alias)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
