"""Sites the export tests write out, to a directory or to object storage: a shop of
pages and products (``shop_config``), and a site whose data source a test can break
(``Flaky``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from flask import Flask
from starlette.applications import Starlette

from sitemap_middleware import (
    ASGISitemapMiddleware,
    Renders,
    SitemapConfig,
    SitemapEntry,
    WSGISitemapMiddleware,
)
from sitemap_middleware.providers import ProviderVersion
from tests.harness.providers import CountingProvider

BASE = "https://example.com"


class Pages:
    """A versioned provider whose entries a test changes (bumping its version)."""

    def __init__(self) -> None:
        self.items = [SitemapEntry("/", lastmod="2024-01-01"), SitemapEntry("/about")]
        self.revision = 1

    async def entries(self) -> AsyncIterator[SitemapEntry]:
        for item in self.items:
            yield item

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token=str(self.revision))


def shop_config(pages: Any, **kwargs: Any) -> SitemapConfig:
    return SitemapConfig(
        base_url="https://example.com/shop",
        sections={
            "pages": pages,
            "products": CountingProvider(2500, host="https://example.com/shop"),
        },
        max_urls_per_page=1000,
        text_sitemaps=True,
        stylesheet=True,
        indexnow_key="export-key-0001",
        **kwargs,
    )


def asgi(config: SitemapConfig) -> Starlette:
    app = Starlette()
    app.add_middleware(ASGISitemapMiddleware, config=config)
    return app


def wsgi(config: SitemapConfig) -> Flask:
    app = Flask("export")
    app.wsgi_app = WSGISitemapMiddleware(app.wsgi_app, config=config)  # type: ignore[method-assign]
    return app


class Flaky:
    """A versioned section whose data source a test can break.

    ``broken_planning`` fails every pass (the index leaves the section out);
    ``broken_pages`` keeps the version answering (so the kept plan lists its pages) but
    fails the entries, so its pages answer 503.
    """

    def __init__(self, count: int) -> None:
        self.size = count
        self.broken_planning = False
        self.broken_pages = False

    async def entries(self) -> AsyncIterator[SitemapEntry]:
        if self.broken_planning or self.broken_pages:
            raise RuntimeError("the database is down")
        for i in range(self.size):
            yield SitemapEntry(f"/item/{i}")

    async def version(self) -> ProviderVersion:
        if self.broken_planning:
            raise RuntimeError("the database is down")
        return ProviderVersion(token="v1")


def make_app(flaky: Flaky) -> Starlette:
    config = SitemapConfig(
        base_url=BASE,
        sections={"pages": ["/", "/about"], "items": flaky},
        max_urls_per_page=10,
        renders=Renders(memory_bytes=0),  # no stored render to answer for a failing page
    )
    app = Starlette()
    app.add_middleware(ASGISitemapMiddleware, config=config)
    return app
