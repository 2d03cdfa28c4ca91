"""The package's layers, held by reading its imports (ARCHITECTURE.md, *Layout*).

* ``_sansio/`` (protocol rules: plain values in, plain values out) imports nothing from
  the engine, the providers, the config, the caches, the adapters, the operations or the
  Django integration — type-only imports included: a rule that needs the config's shape
  takes plain values. It may import ``_exceptions`` and the settings values it reads
  (``_settings``, ``_ledger_settings``, ``_html_settings``: frozen dataclasses of what the
  user configured).
* No import cycle among the modules' top-level imports (imports inside functions, made
  to defer an optional dependency, are not edges).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "sitemap_middleware"
SANSIO_MAY_IMPORT = {"_sansio", "_exceptions", "_settings", "_ledger_settings", "_html_settings"}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path], top_level: bool) -> set[str]:
    """The package's modules ``name`` imports: at its top level (``TYPE_CHECKING``
    blocks left out) or anywhere."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    nodes: list[ast.AST] = []
    if top_level:
        for statement in tree.body:
            if isinstance(statement, ast.If) and "TYPE_CHECKING" in ast.dump(statement.test):
                continue
            nodes.append(statement)
    else:
        nodes = list(ast.walk(tree))
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


def test_no_import_cycle() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules, top_level=True) for name, path in modules.items()}
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
        if name not in state:
            assert visit(name) is None, "an import cycle"
