"""The middleware's configuration as a Django project states it.

``SITEMAP_MIDDLEWARE = {...}`` in settings holds ``sitemap_config()``'s keywords
(``"sitemaps"`` and ``"sections"`` may name their dicts by dotted path, imported once
apps are loaded); without ``"sitemaps"``, the ``sitemaps``
dict is the one the URLconf passes to Django's ``sitemap``/``index`` views. Management
commands, system checks and ``wsgi.py``/``asgi.py`` read the same configuration.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .._exceptions import ConfigurationError

if TYPE_CHECKING:
    from django.contrib.sitemaps import Sitemap

    from .._config import SitemapConfig

__all__ = ["SETTING", "find_sitemaps", "project_options", "settings_config"]

#: The Django setting holding ``sitemap_config()``'s keywords.
SETTING = "SITEMAP_MIDDLEWARE"


def find_sitemaps(urlconf: str | None = None) -> dict[str, Sitemap | type[Sitemap]]:
    """The ``sitemaps`` dict the URLconf passes to ``django.contrib.sitemaps.views``
    (``index`` or ``sitemap``), or ``{}`` when it passes none."""
    from django.contrib.sitemaps import views
    from django.urls import get_resolver

    targets = {inspect.unwrap(views.index), inspect.unwrap(views.sitemap)}
    for pattern in _patterns(get_resolver(urlconf).url_patterns):
        callback = getattr(pattern, "callback", None)
        if callback is None:
            continue
        sitemaps = getattr(pattern, "default_args", {}).get("sitemaps")
        # Unwrapped: the views' own decorators, and cache_page() around them.
        if inspect.unwrap(callback) in targets and isinstance(sitemaps, Mapping):
            return dict(sitemaps)
    return {}


def _patterns(patterns: list[Any]) -> Iterator[Any]:
    for pattern in patterns:
        nested = getattr(pattern, "url_patterns", None)
        if nested is not None:  # include(): its patterns, in order
            yield from _patterns(nested)
        else:
            yield pattern


def project_options() -> dict[str, Any] | None:
    """``settings.SITEMAP_MIDDLEWARE`` as keywords (the sitemaps resolved), or None when
    the project sets none."""
    from django.conf import settings
    from django.utils.module_loading import import_string

    options = getattr(settings, SETTING, None)
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise ConfigurationError(
            f"settings.{SETTING} must be a dict of sitemap_config() keywords, got {options!r}"
        )
    resolved = dict(options)
    unknown = [key for key in resolved if key not in _known_keys()]
    if unknown:
        raise ConfigurationError(
            f"settings.{SETTING} has unknown keys {', '.join(map(repr, unknown))}: use "
            f"sitemap_config() keywords ({', '.join(sorted(_known_keys()))})"
        )
    for name in ("sitemaps", "sections"):  # dotted paths: models are loaded by now
        value = resolved.get(name)
        if isinstance(value, str):
            try:
                resolved[name] = import_string(value)
            except Exception as exc:  # ImportError, or whatever importing the module raised
                problem = (
                    str(exc) if isinstance(exc, ImportError) else f"{type(exc).__name__}: {exc}"
                )
                raise ConfigurationError(
                    f"settings.{SETTING}[{name!r}] names {value!r}, which cannot be imported: "
                    f"{problem}"
                ) from None
    sections = resolved.get("sections")
    if sections is not None and not isinstance(sections, Mapping):
        raise ConfigurationError(
            f"settings.{SETTING}['sections'] must be a dict of section name to provider, "
            f"got {sections!r}"
        )
    if resolved.get("sitemaps") is None:
        resolved["sitemaps"] = find_sitemaps()
    return resolved


def _known_keys() -> set[str]:
    """``sitemap_config()``'s keywords: its own and every ``SitemapConfig`` field."""
    from .._config import SitemapConfig

    return {"sitemaps", "hosts", *inspect.signature(SitemapConfig).parameters}


def settings_config() -> SitemapConfig:
    """The :class:`~sitemap_middleware.SitemapConfig` the project's settings describe::

        # settings.py
        SITEMAP_MIDDLEWARE = {"base_url": "https://example.com"}

        # wsgi.py
        application = WSGISitemapMiddleware(get_wsgi_application(), config=settings_config())

    Raises :class:`~sitemap_middleware.ConfigurationError` when the setting is missing or
    describes no valid configuration.
    """
    from ..django import sitemap_config

    options = project_options()
    if options is None:
        raise ConfigurationError(
            f"settings.{SETTING} is not set: add SITEMAP_MIDDLEWARE = "
            '{"base_url": "https://example.com"} (and "sitemaps" if the URLconf passes '
            "none to django.contrib.sitemaps.views)"
        )
    sitemaps = options.pop("sitemaps")
    if not isinstance(sitemaps, Mapping):
        raise ConfigurationError(
            f"settings.{SETTING}['sitemaps'] must be a dict of section name to Sitemap, "
            f"got {sitemaps!r}"
        )
    if not sitemaps and not options.get("sections"):
        raise ConfigurationError(
            f"settings.{SETTING} names no sitemaps, and the URLconf passes none to "
            'django.contrib.sitemaps.views: add "sitemaps" (a dict of Sitemap classes, or '
            'its dotted path) or "sections" (a dict of providers, or its dotted path)'
        )
    return sitemap_config(sitemaps, **options)
