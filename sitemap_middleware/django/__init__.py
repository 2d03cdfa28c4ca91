"""Django as a first-class citizen: Sitemap classes, QuerySets, the URLconf and hosts.

Needs the ``django`` extra (``pip install '.[django]'`` from a clone). Migrating a
site that uses ``django.contrib.sitemaps`` is a few lines in ``wsgi.py`` or ``asgi.py``::

    from django.core.wsgi import get_wsgi_application
    from sitemap_middleware import WSGISitemapMiddleware
    from sitemap_middleware.django import sitemap_config

    from shop.sitemaps import sitemaps  # the dict your URLconf passes to Django's views

    application = WSGISitemapMiddleware(
        get_wsgi_application(),
        config=sitemap_config(sitemaps, base_url="https://example.com"),
    )

(``ASGISitemapMiddleware(get_asgi_application(), config=...)`` in ``asgi.py``.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._config import Section, SitemapConfig
from .._django.hosts import HostSource, django_trusted_hosts, site_base_url
from .._django.project import find_sitemaps, settings_config
from .._django.push import IndexNowPush, notify_on_change
from .._django.queryset import DjangoQuerySetProvider
from .._django.routes import DjangoRoutesProvider
from .._django.sitemaps import DjangoSitemapProvider, django_sections, sitemap_protocols
from .._exceptions import ConfigurationError
from .._providers.base import ProviderLike
from .._public import publish as _publish
from .._settings import TrustedHosts

if TYPE_CHECKING:
    from django.contrib.sitemaps import Sitemap

__all__ = [
    "DjangoQuerySetProvider",
    "DjangoRoutesProvider",
    "DjangoSitemapProvider",
    "IndexNowPush",
    "django_sections",
    "django_trusted_hosts",
    "find_sitemaps",
    "notify_on_change",
    "settings_config",
    "site_base_url",
    "sitemap_config",
]


def sitemap_config(
    sitemaps: Mapping[str, Sitemap | type[Sitemap]],
    *,
    base_url: str | None = None,
    sections: Mapping[str, ProviderLike | Section] | None = None,
    hosts: HostSource | TrustedHosts | None = None,
    item_dates: bool = False,
    **settings: Any,
) -> SitemapConfig:
    """A :class:`~sitemap_middleware.SitemapConfig` serving a Django ``sitemaps`` dict.

    :param sitemaps: section name to ``Sitemap`` class or instance, the dict Django's
        ``sitemap``/``index`` views take. Each becomes a section paged by its ``limit``.
    :param base_url: the site's public URL; by default ``https://`` (or the ``protocol``
        the sitemaps force) plus the current ``Site``'s domain (Sites framework).
    :param sections: more sections, e.g. a :class:`DjangoQuerySetProvider`.
    :param hosts: ``"sites"``, ``"allowed_hosts"`` or ``"auto"`` to answer for the hosts
        Django serves (:func:`django_trusted_hosts`), or a
        :class:`~sitemap_middleware.TrustedHosts` (behind proxies:
        ``TrustedHosts(hosts=django_trusted_hosts(), forwarded="x-forwarded")``).
        ``None`` (the default): every URL comes from ``base_url``.
    :param item_dates: ``True`` gives every sitemap of ``sitemaps`` Django's
        ``Last-Modified``: the newest item lastmod, when every item has one, read from
        every item (in a worker thread) on each version check, as Django's view reads them
        on every request (see :class:`DjangoSitemapProvider`). A ``GenericSitemap`` with a
        ``date_field`` gives it either way, from one aggregate query. Add
        ``http=HTTPSettings(trust_provider_times=True)`` to answer ``If-Modified-Since``
        from it as Django does.
    :param settings: any other ``SitemapConfig`` keyword.

    Raises :class:`~sitemap_middleware.ConfigurationError` when a sitemap's ``protocol``
    disagrees with the base URL's scheme: a sitemap may only list URLs of its own scheme
    and host.
    """
    protocols = sitemap_protocols(sitemaps.values())
    if base_url is None:
        if len(protocols) > 1:
            raise ConfigurationError(
                f"the sitemaps force different protocols {sorted(protocols)}; "
                "one sitemap document can only list URLs of one scheme"
            )
        base_url = site_base_url(next(iter(protocols), "https"))
    if isinstance(hosts, str):
        hosts = TrustedHosts(hosts=django_trusted_hosts(hosts))
    merged: dict[str, ProviderLike | Section] = dict(
        django_sections(sitemaps, item_dates=item_dates)
    )
    for name, section in (sections or {}).items():
        if name in merged:
            raise ConfigurationError(f"section {name!r} is both a Django sitemap and in sections")
        merged[name] = section
    config = SitemapConfig(base_url=base_url, sections=merged, hosts=hosts, **settings)
    scheme = config.base.origin.split("://", 1)[0]
    for name, sitemap in sitemaps.items():
        protocol = getattr(sitemap, "protocol", None)
        if protocol and protocol != scheme:
            raise ConfigurationError(
                f"section {name!r}: {_sitemap_name(sitemap)}.protocol is {protocol!r} but base_url "
                f"{base_url!r} is {scheme}: a sitemap may only list URLs of its own scheme and "
                "host; serve the sitemaps from that scheme or drop protocol"
            )
    return config


def _sitemap_name(sitemap: object) -> str:
    return sitemap.__name__ if isinstance(sitemap, type) else type(sitemap).__name__


_publish(globals(), __all__)
