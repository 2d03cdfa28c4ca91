"""Falcon (WSGI, ``falcon.App``): the middleware around the app; the second site under
werkzeug's DispatcherMiddleware (SCRIPT_NAME)."""

from __future__ import annotations

import falcon
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from sitemap_middleware import WSGISitemapMiddleware
from tests.frameworks.common import ABOUT, HOME, PREFIX, config


class Page:
    def __init__(self, body: str) -> None:
        self.body = body

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_HTML
        resp.text = self.body


def site() -> WSGISitemapMiddleware:
    app = falcon.App()
    app.add_route("/", Page(HOME))
    app.add_route("/about", Page(ABOUT))
    return WSGISitemapMiddleware(app, config=config())


app = DispatcherMiddleware(site(), {PREFIX: site()})
