"""Sanic: the middleware around the app's ASGI callable, served by uvicorn (Sanic's own
server runs only Sanic apps); the second site behind a root_path. Two Sanic apps cannot
start in one process (Sanic rewrites its own modules at startup), so the mounted site is
the same app under a second middleware; Sanic routes ASGI's whole path (root_path
included), so its pages are routed under the prefix too."""

from __future__ import annotations

from sanic import Request, Sanic
from sanic.response import HTTPResponse, html

from sitemap_middleware import ASGISitemapMiddleware
from tests.frameworks.common import ABOUT, HOME, PREFIX, config, mount


async def home(request: Request) -> HTTPResponse:
    return html(HOME)


async def about(request: Request) -> HTTPResponse:
    return html(ABOUT)


sanic = Sanic("frameworks")
for prefix in ("", PREFIX):
    sanic.add_route(home, prefix or "/", name=f"home{prefix.replace('/', '_')}")
    sanic.add_route(about, f"{prefix}/about", name=f"about{prefix.replace('/', '_')}")

app = mount(
    ASGISitemapMiddleware(sanic, config=config()),
    ASGISitemapMiddleware(sanic, config=config()),
    mounted_lifespan=False,
)
