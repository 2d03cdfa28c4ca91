"""The package's layers, held by reading its imports (ARCHITECTURE.md, *Layout*).

* ``_sansio/`` (protocol rules: plain values in, plain values out) imports nothing from
  the engine, the providers, the config, the caches, the adapters, the operations or the
  Django integration — type-only imports included: a rule that needs the config's shape
  takes plain values. It may import ``_exceptions`` and the settings values it reads
  (``_settings``, ``_ledger_settings``, ``_html_settings``: frozen dataclasses of what the
  user configured).
* No import cycle in the package: among the imports every module makes at its top
  level, type-only ones (``if TYPE_CHECKING:``) included; a module naming a type of
  one that imports it is a cycle too (a ``Protocol`` of what it reads breaks it).
  Imports inside functions, made to defer an optional dependency or the package's own
  top, are not edges.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "sitemap_middleware"
SANSIO_MAY_IMPORT = {"_sansio", "_exceptions", "_settings", "_ledger_settings", "_html_settings"}


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _module_level(node: ast.AST) -> Iterator[ast.AST]:
    """Every node run at import (or type-checking) time: not inside a function."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield child
            yield from _module_level(child)


def _imports(name: str, path: Path, modules: dict[str, Path], top_level: bool) -> set[str]:
    """The package's modules ``name`` imports: outside its functions (``TYPE_CHECKING``
    blocks, ``try`` and ``if`` included) or anywhere."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    nodes = list(_module_level(tree) if top_level else ast.walk(tree))
    found: set[str] = set()
    for each in nodes:
        node: ast.AST = each
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            target = node.module or ""
            if node.level:
                target = ".".join(base[: len(base) - node.level + 1] + ([target] if target else []))
            for candidate in (target, *(f"{target}.{alias.name}" for alias in node.names)):
                if candidate in modules and candidate != name:
                    found.add(candidate)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
    return found


def test_sansio_imports_no_other_layer() -> None:
    modules = _modules()
    crossing = sorted(
        (name, target)
        for name, path in modules.items()
        if name.startswith("sitemap_middleware._sansio")
        for target in _imports(name, path, modules, top_level=False)
        if target.split(".")[1] not in SANSIO_MAY_IMPORT
    )
    assert crossing == []


def _cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """An import cycle of ``graph`` (module -> modules it imports), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        state[name] = 2
        path.pop()
        return None

    for name in sorted(graph):
        if name not in state and (cycle := visit(name)) is not None:
            return cycle
    return None


def _graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    modules = _modules(package)
    return {name: _imports(name, path, modules, top_level=True) for name, path in modules.items()}


def test_no_import_cycle() -> None:
    assert _cycle(_graph()) is None


def test_a_planted_cycle_is_found(tmp_path: Path) -> None:
    """The check sees a cycle made of a type-only import, one inside ``try``, and a
    relative import of a package's module; not one closed inside a function."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub import b\n"
    )
    (package / "sub" / "b.py").write_text(
        "try:\n    from ..c import X\nexcept ImportError:\n    pass\n"
    )
    (package / "c.py").write_text("from . import a\n")
    assert _cycle(_graph(package)) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    (package / "c.py").write_text("def later():\n    from . import a\n")
    assert _cycle(_graph(package)) is None
