"""``uvicorn tests.djangoproject.asgi:application`` : the Django app wrapped as the docs show."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.djangoproject.settings")

from django.core.asgi import get_asgi_application

from sitemap_middleware import ASGISitemapMiddleware

django_application = get_asgi_application()

from .serving import config  # noqa: E402  (models import once Django is set up)

application = ASGISitemapMiddleware(django_application, config=config())
