"""``uvicorn mysite.asgi:application --lifespan off``: the migration guide's step
(docs/how-to/migrating/django.md), as written there (a keyset-paged QuerySet beside the old
sitemaps, the Sites framework's hosts)."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")

from django.core.asgi import get_asgi_application

from sitemap_middleware import ASGISitemapMiddleware
from sitemap_middleware.django import DjangoQuerySetProvider, sitemap_config

application = get_asgi_application()

from shop.models import Product
from shop.sitemaps import sitemaps

# Replaces the old product sitemap: take "products" out of `sitemaps` if it lists them too
# (a URL listed twice is a duplicate-url warning of `check`).
catalog = DjangoQuerySetProvider(
    Product.objects.all(),  # any filter(); select_related() what location reads
    lastmod="updated_at",  # DateTimeField: <lastmod>, Last-Modified, ETag, index <lastmod>
    changefreq="daily",
)
application = ASGISitemapMiddleware(
    application,  # uvicorn mysite.asgi:application --lifespan off
    config=sitemap_config(
        sitemaps,  # no base_url: https:// plus the current Site's domain
        sections={"catalog": catalog},
        hosts="sites",  # each Site's domain on its own host (needs django.contrib.sites)
    ),
)
