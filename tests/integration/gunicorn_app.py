"""A Flask app for gunicorn (``gunicorn tests.integration.gunicorn_app:app``).

It serves one request through the middleware at import time, so with ``--preload`` the
master process has started its anyio portal before it forks the workers: each worker must
notice the new pid and start its own. The provider touches a file in
``$SITEMAP_TEST_MARKERS`` when a generator closes, so the test (another process) can see it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

from sitemap_middleware import SitemapEntry
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import make_config
from tests.harness.servers import wsgi_app

MARKERS = Path(os.environ.get("SITEMAP_TEST_MARKERS", "."))
SIZE = 60_000


class MarkingProvider:
    """60,000 products with count and version; records each close as a file."""

    async def _gen(self, start: int, stop: int) -> AsyncIterator[SitemapEntry]:
        import anyio

        try:
            for i in range(start, stop):
                yield SitemapEntry(f"/products/{i}", lastmod="2024-05-01", priority=0.5)
                if i % 256 == 0:
                    await anyio.sleep(0)
        finally:
            (MARKERS / f"closed-{os.getpid()}-{start}-{stop}-{i}").touch()

    def entries(self) -> AsyncIterator[SitemapEntry]:
        return self._gen(0, SIZE)

    def page(self, offset: int, limit: int) -> AsyncIterator[SitemapEntry]:
        return self._gen(offset, min(SIZE, offset + limit))

    async def count(self) -> int:
        return SIZE

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token="v1")


app = wsgi_app(make_config({"products": MarkingProvider()}))
assert app.test_client().get("/sitemap_index.xml").status_code == 200  # starts the portal
