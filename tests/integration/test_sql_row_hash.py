"""PostgreSQL's row hash in SQL versions (``_providers/sql_aggregates.py``, ``_RowHash``):
``hash_record_extended`` from PostgreSQL 14, the row as text before; either way a change
a URL can show moves the version."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import Column, Integer, MetaData, Numeric, String, Table, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from sitemap_middleware.providers import SQLAlchemyProvider
from tests.harness.sql import recorded_statements

pytestmark = pytest.mark.anyio
POSTGRES_ENV = "SITEMAP_TEST_POSTGRES_URL"

hashed = Table(
    "sitemap_hashed",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("slug", String),
    Column("price", Numeric),
    Column("code", String),
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["server", "before-14"])
async def engine(request: pytest.FixtureRequest) -> AsyncIterator[AsyncEngine]:
    """The test server as it is, and as a server before 14 would be written for."""
    url = os.environ.get(POSTGRES_ENV, "")
    if not url:
        pytest.skip(f"{POSTGRES_ENV} is not set: no PostgreSQL server (.ci/run starts one)")
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.execute(text("CREATE EXTENSION IF NOT EXISTS citext"))
        await conn.execute(text("DROP TABLE IF EXISTS sitemap_hashed"))
        await conn.execute(
            text(
                "CREATE TABLE sitemap_hashed "
                "(id int PRIMARY KEY, slug text, price numeric, code citext)"
            )
        )
        await conn.execute(
            text("INSERT INTO sitemap_hashed VALUES (1, 'a', 1.0, 'Apple'), (2, 'b', 2, 'Pear')")
        )
    if request.param == "before-14":
        engine.sync_engine.dialect.server_version_info = (13, 0)
    yield engine
    async with engine.begin() as conn:
        await conn.execute(text("DROP TABLE sitemap_hashed"))
    await engine.dispose()


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE sitemap_hashed SET price = 1.00 WHERE id = 1",  # equal numbers, other text
        "UPDATE sitemap_hashed SET code = 'apple' WHERE id = 1",  # citext calls them equal
        "UPDATE sitemap_hashed SET slug = '' WHERE id = 1",
        "UPDATE sitemap_hashed SET slug = NULL WHERE id = 1",
        "UPDATE sitemap_hashed SET slug = 'b', price = 2 WHERE id = 1",  # rows alike
    ],
    ids=["numeric-scale", "citext-case", "empty", "null", "two-rows-alike"],
)
async def test_a_change_a_url_can_show_moves_the_version(engine: AsyncEngine, change: str) -> None:
    provider = SQLAlchemyProvider(
        engine, hashed, key="id", location="/p/{slug}/{price}/{code}", metadata_ttl=0
    )
    with recorded_statements(engine) as statements:
        before = await provider.version()
    server = engine.sync_engine.dialect.server_version_info or (0,)
    expected = "hash_record_extended" if server >= (14,) else "hashtextextended"
    assert any(expected in each for each in statements), statements
    async with engine.begin() as conn:
        await conn.execute(text(change))
    provider.forget()
    assert (await provider.version()).token != before.token


async def test_a_column_of_any_type_is_hashed(engine: AsyncEngine) -> None:
    """Types without a hash function of their own (``json``, ``point``) are hashed as
    their text, as every type was before 14."""
    async with engine.begin() as conn:
        await conn.execute(text("ALTER TABLE sitemap_hashed ADD COLUMN doc json, ADD spot point"))
        await conn.execute(text("UPDATE sitemap_hashed SET doc = '{\"a\": 1}', spot = '(1,2)'"))
    table = Table(
        "sitemap_hashed",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("doc"),
        Column("spot"),
    )
    provider = SQLAlchemyProvider(engine, table, key="id", to_entry=_entry, metadata_ttl=0)
    before = await provider.version()
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE sitemap_hashed SET doc = '{\"a\":  1}' WHERE id = 2"))
    provider.forget()
    assert (await provider.version()).token != before.token


def _entry(row: Any) -> str:
    return f"/p/{row.id}"
