"""Bottle: the middleware around the app; the second site with Bottle's ``mount``."""

from __future__ import annotations

from bottle import Bottle

from sitemap_middleware import WSGISitemapMiddleware
from tests.frameworks.common import ABOUT, HOME, PREFIX, config


def site() -> Bottle:
    app = Bottle()
    app.route("/", callback=lambda: HOME)
    app.route("/about", callback=lambda: ABOUT)
    return app


root = site()
root.mount(PREFIX, WSGISitemapMiddleware(site(), config=config()))
app = WSGISitemapMiddleware(root, config=config())
