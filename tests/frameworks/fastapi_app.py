"""FastAPI: ``add_middleware``; the second site as a sub-application (``app.mount``)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from sitemap_middleware import ASGISitemapMiddleware
from tests.frameworks.common import ABOUT, HOME, PREFIX, config


def site() -> FastAPI:
    app = FastAPI()

    @app.get("/", response_class=HTMLResponse)
    async def home() -> str:
        return HOME

    @app.get("/about", response_class=HTMLResponse)
    async def about() -> str:
        return ABOUT

    app.add_middleware(ASGISitemapMiddleware, config=config())
    return app


app = site()
app.mount(PREFIX, site())
