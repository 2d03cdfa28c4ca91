"""Flask: ``app.wsgi_app`` wrapped; the second site under werkzeug's DispatcherMiddleware."""

from __future__ import annotations

from flask import Flask
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from sitemap_middleware import WSGISitemapMiddleware
from tests.frameworks.common import ABOUT, HOME, PREFIX, config


def site(name: str) -> Flask:
    app = Flask(name)
    app.add_url_rule("/", "home", lambda: HOME)
    app.add_url_rule("/about", "about", lambda: ABOUT)
    app.wsgi_app = WSGISitemapMiddleware(app.wsgi_app, config=config())  # type: ignore[method-assign]
    return app


root = site("root")
root.wsgi_app = DispatcherMiddleware(root.wsgi_app, {PREFIX: site("shop")})  # type: ignore[method-assign]
app = root
