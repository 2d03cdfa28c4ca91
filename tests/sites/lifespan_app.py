"""An app whose data exists only after its lifespan startup (as apps that create their
tables at startup do), for `check --app` and `export --app`."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from sitemap_middleware import ASGISitemapMiddleware, SitemapConfig, SitemapEntry

rows: list[str] = []


async def started() -> AsyncIterator[SitemapEntry]:
    if not rows:
        raise RuntimeError("no table: the app's startup did not run")
    for row in rows:
        yield SitemapEntry(row)


async def broken() -> AsyncIterator[SitemapEntry]:
    raise RuntimeError("the database is down")
    yield SitemapEntry("/never")  # pragma: no cover


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    if os.environ.get("FAILING_STARTUP"):
        raise RuntimeError("no database at postgres://db")
    rows.extend(f"/started/{i}" for i in range(3))
    yield
    marker = os.environ.get("SHUTDOWN_MARKER")
    if marker:
        Path(marker).write_text("stopped")


sections: dict[str, Any] = {"pages": ["/"], "started": started}
if os.environ.get("FAILING_SECTION"):
    sections["broken"] = broken


async def page(request: Request) -> HTMLResponse:
    return HTMLResponse("<!doctype html><title>ok</title><p>ok")


app = Starlette(lifespan=lifespan, routes=[Route("/{path:path}", page)])
app.add_middleware(
    ASGISitemapMiddleware,
    config=SitemapConfig(base_url="https://example.com", sections=sections),
)
