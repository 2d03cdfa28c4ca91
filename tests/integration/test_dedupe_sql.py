"""One URL, one listing for SQL sections planned from their key ranges (issue 27, item
3), on SQLite and PostgreSQL: a key-range page leaves out what a section before it lists
and what its own table lists at a lower key; the fingerprints are read a chunk of keys
at a time, and a write reads again the chunk around it, not the table."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, insert, update
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from sitemap_middleware import SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware.providers import SQLAlchemyProvider
from tests.harness.core import fetch, make_core
from tests.harness.documents import check_document, child_urls
from tests.harness.sql import recorded_statements

BASE = "https://example.com"
metadata = MetaData()
by_id = Table(
    "dedupe_by_id",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("revision", Integer, nullable=False, index=True),
)
by_code = Table(
    "dedupe_by_code",
    metadata,
    Column("code", String, primary_key=True),
    Column("slug", String, nullable=False),
    Column("revision", Integer, nullable=False, index=True),
)
ROWS = 600


@asynccontextmanager
async def _database(kind: str) -> AsyncIterator[AsyncEngine]:
    """An engine over fresh tables: SQLite in a temporary file, or the PostgreSQL server
    SITEMAP_TEST_POSTGRES_URL names."""
    with tempfile.TemporaryDirectory() as folder:
        if kind == "sqlite":
            url = f"sqlite+aiosqlite:///{Path(folder) / 'dedupe.sqlite3'}"
        else:
            url = os.environ.get("SITEMAP_TEST_POSTGRES_URL", "")
            if not url:
                pytest.skip("SITEMAP_TEST_POSTGRES_URL is not set: no PostgreSQL server")
        engine = create_async_engine(url)
        async with engine.begin() as conn:
            await conn.run_sync(metadata.drop_all)
            await conn.run_sync(metadata.create_all)
        try:
            yield engine
        finally:
            async with engine.begin() as conn:
                await conn.run_sync(metadata.drop_all)
            await engine.dispose()


def _locs(body: bytes) -> list[str]:
    return [unescape(loc.decode()) for loc in re.findall(rb"<loc>([^<]*)</loc>", body)]


async def _crawl(core: SitemapCore) -> list[str]:
    """Every ``<loc>`` of every page the index lists (each page 200, not empty)."""
    reply, body = await fetch(core, "/sitemap_index.xml")
    assert reply.status == 200, body
    urls: list[str] = []
    for child in child_urls(check_document(body)):
        reply, page = await fetch(core, child.removeprefix(BASE))
        assert reply.status == 200, (child, page)
        check_document(page)
        assert _locs(page), child
        urls += _locs(page)
    return urls


def _slug(place: int) -> str:
    return f"s{place % 250}"  # each slug two or three times


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
@pytest.mark.parametrize("table", [by_id, by_code], ids=["int-key", "text-key"])
async def test_a_table_planned_by_key_ranges_lists_each_url_once(
    anyio_backend: str, kind: str, table: Table
) -> None:
    key = "id" if table is by_id else "code"

    def key_of(place: int) -> Any:
        return place if table is by_id else f"k{place:04d}"

    async with _database(kind) as engine:
        async with engine.begin() as conn:
            await conn.execute(
                insert(table),
                [
                    {key: key_of(place), "slug": _slug(place), "revision": place}
                    for place in range(1, ROWS + 1)
                ],
            )
        provider = SQLAlchemyProvider(
            engine, table, key=key, location="/p/{slug}", version_column="revision", metadata_ttl=0
        )
        config = SitemapConfig(
            base_url=BASE,
            sections={"pages": ["/p/s3", "/about"], "items": provider, "more": ["/p/s7", "/c"]},
            max_urls_per_page=100,
            dedupe=True,
        )
        core = SitemapCore(config)
        try:
            expected = [f"{BASE}{path}" for path in ["/p/s3", "/about"]]
            expected += dict.fromkeys(
                f"{BASE}/p/{_slug(place)}" for place in range(1, ROWS + 1) if place % 250 != 3
            )
            expected.append(f"{BASE}/c")
            assert await _crawl(core) == expected
            plans, _ = await core._documents.plans.plan_all(config.base)
            assert plans[1].ranged and plans[1].count == 249 and plans[1].dropped == ROWS - 249
            # One row renamed: the next index reads again the rows of its chunk alone.
            async with engine.begin() as conn:
                await conn.execute(
                    update(table)
                    .where(table.c[key] == key_of(ROWS - 10))
                    .values(slug="fresh", revision=ROWS + 1)
                )
            with recorded_statements(engine) as statements:
                reply, _ = await fetch(core, "/sitemap_index.xml")
            assert reply.status == 200
            reads = [s for s in statements if re.search(r"SELECT \S+\.\w+, \S+\.slug", s)]
            # Its chunk for the fingerprints, then for the URLs of its duplicates.
            assert len(reads) == 2 and all(">" in s for s in reads), reads
            assert f"{BASE}/p/fresh" in await _crawl(core)
        finally:
            await core.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_section_before_the_table_adds_a_url_its_key_range_page_lists(
    anyio_backend: str,
) -> None:
    """A static section's URL that a key-range page lists is left out of that page (and
    listed there when no section before lists it)."""
    async with _database("sqlite") as engine:
        async with engine.begin() as conn:
            await conn.execute(
                insert(by_id), [{"id": i, "slug": f"s{i}", "revision": i} for i in range(1, 11)]
            )
        provider = SQLAlchemyProvider(engine, by_id, key="id", location="/p/{slug}")
        for first in ([], ["/p/s5"]):
            core = make_core({"a": [*first, "/a"], "items": provider}, base_url=BASE, dedupe=True)
            try:
                urls = await _crawl(core)
            finally:
                await core.aclose()
            assert urls.count(f"{BASE}/p/s5") == 1
            assert urls.index(f"{BASE}/p/s5") == (0 if first else 5)
