"""Starlette: ``add_middleware``; the second site under ``Mount``."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Mount, Route

from sitemap_middleware import ASGISitemapMiddleware
from tests.frameworks.common import ABOUT, HOME, PREFIX, config


async def home(request: Request) -> HTMLResponse:
    return HTMLResponse(HOME)


async def about(request: Request) -> HTMLResponse:
    return HTMLResponse(ABOUT)


def site(*routes: BaseRoute) -> Starlette:
    app = Starlette(routes=[Route("/", home), Route("/about", about), *routes])
    app.add_middleware(ASGISitemapMiddleware, config=config())
    return app


app = site(Mount(PREFIX, app=site()))
