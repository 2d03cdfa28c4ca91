"""The protocol's limits have one home, ``_sansio/limits.py`` (ARCHITECTURE.md).

A limit written again elsewhere drifts: the checker would judge files by one number
while the middleware writes them by another. So no module of the package spells a
limit's value (as a number, a product such as ``500 * 1024``, or the text of a message;
docstrings may explain them), and the checker's names are the very objects of
``limits``.
"""

from __future__ import annotations

import ast
import operator
import re
from pathlib import Path

from sitemap_middleware._ops import check, fetch, parse, rules
from sitemap_middleware._sansio import limits

PACKAGE = Path(limits.__file__).resolve().parent.parent
#: Values no other module may write (1,000 and 32 are also ordinary batch sizes).
VALUES = {
    limits.MAX_URLS,
    limits.MAX_BYTES,
    limits.MAX_URL_LENGTH,
    limits.ROBOTS_MAX_BYTES,
    limits.MAX_VIDEO_DURATION,
}
#: The same values as messages spell them.
SPELLED = re.compile(r"\b(?:50,?000|52,?428,?800|2,?048|28,?800|500 KiB|50 MiB)\b")


def _value(node: ast.AST) -> object:
    """An integer constant, or a product or sum of them (``50 * 1024 * 1024``)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Add):
        left, right = _value(node.left), _value(node.right)
        if type(left) is int and type(right) is int:
            return (operator.mul if isinstance(node.op, ast.Mult) else operator.add)(left, right)
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def test_no_module_but_limits_writes_a_protocol_limit() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == Path(limits.__file__).resolve():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            value = _value(node)
            where = f"{path.relative_to(PACKAGE).as_posix()}:{getattr(node, 'lineno', 0)}"
            if type(value) is int and value in VALUES:
                found.append(f"{where} {value}")
            elif isinstance(value, str) and id(node) not in docstrings and SPELLED.search(value):
                found.append(f"{where} {value!r}")
    assert found == []


def test_the_checker_reads_the_middlewares_limits() -> None:
    shared = [
        (module.__name__, name)
        for module in (rules, parse, check)
        for name in limits.__all__
        if hasattr(module, name)
    ]
    assert ("sitemap_middleware._ops.rules", "MAX_URLS") in shared
    for module_name, name in shared:
        module = {m.__name__: m for m in (rules, parse, check)}[module_name]
        assert getattr(module, name) is getattr(limits, name), (module_name, name)
    # A body one byte past the limit is fetched, so "too large" can be told.
    assert fetch.MAX_DOCUMENT == limits.MAX_BYTES + 1
