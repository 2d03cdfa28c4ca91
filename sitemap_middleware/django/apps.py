"""The Django app: ``INSTALLED_APPS += ["sitemap_middleware.django"]`` adds the
``manage.py sitemap`` command and the system check of ``SITEMAP_MIDDLEWARE``."""

from __future__ import annotations

from django.apps import AppConfig
from django.core import checks


class SitemapMiddlewareConfig(AppConfig):  # type: ignore[misc]
    name = "sitemap_middleware.django"
    label = "sitemap_middleware"
    verbose_name = "Sitemap middleware"

    def ready(self) -> None:
        from .._django.checks import check_configuration

        checks.register(check_configuration)
