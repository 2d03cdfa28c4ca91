"""Litestar: the middleware around the app (Litestar's own middleware list runs only for
the routes it matches, so it would never see /sitemap.xml); the second site mounted
with ``@asgi(PREFIX, is_mount=True, copy_scope=True)``."""

from __future__ import annotations

from litestar import Litestar, MediaType, get
from litestar.handlers import asgi
from litestar.types import ControllerRouterHandler
from starlette.types import Receive, Scope, Send

from sitemap_middleware import ASGISitemapMiddleware
from tests.frameworks.common import ABOUT, HOME, PREFIX, config


@get("/", media_type=MediaType.HTML)
async def home() -> str:
    return HOME


@get("/about", media_type=MediaType.HTML)
async def about() -> str:
    return ABOUT


def site(*handlers: ControllerRouterHandler) -> ASGISitemapMiddleware:
    return ASGISitemapMiddleware(
        Litestar(route_handlers=[home, about, *handlers]),  # type: ignore[arg-type]
        config=config(),
    )


shop = site()


@asgi(PREFIX, is_mount=True, copy_scope=True)
async def shop_mount(scope: Scope, receive: Receive, send: Send) -> None:
    await shop(scope, receive, send)


app = site(shop_mount)
