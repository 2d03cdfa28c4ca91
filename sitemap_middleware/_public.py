"""How the public modules present the names they re-export from private ones."""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from importlib import import_module

__all__ = ["load_optional", "publish"]


def publish(namespace: MutableMapping[str, object], names: Iterable[str]) -> None:
    """Name the public module as the home of each of ``names`` (as httpx does): reprs,
    docs and pickles show ``sitemap_middleware.providers.X``, not the private module
    that defines X. One public home per name, so this is stable whatever is imported."""
    module = str(namespace["__name__"])
    for name in names:
        value = namespace.get(name)
        if isinstance(value, type) or callable(value):
            value.__module__ = module


def load_optional(
    namespace: MutableMapping[str, object], name: str, module: str, extra: str
) -> object:
    """``name`` from ``module`` (relative to the public module), whose import needs
    ``extra``: imported when first asked for, so the public module imports without it."""
    package = str(namespace["__name__"])
    try:
        found = import_module(module, package.rsplit(".", 1)[0])
    except ImportError as exc:
        raise ImportError(
            f"{name} needs the {extra} extra: pip install "
            f'"sitemap-middleware[{extra}]" (from a clone: pip install ".[{extra}]"); {exc}'
        ) from exc
    value: object = getattr(found, name)
    value.__module__ = package
    namespace[name] = value
    return value
