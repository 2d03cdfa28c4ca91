"""Streaming XML sitemaps and robots.txt for ASGI and WSGI apps, from async URL providers."""

from __future__ import annotations

__version__ = "0.1.0"

from ._asgi import ASGISitemapMiddleware
from ._config import RobotsGroup, Section, SitemapConfig
from ._exceptions import (
    ConfigurationError,
    InvalidEntryError,
    ProviderError,
    ProviderTimeoutError,
    SitemapError,
    SitemapLimitError,
)
from ._models import Alternate, Image, NewsArticle, SitemapEntry, Video, news_cutoff
from ._providers import (
    CallableProvider,
    ProviderVersion,
    StaticProvider,
    SupportsCount,
    SupportsPageLastModified,
    SupportsPages,
    SupportsVersion,
    UrlProvider,
    as_provider,
)
from ._wsgi import WSGISitemapMiddleware

__all__ = [
    "ASGISitemapMiddleware",
    "Alternate",
    "CallableProvider",
    "ConfigurationError",
    "Image",
    "InvalidEntryError",
    "NewsArticle",
    "ProviderError",
    "ProviderTimeoutError",
    "ProviderVersion",
    "RobotsGroup",
    "Section",
    "SitemapConfig",
    "SitemapEntry",
    "SitemapError",
    "SitemapLimitError",
    "StaticProvider",
    "SupportsCount",
    "SupportsPageLastModified",
    "SupportsPages",
    "SupportsVersion",
    "UrlProvider",
    "Video",
    "WSGISitemapMiddleware",
    "__version__",
    "as_provider",
    "news_cutoff",
]
