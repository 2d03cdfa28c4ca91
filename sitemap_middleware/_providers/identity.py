"""What tells one provider's code apart from another's, the same in every process.

A function's identity (its bytecode, constants, names and the values it closes over) is
part of a provider's version, so a deploy that changes what ``to_entry`` or a location
function writes never answers with an old deploy's ETag, stored render or shared plan.
"""

from __future__ import annotations

import hashlib
from typing import Any

__all__ = ["function_identity", "qualified_name"]


def function_identity(function: object) -> str:
    """What a function of a provider (``to_entry``, a location) computes, as a digest:
    its bytecode, constants and names, and the values it closes over or defaults to. A
    deploy that changes what it writes changes the digest (and so the provider's
    version); moving or renaming it does not."""
    code = getattr(function, "__code__", None)
    if code is None:  # a callable object: its class is all that can be told
        return qualified_name(type(function))
    parts = [_code_text(code)]
    for values in (getattr(function, "__defaults__", None), getattr(function, "__closure__", None)):
        for value in values or ():
            value = getattr(value, "cell_contents", value)
            parts.append(
                repr(value)
                if isinstance(value, str | int | float | bool | None)
                else type(value).__qualname__
            )
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _code_text(code: Any) -> str:
    consts = [
        _code_text(each) if hasattr(each, "co_code") else repr(each) for each in code.co_consts
    ]
    return repr((code.co_code, consts, code.co_names))


def qualified_name(value: object) -> str:
    module = getattr(value, "__module__", None) or "?"
    return f"{module}.{getattr(value, '__qualname__', type(value).__qualname__)}"
