"""Providers: where a section's entries come from.

A provider is anything with ``entries()`` returning an async iterable of entries, URL
strings or mappings of entry fields (:class:`UrlProvider`); lists, callables and sync or
async generator functions are adapted by :func:`as_provider`. The ``Supports*``
protocols are optional capabilities that let the middleware do less work (a count, a
page without the ones before, a version, pages as key ranges); without them it iterates.

The built-in providers: :class:`StaticProvider`, :class:`CallableProvider`,
:class:`DirectoryProvider` and :class:`TextFileProvider` (files),
:class:`StarletteRoutesProvider` and :class:`FlaskRoutesProvider` (an app's routes) and
:class:`SQLAlchemyProvider` (the ``sql`` extra; imported when first used). Django's are in
:mod:`sitemap_middleware.django`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._providers.base import (
    CallableProvider,
    ProviderVersion,
    StaticProvider,
    SupportsCount,
    SupportsKeyedBatches,
    SupportsKeyset,
    SupportsPageLastModified,
    SupportsPages,
    SupportsRangeVersion,
    SupportsVersion,
    UrlProvider,
    as_provider,
)
from ._providers.files import DirectoryProvider, TextFileProvider
from ._providers.ranges import KeyRange, RangeStats, SupportsRangeStats
from ._providers.routes import FlaskRoutesProvider, StarletteRoutesProvider
from ._public import load_optional as _load_optional
from ._public import publish as _publish
from ._sansio.extensions import news_cutoff
from ._sansio.models import Mapped

if TYPE_CHECKING:
    from ._providers.sql import SQLAlchemyProvider

__all__ = [
    "CallableProvider",
    "DirectoryProvider",
    "FlaskRoutesProvider",
    "KeyRange",
    "Mapped",
    "ProviderVersion",
    "RangeStats",
    "SQLAlchemyProvider",
    "StarletteRoutesProvider",
    "StaticProvider",
    "SupportsCount",
    "SupportsKeyedBatches",
    "SupportsKeyset",
    "SupportsPageLastModified",
    "SupportsPages",
    "SupportsRangeStats",
    "SupportsRangeVersion",
    "SupportsVersion",
    "TextFileProvider",
    "UrlProvider",
    "as_provider",
    "news_cutoff",
]


def __getattr__(name: str) -> object:
    if name == "SQLAlchemyProvider":
        return _load_optional(globals(), name, "._providers.sql", "sql")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_publish(globals(), __all__)
