"""Django (ASGI): ``get_asgi_application()`` wrapped as the docs show; the second site
behind a root_path (Django's script prefix)."""

from __future__ import annotations

from django.core.asgi import get_asgi_application

import tests.frameworks.django_site  # noqa: F401  (settings first)
from sitemap_middleware import ASGISitemapMiddleware
from tests.frameworks.common import config, mount


def site() -> ASGISitemapMiddleware:
    return ASGISitemapMiddleware(get_asgi_application(), config=config())


app = mount(site(), site())
