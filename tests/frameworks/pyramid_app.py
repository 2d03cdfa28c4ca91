"""Pyramid: the middleware around ``make_wsgi_app()``; the second site under werkzeug's
DispatcherMiddleware (SCRIPT_NAME)."""

from __future__ import annotations

from typing import Any

from pyramid.config import Configurator
from pyramid.response import Response
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from sitemap_middleware import WSGISitemapMiddleware
from tests.frameworks.common import ABOUT, HOME, PREFIX, config


def site() -> WSGISitemapMiddleware:
    with Configurator() as settings:
        settings.add_route("home", "/")
        settings.add_view(lambda request: Response(HOME), route_name="home")
        settings.add_route("about", "/about")
        settings.add_view(lambda request: Response(ABOUT), route_name="about")
        app: Any = settings.make_wsgi_app()
    return WSGISitemapMiddleware(app, config=config())


app = DispatcherMiddleware(site(), {PREFIX: site()})
