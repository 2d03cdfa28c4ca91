"""Streaming XML sitemaps and robots.txt for ASGI and WSGI apps, from async URL providers."""

from __future__ import annotations

__version__ = "0.1.0"

from typing import TYPE_CHECKING

from ._adapters.asgi import ASGISitemapMiddleware
from ._adapters.wsgi import WSGISitemapMiddleware
from ._caches.memory import MemoryRenderCache, RenderCache
from ._caches.redis import RedisRenderCache
from ._caches.redis_store import RedisRenderStore
from ._caches.store import MemoryRenderStore, RenderStore
from ._config import Section, SitemapConfig, Tenants
from ._engine.observe import DocumentObserver, ServedDocument
from ._exceptions import (
    ConfigurationError,
    ExportPathError,
    InvalidEntryError,
    ProviderError,
    ProviderTimeoutError,
    SitemapError,
    SitemapLimitError,
    SitemapParseError,
)
from ._feed_settings import Changes, Feed, LlmsTxt
from ._guard_settings import Guard
from ._ledger_settings import Ledger
from ._ops.changes import Snapshot, changed_urls, take_snapshot
from ._ops.indexnow import IndexNowBatch, IndexNowNotifier, IndexNowResult
from ._ops.metrics import PrometheusObserver
from ._ops.parse import ParsedSitemap, parse_sitemap
from ._ops.sql_push import SQLAlchemyPush, notify_on_commit
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
from ._sansio.exclusion import SKIP
from ._sansio.extensions import Alternate, Image, NewsArticle, Video, news_cutoff
from ._sansio.htmlview import HTMLView
from ._sansio.models import Mapped, SitemapEntry
from ._settings import (
    HTTPSettings,
    RenderFallback,
    Renders,
    Robots,
    RobotsGroup,
    TrustedHosts,
)

if TYPE_CHECKING:
    from ._django.queryset import DjangoQuerySetProvider
    from ._django.routes import DjangoRoutesProvider
    from ._django.sitemaps import DjangoSitemapProvider
    from ._providers.sql import SQLAlchemyProvider

#: Names whose modules need an optional extra ("sql", "django"): imported when asked for.
_OPTIONAL = {
    "SQLAlchemyProvider": "._providers.sql",
    "DjangoQuerySetProvider": "._django.queryset",
    "DjangoRoutesProvider": "._django.routes",
    "DjangoSitemapProvider": "._django.sitemaps",
}


_EXTRAS = {
    "SQLAlchemyProvider": "sql",
    "DjangoQuerySetProvider": "django",
    "DjangoRoutesProvider": "django",
    "DjangoSitemapProvider": "django",
}


def __getattr__(name: str) -> object:
    if name in _OPTIONAL:
        from importlib import import_module

        try:
            module = import_module(_OPTIONAL[name], __name__)
        except ImportError as exc:
            extra = _EXTRAS[name]
            raise ImportError(
                f"{name} needs the {extra} extra: pip install "
                f'"sitemap-middleware[{extra}]" (from a clone: pip install ".[{extra}]"); {exc}'
            ) from exc
        value = getattr(module, name)
        value.__module__ = __name__
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ASGISitemapMiddleware",
    "Alternate",
    "CallableProvider",
    "Changes",
    "ConfigurationError",
    "DirectoryProvider",
    "DjangoQuerySetProvider",
    "DjangoRoutesProvider",
    "DjangoSitemapProvider",
    "DocumentObserver",
    "ExportPathError",
    "Feed",
    "FlaskRoutesProvider",
    "Guard",
    "HTMLView",
    "HTTPSettings",
    "Image",
    "IndexNowBatch",
    "IndexNowNotifier",
    "IndexNowResult",
    "InvalidEntryError",
    "Languages",
    "Ledger",
    "LlmsTxt",
    "Mapped",
    "MemoryRenderCache",
    "MemoryRenderStore",
    "NewsArticle",
    "ParsedSitemap",
    "PrometheusObserver",
    "ProviderError",
    "ProviderTimeoutError",
    "ProviderVersion",
    "RedisRenderCache",
    "RedisRenderStore",
    "RenderCache",
    "RenderFallback",
    "RenderStore",
    "Renders",
    "Robots",
    "RobotsGroup",
    "SKIP",
    "SQLAlchemyProvider",
    "SQLAlchemyPush",
    "Section",
    "ServedDocument",
    "SitemapConfig",
    "SitemapEntry",
    "SitemapError",
    "SitemapLimitError",
    "SitemapParseError",
    "Snapshot",
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
    "changed_urls",
    "news_cutoff",
    "notify_on_commit",
    "parse_sitemap",
    "take_snapshot",
]


def _publish() -> None:
    # Public names report the public module (as httpx does): reprs, docs and pickles
    # show sitemap_middleware.X, not the private module that defines X.
    for name in __all__:
        value = globals().get(name)
        if isinstance(value, type) or callable(value):
            value.__module__ = __name__


_publish()
