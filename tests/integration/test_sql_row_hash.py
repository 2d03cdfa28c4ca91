"""PostgreSQL's row hash in SQL versions (``_providers/sql_aggregates.py``): the row as
text (each column ``<length>:<text>``), hashed by ``hashtextextended`` over its bytes. A
change a URL can show moves the version, whatever the column's type calls equal.

(A ``hash_record_extended`` of the row, tried for speed, was linear in its fields'
hashes, so two rows swapping a value kept the sum; and hashing by declared type missed
``1.0`` to ``1.00`` under an ``Integer`` declared over ``numeric``: these tests hold that
line.)"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import Column, Integer, MetaData, Numeric, String, Table, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from sitemap_middleware.providers import SQLAlchemyProvider

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


@pytest.fixture
async def engine() -> AsyncIterator[AsyncEngine]:
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
        "UPDATE sitemap_hashed SET slug = 'aA', code = 'pple' WHERE id = 1",  # split moved
    ],
    ids=["numeric-scale", "citext-case", "empty", "null", "two-rows-alike", "split"],
)
async def test_a_change_a_url_can_show_moves_the_version(engine: AsyncEngine, change: str) -> None:
    provider = SQLAlchemyProvider(
        engine, hashed, key="id", location="/p/{slug}/{price}/{code}", metadata_ttl=0
    )
    before = await provider.version()
    async with engine.begin() as conn:
        await conn.execute(text(change))
    provider.forget()
    assert (await provider.version()).token != before.token


async def test_a_column_of_any_type_is_hashed(engine: AsyncEngine) -> None:
    """Types without a hash function of their own (``json``, ``point``) are hashed as
    their text."""
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


async def test_two_rows_that_swap_a_value_move_the_version(engine: AsyncEngine) -> None:
    """Summed over rows, a hash linear in its fields' hashes (``hash_record_extended``:
    ``31 * h(a) + h(b)``) keeps the sum when two rows swap one column's values. Every
    swap here must move it."""
    async with engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO sitemap_hashed SELECT i, 's' || i, i, 'c' || i "
                "FROM generate_series(3, 12) AS i"
            )
        )
    provider = SQLAlchemyProvider(
        engine, hashed, key="id", location="/p/{slug}/{price}/{code}", metadata_ttl=0
    )
    kept = []
    for first in range(3, 12):
        before = (await provider.version()).token
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "UPDATE sitemap_hashed SET slug = CASE id WHEN :a THEN 's' || :b "
                    "ELSE 's' || :a END WHERE id IN (:a, :b)"
                ),
                {"a": first, "b": first + 1},
            )
        provider.forget()
        if (await provider.version()).token == before:
            kept.append(first)
        async with engine.begin() as conn:  # back as it was
            await conn.execute(
                text("UPDATE sitemap_hashed SET slug = 's' || id WHERE id IN (:a, :b)"),
                {"a": first, "b": first + 1},
            )
        provider.forget()
    assert kept == []


@pytest.mark.parametrize(
    ("column", "before", "after"),
    [
        ("f float8", "0.0", "'-0'"),  # equal floats, other text
        ("f float8", "'NaN'", "'Infinity'"),
        ("span interval", "'1 day'", "'24 hours'"),  # equal intervals
        ("cash money", "1", "2"),  # money: no hash function of its own
        ("doc jsonb", "'{\"a\": 1.0}'", "'{\"a\": 1.00}'"),
        ("ids int[]", "'{1,2}'", "'{2,1}'"),
        ("mood sitemap_mood", "'sad'", "'happy'"),
        ("n numeric", "1.0", "1.00"),
    ],
)
async def test_a_value_of_another_text_moves_the_version(
    engine: AsyncEngine, column: str, before: str, after: str
) -> None:
    """Values a type calls equal but writes apart, and types hashed as their text."""
    name = column.split()[0]
    async with engine.begin() as conn:
        await conn.execute(text("DROP TYPE IF EXISTS sitemap_mood"))
        await conn.execute(text("CREATE TYPE sitemap_mood AS ENUM ('sad', 'happy')"))
        await conn.execute(text(f"ALTER TABLE sitemap_hashed ADD COLUMN {column}"))
        await conn.execute(text(f"UPDATE sitemap_hashed SET {name} = {before}"))
    table = Table("sitemap_hashed", MetaData(), Column("id", Integer, primary_key=True))
    table.append_column(Column(name))
    provider = SQLAlchemyProvider(engine, table, key="id", to_entry=_entry, metadata_ttl=0)
    try:
        first = (await provider.version()).token
        async with engine.begin() as conn:
            await conn.execute(text(f"UPDATE sitemap_hashed SET {name} = {after} WHERE id = 2"))
        provider.forget()
        assert (await provider.version()).token != first
    finally:
        async with engine.begin() as conn:
            await conn.execute(text(f"ALTER TABLE sitemap_hashed DROP COLUMN {name}"))
            await conn.execute(text("DROP TYPE sitemap_mood"))


async def test_an_integer_declared_over_a_numeric_column(engine: AsyncEngine) -> None:
    """A column is hashed as the database writes it, whatever type it is declared with:
    an ``Integer`` over ``numeric`` still sees ``1.0`` become ``1.00``."""
    table = Table(
        "sitemap_hashed",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("price", Integer),
    )
    provider = SQLAlchemyProvider(engine, table, key="id", to_entry=_entry, metadata_ttl=0)
    first = (await provider.version()).token
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE sitemap_hashed SET price = 1.00 WHERE id = 1"))
    provider.forget()
    assert (await provider.version()).token != first
