"""``manage.py check`` for the middleware: the configuration settings describe, at once.

Registered by the app (``INSTALLED_APPS += ["sitemap_middleware.django"]``). Nothing is
checked while ``SITEMAP_MIDDLEWARE`` is unset (a project may configure the middleware in
code); with it, what start-up would refuse is an error here, and a base URL Django would
not answer for is a warning.
"""

from __future__ import annotations

from typing import Any

from .._exceptions import ConfigurationError
from .project import SETTING, settings_config

__all__ = ["check_configuration"]


def check_configuration(app_configs: Any = None, **kwargs: Any) -> list[Any]:
    """The system check: ``sitemap_middleware.E001`` (the configuration is refused),
    ``W001`` (``base_url``'s host is not in ``ALLOWED_HOSTS``), ``W002`` (the current
    ``Site`` could not be read for a missing ``base_url``)."""
    from django.conf import settings
    from django.core.checks import Error, Warning
    from django.db import DatabaseError
    from django.http.request import split_domain_port, validate_host

    if getattr(settings, SETTING, None) is None:
        return []
    try:
        config = settings_config()
    except ConfigurationError as exc:
        return [
            Error(
                f"the sitemap middleware's configuration is refused: {exc}",
                hint=f"fix settings.{SETTING} or the sitemaps it names",
                id="sitemap_middleware.E001",
            )
        ]
    except DatabaseError as exc:  # base_url from the Sites framework, without a database
        return [
            Warning(
                f"the current Site could not be read for base_url: {exc}",
                hint=f'set settings.{SETTING}["base_url"] to the site\'s public URL',
                id="sitemap_middleware.W002",
            )
        ]
    except Exception as exc:  # a Sitemap or section refusing to be built: start-up would fail
        return [
            Error(
                f"the sitemap middleware's configuration is refused: {type(exc).__name__}: {exc}",
                hint=f"fix settings.{SETTING} or the sitemaps it names",
                id="sitemap_middleware.E001",
            )
        ]
    domain, _ = split_domain_port(config.base.origin.split("://", 1)[1])
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:  # what Django itself allows then
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    if not validate_host(domain, allowed):
        return [
            Warning(
                f"base_url {config.base.origin!r} names host {domain!r}, which ALLOWED_HOSTS "
                "does not allow: the app answers 400 to requests for it, so the sitemaps "
                "would list pages that cannot be fetched",
                hint=f"add {domain!r} to ALLOWED_HOSTS, or fix base_url",
                id="sitemap_middleware.W001",
            )
        ]
    return []
