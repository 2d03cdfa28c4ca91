"""SQLAlchemyProvider on SQLite (aiosqlite, and a sync engine) and on a real PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    DateTime,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    event,
    insert,
    select,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from sitemap_middleware import SitemapConfig, SQLAlchemyProvider
from sitemap_middleware._engine.core import SitemapCore
from tests.helpers import check_document, child_urls, fetch, page_urls

pytestmark = pytest.mark.anyio
POSTGRES_ENV = "SITEMAP_TEST_POSTGRES_URL"
START = datetime(2024, 1, 1)
ROWS = 2_345
metadata = MetaData()
products = Table(
    "sitemap_products",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("published", Integer, nullable=False),
    Column("updated_at", DateTime, nullable=False),
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # aiosqlite and asyncpg are asyncio drivers


def _rows() -> list[dict[str, Any]]:
    # Keys with gaps (multiples of 3) so that key ranges differ from row numbers.
    return [
        {
            "id": i * 3,
            "slug": f"p{i}",
            "published": i % 10 != 0,
            "updated_at": START + timedelta(minutes=i),
        }
        for i in range(1, ROWS + 1)
    ]


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'test.sqlite3'}"
    else:
        url = os.environ.get(POSTGRES_ENV, "")
        if not url:
            pytest.skip(f"{POSTGRES_ENV} is not set: no PostgreSQL server (.ci/run starts one)")
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(metadata.drop_all)
        await conn.run_sync(metadata.create_all)
        await conn.execute(insert(products), _rows())
    yield engine
    async with engine.begin() as conn:
        await conn.run_sync(metadata.drop_all)
    await engine.dispose()


def _to_entry(row: Any) -> dict[str, Any]:
    return {"loc": f"/products/{row.slug}", "lastmod": row.updated_at}


def _provider(engine: Any, source: Any = products) -> SQLAlchemyProvider:
    return SQLAlchemyProvider(
        engine, source, key="id", lastmod="updated_at", to_entry=_to_entry, batch_size=400
    )


async def test_count_version_and_pages(engine: AsyncEngine) -> None:
    """count() and version() come from aggregates; page(k) equals the k-th slice of entries()."""
    provider = _provider(engine)
    assert await provider.count() == ROWS
    version = await provider.version()
    assert version.last_modified == (START + timedelta(minutes=ROWS)).replace(tzinfo=timezone.utc)
    everything = [e async for e in provider.entries()]
    assert len(everything) == ROWS
    for page in range(3):
        chunk = [e async for e in provider.page(page * 1000, 1000)]
        assert chunk == everything[page * 1000 : (page + 1) * 1000]
    assert [e async for e in provider.page(3000, 1000)] == []
    lastmods = await provider.page_last_modified(1000)
    assert lastmods == [
        (START + timedelta(minutes=m)).replace(tzinfo=timezone.utc) for m in (1000, 2000, ROWS)
    ]


async def test_pages_use_key_ranges_not_offset(engine: AsyncEngine) -> None:
    """Page queries filter by key (WHERE id >= :first) and never use OFFSET."""
    statements: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *args: Any) -> None:
        statements.append((statement, parameters))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        provider = _provider(engine)
        await provider.page_last_modified(1000)  # plan (one window scan)
        statements.clear()
        assert len([e async for e in provider.page(2000, 1000)]) == ROWS - 2000
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)
    page_queries = [(s, p) for s, p in statements if "ORDER BY" in s and "LIMIT" in s]
    assert page_queries
    # SQLite's dialect always renders "OFFSET ?"; it must stay 0 (no growing scans).
    assert all(p[-1] == 0 for s, p in statements if "OFFSET" in s.upper())
    assert "sitemap_rows.id >=" in page_queries[0][0]


async def test_select_source_and_sync_engine(engine: AsyncEngine, tmp_path: Path) -> None:
    """A select() with a filter works as a source; a sync engine is adapted through a thread."""
    query = select(products).where(products.c.published == 1)
    filtered = _provider(engine, query)
    assert await filtered.count() == ROWS - ROWS // 10
    if engine.dialect.name == "sqlite":
        sync = create_engine(f"sqlite:///{engine.url.database}")
        provider = _provider(sync)
        assert await provider.count() == ROWS
        assert len([e async for e in provider.page(1000, 1000)]) == 1000
        sync.dispose()
    with pytest.raises(ValueError, match="key column"):
        SQLAlchemyProvider(engine, products, key="nope", to_entry=_to_entry)


async def test_served_through_the_core(engine: AsyncEngine) -> None:
    """The index carries each page's lastmod; pages validate; a 304 needs only aggregates."""
    core = SitemapCore(
        SitemapConfig(
            base_url="https://example.com",
            sections={"products": _provider(engine)},
            max_urls_per_page=1000,
        )
    )
    reply, body = await fetch(core, "/sitemap.xml")
    assert child_urls(check_document(body)) == [
        f"https://example.com/sitemap-products-{n}.xml" for n in (1, 2, 3)
    ]
    assert body.count(b"<lastmod>") == 3
    reply, body = await fetch(core, "/sitemap-products-3.xml")
    urls = page_urls(check_document(body))
    assert len(urls) == ROWS - 2000 and urls[0] == "https://example.com/products/p2001"
    etag = dict(reply.headers)["ETag"]
    again, _ = await fetch(core, "/sitemap-products-3.xml", if_none_match=etag)
    assert again.status == 304
    assert (await fetch(core, "/sitemap-products-4.xml"))[0].status == 404
