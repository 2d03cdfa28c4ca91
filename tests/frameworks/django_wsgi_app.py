"""Django (WSGI): ``get_wsgi_application()`` wrapped as the docs show; the second site
under werkzeug's DispatcherMiddleware (SCRIPT_NAME, which Django reads as its prefix)."""

from __future__ import annotations

from django.core.wsgi import get_wsgi_application
from werkzeug.middleware.dispatcher import DispatcherMiddleware

import tests.frameworks.django_site  # noqa: F401  (settings first)
from sitemap_middleware import WSGISitemapMiddleware
from tests.frameworks.common import PREFIX, config


def site() -> WSGISitemapMiddleware:
    return WSGISitemapMiddleware(get_wsgi_application(), config=config())


app = DispatcherMiddleware(site(), {PREFIX: site()})
