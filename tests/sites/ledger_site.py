"""A site dated by the content ledger, for ``check`` (``tests.sites.ledger_site:app``).

Its pages' contents and lastmods come from the environment (``LEDGER_SITE``: JSON of
``{path: [digest, lastmod]}``), and its ledger's records from Redis
(``SITEMAP_TEST_REDIS_URL``, prefix ``LEDGER_PREFIX``): each ``check --app`` is a new
process that reads what the runs before it recorded, as a fleet's would.
"""

from __future__ import annotations

import json
import os
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from sitemap_middleware import ASGISitemapMiddleware, Ledger, Renders, SitemapConfig
from sitemap_middleware.stores import RedisRenderStore

BASE = "https://shop.example"


def rows() -> list[dict[str, Any]]:
    site = json.loads(os.environ.get("LEDGER_SITE", "{}"))
    return [
        {"loc": path, "digest": digest, "lastmod": lastmod}
        for path, (digest, lastmod) in sorted(site.items())
    ]


async def _page(request: Request) -> HTMLResponse:
    path = request.url.path
    return HTMLResponse(f'<html><head><link rel="canonical" href="{BASE}{path}"></head></html>')


def make_app(renders: Renders | None = None) -> ASGISitemapMiddleware:
    config = SitemapConfig(
        base_url=BASE,
        sections={"products": rows},
        ledger=Ledger(source="digest"),
        renders=renders or Renders(),
    )
    inner = Starlette(routes=[Route("/{path:path}", _page)])
    return ASGISitemapMiddleware(inner, config=config)


def _renders() -> Renders | None:
    url = os.environ.get("SITEMAP_TEST_REDIS_URL")
    if not url or "LEDGER_PREFIX" not in os.environ:
        return None
    return Renders(store=RedisRenderStore(url, prefix=os.environ["LEDGER_PREFIX"]))


app = make_app(_renders())
