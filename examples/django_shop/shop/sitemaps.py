"""The shop's sitemaps, as Django's own sitemap views served them before the migration.

The middleware serves this dict unchanged (``mysite/wsgi.py``, ``mysite/asgi.py``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.flatpages.sitemaps import FlatPageSitemap
from django.contrib.sitemaps import GenericSitemap, Sitemap
from django.db.models import QuerySet
from django.urls import reverse

from .models import Category, Product


class ProductSitemap(Sitemap):
    """Every product in every language, each URL listing the others as alternates."""

    changefreq = "daily"
    priority = 0.8
    limit = 10  # URLs per page, counted after i18n: several pages with the demo data
    i18n = True
    alternates = True

    def items(self) -> QuerySet[Product]:
        return Product.objects.order_by("pk")

    def lastmod(self, obj: Product) -> datetime:
        return obj.updated_at


class StaticViewSitemap(Sitemap):
    """The pages without a model, per language, with alternates and an x-default."""

    changefreq = "monthly"
    priority = 0.5
    i18n = True
    alternates = True
    x_default = True

    def items(self) -> list[str]:
        return ["home", "about"]

    def location(self, item: str) -> str:
        return reverse(item)


categories = GenericSitemap(
    {"queryset": Category.objects.order_by("pk"), "date_field": "updated_at"},
    priority=0.6,
    changefreq="weekly",
)

sitemaps: dict[str, Any] = {
    "products": ProductSitemap,
    "pages": StaticViewSitemap,
    "categories": categories,
    "flatpages": FlatPageSitemap,
}
