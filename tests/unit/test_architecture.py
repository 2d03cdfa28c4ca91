"""The map and the size rules hold (ARCHITECTURE.md; CONTRIBUTING.md, *Rules of thumb*).

* Every module path ARCHITECTURE.md names exists, and every module of the package is
  named there: a module nobody placed on the map is one a newcomer cannot find.
  A path is package-relative (``_engine/core.py``, ``_config.py``, ``demo/apps.py``) or
  starts at the repository's root (``tests/...``, ``benchmarks/...``, ``scripts/...``).
* No module of the package is over 450 lines.
* No function of the package is of cyclomatic rank E or worse (radon: above 30). Ruff's
  C901 (at 15, ``pyproject.toml``) counts branches only; radon also counts boolean
  operators and comprehensions, so a function can pass one and not the other.
* The unit tests mirror the package (CONTRIBUTING.md, *Tests*): ``tests/unit/<package>/``
  for ``sitemap_middleware/_<package>/``, each ``test_<module>.py`` (or
  ``test_<module>_<topic>.py``) naming a module there, the package's top-level modules
  in ``tests/unit/`` itself; a file whose subject spans modules is in :data:`ACROSS`.
* No test imports ``benchmarks/``, and the benchmarks import nothing from ``tests/`` but
  the Django project they share with the Django tests.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from radon.complexity import cc_rank, cc_visit
from radon.visitors import Function

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "sitemap_middleware"
MAX_LINES = 450
#: Paths that start at the repository's root rather than in the package.
ROOTS = ("tests/", "benchmarks/", "scripts/", "examples/")
#: A module path: directories and a file name of identifier characters (no placeholder
#: such as ``test_<module>.py``), and one the map means: in the package (it starts with
#: ``_`` or names a directory) or at the repository's root.
MODULE = re.compile(r"(?<![\w./<>-])((?:[A-Za-z_]\w*/)*[A-Za-z_]\w*\.py)\b")
#: A package named by its directory, in backticks: `_sansio/`.
PACKAGE_DIR = re.compile(r"`((?:[A-Za-z_]\w*/)+)`")
UNIT = ROOT / "tests" / "unit"
#: Unit test files whose subject spans modules (each says which in its docstring).
ACROSS = {
    "test_architecture.py",  # the map, the sizes and this mirror
    "test_layers.py",  # which package imports which
    "test_messages.py",  # what a newcomer is told, wherever it is said
    "engine/test_properties.py",  # hostile entries and requests through the pipeline
    "engine/test_revalidation_stateful.py",  # no stale 304, planning to rendering
    "ops/test_changes_ops.py",  # the changes sitemap through check and export
    "ops/test_failing_sections.py",  # check and export when a provider fails
    "django/test_edges.py",  # what a hostile review of the Django adapters found
}


def _named() -> tuple[set[str], set[str]]:
    """The module paths and the package directories ARCHITECTURE.md names."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    modules = {
        m
        for m in MODULE.findall(text)
        if m.startswith("_") or "/" in m or (PACKAGE / m).is_file()  # public: `stores.py`
    }
    return modules, set(PACKAGE_DIR.findall(text))


def _package_modules() -> dict[str, Path]:
    """The package's modules by package-relative path (``__init__.py`` files aside: a
    package is named by its directory)."""
    return {
        path.relative_to(PACKAGE).as_posix(): path
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py"
    }


def _exists(path: str) -> bool:
    return (ROOT / path).exists() if path.startswith(ROOTS) else (PACKAGE / path).exists()


def test_every_module_the_map_names_exists() -> None:
    modules, directories = _named()
    assert modules, "no module path found in ARCHITECTURE.md"
    assert sorted(path for path in modules if not _exists(path)) == []
    assert sorted(d for d in directories if not (PACKAGE / d).is_dir()) == []


def test_every_package_module_is_on_the_map() -> None:
    modules, _ = _named()
    assert sorted(set(_package_modules()) - modules) == []


def test_no_module_is_over_450_lines() -> None:
    sizes = {
        name: len(path.read_text(encoding="utf-8").splitlines())
        for name, path in _package_modules().items()
    }
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_no_function_is_of_rank_e_or_worse() -> None:
    found = []
    for name, path in sorted(_package_modules().items()):
        for block in cc_visit(path.read_text(encoding="utf-8")):
            if isinstance(block, Function) and cc_rank(block.complexity) in "EF":
                found.append(f"{name}:{block.lineno} {block.fullname} ({block.complexity})")
    assert found == []


def _modules_of(directory: Path) -> set[str]:
    """The module names of a package directory, the leading underscore dropped."""
    return {path.stem.lstrip("_") for path in directory.glob("*.py") if path.stem != "__init__"}


def test_unit_tests_mirror_the_package() -> None:
    """``tests/unit/engine/test_core_respond_now.py`` names ``_engine/core.py``; a test
    file naming no module (a renamed or removed one) fails here."""
    stray = []
    for test in sorted(UNIT.rglob("test_*.py")):
        relative = test.relative_to(UNIT).as_posix()
        package = PACKAGE / f"_{test.parent.name}" if test.parent != UNIT else PACKAGE
        subject = test.stem.removeprefix("test_")
        modules = _modules_of(package) if package.is_dir() else set()
        named = any(subject == m or subject.startswith(m + "_") for m in modules)
        if not named and relative not in ACROSS:
            stray.append(relative)
    assert stray == []
    assert sorted(a for a in ACROSS if not (UNIT / a).is_file()) == []


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports (inside functions too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_no_test_imports_benchmarks() -> None:
    """Tests run a benchmark as a person does (``python -m benchmarks.X``), free ports and
    servers come from ``tests/harness``."""
    found = {
        path.relative_to(ROOT).as_posix(): sorted(
            name for name in _imported(path) if name.split(".")[0] == "benchmarks"
        )
        for path in (ROOT / "tests").rglob("*.py")
    }
    assert {path: names for path, names in found.items() if names} == {}


def test_benchmarks_import_no_tests_but_the_django_project() -> None:
    found = {
        path.relative_to(ROOT).as_posix(): sorted(
            name
            for name in _imported(path)
            if name.split(".")[0] == "tests" and not name.startswith("tests.djangoproject")
        )
        for path in (ROOT / "benchmarks").rglob("*.py")
    }
    assert {path: names for path, names in found.items() if names} == {}
