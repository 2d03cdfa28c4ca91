"""Streaming XML sitemaps and robots.txt for ASGI and WSGI apps, from async URL providers.

The top level holds what a configuration is written with: the two middlewares,
:class:`SitemapConfig` and its values, entries and their extensions, and the errors the
middleware raises. The rest lives in documented public modules, each name in one place:

- :mod:`sitemap_middleware.providers`: the provider protocol and its capabilities, the
  built-in providers (static lists, callables, files, routes, SQLAlchemy), ``Mapped``;
- :mod:`sitemap_middleware.stores`: render stores and caches (in process, Redis) and the
  protocols a store of your own implements;
- :mod:`sitemap_middleware.ops`: operations around the middleware: reading sitemaps back,
  snapshots and IndexNow, push-on-commit, observers and Prometheus metrics;
- :mod:`sitemap_middleware.django`: Django's sitemaps, QuerySets, URLconf and hosts.
"""

from __future__ import annotations

__version__ = "0.2.0"

from ._adapters.asgi import ASGISitemapMiddleware
from ._adapters.wsgi import WSGISitemapMiddleware
from ._config import Section, SitemapConfig, Tenants
from ._exceptions import (
    ConfigurationError,
    InvalidEntryError,
    ProviderError,
    ProviderTimeoutError,
    SitemapError,
    SitemapLimitError,
)
from ._feed_settings import Changes, Feed, LlmsTxt
from ._guard_settings import Guard
from ._html_settings import HTMLView
from ._ledger_settings import Ledger
from ._providers.i18n import Languages
from ._public import publish as _publish
from ._sansio.exclusion import SKIP
from ._sansio.extensions import Alternate, Image, NewsArticle, Video
from ._sansio.models import SitemapEntry
from ._settings import (
    HTTPSettings,
    Renders,
    Robots,
    RobotsGroup,
    TrustedHosts,
)

__all__ = [
    "ASGISitemapMiddleware",
    "Alternate",
    "Changes",
    "ConfigurationError",
    "Feed",
    "Guard",
    "HTMLView",
    "HTTPSettings",
    "Image",
    "InvalidEntryError",
    "Languages",
    "Ledger",
    "LlmsTxt",
    "NewsArticle",
    "ProviderError",
    "ProviderTimeoutError",
    "Renders",
    "Robots",
    "RobotsGroup",
    "SKIP",
    "Section",
    "SitemapConfig",
    "SitemapEntry",
    "SitemapError",
    "SitemapLimitError",
    "Tenants",
    "TrustedHosts",
    "Video",
    "WSGISitemapMiddleware",
    "__version__",
]

_publish(globals(), __all__)

# The public modules, imported here so each name names its public home (publish) in
# every process, whatever the application imports first.
from . import ops, providers, stores  # noqa: E402, F401
