"""``gunicorn tests.djangoproject.wsgi`` : the Django app wrapped as the docs show."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.djangoproject.settings")

from django.core.wsgi import get_wsgi_application

from sitemap_middleware import WSGISitemapMiddleware

django_application = get_wsgi_application()

from .serving import config  # noqa: E402  (models import once Django is set up)

application = WSGISitemapMiddleware(django_application, config=config())
