"""One app for a fleet test: ``fleet_app:asgi`` (uvicorn) and ``fleet_app:wsgi`` (gunicorn).

Every instance shares one Redis (``SITEMAP_TEST_REDIS_URL``, keys under
``SITEMAP_TEST_PREFIX``). The provider knows a version token but no time, so
Last-Modified must come from the shared first-seen time. Each provider pass over a page
leaves a marker file in ``SITEMAP_TEST_MARKERS``; a file named ``fail`` there makes the
provider fail (its version and its entries), as a database that went away would.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
from flask import Flask
from starlette.applications import Starlette

from sitemap_middleware import Renders, SitemapConfig
from sitemap_middleware.providers import ProviderVersion
from sitemap_middleware.stores import RedisRenderStore
from tests.harness.core import make_config
from tests.harness.servers import asgi_app, wsgi_app

MARKERS = Path(os.environ.get("SITEMAP_TEST_MARKERS", "."))
PAGES = 10
PAGE_SIZE = 1000


class FleetProvider:
    """10,000 products in 10 pages; slow enough that a burst overlaps its renders."""

    def _check(self) -> None:
        if (MARKERS / "fail").exists():
            raise RuntimeError("database went away")

    def page(self, offset: int, limit: int) -> AsyncIterator[dict[str, object]]:
        return self._rows(offset, limit, "pass")

    def entries(self) -> AsyncIterator[dict[str, object]]:
        return self._rows(0, PAGES * PAGE_SIZE, "plan")  # the planning pass reads it all

    async def _rows(self, offset: int, limit: int, kind: str) -> AsyncIterator[dict[str, object]]:
        self._check()
        (MARKERS / f"{kind}-{offset}-{os.getpid()}-{uuid.uuid4().hex}").touch()
        for i in range(offset, min(offset + limit, PAGES * PAGE_SIZE)):
            if i % 100 == 0:
                await anyio.sleep(0.01)
            yield {"loc": f"/products/{i}?a=1&b=2", "lastmod": "2024-05-01", "priority": 0.5}

    async def count(self) -> int:
        self._check()
        return PAGES * PAGE_SIZE

    async def version(self) -> ProviderVersion:
        self._check()
        return ProviderVersion(token="v1")


def _config() -> SitemapConfig:
    store = RedisRenderStore(
        os.environ.get("SITEMAP_TEST_REDIS_URL", "redis://127.0.0.1:6379/0"),
        prefix=os.environ.get("SITEMAP_TEST_PREFIX", "fleet:"),
    )
    return make_config(
        {"products": FleetProvider()},
        max_urls_per_page=PAGE_SIZE,
        renders=Renders(store=store, stale_if_error=3600),
    )


asgi: Starlette = asgi_app(_config())
wsgi: Flask = wsgi_app(_config())
