"""The map and the size rules hold (ARCHITECTURE.md; CONTRIBUTING.md, *Rules of thumb*).

* Every module path ARCHITECTURE.md names exists, and every module of the package is
  named there: a module nobody placed on the map is one a newcomer cannot find.
  A path is package-relative (``_engine/core.py``, ``_config.py``, ``demo/apps.py``) or
  starts at the repository's root (``tests/...``, ``benchmarks/...``, ``scripts/...``).
* No module of the package is over 450 lines.
* No function of the package is of cyclomatic rank E or worse (radon: above 30). Ruff's
  C901 (at 15, ``pyproject.toml``) counts branches only; radon also counts boolean
  operators and comprehensions, so a function can pass one and not the other.
"""

from __future__ import annotations

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
