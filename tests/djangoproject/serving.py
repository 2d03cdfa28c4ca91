"""The sitemap configuration wsgi.py and asgi.py share: Django's sitemaps plus a QuerySet."""

from __future__ import annotations

from django.contrib.sitemaps import GenericSitemap

from sitemap_middleware import Renders, Section, SitemapConfig
from sitemap_middleware.django import DjangoQuerySetProvider, DjangoSitemapProvider, sitemap_config

from .shop.models import Product, Tag
from .shop.sitemaps import sitemaps


def catalog() -> DjangoQuerySetProvider:
    """The products again, keyset-paged: must list what ProductSitemap lists."""
    return DjangoQuerySetProvider(
        Product.objects.all(),
        lastmod="updated_at",
        location=lambda product: product.get_absolute_url() + "?ref=a&b=1",
        changefreq="daily",
        priority=0.6,
        batch_size=4,  # several keyset batches per page, even on this small table
    )


def config() -> SitemapConfig:
    # base_url from the current Site (https, as PageSitemap.protocol says); the Sites
    # framework's domains are the hosts we answer for.
    return sitemap_config(
        sitemaps,
        hosts="sites",
        # Tests change rows between requests to unversioned sitemaps: plan every request
        # (by default such a plan is reused for Renders.plan_ttl seconds).
        renders=Renders(plan_ttl=0),
        sections={
            "catalog": Section(catalog(), max_urls=7),
            # No rows are seeded: the server tests write some (NULL lastmods among them).
            "tags": DjangoSitemapProvider(
                GenericSitemap({"queryset": Tag.objects.order_by("pk"), "date_field": "updated"})
            ),
        },
    )
