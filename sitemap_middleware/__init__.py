"""Streaming XML sitemaps and robots.txt for ASGI and WSGI apps, from async URL providers."""

from __future__ import annotations

__version__ = "0.1.0"

from typing import TYPE_CHECKING

from ._adapters.asgi import ASGISitemapMiddleware
from ._adapters.wsgi import WSGISitemapMiddleware
from ._caches.memory import MemoryRenderCache, RenderCache
from ._caches.redis import RedisRenderCache
from ._config import Section, SitemapConfig, Tenants
from ._exceptions import (
    ConfigurationError,
    InvalidEntryError,
    ProviderError,
    ProviderTimeoutError,
    SitemapError,
    SitemapLimitError,
)
from ._providers.base import (
    CallableProvider,
    ProviderVersion,
    StaticProvider,
    SupportsCount,
    SupportsKeyset,
    SupportsPageLastModified,
    SupportsPages,
    SupportsVersion,
    UrlProvider,
    as_provider,
)
from ._providers.files import DirectoryProvider, TextFileProvider
from ._providers.i18n import Languages
from ._providers.routes import FlaskRoutesProvider, StarletteRoutesProvider
from ._sansio.extensions import Alternate, Image, NewsArticle, Video, news_cutoff
from ._sansio.models import Mapped, SitemapEntry
from ._settings import HTTPSettings, RenderFallback, Robots, RobotsGroup, TrustedHosts

if TYPE_CHECKING:
    from ._providers.sql import SQLAlchemyProvider


def __getattr__(name: str) -> object:
    # SQLAlchemy is an optional extra ("sql"): import it only when asked for.
    if name == "SQLAlchemyProvider":
        from ._providers.sql import SQLAlchemyProvider

        SQLAlchemyProvider.__module__ = __name__
        return SQLAlchemyProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ASGISitemapMiddleware",
    "Alternate",
    "CallableProvider",
    "ConfigurationError",
    "DirectoryProvider",
    "FlaskRoutesProvider",
    "HTTPSettings",
    "Image",
    "InvalidEntryError",
    "Languages",
    "Mapped",
    "MemoryRenderCache",
    "NewsArticle",
    "ProviderError",
    "ProviderTimeoutError",
    "ProviderVersion",
    "RedisRenderCache",
    "RenderCache",
    "RenderFallback",
    "Robots",
    "RobotsGroup",
    "SQLAlchemyProvider",
    "Section",
    "SitemapConfig",
    "SitemapEntry",
    "SitemapError",
    "SitemapLimitError",
    "StarletteRoutesProvider",
    "StaticProvider",
    "SupportsCount",
    "SupportsKeyset",
    "SupportsPageLastModified",
    "SupportsPages",
    "SupportsVersion",
    "Tenants",
    "TextFileProvider",
    "TrustedHosts",
    "UrlProvider",
    "Video",
    "WSGISitemapMiddleware",
    "__version__",
    "as_provider",
    "news_cutoff",
]


def _publish() -> None:
    # Public names report the public module (as httpx does): reprs, docs and pickles
    # show sitemap_middleware.X, not the private module that defines X.
    for name in __all__:
        value = globals().get(name)
        if isinstance(value, type) or callable(value):
            value.__module__ = __name__


_publish()
