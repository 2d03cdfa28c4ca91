"""Quart: ``app.asgi_app`` wrapped; the second site behind a root_path."""

from __future__ import annotations

from typing import Any

from quart import Quart

from sitemap_middleware import ASGISitemapMiddleware
from tests.frameworks.common import ABOUT, HOME, config, mount


def site(name: str) -> Any:  # Quart's ASGI types are hypercorn's TypedDicts
    app = Quart(name)

    @app.get("/")
    async def home() -> str:
        return HOME

    @app.get("/about")
    async def about() -> str:
        return ABOUT

    asgi_app: Any = app.asgi_app
    app.asgi_app = ASGISitemapMiddleware(asgi_app, config=config())  # type: ignore[method-assign,assignment]
    return app


app = mount(site("root"), site("shop"))
