"""SQLAlchemyProvider in pre-fork servers: a worker forked after the parent used the pool."""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy import Engine, create_engine, insert
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from werkzeug.test import Client

from sitemap_middleware import SitemapConfig, WSGISitemapMiddleware
from tests.harness.processes import in_forked_child
from tests.integration.test_sql import POSTGRES_ENV, _provider, _rows, metadata, products


def _engine(kind: str, tmp_path: Path) -> AsyncEngine | Engine:
    """An engine over a freshly filled products table."""
    if kind == "sqlite (sync)":
        engine = create_engine(f"sqlite:///{tmp_path / 'fork.sqlite3'}")
        metadata.drop_all(engine)
        metadata.create_all(engine)
        with engine.begin() as conn:
            conn.execute(insert(products), _rows())
        return engine
    url = f"sqlite+aiosqlite:///{tmp_path / 'fork.sqlite3'}"
    if kind == "asyncpg":
        url = os.environ.get(POSTGRES_ENV, "")
        if not url:
            pytest.skip(f"{POSTGRES_ENV} is not set: no PostgreSQL server (.ci/run starts one)")

    async def fill() -> None:  # on a throwaway loop and engine: the pool must not leak
        setup = create_async_engine(url)
        async with setup.begin() as conn:
            await conn.run_sync(metadata.drop_all)
            await conn.run_sync(metadata.create_all)
            await conn.execute(insert(products), _rows())
        await setup.dispose()

    anyio.run(fill)
    return create_async_engine(url)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
@pytest.mark.parametrize("kind", ["aiosqlite", "sqlite (sync)", "asyncpg"])
def test_a_forked_worker_gets_fresh_connections(kind: str, tmp_path: Path) -> None:
    """The parent served a page (its pool holds a connection); the forked child serves the
    next one on connections of its own instead of hanging on the parent's."""
    engine = _engine(kind, tmp_path)
    config = SitemapConfig(
        base_url="https://example.com", sections={"p": _provider(engine)}, max_urls_per_page=1000
    )
    app = WSGISitemapMiddleware(lambda environ, start_response: [], config=config)

    def page_two() -> Any:
        response = Client(app).get("/sitemap-p-2.xml")
        # Key-range pages keep 1 % headroom for rows inserted during a crawl: 990 a page.
        return response.status_code == 200 and response.data.count(b"<url>") == 990

    try:
        assert page_two()

        def child() -> bool:
            gc.collect()
            return bool(page_two())

        assert in_forked_child(child) == "ok"
        assert page_two()  # and the parent's connections still work
    finally:
        app.close()
        if isinstance(engine, Engine):
            engine.dispose()
        else:
            from sitemap_middleware._adapters.portal import get_portal

            get_portal().call(engine.dispose)
