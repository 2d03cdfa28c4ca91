"""``gunicorn mysite.wsgi``: the migration guide's step (docs/how-to/migrating/django.md),
as written there."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")

from django.core.wsgi import get_wsgi_application

from sitemap_middleware import WSGISitemapMiddleware
from sitemap_middleware.django import sitemap_config

application = get_wsgi_application()

from shop.sitemaps import sitemaps  # the dict your URLconf hands to Django's sitemap views

application = WSGISitemapMiddleware(
    application,
    config=sitemap_config(sitemaps, base_url="https://example.com"),
)
