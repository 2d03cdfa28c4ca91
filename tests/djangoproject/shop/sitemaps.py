"""Django sitemaps as a site already has them: every feature the adapter must honour."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from django.contrib.sitemaps import GenericSitemap, Sitemap
from django.db.models import QuerySet
from django.urls import reverse

from .models import Article, Product


class ProductSitemap(Sitemap):
    """A QuerySet with lastmod(), constant changefreq/priority and a small limit (3 pages)."""

    changefreq = "daily"
    priority = 0.6
    limit = 7

    def items(self) -> QuerySet[Product]:
        return Product.objects.order_by("pk")

    def lastmod(self, obj: Product) -> datetime:
        return obj.updated_at

    def location(self, obj: Product) -> str:
        return obj.get_absolute_url() + "?ref=a&b=1"  # '&' must come out escaped


class PageSitemap(Sitemap):
    """Static pages per language with alternates and x-default; priority 0.0 is still written."""

    i18n = True
    alternates = True
    x_default = True
    languages = ["en", "de", "pt-br"]
    priority = 0.0
    protocol = "https"
    lastmod = date(2024, 5, 1)

    def items(self) -> list[str]:
        return ["about", "contact"]

    def location(self, item: str) -> str:
        return reverse(item)


class ArticleSitemap(Sitemap):
    """Per-item languages (x-default only where LANGUAGE_CODE is one), paged by 5 after i18n."""

    i18n = True
    alternates = True
    x_default = True
    limit = 5

    def items(self) -> QuerySet[Article]:
        return Article.objects.order_by("pk")

    def get_languages_for_item(self, item: Article) -> list[str]:
        return ["de", "pt-br"] if item.pk % 2 else ["en", "de"]

    def changefreq(self, item: Article) -> str:
        return "weekly"


news = GenericSitemap(
    {"queryset": Article.objects.order_by("pk"), "date_field": "published"},
    priority=0.4,
    changefreq="monthly",
)

sitemaps: dict[str, Any] = {
    "products": ProductSitemap,
    "pages": PageSitemap,
    "articles": ArticleSitemap(),
    "news": news,
}
