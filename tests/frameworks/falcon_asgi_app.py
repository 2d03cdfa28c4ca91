"""Falcon (ASGI, ``falcon.asgi.App``): the middleware around the app; the second site
behind a root_path. Falcon routes ASGI's whole path (root_path included), so the mounted
site's own routes name the prefix."""

from __future__ import annotations

import falcon
import falcon.asgi

from sitemap_middleware import ASGISitemapMiddleware
from tests.frameworks.common import ABOUT, HOME, PREFIX, config, mount


class Page:
    def __init__(self, body: str) -> None:
        self.body = body

    async def on_get(self, req: falcon.asgi.Request, resp: falcon.asgi.Response) -> None:
        resp.content_type = falcon.MEDIA_HTML
        resp.text = self.body


def site(prefix: str = "") -> ASGISitemapMiddleware:
    app = falcon.asgi.App()
    app.add_route(prefix or "/", Page(HOME))
    app.add_route(f"{prefix}/about", Page(ABOUT))
    return ASGISitemapMiddleware(app, config=config())  # type: ignore[arg-type]


app = mount(site(), site(PREFIX))
